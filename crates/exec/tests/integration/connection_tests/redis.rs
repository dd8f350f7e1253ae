//! Redis profiles and tables against the local Redis on 127.0.0.1:6379 and a
//! password-protected redis-server of the test's own; and a server that never answers.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::guarded::Guarded;
use super::*;
use std::time::Duration;

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
