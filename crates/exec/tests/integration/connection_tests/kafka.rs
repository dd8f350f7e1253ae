//! Kafka and Confluent profiles and tables against librdkafka's mock cluster, and the
//! schema registry check of a Kafka profile.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use std::time::Duration;

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
