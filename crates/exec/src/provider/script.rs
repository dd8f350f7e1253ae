//! Tables that live for a script rather than in the catalog, with Arroyo's meaning: a
//! memory table (`CREATE TABLE t (cols)` without WITH), written once by `INSERT INTO` and
//! read afterwards, and a named result (`CREATE TABLE t AS SELECT ...`). Each is a
//! [`ScriptTable`] whose content is the query that fills it; reading it inlines that
//! query, as a view does, so nothing is run or held until a query reads it.

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session as CatalogSession, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tributary_types::Span;

/// What a script table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptKind {
    /// `CREATE TABLE t (cols)` with no WITH: written by one INSERT.
    Memory,
    /// `CREATE TABLE t AS query`.
    Query,
}

/// One script table.
#[derive(Debug, Clone)]
pub struct ScriptTable {
    /// Its name as written.
    pub name: String,
    /// What it is.
    pub kind: ScriptKind,
    /// Its columns.
    pub schema: SchemaRef,
    /// The query that fills it, once written, and where the statement that wrote it is.
    pub content: Option<(LogicalPlan, Span)>,
}

impl ScriptTable {
    /// Whether it has been written (a named result always has).
    pub fn is_written(&self) -> bool {
        self.content.is_some()
    }
}

#[async_trait]
impl TableProvider for ScriptTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    fn get_logical_plan(&self) -> Option<Cow<'_, LogicalPlan>> {
        self.content.as_ref().map(|(plan, _)| Cow::Borrowed(plan))
    }

    async fn scan(
        &self,
        _state: &dyn CatalogSession,
        _projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // A written table is inlined before planning reaches here; the plan checks refuse
        // reading an unwritten one with a diagnostic first.
        Err(DataFusionError::Plan(format!(
            "memory table '{}' is read before anything is written to it",
            self.name
        )))
    }
}

tokio::task_local! {
    /// The script tables of the script being run, when the session keeps them per script.
    static SCRIPT_TABLES: Arc<ScriptTables>;
}

/// Run `fut` with a fresh set of script tables, which end with it.
pub async fn in_script_scope<F: Future>(fut: F) -> F::Output {
    SCRIPT_TABLES
        .scope(Arc::new(ScriptTables::default()), fut)
        .await
}

/// The script tables in scope: the running script's, or else `session_wide`.
pub(crate) fn script_tables(session_wide: &Arc<ScriptTables>) -> Arc<ScriptTables> {
    SCRIPT_TABLES
        .try_with(Arc::clone)
        .unwrap_or_else(|_| Arc::clone(session_wide))
}

/// The script tables of a session, by lowercase name.
#[derive(Debug, Default)]
pub struct ScriptTables {
    tables: Mutex<HashMap<String, ScriptTable>>,
}

impl ScriptTables {
    /// The table of this name, if any.
    pub fn get(&self, name: &str) -> Option<ScriptTable> {
        self.tables.lock().ok()?.get(&name.to_lowercase()).cloned()
    }

    /// Add or replace a table.
    pub fn put(&self, table: ScriptTable) {
        if let Ok(mut t) = self.tables.lock() {
            t.insert(table.name.to_lowercase(), table);
        }
    }

    /// Every name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tables
            .lock()
            .map(|t| t.values().map(|s| s.name.clone()).collect())
            .unwrap_or_default();
        names.sort_by_key(|n| n.to_lowercase());
        names
    }
}
