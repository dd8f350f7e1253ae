//! NATS profiles and tables against the local nats-server: JetStream streams, core
//! subjects, and a server of the test's own with credentials.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::guarded::Guarded;
use super::*;

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
