//! Queries that read files for real: directories and single files, lines and whole
//! files, compression, virtual columns, and the diagnostics of what cannot be read.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use datafusion::arrow::util::pretty::pretty_format_batches;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::{Output, Session};

/// An offline session over an in-memory catalog: local files are still read.
fn session() -> Session {
    Session::new(Arc::new(OverlayStore::in_memory())).offline()
}

/// The rows of the last statement of `sql`, as a pretty table.
async fn table(session: &Session, sql: &str) -> String {
    let results = session.execute(sql).await.unwrap_or_else(|e| panic!("{e}"));
    match &results.last().unwrap().output {
        Output::Rows { batches, .. } => pretty_format_batches(batches).unwrap().to_string(),
        other => panic!("expected rows, got {other:?}"),
    }
}

async fn error(session: &Session, sql: &str) -> String {
    session.execute(sql).await.unwrap_err().to_string()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_directory_is_read_in_path_order_with_its_virtual_columns() {
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
        table(&s, "SELECT * FROM people").await,
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
    assert_eq!(
        table(&s, "SELECT name FROM people LIMIT 1").await,
        "+------+\n| name |\n+------+\n| one  |\n+------+"
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
