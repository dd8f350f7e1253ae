//! A real headless Chromium driven over WebDriver (Debian's `chromium` and
//! `chromium-driver`, which `.ci/run` installs): a small client of the W3C protocol on
//! top of reqwest, enough to click, type, read and take screenshots as a user would.

#![allow(dead_code)] // Each test file uses what it needs.

use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A chromedriver process and one browser session; both end on drop.
pub struct Browser {
    driver: Child,
    client: reqwest::Client,
    session: String,
    base: String,
    shots: PathBuf,
}

/// An element of the page.
#[derive(Clone)]
pub struct Element {
    id: String,
}

impl Browser {
    /// Start chromedriver and a headless Chromium at 1280×900; screenshots go to
    /// `target/console-screenshots/<test>/`.
    pub async fn start(test: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("its address")
            .port();
        // Its own process group, so that the browsers it starts end with it.
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver must be installed (.ci/run installs chromium-driver)");
        let base = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while client.get(format!("{base}/status")).send().await.is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,900", "--force-color-profile=srgb", "--lang=en-US"]
            }
        }}});
        let answer = json_of(
            client
                .post(format!("{base}/session"))
                .header("Content-Type", "application/json")
                .body(caps.to_string())
                .send()
                .await
                .expect("a new session"),
        )
        .await;
        let session = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_string();
        let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/console-screenshots")
            .join(test);
        let _ = std::fs::remove_dir_all(&shots);
        std::fs::create_dir_all(&shots).expect("the screenshot directory");
        Self {
            driver,
            client,
            session,
            base,
            shots,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut request = self.client.request(method, url);
        if let Some(b) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let answer = json_of(request.send().await.expect("chromedriver answers")).await;
        answer["value"].clone()
    }

    async fn try_call(&self, path: &str, body: Value) -> Result<Value, String> {
        let v = self.call(reqwest::Method::POST, path, Some(body)).await;
        match v.get("error") {
            Some(e) => Err(format!("{e}: {}", v["message"])),
            None => Ok(v),
        }
    }

    /// Open `url`.
    pub async fn go(&self, url: &str) {
        self.try_call("/url", json!({ "url": url }))
            .await
            .unwrap_or_else(|e| panic!("cannot open {url}: {e}"));
    }

    /// Run `script` (a function body; `arguments` holds `args`) and return its value.
    pub async fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.try_call("/execute/sync", json!({ "script": script, "args": args }))
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    /// Run an async script: it calls `arguments[arguments.length - 1]` with its result.
    pub async fn js_async(&self, script: &str, args: Vec<Value>) -> Value {
        self.try_call("/execute/async", json!({ "script": script, "args": args }))
            .await
            .unwrap_or_else(|e| panic!("script failed: {e}\n{script}"))
    }

    async fn find_now(&self, css: &str) -> Option<Element> {
        let v = self
            .try_call("/element", json!({"using": "css selector", "value": css}))
            .await
            .ok()?;
        Some(Element {
            id: v[ELEMENT].as_str()?.to_string(),
        })
    }

    /// The first element matching `css` whose text contains `text` (any when empty),
    /// waiting up to 15 s for it.
    pub async fn find_text(&self, css: &str, text: &str) -> Element {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let found = self
                .js(
                    "const [css, text] = arguments; return [...document.querySelectorAll(css)].find(e => e.offsetParent !== null && (!text || e.textContent.includes(text))) || null;",
                    vec![json!(css), json!(text)],
                )
                .await;
            if let Some(id) = found.get(ELEMENT).and_then(Value::as_str) {
                return Element { id: id.to_string() };
            }
            if Instant::now() > deadline {
                let page = self.text("body").await;
                panic!("no visible '{css}' with text '{text}' on the page:\n{page}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The first visible element matching `css`, waiting up to 15 s.
    pub async fn find(&self, css: &str) -> Element {
        self.find_text(css, "").await
    }

    /// Whether an element matching `css` is on the page now.
    pub async fn exists(&self, css: &str) -> bool {
        self.find_now(css).await.is_some()
    }

    /// The text of the first element matching `css` (empty when there is none).
    pub async fn text(&self, css: &str) -> String {
        self.js(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';",
            vec![json!(css)],
        )
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Wait until the page's text (of `css`) contains `text`; the text.
    pub async fn wait_text(&self, css: &str, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = self.text(css).await;
            if now.contains(text) {
                return now;
            }
            if Instant::now() > deadline {
                panic!("'{css}' never said '{text}'; it says:\n{now}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Click the button (or link) whose text contains `label`.
    pub async fn click_button(&self, label: &str) {
        let e = self.find_text("button, a.button, a", label).await;
        self.click(&e).await;
    }

    /// Click `e`.
    pub async fn click(&self, e: &Element) {
        if let Err(err) = self
            .try_call(&format!("/element/{}/click", e.id), json!({}))
            .await
        {
            panic!("cannot click: {err}");
        }
    }

    /// Type `text` into `e` (after clearing it).
    pub async fn type_into(&self, e: &Element, text: &str) {
        let _ = self
            .try_call(&format!("/element/{}/clear", e.id), json!({}))
            .await;
        self.try_call(&format!("/element/{}/value", e.id), json!({ "text": text }))
            .await
            .unwrap_or_else(|err| panic!("cannot type: {err}"));
    }

    /// Type `text` into the input labelled `label`.
    pub async fn fill(&self, label: &str, text: &str) {
        let input = self.labelled(label).await;
        self.type_into(&input, text).await;
    }

    /// The input whose label's text starts with `label`.
    pub async fn labelled(&self, label: &str) -> Element {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let found = self
                .js(
                    "const want = arguments[0]; const l = [...document.querySelectorAll('label')].find(l => l.offsetParent !== null && l.textContent.trim().replace(/\\s*\\*$/, '').startsWith(want)); return l ? (l.control || document.getElementById(l.htmlFor)) : null;",
                    vec![json!(label)],
                )
                .await;
            if let Some(id) = found.get(ELEMENT).and_then(Value::as_str) {
                return Element { id: id.to_string() };
            }
            if Instant::now() > deadline {
                let page = self.text("main").await;
                panic!("no input labelled '{label}':\n{page}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Choose `value` in the select labelled `label`.
    pub async fn select(&self, label: &str, value: &str) {
        let select = self.labelled(label).await;
        let done = self
            .js(
                "const [s, v] = arguments; const o = [...s.options].find(o => o.value === v || o.textContent === v); if (!o) return false; s.value = o.value; s.dispatchEvent(new Event('change', {bubbles: true})); return true;",
                vec![json!({ ELEMENT: select.id }), json!(value)],
            )
            .await;
        assert_eq!(done, json!(true), "no option '{value}' in '{label}'");
    }

    /// Show the page as a browser set to dark mode would.
    pub async fn dark(&self) {
        let params = json!({"cmd": "Emulation.setEmulatedMedia", "params": {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}});
        self.try_call("/goog/cdp/execute", params)
            .await
            .unwrap_or_else(|e| panic!("cannot emulate dark mode: {e}"));
    }

    /// Scroll the first element matching `css` to the middle of the window, then save a
    /// screenshot (the viewport is what a user sees).
    pub async fn shot_of(&self, css: &str, name: &str) -> PathBuf {
        self.js(
            "const e = document.querySelector(arguments[0]); if (e) e.scrollIntoView({block: 'center'});",
            vec![json!(css)],
        )
        .await;
        self.shot(name).await
    }

    /// Save a screenshot as `<n>-<name>.png`; its path.
    pub async fn shot(&self, name: &str) -> PathBuf {
        let data = self.call(reqwest::Method::GET, "/screenshot", None).await;
        let bytes = base64_decode(data.as_str().expect("a screenshot"));
        let n = std::fs::read_dir(&self.shots)
            .map(|d| d.count())
            .unwrap_or(0);
        let path = self.shots.join(format!("{n:02}-{name}.png"));
        std::fs::write(&path, bytes).expect("the screenshot is written");
        path
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.driver.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.driver.wait();
    }
}

/// A response's JSON body.
pub async fn json_of(response: reqwest::Response) -> Value {
    let bytes = response.bytes().await.expect("a body");
    serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
}

/// Standard base64, as WebDriver sends screenshots.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes() {
        let Some(v) = value(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

impl Element {
    /// As a script argument.
    pub fn arg(&self) -> Value {
        json!({ ELEMENT: self.id })
    }
}
