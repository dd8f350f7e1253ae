//! Previews over live sources answer as their rows come: rows that pass a filter, and
//! those a join makes, reach the reader while the source still runs, however slowly it
//! produces (an impulse source at five rows a second), instead of waiting for a full
//! batch of thousands or the preview's end.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{session, table};
use futures::StreamExt;
use std::time::{Duration, Instant};
use tributary_sql::Session;

/// A session with a source of five rows a second, its previews bounded at `timeout`.
async fn slow_session(timeout: &str) -> Session {
    let s = session();
    s.execute(&format!(
        "SET preview.timeout = '{timeout}'; \
         CREATE TABLE slow WITH (connector = 'impulse', event_rate = 5)"
    ))
    .await
    .unwrap();
    s
}

/// How long until `sql`'s first non-empty batch, and its rows.
async fn first_rows(s: &Session, sql: &str) -> (Duration, usize) {
    let started = Instant::now();
    let mut stream = s.sql(sql).await.unwrap().execute_stream().await.unwrap();
    while let Some(batch) = stream.next().await {
        let batch = batch.unwrap();
        if batch.num_rows() > 0 {
            return (started.elapsed(), batch.num_rows());
        }
    }
    panic!("{sql}: no rows at all");
}

#[tokio::test]
async fn a_selective_filter_with_a_limit_answers_once_its_rows_have_come() {
    let s = slow_session("30 seconds").await;
    let started = Instant::now();
    let rows = table(&s, "SELECT counter FROM slow WHERE counter % 2 = 1 LIMIT 2").await;
    let took = started.elapsed();
    assert!(
        rows.contains("| 1       |") && rows.contains("| 3       |"),
        "{rows}"
    );
    // Counter 3 comes at 0.8 s: not the preview's 30 s.
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test]
async fn rows_that_pass_a_filter_reach_the_reader_while_the_source_runs() {
    let s = slow_session("6 seconds").await;
    // Counter 1 comes at 0.4 s at the latest; the preview ends at 6 s.
    let (took, _) = first_rows(&s, "SELECT counter FROM slow WHERE counter % 2 = 1").await;
    assert!(took < Duration::from_secs(3), "{took:?}");
}

#[tokio::test]
async fn rows_a_join_makes_reach_the_reader_while_the_source_runs() {
    let s = slow_session("6 seconds").await;
    let (took, rows) = first_rows(
        &s,
        "SELECT s.counter, v.name FROM slow s JOIN (VALUES (1, 'one'), (3, 'three')) AS v(n, name) ON s.counter = v.n",
    )
    .await;
    assert!(took < Duration::from_secs(3), "{took:?}");
    assert!(rows >= 1);
}

/// `bad_data` judges a message by its whole row, whatever the query projects: `count(*)`
/// counts the rows `SELECT *` shows, failing or dropping the same messages.
#[tokio::test]
async fn counts_agree_with_rows_whatever_bad_data_says() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.json");
    // Eight messages; five have an amount that is not a number.
    let lines: Vec<String> = (0..8)
        .map(|i| {
            if i % 3 == 0 {
                format!(r#"{{"id": {i}, "amount": {i}.5}}"#)
            } else {
                format!(r#"{{"id": {i}, "amount": "n/a"}}"#)
            }
        })
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let s = session();
    s.execute(&format!(
        "CREATE TABLE failing (id BIGINT, amount DOUBLE) WITH (connector = 'single_file', path = '{p}', type = 'source', format = 'json'); \
         CREATE TABLE dropping (id BIGINT, amount DOUBLE) WITH (connector = 'single_file', path = '{p}', type = 'source', format = 'json', bad_data = 'drop')",
        p = file.display()
    ))
    .await
    .unwrap();
    for sql in [
        "SELECT count(*) FROM failing",
        "SELECT id FROM failing",
        "SELECT * FROM failing",
    ] {
        let e = crate::reading::error(&s, sql).await;
        assert!(e.contains("amount"), "{sql}: {e}");
    }
    for (sql, expected) in [
        ("SELECT count(*) AS n FROM dropping", "| 3 |"),
        ("SELECT count(id) AS n FROM dropping", "| 3 |"),
        (
            "SELECT count(*) AS n FROM (SELECT * FROM dropping)",
            "| 3 |",
        ),
    ] {
        let rows = table(&s, sql).await;
        assert!(rows.contains(expected), "{sql}: {rows}");
    }
    let rows = table(&s, "SELECT id FROM dropping ORDER BY id").await;
    assert_eq!(rows.matches("\n| ").count(), 4, "{rows}");
}
