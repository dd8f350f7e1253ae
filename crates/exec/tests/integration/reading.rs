//! Queries that read sources for real: files (directories and single files, lines and
//! whole files, compression, virtual columns), Kafka, NATS, MQTT, RabbitMQ, SSE, polled
//! HTTP and WebSockets, against the real systems, and the diagnostics of what cannot be
//! read.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use datafusion::arrow::util::pretty::pretty_format_batches;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::{Output, Session};

/// An offline session over an in-memory catalog: local files are still read.
pub(crate) fn session() -> Session {
    Session::new(Arc::new(OverlayStore::in_memory())).offline()
}

/// The rows of the last statement of `sql`, as a pretty table.
pub(crate) async fn table(session: &Session, sql: &str) -> String {
    let results = session.execute(sql).await.unwrap_or_else(|e| panic!("{e}"));
    match &results.last().unwrap().output {
        Output::Rows { batches, .. } => pretty_format_batches(batches).unwrap().to_string(),
        other => panic!("expected rows, got {other:?}"),
    }
}

pub(crate) async fn error(session: &Session, sql: &str) -> String {
    session.execute(sql).await.unwrap_err().to_string()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_directory_is_read_with_its_virtual_columns() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("a.json"),
        "{\"id\": 1, \"name\": \"one\"}\n\n{\"id\": 2, \"name\": \"two\"}\r\n",
    );
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    write(
        &dir.path().join("sub/b.json"),
        "{\"id\": 3, \"name\": \"three\"}",
    );
    write(&dir.path().join("notes.txt"), "not json\n");
    let s = session();
    let create = format!(
        "CREATE TABLE people (id BIGINT NOT NULL, name TEXT, id10 BIGINT GENERATED ALWAYS AS (id * 10)) \
         WITH (connector = 'filesystem', type = 'source', path = '{}', format = 'json', \
         'source.regex_pattern' = '\\.json$')",
        dir.path().display()
    );
    s.execute(&create).await.unwrap();
    assert_eq!(
        table(&s, "SELECT * FROM people ORDER BY id").await,
        "+----+-------+------+\n\
         | id | name  | id10 |\n\
         +----+-------+------+\n\
         | 1  | one   | 10   |\n\
         | 2  | two   | 20   |\n\
         | 3  | three | 30   |\n\
         +----+-------+------+"
    );
    // A bounded source needs no LIMIT for an aggregate; LIMIT still stops it early.
    assert!(
        table(&s, "SELECT sum(id10) AS s FROM people")
            .await
            .contains("| 60 |")
    );
    let first = table(&s, "SELECT name FROM people LIMIT 1").await;
    assert_eq!(first.lines().count(), 5, "one row:\n{first}");
    // One stream reads the files in path order.
    s.execute("SET datafusion.execution.target_partitions = 1")
        .await
        .unwrap();
    assert_eq!(
        table(&s, "SELECT name FROM people LIMIT 1").await,
        "+------+\n| name |\n+------+\n| one  |\n+------+"
    );
}

#[tokio::test]
async fn a_directory_is_read_one_stream_per_file_under_one_bound() {
    let dir = tempfile::tempdir().unwrap();
    for f in 0..5 {
        let lines: Vec<String> = (0..100)
            .map(|i| format!(r#"{{"file": {f}, "n": {i}}}"#))
            .collect();
        write(&dir.path().join(format!("{f}.json")), &lines.join("\n"));
    }
    let s = session();
    s.execute(&format!(
        "CREATE TABLE parts (file INT NOT NULL, n INT NOT NULL) WITH (connector = 'filesystem', \
         type = 'source', path = '{}', format = 'json')",
        dir.path().display()
    ))
    .await
    .unwrap();
    for streams in [1, 3, 8] {
        s.execute(&format!(
            "SET datafusion.execution.target_partitions = {streams}"
        ))
        .await
        .unwrap();
        let plan = table(&s, "EXPLAIN SELECT n FROM parts").await;
        assert_eq!(
            plan.contains(&format!("partitions={streams}")),
            streams > 1,
            "{plan}"
        );
        assert!(
            table(
                &s,
                "SELECT count(*) AS rows, count(DISTINCT file) AS files, sum(n) AS s FROM parts"
            )
            .await
            .contains("| 500  | 5     | 24750 |"),
            "{streams} stream(s)"
        );
        let some = table(&s, "SELECT n FROM parts LIMIT 7").await;
        assert_eq!(some.lines().count(), 11, "seven rows:\n{some}");
    }
}

/// A record is judged by its whole row, whatever a query selects (issue 36): a column
/// the query does not name still fails the record, so counts agree with rows.
#[tokio::test]
async fn a_record_that_does_not_decode_fails_every_query_of_it() {
    let dir = tempfile::tempdir().unwrap();
    // `note` holds an object where the table says text; `n` and `tag` are fine.
    write(
        &dir.path().join("rows.json"),
        "{\"n\": 1, \"tag\": \"a\", \"note\": {\"not\": \"text\"}}\n{\"n\": 2, \"tag\": \"b\", \"note\": \"fine\"}",
    );
    let s = session();
    s.execute(&format!(
        "CREATE TABLE mixed (n BIGINT NOT NULL, tag TEXT, note TEXT NOT NULL, \
         n2 BIGINT GENERATED ALWAYS AS (n * 2)) WITH (connector = 'filesystem', \
         type = 'source', path = '{p}', format = 'json'); \
         CREATE TABLE mixed_dropped (n BIGINT NOT NULL, tag TEXT, note TEXT NOT NULL, \
         n2 BIGINT GENERATED ALWAYS AS (n * 2)) WITH (connector = 'filesystem', \
         type = 'source', path = '{p}', format = 'json', bad_data = 'drop')",
        p = dir.path().display()
    ))
    .await
    .unwrap();
    for sql in [
        "SELECT * FROM mixed",
        "SELECT tag, n2 FROM mixed",
        "SELECT count(*) AS c FROM mixed",
    ] {
        let e = error(&s, sql).await;
        assert!(e.contains("does not decode"), "{sql}: {e}");
    }
    // Dropped, the same record is gone from every query.
    assert_eq!(
        table(&s, "SELECT tag, n2 FROM mixed_dropped").await,
        "+-----+----+\n| tag | n2 |\n+-----+----+\n| b   | 4  |\n+-----+----+"
    );
    assert!(
        table(&s, "SELECT count(*) AS c FROM mixed_dropped")
            .await
            .contains("| 1 |")
    );
}

#[tokio::test]
async fn compressed_files_are_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"{\"n\": 1}\n{\"n\": 2}\n").unwrap();
    std::fs::write(dir.path().join("part.json.gz"), gz.finish().unwrap()).unwrap();
    let s = session();
    let create = format!(
        "CREATE TABLE nums (n BIGINT) WITH (connector = 'filesystem', type = 'source', \
         path = '{}', format = 'json', 'source.compression' = 'gzip')",
        dir.path().display()
    );
    s.execute(&create).await.unwrap();
    assert!(
        table(&s, "SELECT sum(n) AS s FROM nums")
            .await
            .contains("| 3 |")
    );
}

#[tokio::test]
async fn a_single_file_is_read_and_what_cannot_be_read_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.txt");
    write(&path, "alpha\nbeta\n");
    let s = session();
    s.execute(&format!(
        "CREATE TABLE lines (value TEXT) WITH (connector = 'single_file', path = '{}', \
         type = 'source', format = 'raw_string')",
        path.display()
    ))
    .await
    .unwrap();
    assert_eq!(
        table(&s, "SELECT upper(value) AS v FROM lines").await,
        "+-------+\n| v     |\n+-------+\n| ALPHA |\n| BETA  |\n+-------+"
    );
    std::fs::remove_file(&path).unwrap();
    let e = error(&s, "SELECT * FROM lines").await;
    assert!(
        e.contains("cannot read table 'lines': locate failed [NOT_FOUND]: file '")
            && e.contains("is not accessible"),
        "{e}"
    );

    // A line that is not the table's format fails the query, naming why and the fix.
    let bad = dir.path().join("bad.json");
    write(&bad, "{\"id\": 1}\nnot json\n");
    s.execute(&format!(
        "CREATE TABLE bad (id BIGINT) WITH (connector = 'single_file', path = '{}', \
         type = 'source', format = 'json')",
        bad.display()
    ))
    .await
    .unwrap();
    let e = error(&s, "SELECT * FROM bad").await;
    assert!(
        e.contains("cannot read table 'bad': a message does not decode"),
        "{e}"
    );
    assert!(e.contains("bad_data = 'drop'"), "{e}");
    // With bad_data = 'drop' the bad line is skipped.
    s.execute(&format!(
        "CREATE TABLE lenient (id BIGINT) WITH (connector = 'single_file', path = '{}', \
         type = 'source', format = 'json', bad_data = 'drop')",
        bad.display()
    ))
    .await
    .unwrap();
    assert_eq!(
        table(&s, "SELECT * FROM lenient").await,
        "+----+\n| id |\n+----+\n| 1  |\n+----+"
    );
}

/// A session that may connect, over an in-memory catalog, with profile `k` on `servers`.
pub(crate) async fn kafka_session(servers: &str) -> Session {
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '{servers}', validate = false)"
    ))
    .await
    .unwrap();
    s
}

#[tokio::test]
async fn kafka_topics_are_read_with_their_metadata_from_the_start_offset() {
    let mock = crate::connection_tests::mock_cluster(
        "orders",
        &[r#"{"id": 1}"#, r#"{"id": 2}"#, r#"{"id": 3}"#],
    )
    .await;
    let s = kafka_session(&mock.bootstrap_servers()).await;
    s.execute(
        "CREATE TABLE orders (id BIGINT NOT NULL, t TEXT METADATA FROM 'topic', \
         p INT METADATA FROM 'partition', o BIGINT METADATA FROM 'offset_id', \
         k BYTEA METADATA FROM 'key') WITH (connector = 'kafka', connection_profile = 'k', \
         topic = 'orders', type = 'source', 'source.offset' = 'earliest', format = 'json')",
    )
    .await
    .unwrap();
    // The producer keyed message i with "i"; partitions interleave, so sort.
    let rows = table(
        &s,
        "SELECT id, t, p, o, arrow_cast(k, 'Utf8') AS key FROM \
         (SELECT * FROM orders LIMIT 3) ORDER BY id",
    )
    .await;
    let lines: Vec<&str> = rows.lines().skip(3).take(3).collect();
    for (i, line) in lines.iter().enumerate() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert_eq!(cells[1], (i + 1).to_string(), "{rows}");
        assert_eq!(cells[2], "orders", "{rows}");
        assert!(cells[3] == "0" || cells[3] == "1", "{rows}");
        assert!(cells[4].parse::<i64>().unwrap() >= 0, "{rows}");
        assert_eq!(cells[5], i.to_string(), "{rows}");
    }
    // The metadata columns keep their declared types.
    let types = table(
        &s,
        "SELECT arrow_typeof(p) AS p, arrow_typeof(o) AS o, arrow_typeof(k) AS k FROM orders LIMIT 1",
    )
    .await;
    assert!(types.contains("| Int32 | Int64 | Binary |"), "{types}");

    // From the latest offset nothing has arrived: a preview timeout ends the read.
    s.execute(
        "CREATE TABLE fresh (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', \
         topic = 'orders', type = 'source', 'source.offset' = 'latest', format = 'json')",
    )
    .await
    .unwrap();
    s.execute("SET preview.timeout = '1 second'").await.unwrap();
    assert!(
        table(&s, "SELECT count(*) AS n FROM fresh")
            .await
            .contains("| 0 |")
    );
}

#[tokio::test]
async fn kafka_partitions_are_read_in_parallel_streams_that_share_one_bound() {
    let messages: Vec<String> = (0..100).map(|i| format!(r#"{{"id": {i}}}"#)).collect();
    let refs: Vec<&str> = messages.iter().map(String::as_str).collect();
    let mock = crate::connection_tests::mock_cluster("spread", &refs).await;
    let s = kafka_session(&mock.bootstrap_servers()).await;
    s.execute(
        "CREATE TABLE spread (id BIGINT NOT NULL, p INT METADATA FROM 'partition') \
         WITH (connector = 'kafka', connection_profile = 'k', topic = 'spread', \
         type = 'source', 'source.offset' = 'earliest', format = 'json')",
    )
    .await
    .unwrap();
    // Three streams for two Kafka partitions: one stream has none to read and ends.
    for streams in [1, 2, 3] {
        s.execute(&format!(
            "SET datafusion.execution.target_partitions = {streams}"
        ))
        .await
        .unwrap();
        let plan = table(&s, "EXPLAIN SELECT id FROM spread LIMIT 5").await;
        assert_eq!(
            plan.contains(&format!("partitions={streams}")),
            streams > 1,
            "{plan}"
        );
        // Each stream waits for messages that never come once its partition is read:
        // the bound ends them all when the rows it allows have been produced, together.
        for (bound, expected) in [(100, 100), (30, 30)] {
            s.execute(&format!("SET preview.max_rows = {bound}"))
                .await
                .unwrap();
            let counted = tokio::time::timeout(
                std::time::Duration::from_secs(20),
                table(
                    &s,
                    "SELECT count(*) AS n, count(DISTINCT id) AS ids, count(DISTINCT p) AS ps \
                     FROM spread",
                ),
            )
            .await
            .unwrap_or_else(|_| panic!("{streams} stream(s) under max_rows {bound} never ended"));
            assert!(
                counted.contains(&format!("| {expected} | {expected}")),
                "{streams} stream(s), max_rows {bound}:\n{counted}"
            );
            if bound == 100 {
                assert!(
                    counted.contains(" | 2  |"),
                    "both partitions read:\n{counted}"
                );
            }
        }
        let one = table(&s, "SELECT id FROM spread LIMIT 1").await;
        assert_eq!(one.lines().count(), 5, "one row:\n{one}");
    }
}

#[tokio::test]
async fn an_endless_table_of_changes_is_read_only_under_a_preview_bound() {
    let mock = crate::connection_tests::mock_cluster(
        "cdc",
        &[
            r#"{"before":null,"after":{"id":1,"v":"a"},"op":"c"}"#,
            r#"{"before":{"id":1,"v":"a"},"after":{"id":1,"v":"b"},"op":"u"}"#,
            r#"{"before":null,"after":{"id":2,"v":"c"},"op":"c"}"#,
        ],
    )
    .await;
    let s = kafka_session(&mock.bootstrap_servers()).await;
    s.execute(
        "CREATE TABLE cdc (id BIGINT PRIMARY KEY, v TEXT) WITH (connector = 'kafka', \
         connection_profile = 'k', topic = 'cdc', type = 'source', \
         'source.offset' = 'earliest', format = 'debezium_json')",
    )
    .await
    .unwrap();
    // A LIMIT cannot end it: the rows are known only once the changes are applied.
    let e = error(&s, "SELECT * FROM cdc LIMIT 1").await;
    assert!(
        e.contains("never ends")
            && e.contains("applied to its end")
            && e.contains("SET preview.max_rows")
            && !e.contains("add LIMIT"),
        "{e}"
    );
    s.execute("SET preview.max_rows = 3").await.unwrap();
    let rows = table(&s, "SELECT id, v FROM cdc ORDER BY id").await;
    assert!(
        rows.contains("| 1  | b |") && rows.contains("| 2  | c |") && !rows.contains("| a |"),
        "{rows}"
    );
}

#[tokio::test]
async fn kafka_previews_commit_offsets_only_for_a_named_group() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let mock = crate::connection_tests::mock_cluster(
        "events",
        &[r#"{"id": 1}"#, r#"{"id": 2}"#, r#"{"id": 3}"#],
    )
    .await;
    let servers = mock.bootstrap_servers();
    let s = kafka_session(&servers).await;
    for (name, extra) in [
        (
            "named",
            ", 'source.group_id' = 'readers', 'source.offset' = 'earliest'",
        ),
        (
            "resumed",
            ", 'source.group_id' = 'readers', 'source.offset' = 'group'",
        ),
        ("anonymous", ", 'source.offset' = 'earliest'"),
    ] {
        s.execute(&format!(
            "CREATE TABLE {name} (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', \
             topic = 'events', type = 'source', format = 'json'{extra})"
        ))
        .await
        .unwrap();
    }
    assert!(
        table(
            &s,
            "SELECT count(*) AS n FROM (SELECT * FROM named LIMIT 2)"
        )
        .await
        .contains("| 2 |")
    );
    // The reader commits as it closes, on its own thread: wait for it.
    let committed = |group: &str| {
        let c: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", &servers)
            .set("group.id", group)
            .create()
            .unwrap();
        let mut list = rdkafka::TopicPartitionList::new();
        list.add_partition("events", 0);
        list.add_partition("events", 1);
        c.committed_offsets(list, std::time::Duration::from_secs(5))
            .unwrap()
            .elements()
            .iter()
            .filter_map(|e| e.offset().to_raw())
            .filter(|o| *o >= 0)
            .sum::<i64>()
    };
    let mut total = 0;
    for _ in 0..50 {
        total = committed("readers");
        if total == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(total, 2, "the two messages taken are committed");
    // The group resumes after them: one message is left.
    s.execute("SET preview.timeout = '2 seconds'")
        .await
        .unwrap();
    assert!(
        table(&s, "SELECT count(*) AS n FROM resumed")
            .await
            .contains("| 1 |")
    );
    // A table without a group commits nothing.
    assert!(
        table(&s, "SELECT count(*) AS n FROM anonymous")
            .await
            .contains("| 3 |")
    );
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(
        committed(&format!("tributary-preview-{}", std::process::id())),
        0
    );
}

#[tokio::test]
async fn nats_streams_are_read_by_sequence_and_subjects_as_published() {
    let client = async_nats::connect("nats://127.0.0.1:4222")
        .await
        .unwrap_or_else(|e| panic!("is nats-server (with -js) running on 127.0.0.1:4222? {e}"));
    let js = async_nats::jetstream::new(client.clone());
    let stream = format!("TRIBUTARY_READ_{}", std::process::id());
    let subject = format!("tributary.read.{}", std::process::id());
    let _ = js.delete_stream(&stream).await;
    js.create_stream(async_nats::jetstream::stream::Config {
        name: stream.clone(),
        subjects: vec![format!("{subject}.stored")],
        ..Default::default()
    })
    .await
    .unwrap();
    for id in 1..=3 {
        js.publish(
            format!("{subject}.stored"),
            format!(r#"{{"id": {id}}}"#).into(),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    }
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(
        "CREATE CONNECTION PROFILE n WITH (connector = 'nats', servers = 'nats://127.0.0.1:4222', validate = false)",
    )
    .await
    .unwrap();
    s.execute(&format!(
        "CREATE TABLE stored (id BIGINT) WITH (connector = 'nats', connection_profile = 'n', \
         type = 'source', stream = '{stream}', format = 'json')"
    ))
    .await
    .unwrap();
    s.execute(&format!(
        "CREATE TABLE live (id BIGINT) WITH (connector = 'nats', connection_profile = 'n', \
         type = 'source', subject = '{subject}.live', format = 'json')"
    ))
    .await
    .unwrap();
    assert_eq!(
        table(&s, "SELECT id FROM stored LIMIT 3").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n+----+"
    );
    // The stream is followed past its end: a message stored while the query waits is read.
    let publisher = js.clone();
    let late = format!("{subject}.stored");
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        publisher
            .publish(late, r#"{"id": 4}"#.into())
            .await
            .unwrap()
            .await
            .unwrap();
    });
    assert!(
        table(
            &s,
            "SELECT max(id) AS m FROM (SELECT id FROM stored LIMIT 4)"
        )
        .await
        .contains("| 4 |")
    );
    // Nothing was left on the server: the stream has no consumers.
    let mut info = js.get_stream(&stream).await.unwrap();
    assert_eq!(info.info().await.unwrap().state.consumer_count, 0);

    // A core subject delivers what is published while the query reads.
    let live = format!("{subject}.live");
    let publishing = tokio::spawn(async move {
        for id in 10.. {
            client
                .publish(live.clone(), format!(r#"{{"id": {id}}}"#).into())
                .await
                .unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    });
    let rows = table(
        &s,
        "SELECT count(*) AS n, min(id) >= 10 AS ok FROM (SELECT id FROM live LIMIT 2)",
    )
    .await;
    publishing.abort();
    assert!(rows.contains("| 2 | true |"), "{rows}");
    js.delete_stream(&stream).await.unwrap();
}

#[tokio::test]
async fn mqtt_topics_are_read_as_published_with_their_topic() {
    use rumqttc::{AsyncClient, MqttOptions, QoS};
    let topic = format!("tributary/read/{}", std::process::id());
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(
        "CREATE CONNECTION PROFILE m WITH (connector = 'mqtt', url = 'tcp://127.0.0.1:1883', validate = false)",
    )
    .await
    .unwrap();
    s.execute(&format!(
        "CREATE TABLE readings (v BIGINT, t TEXT METADATA FROM 'topic') WITH (connector = 'mqtt', \
         connection_profile = 'm', type = 'source', topic = '{topic}/+', format = 'json')"
    ))
    .await
    .unwrap();
    let mut options = MqttOptions::new(
        format!("tributary-pub-{}", std::process::id()),
        "127.0.0.1",
        1883,
    );
    options.set_keep_alive(std::time::Duration::from_secs(5));
    let (client, mut events) = AsyncClient::new(options, 10);
    let publish_to = format!("{topic}/a");
    let publishing = tokio::spawn(async move {
        let mut v = 0u64;
        loop {
            // Publishing needs the event loop polled; publish between polls.
            let _ = client.try_publish(
                publish_to.clone(),
                QoS::AtLeastOnce,
                false,
                format!(r#"{{"v": {v}}}"#),
            );
            v += 1;
            let _ = tokio::time::timeout(std::time::Duration::from_millis(20), events.poll()).await;
        }
    });
    let rows = table(
        &s,
        "SELECT count(*) AS n, min(t) AS t FROM (SELECT * FROM readings LIMIT 3)",
    )
    .await;
    publishing.abort();
    assert!(rows.contains(&format!("| 3 | {topic}/a |")), "{rows}");
}

#[tokio::test]
async fn sse_streams_and_polled_endpoints_are_read() {
    use axum::Router;
    use axum::routing::get;
    use std::sync::atomic::{AtomicU64, Ordering};
    let polls = Arc::new(AtomicU64::new(0));
    let counter = polls.clone();
    let app = Router::new()
        .route(
            "/events",
            get(|| async {
                // Three events of two types, split mid-event, then the stream ends.
                let body = "event: tick\ndata: {\"n\": 1}\n\nevent: noise\ndata: {\"n\": 99}\n\nevent: tick\nda\
                            ta: {\"n\": 2}\n\n";
                ([("content-type", "text/event-stream")], body)
            }),
        )
        .route(
            "/poll",
            get(move || {
                let counter = counter.clone();
                async move {
                    // The body changes every second poll.
                    let n = counter.fetch_add(1, Ordering::SeqCst) / 2;
                    format!("{{\"n\": {n}}}")
                }
            }),
        );
    let base = crate::connection_tests::serve(app).await;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE TABLE ticks (n BIGINT) WITH (connector = 'sse', endpoint = '{base}/events', \
         events = 'tick', format = 'json')"
    ))
    .await
    .unwrap();
    // The server closes the stream after two ticks: the read ends with it.
    assert_eq!(
        table(&s, "SELECT n FROM ticks LIMIT 5").await,
        "+---+\n| n |\n+---+\n| 1 |\n| 2 |\n+---+"
    );
    s.execute(&format!(
        "CREATE TABLE polled (n BIGINT) WITH (connector = 'polling_http', endpoint = '{base}/poll', \
         poll_interval_ms = '10', emit_behavior = 'changed', format = 'json')"
    ))
    .await
    .unwrap();
    // Only changed bodies are emitted: 0, 1, 2 from six or more polls.
    assert_eq!(
        table(&s, "SELECT n FROM polled LIMIT 3").await,
        "+---+\n| n |\n+---+\n| 0 |\n| 1 |\n| 2 |\n+---+"
    );
    assert!(polls.load(Ordering::SeqCst) >= 5);
}

#[tokio::test]
async fn websockets_are_read_after_their_subscription() {
    let base = crate::connection_tests::websocket_server().await;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE TABLE feed (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', \
         headers = 'Authorization: Bearer sesame', 'subscription_messages.0' = '{subscription}', \
         format = 'json', bad_data = 'drop')",
        subscription = crate::connection_tests::WEBSOCKET_SUBSCRIPTION
    ))
    .await
    .unwrap();
    // The server sends {"id": 1}, "not json" (dropped) and {"id": 3}, then stays open.
    assert_eq!(
        table(&s, "SELECT id FROM feed LIMIT 2").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 3  |\n+----+"
    );
    // A refused handshake fails the query at the stage a test would name.
    s.execute(&format!(
        "CREATE TABLE denied (id BIGINT) WITH (connector = 'websocket', endpoint = '{base}/feed', \
         headers = 'Authorization: Bearer wrong-token', format = 'json')"
    ))
    .await
    .unwrap();
    let e = error(&s, "SELECT id FROM denied LIMIT 1").await;
    assert!(
        e.contains("cannot read table 'denied': authenticate failed [AUTH_FAILED]"),
        "{e}"
    );
    assert!(!e.contains("wrong-token"), "{e}");
}

#[tokio::test]
async fn rabbitmq_streams_are_read_from_their_offset() {
    let stream = format!("tributary-read-{}", std::process::id());
    let payloads: Vec<String> = (1..=5).map(|i| format!(r#"{{"id": {i}}}"#)).collect();
    let refs: Vec<&str> = payloads.iter().map(String::as_str).collect();
    crate::connection_tests::rabbitmq_stream(&stream, &refs).await;
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(
        "CREATE CONNECTION PROFILE r WITH (connector = 'rabbitmq', host = '127.0.0.1', validate = false)",
    )
    .await
    .unwrap();
    s.execute(&format!(
        "CREATE TABLE held (id BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'r', \
         stream = '{stream}', type = 'source', 'source.offset' = 'first', format = 'json')"
    ))
    .await
    .unwrap();
    assert_eq!(
        table(&s, "SELECT id FROM held LIMIT 4").await,
        "+----+\n| id |\n+----+\n| 1  |\n| 2  |\n| 3  |\n| 4  |\n+----+"
    );
    // Under a preview bound the whole stream is aggregated; nothing was stored, so the
    // next read starts from the first message again.
    s.execute("SET preview.timeout = '1 second'").await.unwrap();
    assert!(
        table(&s, "SELECT count(*) AS n, sum(id) AS s FROM held")
            .await
            .contains("| 5 | 15 |")
    );
}
