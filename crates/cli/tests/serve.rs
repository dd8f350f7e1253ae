//! `tributary serve` end to end: the real binary on a loopback port, driven over HTTP
//! against a real (password-protected) Redis, restarted, and used through `--server`.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;

use common::server::{Server, TOKEN};

const REDIS_PASSWORD: &str = "e2e-redis-pass-Zq81";

/// A Redis that requires a password, on a free port, for this test alone.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--requirepass",
                REDIS_PASSWORD,
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server must be installed (.ci/run installs it)");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Self { child, port };
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("redis-server did not start on port {port}");
    }

    fn set(&self, key: &str, value: &str) {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string(), "--no-auth-warning"])
            .args(["-a", REDIS_PASSWORD, "SET", key, value])
            .output()
            .expect("redis-cli must be installed");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "OK");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: status and body.
struct Answer {
    status: u16,
    content_type: String,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

struct Client {
    http: reqwest::Client,
    rt: tokio::runtime::Runtime,
    base: String,
}

impl Client {
    fn new(base: &str) -> Self {
        Self {
            http: reqwest::Client::new(),
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            base: base.to_string(),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Answer {
        let url = format!("{}/api/v1{path}", self.base);
        let mut req = self
            .http
            .request(method.parse().unwrap(), url)
            .bearer_auth(TOKEN);
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_string());
        }
        self.rt.block_on(async {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let content_type = r
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            Answer {
                status,
                content_type,
                body: r.text().await.unwrap(),
            }
        })
    }

    fn get(&self, path: &str) -> Answer {
        self.call("GET", path, None)
    }

    fn post(&self, path: &str, body: Value) -> Answer {
        self.call("POST", path, Some(body))
    }
}

fn tributary(catalog: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .env_remove("TRIBUTARY_SERVER")
        .env_remove("TRIBUTARY_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn redis_table(name: &str, profile_id: &str) -> Value {
    json!({
        "name": name,
        "connector": "redis",
        "connection_profile_id": profile_id,
        "config": {"connectorType": {"target": {"keyPrefix": "e2e:out:", "keyColumn": "id"}}},
        "schema": {"format": {"type": "json"}, "fields": [
            {"name": "id", "type": "string", "required": true},
            {"name": "amount", "type": "float64"}
        ]}
    })
}

#[test]
fn a_served_catalog_lives_through_a_restart_and_serves_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let redis = Redis::start();
    redis.set("e2e:orders:1", "x");
    let mut server = Server::start(&catalog, dir.path().join("server-1.log"));
    let api = Client::new(&server.url);
    let mut answers = String::new();

    // Profile: tested against the real Redis, refused with a wrong password, then stored.
    let mut profile = json!({"name": "cache", "connector": "redis", "config": {
        "connection": {"address": format!("redis://127.0.0.1:{}", redis.port)},
        "password": "wrong-password"}});
    let r = api.post("/connection_profiles/test", profile.clone());
    assert_eq!(r.status, 200, "{}", r.body);
    let t = r.json();
    assert_eq!(t["error"], true, "{t}");
    assert_eq!(t["done"], true);
    answers.push_str(&r.body);
    profile["config"]["password"] = json!(REDIS_PASSWORD);
    let r = api.post("/connection_profiles", profile.clone());
    assert_eq!(r.status, 200, "{}", r.body);
    answers.push_str(&r.body);
    let p = r.json();
    let profile_id = p["id"].as_str().unwrap().to_string();
    assert!(profile_id.starts_with("cp_"), "{p}");
    assert_eq!(p["config"]["password"], "********");
    assert!(p["created_at"].as_i64().unwrap() > 1_700_000_000_000_000);

    // Autocomplete offers the key prefixes in use.
    let r = api.get(&format!("/connection_profiles/{profile_id}/autocomplete"));
    assert_eq!(r.status, 200, "{}", r.body);
    let values = r.json()["values"].to_string();
    assert!(values.contains("e2e:orders:"), "{values}");

    // Test the table: an event stream, one event per stage, ending with done.
    let r = api.post(
        "/connection_tables/test",
        redis_table("orders_out", &profile_id),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.content_type.starts_with("text/event-stream"),
        "{}",
        r.content_type
    );
    let events: Vec<Value> = r
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|l| serde_json::from_str(l.trim()).unwrap())
        .collect();
    assert!(events.len() >= 2, "{}", r.body);
    let last = events.last().unwrap();
    assert_eq!(last["done"], true, "{}", r.body);
    assert!(events.iter().all(|e| e["error"] == false), "{}", r.body);
    // One event per stage, each named, none repeated; the verdict last.
    let stages: Vec<&str> = events[..events.len() - 1]
        .iter()
        .map(|e| {
            e["stage"]
                .as_str()
                .unwrap_or_else(|| panic!("no stage: {e}"))
        })
        .collect();
    let mut unique = stages.clone();
    unique.dedup();
    assert_eq!(stages, unique, "{}", r.body);
    assert!(
        stages.contains(&"connect") && stages.contains(&"authenticate"),
        "{stages:?}"
    );
    assert!(
        events[..events.len() - 1]
            .iter()
            .all(|e| e["done"] == false)
    );
    answers.push_str(&r.body);

    // Create it, and 24 more tables to page through.
    let r = api.post("/connection_tables", redis_table("orders_out", &profile_id));
    assert_eq!(r.status, 200, "{}", r.body);
    answers.push_str(&r.body);
    let table_id = r.json()["id"].as_str().unwrap().to_string();
    for i in 0..24 {
        let r = api.post(
            "/connection_tables",
            json!({"name": format!("ticks_{i:02}"), "connector": "impulse", "config": {"event_rate": 10}}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
    }
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &after {
            Some(a) => format!("/connection_tables?limit=10&starting_after={a}"),
            None => "/connection_tables?limit=10".to_string(),
        };
        let page = api.get(&path).json();
        pages += 1;
        let data = page["data"].as_array().unwrap();
        seen.extend(data.iter().map(|t| t["name"].as_str().unwrap().to_string()));
        after = data.last().map(|t| t["id"].as_str().unwrap().to_string());
        if page["hasMore"] == false {
            break;
        }
        assert!(pages < 5, "paging does not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 25);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 25, "a table was listed twice");

    // Validate a query against the catalog, as `check` would.
    let r = api.post(
        "/pipelines/validate_query",
        json!({"query": "INSERT INTO orders_out SELECT CAST(counter AS TEXT), 1.0 FROM ticks_00"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["errors"], json!([]), "{}", r.body);
    let r = api.post(
        "/pipelines/validate_query",
        json!({"query": "SELECT nope FROM ticks_00"}),
    );
    assert_eq!(r.status, 200);
    assert!(
        r.json()["errors"].to_string().contains("nope"),
        "{}",
        r.body
    );

    // PATCH: the whole table is validated again and keeps its id.
    let r = api.call(
        "PATCH",
        &format!("/connection_tables/{table_id}"),
        Some(json!({"config": {"target.ttl_secs": 60}})),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["id"], table_id.as_str());
    assert!(
        r.json()["create_sql"]
            .as_str()
            .unwrap()
            .contains("'target.ttl_secs' = 60"),
        "{}",
        r.body
    );

    // The catalog is held: `run` names the server, `--server` goes through it.
    let held = tributary(&catalog, &["run", "-c", "SHOW TABLES"]);
    assert_eq!(held.status.code(), Some(2), "{}", text(&held.stderr));
    assert!(
        text(&held.stderr).contains(&server.url),
        "{}",
        text(&held.stderr)
    );
    let script = "SHOW CONNECTION PROFILES;\nSHOW TABLES;\nSELECT 1 + 1 AS two;\nSELECT nope FROM ticks_00;\n";
    let script_file = dir.path().join("script.sql");
    std::fs::write(&script_file, script).unwrap();
    let sf = script_file.to_str().unwrap();
    let remote_run = tributary(
        &catalog,
        &[
            "--server",
            &server.url,
            "--token",
            TOKEN,
            "--format",
            "json",
            "run",
            sf,
        ],
    );
    let remote_check = tributary(
        &catalog,
        &["--server", &server.url, "--token", TOKEN, "check", sf],
    );
    let unauthorised = tributary(
        &catalog,
        &[
            "--server",
            &server.url,
            "--token",
            "not-the-token",
            "run",
            "-c",
            "SELECT 1",
        ],
    );
    assert_ne!(unauthorised.status.code(), Some(0));
    assert_eq!(unauthorised.status.code(), Some(2));
    assert!(
        text(&unauthorised.stderr).starts_with(&format!(
            "error: the server at {} answered 401 Unauthorized: the bearer token is not valid\n",
            server.url
        )),
        "{}",
        text(&unauthorised.stderr)
    );

    // Rows stream from the server: a query over an endless source prints rows as they
    // come, and closing the output ends the client, whose dropped request stops the query.
    let created = tributary(
        &catalog,
        &[
            "--server",
            &server.url,
            "--token",
            TOKEN,
            "run",
            "-c",
            "CREATE TABLE endless WITH (connector = 'impulse', event_rate = '2000')",
        ],
    );
    assert_eq!(created.status.code(), Some(0), "{}", text(&created.stderr));
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["--server", &server.url, "--token", TOKEN, "--format", "csv"])
        .args(["run", "-c", "SELECT counter FROM endless"])
        .env_remove("TRIBUTARY_CATALOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let first: Vec<String> = lines.by_ref().take(1500).map(Result::unwrap).collect();
    assert_eq!(first[0], "counter");
    assert_eq!(first[1499], "1498", "rows in order from the start");
    drop(lines);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the client kept running after its output closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.code().is_some(), "ended by a signal: {status:?}");
    // The same through the whole answer: a bounded query's rows and count.
    let bounded = tributary(
        &catalog,
        &[
            "--server",
            &server.url,
            "--token",
            TOKEN,
            "run",
            "-c",
            "SELECT counter FROM endless LIMIT 3",
        ],
    );
    let shown = text(&bounded.stdout);
    // A short result is printed whole, as a local one is.
    assert_eq!(
        shown,
        "+---------+\n| counter |\n+---------+\n| 0       |\n| 1       |\n| 2       |\n+---------+\n",
        "{}",
        text(&bounded.stderr)
    );
    let dropped = tributary(
        &catalog,
        &[
            "--server",
            &server.url,
            "--token",
            TOKEN,
            "run",
            "-c",
            "DROP TABLE endless",
        ],
    );
    assert_eq!(dropped.status.code(), Some(0), "{}", text(&dropped.stderr));

    // Restart: everything is still there.
    assert_eq!(server.stop(), Some(0), "{}", server.log());
    assert!(
        !catalog.join("tributary.server").exists(),
        "the notice outlived the server"
    );
    let first_log = server.log();
    assert!(
        first_log.contains("method=POST path=/api/v1/connection_tables status=200"),
        "{first_log}"
    );

    // The same script locally: the same output and exit codes.
    let local_run = tributary(&catalog, &["--format", "json", "run", sf]);
    let local_check = tributary(&catalog, &["check", sf]);
    assert_eq!(
        remote_run.status.code(),
        local_run.status.code(),
        "{}",
        text(&remote_run.stderr)
    );
    assert_eq!(text(&remote_run.stdout), text(&local_run.stdout));
    assert_eq!(text(&remote_run.stderr), text(&local_run.stderr));
    assert_eq!(remote_check.status.code(), local_check.status.code());
    assert_eq!(text(&remote_check.stdout), text(&local_check.stdout));
    assert_eq!(text(&remote_check.stderr), text(&local_check.stderr));
    assert_eq!(
        local_run.status.code(),
        Some(1),
        "{}",
        text(&local_run.stderr)
    );
    let out = text(&local_run.stdout);
    assert!(
        out.contains("\"cache\"") && out.contains("\"two\":2") && out.contains("ticks_23"),
        "{out}"
    );
    // In JSON, the failure is in the document, with its code, as the server sent it.
    assert!(
        out.contains("nope") && out.contains("\"code\":\"PLAN_ERROR\""),
        "{out}"
    );
    assert!(
        text(&local_check.stderr).contains("nope"),
        "{}",
        text(&local_check.stderr)
    );

    let mut server = Server::start(&catalog, dir.path().join("server-2.log"));
    let api = Client::new(&server.url);
    let r = api.get(&format!("/connection_tables/{table_id}"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["name"], "orders_out");
    assert_eq!(r.json()["connection_profile"]["id"], profile_id.as_str());
    let listed = api.get("/connection_tables?limit=100").json();
    assert_eq!(listed["data"].as_array().unwrap().len(), 25);
    let profiles = api.get("/connection_profiles").json();
    assert_eq!(profiles["data"][0]["name"], "cache");
    answers.push_str(&profiles.to_string());

    // Delete in the right order: the profile is refused while the table uses it.
    let r = api.call(
        "DELETE",
        &format!("/connection_profiles/{profile_id}"),
        None,
    );
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(
        r.json()["error"].as_str().unwrap().contains("orders_out"),
        "{}",
        r.body
    );
    assert_eq!(
        api.call("DELETE", &format!("/connection_tables/{table_id}"), None)
            .status,
        200
    );
    assert_eq!(
        api.call(
            "DELETE",
            &format!("/connection_profiles/{profile_id}"),
            None
        )
        .status,
        200
    );
    assert_eq!(api.get("/connection_profiles").json(), json!({"data": []}));
    assert_eq!(
        api.get(&format!("/connection_tables/{table_id}")).status,
        404
    );
    assert_eq!(server.stop(), Some(0));

    // The secret never left the server: not in an answer, not in a log line.
    for (what, text) in [
        ("answers", &answers),
        ("first log", &first_log),
        ("second log", &server.log()),
    ] {
        assert!(
            !text.contains(REDIS_PASSWORD),
            "{what} hold the password: {text}"
        );
        assert!(
            !text.contains("wrong-password"),
            "{what} hold the wrong password: {text}"
        );
        assert!(!text.contains(TOKEN), "{what} hold the token");
    }
}
