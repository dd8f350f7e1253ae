//! `tributary repl`: an interactive shell with history kept across runs (owner-only, as it
//! holds statements with their secrets) and statements that may span lines until a `;`.

use crate::args::Cli;
use crate::executor::Executor;
use crate::output::{Stdout, err_line};
use crate::render::Renderer;
use crate::stream_print::RowPrinter;
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use tributary_sql::{Mode, Output, TestEvent};

const HELP: &str = "Enter SQL statements ending with ';'. Statements: CREATE/ALTER/DROP CONNECTION PROFILE, CREATE/DROP TABLE, SHOW TABLES, SHOW CONNECTION PROFILES, SHOW CONNECTORS, DESCRIBE [CONNECTOR|CONNECTION PROFILE] name, SHOW CREATE TABLE name, EXPLAIN SELECT ...\nCommands: \\q quits, \\h (or \\?) shows this help, \\c clears the current input.";

/// What a line starting with a backslash asks for.
enum Meta {
    Quit,
    Help,
    Clear,
    Unknown,
}

fn meta(line: &str) -> Option<Meta> {
    let word = line.split_whitespace().next()?;
    if !word.starts_with('\\') {
        return match word {
            "quit" | "exit" if line.split_whitespace().count() == 1 => Some(Meta::Quit),
            "help" if line.split_whitespace().count() == 1 => Some(Meta::Help),
            _ => None,
        };
    }
    Some(match word {
        "\\q" => Meta::Quit,
        "\\h" | "\\?" => Meta::Help,
        "\\c" => Meta::Clear,
        _ => Meta::Unknown,
    })
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
    // Connection tests can take seconds; at a terminal each stage is shown as it ends.
    if let Executor::Local(session) = &mut executor
        && std::io::stderr().is_terminal()
    {
        session.set_progress(Arc::new(|e: &TestEvent| {
            err_line(&format!(
                "  … {} {}: {} ({} ms)",
                e.stage, e.outcome, e.message, e.elapsed_ms
            ));
        }));
    }
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            err_line(&format!("error: cannot start the line editor: {e}"));
            return 2;
        }
    };
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
    let mut out = Stdout::default();
    let rows = RowPrinter::new(cli.format);
    out.line(&format!(
        "Tributary {} — \\h for help, \\q to quit.",
        env!("CARGO_PKG_VERSION")
    ));
    let mut buffer = String::new();
    loop {
        let prompt = if buffer.is_empty() {
            "tributary> "
        } else {
            "        -> "
        };
        match editor.readline(prompt) {
            Ok(line) => {
                let trimmed = line.trim();
                match meta(trimmed) {
                    Some(Meta::Quit) if buffer.is_empty() => break,
                    Some(Meta::Help) if buffer.is_empty() => {
                        out.line(HELP);
                        continue;
                    }
                    Some(Meta::Clear) => {
                        buffer.clear();
                        continue;
                    }
                    Some(Meta::Unknown) => {
                        let word = trimmed.split_whitespace().next().unwrap_or(trimmed);
                        err_line(&format!(
                            "error: unknown command '{}'; \\h lists the commands",
                            tributary_types::limits::shorten(word)
                        ));
                        continue;
                    }
                    _ => {}
                }
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
                let _ = editor.add_history_entry(buffer.as_str());
                let text = std::mem::take(&mut buffer);
                let renderer = Renderer::new(cli.format, "<repl>", &text);
                // Ctrl-C cancels the statement running (a query streaming rows, a
                // connection test): its future is dropped, which closes its
                // connections, and a statement stores nothing until it has succeeded.
                let ran = executor.run_script_with(&text, Mode::Run, &rows, |outcome| {
                    match &outcome {
                        Ok(r) => {
                            if let Output::Streamed { .. } = r.output {
                                rows.finish();
                            }
                            renderer.diagnostics(&r.warnings);
                            if !renderer.output(&mut out, &r.output) {
                                return ControlFlow::Break(());
                            }
                        }
                        Err(e) => {
                            rows.finish();
                            renderer.diagnostics(&e.diagnostics);
                        }
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
                if out.closed() || rows.closed() {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                err_line(&format!("error: {e}"));
                break;
            }
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

/// Save the history owner-only: it holds statements as typed, secrets included.
fn save_history(editor: &mut DefaultEditor, path: &Path) -> Result<(), String> {
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
