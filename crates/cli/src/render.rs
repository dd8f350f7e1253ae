//! Printing results (table, JSON, CSV) and diagnostics (with the SQL line and a caret
//! under the offending text).

use crate::args::OutputFormat;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use tributary_sql::Output;
use tributary_types::{Diagnostic, Severity};

/// The script being run, for quoting lines in diagnostics.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// File name or `<stdin>`.
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
}

/// Prints outputs to stdout and diagnostics to stderr.
#[derive(Debug)]
pub struct Renderer<'a> {
    format: OutputFormat,
    source: Source<'a>,
}

impl<'a> Renderer<'a> {
    /// A renderer for `source`.
    pub fn new(format: OutputFormat, source: Source<'a>) -> Self {
        Self { format, source }
    }

    /// Print one statement's output.
    pub fn output(&self, output: &Output) {
        match output {
            Output::Done(tag) => match self.format {
                OutputFormat::Json => println!("{}", serde_json::json!({ "status": tag })),
                _ => println!("{tag}"),
            },
            Output::Rows { batches, schema } => {
                let batches: Vec<RecordBatch> = if batches.is_empty() {
                    vec![RecordBatch::new_empty(schema.clone())]
                } else {
                    batches.clone()
                };
                match format_batches(self.format, &batches) {
                    Ok(text) => println!("{text}"),
                    Err(e) => eprintln!("error: cannot print the result: {e}"),
                }
            }
        }
    }

    /// Print diagnostics to stderr.
    pub fn diagnostics(&self, diags: &[Diagnostic]) {
        for d in diags {
            eprintln!("{}", render_diagnostic(d, self.source));
        }
    }
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

/// A diagnostic as rustc-style text: the message, `--> file:line:col`, the source line
/// with carets, then notes and help.
pub fn render_diagnostic(d: &Diagnostic, source: Source<'_>) -> String {
    let label = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    };
    let mut out = format!("{label}: {}", d.message);
    // rustc's layout: the gutter is as wide as the line number.
    let gutter = d.span.map(|s| s.start.line.to_string().len()).unwrap_or(1);
    if let Some(span) = d.span.filter(|s| s.is_known()) {
        let line_no = span.start.line as usize;
        out.push_str(&format!(
            "\n{:gutter$}--> {}:{}:{}",
            "", source.name, span.start.line, span.start.column
        ));
        if let Some(line) = source.text.lines().nth(line_no.saturating_sub(1)) {
            let start = span.start.column.max(1) as usize;
            let line_chars = line.chars().count();
            let end = if span.end.line == span.start.line && span.end.column as usize > start {
                span.end.column as usize
            } else {
                line_chars + 1
            };
            let width = end.saturating_sub(start).max(1);
            out.push_str(&format!("\n{:gutter$} |", ""));
            out.push_str(&format!("\n{line_no:>gutter$} | {line}"));
            out.push_str(&format!(
                "\n{:gutter$} | {}{}",
                "",
                " ".repeat(start - 1),
                "^".repeat(width)
            ));
        }
    }
    for n in &d.notes {
        out.push_str(&format!("\n{:gutter$} = note: {n}", ""));
    }
    if let Some(h) = &d.help {
        out.push_str(&format!("\n{:gutter$} = help: {h}", ""));
    }
    out
}
