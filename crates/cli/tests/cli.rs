//! The `tributary` binary: exit codes, caret rendering, output formats, input sources,
//! persistence between runs, and the error a second process gets.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tributary(catalog: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tributary"));
    cmd.arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG");
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const SETUP: &str = "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'k', topic = 'o', type = 'source', format = 'json');
";

#[test]
fn run_persists_and_the_next_run_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let script = dir.path().join("setup.sql");
    std::fs::write(&script, SETUP).unwrap();
    let out = tributary(&catalog, &["run", script.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "CREATE CONNECTION PROFILE\nCREATE TABLE\n"
    );
    let out = tributary(
        &catalog,
        &["--format", "json", "run", "-c", "SHOW TABLES"],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    let rows = &doc[0]["rows"];
    assert_eq!(rows[0]["name"], "orders");
    assert_eq!(rows[0]["profile"], "k");
    let out = tributary(
        &catalog,
        &["--format", "csv", "run", "-"],
        Some("SHOW CONNECTION PROFILES;"),
    );
    assert_eq!(out.status.code(), Some(0));
    let csv = text(&out.stdout);
    assert!(
        csv.starts_with(
            "name,id,connector,description,tables,last_tested,last_result,latency_ms\nk,cp_"
        ),
        "{csv}"
    );
}

#[test]
fn check_reports_every_error_with_carets_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let script = dir.path().join("bad.sql");
    std::fs::write(
        &script,
        "CREATE TABLE t (id BIGINT) WITH (\n    connector = 'kafka',\n    bootstrap_servers = 'b:1',\n    topik = 'x',\n    topic = 'x',\n    type = 'source',\n    format = 'json'\n);\nSELECT * FROM nowhere;\nCREATE TABLE ok (id BIGINT) WITH (connector = 'stdout', format = 'json');\n",
    )
    .unwrap();
    let out = tributary(&catalog, &["check", script.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let expected = format!(
        "error: unknown option 'topik' for table 't' of connector 'kafka'\n --> {}:4:5\n  |\n4 |     topik = 'x',\n  |     ^^^^^\n  = note: DESCRIBE CONNECTOR kafka lists the valid options\n  = help: Did you mean 'topic'?\n",
        script.display()
    );
    assert!(err.starts_with(&expected), "{err}");
    assert!(
        err.contains("error: table 'nowhere' does not exist"),
        "{err}"
    );
    assert!(err.ends_with("2 of 3 statement(s) invalid\n"), "{err}");
    assert!(!catalog.exists(), "check must not create the catalog");
    assert!(text(&out.stdout).is_empty());
}

#[test]
fn check_of_a_valid_script_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = tributary(&dir.path().join("cat"), &["check", "-c", SETUP], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("2 statement(s) valid"));
}

#[test]
fn run_stops_at_the_first_error_with_exit_one() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(
        &catalog,
        &[
            "run",
            "-c",
            "CREATE TABLE a (id BIGINT) WITH (connector = 'stdout', format = 'jsn'); CREATE TABLE b (id BIGINT) WITH (connector = 'stdout', format = 'json');",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error: unknown format 'jsn'"));
    let out = tributary(&catalog, &["run", "-c", "SHOW TABLES"], None);
    assert!(
        !text(&out.stdout).contains("| b "),
        "the statement after the error did not run"
    );
}

#[test]
fn usage_and_io_errors_exit_two() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(&catalog, &["run", "/does/not/exist.sql"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read '/does/not/exist.sql'"));
    let out = tributary(&catalog, &["frobnicate"], None);
    assert_eq!(out.status.code(), Some(2));
    let out = tributary(
        &catalog,
        &["--format", "xml", "run", "-c", "SELECT 1"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_second_process_gets_catalog_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let held = tributary_catalog::SledStore::open(&catalog).unwrap();
    let out = tributary(
        &catalog,
        &["--lock-timeout", "0s", "run", "-c", "SHOW TABLES"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "catalog '{}' is in use by process {} (",
            catalog.display(),
            std::process::id()
        )),
        "{err}"
    );
    drop(held);
    let out = tributary(&catalog, &["run", "-c", "SHOW TABLES"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // Held by another tributary: the message says which process, and which command.
    let mut shell = repl(dir.path(), &catalog);
    let (lines, _all) = read_lines(shell.stdout.take().unwrap());
    shell
        .stdin
        .as_mut()
        .unwrap()
        .write_all(b"SELECT 'open' AS s;\n")
        .unwrap();
    while !lines
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap()
        .contains("open")
    {}
    let out = tributary(
        &catalog,
        &["--lock-timeout", "0s", "run", "-c", "SHOW TABLES"],
        None,
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "catalog '{}' is in use by process {} (tributary repl)",
            catalog.display(),
            shell.id()
        )),
        "{err}"
    );
    shell.kill().unwrap();
    shell.wait().unwrap();
}

/// `tributary repl` on `catalog`, with its history under `home`, all three streams piped.
fn repl(home: &Path, catalog: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .arg("repl")
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn repl_runs_multiline_statements_and_keeps_history() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let mut child = repl(dir.path(), &catalog);
    child.stdin.take().unwrap().write_all(b"CREATE TABLE s (id BIGINT)\n  WITH (connector = 'stdout', format = 'json');\nSHOW TABLES;\n\\q\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("CREATE TABLE"), "{stdout}");
    assert!(stdout.contains("| s    | stdout"), "{stdout}");
    let history = std::fs::read_to_string(dir.path().join("data/tributary/history")).unwrap();
    assert!(history.contains("SHOW TABLES;"), "{history}");
}

/// Read `stdout` on a thread: each line as it comes, and all of it at the end.
fn read_lines(
    stdout: std::process::ChildStdout,
) -> (
    std::sync::mpsc::Receiver<String>,
    std::thread::JoinHandle<String>,
) {
    let (lines, seen) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (seen, reader)
}

#[test]
fn ctrl_c_in_the_repl_cancels_a_connection_test_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    // A listener that never accepts: the connection opens, and nothing ever answers.
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = mute.local_addr().unwrap().port();
    let started = std::time::Instant::now();
    let mut child = repl(dir.path(), &catalog);
    let mut input = child.stdin.take().unwrap();
    writeln!(input, "CREATE CONNECTION PROFILE m WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}', validate = false);").unwrap();
    writeln!(input, "TEST CONNECTION PROFILE m TIMEOUT '60 seconds';").unwrap();
    input.flush().unwrap();
    // Once the CREATE has answered, the TEST is the next line: give it a moment to start,
    // then interrupt it as Ctrl-C would.
    let stdout = child.stdout.take().unwrap();
    let (seen, reader) = read_lines(stdout);
    while !seen
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the REPL did not answer the CREATE")
        .contains("CREATE")
    {}
    std::thread::sleep(std::time::Duration::from_millis(500));
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    writeln!(input, "SHOW CONNECTION PROFILES;\n\\q").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let stdout = reader.join().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(40),
        "the test ran to its timeout"
    );
    assert!(
        stderr.contains("cancelled: the statement was interrupted"),
        "{stderr}"
    );
    // The profile is there, never tested: the cancelled test recorded nothing.
    let row = stdout
        .lines()
        .find(|l| l.contains("| m "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(!row.contains("passed") && !row.contains("failed"), "{row}");
    drop(mute);
}

/// The README's main job: `run examples/quickstart.sql` on a fresh catalog, then again,
/// when the IF NOT EXISTS statements find what the first run stored.
#[test]
fn the_quickstart_runs_and_runs_again() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/quickstart.sql");
    let first = tributary(&catalog, &["run", script], None);
    let (out, err) = (text(&first.stdout), text(&first.stderr));
    assert_eq!(first.status.code(), Some(0), "{err}");
    assert!(
        out.starts_with("CREATE CONNECTION PROFILE\nCREATE TABLE\nCREATE TABLE\n"),
        "{out}"
    );
    assert!(
        err.contains("note: the connection was not tested (validate = false)"),
        "{err}"
    );
    for expected in [
        "| local_kafka | cp_",
        "| customer_totals | kafka     | sink   | local_kafka | json",
        "| orders          | kafka     | source | local_kafka | json",
        "| event_time  | TIMESTAMP(9) | no       | no          | WATERMARK AS event_time - INTERVAL '5' SECOND ",
        "| partition   | INT          | yes      | no          | METADATA FROM 'partition'",
        "| _timestamp  | TIMESTAMP(9) | no       | no          | hidden from SELECT *; the event time: column 'event_time' | event time |",
        "\n    partition INT METADATA FROM 'partition',",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    // Both EXPLAINs keep the hourly window as a grouping key, in Flink's form and in
    // Arroyo's.
    let grouped = out
        .lines()
        .filter(|l| {
            l.contains("Aggregate: groupBy=[[orders.customer_id, tumble(orders.event_time, ")
        })
        .count();
    assert_eq!(grouped, 2, "{out}");
    assert!(
        out.contains("ConnectionSinkExec: table=customer_totals"),
        "{out}"
    );
    // The generator's rows, read for real: the first five, then the whole bounded stream.
    assert!(
        out.contains("| 0       | 0             |\n| 1       | 0             |"),
        "{out}"
    );
    assert!(out.contains("| 1000  | 499500 | 999  |"), "{out}");

    let second = tributary(&catalog, &["run", script], None);
    let (again, err) = (text(&second.stdout), text(&second.stderr));
    assert_eq!(second.status.code(), Some(0), "{err}");
    for skipped in [
        "warning: connection profile 'local_kafka' already exists, skipping",
        "warning: table 'orders' already exists, skipping",
        "warning: table 'customer_totals' already exists, skipping",
    ] {
        assert!(err.contains(skipped), "{err}");
    }
    // The same objects, once each.
    assert_eq!(
        again.matches("| orders          | kafka").count(),
        1,
        "{again}"
    );
    let id = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("| local_kafka"))
            .map(|l| l.split('|').nth(2).unwrap_or_default().trim().to_string())
    };
    assert_eq!(id(&out), id(&again), "the profile was not replaced");
}

#[test]
fn the_repl_streams_an_endless_query_and_ctrl_c_stops_the_query_not_the_repl() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let mut child = repl(dir.path(), &catalog);
    let mut input = child.stdin.take().unwrap();
    writeln!(
        input,
        "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '200');"
    )
    .unwrap();
    // No LIMIT: gathered this could never end, streamed it runs until stopped.
    writeln!(input, "SELECT counter FROM ticks;").unwrap();
    input.flush().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (seen, reader) = read_lines(stdout);
    // Rows arrive while the query runs: wait for the fiftieth.
    while !seen
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("no rows streamed")
        .starts_with("| 50 ")
    {}
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    writeln!(input, "SHOW TABLES;\n\\q").unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let stdout = reader.join().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stopped = stderr
        .lines()
        .find_map(|l| l.strip_prefix("cancelled: the query was stopped after "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let rows: u64 = stopped.split(' ').next().unwrap().parse().unwrap();
    assert!(rows >= 51, "{stderr}");
    // The streamed table is closed off, then the REPL answers the next statement.
    let after = stdout
        .split("| 50 ")
        .nth(1)
        .unwrap_or_else(|| panic!("{stdout}"));
    // The streamed table is closed with its rule and psql's row count.
    assert!(
        after.contains(&format!("+---------+\n({rows} rows)\n+-------+")),
        "{after}"
    );
    assert!(after.contains("| ticks | impulse"), "{after}");
}

#[test]
fn without_a_subcommand_a_piped_script_runs_as_psql_would() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(&catalog, &[], Some("SELECT 41 + 1 AS answer;"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("| 42     |"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F _tributary"),
        ("zsh", "#compdef tributary"),
        ("fish", "complete -c tributary"),
    ] {
        let out = tributary(&dir.path().join("cat"), &["completions", shell], None);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("repl") && script.contains("format"),
            "{shell}"
        );
    }
    // A reader that goes away early ends the output quietly.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["completions", "bash"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "");
    let out = tributary(&dir.path().join("cat"), &["completions", "tcsh"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("possible values"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn quiet_prints_results_and_errors_only() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let script = "CREATE TABLE s (id BIGINT) WITH (connector = 'stdout', format = 'json', event_time_field = 'id');
CREATE TABLE ok (id BIGINT) WITH (connector = 'stdout', format = 'json');
SELECT 1 AS one;";
    let out = tributary(&catalog, &["-q", "run", "-"], Some(script));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stdout.contains("CREATE TABLE"),
        "no status lines: {stdout}"
    );
    assert!(
        stderr.contains("error: option 'event_time_field'"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning:"), "no warnings: {stderr}");
    let out = tributary(&catalog, &["--quiet", "check", "-c", "SELECT 1"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stderr), "", "no summary");
    let out = tributary(&catalog, &["--quiet", "run", "-c", "SELECT 1 AS one"], None);
    assert!(text(&out.stdout).contains("| one |"));
}

#[test]
fn colour_is_used_when_asked_and_never_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let bad = "CREATE TABLE t (id INT) WITH (connector = 'kafak');";
    let out = tributary(&catalog, &["--color", "always", "run", "-c", bad], None);
    let stderr = text(&out.stderr);
    assert!(stderr.starts_with("\x1b[1;31merror\x1b[0m"), "{stderr:?}");
    assert!(stderr.contains("\x1b[1;36m= help:\x1b[0m"), "{stderr:?}");
    let out = tributary(
        &catalog,
        &["--color", "always", "run", "-c", "SELECT 1 AS one"],
        None,
    );
    assert!(
        text(&out.stdout).contains("\x1b[1m one \x1b[0m"),
        "{:?}",
        text(&out.stdout)
    );
    // Piped output is plain by default, and so is --color never.
    for args in [
        &["run", "-c", bad][..],
        &["--color", "never", "run", "-c", bad][..],
    ] {
        let out = tributary(&catalog, args, None);
        assert!(!text(&out.stderr).contains('\x1b'), "{args:?}");
    }
}

#[test]
fn connection_test_stages_that_pass_are_one_line_each_without_a_snippet() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("x.json"), "{\"a\": 1}\n").unwrap();
    let sql = format!(
        "CREATE TABLE f (a INT) WITH (connector = 'filesystem', type = 'source', path = '{}', format = 'json');\nTEST TABLE f;",
        data.display()
    );
    let out = tributary(&dir.path().join("cat"), &["run", "-c", &sql], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("note: connect: local files need no connection ("),
        "{err}"
    );
    assert!(
        lines[1].starts_with("note: locate: 1 file(s) under"),
        "{err}"
    );
    assert!(
        lines[2].starts_with("note: read: read 1 message ("),
        "{err}"
    );
}

/// An Arroyo pipeline script (views over Kafka, a windowed aggregate, a lookup join and
/// an INSERT into a sink) checks clean, offline, and changes nothing.
#[test]
fn the_arroyo_pipeline_example_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/arroyo_pipeline.sql"
    );
    let out = tributary(&catalog, &["check", script], None);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(!catalog.exists(), "check creates no catalog");
    // A broken rule is found: the same pipeline without its window is updating, which
    // neither a join nor an appending sink takes.
    let broken = std::fs::read_to_string(script)
        .unwrap()
        .replace(
            "SELECT tumble(INTERVAL '1' MINUTE) AS w, page",
            "SELECT named_struct('start', max(ts)) AS w, page",
        )
        .replace("GROUP BY w, page", "GROUP BY page");
    let out = tributary(&catalog, &["check"], Some(&broken));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // Both rules the change breaks, each where it is broken.
    for expected in [
        "error: a join reads an updating input (a non-windowed aggregate)\n",
        "= note: streaming rule: an updating input cannot feed either side of a join\n",
        "error: INSERT INTO 'page_counts' writes an updating result (a non-windowed aggregate), but its format appends rows\n",
        "= note: streaming rule: an updating result reaches only a sink whose format is debezium_json\n",
    ] {
        assert!(stderr.contains(expected), "{expected} missing:\n{stderr}");
    }
}

/// `catalog dump` prints a script that recreates the catalog: running it into a new
/// catalog gives one that dumps the same, and no secret is ever printed.
#[test]
fn a_dumped_catalog_restores_to_the_same_catalog_without_printing_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    let script = format!(
        "{SETUP}CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://localhost:6379', password = 'hunter2-in-clear', validate = false);
CREATE CONNECTION PROFILE r2 WITH (connector = 'redis', address = 'redis://localhost:6379', password = '{{{{ REDIS_PASSWORD }}}}', validate = false);
CREATE CONNECTION PROFILE r3 WITH (connector = 'redis', address = 'redis://bob:hunter2-in-url@127.0.0.1:6379', validate = false);
CREATE TABLE kt (a INT) WITH (connector = 'kafka', connection_profile = 'k', topic = 't', type = 'source', format = 'json', client_configs = 'sasl.password=hunter2-in-configs,acks=all');
CREATE TABLE cache (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'r', type = 'sink', target = 'string', 'target.key_prefix' = 'c:', 'target.key_column' = id, format = 'json');
CREATE FUNCTION to_cents(amount DOUBLE) RETURNS BIGINT;
CREATE VIEW big AS SELECT id, to_cents(amount) AS cents FROM orders WHERE amount > 100;
CREATE VIEW bigger AS SELECT id FROM big WHERE cents > 100000;
"
    );
    let out = tributary(&first, &["run"], Some(&script));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = tributary(&first, &["catalog", "dump"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dump = text(&out.stdout);
    assert!(!dump.contains("hunter2"), "a secret was printed:\n{dump}");
    assert!(
        dump.contains("'{{ TRIBUTARY_SECRET_R_PASSWORD }}'"),
        "{dump}"
    );
    assert!(dump.contains("--   TRIBUTARY_SECRET_R_PASSWORD"), "{dump}");
    // Credentials inside other values become references in place.
    for (written, variable) in [
        (
            "'redis://{{ TRIBUTARY_SECRET_R3_ADDRESS }}@127.0.0.1:6379'",
            "--   TRIBUTARY_SECRET_R3_ADDRESS\n",
        ),
        (
            "'sasl.password={{ TRIBUTARY_SECRET_KT_CLIENT_CONFIGS }},acks=all'",
            "--   TRIBUTARY_SECRET_KT_CLIENT_CONFIGS\n",
        ),
    ] {
        assert!(dump.contains(written), "{written} missing:\n{dump}");
        assert!(dump.contains(variable), "{variable} missing:\n{dump}");
    }
    assert!(
        dump.contains("'{{ REDIS_PASSWORD }}'"),
        "references stay as written:\n{dump}"
    );
    // Functions before the views that call them, a view after the view it reads.
    let at = |s: &str| {
        dump.find(s)
            .unwrap_or_else(|| panic!("{s} missing:\n{dump}"))
    };
    assert!(at("CREATE FUNCTION") < at("CREATE VIEW \"big\""));
    assert!(at("CREATE VIEW \"big\"") < at("CREATE VIEW \"bigger\""));
    assert!(at("CREATE CONNECTION PROFILE \"k\"") < at("CREATE TABLE \"orders\""));

    let out = tributary(&second, &["run"], Some(&dump));
    assert!(
        out.status.success(),
        "the dump does not run:\n{}",
        text(&out.stderr)
    );
    let again = text(&tributary(&second, &["catalog", "dump"], None).stdout);
    let statements = |d: &str| -> Vec<String> {
        d.lines()
            .filter(|l| !l.starts_with("--"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(statements(&again), statements(&dump));
    // The restored catalog works: the views plan.
    let out = tributary(&second, &["check", "-c", "SELECT * FROM bigger"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// `check` judges pipelines, which read forever; a query that a preview would refuse as
/// never-ending is valid there, and `check` says, as a note, that `run` would refuse it
/// and how to bound it.
#[test]
fn check_notes_that_a_preview_of_an_endless_read_would_not_finish() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let out = tributary(
        &catalog,
        &[
            "run",
            "-c",
            "CREATE TABLE endless WITH (connector = 'impulse', event_rate = 10)",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sql = "SELECT count(*) FROM endless";
    let checked = tributary(&catalog, &["check", "-c", sql], None);
    let err = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with("note: as a preview (run, the shell, POST /sql): table 'endless' (connector 'impulse') never ends, so this query would never finish\n"),
        "{err}"
    );
    assert!(err.contains("help: Bound the read: add LIMIT n"), "{err}");
    // run refuses the same query, with the same words.
    let ran = tributary(&catalog, &["run", "-c", sql], None);
    assert_eq!(ran.status.code(), Some(1));
    assert!(
        text(&ran.stderr).starts_with("error: table 'endless' (connector 'impulse') never ends, so this query would never finish\n"),
        "{}",
        text(&ran.stderr)
    );
    // A bounded query gets no such note.
    let bounded = tributary(
        &catalog,
        &["check", "-c", "SELECT * FROM endless LIMIT 3"],
        None,
    );
    assert!(
        !text(&bounded.stderr).contains("as a preview"),
        "{}",
        text(&bounded.stderr)
    );
}

/// `check` runs nothing, so a permission only running needs is a note there: an INSERT
/// into a local file sink checks clean, and `run` without --allow-file-writes refuses it.
#[test]
fn check_notes_what_only_running_needs_and_run_refuses_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let create = format!(
        "CREATE TABLE outf (a BIGINT) WITH (connector = 'filesystem', type = 'sink', path = '{}', format = 'json')",
        out_dir.display()
    );
    let out = tributary(&catalog, &["run", "-c", &create], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sql = "INSERT INTO outf SELECT 1";
    let checked = tributary(&catalog, &["check", "-c", sql], None);
    let err = text(&checked.stderr);
    assert_eq!(checked.status.code(), Some(0), "{err}");
    assert!(
        err.starts_with("note: running it needs --allow-file-writes: INSERT INTO table 'outf' would write files on this machine, which this session does not allow\n"),
        "{err}"
    );
    let ran = tributary(&catalog, &["run", "-c", sql], None);
    assert_eq!(ran.status.code(), Some(1));
    assert!(
        text(&ran.stderr)
            .starts_with("error: INSERT INTO table 'outf' would write files on this machine"),
        "{}",
        text(&ran.stderr)
    );
    assert_eq!(std::fs::read_dir(&out_dir).unwrap().count(), 0);
}

/// `check` judges a pipeline as Arroyo plans it, every source a stream, files included:
/// an updating join of two file sources, and a join of two unwindowed file streams
/// without an equality, are refused; `run` previews both, a finite file being a table.
#[test]
fn check_judges_file_sources_as_streams_and_run_previews_them_as_tables() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let file = dir.path().join("events.json");
    std::fs::write(
        &file,
        "{\"k\": \"a\", \"ts\": \"2026-01-01T00:00:01Z\"}\n{\"k\": \"b\", \"ts\": \"2026-01-01T00:00:02Z\"}\n",
    )
    .unwrap();
    let setup = format!(
        "CREATE TABLE a (k TEXT, ts TIMESTAMP) WITH (connector = 'single_file', path = '{p}', type = 'source', format = 'json'); \
         CREATE TABLE b (k TEXT, ts TIMESTAMP) WITH (connector = 'single_file', path = '{p}', type = 'source', format = 'json')",
        p = file.display()
    );
    let out = tributary(&catalog, &["run", "-c", &setup], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (sql, refusal, rows) in [
        (
            "SELECT a.k, c.n FROM a JOIN (SELECT k, count(*) AS n FROM b GROUP BY k) c ON a.k = c.k ORDER BY a.k",
            "error: a join reads an updating input (a non-windowed aggregate)\n",
            "| a | 1 |\n| b | 1 |",
        ),
        (
            "SELECT a.k AS x, b.k AS y FROM a JOIN b ON a.ts < b.ts",
            "error: a join of two unbounded, unwindowed inputs has no equality condition\n",
            "| a | b |",
        ),
    ] {
        let checked = tributary(&catalog, &["check", "-c", sql], None);
        let err = text(&checked.stderr);
        assert_eq!(checked.status.code(), Some(1), "{sql}: {err}");
        assert!(err.starts_with(refusal), "{sql}: {err}");
        assert!(
            err.contains("check judges the query as a pipeline"),
            "{err}"
        );
        let ran = tributary(&catalog, &["run", "-c", sql], None);
        assert!(ran.status.success(), "{sql}: {}", text(&ran.stderr));
        assert!(
            text(&ran.stdout).contains(rows),
            "{sql}: {}",
            text(&ran.stdout)
        );
    }
}

/// A table that streams (its rows come slower than the printer holds them) is closed off
/// with psql's count on stderr, in the singular for one row.
#[test]
fn a_streamed_result_of_one_row_says_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(
        &catalog,
        &[
            "run",
            "-c",
            "CREATE TABLE slow WITH (connector = 'impulse', event_rate = '10'); \
             SELECT counter FROM slow WHERE counter = 15 LIMIT 1",
        ],
        None,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("| 15      |"), "{stdout}");
    assert_eq!(stderr.trim(), "(1 row)", "{stderr}");
}

/// A table written in a deprecated spelling (a column name as a string) is dumped in the
/// current one, so the dump restores without a warning.
#[test]
fn a_dump_writes_current_option_spellings() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here"), dir.path().join("there"));
    let made = tributary(
        &here,
        &[
            "run",
            "-c",
            "CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://localhost:6379', validate = false); \
             CREATE TABLE cache (\"Key\" TEXT NOT NULL, f TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', \
             connection_profile = 'r', type = 'sink', target = 'hash', 'target.key_prefix' = 'c:', \
             'target.key_column' = 'Key', 'target.field_column' = 'f', format = 'json'); \
             CREATE TABLE files (x BIGINT) WITH (connector = 'filesystem', \
             path = '/tmp/tributary-dump-spelling', type = 'sink', format = 'json', \
             'rolling_policy.interval' = '5 minutes')",
        ],
        None,
    );
    assert!(
        text(&made.stderr).contains("that form is deprecated"),
        "{}",
        text(&made.stderr)
    );
    let dumped = tributary(&here, &["catalog", "dump"], None);
    let script = text(&dumped.stdout);
    assert!(
        script.contains("'target.key_column' = \"Key\",")
            && script.contains("'target.field_column' = f,")
            && script.contains("'rolling_policy.interval' = INTERVAL '300' SECOND"),
        "{script}"
    );
    let restored = tributary(&there, &["run", "-"], Some(&script));
    let stderr = text(&restored.stderr);
    assert!(restored.status.success(), "{stderr}");
    assert!(!stderr.contains("deprecated"), "{stderr}");
    // The restored catalog dumps the same script.
    let again = tributary(&there, &["catalog", "dump"], None);
    assert_eq!(text(&again.stdout), script);
}

/// A refused column type is the root cause: what refers to the column, or the table's
/// columns as a whole, is not reported after it.
#[test]
fn a_refused_column_type_is_reported_alone() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    for (sql, errors) in [
        (
            "CREATE TABLE s (a UUID, ts SMALLINT, n BIGINT GENERATED ALWAYS AS (a + 1), PRIMARY KEY (a), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (connector = 'kafka', bootstrap_servers = 'h:1', topic = 's', type = 'source', format = 'json');",
            2,
        ),
        (
            "CREATE TABLE s (a UUID) WITH (connector = 'kafka', bootstrap_servers = 'h:1', topic = 's', type = 'source', format = 'json');",
            1,
        ),
        (
            "CREATE TABLE i (counter SMALLINT, subtask_index BIGINT) WITH (connector = 'impulse', event_rate = '1');",
            1,
        ),
    ] {
        let out = tributary(&catalog, &["check", "-c", sql], None);
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert_eq!(said.matches("error:").count(), errors, "{sql}\n{said}");
        assert!(
            said.contains("which cannot be used in a connection table"),
            "{said}"
        );
    }
}
