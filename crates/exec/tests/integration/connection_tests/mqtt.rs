//! MQTT profiles and tables against the local Mosquitto, and brokers of the test's own
//! with credentials and with TLS verified against the profile's CA.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::guarded::Guarded;
use super::*;
use std::time::Duration;

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
