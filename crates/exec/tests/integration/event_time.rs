//! Every source row has an event time, as in Arroyo: Arroyo's first tutorial previews
//! with windowed counts over Nexmark's event time, a Kafka row's time is its message's
//! timestamp, and a file's rows are timed as they are read, METADATA and virtual columns
//! unaffected.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{kafka_session, session, table};
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Int64Type, TimestampNanosecondType};
use std::collections::BTreeMap;
use tributary_sql::{Output, Session};

/// The batches of the last statement of `sql`.
async fn batches(s: &Session, sql: &str) -> Vec<RecordBatch> {
    let results = s
        .execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    match &results.last().unwrap().output {
        Output::Rows { batches, .. } => batches.clone(),
        other => panic!("expected rows, got {other:?}"),
    }
}

/// The tutorial's rows: (count, auction, window start, window end), in nanoseconds.
async fn tutorial_rows(s: &Session, from: &str) -> Vec<(i64, i64, i64, i64)> {
    let sql = format!(
        "SELECT count, auction, window.start AS s, window.end AS e FROM (\
         SELECT count(*) AS count, bid.auction AS auction, \
                hop(interval '2 seconds', interval '60 seconds') AS window \
         FROM {from} WHERE bid IS NOT NULL GROUP BY 2, window)"
    );
    let mut rows = Vec::new();
    for b in batches(s, &sql).await {
        let count = b.column(0).as_primitive::<Int64Type>();
        let auction = b.column(1).as_primitive::<Int64Type>();
        let start = b.column(2).as_primitive::<TimestampNanosecondType>();
        let end = b.column(3).as_primitive::<TimestampNanosecondType>();
        for i in 0..b.num_rows() {
            rows.push((
                count.value(i),
                auction.value(i),
                start.value(i),
                end.value(i),
            ));
        }
    }
    rows
}

const SECOND: i64 = 1_000_000_000;

#[tokio::test]
async fn arroyos_first_tutorial_previews_windowed_counts_over_nexmarks_event_time() {
    let s = session();
    s.execute(
        "CREATE TABLE nexmark WITH (connector = 'nexmark', event_rate = '10'); \
         CREATE TABLE events WITH (connector = 'nexmark', event_rate = '0')",
    )
    .await
    .unwrap();

    // The tutorial as written, bounded by the preview's timeout: every window is 60 s
    // wide and starts on a 2-second boundary.
    s.execute("SET preview.timeout = '2 seconds'")
        .await
        .unwrap();
    let live = tutorial_rows(&s, "nexmark").await;
    assert!(!live.is_empty(), "no windows in 2 s at 10 events a second");
    for (count, _, start, end) in &live {
        assert!(*count > 0);
        assert_eq!(end - start, 60 * SECOND);
        assert_eq!(
            start % (2 * SECOND),
            0,
            "a hop starts at a multiple of its slide"
        );
    }
    // Each bid is in 30 windows (60 s / 2 s).
    let total: i64 = live.iter().map(|r| r.0).sum();
    assert_eq!(total % 30, 0, "{total}");

    // The first 500 events are the same in every run (the generator is seeded by the
    // event's number): each auction's windowed counts add up to 30 times its bids.
    let rows = tutorial_rows(&s, "(SELECT * FROM events LIMIT 500)").await;
    let mut windowed: BTreeMap<i64, i64> = BTreeMap::new();
    for (count, auction, _, _) in &rows {
        *windowed.entry(*auction).or_default() += count;
    }
    let mut bids: BTreeMap<i64, i64> = BTreeMap::new();
    for b in batches(
        &s,
        "SELECT bid.auction, count(*) FROM (SELECT * FROM events LIMIT 500) \
         WHERE bid IS NOT NULL GROUP BY 1",
    )
    .await
    {
        let auction = b.column(0).as_primitive::<Int64Type>();
        let count = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            bids.insert(auction.value(i), count.value(i) * 30);
        }
    }
    assert_eq!(windowed, bids);
    // 46 bids in every 50 events.
    assert_eq!(bids.values().sum::<i64>(), 460 * 30);
}

#[tokio::test]
async fn a_kafka_rows_event_time_is_its_message_timestamp() {
    let mock = crate::connection_tests::mock_cluster(
        "orders",
        &[r#"{"id": 1}"#, r#"{"id": 2}"#, r#"{"id": 3}"#],
    )
    .await;
    let s = kafka_session(&mock.bootstrap_servers()).await;
    s.execute(
        "CREATE TABLE orders (id BIGINT NOT NULL, ms BIGINT METADATA FROM 'timestamp') \
         WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', \
         type = 'source', 'source.offset' = 'earliest', format = 'json')",
    )
    .await
    .unwrap();
    let rows = batches(
        &s,
        "SELECT id, ms, _timestamp, row_time() FROM (SELECT * FROM orders LIMIT 3) ORDER BY id",
    )
    .await;
    let mut seen = 0;
    for b in rows {
        let ms = b.column(1).as_primitive::<Int64Type>();
        let time = b.column(2).as_primitive::<TimestampNanosecondType>();
        let row_time = b.column(3).as_primitive::<TimestampNanosecondType>();
        for i in 0..b.num_rows() {
            assert!(!ms.is_null(i));
            assert_eq!(time.value(i), ms.value(i) * 1_000_000);
            assert_eq!(row_time.value(i), time.value(i));
            seen += 1;
        }
    }
    assert_eq!(seen, 3);
    // Hidden from SELECT *: the declared and metadata columns only.
    let star = table(&s, "SELECT * FROM orders LIMIT 1").await;
    assert!(
        star.lines().nth(1).unwrap().starts_with("| id | ms "),
        "{star}"
    );
    assert!(!star.contains("_timestamp"), "{star}");
}

#[tokio::test]
async fn a_files_rows_are_timed_as_they_are_read_beside_their_virtual_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.json");
    std::fs::write(&path, "{\"n\": 1}\n{\"n\": 2}\n").unwrap();
    let s = session();
    s.execute(&format!(
        "CREATE TABLE ns (n BIGINT, twice BIGINT GENERATED ALWAYS AS (n * 2)) \
         WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        path.display()
    ))
    .await
    .unwrap();
    let rows = table(
        &s,
        "SELECT n, twice, _timestamp BETWEEN now() - INTERVAL '1' MINUTE AND now() + INTERVAL '1' MINUTE AS read_now FROM ns ORDER BY n",
    )
    .await;
    assert_eq!(
        rows,
        "+---+-------+----------+\n\
         | n | twice | read_now |\n\
         +---+-------+----------+\n\
         | 1 | 2     | true     |\n\
         | 2 | 4     | true     |\n\
         +---+-------+----------+"
    );
    // A window over the read time counts every row once.
    let counted = table(
        &s,
        "SELECT sum(c) AS rows FROM (SELECT count(*) AS c, tumble(INTERVAL '1' HOUR) AS w FROM ns GROUP BY w)",
    )
    .await;
    assert!(counted.contains("| 2    |"), "{counted}");
    // SELECT * and the view of the table are as before.
    assert_eq!(
        table(&s, "SELECT * FROM ns ORDER BY n").await,
        "+---+-------+\n| n | twice |\n+---+-------+\n| 1 | 2     |\n| 2 | 4     |\n+---+-------+"
    );
}
