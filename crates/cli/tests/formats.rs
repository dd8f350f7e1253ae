//! Machine-readable output: the JSON, JSONL, CSV and raw output of multi-statement
//! scripts against golden files, and the JSON document parsed and checked field by field.
//!
//! Set `TRIBUTARY_GOLDEN_UPDATE=1` to rewrite the golden files from the binary's output;
//! review the diff before committing it.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::catalog_files::{run_on, text};
use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A script whose every statement's output is the same on every run: no ids, no times.
const SCRIPT: &str = "-- every kind of result
CREATE CONNECTION PROFILE local WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);
CREATE TABLE orders (id BIGINT NOT NULL, note TEXT) WITH (connector = 'kafka', connection_profile = 'local', topic = 'orders', type = 'source', format = 'json', validate = false);
SELECT * FROM (VALUES (1, 'first', true, 1.5), (2, NULL, false, NULL)) AS v(id, note, ok, ratio);
SHOW CREATE TABLE orders;
SELECT nope FROM orders;
";

/// A script with several invalid statements, for `check`.
const INVALID: &str =
    "CREATE TABLE a (x INT) WITH (connector = 'kafka', topik = 'a', format = 'json');
SELECT 1;
CREATE TABLE b (x INT) WITH (connector = 'kafak');
SELEC 2;
";

/// Run `tributary` on `catalog` with `args` and the script `script`, written to a file
/// beside the catalog.
fn tributary(catalog: &Path, args: &[&str], script: &str) -> Output {
    let file = catalog.with_extension("sql");
    std::fs::write(&file, script).unwrap();
    let mut args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    args.push(file.as_os_str());
    run_on(catalog, &args)
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compare `actual` with the golden file `name`, or write it when asked to.
fn golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var_os("TRIBUTARY_GOLDEN_UPDATE").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (TRIBUTARY_GOLDEN_UPDATE=1 writes it)",
            path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "{name} differs from {} (TRIBUTARY_GOLDEN_UPDATE=1 rewrites it)",
        path.display()
    );
}

/// Run `script` on a new catalog in `format`, with `command` (`run` or `check`).
fn in_format(format: &str, command: &str, script: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    tributary(
        &dir.path().join("cat"),
        &["--format", format, command],
        script,
    )
}

/// The script's path as diagnostics name it (` --> PATH:line:column`).
fn script_path(out: &Output) -> String {
    let stderr = text(&out.stderr);
    let at = stderr.find(" --> ").expect("a diagnostic with a location") + 5;
    let rest = &stderr[at..];
    rest[..rest.find(".sql:").expect("the script's name") + 4].to_string()
}

#[test]
fn json_is_one_document_for_the_run() {
    let out = in_format("json", "run", SCRIPT);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // Diagnostics are in the document, not on standard error.
    assert_eq!(text(&out.stderr), "");
    golden("script.json", &text(&out.stdout));
}

#[test]
fn jsonl_is_one_result_per_line() {
    let out = in_format("jsonl", "run", SCRIPT);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["statement"].is_u64(), "{line}");
    }
    golden("script.jsonl", &stdout);
}

#[test]
fn csv_prints_result_sets_only_and_status_lines_go_to_standard_error() {
    let out = in_format("csv", "run", SCRIPT);
    assert_eq!(out.status.code(), Some(1));
    golden("script.csv", &text(&out.stdout));
    // The script's path is the test's own.
    let stderr = text(&out.stderr).replace(&script_path(&out), "script.sql");
    golden("script.csv.stderr", &stderr);
}

#[test]
fn raw_prints_bare_values_ready_to_paste() {
    let out = in_format("raw", "run", SCRIPT);
    assert_eq!(out.status.code(), Some(1));
    golden("script.raw", &text(&out.stdout));
}

#[test]
fn show_create_prints_the_bare_statement_in_a_table_too() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let setup: String = SCRIPT.lines().take(3).collect::<Vec<_>>().join("\n");
    assert_eq!(tributary(&catalog, &["run"], &setup).status.code(), Some(0));
    let out = tributary(&catalog, &["run"], "SHOW CREATE TABLE orders");
    let shown = text(&out.stdout);
    assert!(shown.starts_with("CREATE TABLE orders ("), "{shown}");
    assert!(!shown.contains('|') && !shown.contains("+-"), "{shown}");
    // Pasted back, it creates the same table.
    let again = tributary(&catalog, &["run"], &format!("DROP TABLE orders; {shown}"));
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
}

#[test]
fn the_json_document_parses_with_typed_values_and_structured_diagnostics() {
    let out = in_format("json", "run", SCRIPT);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc.as_array().unwrap();
    assert_eq!(results.len(), 5);
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "CREATE CONNECTION PROFILE",
            "CREATE TABLE",
            "SELECT",
            "SHOW CREATE TABLE",
            "SELECT"
        ]
    );
    assert_eq!(results[0]["status"], "CREATE CONNECTION PROFILE");
    assert_eq!(results[0]["ok"], true);
    assert_eq!(
        results[0]["span"],
        serde_json::json!({"line": 2, "column": 1, "end_line": 2, "end_column": 115})
    );

    let select = &results[2];
    assert_eq!(select["row_count"], 2);
    assert_eq!(select["status"], Value::Null);
    let columns: Vec<(&str, &str)> = select["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        columns,
        [
            ("id", "BIGINT"),
            ("note", "TEXT"),
            ("ok", "BOOLEAN"),
            ("ratio", "DOUBLE")
        ]
    );
    assert_eq!(
        select["rows"],
        serde_json::json!([
            {"id": 1, "note": "first", "ok": true, "ratio": 1.5},
            {"id": 2, "note": null, "ok": false, "ratio": null}
        ])
    );
    // NULL keeps its key.
    assert!(select["rows"][1].as_object().unwrap().contains_key("note"));

    let failed = &results[4];
    assert_eq!(failed["ok"], false);
    let d = &failed["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["code"], "PLAN_ERROR");
    assert_eq!(d["line"], 6);
    assert_eq!(d["column"], 8);
    assert!(d["end_line"].is_u64() && d["end_column"].is_u64(), "{d}");
    assert!(d["message"].as_str().unwrap().contains("nope"), "{d}");
    for key in ["help", "notes"] {
        assert!(d.as_object().unwrap().contains_key(key), "{d}");
    }
}

#[test]
fn check_as_json_reports_every_statement_with_codes_and_places() {
    let out = in_format("json", "check", INVALID);
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = doc.as_array().unwrap();
    assert_eq!(results.len(), 4);
    let codes: Vec<Vec<&str>> = results
        .iter()
        .map(|r| {
            r["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["severity"] == "error")
                .map(|d| d["code"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(codes[1], Vec::<&str>::new());
    assert!(codes[0].contains(&"UNKNOWN_OPTION"), "{codes:?}");
    assert_eq!(codes[2], ["UNKNOWN_CONNECTOR"]);
    assert_eq!(codes[3], ["SYNTAX_ERROR"]);
    let unknown = results[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "UNKNOWN_OPTION")
        .unwrap();
    assert_eq!(
        (&unknown["line"], &unknown["column"]),
        (&Value::from(1), &Value::from(51))
    );
    assert_eq!(unknown["help"], "Did you mean 'topic'?");
    golden("check.json", &text(&out.stdout));
}

#[test]
fn every_format_ends_quietly_when_its_reader_goes_away() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let script = "SHOW CONNECTORS;\n".repeat(200);
    for format in ["table", "json", "jsonl", "csv", "raw"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
            .arg("--catalog")
            .arg(&catalog)
            .args(["--format", format, "run", "-c", &script])
            .env_remove("TRIBUTARY_CATALOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read the first line, as `head -1` does, and go away.
        let mut stdout = child.stdout.take().unwrap();
        let mut first = Vec::new();
        let mut byte = [0u8; 1];
        while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            first.push(byte[0]);
        }
        assert!(!first.is_empty(), "{format}: no first line");
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {stderr}");
        // Status lines of CSV and raw go to standard error as statements end; nothing
        // else may appear there (no panic, no broken-pipe error).
        let unexpected: Vec<&str> = stderr.lines().filter(|l| *l != "SHOW CONNECTORS").collect();
        assert!(unexpected.is_empty(), "{format}: {stderr}");
    }
}

/// As docs/cli.md says: a command has a status line, an INSERT a `count` row.
#[test]
fn json_gives_a_command_its_status_and_an_insert_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(
        &catalog,
        &["--format", "json", "run"],
        "CREATE TABLE s (a BIGINT) WITH (connector = 'blackhole');\nINSERT INTO s VALUES (1), (2), (3);\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results[0]["status"], "CREATE TABLE");
    assert_eq!(results[1]["status"], Value::Null);
    assert_eq!(results[1]["rows"], serde_json::json!([{"count": 3}]));
}
