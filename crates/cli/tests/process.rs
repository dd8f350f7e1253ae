//! The binary among other processes and pipes: `check` beside a REPL that holds the
//! catalog, waiting for a catalog in use, results printed as statements complete, a reader
//! that goes away, unknown REPL commands, and `COPY ... TO` refused unless allowed.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn command(catalog: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tributary"));
    cmd.arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG");
    cmd
}

fn run(catalog: &Path, args: &[&str]) -> Output {
    command(catalog, args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A REPL holding `catalog`, once it has said hello (so it holds the lock).
fn repl_holding(dir: &Path, catalog: &Path) -> Child {
    let mut child = command(catalog, &["repl"])
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("HOME", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("Tributary"), "{line}");
    child
}

fn quit(mut child: Child) {
    let _ = child.stdin.take().unwrap().write_all(b"\\q\n");
    let status = child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn check_reads_the_catalog_while_a_repl_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let setup = run(
        &catalog,
        &[
            "run",
            "-c",
            "CREATE TABLE s (id BIGINT) WITH (connector = 'stdout', format = 'json')",
        ],
    );
    assert!(setup.status.success(), "{}", text(&setup.stderr));
    let repl = repl_holding(dir.path(), &catalog);
    let started = Instant::now();
    let out = run(
        &catalog,
        &[
            "check",
            "-c",
            "INSERT INTO s SELECT 1 AS id; DROP TABLE s; CREATE TABLE s2 (id BIGINT) WITH (connector = 'stdout', format = 'json')",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("3 statement(s) valid"));
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "check waited for the lock"
    );
    // A writer, though, waits for the REPL and then says the catalog is in use.
    let started = Instant::now();
    let out = run(
        &catalog,
        &["--lock-timeout", "1s", "run", "-c", "SHOW TABLES"],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert!(err.contains("waiting for catalog"), "{err}");
    assert!(
        err.contains("(tributary repl) (waited 1s)") && err.contains("is in use by process "),
        "{err}"
    );
    assert!(
        !err.contains("Os {") && !err.contains("WouldBlock"),
        "{err}"
    );
    quit(repl);
    // And nothing the check did was stored.
    let out = run(&catalog, &["--format", "csv", "run", "-c", "SHOW TABLES"]);
    assert_eq!(
        text(&out.stdout).lines().count(),
        2,
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_waiting_process_gets_the_catalog_when_it_is_released() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let repl = repl_holding(dir.path(), &catalog);
    let waiter = command(
        &catalog,
        &["--lock-timeout", "30s", "run", "-c", "SHOW TABLES"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    quit(repl);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("waiting for catalog"));
}

#[test]
fn processes_racing_for_a_catalog_get_it_or_a_clear_in_use_error() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let racers: Vec<Child> = (0..6)
        .map(|i| {
            command(
                &catalog,
                &[
                    "--lock-timeout",
                    "0s",
                    "run",
                    "-c",
                    &format!(
                        "CREATE TABLE t{i} (id BIGINT) WITH (connector = 'stdout', format = 'json')"
                    ),
                ],
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for racer in racers {
        let out = racer.wait_with_output().unwrap();
        let err = text(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            // The holder may have exited by the time its record is read.
            Some(2) => assert!(
                err.contains("is in use by process ")
                    || err.contains("is in use by another process"),
                "{err}"
            ),
            other => panic!("{other:?}: {err}"),
        }
        assert!(
            !err.contains("Os {") && !err.contains("WouldBlock"),
            "{err}"
        );
    }
}

#[test]
fn run_prints_each_result_as_its_statement_completes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    // A listener that never answers: the test after the first statement takes its timeout.
    let mute = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = mute.local_addr().unwrap().port();
    let script = format!(
        "CREATE CONNECTION PROFILE m WITH (connector = 'redis', address = 'redis://127.0.0.1:{port}', validate = false);\nTEST CONNECTION PROFILE m TIMEOUT '6 seconds';\n"
    );
    let started = Instant::now();
    let mut child = command(&catalog, &["run", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    // The CREATE's result arrived while the TEST was still waiting.
    assert_eq!(first, "CREATE CONNECTION PROFILE\n");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the TEST had already ended"
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    drop(mute);
}

#[test]
fn unknown_repl_commands_get_a_short_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(&dir.path().join("catalog"), &["repl"])
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"\\zz\n\\dq foo\nSHOW TABLES;\n\\q\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("error: unknown command"))
            .collect::<Vec<_>>(),
        vec![
            "error: unknown command '\\zz'; \\? lists the commands",
            "error: unknown command '\\dq'; \\? lists the commands"
        ],
        "{err}"
    );
    assert!(!err.contains("syntax error"), "{err}");
    assert!(text(&out.stdout).contains("| name"), "the REPL went on");
}

#[test]
fn copy_to_writes_files_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let target = dir.path().join("out.csv");
    let copy = format!(
        "COPY (SELECT 1 AS a) TO '{}' STORED AS CSV",
        target.display()
    );
    let out = run(&catalog, &["run", "-c", &copy]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("would write a file, which this session does not allow"),
        "{err}"
    );
    assert!(err.contains("--allow-file-writes"), "{err}");
    assert!(!target.exists());
    let out = run(&catalog, &["--allow-file-writes", "run", "-c", &copy]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(target.exists());
}
