//! File tables: local files sampled and decoded, each failure explained; object stores
//! reported as not testable.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;

#[tokio::test]
async fn file_tables_read_and_decode_samples_and_explain_each_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("events.jsonl");
    std::fs::write(
        &file,
        "{\"id\": 1, \"name\": \"a\"}\n{\"id\": \"oops\"}\n\n{\"id\": 3}\n",
    )
    .unwrap();
    let s = session();
    s.execute(&format!(
        "CREATE TABLE events (id BIGINT, name TEXT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
        file.display()
    ))
    .await
    .unwrap();
    let t = s.execute("TEST TABLE events LIMIT 5").await.unwrap();
    assert_eq!(rows(&t[0]), ["1 a", "3 "]);
    let warnings: Vec<String> = t[0]
        .warnings
        .iter()
        .filter(|w| w.severity == Severity::Warning)
        .map(|w| w.message.clone())
        .collect();
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("message 2 could not be decoded:"),
        "{warnings:?}"
    );
    // LIMIT bounds what is read.
    let t = s.execute("TEST TABLE events LIMIT 1").await.unwrap();
    assert_eq!(rows(&t[0]), ["1 a"]);
    // An empty file says so.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    s.execute(&format!("CREATE TABLE empty (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')", empty.display()))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE empty").await;
    assert!(
        e.starts_with("the connection test of table 'empty' failed at stage 'read' [EMPTY]"),
        "{e}"
    );
    // A missing file.
    s.execute("CREATE TABLE gone (id BIGINT) WITH (connector = 'single_file', path = '/no/such/file.jsonl', type = 'source', format = 'json')")
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE gone").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Nothing decodes: the decode stage fails with every reason.
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "not json\n").unwrap();
    s.execute(&format!("CREATE TABLE bad (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')", bad.display()))
        .await
        .unwrap();
    let e = s.execute("TEST TABLE bad").await.unwrap_err();
    assert!(
        e.diagnostics[0]
            .message
            .contains("failed at stage 'decode' [DECODE_FAILED]"),
        "{e}"
    );
    assert!(e.diagnostics[0].notes[0].starts_with("message 1: "), "{e}");
    // A sink proves its directory is writable, and says what it wrote.
    s.execute(&format!("CREATE TABLE out (id BIGINT) WITH (connector = 'single_file', path = '{}', type = 'sink', format = 'json')", dir.path().join("out.jsonl").display()))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE out").await.unwrap();
    assert!(
        rows(&t[0])
            .iter()
            .any(|l| l.starts_with("write passed  created and removed the empty file")),
        "{:?}",
        rows(&t[0])
    );
    // The filesystem connector reads a directory; object stores cannot be tested here.
    std::fs::create_dir(dir.path().join("part")).unwrap();
    std::fs::write(dir.path().join("part/a.json"), "{\"id\": 7}\n").unwrap();
    s.execute(&format!("CREATE TABLE dir (id BIGINT) WITH (connector = 'filesystem', path = '{}', type = 'source', format = 'json', 'source.regex_pattern' = '.*\\.json$')", dir.path().display()))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE dir").await.unwrap();
    assert_eq!(rows(&t[0]), ["7"]);
    s.execute("CREATE TABLE s3 (id BIGINT) WITH (connector = 'filesystem', path = 's3://bucket/prefix', type = 'source', format = 'json')")
        .await
        .unwrap();
    let t = s.execute("TEST TABLE s3").await.unwrap();
    assert!(
        rows(&t[0])[0]
            .starts_with("connect skipped NOT_TESTABLE 's3://bucket/prefix' is in an object store"),
        "{:?}",
        rows(&t[0])
    );
}
