//! Printing results (table, JSON, CSV) to stdout and diagnostics to stderr. Diagnostics
//! are rendered by the library (`tributary_sql::render`), which masks secrets in the
//! source lines it quotes.

use crate::args::OutputFormat;
use crate::output::{Stdout, err_line};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches;
use tributary_sql::Output;
use tributary_sql::render::SourceText;
use tributary_types::Diagnostic;

/// Prints outputs to stdout and diagnostics to stderr.
#[derive(Debug)]
pub struct Renderer<'a> {
    format: OutputFormat,
    source: SourceText<'a>,
    /// Tables print as records (`\x`).
    expanded: bool,
    /// Table headers in bold (stdout is a terminal that takes colour).
    colour_out: bool,
    /// Diagnostics coloured (stderr is).
    colour_err: bool,
    /// Status lines and warnings are not printed (`--quiet`).
    quiet: bool,
    /// Results too big for the terminal go to the pager (the shell).
    paged: bool,
    /// Connection-test stages were shown as they happened (the shell at a terminal):
    /// their notes are not printed again.
    stages_shown: bool,
}

impl<'a> Renderer<'a> {
    /// A renderer for the script `text`, called `name` in diagnostics.
    pub fn new(format: OutputFormat, name: &'a str, text: &'a str) -> Self {
        Self {
            format,
            source: SourceText::new(name, text),
            expanded: false,
            colour_out: false,
            colour_err: false,
            quiet: false,
            paged: false,
            stages_shown: false,
        }
    }

    /// The same renderer, leaving out connection-test stage notes (shown live).
    pub fn stages_shown(mut self, on: bool) -> Self {
        self.stages_shown = on;
        self
    }

    /// The same renderer, showing result sets too big for the terminal in the pager.
    pub fn paged(mut self, on: bool) -> Self {
        self.paged = on;
        self
    }

    /// Print a result set's text, through the pager when it is on and needed.
    fn result(&self, out: &mut Stdout, text: &str) -> bool {
        if self.paged && out.is_stdout() && crate::pager::page(text) {
            return true;
        }
        out.line(text)
    }

    /// The same renderer, coloured and quiet as `cli` asks.
    pub fn styled(mut self, cli: &crate::args::Cli) -> Self {
        use std::io::IsTerminal;
        self.colour_out = cli.color.enabled(std::io::stdout().is_terminal());
        self.colour_err = cli.color.enabled(std::io::stderr().is_terminal());
        self.quiet = cli.quiet;
        self
    }

    /// The same renderer, printing tables as records when `on` (`\x`).
    pub fn expanded(mut self, on: bool) -> Self {
        self.expanded = on && self.format == OutputFormat::Table;
        self
    }

    /// Print one statement's output; `false` once stdout's reader has gone.
    pub fn output(&self, out: &mut Stdout, output: &Output) -> bool {
        match output {
            Output::Done(_) if self.quiet => !out.closed(),
            Output::Done(tag) => match self.format {
                OutputFormat::Json => out.line(&serde_json::json!({ "status": tag }).to_string()),
                _ => out.line(tag),
            },
            // Printed as they arrived (`stream_print`).
            Output::Streamed { .. } => !out.closed(),
            Output::Rows { batches, .. } if self.expanded => {
                self.result(out, &expanded(batches, 0))
            }
            Output::Rows { batches, schema } => {
                let batches: Vec<RecordBatch> = if batches.is_empty() {
                    vec![RecordBatch::new_empty(schema.clone())]
                } else {
                    batches.clone()
                };
                match format_batches(self.format, &batches) {
                    Ok(text) if self.colour_out && self.format == OutputFormat::Table => {
                        self.result(out, &crate::colour::table(&text))
                    }
                    Ok(text) => self.result(out, &text),
                    Err(e) => {
                        err_line(&format!("error: cannot print the result: {e}"));
                        true
                    }
                }
            }
        }
    }

    /// Print diagnostics to stderr.
    pub fn diagnostics(&self, diags: &[Diagnostic]) {
        for d in diags {
            if self.quiet && d.severity != tributary_types::Severity::Error {
                continue;
            }
            if self.stages_shown && tributary_sql::is_stage_note(d) {
                continue;
            }
            let text = if d.severity == tributary_types::Severity::Note {
                // Notes are terse: one line (and its help), no source snippet; full
                // diagnostics are for errors and warnings.
                terse_note(d)
            } else {
                self.source.render(d)
            };
            if self.colour_err {
                err_line(&crate::colour::diagnostic(&text));
            } else {
                err_line(&text);
            }
        }
    }
}

/// `note: message`, then its notes and help, each on a line of its own.
fn terse_note(d: &Diagnostic) -> String {
    let mut text = format!("note: {}", d.message);
    for n in &d.notes {
        text.push_str(&format!("\n  = note: {n}"));
    }
    if let Some(help) = &d.help {
        text.push_str(&format!("\n  = help: {help}"));
    }
    text
}

/// Format batches in the chosen format.
pub fn format_batches(format: OutputFormat, batches: &[RecordBatch]) -> Result<String, String> {
    match format {
        OutputFormat::Table => pretty_format_batches(batches)
            .map(|t| t.to_string())
            .map_err(|e| e.to_string()),
        OutputFormat::Json => {
            let mut buf = Vec::new();
            {
                let mut w = datafusion::arrow::json::ArrayWriter::new(&mut buf);
                let refs: Vec<&RecordBatch> = batches.iter().collect();
                w.write_batches(&refs).map_err(|e| e.to_string())?;
                w.finish().map_err(|e| e.to_string())?;
            }
            let text = String::from_utf8(buf).map_err(|e| e.to_string())?;
            Ok(if text.is_empty() { "[]".into() } else { text })
        }
        OutputFormat::Csv => {
            let mut buf = Vec::new();
            {
                let mut w = datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut buf);
                for b in batches {
                    w.write(b).map_err(|e| e.to_string())?;
                }
            }
            String::from_utf8(buf)
                .map(|s| s.trim_end().to_string())
                .map_err(|e| e.to_string())
        }
    }
}

/// Each row's cells as text, as the table printer shows them (NULL as nothing).
pub(crate) fn cells(batch: &RecordBatch) -> Vec<Vec<String>> {
    let options = FormatOptions::default().with_display_error(true);
    let formatters: Vec<Option<ArrayFormatter>> = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).ok())
        .collect();
    (0..batch.num_rows())
        .map(|row| {
            formatters
                .iter()
                .map(|f| {
                    f.as_ref()
                        .map(|f| f.value(row).to_string())
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect()
}

/// Rows as psql's expanded display (`\x`): a `-[ RECORD n ]-` rule per row (numbered
/// from `first + 1`), then one `column | value` line per column.
pub fn expanded(batches: &[RecordBatch], first: u64) -> String {
    let mut out = Vec::new();
    let mut n = first;
    for batch in batches {
        let schema = batch.schema();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        for row in cells(batch) {
            n += 1;
            out.push(format!(
                "-[ RECORD {n} ]{}",
                "-".repeat(width.saturating_sub(8))
            ));
            for (name, value) in names.iter().zip(row) {
                let pad = width.saturating_sub(name.chars().count());
                // A value's own line breaks stay inside its cell.
                let value = value.replace('\n', &format!("\n{} | ", " ".repeat(width)));
                out.push(format!("{name}{} | {value}", " ".repeat(pad)));
            }
        }
    }
    if out.is_empty() {
        return "(0 rows)".into();
    }
    out.join("\n")
}
