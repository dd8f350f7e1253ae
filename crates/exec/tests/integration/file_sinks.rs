//! INSERT INTO filesystem sinks that partition and roll: directories per time bucket and
//! per field value (Hive style), each directory's rows in its own files, files closed by
//! size, and every file read back through a filesystem source.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{error, session, table};
use std::path::{Path, PathBuf};

/// Every file under `root`, as paths relative to it, sorted.
fn files_under(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p: PathBuf = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn rows_go_into_a_directory_per_field_value_and_event_time() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("events.json");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(
        &input,
        [
            r#"{"id": 1, "kind": "click", "ts": "2026-12-01T09:10:00Z"}"#,
            r#"{"id": 2, "kind": "view", "ts": "2026-12-01T09:20:00Z"}"#,
            r#"{"id": 3, "kind": "click", "ts": "2026-12-01T10:05:00Z"}"#,
            r#"{"id": 4, "kind": "../up", "ts": "2026-12-01T10:06:00Z"}"#,
            r#"{"id": 5, "ts": "2026-12-01T10:07:00Z"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let s = session().allow_file_writes();
    for format in ["json", "parquet"] {
        let out = out.join(format);
        std::fs::create_dir(&out).unwrap();
        s.execute(&format!(
            "CREATE TABLE events_{format} (id BIGINT, kind TEXT, ts TIMESTAMP NOT NULL, \
             WATERMARK FOR ts AS ts - INTERVAL '1' HOUR) WITH (connector = 'single_file', \
             path = '{input}', type = 'source', format = 'json'); \
             CREATE TABLE parts_{format} (id BIGINT, kind TEXT, ts TIMESTAMP) WITH ( \
             connector = 'filesystem', type = 'sink', path = '{out}', format = '{format}', \
             'filename.prefix' = 'p', 'partitioning.time_pattern' = '%Y-%m-%d/%H', \
             'partitioning.fields' = [kind]); \
             CREATE TABLE back_{format} (id BIGINT, kind TEXT, ts TIMESTAMP) WITH ( \
             connector = 'filesystem', type = 'source', path = '{out}', format = '{format}')",
            input = input.display(),
            out = out.display(),
        ))
        .await
        .unwrap();
        assert!(
            table(
                &s,
                &format!("INSERT INTO parts_{format} SELECT id, kind, ts FROM events_{format}")
            )
            .await
            .contains("| 5     |"),
            "{format}"
        );
        let files = files_under(&out);
        let dirs: Vec<&str> = files.iter().map(|f| &f[..f.rfind('/').unwrap()]).collect();
        // Each row's event time names its hour; a value that would climb out of the
        // directory is escaped, and NULL is Hive's default partition.
        assert_eq!(
            dirs,
            [
                "2026-12-01/09/kind=click",
                "2026-12-01/09/kind=view",
                "2026-12-01/10/kind=..%2Fup",
                "2026-12-01/10/kind=__HIVE_DEFAULT_PARTITION__",
                "2026-12-01/10/kind=click",
            ],
            "{format}: {files:?}"
        );
        assert!(
            files.iter().all(|f| {
                let name = &f[f.rfind('/').unwrap() + 1..];
                name.starts_with("p-") && name.ends_with(&format!(".{format}"))
            }),
            "{format}: {files:?}"
        );
        let ids = table(
            &s,
            &format!(
                "SELECT string_agg(CAST(id AS TEXT), ',' ORDER BY id) AS ids FROM back_{format}"
            ),
        )
        .await;
        assert!(ids.contains("| 1,2,3,4,5 |"), "{format}: {ids}");
    }
}

#[tokio::test]
async fn files_roll_at_their_size_and_none_is_left_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let s = session().allow_file_writes();
    // 100 rows in batches of 10, each line about 30 bytes: a file closes once it holds
    // a kilobyte, after 4 batches.
    s.execute(&format!(
        "SET datafusion.execution.batch_size = 10; \
         CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '100'); \
         CREATE TABLE rolled (counter BIGINT, note TEXT) WITH (connector = 'filesystem', \
         type = 'sink', path = '{out}', format = 'json', 'rolling_policy.file_size' = '1kb'); \
         CREATE TABLE back (counter BIGINT, note TEXT) WITH (connector = 'filesystem', \
         type = 'source', path = '{out}', format = 'json')",
        out = out.display(),
    ))
    .await
    .unwrap();
    assert!(
        table(
            &s,
            "INSERT INTO rolled SELECT counter, 'row number ' || counter FROM counted"
        )
        .await
        .contains("| 100   |")
    );
    let files = files_under(&out);
    assert!(files.len() >= 3, "{files:?}");
    assert!(files.iter().all(|f| !f.contains("inprogress")), "{files:?}");
    let mut sizes: Vec<u64> = files
        .iter()
        .map(|f| std::fs::metadata(out.join(f)).unwrap().len())
        .collect();
    sizes.pop();
    assert!(
        sizes.iter().all(|s| *s >= 1024 && *s < 1024 + 400),
        "{sizes:?}"
    );
    assert!(
        table(&s, "SELECT count(*) AS n, sum(counter) AS s FROM back")
            .await
            .contains("| 100 | 4950 |")
    );
}

#[tokio::test]
async fn partitioning_that_cannot_name_directories_is_refused() {
    let s = session();
    let e = error(
        &s,
        "CREATE TABLE bad (id BIGINT) WITH (connector = 'filesystem', type = 'sink', \
         path = '/tmp/never', format = 'json', 'partitioning.time_pattern' = '%Y/%Q')",
    )
    .await;
    assert!(
        e.contains("invalid 'partitioning.time_pattern'")
            && e.contains("not a strftime pattern")
            && e.contains("(at 1:"),
        "{e}"
    );
    let e = error(
        &s,
        "CREATE TABLE bad (id BIGINT) WITH (connector = 'filesystem', type = 'sink', \
         path = '/tmp/never', format = 'json', 'partitioning.time_pattern' = '/%Y')",
    )
    .await;
    assert!(e.contains("starts with '/'"), "{e}");
}

#[tokio::test]
async fn debezium_sinks_receive_changes_as_a_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("changes.json");
    std::fs::write(
        &input,
        [
            r#"{"before":null,"after":{"id":1,"name":"a"},"op":"c"}"#,
            r#"{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u"}"#,
            r#"{"before":null,"after":{"id":2,"name":"c"},"op":"r"}"#,
            r#"{"before":{"id":2,"name":"c"},"after":null,"op":"d"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let copied = dir.path().join("copied.json");
    let counted = dir.path().join("counted.json");
    let s = session().allow_file_writes();
    s.execute(&format!(
        "CREATE TABLE changes (id BIGINT PRIMARY KEY, name TEXT) WITH (connector = 'single_file', \
         path = '{input}', type = 'source', format = 'debezium_json'); \
         CREATE TABLE copied (id BIGINT PRIMARY KEY, name TEXT) WITH (connector = 'single_file', \
         path = '{copied}', type = 'sink', format = 'debezium_json'); \
         CREATE TABLE counted (name TEXT PRIMARY KEY, n BIGINT) WITH (connector = 'single_file', \
         path = '{counted}', type = 'sink', format = 'debezium_json')",
        input = input.display(),
        copied = copied.display(),
        counted = counted.display(),
    ))
    .await
    .unwrap();
    // The changes leave 1 as "b" and delete 2: the table they describe.
    assert_eq!(
        table(&s, "SELECT * FROM changes").await,
        "+----+------+\n| id | name |\n+----+------+\n| 1  | b    |\n+----+------+"
    );
    assert!(
        table(&s, "SELECT count(*) AS n FROM changes LIMIT 1")
            .await
            .contains("| 1 |")
    );
    // A copy receives that table as a changelog from nothing: one creation.
    assert!(
        table(&s, "INSERT INTO copied SELECT * FROM changes")
            .await
            .contains("| 1     |")
    );
    assert_eq!(
        std::fs::read_to_string(&copied).unwrap(),
        "{\"before\":null,\"after\":{\"id\":1,\"name\":\"b\"},\"op\":\"c\"}\n"
    );
    // An aggregate's result, an updating result in a pipeline, arrives the same way.
    table(
        &s,
        "INSERT INTO counted SELECT name, count(*) AS n FROM changes GROUP BY name",
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(&counted).unwrap(),
        "{\"before\":null,\"after\":{\"name\":\"b\",\"n\":1},\"op\":\"c\"}\n"
    );
    // Read back, the sinks' changelogs describe the same tables.
    s.execute(&format!(
        "CREATE TABLE copied_back (id BIGINT PRIMARY KEY, name TEXT) WITH (connector = \
         'single_file', path = '{}', type = 'source', format = 'debezium_json')",
        copied.display()
    ))
    .await
    .unwrap();
    assert!(
        table(&s, "SELECT * FROM copied_back")
            .await
            .contains("| 1  | b    |")
    );
}

/// An INSERT that fails after its first batches were written (a division by zero in
/// the third batch) discards them: nothing is left in the directory, neither finished
/// files nor files in progress.
#[tokio::test]
async fn a_failed_insert_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let s = session().allow_file_writes();
    s.execute(&format!(
        "SET datafusion.execution.batch_size = 2; \
         CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '10'); \
         CREATE TABLE quotients (q BIGINT) WITH (connector = 'filesystem', type = 'sink', \
         path = '{out}', format = 'json')",
        out = out.display(),
    ))
    .await
    .unwrap();
    let failed = error(
        &s,
        "INSERT INTO quotients SELECT 10 / (5 - counter) FROM counted",
    )
    .await;
    assert!(failed.contains("Divide by zero"), "{failed}");
    assert_eq!(files_under(&out), Vec::<String>::new());
}
