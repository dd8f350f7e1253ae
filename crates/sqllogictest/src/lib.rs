//! A sqllogictest engine for Tributary: each `.slt` file runs in a fresh [`Session`] over a
//! fresh on-disk catalog, so files are independent and exercise the real sled store.
//!
//! Results are rendered as text: `NULL` for nulls, `(empty)` for empty strings. Errors are
//! the statement's diagnostics, each as `error: message (at line:column)` followed by its
//! notes and help, so `statement error` patterns pin the wording users see.
//!
//! Every table a file creates must read back: its `SHOW CREATE TABLE`, run on a copy of
//! the catalog (an overlay, so the file's catalog is untouched), creates a table whose
//! `SHOW CREATE TABLE` is the same. A table holding secrets is exempt: `SHOW CREATE`
//! never gives them back.
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
use tributary_catalog::{CatalogStore, OverlayStore, SledStore};
use tributary_sql::{Output, Session, StatementError, session_config};

/// One test file's database.
#[derive(Debug)]
pub struct TributaryDb {
    session: Session,
    store: Arc<dyn CatalogStore>,
    /// Tables whose round trip was checked.
    checked: std::collections::HashSet<String>,
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
        let store: Arc<dyn CatalogStore> = Arc::new(store);
        // The files are about DDL semantics: connections are tested in
        // crates/sql/tests/connection_tests.rs, against real services.
        let mut session = Session::with_context(context(), store.clone()).offline();
        // Each record runs as a script of its own; the file is the pipeline script, so
        // its memory tables last for the whole file.
        session.set_keep_script_tables(true);
        Ok(Self {
            session,
            store,
            checked: Default::default(),
            _dir: dir,
        })
    }

    /// Check the round trip of every table created since the last check.
    async fn tables_read_back(&mut self) -> Result<(), EngineError> {
        let tables = self
            .store
            .tables()
            .map_err(|e| EngineError::Engine(e.to_string()))?;
        for t in tables {
            if !self.checked.insert(t.name.to_lowercase()) {
                continue;
            }
            let shown = show_create(&self.session, &t.name).await?;
            if tributary_types::contains_redacted(&shown) {
                continue;
            }
            let copy_name = "roundtrip_copy";
            let copy_sql = renamed(&shown, &t.name, copy_name);
            let scratch =
                Session::with_context(context(), Arc::new(OverlayStore::over(self.store.clone())))
                    .offline();
            scratch.execute(&copy_sql).await.map_err(|e| {
                EngineError::Engine(format!(
                    "SHOW CREATE TABLE {} does not read back: {e}\n{shown}",
                    t.name
                ))
            })?;
            let again = show_create(&scratch, copy_name).await?;
            if again != copy_sql {
                return Err(EngineError::Engine(format!(
                    "SHOW CREATE TABLE {} reads back as another table:\n{shown}\n---\n{again}",
                    t.name
                )));
            }
        }
        Ok(())
    }
}

/// The session context every file's sessions use.
fn context() -> SessionContext {
    // A fixed partition count keeps plans the same on machines with more cores.
    SessionContext::new_with_config(session_config().with_target_partitions(2))
}

/// `SHOW CREATE TABLE name`'s statement.
async fn show_create(session: &Session, name: &str) -> Result<String, EngineError> {
    let quoted = format!("\"{}\"", name.replace('"', "\"\""));
    let results = session
        .execute(&format!("SHOW CREATE TABLE {quoted}"))
        .await?;
    let rows = match results.last().map(|r| &r.output) {
        Some(Output::Rows { batches, .. }) => batches.clone(),
        _ => return Err(EngineError::Engine("SHOW CREATE TABLE gave no rows".into())),
    };
    let mut text = String::new();
    for b in &rows {
        let options = FormatOptions::default();
        for c in b.columns() {
            let f = ArrayFormatter::try_new(c.as_ref(), &options)
                .map_err(|e| EngineError::Engine(e.to_string()))?;
            for row in 0..b.num_rows() {
                text.push_str(&f.value(row).to_string());
            }
        }
    }
    Ok(text)
}

/// `statement` (a `CREATE [TEMPORARY] TABLE`) creating `to` instead of `from`.
fn renamed(statement: &str, from: &str, to: &str) -> String {
    let first = statement.lines().next().unwrap_or_default();
    let rest = &statement[first.len()..];
    let quoted = format!("\"{}\"", from.replace('"', "\"\""));
    let line = if first.contains(&quoted) {
        first.replacen(&quoted, to, 1)
    } else {
        first.replacen(&format!("TABLE {from}"), &format!("TABLE {to}"), 1)
    };
    format!("{line}{rest}")
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
        self.tables_read_back().await?;
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
