//! Tributary's SQL front door: [`Session`], which runs scripts statement by statement,
//! applying DDL (planned by `tributary-dialect`) to the catalog and running queries
//! through DataFusion over the providers of `tributary-exec`. Embedders use this crate;
//! it re-exports what they need from the two below. The catalog as data (REST bodies,
//! dumps, plan/apply, Arroyo sync) is `tributary-api`, completion `tributary-complete`;
//! both build on this crate.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tributary_catalog::OverlayStore;
//! use tributary_sql::Session;
//!
//! let session = Session::new(Arc::new(OverlayStore::in_memory()));
//! session.execute("CREATE TABLE ticks WITH (connector = 'impulse', event_rate = 10)").await?;
//! let results = session.execute("EXPLAIN SELECT counter FROM ticks").await?;
//! # Ok(()) }
//! ```

pub mod describe;
pub mod report;
pub mod session;

// The layers below, under the names embedders have always used.
pub use tributary_dialect::datafusion_diagnostics as errors;
pub use tributary_dialect::{help, parser, render};
pub use tributary_exec::preview_bounds as preview;
pub use tributary_exec::{pipeline_options, resources};

pub use session::{
    DefinitionTest, IDLE_TICK, Mode, Outcome, Output, RowSink, ScriptSummary, Session,
    StatementError, StatementResult, register, session_config,
};
pub use tributary_connectors::probe::{Outcome as TestOutcome, TestEvent};
pub use tributary_dialect::{
    GENERIC_PROFILE_OPTIONS, GENERIC_TABLE_OPTIONS, GenericOption, redact_sql,
};
pub use tributary_exec::{
    CATALOG_NAME, ConnectionTableProvider, EVENT_TIME_METADATA, EventTimeWindows, ExpandWindows,
    LookupJoin, LookupJoinExec, LookupJoins, Progress, SCHEMA_NAME, SessionShared,
    TributaryCatalogProvider, TributaryQueryPlanner, TributarySchemaProvider, is_stage_note,
    window_functions, window_type,
};
