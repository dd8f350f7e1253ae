//! No secret leaves in clear, through any surface. A catalog holds a distinct marker
//! secret in every kind of place a secret can sit (a secret option, URL userinfo, a
//! registry URL, `client_configs`, a URL's query, headers, a TLS key, `{{ VAR }}` values
//! from the environment); then every CLI command (taken from `--help`), every output
//! format, every REST route (taken from the router's own table) on servers logging at
//! trace and debug level in JSON and text, and every page of the console (taken from its
//! route table) are driven, and no marker may appear in anything they print, answer, log
//! or store for sharing (dumps, history). A command, route or page the test does not
//! drive fails it.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::browser::Browser;
use common::server::{Server, TOKEN};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use tributary_catalog::testing::PgSchema;

/// Where each marker sits, and the marker.
const MARKERS: [(&str, &str); 9] = [
    ("a secret option", "zqSecretOptionzq"),
    ("URL userinfo", "zqUserinfozq"),
    ("a schema registry URL", "zqRegistryzq"),
    ("client_configs", "zqClientConfigzq"),
    ("a URL's token", "zqQueryTokenzq"),
    ("a header", "zqHeaderzq"),
    ("a TLS key", "zqTlsKeyzq"),
    ("a {{ VAR }} URL", "zqEnvUrlzq"),
    ("a {{ VAR }} header", "zqEnvHeaderzq"),
];

fn marker(what: &str) -> &'static str {
    MARKERS.iter().find(|(w, _)| *w == what).unwrap().1
}

/// Fail when `text` (what `place` printed, answered or logged) holds a marker.
fn clean(place: &str, text: &str) {
    for (what, m) in MARKERS {
        if let Some(at) = text.find(m) {
            let from = text[..at]
                .char_indices()
                .rev()
                .nth(200)
                .map_or(0, |(i, _)| i);
            let to = (at + m.len() + 200).min(text.len());
            let to = (to..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap();
            panic!(
                "{what} ({m}) leaked through {place}:\n...{}...",
                &text[from..to]
            );
        }
    }
}

/// The environment the `{{ VAR }}` references read.
fn env_values() -> Vec<(&'static str, String)> {
    vec![
        (
            "TRIBUTARY_VAR_MARK_URL",
            format!("redis://alice:{}@127.0.0.1:6379", marker("a {{ VAR }} URL")),
        ),
        (
            "TRIBUTARY_VAR_MARK_KEY",
            marker("a {{ VAR }} header").to_string(),
        ),
    ]
}

/// A peer that answers every HTTP request 401 with the request itself as the body, as a
/// careless service echoing what it was sent would: the URL's token and the headers.
fn echoing_peer() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let body = String::from_utf8_lossy(&request).into_owned();
                let _ = write!(
                    stream,
                    "HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// The catalog: a marker in every kind of place.
fn setup_script(peer: u16) -> String {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!(
        "CREATE CONNECTION PROFILE kp WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:{closed}', 'auth.type' = 'sasl', 'auth.mechanism' = 'PLAIN', 'auth.protocol' = 'SASL_PLAINTEXT', 'auth.username' = 'u', 'auth.password' = '{opt}', 'schema_registry.endpoint' = 'http://reg:{reg}@127.0.0.1:{peer}', validate = false);
CREATE CONNECTION PROFILE rp WITH (connector = 'redis', address = 'redis://bob:{userinfo}@127.0.0.1:6379', validate = false);
CREATE CONNECTION PROFILE rv WITH (connector = 'redis', address = '{{{{ TRIBUTARY_VAR_MARK_URL }}}}', validate = false);
CREATE CONNECTION PROFILE mp WITH (connector = 'mqtt', url = 'mqtts://127.0.0.1:8883', 'tls.cert' = '-----BEGIN CERTIFICATE-----
TUlJQ2VydGlmaWNhdGU=
-----END CERTIFICATE-----', 'tls.key' = '-----BEGIN PRIVATE KEY-----
{tls}
-----END PRIVATE KEY-----', validate = false);
CREATE TABLE kt (a INT) WITH (connector = 'kafka', connection_profile = 'kp', topic = 't', type = 'source', format = 'json', client_configs = 'sasl.password={configs},acks=all');
CREATE TABLE ph (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{peer}/x?token={token}', headers = 'Authorization: Bearer {header}', format = 'json');
CREATE TABLE pv (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{peer}/y', headers = 'X-Api-Key: {{{{ TRIBUTARY_VAR_MARK_KEY }}}}', format = 'json');
CREATE TABLE cache (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'rv', type = 'sink', target = 'string', 'target.key_prefix' = 'c:', 'target.key_column' = id, format = 'json');
CREATE TABLE mt (a TEXT) WITH (connector = 'mqtt', connection_profile = 'mp', topic = 'marker/t', type = 'source', format = 'json');
CREATE VIEW pview AS SELECT a FROM ph;
",
        opt = marker("a secret option"),
        reg = marker("a schema registry URL"),
        userinfo = marker("URL userinfo"),
        tls = marker("a TLS key"),
        configs = marker("client_configs"),
        token = marker("a URL's token"),
        header = marker("a header"),
    )
}

const PROFILES: [&str; 4] = ["kp", "rp", "rv", "mp"];
const TABLES: [&str; 5] = ["kt", "ph", "pv", "cache", "mt"];

fn tributary(catalog: &Path, args: &[&str], stdin: Option<&str>, envs: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .env_remove("TRIBUTARY_TOKEN")
        .envs(env_values())
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Run `args`, check everything it printed, and give it back.
fn drive(place: &str, catalog: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let out = tributary(catalog, args, stdin, &[]);
    clean(place, &said(&out));
    out
}

/// The subcommands `--help` lists for `path` (`[]` for the top level).
fn subcommands(path: &[&str]) -> BTreeSet<String> {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(&args)
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Statements that read or describe the catalog, and those that connect (each fails on
/// its own: wrong credentials, a peer that refuses).
fn describing() -> Vec<String> {
    let mut all = vec![
        "SHOW CONNECTION PROFILES".to_string(),
        "SHOW TABLES".into(),
        "SHOW VIEWS".into(),
        "EXPLAIN INSERT INTO cache VALUES ('a', 1)".into(),
    ];
    for p in PROFILES {
        all.push(format!("DESCRIBE CONNECTION PROFILE {p}"));
        all.push(format!("SHOW CREATE CONNECTION PROFILE {p}"));
    }
    for t in TABLES {
        all.push(format!("DESCRIBE {t}"));
        all.push(format!("SHOW CREATE TABLE {t}"));
        if t != "cache" {
            all.push(format!("EXPLAIN SELECT * FROM {t}"));
        }
    }
    all
}

const CONNECTING: [&str; 8] = [
    "TEST CONNECTION PROFILE rp",
    "TEST CONNECTION PROFILE rv",
    "TEST CONNECTION PROFILE kp",
    "TEST TABLE ph",
    "TEST TABLE pv",
    "SELECT * FROM ph LIMIT 1",
    "INSERT INTO cache VALUES ('a', 1)",
    "CREATE CONNECTION PROFILE bad WITH (connector = 'redis', address = 'redis://bob:zqUserinfozq@127.0.0.1:6379')",
];

const FORMATS: [&str; 5] = ["table", "json", "jsonl", "csv", "raw"];

/// Every command of the binary, in every output format.
fn drive_commands(dir: &Path, catalog: &Path, server: &str) {
    let mut driven: BTreeSet<String> = BTreeSet::new();
    let mut done = |name: &str| {
        driven.insert(name.to_string());
    };
    for format in FORMATS {
        let sql = describing().join(";\n") + ";";
        let out = drive(
            &format!("run --format {format}"),
            catalog,
            &["--format", format, "run", "-c", &sql],
            None,
        );
        assert!(out.status.success(), "{}", tail(&said(&out)));
        for statement in CONNECTING {
            drive(
                &format!("run --format {format}: {statement}"),
                catalog,
                &["--format", format, "run", "-c", statement],
                None,
            );
        }
        // `check` quotes the script back in its diagnostics.
        let broken = format!(
            "{}\nCREATE CONNECTION PROFILE p2 WITH (connector = 'redis', address = 'redis://bob:{}@', pasword = '{}');",
            setup_script(1),
            marker("URL userinfo"),
            marker("a secret option")
        );
        let file = dir.join("broken.sql");
        std::fs::write(&file, &broken).unwrap();
        drive(
            &format!("check --format {format}"),
            catalog,
            &["--format", format, "check", file.to_str().unwrap()],
            None,
        );
    }
    done("run");
    done("check");

    // The shell: what it prints, and the history it keeps.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let session = format!(
        "CREATE CONNECTION PROFILE typed WITH (connector = 'redis', address = 'redis://carol:{}@127.0.0.1:6379', password = '{}', validate = false);\nSHOW CREATE CONNECTION PROFILE typed;\nTEST CONNECTION PROFILE rp;\n\\q\n",
        marker("URL userinfo"),
        marker("a secret option")
    );
    let mut repl = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .arg("repl")
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"))
        .envs(env_values())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    repl.stdin
        .take()
        .unwrap()
        .write_all(session.as_bytes())
        .unwrap();
    let out = repl.wait_with_output().unwrap();
    clean("repl", &said(&out));
    let history = std::fs::read_to_string(home.join("data/tributary/history")).unwrap();
    assert!(
        history.contains("CREATE CONNECTION PROFILE typed"),
        "{history}"
    );
    clean("the shell's history", &history);
    done("repl");

    // The dump, and its restore with the variables it lists.
    let out = drive("catalog dump", catalog, &["catalog", "dump"], None);
    assert!(out.status.success(), "{}", said(&out));
    let dump = String::from_utf8_lossy(&out.stdout).into_owned();
    let variables: Vec<String> = dump
        .lines()
        .filter_map(|l| l.strip_prefix("--   "))
        .map(str::to_string)
        .collect();
    assert!(variables.len() >= 6, "{dump}");
    let restored = dir.join("restored");
    let out = tributary(&restored, &["run"], Some(&dump), &[]);
    assert!(out.status.success(), "{}", said(&out));
    let again = tributary(&restored, &["catalog", "dump"], None, &[]);
    // The same statements (the header lists only secrets that were held in clear).
    let statements = |d: &str| -> Vec<String> {
        d.lines()
            .filter(|l| !l.starts_with("--"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        statements(&String::from_utf8_lossy(&again.stdout)),
        statements(&dump)
    );
    // With the variables set, the restored secrets are the originals: a restored profile
    // reaches Redis as the original does.
    let values = restore_values(&dump);
    let envs: Vec<(&str, &str)> = values
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let original = tributary(
        catalog,
        &["run", "-c", "TEST CONNECTION PROFILE rp"],
        None,
        &[],
    );
    let copy = tributary(
        &restored,
        &["run", "-c", "TEST CONNECTION PROFILE rp"],
        None,
        &envs,
    );
    clean("TEST of a restored profile", &said(&copy));
    assert_eq!(
        first_line(&said(&copy)),
        first_line(&said(&original)),
        "the restored profile does not behave as the original"
    );
    done("catalog");

    // Plans: the dump (nothing to do), the dump with every secret given in clear (each
    // changed, none shown), and a broken file quoting secrets, in every format.
    let files = dir.join("plan");
    std::fs::create_dir_all(&files).unwrap();
    let mut in_clear = dump.clone();
    // Secrets that are a whole value (headers aside, which have a shape): given in
    // clear, each stays a valid option.
    for v in &variables {
        in_clear = in_clear
            .lines()
            .map(|l| {
                if l.contains("'headers'") {
                    l.to_string()
                } else {
                    l.replace(
                        &format!("= '{{{{ {v} }}}}'"),
                        &format!("= '{}'", marker("a secret option")),
                    )
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    assert_ne!(in_clear, dump, "no whole-value secret in the dump:\n{dump}");
    let broken_plan = format!(
        "CREATE TABLE b WITH (connector = 'impulse', evnt_rate = 'redis://u:{}@h');",
        marker("URL userinfo")
    );
    for (name, text, status) in [
        ("dump", dump.as_str(), 0),
        ("secrets in clear", in_clear.as_str(), 2),
        ("broken", broken_plan.as_str(), 1),
    ] {
        std::fs::write(files.join("catalog.sql"), text).unwrap();
        for format in FORMATS {
            let out = drive(
                &format!("plan --format {format} ({name})"),
                catalog,
                &["--format", format, "plan", files.to_str().unwrap()],
                None,
            );
            assert_eq!(
                out.status.code(),
                Some(status),
                "{name}: {}",
                tail(&said(&out))
            );
        }
    }
    done("plan");
    // Apply: the dump (nothing to do) and the broken file, in every format.
    for (name, text, status) in [
        ("dump", dump.as_str(), 0),
        ("broken", broken_plan.as_str(), 1),
    ] {
        std::fs::write(files.join("catalog.sql"), text).unwrap();
        for format in FORMATS {
            let out = drive(
                &format!("apply --format {format} ({name})"),
                catalog,
                &["--format", format, "apply", files.to_str().unwrap()],
                None,
            );
            assert_eq!(
                out.status.code(),
                Some(status),
                "{name}: {}",
                tail(&said(&out))
            );
        }
    }
    done("apply");

    let copied = dir.join("copied");
    let out = drive(
        "catalog copy",
        catalog,
        &[
            "catalog",
            "copy",
            catalog.to_str().unwrap(),
            copied.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", said(&out));

    for shell in ["bash", "zsh", "fish"] {
        drive("completions", catalog, &["completions", shell], None);
    }
    done("completions");
    drive("help", catalog, &["help"], None);
    done("help");

    // Push to a server (the Arroyo API's shape), and pull back.
    let out = drive(
        "arroyo push",
        catalog,
        &["--token", TOKEN, "arroyo", "push", server],
        None,
    );
    assert!(out.status.success(), "{}", said(&out));
    let pulled = dir.join("pulled");
    drive(
        "arroyo pull",
        &pulled,
        &["--token", TOKEN, "arroyo", "pull", server],
        None,
    );
    // A remote shell and a remote run.
    for format in FORMATS {
        let sql = describing().join(";\n") + ";";
        drive(
            &format!("run --server --format {format}"),
            catalog,
            &[
                "--format", format, "--server", server, "--token", TOKEN, "run", "-c", &sql,
            ],
            None,
        );
        for statement in CONNECTING {
            drive(
                &format!("run --server --format {format}: {statement}"),
                catalog,
                &[
                    "--format", format, "--server", server, "--token", TOKEN, "run", "-c",
                    statement,
                ],
                None,
            );
        }
    }
    done("arroyo");
    done("serve");

    let listed = subcommands(&[]);
    let undriven: Vec<&String> = listed.difference(&driven).collect();
    assert!(
        undriven.is_empty(),
        "commands the marker test does not drive: {undriven:?}; drive them in drive_commands"
    );
    for (parent, children) in [
        ("catalog", ["dump", "copy"].as_slice()),
        ("arroyo", ["push", "pull"].as_slice()),
    ] {
        let listed: BTreeSet<String> = subcommands(&[parent])
            .into_iter()
            .filter(|c| c != "help")
            .collect();
        let expected: BTreeSet<String> = children.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            listed, expected,
            "'{parent}' has commands the test does not drive"
        );
    }
}

/// The end of a long output, for a failure's message.
fn tail(text: &str) -> &str {
    let from = text.char_indices().rev().nth(3000).map_or(0, |(i, _)| i);
    &text[from..]
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// The values of a dump's `TRIBUTARY_SECRET_*` variables, from the setup's markers.
fn restore_values(dump: &str) -> Vec<(String, String)> {
    let variables: Vec<&str> = dump
        .lines()
        .filter_map(|l| l.strip_prefix("--   "))
        .collect();
    variables
        .into_iter()
        .filter_map(|v| {
            let value = match v {
                "TRIBUTARY_SECRET_RP_ADDRESS" => format!("bob:{}", marker("URL userinfo")),
                "TRIBUTARY_SECRET_KP_AUTH_PASSWORD" => marker("a secret option").into(),
                _ => return None,
            };
            Some((v.to_string(), value))
        })
        .collect()
}

/// One request to the server; its status and body, checked.
async fn request(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, String) {
    let client = reqwest::Client::new();
    let url = format!("{}/api/v1{path}", server.url);
    let mut r = client
        .request(method.parse().unwrap(), &url)
        .bearer_auth(TOKEN);
    if let Some(b) = body {
        r = r
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let response = r.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    clean(&format!("{method} {path}"), &text);
    (status, text)
}

/// The same, asking for an event stream.
async fn request_stream(server: &Server, path: &str, body: Value, accept: &str) -> String {
    let response = reqwest::Client::new()
        .post(format!("{}/api/v1{path}", server.url))
        .bearer_auth(TOKEN)
        .header("Accept", accept)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    clean(&format!("POST {path} ({accept})"), &text);
    text
}

/// Every route of the router's table, with the objects that hold secrets.
async fn drive_routes(server: &Server, peer: u16) {
    let userinfo = marker("URL userinfo");
    let header = marker("a header");
    let token = marker("a URL's token");
    let rest_profile = json!({"name": "rest_p", "connector": "redis", "validate": false,
        "config": {"address": format!("redis://carol:{userinfo}@127.0.0.1:6379")}});
    let rest_table = json!({"name": "rest_t", "connector": "polling_http",
        "config": {"endpoint": format!("http://127.0.0.1:{peer}/z?token={token}"),
                   "headers": format!("Authorization: Bearer {header}")},
        "schema": {"format": {"type": "json"}, "fields": [{"name": "a", "type": "string"}]}});
    let mut unknown = Vec::new();
    for (method, path) in tributary_server::routes() {
        match (method, path) {
            (
                "GET",
                "/ping" | "/udfs" | "/jobs" | "/pipelines" | "/connectors" | "/openapi.json",
            )
            | ("GET", "/connection_profiles" | "/connection_tables") => {
                request(server, method, path, None).await;
            }
            ("POST", "/pipelines/validate_query") => {
                for query in [
                    "SELECT * FROM ph",
                    "SELECT * FROM pview JOIN kt ON true",
                    &format!("SELECT 'redis://x:{userinfo}@h' FROM nothing_here"),
                ] {
                    request(server, method, path, Some(json!({"query": query}))).await;
                }
            }
            ("POST", "/connection_profiles") => {
                let (status, text) =
                    request(server, method, path, Some(rest_profile.clone())).await;
                assert_eq!(status, 200, "{text}");
            }
            ("POST", "/connection_profiles/test") => {
                let body = json!({"name": "t", "connector": "redis",
                    "config": {"address": format!("redis://carol:{userinfo}@127.0.0.1:6379")}});
                request(server, method, path, Some(body.clone())).await;
                request_stream(server, path, body, "text/event-stream").await;
            }
            ("GET", "/connection_profiles/{id}") => {
                for p in PROFILES {
                    let (status, text) =
                        request(server, method, &format!("/connection_profiles/{p}"), None).await;
                    assert_eq!(status, 200, "{text}");
                }
            }
            ("GET", "/connection_profiles/{id}/autocomplete") => {
                for p in PROFILES {
                    request(
                        server,
                        method,
                        &format!("/connection_profiles/{p}/autocomplete"),
                        None,
                    )
                    .await;
                }
            }
            ("PATCH", "/connection_profiles/{id}") => {
                // Tested (it fails: wrong password), then stored untested; then moved.
                let same = json!({"config": {"address": format!("redis://bob:{userinfo}@127.0.0.1:6379")}});
                request(
                    server,
                    method,
                    "/connection_profiles/rest_p",
                    Some(same.clone()),
                )
                .await;
                let mut untested = same;
                untested["validate"] = json!(false);
                request(
                    server,
                    method,
                    "/connection_profiles/rest_p",
                    Some(untested),
                )
                .await;
                let moved =
                    json!({"config": {"address": "redis://127.0.0.1:6380"}, "validate": false});
                request(server, method, "/connection_profiles/rp", Some(moved)).await;
            }
            ("DELETE", "/connection_profiles/{id}") => {
                // Refused while tables use it (the answer names them), then deleted.
                request(server, method, "/connection_profiles/kp", None).await;
                request(server, method, "/connection_profiles/rest_p", None).await;
            }
            ("POST", "/connection_tables") => {
                let (status, text) = request(server, method, path, Some(rest_table.clone())).await;
                assert_eq!(status, 200, "{text}");
            }
            ("POST", "/connection_tables/test") => {
                request_stream(server, path, rest_table.clone(), "text/event-stream").await;
                let mut ws = rest_table.clone();
                ws["connector"] = json!("kafka");
                ws["connection_profile_id"] = json!("kp");
                ws["config"] = json!({"topic": "t", "type": "source",
                    "client_configs": format!("sasl.password={}", marker("client_configs"))});
                request_stream(server, path, ws, "text/event-stream").await;
            }
            ("POST", "/connection_tables/sql") => {
                request(server, method, path, Some(rest_table.clone())).await;
            }
            ("POST", "/connection_tables/schemas/test") => {
                let schema = json!({"format": {"type": "json"}, "fields": [],
                    "definition": {"type": "json_schema", "schema": format!("{{\"type\": \"object\", \"description\": \"redis://u:{userinfo}@h\"")}});
                request(server, method, path, Some(schema)).await;
            }
            ("POST", "/connection_tables/schemas/infer") => {
                let body = json!({"table": rest_table.clone(), "limit": 2});
                request(server, method, path, Some(body)).await;
            }
            ("GET", "/connection_tables/{id}") => {
                for t in TABLES.iter().chain(&["rest_t"]) {
                    let (status, text) =
                        request(server, method, &format!("/connection_tables/{t}"), None).await;
                    assert_eq!(status, 200, "{text}");
                }
            }
            ("GET", "/connection_tables/{id}/create_sql") => {
                for t in TABLES.iter().chain(&["rest_t"]) {
                    request(
                        server,
                        method,
                        &format!("/connection_tables/{t}/create_sql"),
                        None,
                    )
                    .await;
                }
            }
            ("PATCH", "/connection_tables/{id}") => {
                let body = json!({"config": {"headers": format!("Authorization: Bearer {header}"),
                    "endpoint": format!("http://127.0.0.1:{peer}/w?token={token}")}});
                request(server, method, "/connection_tables/rest_t", Some(body)).await;
                let body = json!({"config": {"description": "x"}});
                request(server, method, "/connection_tables/kt", Some(body)).await;
            }
            ("DELETE", "/connection_tables/{id}") => {
                request(server, method, "/connection_tables/ph", None).await;
                request(server, method, "/connection_tables/rest_t", None).await;
            }
            ("POST", "/sql") => {
                let sql = describing().join(";\n") + ";";
                request(server, method, path, Some(json!({"sql": sql}))).await;
                for statement in CONNECTING {
                    let body = json!({"sql": statement});
                    request(server, method, path, Some(body.clone())).await;
                    for accept in ["application/x-ndjson", "text/event-stream"] {
                        request_stream(server, path, body.clone(), accept).await;
                    }
                }
            }
            ("POST", "/plan") => {
                let sql = format!(
                    "CREATE CONNECTION PROFILE rest_p WITH (connector = 'redis', address = 'redis://carol:{userinfo}@127.0.0.1:6379', password = '{header}', validate = false);\nCREATE TABLE p (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{peer}/z?token={token}', format = 'json');\nCREATE TABLE broken WITH (connector = 'impulse', evnt_rate = 'redis://u:{userinfo}@h');"
                );
                let (valid, _) = sql.rsplit_once('\n').unwrap();
                for (files, prune) in [(valid, false), (valid, true), (sql.as_str(), false)] {
                    let body =
                        json!({"files": [{"name": "catalog.sql", "sql": files}], "prune": prune});
                    request(server, method, path, Some(body)).await;
                }
            }
            ("POST", "/apply") => {
                let sql = format!(
                    "CREATE CONNECTION PROFILE rest_a WITH (connector = 'redis', address = 'redis://carol:{userinfo}@127.0.0.1:6379', password = '{header}', validate = false);\nCREATE TABLE a_polled (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{peer}/z?token={token}', format = 'json');\nCREATE TABLE broken WITH (connector = 'impulse', evnt_rate = 'redis://u:{userinfo}@h');"
                );
                let (valid, _) = sql.rsplit_once('\n').unwrap();
                // Refused (invalid, a stale plan), then applied: the answers name what
                // changed, never a secret.
                for (files, fingerprint) in [
                    (sql.as_str(), None),
                    (valid, Some("0000000000000000")),
                    (valid, None),
                ] {
                    let body = json!({"files": [{"name": "catalog.sql", "sql": files}], "fingerprint": fingerprint});
                    request(server, method, path, Some(body)).await;
                }
            }
            other => unknown.push(format!("{} {}", other.0, other.1)),
        }
    }
    assert!(
        unknown.is_empty(),
        "routes the marker test does not drive: {unknown:?}; drive them in drive_routes"
    );
}

/// Every page of the console's route table, for every object.
async fn drive_console(server: &Server) {
    let app = include_str!("../../server/console/js/app.js");
    let patterns: Vec<&str> = app
        .lines()
        .filter_map(|l| l.trim().strip_prefix("[/^"))
        .filter_map(|l| l.split("$/").next())
        .collect();
    assert!(
        patterns.len() >= 5,
        "the console's route table was not found"
    );
    let b = Browser::start("secret-marker").await;
    b.go(&format!("{}/", server.url)).await;
    let login = b.find("#login-token").await;
    b.type_into(&login, TOKEN).await;
    b.click_button("Sign in").await;
    b.wait_text("main", "Connections").await;
    for pattern in patterns {
        let hashes: Vec<String> = match pattern {
            "\\/connections\\/(.+)" => TABLES.iter().map(|t| format!("/connections/{t}")).collect(),
            "\\/connections" => vec!["/connections".into()],
            "\\/profiles\\/(.+)" => PROFILES.iter().map(|p| format!("/profiles/{p}")).collect(),
            "\\/profiles" => vec!["/profiles".into()],
            "\\/new" => ["redis", "kafka", "polling_http", "mqtt"]
                .iter()
                .map(|c| format!("/new?connector={c}"))
                .collect(),
            "\\/sql" => vec!["/sql".into()],
            "\\/plan" => vec!["/plan".into()],
            other => panic!("a console page the marker test does not visit: {other}"),
        };
        for hash in hashes {
            b.go(&format!("{}/#{hash}", server.url)).await;
            // Wait until the page has replaced its loading line.
            for _ in 0..100 {
                let loading = b
                    .js(
                        "return document.querySelector('#view .spinner') !== null",
                        vec![],
                    )
                    .await;
                if loading == json!(false) {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            let page = b
                .js(
                    "return document.documentElement.outerHTML + '\\n' + document.body.innerText + '\\n' + [...document.querySelectorAll('input, textarea')].map(e => e.value).join('\\n')",
                    vec![],
                )
                .await;
            clean(
                &format!("the console's page #{hash}"),
                page.as_str().unwrap_or_default(),
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_marker_secret_leaves_through_any_surface() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let peer = echoing_peer();
    let out = tributary(&catalog, &["run"], Some(&setup_script(peer)), &[]);
    assert!(out.status.success(), "{}", said(&out));
    clean("the setup's run", &said(&out));

    let envs = env_values();
    // One server on an embedded catalog logging everything as JSON, one on PostgreSQL
    // logging at debug level as text (where the database client logs the parameters of
    // its statements: the records, secrets and all).
    let mut servers = Vec::new();
    let pg = PgSchema::new();
    for (level, format) in [("trace", "json"), ("debug", "text")] {
        let log = dir.path().join(format!("serve-{format}.log"));
        let mut all: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.push(("RUST_LOG", level));
        let flags = ["--log-format", format];
        let server = if format == "json" {
            Server::start_env(&dir.path().join("there"), log, &flags, &all)
        } else {
            Server::start_shared_env(&pg.url, log, &flags, &all)
        };
        servers.push(server);
    }
    let (first, second) = (&servers[0], &servers[1]);
    // The CLI pushes the catalog to the first server, and drives it remotely.
    let (dir_path, catalog_path, url) =
        (dir.path().to_path_buf(), catalog.clone(), first.url.clone());
    tokio::task::spawn_blocking(move || drive_commands(&dir_path, &catalog_path, &url))
        .await
        .unwrap();
    drive_console(first).await;
    drive_routes(first, peer).await;
    let out = tributary(
        &catalog,
        &["--token", TOKEN, "arroyo", "push", &second.url],
        None,
        &[],
    );
    clean("arroyo push", &said(&out));
    assert!(out.status.success(), "{}", said(&out));
    drive_routes(second, peer).await;
    for server in &servers {
        clean("the server's log", &server.log());
        assert!(server.log().contains("request"), "{}", server.log());
    }
}
