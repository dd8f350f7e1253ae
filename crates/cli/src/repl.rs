//! `tributary repl`: an interactive shell. Statements may span lines until a `;`; Tab
//! completes keywords, names, option keys and values from the catalog and the connector
//! registry, with a dimmed hint beside the cursor; backslash commands (`\?` lists them)
//! list and describe things, time statements, switch to expanded display, send results
//! to a file, run a file and edit the statement in `$EDITOR`. History is kept across
//! runs, owner-only, as it holds statements with their secrets.

use crate::args::Cli;
use crate::executor::Executor;
use crate::json_print::JsonReporter;
use crate::line_helper::LineHelper;
use crate::meta::{self, Meta};
use crate::output::{Stdout, err_line};
use crate::remote_names::RemoteNames;
use crate::render::Renderer;
use crate::stream_print::{RowPrinter, row_count};
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
// The history is kept on disk: what it keeps passes the redaction path.
use rustyline::{CompletionType, Config, Editor};
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tributary_complete::{BackgroundLiveNames, Completer, NameSnapshot};
use tributary_sql::redact_sql;
use tributary_sql::{Mode, Output, TestEvent};

/// The shell's settings and where its results go.
struct Shell<'a> {
    cli: &'a Cli,
    executor: Executor,
    rows: RowPrinter,
    out: Stdout,
    timing: bool,
    expanded: bool,
    /// Connection-test stages are printed as they happen.
    live_stages: bool,
    /// A server's names for completion (`--server`), fetched again after each input.
    server_names: Option<RemoteNames>,
}

/// Run the shell until end of input or `\q`.
pub async fn run(cli: &Cli) -> u8 {
    let mut executor = match Executor::open(cli, Mode::Run) {
        Ok(e) => e,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    // The shell runs each input as a script; memory tables last for the whole session.
    if let Executor::Local(session) = &mut executor {
        session.set_keep_script_tables(true);
    }
    // Connection tests can take seconds; at a terminal each stage is shown as it ends.
    let mut live_stages = false;
    if let Executor::Local(session) = &mut executor
        && std::io::stderr().is_terminal()
        && !cli.quiet
    {
        live_stages = true;
        session.set_progress(Arc::new(|e: &TestEvent| {
            let code = e.code.map(|c| format!(" [{c}]")).unwrap_or_default();
            err_line(&format!(
                "  {} {}: {}{code} ({} ms)",
                e.outcome, e.stage, e.message, e.elapsed_ms
            ));
        }));
    }
    let pending = Arc::new(Mutex::new(String::new()));
    let colour = cli.color.enabled(std::io::stdout().is_terminal());
    let (completer, server_names) = completer(&executor, cli);
    let helper = LineHelper::new(completer, pending.clone(), colour);
    let config = Config::builder()
        .completion_type(CompletionType::List)
        .auto_add_history(false)
        .build();
    let mut editor = match Editor::<LineHelper, DefaultHistory>::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            err_line(&format!("error: cannot start the line editor: {e}"));
            return 2;
        }
    };
    editor.set_helper(Some(helper));
    let history = dirs::data_dir().map(|d| d.join("tributary").join("history"));
    if let Some(h) = &history {
        // A first run has no history file yet; anything else is worth saying.
        if let Err(e) = editor.load_history(h)
            && h.exists()
        {
            err_line(&format!(
                "warning: cannot read the history from '{}': {e}",
                h.display()
            ));
        }
    }
    let mut shell = Shell {
        cli,
        executor,
        rows: RowPrinter::new(cli.format),
        out: Stdout::default(),
        timing: false,
        expanded: false,
        live_stages,
        server_names,
    };
    shell.rows.set_footer(!cli.quiet);
    shell.rows.set_colour(colour);
    if !cli.quiet {
        shell.out.line(&format!(
            "Tributary {} — \\? for help, \\q to quit.",
            env!("CARGO_PKG_VERSION")
        ));
    }
    let mut buffer = String::new();
    let mut last = String::new();
    loop {
        set(&pending, &buffer);
        let prompt = if buffer.is_empty() {
            "tributary> "
        } else {
            "        -> "
        };
        let line = match editor.readline(prompt) {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                err_line(&format!("error: {e}"));
                break;
            }
        };
        let trimmed = line.trim();
        if let Some(command) = meta::parse(trimmed) {
            let _ = editor.add_history_entry(redact_sql(trimmed));
            match command {
                Meta::Quit => break,
                Meta::Clear => buffer.clear(),
                Meta::Edit => {
                    let start = if buffer.is_empty() { &last } else { &buffer };
                    match edit(start) {
                        Ok(text) => {
                            shell.out.line(text.trim_end());
                            buffer = text.trim_end().to_string();
                            if buffer.ends_with(';') {
                                let _ = editor.add_history_entry(redact_sql(&buffer));
                                last = std::mem::take(&mut buffer);
                                shell.execute(&last, "<repl>").await;
                            }
                        }
                        Err(e) => err_line(&format!("error: {e}")),
                    }
                }
                other => shell.command(other).await,
            }
        } else {
            if buffer.is_empty() && trimmed.is_empty() {
                continue;
            }
            if !buffer.is_empty() {
                buffer.push('\n');
            }
            buffer.push_str(&line);
            if !trimmed.ends_with(';') {
                continue;
            }
            let _ = editor.add_history_entry(redact_sql(&buffer));
            last = std::mem::take(&mut buffer);
            shell.execute(&last, "<repl>").await;
        }
        if shell.out.closed() || shell.rows.closed() {
            break;
        }
    }
    if let Some(h) = &history
        && let Err(e) = save_history(&mut editor, h)
    {
        err_line(&format!(
            "warning: cannot save the history to '{}': {e}",
            h.display()
        ));
    }
    0
}

fn set(pending: &Mutex<String>, buffer: &str) {
    if let Ok(mut p) = pending.lock() {
        p.clear();
        p.push_str(buffer);
    }
}

/// Completion over the local catalog, with live names looked up in the background; over
/// a server, over the names its REST API lists (fetched in the background, and again
/// after each input through the [`RemoteNames`] returned).
fn completer(executor: &Executor, cli: &Cli) -> (Option<Completer>, Option<RemoteNames>) {
    match (executor, &cli.server) {
        (Executor::Local(session), _) => {
            let store = session.store().clone();
            let completer = Completer::new(store.clone());
            let completer = match BackgroundLiveNames::start(store) {
                Ok(live) => completer.with_live_names(live.as_live_names()),
                Err(_) => completer,
            };
            (Some(completer), None)
        }
        (Executor::Remote(_), Some(url)) => {
            match RemoteNames::start(url, cli.token.last().cloned()) {
                Ok(names) => (Some(Completer::over(names.snapshot())), Some(names)),
                Err(_) => (Some(Completer::over(Arc::new(NameSnapshot::new()))), None),
            }
        }
        (Executor::Remote(_), None) => (Some(Completer::over(Arc::new(NameSnapshot::new()))), None),
    }
}

impl Shell<'_> {
    /// Run a backslash command other than quitting, clearing and editing.
    async fn command(&mut self, command: Meta) {
        match command {
            Meta::ListCommands => {
                self.out.line(&meta::command_list());
            }
            Meta::Help(name) => match meta::statement_help(name.as_deref()) {
                Ok(text) => {
                    self.out.line(&text);
                }
                Err(e) => err_line(&format!("error: {e}")),
            },
            Meta::Sql(sql) => self.execute(&format!("{sql};"), "<command>").await,
            Meta::Describe(name) => {
                let sql = self.describe(&name);
                self.execute(&sql, "<command>").await;
            }
            Meta::Timing(t) => {
                self.timing = t.apply(self.timing);
                self.out
                    .line(&format!("Timing is {}.", on_off(self.timing)));
            }
            Meta::Expanded(t) => {
                self.expanded = t.apply(self.expanded);
                self.rows.set_expanded(self.expanded);
                self.out
                    .line(&format!("Expanded display is {}.", on_off(self.expanded)));
            }
            Meta::Output(None) => {
                self.out = Stdout::default();
                self.rows.redirect(Stdout::default());
            }
            Meta::Output(Some(path)) => match std::fs::File::create(&path) {
                Ok(file) => {
                    self.out = Stdout::to_file(file);
                    self.rows.redirect(self.out.clone());
                }
                Err(e) => err_line(&format!("error: cannot write '{path}': {e}")),
            },
            Meta::Include(path) => match std::fs::read_to_string(&path) {
                Ok(text) => self.execute(&text, &path).await,
                Err(e) => err_line(&format!("error: cannot read '{path}': {e}")),
            },
            Meta::Bad(message) => err_line(&format!("error: {message}")),
            Meta::Quit | Meta::Clear | Meta::Edit => {}
        }
    }

    /// `\d name`: the table of that name, or else the profile; a server is asked for
    /// the table.
    fn describe(&self, name: &str) -> String {
        if let Executor::Local(session) = &self.executor {
            let bare = match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
                Some(quoted) => quoted.replace("\"\"", "\""),
                None => name.to_lowercase(),
            };
            let store = session.store();
            let is_table = store.table_by_name(&bare).ok().flatten().is_some();
            let is_profile = store.profile_by_name(&bare).ok().flatten().is_some();
            if !is_table && is_profile {
                return format!("DESCRIBE CONNECTION PROFILE {name};");
            }
        }
        format!("DESCRIBE {name};")
    }

    /// Run `text` (named `name` in diagnostics), printing each statement's result as it
    /// completes, a row count under result sets and, with `\timing`, the time taken.
    /// Ctrl-C cancels the statement running: its future is dropped, which closes its
    /// connections, and a statement stores nothing until it has succeeded.
    async fn execute(&mut self, text: &str, name: &str) {
        self.run_input(text, name).await;
        // The input may have created or dropped what completion offers.
        if let Some(names) = &self.server_names {
            names.refresh();
        }
    }

    /// Run `text` (see [`Shell::execute`]).
    async fn run_input(&mut self, text: &str, name: &str) {
        if self.cli.format.is_json() {
            return self.execute_as_json(text).await;
        }
        let renderer = Renderer::new(self.cli.format, name, text)
            .styled(self.cli)
            .expanded(self.expanded)
            .paged(true)
            .stages_shown(self.live_stages);
        let table = self.cli.format == crate::args::OutputFormat::Table
            && !self.expanded
            && !self.cli.quiet;
        let began = Instant::now();
        let (rows, out, timing) = (&self.rows, &mut self.out, self.timing);
        let ran = self
            .executor
            .run_script_with(text, Mode::Run, rows, |outcome| {
                match &outcome {
                    Ok(r) => {
                        if let Output::Streamed { .. } = r.output {
                            rows.finish();
                        }
                        renderer.diagnostics(&r.warnings);
                        if !renderer.output(out, r, rows) {
                            return ControlFlow::Break(());
                        }
                        if let Output::Rows { batches, .. } = &r.output
                            && table
                        {
                            let n: usize = batches.iter().map(|b| b.num_rows()).sum();
                            out.line(&row_count(n as u64));
                        }
                    }
                    Err(e) => {
                        rows.finish();
                        renderer.diagnostics(&e.diagnostics);
                    }
                }
                if timing {
                    out.line(&format!(
                        "Time: {:.3} ms",
                        began.elapsed().as_secs_f64() * 1e3
                    ));
                }
                ControlFlow::Continue(())
            });
        tokio::select! {
            r = ran => {
                if let Err(e) = r {
                    err_line(&format!("error: {e}"));
                }
            }
            _ = tokio::signal::ctrl_c() => {
                let printed = rows.finish();
                if printed > 0 {
                    err_line(&format!("cancelled: the query was stopped after {printed} rows; statements after it did not run"));
                } else {
                    err_line("cancelled: the statement was interrupted and stored nothing; statements after it did not run");
                }
            }
        }
    }
}

impl Shell<'_> {
    /// [`Shell::execute`] with `--format json|jsonl`: each input's statements reported
    /// as JSON (a document per input, or a line per statement), diagnostics included;
    /// `\timing` goes to standard error, so the output stays JSON.
    async fn execute_as_json(&mut self, text: &str) {
        let lines = self.cli.format == crate::args::OutputFormat::Jsonl;
        let reporter = JsonReporter::new(lines, text, self.out.clone());
        let began = Instant::now();
        let ran = self
            .executor
            .run_script_with(text, Mode::Run, &reporter, |outcome| {
                reporter.statement(&outcome)
            });
        tokio::select! {
            r = ran => {
                if let Err(e) = r {
                    err_line(&format!("error: {e}"));
                }
            }
            _ = tokio::signal::ctrl_c() => {
                err_line("cancelled: the statement was interrupted; statements after it did not run");
            }
        }
        reporter.end();
        if self.timing {
            err_line(&format!(
                "Time: {:.3} ms",
                began.elapsed().as_secs_f64() * 1e3
            ));
        }
    }
}

fn on_off(on: bool) -> &'static str {
    if on { "on" } else { "off" }
}

/// Edit `text` in `$VISUAL`, `$EDITOR` or `vi`, in an owner-only temporary file; the
/// text as saved.
fn edit(text: &str) -> Result<String, String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let mut words = editor.split_whitespace();
    let program = words.next().ok_or("$EDITOR is empty")?;
    let dir = std::env::temp_dir();
    let path = dir.join(format!("tributary-edit-{}.sql", std::process::id()));
    std::fs::write(&path, text).map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&path)
        .status();
    let read = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    match status {
        Ok(s) if s.success() => read.map_err(|e| format!("cannot read the edited text: {e}")),
        Ok(s) => Err(format!(
            "the editor '{program}' exited with {s}; nothing changed"
        )),
        Err(e) => Err(format!(
            "cannot start the editor '{program}': {e}; set $EDITOR"
        )),
    }
}

/// Save the history owner-only: it holds statements as typed (secrets redacted).
fn save_history(
    editor: &mut Editor<LineHelper, DefaultHistory>,
    path: &Path,
) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        set_mode(dir, 0o700).map_err(|e| e.to_string())?;
    }
    editor.save_history(path).map_err(|e| e.to_string())?;
    set_mode(path, 0o600).map_err(|e| e.to_string())
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}
