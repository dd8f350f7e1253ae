//! `tributary run` and `tributary check`.

use crate::args::{Cli, Input, OutputFormat};
use crate::executor::Executor;
use crate::json_print::JsonReporter;
use crate::output::{Stdout, err_line};
use crate::render::Renderer;
use crate::stream_print::RowPrinter;
use std::io::{IsTerminal, Read};
use std::ops::ControlFlow;
use tributary_sql::{Mode, Output, ScriptSummary};
use tributary_types::limits::MAX_SCRIPT_BYTES;

/// Read the script, run or check it, print each statement's result as it completes; the
/// exit status.
pub async fn run(cli: &Cli, input: &Input, mode: Mode) -> u8 {
    let (name, text) = match read_input(input) {
        Ok(v) => v,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    let executor = match Executor::open(cli, mode) {
        Ok(e) => e,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    let (summary, closed) = if cli.format.is_json() {
        run_as_json(cli, &executor, &text, mode).await
    } else {
        run_as_text(cli, &executor, &name, &text, mode).await
    };
    let summary = match summary {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    if closed {
        // The reader went away (`| head`): stop quietly, as a pipeline expects.
        return 0;
    }
    if summary.suppressed_diagnostics > 0 {
        err_line(&format!(
            "note: {} more diagnostic(s) were not shown; fix the ones above and run again",
            summary.suppressed_diagnostics
        ));
    }
    match mode {
        Mode::Check if summary.failed == 0 => {
            if cli.quiet {
                return 0;
            }
            err_line(&format!(
                "{name}: {} statement(s) valid",
                summary.statements
            ));
            0
        }
        Mode::Check => {
            err_line(&format!(
                "{name}: {} of {} statement(s) invalid",
                summary.failed, summary.statements
            ));
            1
        }
        Mode::Run if summary.failed == 0 => 0,
        Mode::Run => 1,
    }
}

/// Run `text`, printing results as text (a table, CSV or raw values) and diagnostics
/// to standard error; the summary, and whether standard output's reader went away.
async fn run_as_text(
    cli: &Cli,
    executor: &Executor,
    name: &str,
    text: &str,
    mode: Mode,
) -> (Result<ScriptSummary, String>, bool) {
    let renderer = Renderer::new(cli.format, name, text).styled(cli);
    let mut out = Stdout::default();
    let rows = RowPrinter::new(cli.format);
    rows.set_colour(cli.color.enabled(std::io::stdout().is_terminal()));
    // Each result is printed (and flushed) as its statement completes, so what was
    // printed is what has been stored.
    let summary = executor
        .run_script_with(text, mode, &rows, |outcome| {
            match &outcome {
                Ok(r) => {
                    if let Output::Streamed { .. } = r.output {
                        rows.finish();
                    }
                    renderer.diagnostics(&r.warnings);
                    if mode == Mode::Run && !renderer.output(&mut out, r, &rows) {
                        return ControlFlow::Break(());
                    }
                }
                Err(e) => {
                    // Rows that streamed before the failure are closed off first.
                    rows.finish();
                    renderer.diagnostics(&e.diagnostics);
                }
            }
            ControlFlow::Continue(())
        })
        .await;
    (summary, out.closed() || rows.closed())
}

/// Run `text`, printing each statement's report, diagnostics included, as JSON on
/// standard output; the summary, and whether standard output's reader went away.
async fn run_as_json(
    cli: &Cli,
    executor: &Executor,
    text: &str,
    mode: Mode,
) -> (Result<ScriptSummary, String>, bool) {
    let reporter = JsonReporter::new(cli.format == OutputFormat::Jsonl, text, Stdout::default());
    let summary = executor
        .run_script_with(text, mode, &reporter, |outcome| {
            reporter.statement(&outcome)
        })
        .await;
    // A document is closed even when the script could not run to its end.
    let open = reporter.end();
    (summary, !open || reporter.closed())
}

/// The script's name and text: `-c`, a file, or standard input. Only regular files (and
/// pipes on standard input) are read, at most `MAX_SCRIPT_BYTES`.
/// A script file's text, within the size limit.
pub(crate) fn read_file(p: &std::path::Path) -> Result<String, String> {
    let shown = p.display();
    let meta = std::fs::metadata(p).map_err(|e| format!("cannot read '{shown}': {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "cannot read '{shown}': it is not a regular file (a script is read from a file, '-' or -c)"
        ));
    }
    let file = std::fs::File::open(p).map_err(|e| format!("cannot read '{shown}': {e}"))?;
    read_capped(file, &format!("'{shown}'"))
}

fn read_input(input: &Input) -> Result<(String, String), String> {
    if let Some(sql) = &input.command {
        return Ok(("<command>".into(), sql.clone()));
    }
    match &input.file {
        Some(p) if p.as_os_str() != "-" => Ok((p.display().to_string(), read_file(p)?)),
        _ => Ok((
            "<stdin>".into(),
            read_capped(std::io::stdin(), "standard input")?,
        )),
    }
}

fn read_capped(reader: impl Read, what: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_SCRIPT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what}: {e}"))?;
    if bytes.len() > MAX_SCRIPT_BYTES {
        return Err(format!(
            "cannot read {what}: it is larger than the limit of {MAX_SCRIPT_BYTES} bytes for a script"
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "cannot read {what}: it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}
