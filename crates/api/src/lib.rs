//! The REST API's library half. Request bodies (Arroyo's shapes) become the SQL
//! statements they stand for and run through [`Session`](tributary_sql::Session) like any script,
//! so a profile or table made over REST is the same record as one made in SQL; records
//! come back as Arroyo's response shapes with every secret redacted. The server only
//! routes, authenticates and encodes.
//!
//! Beside the bodies, the catalog's other exchanges with the outside world: [`dump`]
//! (the catalog as a SQL script), [`plan`] (SQL files compared with a catalog, then
//! applied) and [`arroyo_sync`] (push to and pull from an Arroyo cluster).

pub mod arroyo_sync;
pub mod dump;
pub mod plan;

mod bodies;
mod error;
mod governed;
mod plans;
mod probes;
mod profiles;
mod queries;
mod record_body;
mod rows;
mod run;
mod sql_stream;
mod statements;
mod tables;
mod udfs;
mod views;

pub use bodies::{
    ConnectionProfilePatch, ConnectionProfilePost, ConnectionTablePatch, ConnectionTablePost,
    PaginationQueryParams, SchemaInferPost, SchemaPost, SqlPost, Udf, ValidateQueryPost,
    VirtualColumnPost,
};
pub use error::{ApiDiagnostic, ApiError, ApiStatus, ErrorResp};
pub use governed::admit;
pub use plans::{ApplyPost, PlanFilePost, PlanPost, apply_files, plan_files};
pub use probes::{
    InferredSchema, TestStream, infer_schema, test_profile_stream, test_schema, test_table,
};
pub use profiles::{
    autocomplete, create_profile, delete_profile, find_profile, get_profile, list_profiles,
    patch_profile, test_profile,
};
pub use queries::{MAX_RESULT_ROWS, run_sql, validate_query};
pub(crate) use record_body::{record_parts, table_body};
pub use sql_stream::{SqlStream, stream_sql};
pub(crate) use statements::config_options;
pub use statements::{profile_statement, table_statement};
pub use tables::{
    create_sql, create_table, delete_table, find_table, get_table, list_tables, patch_table,
    table_body_sql,
};
pub use udfs::{GlobalUdfCollection, GlobalUdfView, list_udfs};
pub(crate) use views::with_table_options;
pub use views::{
    ConnectionAutocompleteResp, ConnectionProfileCollection, ConnectionProfileView,
    ConnectionTableCollection, ConnectionTableView, ConnectorCollection, ConnectorView,
    EmptyCollection, EmptyPage, PipelineEdge, PipelineGraph, PipelineNode, QueryValidationResult,
    SqlColumn, SqlDiagnostic, SqlEvent, SqlLocation, SqlResponse, SqlSpan, SqlStatementResult,
    TestSourceMessage, connectors, field_view, schema_view,
};
