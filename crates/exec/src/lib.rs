//! Execution over Tributary's catalog: DataFusion's catalog, schema and table providers
//! (scans, sinks, lookup joins), the window functions and the rules that keep streaming
//! plans correct, the bounds previews put on unbounded sources, connection probes
//! (`TEST CONNECTION PROFILE`, `TEST TABLE` and the tests DDL runs), and the resources
//! (slot, deadline, memory) every query runs inside.

pub mod connection_probe;
pub mod json_path;
pub mod pipeline_options;
pub mod preview_bounds;
pub mod provider;
pub mod resources;
pub mod result_text;
pub mod sample_rows;
pub mod sinks;
pub mod windows;

pub use connection_probe::{Progress, is_stage_note};
pub use provider::{
    ConnectionTableProvider, LookupJoin, LookupJoinExec, LookupJoins, SessionShared,
    TributaryCatalogProvider, TributaryQueryPlanner, TributarySchemaProvider,
};
pub use windows::{
    EVENT_TIME_METADATA, EventTimeWindows, ExpandWindows, window_functions, window_type,
};

/// The DataFusion catalog name Tributary registers.
pub const CATALOG_NAME: &str = "tributary";
/// The schema holding the connection tables.
pub const SCHEMA_NAME: &str = "public";
