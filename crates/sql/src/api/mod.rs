//! The REST API's library half. Request bodies (Arroyo's shapes) become the SQL
//! statements they stand for and run through [`Session`](crate::Session) like any script,
//! so a profile or table made over REST is the same record as one made in SQL; records
//! come back as Arroyo's response shapes with every secret redacted. The server only
//! routes, authenticates and encodes.

mod bodies;
mod error;
mod statements;
mod views;

pub use bodies::{
    ConnectionProfilePatch, ConnectionProfilePost, ConnectionTablePatch, ConnectionTablePost,
    PaginationQueryParams, SchemaInferPost, SchemaPost, SqlPost, Udf, ValidateQueryPost,
};
pub use error::{ApiDiagnostic, ApiError, ApiStatus, ErrorResp};
pub use statements::{profile_statement, table_statement};
pub use views::{
    ConnectionAutocompleteResp, ConnectionProfileCollection, ConnectionProfileView,
    ConnectionTableCollection, ConnectionTableView, ConnectorCollection, ConnectorView,
    EmptyCollection, EmptyPage, PipelineEdge, PipelineGraph, PipelineNode, QueryValidationResult,
    SqlColumn, SqlDiagnostic, SqlLocation, SqlResponse, SqlSpan, SqlStatementResult,
    TestSourceMessage, connectors, field_view, schema_view,
};
