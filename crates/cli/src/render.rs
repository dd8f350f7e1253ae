//! Printing results (table, CSV, raw) to stdout and diagnostics to stderr. Diagnostics
//! are rendered by the library (`tributary_sql::render`), which masks secrets in the
//! source lines it quotes. JSON results, diagnostics included, are `json_print`'s.

use crate::args::OutputFormat;
use crate::output::{Stdout, err_line};
use crate::stream_print::RowPrinter;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::arrow::util::pretty::pretty_format_batches;
use tributary_sql::parser::spans::LineIndex;
use tributary_sql::render::SourceText;
use tributary_sql::report::statement_kind;
use tributary_sql::{Output, StatementResult};
use tributary_types::Diagnostic;

/// Prints outputs to stdout and diagnostics to stderr.
#[derive(Debug)]
pub struct Renderer<'a> {
    format: OutputFormat,
    source: SourceText<'a>,
    /// The script, to find what a statement is (`SHOW CREATE` prints bare).
    index: LineIndex<'a>,
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
            index: LineIndex::new(text),
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

    /// Print one statement's output; `false` once stdout's reader has gone. `rows`
    /// prints the streamed result sets, and knows whether one came before this one.
    pub fn output(&self, out: &mut Stdout, result: &StatementResult, rows: &RowPrinter) -> bool {
        match &result.output {
            Output::Done(_) if self.quiet => !out.closed(),
            // Result sets only on the output: a status line would break the CSV.
            Output::Done(tag) if self.format != OutputFormat::Table => {
                err_line(tag);
                !out.closed()
            }
            Output::Done(tag) => out.line(tag),
            // Printed as they arrived (`stream_print`).
            Output::Streamed { .. } => !out.closed(),
            Output::Rows { batches, .. } if self.expanded => {
                self.result(out, &expanded(batches, 0))
            }
            Output::Rows { batches, .. }
                if self.format == OutputFormat::Table && self.is_show_create(result) =>
            {
                // The statement itself, ready to paste: a box around it would not be.
                self.result(out, &raw_lines(batches))
            }
            Output::Rows { batches, schema } => {
                let batches: Vec<RecordBatch> = if batches.is_empty() {
                    vec![RecordBatch::new_empty(schema.clone())]
                } else {
                    batches.clone()
                };
                if rows.set_begins() && self.format != OutputFormat::Table {
                    out.line("");
                }
                match format_batches(self.format, &batches) {
                    Ok(text)
                        if self.colour_out
                            && self.format == OutputFormat::Table
                            && !out.is_file() =>
                    {
                        self.result(out, &crate::colour::table(&text))
                    }
                    // No rows, and raw values have no header to show for it.
                    Ok(text) if text.is_empty() => !out.closed(),
                    Ok(text) => self.result(out, &text),
                    Err(e) => {
                        err_line(&format!("error: cannot print the result: {e}"));
                        true
                    }
                }
            }
        }
    }

    /// Whether `result` answers `SHOW CREATE TABLE` or `SHOW CREATE CONNECTION PROFILE`.
    fn is_show_create(&self, result: &StatementResult) -> bool {
        statement_kind(self.index.slice(result.span)).starts_with("SHOW CREATE")
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

/// Format batches as a table, CSV or raw values (JSON is `json_print`'s).
pub fn format_batches(format: OutputFormat, batches: &[RecordBatch]) -> Result<String, String> {
    match format {
        OutputFormat::Table | OutputFormat::Json | OutputFormat::Jsonl => {
            pretty_format_batches(batches)
                .map(|t| t.to_string())
                .map_err(|e| e.to_string())
        }
        OutputFormat::Raw => Ok(raw_lines(batches)),
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

/// Rows as bare values: a line per row, its cells separated by tabs, NULL as nothing,
/// no header and no quoting (`--format raw`, `SHOW CREATE`).
pub fn raw_lines(batches: &[RecordBatch]) -> String {
    let mut lines = Vec::new();
    for batch in batches {
        for row in cells(batch) {
            lines.push(row.join("\t"));
        }
    }
    lines.join("\n")
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
