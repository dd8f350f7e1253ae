//! `--format json` and `--format jsonl`: each statement's result as the library's
//! [`StatementReport`], diagnostics included, on standard output. `json` is one document
//! for the whole run, an array written as statements end, with a query's rows written as
//! they arrive (so a long query streams and `| head` stops it); `jsonl` is one complete
//! report per line, written when its statement ends.

use crate::output::{Stdout, err_line};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use serde::Serialize;
use std::ops::ControlFlow;
use std::sync::Mutex;
use tributary_sql::parser::spans::LineIndex;
use tributary_sql::report::{
    ReportHead, RowObjects, StatementReport, report_head, report_tail, statement_report,
};
use tributary_sql::{Outcome, RowSink, StatementError};
use tributary_types::{Diagnostic, Span, codes};

/// Writes statement reports as JSON.
pub struct JsonReporter<'a> {
    /// One report per line (`jsonl`) rather than one document.
    lines: bool,
    /// The script whose statements the reports describe, indexed once.
    script: LineIndex<'a>,
    state: Mutex<Reporting>,
}

impl std::fmt::Debug for JsonReporter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonReporter")
            .field("lines", &self.lines)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Reporting {
    out: Stdout,
    /// Statements reported so far.
    reported: usize,
    /// The query whose rows are arriving.
    query: Option<Query>,
}

#[derive(Debug)]
struct Query {
    head: ReportHead,
    /// Where the statement starts.
    span: Span,
    encoder: RowObjects,
    /// Rows so far.
    rows: u64,
    /// Rows held for the report's line (`jsonl`).
    held: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl<'a> JsonReporter<'a> {
    /// A reporter of `script`'s statements to `out`, one report per line when `lines`.
    pub fn new(lines: bool, script: &'a str, out: Stdout) -> Self {
        Self {
            lines,
            script: LineIndex::new(script),
            state: Mutex::new(Reporting {
                out,
                ..Reporting::default()
            }),
        }
    }

    /// A statement ended with `outcome`: write its report (or close the one whose rows
    /// were written); `Break` once the reader has gone.
    pub fn statement(&self, outcome: &Outcome) -> ControlFlow<()> {
        let Ok(mut r) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        r.reported += 1;
        let n = r.reported;
        match r.query.take() {
            Some(q) if self.lines => {
                let report = StatementReport {
                    head: q.head,
                    rows: q.held,
                    tail: report_tail(outcome, q.rows),
                };
                r.out.line(&json(&report));
            }
            Some(q) => {
                let tail = json(&report_tail(outcome, q.rows));
                // `],` then the tail's members: the object the head opened closes.
                r.out
                    .write(&format!("\n],{}", tail.strip_prefix('{').unwrap_or(&tail)));
            }
            None => {
                let report = json(&statement_report(&self.script, n, outcome));
                if self.lines {
                    r.out.line(&report);
                } else {
                    let sep = if n == 1 { "[\n" } else { ",\n" };
                    r.out.write(&format!("{sep}{report}"));
                }
            }
        }
        if r.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// The run ended: close the document (`json`), and the report of a query that was
    /// interrupted (Ctrl-C, a server gone); whether the reader is still there.
    pub fn end(&self) -> bool {
        if self.state.lock().is_ok_and(|r| r.query.is_some()) {
            self.interrupted();
        }
        let Ok(mut r) = self.state.lock() else {
            return false;
        };
        if self.lines {
            return !r.out.closed();
        }
        if r.reported == 0 {
            r.out.line("[]")
        } else {
            r.out.line("\n]")
        }
    }

    /// Report the query whose rows were arriving as interrupted.
    fn interrupted(&self) {
        let span = match self.state.lock() {
            Ok(r) => r.query.as_ref().map(|q| q.span),
            Err(_) => None,
        };
        let Some(span) = span else { return };
        let stopped = Diagnostic::error("the statement was interrupted before it ended")
            .with_span(span)
            .with_code(codes::EXECUTION_ERROR);
        let _ = self.statement(&Err(StatementError {
            span,
            diagnostics: vec![stopped],
        }));
    }

    /// Whether standard output's reader has gone.
    pub fn closed(&self) -> bool {
        self.state.lock().map(|r| r.out.closed()).unwrap_or(true)
    }
}

/// `value` as compact JSON. The reports hold only strings, numbers and maps, which
/// always serialise.
fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| {
        err_line(&format!("error: cannot write the result as JSON: {e}"));
        "null".into()
    })
}

#[async_trait::async_trait]
impl RowSink for JsonReporter<'_> {
    async fn begin(&self, span: Span, schema: &SchemaRef) -> ControlFlow<()> {
        let Ok(mut r) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        let n = r.reported + 1;
        let head = report_head(&self.script, n, span, Some(schema));
        if !self.lines {
            // The head's members, then the rows' array, left open for the rows.
            let text = json(&head);
            let open = text.strip_suffix('}').unwrap_or(&text);
            let sep = if n == 1 { "[\n" } else { ",\n" };
            r.out.write(&format!("{sep}{open},\"rows\":["));
        }
        r.query = Some(Query {
            head,
            span,
            encoder: RowObjects::new(schema),
            rows: 0,
            held: Vec::new(),
        });
        if r.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    async fn batch(&self, batch: RecordBatch) -> ControlFlow<()> {
        let Ok(mut r) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        let reporting = &mut *r;
        let Some(q) = reporting.query.as_mut() else {
            return ControlFlow::Continue(());
        };
        match q.encoder.rows(&batch) {
            Ok(rows) if self.lines => {
                q.rows += rows.len() as u64;
                q.held.extend(rows);
            }
            Ok(rows) => {
                let mut text = String::new();
                for row in &rows {
                    text.push_str(if q.rows == 0 { "\n" } else { ",\n" });
                    text.push_str(&json(row));
                    q.rows += 1;
                }
                reporting.out.write(&text);
            }
            Err(e) => err_line(&format!("error: cannot write the result as JSON: {e}")),
        }
        if reporting.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}
