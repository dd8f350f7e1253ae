//! A sqllogictest engine for Tributary: each `.slt` file runs in a fresh [`Session`] over a
//! fresh on-disk catalog, so files are independent and exercise the real sled store.
//!
//! Results are rendered as text: `NULL` for nulls, `(empty)` for empty strings. Errors are
//! the statement's diagnostics, each as `error: message (at line:column)` followed by its
//! notes and help, so `statement error` patterns pin the wording users see.
//!
//! A statement that returns no rows but warns (a skipped `IF NOT EXISTS`, a column
//! approximated as JSON) returns its warnings as rows, one line each, so a `query T` record
//! asserts them; `statement ok` accepts any result, as before.

use async_trait::async_trait;
use datafusion::arrow::array::Array;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::SessionContext;
use sqllogictest::{DBOutput, DefaultColumnType};
use std::sync::Arc;
use tributary_catalog::SledStore;
use tributary_sql::{Output, Session, StatementError, session_config};

/// One test file's database.
#[derive(Debug)]
pub struct TributaryDb {
    session: Session,
    _dir: tempfile::TempDir,
}

/// Why a statement failed, or why the engine could not run it.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The statement was rejected.
    #[error("{0}")]
    Statement(#[from] StatementError),
    /// The test harness itself failed.
    #[error("test engine: {0}")]
    Engine(String),
}

impl TributaryDb {
    /// A database over a new, empty catalog in a temporary directory.
    pub fn new() -> Result<Self, EngineError> {
        let dir = tempfile::tempdir().map_err(|e| EngineError::Engine(e.to_string()))?;
        let store = SledStore::open(dir.path().join("catalog"))
            .map_err(|e| EngineError::Engine(e.to_string()))?;
        // A fixed partition count keeps plans the same on machines with more cores.
        let ctx = SessionContext::new_with_config(session_config().with_target_partitions(2));
        // The files are about DDL semantics: connections are tested in
        // crates/sql/tests/connection_tests.rs, against real services.
        let mut session = Session::with_context(ctx, Arc::new(store)).offline();
        // Each record runs as a script of its own; the file is the pipeline script, so
        // its memory tables last for the whole file.
        session.set_keep_script_tables(true);
        Ok(Self { session, _dir: dir })
    }
}

/// Every diagnostic the files meet must carry a code more precise than the general
/// `INVALID`, which marks a rule that forgot to say what it found.
fn precisely_coded(diags: &[tributary_types::Diagnostic]) -> Result<(), EngineError> {
    for d in diags {
        match d.code {
            Some(code) if code != tributary_types::codes::INVALID => {}
            other => {
                return Err(EngineError::Engine(format!(
                    "diagnostic '{}' has code {other:?}: give it a precise code from tributary_types::codes",
                    d.message
                )));
            }
        }
    }
    Ok(())
}

/// A row whose cells span several lines (plans, CREATE statements) becomes one row of the
/// first lines followed by one single-cell row per further line, so expected results stay
/// readable.
fn split_multiline(cells: Vec<String>) -> Vec<Vec<String>> {
    if !cells.iter().any(|c| c.contains('\n')) {
        return vec![cells];
    }
    let first: Vec<String> = cells
        .iter()
        .map(|c| c.lines().next().unwrap_or_default().to_string())
        .collect();
    let mut out = vec![first];
    for c in &cells {
        out.extend(
            c.lines()
                .skip(1)
                .filter(|l| !l.trim().is_empty())
                .map(|l| vec![l.to_string()]),
        );
    }
    out
}

#[async_trait]
impl sqllogictest::AsyncDB for TributaryDb {
    type Error = EngineError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<Self::ColumnType>, Self::Error> {
        let mut results = match self.session.execute(sql).await {
            Ok(results) => results,
            Err(e) => {
                precisely_coded(&e.diagnostics)?;
                return Err(e.into());
            }
        };
        for r in &results {
            precisely_coded(&r.warnings)?;
        }
        let Some(last) = results.pop() else {
            return Ok(DBOutput::StatementComplete(0));
        };
        match last.output {
            Output::Done(_) if !last.warnings.is_empty() => Ok(DBOutput::Rows {
                types: vec![DefaultColumnType::Text],
                rows: last
                    .warnings
                    .iter()
                    .flat_map(|w| split_multiline(vec![w.to_string()]))
                    .collect(),
            }),
            Output::Done(_) => Ok(DBOutput::StatementComplete(0)),
            // `execute` gathers rows; a streamed result reports its count.
            Output::Streamed { rows, .. } => Ok(DBOutput::StatementComplete(rows)),
            Output::Rows { schema, batches } => {
                let types = schema
                    .fields()
                    .iter()
                    .map(|_| DefaultColumnType::Text)
                    .collect();
                let mut rows = Vec::new();
                let options = FormatOptions::default().with_null("NULL");
                for batch in &batches {
                    let formatters = batch
                        .columns()
                        .iter()
                        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| EngineError::Engine(e.to_string()))?;
                    for row in 0..batch.num_rows() {
                        let cells: Vec<String> = formatters
                            .iter()
                            .zip(batch.columns())
                            .map(|(f, col)| {
                                let s = f.value(row).to_string();
                                if s.is_empty() && !col.is_null(row) {
                                    "(empty)".to_string()
                                } else {
                                    s
                                }
                            })
                            .collect();
                        rows.extend(split_multiline(cells));
                    }
                }
                Ok(DBOutput::Rows { types, rows })
            }
        }
    }

    fn engine_name(&self) -> &str {
        "tributary"
    }

    async fn shutdown(&mut self) {}
}
