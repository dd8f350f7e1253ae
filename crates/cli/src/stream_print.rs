//! [`RowPrinter`]: a query's rows printed as they arrive. A result that ends quickly
//! (within a second, a thousand rows) is printed whole, exactly as a gathered one; a
//! longer one starts printing then, with the column widths of the rows seen so far, and
//! goes on row by row (CSV and raw values line by line). At a terminal a running row
//! count sits on standard error while rows stream. A reader that went away (`| head`)
//! stops the query. JSON is `json_print`'s.

use crate::args::OutputFormat;
use crate::output::{Stdout, err_line};
use crate::render::{cells, expanded, format_batches, raw_lines};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tributary_sql::RowSink;
use tributary_types::Span;

/// Rows held back before a result starts streaming.
const HOLD_ROWS: usize = 1_000;
/// How long a result is held back before it starts streaming.
const HOLD_TIME: Duration = Duration::from_secs(1);

/// Prints each query's rows as they arrive.
#[derive(Debug)]
pub struct RowPrinter {
    format: OutputFormat,
    /// Whether a running count is shown on standard error.
    counting: bool,
    /// Whether tables end with psql's `(N rows)` on the output (the shell), rather
    /// than a streamed one's count on standard error.
    footer: std::sync::atomic::AtomicBool,
    /// Table headers in bold.
    colour: std::sync::atomic::AtomicBool,
    /// Result sets begun so far (CSV and raw sets are separated by a blank line).
    sets: std::sync::atomic::AtomicUsize,
    state: Mutex<Printing>,
}

#[derive(Debug, Default)]
struct Printing {
    out: Stdout,
    schema: Option<SchemaRef>,
    held: Vec<RecordBatch>,
    rows: u64,
    began: Option<Instant>,
    /// Whether rows are printed as they arrive (rather than held).
    streaming: bool,
    /// The table's column widths, once streaming.
    widths: Vec<usize>,
    count_shown: bool,
    /// Tables print each row as a record of `column | value` lines (`\x`), as it
    /// arrives.
    expanded: bool,
}

impl RowPrinter {
    /// A printer in `format`, counting rows at a terminal.
    pub fn new(format: OutputFormat) -> Self {
        Self {
            format,
            counting: std::io::stderr().is_terminal(),
            footer: std::sync::atomic::AtomicBool::new(false),
            colour: std::sync::atomic::AtomicBool::new(false),
            sets: std::sync::atomic::AtomicUsize::new(0),
            state: Mutex::new(Printing::default()),
        }
    }

    /// Print table headers in bold.
    pub fn set_colour(&self, on: bool) {
        self.colour.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn coloured(&self) -> bool {
        self.colour.load(std::sync::atomic::Ordering::Relaxed) && self.format == OutputFormat::Table
    }

    /// A result set begins: whether it follows another one in a format whose sets are
    /// separated by a blank line (CSV, raw).
    pub fn set_begins(&self) -> bool {
        let before = self.sets.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        before > 0 && matches!(self.format, OutputFormat::Csv | OutputFormat::Raw)
    }

    /// End every table with psql's `(N rows)` on the output.
    pub fn set_footer(&self, on: bool) {
        self.footer.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    fn footer(&self) -> bool {
        self.footer.load(std::sync::atomic::Ordering::Relaxed) && self.format == OutputFormat::Table
    }

    /// The query's rows ended (or it was stopped): print what is held, or close what
    /// streamed; the rows printed.
    pub fn finish(&self) -> u64 {
        let Ok(mut p) = self.state.lock() else {
            return 0;
        };
        let rows = p.rows;
        p.clear_count();
        if p.expanded {
            if p.schema.take().is_some() && rows == 0 {
                p.out.line("(0 rows)");
            }
        } else if p.streaming {
            self.close(&mut p);
        } else if let Some(schema) = p.schema.take() {
            let held = std::mem::take(&mut p.held);
            let batches = if held.is_empty() {
                vec![RecordBatch::new_empty(schema)]
            } else {
                held
            };
            if self.set_begins() {
                p.out.line("");
            }
            match format_batches(self.format, &batches) {
                Ok(text) if text.is_empty() => {}
                Ok(text) => {
                    let text = if self.coloured() && !p.out.is_file() {
                        crate::colour::table(&text)
                    } else {
                        text
                    };
                    if p.out.line(&text) && self.footer() {
                        p.out.line(&row_count(rows));
                    }
                }
                Err(e) => err_line(&format!("error: cannot print the result: {e}")),
            }
        }
        *p = Printing {
            out: std::mem::take(&mut p.out),
            expanded: p.expanded,
            ..Printing::default()
        };
        rows
    }

    /// Print tables as records (`\x`) from the next result on.
    pub fn set_expanded(&self, on: bool) {
        if let Ok(mut p) = self.state.lock() {
            p.expanded = on && self.format == OutputFormat::Table;
        }
    }

    /// Send results to `out` from the next one on (`\o`).
    pub fn redirect(&self, out: Stdout) {
        if let Ok(mut p) = self.state.lock() {
            p.out = out;
        }
    }

    /// Whether standard output's reader has gone.
    pub fn closed(&self) -> bool {
        self.state.lock().map(|p| p.out.closed()).unwrap_or(true)
    }

    fn start(&self, p: &mut Printing) {
        let held = std::mem::take(&mut p.held);
        let Some(schema) = p.schema.clone() else {
            return;
        };
        if self.set_begins() {
            p.out.line("");
        }
        let widths = match self.format {
            OutputFormat::Table | OutputFormat::Json | OutputFormat::Jsonl => {
                let mut widths: Vec<usize> = schema
                    .fields()
                    .iter()
                    .map(|f| f.name().chars().count())
                    .collect();
                for b in &held {
                    for row in cells(b) {
                        for (w, c) in widths.iter_mut().zip(&row) {
                            *w = (*w).max(c.chars().count());
                        }
                    }
                }
                let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
                let rule = rule(&widths);
                p.out.line(&rule);
                let header = table_line(&names, &widths);
                if self.coloured() && !p.out.is_file() {
                    p.out.line(&crate::colour::header_line(&header));
                } else {
                    p.out.line(&header);
                }
                p.out.line(&rule);
                widths
            }
            OutputFormat::Raw => Vec::new(),
            OutputFormat::Csv => {
                let header: Vec<String> =
                    schema.fields().iter().map(|f| csv_cell(f.name())).collect();
                p.out.line(&header.join(","));
                Vec::new()
            }
        };
        p.widths = widths;
        p.streaming = true;
        for b in &held {
            self.print(p, b);
        }
    }

    fn print(&self, p: &mut Printing, batch: &RecordBatch) {
        p.clear_count();
        match self.format {
            OutputFormat::Table | OutputFormat::Json | OutputFormat::Jsonl => {
                for row in cells(batch) {
                    let line = table_line(&row, &p.widths);
                    p.out.line(&line);
                }
            }
            OutputFormat::Raw => {
                if batch.num_rows() > 0 {
                    p.out.line(&raw_lines(std::slice::from_ref(batch)));
                }
            }
            OutputFormat::Csv => {
                match format_batches(OutputFormat::Csv, std::slice::from_ref(batch)) {
                    // Without its header line.
                    Ok(text) => {
                        if let Some((_, rows)) = text.split_once('\n') {
                            p.out.line(rows);
                        }
                    }
                    Err(e) => err_line(&format!("error: cannot print the result: {e}")),
                }
            }
        }
        if self.counting {
            p.show_count();
        }
    }

    fn close(&self, p: &mut Printing) {
        match self.format {
            OutputFormat::Table | OutputFormat::Json | OutputFormat::Jsonl => {
                let rule = rule(&p.widths);
                // The row count follows a streamed table, unless its reader has gone.
                if p.out.line(&rule) {
                    if self.footer() {
                        let count = row_count(p.rows);
                        p.out.line(&count);
                    } else {
                        err_line(&row_count(p.rows));
                    }
                }
            }
            OutputFormat::Csv | OutputFormat::Raw => {}
        }
    }
}

#[async_trait::async_trait]
impl RowSink for RowPrinter {
    async fn begin(&self, _span: Span, schema: &SchemaRef) -> ControlFlow<()> {
        let Ok(mut p) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        p.schema = Some(schema.clone());
        p.began = Some(Instant::now());
        if p.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    async fn batch(&self, batch: RecordBatch) -> ControlFlow<()> {
        let Ok(mut p) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        let first = p.rows;
        p.rows += batch.num_rows() as u64;
        if p.expanded {
            // Records are independent: each is printed as it arrives.
            if batch.num_rows() > 0 {
                p.out.line(&expanded(std::slice::from_ref(&batch), first));
            }
        } else if p.streaming {
            self.print(&mut p, &batch);
        } else {
            p.held.push(batch);
            let held: usize = p.held.iter().map(RecordBatch::num_rows).sum();
            if held >= HOLD_ROWS || p.held_long() {
                self.start(&mut p);
            }
        }
        if p.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// A slow source: rows held for a second show without waiting for the next batch.
    async fn idle(&self) -> ControlFlow<()> {
        let Ok(mut p) = self.state.lock() else {
            return ControlFlow::Break(());
        };
        if !p.streaming && !p.held.is_empty() && p.held_long() {
            self.start(&mut p);
        }
        if p.out.closed() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

impl Printing {
    /// Whether the result has been held back its second.
    fn held_long(&self) -> bool {
        self.began.is_some_and(|t| t.elapsed() >= HOLD_TIME)
    }

    fn show_count(&mut self) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K… {} rows", self.rows);
        let _ = err.flush();
        self.count_shown = true;
    }

    fn clear_count(&mut self) {
        if self.count_shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.count_shown = false;
        }
    }
}

/// psql's footer: `(1 row)`, `(3 rows)`.
pub fn row_count(n: u64) -> String {
    if n == 1 {
        "(1 row)".into()
    } else {
        format!("({n} rows)")
    }
}

fn rule(widths: &[usize]) -> String {
    let mut s = String::from("+");
    for w in widths {
        s.push_str(&"-".repeat(w + 2));
        s.push('+');
    }
    s
}

fn table_line(cells: &[String], widths: &[usize]) -> String {
    let mut s = String::from("|");
    for (c, w) in cells.iter().zip(widths) {
        let pad = w.saturating_sub(c.chars().count());
        s.push(' ');
        s.push_str(c);
        s.push_str(&" ".repeat(pad + 1));
        s.push('|');
    }
    s
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lines_pad_to_the_widths_and_longer_cells_widen_only_their_line() {
        let widths = [3, 1];
        assert_eq!(rule(&widths), "+-----+---+");
        assert_eq!(
            table_line(&["ab".into(), "x".into()], &widths),
            "| ab  | x |"
        );
        assert_eq!(
            table_line(&["abcd".into(), "".into()], &widths),
            "| abcd |   |"
        );
    }

    #[test]
    fn csv_cells_are_quoted_only_when_they_must_be() {
        assert_eq!(csv_cell("plain"), "plain");
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
