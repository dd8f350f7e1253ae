//! Tributary's SQL layer: the dialect and parser, the option pipeline that turns DDL into
//! validated catalog records, DataFusion's catalog/schema/table providers over the catalog,
//! window functions, and [`Session`], which runs scripts.
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

pub mod api;
pub mod arroyo_sync;
pub mod complete;
mod ddl;
mod declared;
mod deep;
pub mod describe;
pub mod dump;
pub mod errors;
pub mod help;
mod json_path;
mod mask;
pub mod parser;
pub mod pipeline_options;
pub mod plan;
pub mod preview;
mod provider;
pub mod render;
pub mod report;
pub mod resources;
mod sample_rows;
mod session;
mod sinks;
mod sql_text;
mod testing;
mod types;
mod windows;

pub use ddl::{GENERIC_PROFILE_OPTIONS, GENERIC_TABLE_OPTIONS, GenericOption};
pub use mask::redact_sql;
pub use provider::{
    ConnectionTableProvider, LookupJoin, LookupJoinExec, LookupJoins, SessionShared,
    TributaryCatalogProvider, TributaryQueryPlanner, TributarySchemaProvider,
};
pub use session::{
    DefinitionTest, IDLE_TICK, Mode, Outcome, Output, RowSink, ScriptSummary, Session,
    StatementError, StatementResult, register, session_config,
};
pub use testing::{Progress, is_stage_note};
pub use tributary_connectors::probe::{Outcome as TestOutcome, TestEvent};
pub use windows::{
    EVENT_TIME_METADATA, EventTimeWindows, ExpandWindows, window_functions, window_type,
};

/// The DataFusion catalog name Tributary registers.
pub const CATALOG_NAME: &str = "tributary";
/// The schema holding the connection tables.
pub const SCHEMA_NAME: &str = "public";
