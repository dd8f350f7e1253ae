//! INSERT INTO for real: every sink written, then read back from the system itself
//! (files, Kafka, NATS, MQTT, Redis, an HTTP endpoint).

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{error, kafka_session, session, table};
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::Session;

#[tokio::test]
async fn inserts_write_files_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // Writing files needs the session's leave, as COPY ... TO does.
    let s = session().allow_file_writes();
    s.execute(&format!(
        "CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '5'); \
         CREATE TABLE sink_dir (counter BIGINT, doubled BIGINT) WITH (connector = 'filesystem', \
         type = 'sink', path = '{out}', format = 'json', 'filename.prefix' = 'ticks'); \
         CREATE TABLE back_dir (counter BIGINT, doubled BIGINT) WITH (connector = 'filesystem', \
         type = 'source', path = '{out}', format = 'json'); \
         CREATE TABLE sink_file (value TEXT) WITH (connector = 'single_file', type = 'sink', \
         path = '{file}', format = 'raw_string'); \
         CREATE TABLE back_file (value TEXT) WITH (connector = 'single_file', type = 'source', \
         path = '{file}', format = 'raw_string')",
        out = out.display(),
        file = dir.path().join("lines.txt").display(),
    ))
    .await
    .unwrap();
    assert!(
        table(
            &s,
            "INSERT INTO sink_dir SELECT counter, counter * 2 FROM counted"
        )
        .await
        .contains("| 5     |")
    );
    // One finished file, named by the table's prefix; no in-progress file is left.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert!(
        names[0].starts_with("ticks-") && names[0].ends_with("-0.json"),
        "{names:?}"
    );
    assert!(
        table(&s, "SELECT sum(doubled) AS s FROM back_dir")
            .await
            .contains("| 20 |")
    );

    // A session without that leave refuses before writing anything.
    let strict = session();
    strict
        .execute(&format!(
            "CREATE TABLE sink_file (value TEXT) WITH (connector = 'single_file', type = 'sink', \
             path = '{}', format = 'raw_string')",
            dir.path().join("lines.txt").display()
        ))
        .await
        .unwrap();
    let e = error(&strict, "INSERT INTO sink_file VALUES ('x')").await;
    assert!(
        e.contains("INSERT INTO table 'sink_file' would write files on this machine")
            && e.contains("--allow-file-writes"),
        "{e}"
    );
    assert!(!dir.path().join("lines.txt").exists());

    // A single file is appended to, INSERT after INSERT.
    table(&s, "INSERT INTO sink_file VALUES ('a'), ('b')").await;
    table(&s, "INSERT INTO sink_file VALUES ('c')").await;
    assert_eq!(
        table(&s, "SELECT value AS v FROM back_file").await,
        "+---+\n| v |\n+---+\n| a |\n| b |\n| c |\n+---+"
    );
}

#[tokio::test]
async fn kafka_inserts_are_delivered_with_keys_and_in_transactions() {
    let mock = crate::connection_tests::mock_cluster("out", &[]).await;
    mock.create_topic("keyed", 1, 1).unwrap();
    let s = kafka_session(&mock.bootstrap_servers()).await;
    s.execute(
        "CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '5'); \
         CREATE TABLE keyed_sink (id BIGINT, name TEXT) WITH (connector = 'kafka', connection_profile = 'k', \
         topic = 'keyed', type = 'sink', 'sink.key_field' = 'name', format = 'json'); \
         CREATE TABLE keyed_back (id BIGINT, name TEXT, k BYTEA METADATA FROM 'key') WITH (connector = 'kafka', \
         connection_profile = 'k', topic = 'keyed', type = 'source', 'source.offset' = 'earliest', format = 'json'); \
         CREATE TABLE txn_sink (n BIGINT, q BIGINT) WITH (connector = 'kafka', connection_profile = 'k', \
         topic = 'out', type = 'sink', 'sink.commit_mode' = 'exactly_once', format = 'json'); \
         CREATE TABLE txn_back (n BIGINT, q BIGINT) WITH (connector = 'kafka', connection_profile = 'k', \
         topic = 'out', type = 'source', 'source.offset' = 'earliest', 'source.read_mode' = 'read_committed', \
         format = 'json')",
    )
    .await
    .unwrap();
    // At least once, keyed by a column.
    assert!(
        table(&s, "INSERT INTO keyed_sink VALUES (1, 'a'), (2, 'b')")
            .await
            .contains("| 2     |")
    );
    let rows = table(
        &s,
        "SELECT id, name, arrow_cast(k, 'Utf8') AS key FROM (SELECT * FROM keyed_back LIMIT 2) ORDER BY id",
    )
    .await;
    assert!(
        rows.contains("| 1  | a    | a   |") && rows.contains("| 2  | b    | b   |"),
        "{rows}"
    );

    // Exactly once: an INSERT that fails after writing its first batch aborts its
    // transaction; one that finishes commits, and all its rows arrive. (librdkafka's mock
    // cluster in this build keeps no transaction markers, so a read_committed reader
    // cannot be shown to skip the aborted rows here: it sees them too.)
    s.execute("SET datafusion.execution.batch_size = 2")
        .await
        .unwrap();
    let e = error(
        &s,
        "INSERT INTO txn_sink SELECT counter, 10 / (counter - 3) FROM counted",
    )
    .await;
    assert!(e.to_lowercase().contains("divide by zero"), "{e}");
    assert!(
        table(
            &s,
            "INSERT INTO txn_sink SELECT counter, counter AS q FROM counted"
        )
        .await
        .contains("| 5     |")
    );
    s.execute("SET preview.timeout = '3 seconds'")
        .await
        .unwrap();
    let seen = table(
        &s,
        "SELECT count(*) FILTER (WHERE q >= 0) AS n, sum(q) FILTER (WHERE q >= 0) AS s FROM txn_back",
    )
    .await;
    assert!(
        seen.contains("| 5 | 10 |"),
        "the committed INSERT arrives whole: {seen}"
    );
}

#[tokio::test]
async fn nats_and_mqtt_inserts_are_published() {
    use futures::StreamExt;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    let subject = format!("tributary.write.{}", std::process::id());
    let topic = format!("tributary/write/{}", std::process::id());
    s.execute(&format!(
        "CREATE CONNECTION PROFILE n WITH (connector = 'nats', servers = 'nats://127.0.0.1:4222', validate = false); \
         CREATE CONNECTION PROFILE m WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:1883', validate = false); \
         CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '3'); \
         CREATE TABLE to_nats (counter BIGINT) WITH (connector = 'nats', connection_profile = 'n', \
         type = 'sink', subject = '{subject}', format = 'json'); \
         CREATE TABLE to_mqtt (counter BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', \
         type = 'sink', topic = '{topic}', qos = 'at_least_once', 'sink.retain' = 'false', format = 'json'); \
         CREATE TABLE from_mqtt (counter BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', \
         type = 'source', topic = '{topic}', format = 'json')"
    ))
    .await
    .unwrap();
    let client = async_nats::connect("nats://127.0.0.1:4222").await.unwrap();
    let mut subscription = client.subscribe(subject.clone()).await.unwrap();
    client.flush().await.unwrap();
    assert!(
        table(&s, "INSERT INTO to_nats SELECT counter FROM counted")
            .await
            .contains("| 3     |")
    );
    let mut got = Vec::new();
    while got.len() < 3 {
        let m = tokio::time::timeout(std::time::Duration::from_secs(5), subscription.next())
            .await
            .expect("three messages within 5 s")
            .unwrap();
        got.push(String::from_utf8(m.payload.to_vec()).unwrap());
    }
    assert_eq!(
        got,
        [r#"{"counter":0}"#, r#"{"counter":1}"#, r#"{"counter":2}"#]
    );

    // MQTT: a reader subscribed while the INSERT publishes, read through a table.
    let s = Arc::new(s);
    let reader = {
        let s = s.clone();
        tokio::spawn(async move {
            table(
                &s,
                "SELECT sum(counter) AS s FROM (SELECT * FROM from_mqtt LIMIT 3)",
            )
            .await
        })
    };
    // Publish until the reader has its three rows (it may subscribe after a first INSERT).
    let mut done = None;
    for _ in 0..50 {
        assert!(
            table(&s, "INSERT INTO to_mqtt SELECT 1 AS counter")
                .await
                .contains("| 1     |")
        );
        if reader.is_finished() {
            done = Some(reader.await.unwrap());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let done = done.expect("the reader got three published rows");
    assert!(done.contains("| 3 |"), "{done}");
}

#[tokio::test]
async fn redis_inserts_write_strings_lists_and_hashes() {
    let prefix = format!("tributary:write:{}:", std::process::id());
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:6379', validate = false); \
         CREATE TABLE strings (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'r', \
         type = 'sink', target = 'string', 'target.key_prefix' = '{prefix}s:', 'target.key_column' = id, \
         'target.ttl_secs' = '60', format = 'json'); \
         CREATE TABLE lists (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'r', \
         type = 'sink', target = 'list', 'target.key_prefix' = '{prefix}l:', 'target.key_column' = id, \
         'target.operation' = 'append', 'target.max_length' = '2', format = 'json'); \
         CREATE TABLE hashes (id TEXT NOT NULL, f TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', \
         connection_profile = 'r', type = 'sink', target = 'hash', 'target.key_prefix' = '{prefix}h:', \
         'target.key_column' = id, 'target.field_column' = f, format = 'json')"
    ))
    .await
    .unwrap();
    table(&s, "INSERT INTO strings VALUES ('a', 1), ('b', 2)").await;
    table(&s, "INSERT INTO lists VALUES ('x', 1), ('x', 2), ('x', 3)").await;
    table(
        &s,
        "INSERT INTO hashes VALUES ('k', 'one', 1), ('k', 'two', 2)",
    )
    .await;
    let client = redis::Client::open("redis://127.0.0.1:6379").unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let a: String = redis::cmd("GET")
        .arg(format!("{prefix}s:a"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(a, r#"{"id":"a","v":1}"#);
    let ttl: i64 = redis::cmd("TTL")
        .arg(format!("{prefix}s:b"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((1..=60).contains(&ttl), "{ttl}");
    let list: Vec<String> = redis::cmd("LRANGE")
        .arg(format!("{prefix}l:x"))
        .arg(0)
        .arg(-1)
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        list,
        [r#"{"id":"x","v":2}"#, r#"{"id":"x","v":3}"#],
        "trimmed to the last two"
    );
    let two: String = redis::cmd("HGET")
        .arg(format!("{prefix}h:k"))
        .arg("two")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(two, r#"{"id":"k","f":"two","v":2}"#);
    let _: () = redis::cmd("DEL")
        .arg(format!("{prefix}s:a"))
        .arg(format!("{prefix}s:b"))
        .arg(format!("{prefix}l:x"))
        .arg(format!("{prefix}h:k"))
        .query_async(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn webhook_inserts_post_each_row_with_the_tables_headers() {
    use axum::Router;
    use axum::http::HeaderMap;
    use axum::routing::post;
    use std::sync::Mutex;
    let received: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = received.clone();
    let app = Router::new().route(
        "/hook",
        post(move |headers: HeaderMap, body: String| {
            let sink = sink.clone();
            async move {
                if headers.get("x-token").and_then(|v| v.to_str().ok()) != Some("t0k") {
                    return axum::http::StatusCode::UNAUTHORIZED;
                }
                sink.lock().unwrap().push(body);
                axum::http::StatusCode::OK
            }
        }),
    );
    let base = crate::connection_tests::serve(app).await;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE TABLE hook (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/hook', \
         headers = 'X-Token: t0k', format = 'json'); \
         CREATE TABLE denied (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/hook', \
         headers = 'X-Token: wrong', format = 'json')"
    ))
    .await
    .unwrap();
    assert!(
        table(&s, "INSERT INTO hook VALUES (1), (2), (3)")
            .await
            .contains("| 3     |")
    );
    let mut got = received.lock().unwrap().clone();
    got.sort();
    assert_eq!(got, [r#"{"id":1}"#, r#"{"id":2}"#, r#"{"id":3}"#]);
    let e = error(&s, "INSERT INTO denied VALUES (4)").await;
    assert!(
        e.contains("cannot write table 'denied': the endpoint answered 401"),
        "{e}"
    );
}

#[tokio::test]
async fn an_insert_from_an_endless_source_runs_until_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let s = session().allow_file_writes();
    s.execute(&format!(
        "CREATE TABLE endless WITH (connector = 'impulse', event_rate = '1000'); \
         CREATE TABLE out (counter BIGINT) WITH (connector = 'single_file', type = 'sink', \
         path = '{}', format = 'json')",
        dir.path().join("out.json").display()
    ))
    .await
    .unwrap();
    // Not refused: it streams, so it is still running when it is dropped.
    let running = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        s.execute("INSERT INTO out SELECT counter FROM endless"),
    )
    .await;
    assert!(
        running.is_err(),
        "the INSERT ended: {:?}",
        running.map(|r| r.is_ok())
    );
    // What it wrote before it was cancelled is in the file, whole lines only.
    let text = std::fs::read_to_string(dir.path().join("out.json")).unwrap();
    assert!(text.lines().count() >= 10, "{} lines", text.lines().count());
    assert!(
        text.ends_with('\n') && text.starts_with(r#"{"counter":0}"#),
        "{text}"
    );
}

#[tokio::test]
async fn inserts_publish_to_rabbitmq_streams_and_read_back() {
    let stream = format!("tributary-write-{}", std::process::id());
    crate::connection_tests::rabbitmq_stream(&stream, &[]).await;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE CONNECTION PROFILE r WITH (connector = 'rabbitmq', host = '127.0.0.1', validate = false); \
         CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '2500'); \
         CREATE TABLE published (id BIGINT, note TEXT) WITH (connector = 'rabbitmq', \
         connection_profile = 'r', stream = '{stream}', type = 'sink', format = 'json'); \
         CREATE TABLE back (id BIGINT, note TEXT) WITH (connector = 'rabbitmq', \
         connection_profile = 'r', stream = '{stream}', type = 'source', \
         'source.offset' = 'first', format = 'json')"
    ))
    .await
    .unwrap();
    let described = table(&s, "SHOW TABLES").await;
    assert!(described.contains("RabbitmqStreamSink<"), "{described}");
    // Each batch is confirmed by the node before the INSERT goes on.
    assert!(
        table(
            &s,
            "INSERT INTO published SELECT counter, 'n' || counter FROM counted"
        )
        .await
        .contains("| 2500  |")
    );
    s.execute("SET preview.max_rows = 2500").await.unwrap();
    let back = table(
        &s,
        "SELECT count(*) AS n, sum(id) AS s, min(note) AS first FROM back",
    )
    .await;
    assert!(back.contains("| 2500 | 3123750 | n0    |"), "{back}");

    // A stream that does not exist is refused at its stage, before anything is written.
    s.execute(
        "CREATE TABLE nowhere (id BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'r', \
         stream = 'tributary-no-such-stream', type = 'sink', format = 'json')",
    )
    .await
    .unwrap();
    let e = error(&s, "INSERT INTO nowhere SELECT counter FROM counted").await;
    assert!(
        e.contains("cannot write table 'nowhere'") && e.contains("NOT_FOUND"),
        "{e}"
    );
}

#[tokio::test]
async fn table_formats_refuse_writes_saying_what_to_do_instead() {
    let dir = tempfile::tempdir().unwrap();
    let lake = dir.path().join("lake");
    let s = Session::new(Arc::new(OverlayStore::in_memory())).allow_file_writes();
    s.execute(&format!(
        "CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '3'); \
         CREATE TABLE d (counter BIGINT) WITH (connector = 'delta', path = '{}', format = 'parquet'); \
         CREATE TABLE i (counter BIGINT) WITH (connector = 'iceberg', \
         'catalog.rest.url' = 'http://127.0.0.1:9', table_name = 't', format = 'parquet')",
        lake.display()
    ))
    .await
    .unwrap();
    for (table, format) in [("d", "Delta Lake"), ("i", "Iceberg")] {
        let e = error(
            &s,
            &format!("INSERT INTO {table} SELECT counter FROM counted"),
        )
        .await;
        assert!(
            e.contains(&format!("cannot write table '{table}'"))
                && e.contains("[UNSUPPORTED]")
                && e.contains(&format!("no {format} commit writer"))
                && e.contains("filesystem sink"),
            "{e}"
        );
    }
    assert!(!lake.exists(), "nothing was written");
}
