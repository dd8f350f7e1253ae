//! Tributary's shared vocabulary: the schema model, connection types, ids, secrets and
//! diagnostics. This crate is the leaf of the workspace: it depends on nothing internal and
//! knows nothing of SQL, storage or connectors.

pub mod access;
pub mod codes;
mod definition;
mod diagnostic;
mod duration;
mod field;
mod format;
mod ids;
mod known_secrets;
pub mod limits;
pub mod options;
mod records;
mod schema;
mod secret;
mod span;
mod suggest;

pub use definition::{
    Definition, DefinitionBody, DefinitionKind, Dependency, FunctionArg, FunctionSignature,
    Namespace,
};
pub use diagnostic::{Diagnostic, Diagnostics, MAX_MESSAGE_CHARS, Severity, bound_diagnostics};
pub use duration::{parse_data_size, parse_interval_micros};
pub use field::{FieldType, SourceField, TimeUnit, quote_ident};
pub use format::{
    AvroFormat, BadData, DecimalEncoding, Format, Framing, JsonCompression, JsonFormat,
    ParquetCompression, ParquetFormat, ProtobufFormat, TimestampFormat,
};
pub use ids::{ProfileId, TableId};
pub use known_secrets::{MAX_KNOWN, MIN_SECRET_CHARS, remember_secret, remember_secrets_in};
pub use options::{SqlOption, WithOptions};
pub use records::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionTable, LastTest, OptionEntry, OptionValue,
    RegistrySource, VirtualColumn, Watermark,
};
pub use schema::{ConnectionSchema, ConnectionType, SchemaDefinition, SchemaError, column_origin};
pub use secret::{
    REDACTED, contains_env_reference, contains_redacted, env_references, is_env_reference,
    looks_secret, merge_ranges, printable_secret, redact_answer, redact_text, resolve_env,
    secret_ranges,
};
pub use span::{Location, Span};
pub use suggest::{closest, edit_distance};
