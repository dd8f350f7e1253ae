//! The interactive shell driven through a pseudo-terminal, as a user at a terminal
//! drives it: Tab completion at several cursor positions, hints, backslash commands,
//! expanded display, `\o`, `\i`, `\e`, `\timing`, and Ctrl-C.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::server::{Server, TOKEN};
use rexpect::session::PtySession;
use std::path::Path;
use std::process::Command;

const SETUP: &str = "CREATE CONNECTION PROFILE prod WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'o', type = 'source', format = 'json');
CREATE TABLE order_lines (line_id BIGINT, qty INT) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'l', type = 'source', format = 'json');
CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '500');";

/// A catalog with the tables above, in `dir`.
fn catalog(dir: &Path) -> std::path::PathBuf {
    let catalog = dir.join("cat");
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(&catalog)
        .args(["run", "-c", SETUP])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    catalog
}

/// The shell over `catalog` in an 80×24 pseudo-terminal, at its first prompt; results
/// are not paged unless `env` names a `PAGER`.
fn shell(dir: &Path, catalog: &Path, env: &[(&str, &str)]) -> PtySession {
    shell_with(dir, &["--catalog", &catalog.to_string_lossy()], env)
}

/// The shell with `args` before `repl`, as [`shell`] starts it.
fn shell_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> PtySession {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("stty cols 80 rows 24 && exec \"$@\" repl")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_tributary"))
        .args(args)
        .env("PAGER", "cat")
        .env("TERM", "xterm")
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env_remove("NO_COLOR")
        .env_remove("TRIBUTARY_CATALOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut p = rexpect::session::spawn_command(cmd, Some(20_000)).unwrap();
    fresh_prompt(&mut p);
    p
}

/// What the line editor prints when it hands a line over: bracketed paste off.
const LINE_DONE: &str = "\x1b[?2004l";

/// Type `keys` (sent at once, as a paste or a fast typist would).
fn typed(p: &mut PtySession, keys: &str) {
    p.send(keys).unwrap();
    p.flush().unwrap();
}

/// What the line editor prints when it starts reading a line: bracketed paste on.
const LINE_START: &str = "\x1b[?2004h";

/// Wait for a new prompt (not a redraw of the current one). Keys typed before it may be
/// lost: the editor flushes pending input as it enters raw mode.
fn fresh_prompt(p: &mut PtySession) {
    p.exp_string(LINE_START).unwrap();
    p.exp_string("tributary> ").unwrap();
}

/// Type `SELECT  FROM order_lines`, move the cursor back to after SELECT, and expect
/// Tab to list the table's columns.
fn columns_complete_before_from(p: &mut PtySession) {
    typed(p, "SELECT  FROM order_lines");
    // Left arrow over ` FROM order_lines`.
    typed(p, &"\x1b[D".repeat(" FROM order_lines".len()));
    typed(p, "\t\t");
    p.exp_string("line_id").unwrap();
    p.exp_string("qty").unwrap();
    clear(p);
}

/// Clear the line being edited (Ctrl-C at the prompt) and wait for a fresh prompt.
fn clear(p: &mut PtySession) {
    p.send_control('c').unwrap();
    fresh_prompt(p);
}

#[test]
fn tab_completes_names_options_and_values_where_they_fit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let mut p = shell(dir.path(), &catalog, &[]);
    // Two tables start with `ord`: the first Tab takes the common part, the second lists.
    typed(&mut p, "SELECT * FROM ord\t\t");
    p.exp_string("order_lines").unwrap();
    p.exp_string("orders").unwrap();
    clear(&mut p);
    // One match: completed in place.
    typed(&mut p, "DROP CONNECTION PROFILE pr\t");
    p.exp_string("prod").unwrap();
    clear(&mut p);
    // A dotted option key of the connector named so far, then its values.
    typed(
        &mut p,
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', source.off\t",
    );
    p.exp_string("source.offset").unwrap();
    typed(&mut p, " = \t\t");
    p.exp_string("'earliest'").unwrap();
    p.exp_string("'group'").unwrap();
    clear(&mut p);
    // A completed value stays as it is, however often Tab is pressed after it: the
    // statement runs as completed.
    typed(
        &mut p,
        "CREATE TABLE tabbed (id INT) WITH (connector = 'kafka', connection_profile = 'pr\t\t\t",
    );
    typed(
        &mut p,
        ", topic = 't', type = 'source', source.offset = 'ea\t\t\t",
    );
    typed(&mut p, ", format = 'json');\r");
    p.exp_string("CREATE TABLE").unwrap();
    fresh_prompt(&mut p);
    p.send_line("SHOW CREATE TABLE tabbed;").unwrap();
    p.exp_string("connection_profile = 'prod',").unwrap();
    p.exp_string("'source.offset' = 'earliest',").unwrap();
    fresh_prompt(&mut p);
    // Columns of the table the query reads, with the cursor before FROM.
    columns_complete_before_from(&mut p);
    // A statement over two lines: the first line decides what the second completes.
    p.send_line("CREATE TABLE t (id INT)").unwrap();
    p.exp_string(LINE_START).unwrap();
    p.exp_string("-> ").unwrap();
    typed(&mut p, "WITH (connector = 'kafka', form\t");
    p.exp_string("format").unwrap();
    clear(&mut p);
    // Backslash commands complete too.
    typed(&mut p, "\\tim\t");
    p.exp_string("\\timing").unwrap();
    clear(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
}

/// Wait until `server` has listed its tables `times` times, and the shell has had a
/// moment to take the answer in.
fn server_listed(server: &Server, times: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while server
        .log()
        .matches("method=GET path=/api/v1/connection_tables")
        .count()
        < times
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the shell never listed the server's tables: {}",
            server.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
}

#[test]
fn over_a_server_tab_completes_its_tables_columns_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let server = Server::start(&catalog, dir.path().join("server.log"));
    let mut p = shell_with(
        dir.path(),
        &["--server", &server.url, "--token", TOKEN],
        &[],
    );
    // The names arrive in the background, once the server has answered.
    server_listed(&server, 1);
    typed(&mut p, "SELECT * FROM ord\t\t");
    p.exp_string("order_lines").unwrap();
    p.exp_string("orders").unwrap();
    clear(&mut p);
    columns_complete_before_from(&mut p);
    typed(&mut p, "DROP CONNECTION PROFILE pr\t");
    p.exp_string("prod").unwrap();
    clear(&mut p);
    // A table created through the shell is offered after that input.
    p.send_line("CREATE TABLE zebra WITH (connector = 'impulse', event_rate = '1');")
        .unwrap();
    p.exp_string("CREATE TABLE").unwrap();
    fresh_prompt(&mut p);
    server_listed(&server, 2);
    typed(&mut p, "SELECT * FROM zeb\t");
    p.exp_string("zebra").unwrap();
    clear(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn hints_complete_a_name_or_describe_an_option_dimmed() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let mut p = shell(dir.path(), &catalog, &[]);
    typed(&mut p, "DESCRIBE order_l");
    p.exp_string("\x1b[2mines\x1b[0m").unwrap();
    // Right arrow accepts the hint: the statement describes order_lines.
    typed(&mut p, "\x1b[C;\r");
    p.exp_string("line_id").unwrap();
    fresh_prompt(&mut p);
    // Where a value is to be typed: the option's type, default and values.
    typed(
        &mut p,
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', source.offset = ",
    );
    p.exp_string("-- string, default latest").unwrap();
    clear(&mut p);
    // NO_COLOR: the same hint, undecorated.
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
    let mut p = shell(dir.path(), &catalog, &[("NO_COLOR", "1")]);
    typed(&mut p, "DESCRIBE order_l");
    let (before, _) = p.exp_regex("ines").unwrap();
    assert!(!before.contains("\x1b[2m"), "{before:?}");
    clear(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn backslash_commands_list_describe_time_expand_redirect_include_and_edit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let script = dir.path().join("script.sql");
    std::fs::write(&script, "SELECT 7 AS seven;\nSELECT 8 AS eight;\n").unwrap();
    // An "editor" that replaces the statement with another.
    let editor = dir.path().join("editor.sh");
    std::fs::write(&editor, "#!/bin/sh\necho 'SELECT 42 AS answer;' > \"$1\"\n").unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&editor, executable).unwrap();
    let results = dir.path().join("results.txt");
    let editor_path = editor.to_str().unwrap().to_string();
    let mut p = shell(
        dir.path(),
        &catalog,
        &[("EDITOR", &editor_path), ("NO_COLOR", "1")],
    );
    let mut run = |line: &str, expect: &[&str]| {
        p.send_line(line).unwrap();
        // The line editor redraws the prompt as keys arrive: output starts once it has
        // handed the line over (and turned bracketed paste off).
        p.exp_string(LINE_DONE).unwrap();
        for e in expect {
            p.exp_string(e)
                .unwrap_or_else(|err| panic!("{line}: no {e:?}: {err}"));
        }
        fresh_prompt(&mut p);
    };
    run("\\?", &["list these commands", "\\timing"]);
    run("\\h", &["CREATE TABLE", "TEST"]);
    run(
        "\\h create table",
        &["Syntax:", "WATERMARK FOR", "Example:"],
    );
    run("\\h vacuum", &["no help for 'vacuum'"]);
    run("\\d", &["order_lines", "(3 rows)"]);
    run("\\dt", &["ticks", "(3 rows)"]);
    run("\\d orders", &["amount", "DOUBLE"]);
    run("\\d prod", &["bootstrap_servers"]);
    run("\\dp", &["prod", "(1 row)"]);
    run("\\dc", &["kafka", "websocket"]);
    run("\\dc kafka", &["source.offset"]);
    run("\\zz", &["unknown command '\\zz'; \\? lists the commands"]);
    run("\\timing", &["Timing is on."]);
    run("SELECT 1 AS one;", &["| one |", "(1 row)", "Time: "]);
    run("\\timing off", &["Timing is off."]);
    run("\\x", &["Expanded display is on."]);
    run(
        "SELECT 1 AS a, 'two' AS bb;",
        &["-[ RECORD 1 ]", "a  | 1", "bb | two"],
    );
    run("\\x", &["Expanded display is off."]);
    run(&format!("\\o {}", results.display()), &[]);
    run("SELECT 5 AS five;", &[]);
    run("\\o", &[]);
    run(
        &format!("\\i {}", script.display()),
        &["| seven |", "| eight |"],
    );
    run("\\e", &["SELECT 42 AS answer;", "| answer |", "| 42     |"]);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
    let written = std::fs::read_to_string(&results).unwrap();
    assert!(
        written.contains("| five |") && written.contains("| 5    |"),
        "{written}"
    );
}

/// Start an endless query, Ctrl-C it once rows show, expect the shell to say so and to
/// run the next statement.
fn stop_a_streaming_query_and_go_on(p: &mut PtySession) {
    p.send_line("SELECT counter FROM ticks;").unwrap();
    p.exp_string("| 100 ").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("cancelled: the query was stopped after")
        .unwrap();
    fresh_prompt(p);
    p.send_line("SELECT 'still here' AS s;").unwrap();
    p.exp_string(LINE_DONE).unwrap();
    p.exp_string("still here").unwrap();
    fresh_prompt(p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
}

#[test]
fn ctrl_c_stops_a_streaming_query_and_the_shell_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let mut p = shell(dir.path(), &catalog, &[]);
    stop_a_streaming_query_and_go_on(&mut p);
}

#[test]
fn over_a_server_ctrl_c_stops_a_streaming_query_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let server = Server::start(&catalog, dir.path().join("server.log"));
    let mut p = shell_with(
        dir.path(),
        &["--server", &server.url, "--token", TOKEN],
        &[],
    );
    stop_a_streaming_query_and_go_on(&mut p);
    drop(server);
}

#[test]
fn results_wider_or_taller_than_the_terminal_go_to_the_pager() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let pager = dir.path().join("pager.sh");
    std::fs::write(&pager, "#!/bin/sh\necho '[paged]'\ncat\n").unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&pager, executable).unwrap();
    let pager = pager.to_str().unwrap().to_string();
    let mut p = shell(dir.path(), &catalog, &[("PAGER", &pager)]);
    // DESCRIBE CONNECTOR is hundreds of columns wide.
    p.send_line("\\dc kafka").unwrap();
    p.exp_string(LINE_DONE).unwrap();
    p.exp_string("[paged]").unwrap();
    p.exp_string("source.offset").unwrap();
    fresh_prompt(&mut p);
    // What fits is printed as it is.
    p.send_line("SELECT * FROM (VALUES (1), (2)) AS t(n);")
        .unwrap();
    p.exp_string(LINE_DONE).unwrap();
    let shown = p.exp_string("(2 rows)").unwrap();
    assert!(!shown.contains("[paged]"), "{shown}");
    fresh_prompt(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
    // PAGER=cat: no pager at all.
    let mut p = shell(dir.path(), &catalog, &[]);
    p.send_line("\\dc kafka").unwrap();
    p.exp_string(LINE_DONE).unwrap();
    let shown = p.exp_string("source.offset").unwrap();
    assert!(!shown.contains("[paged]"), "{shown}");
    fresh_prompt(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
}

/// `\o FILE` sends results to a file without the colour codes the terminal gets, both for
/// a table printed whole and one that streams; `\o` alone brings them back.
#[test]
fn output_to_a_file_is_never_coloured() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = catalog(dir.path());
    let file = dir.path().join("out.txt");
    let mut p = shell(dir.path(), &catalog, &[]);
    // On the terminal, headers are bold.
    p.send_line("SELECT 1 AS n;").unwrap();
    p.exp_string(LINE_DONE).unwrap();
    p.exp_string("\x1b[1m n \x1b[0m").unwrap();
    fresh_prompt(&mut p);
    p.send_line(&format!("\\o {}", file.display())).unwrap();
    fresh_prompt(&mut p);
    p.send_line("SELECT 2 AS m;").unwrap();
    p.exp_string(LINE_DONE).unwrap();
    fresh_prompt(&mut p);
    // A slow source streams its rows to the file as they come.
    p.send_line(
        "CREATE TABLE slow WITH (connector = 'impulse', event_rate = '10'); \
         SELECT counter FROM slow WHERE counter = 15 LIMIT 1;",
    )
    .unwrap();
    fresh_prompt(&mut p);
    p.send_line("\\o").unwrap();
    fresh_prompt(&mut p);
    p.send_line("\\q").unwrap();
    p.exp_eof().unwrap();
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("| m |") && written.contains("| 15      |"),
        "{written:?}"
    );
    assert!(!written.contains('\x1b'), "{written:?}");
}
