//! What running a statement produces: [`Mode`], [`Output`], [`StatementResult`] and
//! [`StatementError`], and the [`Reply`] statement handlers build before the session
//! attaches the statement's span.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use tributary_types::{Diagnostic, Span};

/// How a script is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Execute every statement; stop at the first failure.
    Run,
    /// Validate every statement: DDL is applied to the session's store (an overlay, for
    /// `tributary check`), queries are planned but not run, nothing connects to any
    /// system, and every failure is reported.
    Check,
}

/// What a successful statement produced.
#[derive(Debug, Clone)]
pub enum Output {
    /// A command that returns no rows: its tag, such as `CREATE TABLE`.
    Done(String),
    /// Rows.
    Rows {
        /// The result schema.
        schema: SchemaRef,
        /// The rows.
        batches: Vec<RecordBatch>,
    },
    /// Rows handed to a [`RowSink`](super::RowSink) as they arrived.
    Streamed {
        /// The result schema.
        schema: SchemaRef,
        /// How many rows the sink received.
        rows: u64,
        /// Whether the sink stopped the query before its end.
        stopped: bool,
    },
}

/// One statement's success.
#[derive(Debug, Clone)]
pub struct StatementResult {
    /// Where the statement is.
    pub span: Span,
    /// What it produced.
    pub output: Output,
    /// Warnings (deprecated spellings, skipped IF NOT EXISTS, ...).
    pub warnings: Vec<Diagnostic>,
}

/// One statement's failure: nothing it would have changed was changed.
#[derive(Debug, Clone)]
pub struct StatementError {
    /// Where the statement is.
    pub span: Span,
    /// Every problem found, errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for StatementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StatementError {}

/// What running a script came to, beyond each statement's outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptSummary {
    /// Statements run (or checked).
    pub statements: usize,
    /// Statements that failed.
    pub failed: usize,
    /// Diagnostics not reported because the script reached its limit.
    pub suppressed_diagnostics: usize,
}

/// One statement's outcome.
pub type Outcome = Result<StatementResult, StatementError>;

/// A statement handler's success, before the session adds the statement's span.
#[derive(Debug)]
pub(crate) struct Reply {
    pub output: Output,
    pub warnings: Vec<Diagnostic>,
}

impl Reply {
    /// A command tag and its warnings.
    pub fn done(tag: &str, warnings: Vec<Diagnostic>) -> Self {
        Self {
            output: Output::Done(tag.into()),
            warnings,
        }
    }

    /// One batch of rows.
    pub fn rows(batch: RecordBatch) -> Self {
        Self::rows_with(batch, vec![])
    }

    /// One batch of rows, with notes.
    pub fn rows_with(batch: RecordBatch, warnings: Vec<Diagnostic>) -> Self {
        Self {
            output: Output::Rows {
                schema: batch.schema(),
                batches: vec![batch],
            },
            warnings,
        }
    }
}

/// What a statement handler returns.
pub(crate) type Handled = Result<Reply, Vec<Diagnostic>>;
