//! Tributary's SQL dialect: the parser (connection tables with WATERMARK, METADATA and
//! virtual columns, profiles, SHOW/DESCRIBE/DROP/TEST) on top of sqlparser, the option
//! pipeline and DDL planning that turn statements into validated catalog changes, and the
//! text around them: diagnostics as text, secret spans in scripts, SQL Tributary writes
//! itself. It plans but never executes: nothing here runs a DataFusion query.

pub mod column_types;
pub mod datafusion_diagnostics;
pub mod ddl;
pub mod declared_functions;
pub mod deep_stack;
pub mod help;
pub mod parser;
pub mod partial_lexer;
pub mod render;
pub mod secret_spans;
pub mod sql_writer;

pub use ddl::{GENERIC_PROFILE_OPTIONS, GENERIC_TABLE_OPTIONS, GenericOption};
pub use secret_spans::redact_sql;
