//! RabbitMQ stream profiles and tables against the local RabbitMQ (stream protocol on
//! 5552, management API on 15672, both enabled by .ci/run).

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;

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
