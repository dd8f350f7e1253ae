//! TEST CONNECTION PROFILE, TEST TABLE and validating CREATE statements against real
//! systems on this machine: Redis on 127.0.0.1:6379 (and a second, password-protected
//! redis-server the test starts), local files, and HTTP/SSE servers the tests start on
//! 127.0.0.1. Each failure mode has its stage and code checked. A missing Redis fails the
//! tests; it does not skip them.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use axum::Router;
use axum::response::IntoResponse;
use axum::routing::get;
use std::sync::Arc;
use std::time::Duration;
use tributary_catalog::OverlayStore;
use tributary_sql::{Output, Session, StatementResult};
use tributary_types::Severity;

fn session() -> Session {
    Session::new(Arc::new(OverlayStore::in_memory()))
}

/// The error of a statement that must fail, as "message | help".
async fn error_of(session: &Session, sql: &str) -> String {
    let e = session.execute(sql).await.unwrap_err();
    let d = &e.diagnostics[0];
    format!("{} | {}", d.message, d.help.clone().unwrap_or_default())
}

/// Rows of a result as space-joined cells.
fn rows(r: &StatementResult) -> Vec<String> {
    let Output::Rows { batches, .. } = &r.output else {
        panic!("no rows")
    };
    let b = &batches[0];
    (0..b.num_rows())
        .map(|i| {
            (0..b.num_columns())
                .map(|c| {
                    datafusion::arrow::util::display::ArrayFormatter::try_new(
                        b.column(c).as_ref(),
                        &Default::default(),
                    )
                    .unwrap()
                    .value(i)
                    .to_string()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A sampled table's result carries a warning for a message that did not decode.
fn assert_a_message_was_undecodable(r: &StatementResult) {
    assert!(
        r.warnings
            .iter()
            .any(|w| w.severity == Severity::Warning && w.message.contains("could not be decoded")),
        "{:?}",
        r.warnings
    );
}

/// SET a key on the local Redis, speaking RESP directly.
async fn redis_set(key: &str, value: &str) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut conn = tokio::net::TcpStream::connect("127.0.0.1:6379")
        .await
        .unwrap();
    let command = format!(
        "*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${}\r\n{value}\r\n",
        key.len(),
        value.len()
    );
    conn.write_all(command.as_bytes()).await.unwrap();
    let mut reply = [0u8; 5];
    conn.read_exact(&mut reply).await.unwrap();
    assert_eq!(&reply, b"+OK\r\n");
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn redis_profiles_connect_authenticate_and_fail_with_codes() {
    let s = session();
    // The local Redis (started by .ci/run).
    let ok = s
        .execute("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:6379')")
        .await
        .unwrap_or_else(|e| panic!("is redis-server running on 127.0.0.1:6379? {e}"));
    let notes: Vec<&str> = ok[0].warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("connect: connected to redis://127.0.0.1:6379")),
        "{notes:?}"
    );
    assert!(ok[0].warnings.iter().all(|w| w.severity == Severity::Note));
    let tested = s.execute("TEST CONNECTION PROFILE r").await.unwrap();
    let r = rows(&tested[0]);
    assert!(
        r.iter()
            .any(|l| l.starts_with("authenticate passed  PING answered as user 'default'")),
        "{r:?}"
    );
    let shown = s.execute("SHOW CONNECTION PROFILES").await.unwrap();
    // Key prefixes in use are offered for completion.
    redis_set("tributary-test:completion:1", "x").await;
    let listed = s.execute("SHOW TOPICS IN PROFILE r").await.unwrap();
    assert!(
        rows(&listed[0]).contains(&"tributary-test:completion: key prefix".to_string()),
        "{:?}",
        rows(&listed[0])
    );
    assert!(
        rows(&shown[0])[0].contains(" passed "),
        "{:?}",
        rows(&shown[0])
    );
    // Refused: nothing stored.
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE refused WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}')")).await;
    assert!(
        e.starts_with(&format!("the connection test of connection profile 'refused' failed at stage 'connect' [CONNECT_REFUSED]: nothing accepts connections at redis://127.0.0.1:{port}")),
        "{e}"
    );
    assert!(s.store().profile_by_name("refused").unwrap().is_none());
    // Unknown host.
    let e = error_of(&s, "CREATE CONNECTION PROFILE dns WITH (connector = 'redis', address = 'redis://no-such-host.invalid:6379')").await;
    assert!(
        e.contains("failed at stage 'connect' [DNS_UNRESOLVED]"),
        "{e}"
    );
    // A variable that is not set names itself.
    let e = error_of(&s, "CREATE CONNECTION PROFILE var WITH (connector = 'redis', address = 'redis://127.0.0.1:6379', password = '{{ TRIBUTARY_SURELY_UNSET_VAR }}')").await;
    assert!(
        e.starts_with("the connection test of connection profile 'var' failed at stage 'resolve' [MISSING_VARIABLE]: option 'password':")
            && e.contains("TRIBUTARY_SURELY_UNSET_VAR"),
        "{e}"
    );
    // validate = false stores it untested.
    s.execute("CREATE CONNECTION PROFILE offline WITH (connector = 'redis', address = 'redis://127.0.0.1:1', validate = false)")
        .await
        .unwrap();
    // Testing it on demand reports the failure; the last result is kept.
    let e = error_of(
        &s,
        "TEST CONNECTION PROFILE offline TIMEOUT INTERVAL '2' SECOND",
    )
    .await;
    assert!(e.contains("[CONNECT_REFUSED]"), "{e}");
    let shown = s.execute("SHOW CONNECTION PROFILES").await.unwrap();
    assert!(
        rows(&shown[0])
            .iter()
            .any(|l| l.starts_with("offline ") && l.contains("failed (CONNECT_REFUSED)")),
        "{:?}",
        rows(&shown[0])
    );
}

/// A server process of the test's own (a second Redis, Mosquitto or NATS with
/// credentials) on a free port of 127.0.0.1; killed and reaped when dropped.
struct Guarded {
    child: std::process::Child,
    port: u16,
    _dir: Option<tempfile::TempDir>,
}

impl Guarded {
    /// Start `program` with the arguments `args(port)` gives, and wait until it listens.
    // The child is killed and reaped by `Drop` once it is returned inside `Self`.
    #[allow(clippy::zombie_processes)]
    async fn start(
        program: &str,
        args: impl FnOnce(u16) -> Vec<String>,
        dir: Option<tempfile::TempDir>,
    ) -> Self {
        let port = closed_port();
        let mut child = std::process::Command::new(program)
            .args(args(port))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{program} must be installed (.ci/run installs it): {e}"));
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Self {
                    child,
                    port,
                    _dir: dir,
                };
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("{program} did not start on port {port}");
    }

    /// A Redis that requires `password`.
    async fn redis(password: &str) -> Self {
        let password = password.to_string();
        Self::start(
            "redis-server",
            move |port| {
                [
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--requirepass",
                    &password,
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ]
                .map(String::from)
                .to_vec()
            },
            None,
        )
        .await
    }

    /// A Mosquitto speaking MQTT over TLS with a certificate for `localhost` and 127.0.0.1,
    /// signed by a CA made for it (`ca.crt` in its directory; see [`Self::dir`]).
    async fn mosquitto_tls() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let openssl = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .expect("openssl must be installed");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=Tributary Test CA",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ]);
        std::fs::write(
            d.join("san.ext"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ]);
        // Mosquitto reads its key after dropping to its own user; the key is a throwaway.
        use std::os::unix::fs::PermissionsExt;
        for (path, mode) in [(d.to_path_buf(), 0o755), (d.join("server.key"), 0o644)] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let conf = d.join("mosquitto.conf");
        let conf_arg = conf.display().to_string();
        let base = d.to_path_buf();
        Self::start(
            "mosquitto",
            move |port| {
                std::fs::write(
                    &conf,
                    format!(
                        "listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\ncafile {0}/ca.crt\ncertfile {0}/server.crt\nkeyfile {0}/server.key\n",
                        base.display()
                    ),
                )
                .unwrap();
                vec!["-c".into(), conf_arg]
            },
            Some(dir),
        )
        .await
    }

    /// The directory of the server's files.
    fn dir(&self) -> &std::path::Path {
        self._dir.as_ref().unwrap().path()
    }

    /// A Mosquitto that requires `user` and `password`.
    async fn mosquitto(user: &str, password: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let passwords = dir.path().join("passwords");
        let made = std::process::Command::new("mosquitto_passwd")
            .args(["-b", "-c"])
            .arg(&passwords)
            .args([user, password])
            .status()
            .expect("mosquitto_passwd must be installed (.ci/run installs mosquitto)");
        assert!(made.success());
        let conf = dir.path().join("mosquitto.conf");
        let conf_arg = conf.display().to_string();
        Self::start(
            "mosquitto",
            move |port| {
                std::fs::write(
                    &conf,
                    format!(
                        "listener {port} 127.0.0.1\nallow_anonymous false\npassword_file {}\npersistence false\n",
                        passwords.display()
                    ),
                )
                .unwrap();
                vec!["-c".into(), conf_arg]
            },
            Some(dir),
        )
        .await
    }

    /// A NATS server that requires `user` and `password`.
    async fn nats(user: &str, password: &str) -> Self {
        let (user, password) = (user.to_string(), password.to_string());
        Self::start(
            "nats-server",
            move |port| {
                [
                    "-a",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "--user",
                    &user,
                    "--pass",
                    &password,
                ]
                .map(String::from)
                .to_vec()
            },
            None,
        )
        .await
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn redis_credentials_are_checked_and_never_printed() {
    let guarded = Guarded::redis("s3cret-pass").await;
    let s = session();
    let e = error_of(
        &s,
        &format!("CREATE CONNECTION PROFILE wrong WITH (connector = 'redis', address = 'redis://127.0.0.1:{}', password = 'not-the-pass')", guarded.port),
    )
    .await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]"),
        "{e}"
    );
    assert!(!e.contains("not-the-pass"), "{e}");
    s.execute(&format!(
        "CREATE CONNECTION PROFILE right WITH (connector = 'redis', address = 'redis://127.0.0.1:{}', password = 's3cret-pass')",
        guarded.port
    ))
    .await
    .unwrap();
    // A sink table proves it may write without writing.
    s.execute("CREATE TABLE cache (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'right', type = 'sink', target = 'string', 'target.key_prefix' = 'c:', 'target.key_column' = id, format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE cache").await.unwrap();
    let r = rows(&t[0]);
    assert!(
        r.iter().any(|l| l.starts_with("write passed  user 'default' may write keys under 'c:' (checked with ACL DRYRUN, nothing written)")),
        "{r:?}"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    // Accepts connections and says nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let s = session();
    s.execute(&format!("CREATE CONNECTION PROFILE mute WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}', validate = false)"))
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let e = error_of(
        &s,
        "TEST CONNECTION PROFILE mute TIMEOUT '300 milliseconds'",
    )
    .await;
    assert!(
        e.contains("[TIMEOUT]") && e.contains("did not finish within 300 ms"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // Every connector that talks over TCP gives up at the TIMEOUT, with the same code.
    for (connector, options) in [
        ("kafka", format!("bootstrap_servers = '127.0.0.1:{port}'")),
        ("mqtt", format!("url = 'mqtt://127.0.0.1:{port}'")),
        ("nats", format!("servers = 'nats://127.0.0.1:{port}'")),
        ("rabbitmq", format!("host = '127.0.0.1', port = {port}")),
    ] {
        s.execute(&format!("CREATE CONNECTION PROFILE mute_{connector} WITH (connector = '{connector}', {options}, validate = false)"))
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let e = error_of(
            &s,
            &format!("TEST CONNECTION PROFILE mute_{connector} TIMEOUT '300 milliseconds'"),
        )
        .await;
        assert!(e.contains("[TIMEOUT]"), "{connector}: {e}");
        assert!(started.elapsed() < Duration::from_secs(5), "{connector}");
    }
    for (connector, scheme) in [
        ("websocket", "ws"),
        ("sse", "http"),
        ("polling_http", "http"),
    ] {
        s.execute(&format!("CREATE TABLE mute_{connector} (id BIGINT) WITH (connector = '{connector}', endpoint = '{scheme}://127.0.0.1:{port}/', format = 'json')"))
            .await
            .unwrap();
        let e = error_of(
            &s,
            &format!("TEST TABLE mute_{connector} TIMEOUT '300 milliseconds'"),
        )
        .await;
        assert!(e.contains("[TIMEOUT]"), "{connector}: {e}");
    }
    let e = error_of(&s, "TEST CONNECTION PROFILE mute TIMEOUT 'soon'").await;
    assert!(
        e.starts_with("invalid TIMEOUT 'soon': ")
            && e.ends_with("| Write TIMEOUT INTERVAL '5' SECOND or TIMEOUT '500 milliseconds'."),
        "{e}"
    );
    held.abort();
}

#[tokio::test]
async fn file_tables_read_and_decode_samples_and_explain_each_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    std::fs::write(
        &file,
        "{\"id\": 1, \"name\": \"a\"}\n{\"id\": \"oops\"}\n\n{\"id\": 3}\n",
    )
    .unwrap();
    let s = session();
    s.execute(&format!(
        "CREATE TABLE events (id BIGINT, name TEXT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        file.display()
    ))
    .await
    .unwrap();
    let t = s.execute("TEST TABLE events LIMIT 5").await.unwrap();
    assert_eq!(rows(&t[0]), ["1 a", "3 "]);
    let warnings: Vec<String> = t[0]
        .warnings
        .iter()
        .filter(|w| w.severity == Severity::Warning)
        .map(|w| w.message.clone())
        .collect();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("message 2 could not be decoded:"),
        "{warnings:?}"
    );
    // LIMIT bounds what is read.
    let t = s.execute("TEST TABLE events LIMIT 1").await.unwrap();
    assert_eq!(rows(&t[0]), ["1 a"]);
    // An empty file says so.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    s.execute(&format!("CREATE TABLE empty (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')", empty.display()))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE empty").await;
    assert!(
        e.starts_with("the connection test of table 'empty' failed at stage 'read' [EMPTY]"),
        "{e}"
    );
    // A missing file.
    s.execute("CREATE TABLE gone (id BIGINT) WITH (connector = 'single_file', path = '/no/such/file.jsonl', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE gone").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Nothing decodes: the decode stage fails with every reason.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not json\n").unwrap();
    s.execute(&format!("CREATE TABLE bad (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')", bad.display()))
        .await
        .unwrap();
    let e = s.execute("TEST TABLE bad").await.unwrap_err();
    assert!(
        e.diagnostics[0]
            .message
            .contains("failed at stage 'decode' [DECODE_FAILED]"),
        "{e}"
    );
    assert!(e.diagnostics[0].notes[0].starts_with("message 1: "), "{e}");
    // A sink proves its directory is writable, and says what it wrote.
    s.execute(&format!("CREATE TABLE out (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'sink', format = 'json')", dir.path().join("out.jsonl").display()))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE out").await.unwrap();
    assert!(
        rows(&t[0])
            .iter()
            .any(|l| l.starts_with("write passed  created and removed the empty file")),
        "{:?}",
        rows(&t[0])
    );
    // The filesystem connector reads a directory; object stores cannot be tested here.
    std::fs::create_dir(dir.path().join("part")).unwrap();
    std::fs::write(dir.path().join("part/a.json"), "{\"id\": 7}\n").unwrap();
    s.execute(&format!("CREATE TABLE dir (id BIGINT) WITH (connector = 'filesystem', path = '{}', type = 'source', format = 'json', 'source.regex_pattern' = '.*\\.json$')", dir.path().display()))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE dir").await.unwrap();
    assert_eq!(rows(&t[0]), ["7"]);
    s.execute("CREATE TABLE s3 (id BIGINT) WITH (connector = 'filesystem', path = 's3://bucket/prefix', type = 'source', format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE s3").await.unwrap();
    assert!(
        rows(&t[0])[0]
            .starts_with("connect skipped NOT_TESTABLE 's3://bucket/prefix' is in an object store"),
        "{:?}",
        rows(&t[0])
    );
}

pub(crate) async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn http_tables_are_requested_and_classified() {
    let app = Router::new()
        .route("/orders", get(|| async { r#"{"id": 5, "name": "x"}"# }))
        .route(
            "/private",
            get(|headers: axum::http::HeaderMap| async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer good") {
                    (axum::http::StatusCode::OK, r#"{"id": 1}"#).into_response()
                } else {
                    axum::http::StatusCode::UNAUTHORIZED.into_response()
                }
            }),
        )
        .route(
            "/events",
            get(|| async {
                (
                    [("content-type", "text/event-stream")],
                    "event: order\ndata: {\"id\": 1}\n\nevent: ping\ndata: {}\n\nevent: order\ndata: {\"id\": 2}\n\n",
                )
            }),
        )
        .route("/hook", axum::routing::post(|| async { "ok" }))
        .route(
            "/idle",
            get(|| async {
                let stream = futures::stream::pending::<Result<String, std::io::Error>>();
                ([("content-type", "text/event-stream")], axum::body::Body::from_stream(stream))
            }),
        );
    let base = serve(app).await;
    let s = session();
    let create = |name: &str, connector: &str, path: &str, extra: &str| {
        format!(
            "CREATE TABLE {name} (id BIGINT, name TEXT) WITH (connector = '{connector}', endpoint = '{base}{path}', format = 'json'{extra})"
        )
    };
    s.execute(&create("polled", "polling_http", "/orders", ""))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE polled").await.unwrap();
    assert_eq!(rows(&t[0]), ["5 x"]);
    s.execute(&create(
        "denied",
        "polling_http",
        "/private",
        ", headers = 'Authorization: Bearer bad'",
    ))
    .await
    .unwrap();
    let e = error_of(&s, "TEST TABLE denied").await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]") && !e.contains("Bearer bad"),
        "{e}"
    );
    s.execute(&create(
        "allowed",
        "polling_http",
        "/private",
        ", headers = 'Authorization: Bearer good'",
    ))
    .await
    .unwrap();
    assert_eq!(
        rows(&s.execute("TEST TABLE allowed").await.unwrap()[0]),
        ["1 "]
    );
    s.execute(&create("missing", "polling_http", "/nope", ""))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE missing").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Server-sent events of the chosen type.
    s.execute(&create("sse", "sse", "/events", ", events = 'order'"))
        .await
        .unwrap();
    assert_eq!(
        rows(&s.execute("TEST TABLE sse").await.unwrap()[0]),
        ["1 ", "2 "]
    );
    // An idle stream: nothing arrives, and the message says why that may be.
    s.execute(&create("idle", "sse", "/idle", ""))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE idle TIMEOUT '300 milliseconds'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]: no events arrived within 300 ms")
            && e.contains("The stream may be idle"),
        "{e}"
    );
    // A webhook sink is reached without posting: its endpoint takes POST only, so the
    // OPTIONS probe is answered 405, which proves it exists.
    s.execute(&format!("CREATE TABLE hook (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/hook', format = 'json')"))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE hook").await.unwrap();
    let r = rows(&t[0]);
    assert!(r.iter().any(|l| l.starts_with("locate passed  ") && l.contains("it answered OPTIONS with 405")), "{r:?}");
    assert!(
        r.iter()
            .any(|l| l.starts_with("write passed  the endpoint is reachable; nothing was posted")),
        "{r:?}"
    );
    s.execute(&format!("CREATE TABLE lost_hook (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/no-hook', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE lost_hook").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Nothing listening.
    let port = closed_port();
    s.execute(&format!("CREATE TABLE down (id BIGINT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{port}/x', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE down").await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    // validate = 'sample' tests before storing: a failing table is not created.
    let e = error_of(
        &s,
        &create("v_bad", "polling_http", "/nope", ", validate = 'sample'"),
    )
    .await;
    assert!(e.contains("[NOT_FOUND]"), "{e}");
    assert!(s.store().table_by_name("v_bad").unwrap().is_none());
    let ok = s
        .execute(&create(
            "v_ok",
            "polling_http",
            "/orders",
            ", validate = 'sample'",
        ))
        .await
        .unwrap();
    assert!(
        ok[0]
            .warnings
            .iter()
            .any(|w| w.message.starts_with("read: read a")),
        "{:?}",
        ok[0].warnings
    );
    assert!(s.store().table_by_name("v_ok").unwrap().is_some());
    assert!(
        error_of(
            &s,
            &create("v_odd", "polling_http", "/orders", ", validate = 'always'")
        )
        .await
        .starts_with("invalid value 'always' for option 'validate'")
    );
    let first = rows(&s.execute("TEST TABLE v_ok").await.unwrap()[0]);
    assert_eq!(first, ["5 x"]);
}

/// librdkafka's in-process mock cluster (the real Kafka protocol over TCP) with a topic
/// holding `messages`.
pub(crate) async fn mock_cluster(
    topic: &str,
    messages: &[&str],
) -> rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let mock = rdkafka::mocking::MockCluster::new(1).unwrap();
    mock.create_topic(topic, 2, 1).unwrap();
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", mock.bootstrap_servers())
        .create()
        .unwrap();
    for (i, m) in messages.iter().enumerate() {
        let key = i.to_string();
        producer
            .send(
                FutureRecord::to(topic).payload(*m).key(&key),
                Duration::from_secs(5),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }
    mock
}

#[tokio::test]
async fn kafka_profiles_and_tables_against_the_mock_cluster() {
    let mock = mock_cluster(
        "orders",
        &[
            r#"{"id": 1, "name": "a"}"#,
            r#"{"id": "bad"}"#,
            r#"{"id": 3, "name": "c"}"#,
        ],
    )
    .await;
    let servers = mock.bootstrap_servers();
    let s = session();
    let created = s
        .execute(&format!("CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '{servers}')"))
        .await
        .unwrap();
    assert!(
        created[0].warnings.iter().any(|w| w
            .message
            .starts_with("authenticate: the cluster answered: 1 broker(s)")),
        "{:?}",
        created[0].warnings
    );
    // Completion lists the topics.
    let topics = s.execute("SHOW TOPICS IN PROFILE k").await.unwrap();
    assert!(
        rows(&topics[0]).contains(&"orders topic".to_string()),
        "{:?}",
        rows(&topics[0])
    );
    // A source from the earliest offset reads and decodes; the bad message is explained.
    s.execute("CREATE TABLE orders (id BIGINT, name TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', 'source.offset' = 'earliest', format = 'json')")
        .await
        .unwrap();
    let t = s
        .execute("TEST TABLE orders LIMIT 3 TIMEOUT INTERVAL '10' SECOND")
        .await
        .unwrap();
    let mut got = rows(&t[0]);
    got.sort();
    assert_eq!(got, ["1 a", "3 c"]);
    assert_a_message_was_undecodable(&t[0]);
    // The sample rows carry the table's METADATA columns, from each message.
    s.execute("CREATE TABLE orders_meta (id BIGINT, t TEXT METADATA FROM 'topic', p INT METADATA FROM 'partition', o BIGINT METADATA FROM 'offset_id', k BYTEA METADATA FROM 'key', ts BIGINT METADATA FROM 'timestamp', name TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', 'source.offset' = 'earliest', format = 'json')")
        .await
        .unwrap();
    let t = s
        .execute("TEST TABLE orders_meta LIMIT 3 TIMEOUT '10 seconds'")
        .await
        .unwrap();
    let Output::Rows { schema, .. } = &t[0].output else {
        panic!("no rows")
    };
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["id", "t", "p", "o", "k", "ts", "name"]);
    let mut got = rows(&t[0]);
    got.sort();
    assert_eq!(got.len(), 2, "{got:?}");
    for (row, (id, key, name)) in got.iter().zip([("1", "30", "a"), ("3", "32", "c")]) {
        // id, topic, partition (0 or 1), offset, key (the index as text, shown as hex
        // bytes), a timestamp in milliseconds, name.
        let cells: Vec<&str> = row.split(' ').collect();
        assert_eq!(
            (cells[0], cells[1], cells[4], cells[6]),
            (id, "orders", key, name),
            "{row}"
        );
        assert!(matches!(cells[2], "0" | "1"), "{row}");
        assert!(cells[3].parse::<i64>().is_ok(), "{row}");
        assert!(
            cells[5].parse::<i64>().unwrap() > 1_700_000_000_000,
            "{row}"
        );
    }
    // From the latest offset nothing arrives, and the message says why.
    s.execute("CREATE TABLE orders_latest (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE orders_latest TIMEOUT '1 second'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]")
            && e.contains(
                "reads from the latest offset, so the 3 message(s) already in the topic are skipped"
            )
            && e.contains("'source.offset' = 'earliest'"),
        "{e}"
    );
    // A misspelled topic.
    s.execute("CREATE TABLE typo (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'ordres', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE typo").await;
    assert!(
        e.contains("failed at stage 'locate' [NOT_FOUND]: topic 'ordres' does not exist")
            && e.contains("Did you mean 'orders'?"),
        "{e}"
    );
    // A sink is located; Kafka cannot prove write access without producing, and says so.
    s.execute("CREATE TABLE out (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'sink', format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE out").await.unwrap();
    assert!(
        rows(&t[0]).iter().any(|l| l.starts_with(
            "write skipped NOT_TESTABLE Kafka cannot check write permission without producing"
        )),
        "{:?}",
        rows(&t[0])
    );
    // An empty topic read from the start.
    mock.create_topic("empty", 1, 1).unwrap();
    s.execute("CREATE TABLE empty (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'empty', type = 'source', 'source.offset' = 'earliest', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE empty TIMEOUT '1 second'").await;
    assert!(
        e.contains("[EMPTY]") && e.contains("topic 'empty' is empty"),
        "{e}"
    );
    // validate = 'sample' on CREATE TABLE reads (and decodes) before storing; the notes
    // say what was read.
    let sampled = s.execute("CREATE TABLE checked (id BIGINT, name TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', 'source.offset' = 'earliest', format = 'json', validate = 'sample')")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let notes: Vec<&str> = sampled[0]
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("locate: topic 'orders'"))
            && notes.iter().any(|n| n.starts_with("read: read 3 messages"))
            && notes
                .iter()
                .any(|n| n.starts_with("message 2 could not be decoded")),
        "{notes:?}"
    );
    assert!(s.store().table_by_name("checked").unwrap().is_some());
    // validate = 'connect' stops before reading: connected and located, nothing read.
    let connected = s.execute("CREATE TABLE connected (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json', validate = 'connect')")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let notes: Vec<&str> = connected[0]
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with("locate: "))
            && !notes.iter().any(|n| n.starts_with("read: ")),
        "{notes:?}"
    );
    assert!(s.store().table_by_name("connected").unwrap().is_some());
    // A missing topic fails either way, and stores nothing.
    let e = error_of(&s, "CREATE TABLE lost (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'nowhere', type = 'source', format = 'json', validate = 'connect')").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    assert!(s.store().table_by_name("lost").unwrap().is_none());
    // Refused and unknown brokers.
    let e = error_of(&s, "CREATE CONNECTION PROFILE down WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1')").await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    let e = error_of(&s, "CREATE CONNECTION PROFILE nowhere WITH (connector = 'kafka', bootstrap_servers = 'no-such-broker.invalid:9092')").await;
    assert!(
        e.contains("failed at stage 'resolve' [DNS_UNRESOLVED]"),
        "{e}"
    );
    assert!(s.store().profile_by_name("down").unwrap().is_none());
}

/// Publish a retained message on the local Mosquitto, so that a later subscriber gets it.
async fn mqtt_retain(port: u16, topic: &str, payload: &str) {
    use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
    let (client, mut events) = AsyncClient::new(
        MqttOptions::new("tributary-test-publisher", "127.0.0.1", port),
        10,
    );
    client
        .publish(topic, QoS::AtLeastOnce, true, payload.as_bytes().to_vec())
        .await
        .unwrap();
    loop {
        match tokio::time::timeout(Duration::from_secs(5), events.poll()).await {
            Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => break,
            Ok(Ok(_)) => {}
            other => panic!("is mosquitto running on 127.0.0.1:{port}? {other:?}"),
        }
    }
    let _ = client.disconnect().await;
}

#[tokio::test]
async fn mqtt_brokers_connect_authenticate_and_deliver() {
    let s = session();
    // The local Mosquitto (started by .ci/run).
    s.execute(
        "CREATE CONNECTION PROFILE m WITH (connector = 'mqtt', url = 'mqtt://127.0.0.1:1883')",
    )
    .await
    .unwrap_or_else(|e| panic!("is mosquitto running on 127.0.0.1:1883? {e}"));
    // MQTT has no way to list topics, and says so.
    let e = error_of(&s, "SHOW TOPICS IN PROFILE m").await;
    assert!(
        e.starts_with("connector 'mqtt' has no names to list"),
        "{e}"
    );
    mqtt_retain(1883, "tributary/test/orders", r#"{"id": 42}"#).await;
    s.execute("CREATE TABLE orders (id BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', topic = 'tributary/test/orders', type = 'source', format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE orders LIMIT 1").await.unwrap();
    assert_eq!(rows(&t[0]), ["42"]);
    // Without a LIMIT, the test stops once the retained message has come and the topic
    // has been quiet for a moment, not at its 10 s timeout.
    let started = std::time::Instant::now();
    let t = s.execute("TEST TABLE orders").await.unwrap();
    assert_eq!(rows(&t[0]), ["42"]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    // The topic a message came from, as a METADATA column.
    s.execute("CREATE TABLE orders_topic (id BIGINT, topic TEXT METADATA FROM 'topic') WITH (connector = 'mqtt', connection_profile = 'm', topic = 'tributary/test/orders', type = 'source', format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE orders_topic LIMIT 1").await.unwrap();
    assert_eq!(rows(&t[0]), ["42 tributary/test/orders"]);
    // Nothing retained, nothing published: the topic is idle, and the message says why.
    s.execute("CREATE TABLE quiet (id BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', topic = 'tributary/test/quiet', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE quiet TIMEOUT '500 milliseconds'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]")
            && e.contains("only messages published while subscribed"),
        "{e}"
    );
    // Refused.
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE off WITH (connector = 'mqtt', url = 'mqtt://127.0.0.1:{port}')")).await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    // Unknown host.
    let e = error_of(&s, "CREATE CONNECTION PROFILE nowhere WITH (connector = 'mqtt', url = 'mqtt://no-such-host.invalid:1883')").await;
    assert!(e.contains("[DNS_UNRESOLVED]"), "{e}");
    // A message the format cannot read is explained, not dropped silently.
    mqtt_retain(1883, "tributary/test/bad", r#"{"id": "not a number"}"#).await;
    s.execute("CREATE TABLE bad (id BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', topic = 'tributary/test/bad', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = s.execute("TEST TABLE bad LIMIT 1").await.unwrap_err();
    let d = &e.diagnostics[0];
    assert!(
        d.message
            .contains("failed at stage 'decode' [DECODE_FAILED]")
            && d.notes
                .iter()
                .any(|n| n.contains("field 'id'") && n.contains("not a number")),
        "{d:?}"
    );
    // Credentials, on a broker that requires them.
    let guarded = Guarded::mosquitto("svc", "right-pass").await;
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE wrong WITH (connector = 'mqtt', url = 'mqtt://127.0.0.1:{}', username = 'svc', password = 'wrong-pass')", guarded.port)).await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]") && !e.contains("wrong-pass"),
        "{e}"
    );
    s.execute(&format!("CREATE CONNECTION PROFILE right WITH (connector = 'mqtt', url = 'mqtt://127.0.0.1:{}', username = 'svc', password = 'right-pass')", guarded.port))
        .await
        .unwrap();
}

#[tokio::test]
async fn mqtt_over_tls_is_verified_against_the_profiles_ca() {
    let broker = Guarded::mosquitto_tls().await;
    let ca = broker.dir().join("ca.crt");
    let (ca, port) = (ca.display(), broker.port);
    let s = session();
    let created = s
        .execute(&format!("CREATE CONNECTION PROFILE tls WITH (connector = 'mqtt', url = 'mqtts://localhost:{port}', 'tls.ca' = '{ca}')"))
        .await
        .unwrap();
    assert!(
        created[0].warnings.iter().any(|w| w
            .message
            .starts_with(&format!("connect: connected to localhost:{port}"))),
        "{:?}",
        created[0].warnings
    );
    // The CA inline works too.
    let pem = std::fs::read_to_string(broker.dir().join("ca.crt")).unwrap();
    s.execute(&format!("CREATE CONNECTION PROFILE inline WITH (connector = 'mqtt', url = 'mqtts://127.0.0.1:{port}', 'tls.ca' = '{pem}')"))
        .await
        .unwrap();
    // Without the CA the broker's certificate is not trusted.
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE untrusted WITH (connector = 'mqtt', url = 'mqtts://localhost:{port}')")).await;
    assert!(
        e.contains("failed at stage 'connect' [TLS_FAILED]") && e.contains("UnknownIssuer"),
        "{e}"
    );
    // TLS to a plain MQTT port.
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE plain WITH (connector = 'mqtt', url = 'mqtts://127.0.0.1:1883', 'tls.ca' = '{ca}')")).await;
    assert!(e.contains("[TLS_FAILED]"), "{e}");
    // A CA file that is not there.
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE missing WITH (connector = 'mqtt', url = 'mqtts://localhost:{port}', 'tls.ca' = '/no/such/ca.pem')")).await;
    assert!(
        e.contains(
            "failed at stage 'resolve' [NOT_FOUND]: option 'tls.ca': cannot read '/no/such/ca.pem'"
        ),
        "{e}"
    );
}

#[tokio::test]
async fn nats_streams_and_subjects_against_the_local_server() {
    let client = async_nats::connect("nats://127.0.0.1:4222")
        .await
        .unwrap_or_else(|e| panic!("is nats-server (with -js) running on 127.0.0.1:4222? {e}"));
    let js = async_nats::jetstream::new(client);
    let stream = format!("TRIBUTARY_TEST_{}", std::process::id());
    let subject = format!("tributary.test.{}", std::process::id());
    let _ = js.delete_stream(&stream).await;
    js.create_stream(async_nats::jetstream::stream::Config {
        name: stream.clone(),
        subjects: vec![format!("{subject}.>")],
        ..Default::default()
    })
    .await
    .unwrap();
    for payload in [r#"{"id": 1}"#, r#"{"id": 2}"#, "not json"] {
        js.publish(format!("{subject}.orders"), payload.into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let s = session();
    s.execute(
        "CREATE CONNECTION PROFILE n WITH (connector = 'nats', servers = 'nats://127.0.0.1:4222')",
    )
    .await
    .unwrap();
    let listed = s.execute("SHOW TOPICS IN PROFILE n").await.unwrap();
    assert!(
        rows(&listed[0]).contains(&format!("{stream} stream")),
        "{:?}",
        rows(&listed[0])
    );
    s.execute(&format!("CREATE TABLE orders (id BIGINT) WITH (connector = 'nats', connection_profile = 'n', type = 'source', stream = '{stream}', format = 'json')"))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE orders").await.unwrap();
    assert_eq!(rows(&t[0]), ["1", "2"]);
    assert_a_message_was_undecodable(&t[0]);
    // A misspelled stream.
    s.execute(&format!("CREATE TABLE typo (id BIGINT) WITH (connector = 'nats', connection_profile = 'n', type = 'source', stream = '{stream}X', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE typo").await;
    assert!(
        e.contains("failed at stage 'locate' [NOT_FOUND]")
            && e.contains(&format!("Did you mean '{stream}'?")),
        "{e}"
    );
    // A core subject nobody publishes to.
    s.execute("CREATE TABLE quiet (id BIGINT) WITH (connector = 'nats', connection_profile = 'n', type = 'source', subject = 'tributary.quiet', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE quiet TIMEOUT '300 milliseconds'").await;
    assert!(
        e.contains("[EMPTY]")
            && e.contains("Core NATS delivers only messages published while subscribed"),
        "{e}"
    );
    // Refused, and credentials on a server that requires them.
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE off WITH (connector = 'nats', servers = 'nats://127.0.0.1:{port}')")).await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    // A first node down does not fail a cluster whose second node answers.
    s.execute(&format!("CREATE CONNECTION PROFILE pair WITH (connector = 'nats', servers = 'nats://127.0.0.1:{port},nats://127.0.0.1:4222')"))
        .await
        .unwrap();
    // A port that accepts but speaks another protocol (HTTP here) is not 'refused'.
    let e = error_of(&s, "CREATE CONNECTION PROFILE http WITH (connector = 'nats', servers = 'nats://127.0.0.1:15672')").await;
    assert!(
        e.contains("failed at stage 'connect' [BAD_RESPONSE]") && e.contains("did not speak NATS"),
        "{e}"
    );
    let e = error_of(&s, "CREATE CONNECTION PROFILE nowhere WITH (connector = 'nats', servers = 'nats://no-such-host.invalid:4222')").await;
    assert!(e.contains("[DNS_UNRESOLVED]"), "{e}");
    let guarded = Guarded::nats("svc", "right-pass").await;
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE wrong WITH (connector = 'nats', servers = 'nats://127.0.0.1:{}', 'auth.type' = 'credentials', 'auth.username' = 'svc', 'auth.password' = 'wrong-pass')", guarded.port)).await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]") && !e.contains("wrong-pass"),
        "{e}"
    );
    s.execute(&format!("CREATE CONNECTION PROFILE right WITH (connector = 'nats', servers = 'nats://127.0.0.1:{}', 'auth.type' = 'credentials', 'auth.username' = 'svc', 'auth.password' = 'right-pass')", guarded.port))
        .await
        .unwrap();
    js.delete_stream(&stream).await.unwrap();
}

/// The local RabbitMQ's management API (enabled by .ci/run), as guest.
pub(crate) async fn rabbitmq_api(
    method: reqwest::Method,
    path: &str,
    body: serde_json::Value,
) -> String {
    let response = reqwest::Client::new()
        .request(method, format!("http://127.0.0.1:15672/api/{path}"))
        .basic_auth("guest", Some("guest"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap_or_else(|e| {
            panic!(
                "is RabbitMQ running with the rabbitmq_management plugin on 127.0.0.1:15672? {e}"
            )
        });
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{path}: {status} {text}");
    text
}

/// A RabbitMQ stream of the test's own on the local node, holding `messages` (published
/// through the default exchange, as an AMQP 0-9-1 client would).
pub(crate) async fn rabbitmq_stream(name: &str, messages: &[&str]) {
    use reqwest::Method;
    let _ = reqwest::Client::new()
        .delete(format!("http://127.0.0.1:15672/api/queues/%2F/{name}"))
        .basic_auth("guest", Some("guest"))
        .send()
        .await;
    rabbitmq_api(
        Method::PUT,
        &format!("queues/%2F/{name}"),
        serde_json::json!({"durable": true, "arguments": {"x-queue-type": "stream"}}),
    )
    .await;
    for m in messages {
        let routed = rabbitmq_api(
            Method::POST,
            "exchanges/%2F/amq.default/publish",
            serde_json::json!({"properties": {}, "routing_key": name, "payload": m, "payload_encoding": "string"}),
        )
        .await;
        assert!(routed.contains("true"), "{routed}");
    }
}

#[tokio::test]
async fn rabbitmq_streams_connect_authenticate_and_deliver() {
    let stream = format!("tributary-test-orders-{}", std::process::id());
    let empty = format!("tributary-test-empty-{}", std::process::id());
    rabbitmq_stream(
        &stream,
        &[
            r#"{"id": 1, "name": "a"}"#,
            r#"{"id": "bad"}"#,
            r#"{"id": 3, "name": "c"}"#,
        ],
    )
    .await;
    rabbitmq_stream(&empty, &[]).await;
    let s = session();
    let created = s
        .execute("CREATE CONNECTION PROFILE r WITH (connector = 'rabbitmq', host = '127.0.0.1')")
        .await
        .unwrap();
    assert!(
        created[0].warnings.iter().any(|w| w
            .message
            .starts_with("authenticate: user 'guest' opened virtual host '/'")),
        "{:?}",
        created[0].warnings
    );
    // Completion lists the streams (through the management API).
    let listed = s.execute("SHOW TOPICS IN PROFILE r").await.unwrap();
    assert!(
        rows(&listed[0]).contains(&format!("{stream} stream")),
        "{:?}",
        rows(&listed[0])
    );
    // From the first offset: decoded rows, and the bad message explained.
    s.execute(&format!("CREATE TABLE orders (id BIGINT, name TEXT) WITH (connector = 'rabbitmq', connection_profile = 'r', stream = '{stream}', type = 'source', 'source.offset' = 'first', format = 'json')"))
        .await
        .unwrap();
    let t = s
        .execute("TEST TABLE orders LIMIT 3 TIMEOUT '10 seconds'")
        .await
        .unwrap();
    assert_eq!(rows(&t[0]), ["1 a", "3 c"]);
    assert_a_message_was_undecodable(&t[0]);
    // From 'next' nothing arrives, and the message says why.
    s.execute(&format!("CREATE TABLE fresh (id BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'r', stream = '{stream}', type = 'source', 'source.offset' = 'next', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE fresh TIMEOUT '1 second'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]")
            && e.contains("Offset 'next' reads only messages published after the test subscribed"),
        "{e}"
    );
    // An empty stream.
    s.execute(&format!("CREATE TABLE nothing (id BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'r', stream = '{empty}', type = 'source', 'source.offset' = 'first', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE nothing TIMEOUT '1 second'").await;
    assert!(
        e.contains("[EMPTY]") && e.contains("The stream is empty"),
        "{e}"
    );
    // A misspelled stream.
    s.execute(&format!("CREATE TABLE typo (id BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'r', stream = '{stream}x', type = 'source', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE typo").await;
    assert!(
        e.contains(&format!(
            "failed at stage 'locate' [NOT_FOUND]: stream '{stream}x' does not exist in virtual host '/'"
        )) && e.contains(&format!("Did you mean '{stream}'?")),
        "{e}"
    );
    // Wrong password: nothing stored, nothing printed back.
    let e = error_of(&s, "CREATE CONNECTION PROFILE wrong WITH (connector = 'rabbitmq', host = '127.0.0.1', username = 'guest', password = 'wrong-pass')").await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]") && !e.contains("wrong-pass"),
        "{e}"
    );
    assert!(s.store().profile_by_name("wrong").unwrap().is_none());
    // A virtual host that does not exist.
    let e = error_of(&s, "CREATE CONNECTION PROFILE vhost WITH (connector = 'rabbitmq', host = '127.0.0.1', virtual_host = 'no-such-vhost')").await;
    assert!(
        e.contains("failed at stage 'authenticate' [PERMISSION_DENIED]")
            && e.contains("Check 'virtual_host' ('no-such-vhost')"),
        "{e}"
    );
    // Refused and unknown hosts.
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE off WITH (connector = 'rabbitmq', host = '127.0.0.1', port = {port})")).await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    let e = error_of(&s, "CREATE CONNECTION PROFILE nowhere WITH (connector = 'rabbitmq', host = 'no-such-host.invalid')").await;
    assert!(
        e.contains("failed at stage 'resolve' [DNS_UNRESOLVED]"),
        "{e}"
    );
    // The AMQP port is not the stream protocol's.
    let e = error_of(&s, "CREATE CONNECTION PROFILE amqp WITH (connector = 'rabbitmq', host = '127.0.0.1', port = 5672)").await;
    assert!(
        e.contains("[BAD_RESPONSE]") && e.contains("not AMQP's (5672)"),
        "{e}"
    );
    // TLS profiles are checked, and say that they were not live-tested.
    let tls = s.execute("CREATE CONNECTION PROFILE tls WITH (connector = 'rabbitmq', host = '127.0.0.1', 'tls_config.enabled' = true)").await.unwrap();
    assert!(
        tls[0].warnings.iter().any(|w| w
            .message
            .contains("TLS stream connections are not live-tested yet")),
        "{:?}",
        tls[0].warnings
    );
    for name in [&stream, &empty] {
        rabbitmq_api(
            reqwest::Method::DELETE,
            &format!("queues/%2F/{name}"),
            serde_json::Value::Null,
        )
        .await;
    }
}

/// The message the WebSocket peer waits for before it sends. Subscription messages are
/// sensitive, so this value joins the process-wide known secrets: it must not be a word
/// that other tests' expected diagnostics contain ("subscribed" would be masked).
pub(crate) const WEBSOCKET_SUBSCRIPTION: &str = "subscribe feed 7f3a";

/// A WebSocket server on 127.0.0.1: `/feed` wants `Authorization: Bearer sesame` and,
/// after the text message [`WEBSOCKET_SUBSCRIPTION`], sends three messages (one not
/// JSON); `/closer` closes at once with a policy violation; other paths are 404s.
#[allow(clippy::result_large_err)] // The handshake callback's error type is tungstenite's.
pub(crate) async fn websocket_server() -> String {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
    use tokio_tungstenite::tungstenite::http::StatusCode;
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut path = String::new();
                let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
                    path = req.uri().path().to_string();
                    let refuse = |status: StatusCode| {
                        let mut r = ErrorResponse::new(None);
                        *r.status_mut() = status;
                        Err(r)
                    };
                    match req.uri().path() {
                        "/feed" => {
                            let auth = req.headers().get("authorization");
                            if auth.and_then(|v| v.to_str().ok()) == Some("Bearer sesame") {
                                Ok(resp)
                            } else {
                                refuse(StatusCode::UNAUTHORIZED)
                            }
                        }
                        "/closer" => Ok(resp),
                        _ => refuse(StatusCode::NOT_FOUND),
                    }
                };
                let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(tcp, check).await else {
                    return;
                };
                if path == "/closer" {
                    let _ = ws
                        .close(Some(CloseFrame {
                            code: CloseCode::Policy,
                            reason: "no subscription allowed".into(),
                        }))
                        .await;
                    return;
                }
                while let Some(Ok(m)) = ws.next().await {
                    if m == Message::text(WEBSOCKET_SUBSCRIPTION) {
                        for out in [r#"{"id": 1}"#, "not json", r#"{"id": 3}"#] {
                            ws.send(Message::text(out)).await.unwrap();
                        }
                    }
                }
            });
        }
    });
    format!("ws://{address}")
}

#[tokio::test]
async fn websocket_tables_handshake_subscribe_and_read() {
    let base = websocket_server().await;
    let s = session();
    s.execute(&format!("CREATE TABLE feed (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer sesame', 'subscription_messages.0' = '{WEBSOCKET_SUBSCRIPTION}', format = 'json')"))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE feed LIMIT 3").await.unwrap();
    assert_eq!(rows(&t[0]), ["1", "3"]);
    assert_a_message_was_undecodable(&t[0]);
    // Without a subscription nothing comes, and the message says why.
    s.execute(&format!("CREATE TABLE silent (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer sesame', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE silent TIMEOUT '500 milliseconds'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]")
            && e.contains("send data only after a subscription"),
        "{e}"
    );
    // A wrong token is refused with 401, and not printed back.
    s.execute(&format!("CREATE TABLE denied (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', headers = 'Authorization: Bearer wrong-token', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE denied").await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]")
            && e.contains("401")
            && !e.contains("wrong-token"),
        "{e}"
    );
    // A wrong path.
    s.execute(&format!("CREATE TABLE lost (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/nowhere', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE lost").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // The server closes at once: its code and reason are shown.
    s.execute(&format!("CREATE TABLE closer (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/closer', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE closer").await;
    assert!(
        e.contains("[EMPTY]")
            && e.contains("closed the connection with code 1008 'no subscription allowed'"),
        "{e}"
    );
    // A plain HTTP endpoint does not upgrade.
    let http = serve(Router::new().route("/", get(|| async { "plain" }))).await;
    let plain = http.replace("http://", "ws://");
    s.execute(&format!("CREATE TABLE plain (id BIGINT) WITH (connector = 'websocket', endpoint = '{plain}/', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE plain").await;
    assert!(
        e.contains("[BAD_RESPONSE]") && e.contains("without upgrading to a WebSocket"),
        "{e}"
    );
    // Refused and unknown hosts.
    let port = closed_port();
    s.execute(&format!("CREATE TABLE off (id BIGINT) WITH (connector = 'websocket', endpoint = 'ws://127.0.0.1:{port}/feed', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE off").await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    s.execute("CREATE TABLE nowhere (id BIGINT) WITH (connector = 'websocket', endpoint = 'ws://no-such-host.invalid/feed', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE nowhere").await;
    assert!(
        e.contains("failed at stage 'resolve' [DNS_UNRESOLVED]"),
        "{e}"
    );
}

#[tokio::test]
async fn kafka_profiles_check_their_schema_registry() {
    use tributary_registry::testing::FakeRegistry;
    let mock = mock_cluster("orders", &[]).await;
    let servers = mock.bootstrap_servers();
    let registry = FakeRegistry::start().await.unwrap();
    registry.require_credentials("svc", "right-pass");
    let endpoint = registry.endpoint();
    let s = session();
    let created = s
        .execute(&format!("CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '{servers}', 'schema_registry.endpoint' = '{endpoint}', 'schema_registry.api_key' = 'svc', 'schema_registry.api_secret' = 'right-pass')"))
        .await
        .unwrap();
    assert!(
        created[0]
            .warnings
            .iter()
            .any(|w| w.message.starts_with(&format!(
                "authenticate: the schema registry at {endpoint} answered: 0 subject(s)"
            ))),
        "{:?}",
        created[0].warnings
    );
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE wrong WITH (connector = 'kafka', bootstrap_servers = '{servers}', 'schema_registry.endpoint' = '{endpoint}', 'schema_registry.api_key' = 'svc', 'schema_registry.api_secret' = 'wrong-pass')")).await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]")
            && e.contains("schema registry")
            && !e.contains("wrong-pass"),
        "{e}"
    );
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE dead WITH (connector = 'kafka', bootstrap_servers = '{servers}', 'schema_registry.endpoint' = 'http://127.0.0.1:{port}')")).await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]") && e.contains("schema registry"),
        "{e}"
    );
    assert!(s.store().profile_by_name("wrong").unwrap().is_none());
}

#[tokio::test]
async fn confluent_profiles_speak_sasl_ssl_and_tables_read_like_kafka() {
    let mock = mock_cluster("orders", &[r#"{"id": 7}"#]).await;
    let servers = mock.bootstrap_servers();
    let s = session();
    // Stored untested first.
    s.execute(&format!("CREATE CONNECTION PROFILE cc WITH (connector = 'confluent', bootstrap_servers = '{servers}', key = 'API-KEY', secret = 'api-secret-value', validate = false)"))
        .await
        .unwrap();
    // A Confluent profile insists on TLS. A server that answers in plaintext (as any
    // non-TLS port would; the mock cluster itself sometimes waits out the timeout
    // instead) fails the handshake, which is named, and neither key nor secret is printed.
    let plain = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain_port = plain.local_addr().unwrap().port();
    let answering = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        while let Ok((mut socket, _)) = plain.accept().await {
            let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
        }
    });
    s.execute(&format!("CREATE CONNECTION PROFILE cc_plain WITH (connector = 'confluent', bootstrap_servers = '127.0.0.1:{plain_port}', key = 'API-KEY', secret = 'api-secret-value', validate = false)"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST CONNECTION PROFILE cc_plain TIMEOUT '5 seconds'").await;
    // librdkafka words the failure either "SSL handshake failed" or with OpenSSL's own
    // reason ("SSL routines::wrong version number").
    assert!(
        e.contains("failed at stage 'authenticate' [TLS_FAILED]")
            && e.contains("SSL")
            && !e.contains("api-secret-value"),
        "{e}"
    );
    answering.abort();
    // A table may override the client's settings (as any librdkafka
    // property), which reaches the plaintext cluster, reads and decodes.
    s.execute("CREATE TABLE orders (id BIGINT) WITH (connector = 'confluent', connection_profile = 'cc', topic = 'orders', type = 'source', 'source.offset' = 'earliest', format = 'json', client_configs = 'security.protocol=plaintext')")
        .await
        .unwrap();
    let t = s
        .execute("TEST TABLE orders LIMIT 1 TIMEOUT '10 seconds'")
        .await
        .unwrap();
    assert_eq!(rows(&t[0]), ["7"]);
    // Unknown host and refused port, as for kafka.
    let port = closed_port();
    let e = error_of(&s, &format!("CREATE CONNECTION PROFILE off WITH (connector = 'confluent', bootstrap_servers = '127.0.0.1:{port}', key = 'k', secret = 's')")).await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    let e = error_of(&s, "CREATE CONNECTION PROFILE nowhere WITH (connector = 'confluent', bootstrap_servers = 'no-such-host.invalid:9092', key = 'k', secret = 's')").await;
    assert!(
        e.contains("failed at stage 'resolve' [DNS_UNRESOLVED]"),
        "{e}"
    );
}

#[tokio::test]
async fn progress_reports_each_event_as_it_happens() {
    use std::sync::Mutex;
    use tributary_sql::TestEvent;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let s = session().with_progress(Arc::new(move |e: &TestEvent| {
        sink.lock()
            .unwrap()
            .push(format!("{} {}", e.stage, e.outcome));
    }));
    let port = closed_port();
    s.execute(&format!("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}', validate = false)"))
        .await
        .unwrap();
    assert!(seen.lock().unwrap().is_empty(), "nothing was tested yet");
    let _ = s.execute("TEST CONNECTION PROFILE r").await;
    assert_eq!(*seen.lock().unwrap(), ["resolve passed", "connect failed"]);
    // Creating with a test reports too.
    seen.lock().unwrap().clear();
    s.execute("CREATE CONNECTION PROFILE ok WITH (connector = 'redis', address = 'redis://127.0.0.1:6379')")
        .await
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["resolve passed", "connect passed", "authenticate passed"]
    );
}
