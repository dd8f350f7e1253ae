//! Connectors: the [`Connector`] trait, the explicit [`registry`], the generic option engine
//! that maps WITH options onto a connector's JSON config, and one folder per connector with
//! its profile and table JSON Schemas.
//!
//! This crate knows nothing of SQL parsing or storage: it receives [`WithOptions`] and
//! returns JSON configs and diagnostics.
//!
//! [`WithOptions`]: tributary_types::WithOptions

mod connector;
pub mod describe;
pub mod lookup;
mod mapping;
mod markdown;
pub mod probe;
mod registry;
mod reverse;
mod schema_doc;
mod secrets;
pub mod sink;
pub mod source;
mod spec;

mod directory_sink;
pub mod file_layout;
mod file_sink;
mod http;
mod http_probe;
mod http_source;
mod local_files;
mod local_sinks;

mod blackhole;
mod confluent;
mod delta;
mod filesystem;
mod fluvio;
mod iceberg;
mod impulse;
mod kafka;
mod kinesis;
mod mqtt;
mod nats;
mod nexmark;
mod polling_http;
mod rabbitmq;
mod redis;
mod single_file;
mod sse;
mod stdout;
mod webhook;
mod websocket;

pub use connector::{
    Completions, Connector, ConnectorInfo, ProfileCheck, Roles, TableCheck, str_at,
};
pub use local_files::{ListError, MAX_DIRECTORIES, subdirectories};
pub use mapping::{CompiledSchema, MapRequest, MappedOptions, current_form, map_options};
pub use markdown::connectors_markdown;
pub use registry::{RegisteredConnector, Registry, registry};
pub use reverse::{ConfigOptions, options_from_config};
pub use schema_doc::{PropertyInfo, property};
pub use secrets::{
    ConfigKind, holds_secret, is_address_option, is_secret_option, redact_config,
    secrets_dropped_message, secrets_unbound_by,
};
pub use spec::{
    Condition, MetadataKey, MetadataType, OptionSpec, PartitionArg, PartitionTerm, Target,
    ValueKind,
};
