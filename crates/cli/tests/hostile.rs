//! Hostile input: every script here once crashed the process, ran for minutes, grew
//! gigabytes or printed hundreds of megabytes. Each now gets a diagnostic in bounded time,
//! with bounded output, from the real binary (`check` connects nowhere and writes nothing).
//! The time bounds are generous for unoptimised builds on a loaded 2-core machine; the
//! failures they guard against took 10 s to forever.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run of `tributary` did.
struct Ran {
    code: Option<i32>,
    stderr: String,
    stdout: String,
    elapsed: Duration,
}

/// `tributary <args>` on a fresh catalog, killed after `limit`.
fn tributary(dir: &Path, args: &[&str], limit: Duration) -> Ran {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(dir.join("catalog"))
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read both pipes while waiting, so a flood of output cannot block the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tributary {args:?} ran longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    Ran {
        code: status.code(),
        stderr,
        stdout: String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned(),
        elapsed: started.elapsed(),
    }
}

/// `tributary check` of `script`, which must fail with `expected` in its diagnostics,
/// within `seconds`, printing at most `max_stderr` bytes.
fn check_refuses(script: &str, expected: &str, seconds: u64, max_stderr: usize) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hostile.sql");
    std::fs::write(&file, script).unwrap();
    let ran = tributary(
        dir.path(),
        &["check", file.to_str().unwrap()],
        Duration::from_secs(seconds),
    );
    let head: String = ran.stderr.chars().take(2000).collect();
    assert_eq!(ran.code, Some(1), "{head}");
    assert!(
        ran.stderr.contains(expected),
        "expected '{expected}' in:\n{head}"
    );
    assert!(
        !ran.stderr.contains("panicked") && !ran.stderr.contains("overflow"),
        "{head}"
    );
    assert!(
        ran.stderr.len() <= max_stderr,
        "{} bytes of diagnostics",
        ran.stderr.len()
    );
    assert!(
        !dir.path().join("catalog").exists(),
        "check wrote a catalog"
    );
    ran
}

const KAFKA: &str = "connector = 'kafka', bootstrap_servers = 'b:1', topic = 't', type = 'source'";

fn nested(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

fn chain(term: &str, op: &str, n: usize) -> String {
    vec![term; n].join(op)
}

#[test]
fn deeply_nested_types_are_refused_not_a_stack_overflow() {
    for (what, ty) in [
        ("STRUCT", nested("STRUCT<x ", "INT", ">", 300)),
        ("MAP", nested("MAP(TEXT, ", "INT", ")", 300)),
        ("array", format!("INT{}", "[]".repeat(1100))),
    ] {
        let script = format!("CREATE TABLE t (a {ty}) WITH ({KAFKA}, format = 'json');");
        let ran = check_refuses(&script, "the statement is nested too deeply", 20, 4_000);
        assert!(
            ran.stderr.contains("more than 64 levels deep"),
            "{what}: {}",
            ran.stderr
        );
    }
}

#[test]
fn long_operator_chains_are_refused_before_any_recursion() {
    let deep = "an expression more than 256 levels deep";
    let nested_deep = "nested more than 64 levels deep";
    for (script, expected) in [
        (
            format!(
                "CREATE TABLE t (a INT, b INT GENERATED ALWAYS AS ({})) WITH ({KAFKA}, format = 'json');",
                chain("a", " + ", 2800)
            ),
            deep,
        ),
        (
            format!(
                "CREATE TABLE t (ts TIMESTAMP NOT NULL, WATERMARK FOR ts AS ts{}) WITH ({KAFKA}, format = 'json');",
                " - INTERVAL '1' SECOND".repeat(2800)
            ),
            deep,
        ),
        (format!("SELECT {};", chain("1", " + ", 1100)), deep),
        (
            format!("SELECT 1 WHERE {};", chain("1 = 1", " OR ", 2000)),
            deep,
        ),
        // Parentheses are nesting, counted by their own, smaller limit.
        (
            format!("SELECT {};", nested("(", "1", ")", 1000)),
            nested_deep,
        ),
    ] {
        let ran = check_refuses(&script, "nested too deeply", 20, 4_000);
        assert!(ran.stderr.contains(expected), "{expected}: {}", ran.stderr);
    }
}

#[test]
fn expressions_just_inside_the_limits_plan_and_run() {
    // The deepest statements the limits let through run on any thread: planning grows its
    // own stack, and the rest fits in the main thread's.
    let dir = tempfile::tempdir().unwrap();
    let sum = chain("a", " + ", 200);
    let script = format!(
        "CREATE TABLE t (a BIGINT, b BIGINT GENERATED ALWAYS AS ({sum})) WITH ({KAFKA}, format = 'json', validate = false);\nSELECT {sum} AS s FROM (VALUES (CAST(1 AS BIGINT))) AS v(a);\n"
    );
    let file = dir.path().join("deep.sql");
    std::fs::write(&file, script).unwrap();
    let ran = tributary(
        dir.path(),
        &["--format", "csv", "run", file.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    // 200 terms of a = 1.
    assert_eq!(ran.stdout, "s\n200\n", "{}", ran.stderr);
}

#[test]
fn exponential_schemas_stop_at_the_field_limit() {
    // 20 definitions, each referring to the next twice: 2^20 fields if expanded.
    let mut defs = String::new();
    for i in 0..20 {
        let _ = write!(
            defs,
            r##""d{i}": {{"type": "object", "properties": {{"a": {{"$ref": "#/$defs/d{n}"}}, "b": {{"$ref": "#/$defs/d{n}"}}}}}}, "##,
            n = i + 1
        );
    }
    defs.push_str(r#""d20": {"type": "string"}"#);
    let json = format!(
        r##"{{"type": "object", "properties": {{"root": {{"$ref": "#/$defs/d0"}}}}, "$defs": {{{defs}}}}}"##
    );
    let script =
        format!("CREATE TABLE t WITH ({KAFKA}, format = 'json', 'json.schema' = '{json}');");
    let ran = check_refuses(&script, "expands to more than 10000 fields", 20, 4_000);
    assert!(
        !ran.stderr.contains("declares no columns"),
        "a follow-on error: {}",
        ran.stderr
    );

    // The same shape in Avro: 22 records, each using the next twice.
    fn record(i: usize) -> String {
        if i == 22 {
            return "\"string\"".into();
        }
        let next = if i + 1 < 22 {
            format!("\"R{}\"", i + 1)
        } else {
            "\"string\"".into()
        };
        format!(
            r#"{{"type": "record", "name": "R{i}", "fields": [{{"name": "a", "type": {}}}, {{"name": "b", "type": {next}}}]}}"#,
            record(i + 1)
        )
    }
    let script = format!(
        "CREATE TABLE t WITH ({KAFKA}, format = 'avro', 'avro.schema' = '{}');",
        record(0)
    );
    check_refuses(&script, "expands to more than 10000 fields", 20, 4_000);
}

#[test]
fn reference_chains_stop_at_the_depth_limit() {
    let mut defs = String::new();
    for i in 0..4000 {
        let _ = write!(defs, r##""d{i}": {{"$ref": "#/$defs/d{}"}}, "##, i + 1);
    }
    defs.push_str(r#""d4000": {"type": "string"}"#);
    let json = format!(
        r##"{{"type": "object", "properties": {{"root": {{"$ref": "#/$defs/d0"}}}}, "$defs": {{{defs}}}}}"##
    );
    let script =
        format!("CREATE TABLE t WITH ({KAFKA}, format = 'json', 'json.schema' = '{json}');");
    check_refuses(&script, "is nested more than 64 levels deep", 20, 4_000);
}

#[test]
fn scripts_are_split_in_linear_time() {
    // Blank and comment lines before a statement, and thousands of statements on one line.
    let mut blank = "\n".repeat(320_000);
    blank.push_str(&"-- a comment\n".repeat(160_000));
    blank.push_str("SELECT * FROM nowhere;");
    let ran = check_refuses(&blank, "table 'nowhere' does not exist", 30, 4_000);
    assert!(
        ran.stderr.contains(":480001:"),
        "{}",
        ran.stderr.lines().nth(1).unwrap_or("")
    );

    let one_line = "SHOW TABLES; ".repeat(8_000) + "SELECT * FROM nowhere;";
    let ran = check_refuses(&one_line, "table 'nowhere' does not exist", 60, 100_000);
    assert!(
        ran.stderr.contains("1 of 8001 statement(s) invalid"),
        "{}",
        ran.stderr
    );
    // The snippet is a window of the 200 KB line, not the line.
    assert!(ran.stderr.len() < 100_000);
}

#[test]
fn huge_and_numerous_options_are_bounded() {
    // A key of a megabyte: no did-you-mean over it, and it is not quoted whole.
    let key = "k".repeat(1_000_000);
    let ran = check_refuses(
        &format!("CREATE TABLE t (a INT) WITH ({KAFKA}, format = 'json', {key} = 'x');"),
        "unknown option 'kkkk",
        20,
        8_000,
    );
    assert!(
        ran.stderr.contains("(1000000 characters)"),
        "{}",
        &ran.stderr[..500]
    );

    // A statement over the size limit.
    let key = "k".repeat(2_000_000);
    check_refuses(
        &format!("CREATE TABLE t (a INT) WITH ({KAFKA}, {key} = 'x');"),
        "more than the limit of 1048576",
        20,
        4_000,
    );

    // Too many options, and many unknown ones under the limit.
    let many: Vec<String> = (0..16_000).map(|i| format!("opt{i} = 'x'")).collect();
    check_refuses(
        &format!(
            "CREATE TABLE t (a INT) WITH ({KAFKA}, {});",
            many.join(", ")
        ),
        "more than the limit of 1000",
        20,
        4_000,
    );
    let ran = check_refuses(
        &format!(
            "CREATE TABLE t (a INT) WITH ({KAFKA}, format = 'json', {});",
            many[..990].join(", ")
        ),
        "unknown option 'opt0'",
        30,
        60_000,
    );
    assert!(
        ran.stderr
            .contains("more diagnostic(s) of this statement are not shown"),
        "{}",
        &ran.stderr[ran.stderr.len().saturating_sub(600)..]
    );

    // A long array value (under the statement limit): read once, masked once.
    let items = vec!["'x'"; 100_000].join(", ");
    check_refuses(
        &format!(
            "CREATE TABLE t (a INT) WITH ({KAFKA}, format = 'json', headers = [{items}], topik = 'x');"
        ),
        "unknown option 'topik'",
        20,
        8_000,
    );

    // One key given 900 times on one line: capped, and each snippet a window.
    let dup = vec!["topic = 'x'"; 900].join(", ");
    check_refuses(
        &format!(
            "CREATE TABLE t (a INT) WITH (connector = 'kafka', bootstrap_servers = 'b:1', {dup});"
        ),
        "option 'topic' is specified more than once",
        20,
        60_000,
    );
}

#[test]
fn a_hundred_thousand_missing_tables_print_a_bounded_report() {
    let names: Vec<String> = (0..100_000).map(|i| format!("t{i}")).collect();
    let ran = check_refuses(
        &format!("DROP TABLE {};", names.join(", ")),
        "table 't0' does not exist",
        60,
        60_000,
    );
    assert!(
        ran.stderr
            .contains("99950 more diagnostic(s) of this statement are not shown"),
        "{}",
        &ran.stderr[ran.stderr.len().saturating_sub(600)..]
    );
}

#[test]
fn a_script_of_many_failing_statements_reports_a_bounded_number() {
    let script = "SELECT * FROM nowhere;\n".repeat(2_000);
    let ran = check_refuses(&script, "table 'nowhere' does not exist", 120, 400_000);
    assert!(
        ran.stderr
            .contains("1500 more diagnostic(s) were not shown"),
        "{}",
        &ran.stderr[ran.stderr.len().saturating_sub(600)..]
    );
    assert!(ran.stderr.contains("2000 of 2000 statement(s) invalid"));
}

#[test]
fn schema_files_must_be_regular_and_small() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let big = dir.path().join("big.avsc");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(17 * 1024 * 1024).unwrap();
    for (option, path, expected) in [
        ("avro.schema_file", "/dev/zero", "it is not a regular file"),
        (
            "avro.schema_file",
            fifo.to_str().unwrap(),
            "it is not a regular file",
        ),
        (
            "avro.schema_file",
            big.to_str().unwrap(),
            "more than the limit of 16777216 bytes",
        ),
        (
            "protobuf.descriptor_file",
            "/dev/zero",
            "it is not a regular file",
        ),
        (
            "protobuf.schema_file",
            fifo.to_str().unwrap(),
            "it is not a regular file",
        ),
    ] {
        let format = option.split('.').next().unwrap();
        let message = if format == "protobuf" {
            ", 'protobuf.message' = 'M'"
        } else {
            ""
        };
        let ran = check_refuses(
            &format!(
                "CREATE TABLE t WITH ({KAFKA}, format = '{format}', '{option}' = '{path}'{message});"
            ),
            expected,
            20,
            4_000,
        );
        assert!(ran.elapsed < Duration::from_secs(20));
        assert!(
            !ran.stderr.contains("declares no columns"),
            "a follow-on error: {}",
            ran.stderr
        );
    }
}

#[test]
fn scripts_themselves_are_read_only_from_regular_files() {
    let dir = tempfile::tempdir().unwrap();
    let ran = tributary(dir.path(), &["check", "/dev/zero"], Duration::from_secs(20));
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("it is not a regular file"),
        "{}",
        ran.stderr
    );
}
