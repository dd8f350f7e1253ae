//! Window functions run over event time: tumbling, hopping and session windows in
//! GROUP BY, in Arroyo's form and Flink's, with the watermark dropping late rows.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{error, session, table};
use std::path::Path;
use tributary_sql::Session;

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// A session with table `events (uid, ts)` over `rows` of (uid, seconds past 10:00),
/// in that arrival order, with a lateness of a minute so that no row is late.
async fn events(dir: &Path, rows: &[(&str, u32)]) -> Session {
    let path = dir.join("events.json");
    let lines: Vec<String> = rows
        .iter()
        .map(|(uid, s)| format!(r#"{{"uid":"{uid}","ts":"2026-12-01T10:00:{s:02}Z"}}"#))
        .collect();
    write(&path, &(lines.join("\n") + "\n"));
    let s = session();
    s.execute(&format!(
        "CREATE TABLE events (uid TEXT, ts TIMESTAMP NOT NULL, \
         WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE) \
         WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        path.display()
    ))
    .await
    .unwrap();
    s
}

#[tokio::test]
async fn a_tumbling_window_over_event_time_drops_records_behind_the_watermark() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.json");
    // Arrival order. The watermark trails the largest event time by 5 s: after 00:12 it
    // is 00:07, so 00:03 is late; after 00:21 it is 00:16, so 00:15 is late. 00:08 is
    // behind 00:12 but not behind the watermark: it counts.
    let events = [
        ("a", "00:01"),
        ("b", "00:12"),
        ("c", "00:03"),
        ("d", "00:08"),
        ("e", "00:21"),
        ("f", "00:15"),
    ];
    let lines: Vec<String> = events
        .iter()
        .map(|(id, t)| format!(r#"{{"id":"{id}","ts":"2026-12-01T10:{t}Z"}}"#))
        .collect();
    write(&path, &(lines.join("\n") + "\n"));
    let s = session();
    s.execute(&format!(
        "CREATE TABLE events (id TEXT, ts TIMESTAMP NOT NULL, \
         WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
         WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        path.display()
    ))
    .await
    .unwrap();
    let arroyo = table(
        &s,
        "SELECT w.start AS start, n, ids FROM (SELECT tumble(INTERVAL '10' SECOND) AS w, \
         count(*) AS n, string_agg(id, '' ORDER BY id) AS ids FROM events GROUP BY w) ORDER BY start",
    )
    .await;
    assert_eq!(
        arroyo,
        "+---------------------+---+-----+\n\
         | start               | n | ids |\n\
         +---------------------+---+-----+\n\
         | 2026-12-01T10:00:00 | 2 | ad  |\n\
         | 2026-12-01T10:00:10 | 1 | b   |\n\
         | 2026-12-01T10:00:20 | 1 | e   |\n\
         +---------------------+---+-----+"
    );
    // Flink's form windows the same rows; every read drops the late ones.
    let flink = table(
        &s,
        "SELECT count(*) AS n FROM events GROUP BY TUMBLE(ts, INTERVAL '10' SECOND) ORDER BY n",
    )
    .await;
    assert!(flink.contains("| 1 |\n| 1 |\n| 2 |"), "{flink}");
    assert!(
        table(&s, "SELECT count(*) AS n FROM events")
            .await
            .contains("| 4 |"),
        "c and f are late"
    );

    // Without AS, the watermark is the event time itself: anything out of order is late.
    s.execute(&format!(
        "CREATE TABLE strict (id TEXT, ts TIMESTAMP NOT NULL, WATERMARK FOR ts) \
         WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        path.display()
    ))
    .await
    .unwrap();
    let ids = table(&s, "SELECT id FROM strict").await;
    assert_eq!(ids.matches("| ").count(), 4, "id, a, b, e:\n{ids}");
    assert!(ids.contains("| e  |") && !ids.contains("| d  |"), "{ids}");
}

#[tokio::test]
async fn a_hop_counts_each_row_in_every_window_that_spans_it() {
    let dir = tempfile::tempdir().unwrap();
    let s = events(dir.path(), &[("a", 1), ("b", 4), ("c", 7), ("d", 12)]).await;
    let expected = "+---------------------+---------------------+---+-----+\n\
                    | start               | end                 | n | ids |\n\
                    +---------------------+---------------------+---+-----+\n\
                    | 2026-12-01T09:59:55 | 2026-12-01T10:00:05 | 2 | ab  |\n\
                    | 2026-12-01T10:00:00 | 2026-12-01T10:00:10 | 3 | abc |\n\
                    | 2026-12-01T10:00:05 | 2026-12-01T10:00:15 | 2 | cd  |\n\
                    | 2026-12-01T10:00:10 | 2026-12-01T10:00:20 | 1 | d   |\n\
                    +---------------------+---------------------+---+-----+";
    // Arroyo's form windows the event time; Flink's names the column.
    for window in [
        "hop(INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
        "HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
    ] {
        let got = table(
            &s,
            &format!(
                "SELECT w.start AS start, w.end AS end, n, ids FROM (SELECT {window} AS w, \
                 count(*) AS n, string_agg(uid, '' ORDER BY uid) AS ids FROM events GROUP BY w) \
                 ORDER BY start"
            ),
        )
        .await;
        assert_eq!(got, expected, "{window}");
    }
    // A slide longer than the width leaves rows between windows out.
    let gaps = table(
        &s,
        "SELECT w.start AS start, n FROM (SELECT hop(INTERVAL '10' SECOND, \
         INTERVAL '3' SECOND) AS w, count(*) AS n FROM events GROUP BY w) ORDER BY start",
    )
    .await;
    assert!(gaps.contains("| 2026-12-01T10:00:00 | 1 |"), "{gaps}");
    assert!(gaps.contains("| 2026-12-01T10:00:10 | 1 |"), "{gaps}");
}

#[tokio::test]
async fn sessions_close_when_a_key_is_quiet_for_the_gap() {
    let dir = tempfile::tempdir().unwrap();
    // u1 arrives out of order: 00:04 after 00:20.
    let s = events(
        dir.path(),
        &[
            ("u1", 1),
            ("u2", 2),
            ("u1", 20),
            ("u1", 4),
            ("u2", 30),
            ("u2", 33),
        ],
    )
    .await;
    let expected = "+-----+---------------------+---------------------+---+\n\
                    | uid | start               | end                 | n |\n\
                    +-----+---------------------+---------------------+---+\n\
                    | u1  | 2026-12-01T10:00:01 | 2026-12-01T10:00:09 | 2 |\n\
                    | u1  | 2026-12-01T10:00:20 | 2026-12-01T10:00:25 | 1 |\n\
                    | u2  | 2026-12-01T10:00:02 | 2026-12-01T10:00:07 | 1 |\n\
                    | u2  | 2026-12-01T10:00:30 | 2026-12-01T10:00:38 | 2 |\n\
                    +-----+---------------------+---------------------+---+";
    for window in [
        "session(INTERVAL '5' SECOND)",
        "SESSION(ts, INTERVAL '5' SECOND)",
    ] {
        let got = table(
            &s,
            &format!(
                "SELECT uid, w.start AS start, w.end AS end, n FROM (SELECT uid, {window} AS w, \
                 count(*) AS n FROM events GROUP BY uid, w) ORDER BY uid, start"
            ),
        )
        .await;
        assert_eq!(got, expected, "{window}");
    }
    // Without other keys, all rows form the sessions: 00:01-00:04, 00:20, 00:30-00:33.
    let all = table(
        &s,
        "SELECT count(*) AS n FROM events GROUP BY session(INTERVAL '5' SECOND) ORDER BY n",
    )
    .await;
    assert!(all.contains("| 1 |\n| 2 |\n| 3 |"), "{all}");
}

#[tokio::test]
async fn windows_that_are_not_one_rows_value_are_refused_outside_group_by() {
    let dir = tempfile::tempdir().unwrap();
    let s = events(dir.path(), &[("a", 1)]).await;
    let e = error(
        &s,
        "SELECT hop(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) FROM events",
    )
    .await;
    assert!(
        e.contains("several windows or none") && e.contains("use it in GROUP BY"),
        "{e}"
    );
    let e = error(&s, "SELECT session(ts, INTERVAL '5' SECOND) FROM events").await;
    assert!(e.contains("use it in GROUP BY"), "{e}");
    let e = error(
        &s,
        "SELECT count(*) FROM events GROUP BY session(INTERVAL '5' SECOND), \
         hop(INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
    )
    .await;
    assert!(
        e.contains("more than one overlapping hop or session window"),
        "{e}"
    );
    let e = error(
        &s,
        "SELECT count(*) FROM events GROUP BY hop(INTERVAL '1' SECOND, INTERVAL '1' HOUR)",
    )
    .await;
    assert!(
        e.contains("3600 windows") && e.contains("use a longer slide"),
        "{e}"
    );
}
