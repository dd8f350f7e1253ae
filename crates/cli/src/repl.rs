//! `tributary repl`: an interactive shell with history kept across runs and statements
//! that may span lines until a `;`.

use crate::args::Cli;
use crate::render::{Renderer, Source};
use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;
use std::io::IsTerminal;
use std::sync::Arc;
use tributary_sql::{Mode, Session, TestEvent};

const HELP: &str = "Enter SQL statements ending with ';'. Statements: CREATE/ALTER/DROP CONNECTION PROFILE, CREATE/DROP TABLE, SHOW TABLES, SHOW CONNECTION PROFILES, SHOW CONNECTORS, DESCRIBE [CONNECTOR|CONNECTION PROFILE] name, SHOW CREATE TABLE name, EXPLAIN SELECT ...\nCommands: \\q quits, \\h shows this help, \\c clears the current input.";

/// Run the shell until end of input or `\q`.
pub async fn run(cli: &Cli) -> u8 {
    let store = match crate::store::open(cli) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let mut session = Session::new(store);
    // Connection tests can take seconds; at a terminal each stage is shown as it ends.
    if std::io::stderr().is_terminal() {
        session = session.with_progress(Arc::new(|e: &TestEvent| {
            eprintln!(
                "  … {} {}: {} ({} ms)",
                e.stage, e.outcome, e.message, e.elapsed_ms
            );
        }));
    }
    let mut editor = match DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return 2;
        }
    };
    let history = dirs::data_dir().map(|d| d.join("tributary").join("history"));
    if let Some(h) = &history {
        // A first run has no history file yet; anything else is worth saying.
        if let Err(e) = editor.load_history(h)
            && h.exists()
        {
            eprintln!(
                "warning: cannot read the history from '{}': {e}",
                h.display()
            );
        }
    }
    println!(
        "Tributary {} — \\h for help, \\q to quit.",
        env!("CARGO_PKG_VERSION")
    );
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
                if buffer.is_empty() {
                    match trimmed {
                        "\\q" | "quit" | "exit" => break,
                        "\\h" | "help" => {
                            println!("{HELP}");
                            continue;
                        }
                        "" => continue,
                        _ => {}
                    }
                }
                if trimmed == "\\c" {
                    buffer.clear();
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
                let renderer = Renderer::new(
                    cli.format,
                    Source {
                        name: "<repl>",
                        text: &text,
                    },
                );
                // Ctrl-C cancels the statement running (a connection test, say): its
                // future is dropped, which closes its connections, and a statement
                // stores nothing until its test has passed.
                let outcomes = tokio::select! {
                    outcomes = session.run_script(&text, Mode::Run) => outcomes,
                    _ = tokio::signal::ctrl_c() => {
                        eprintln!("cancelled: the statement was interrupted and stored nothing; statements after it did not run");
                        continue;
                    }
                };
                for outcome in outcomes {
                    match outcome {
                        Ok(r) => {
                            renderer.diagnostics(&r.warnings);
                            renderer.output(&r.output);
                        }
                        Err(e) => renderer.diagnostics(&e.diagnostics),
                    }
                }
            }
            Err(ReadlineError::Interrupted) => {
                buffer.clear();
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        let saved = h
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(|e| e.to_string())
            .and_then(|()| editor.save_history(h).map_err(|e| e.to_string()));
        if let Err(e) = saved {
            eprintln!("warning: cannot save the history to '{}': {e}", h.display());
        }
    }
    0
}
