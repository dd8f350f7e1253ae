//! The `fluvio` connector: Fluvio topics as sources and sinks.

use crate::connector::{Connector, ConnectorInfo, Roles, source_if_set, str_at};
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `fluvio` connector.
#[derive(Debug)]
pub struct Fluvio;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("endpoint", "/endpoint"),
    OptionSpec::at("topic", "/topic"),
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        None,
        "Whether the table reads the topic (source) or writes it (sink)",
    )
    .creates(&[("sink", "/type")]),
    OptionSpec::at("source.offset", "/type/offset").when("type", &["source"]),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "fluvio",
    name: "Fluvio",
    description: "Read and write Fluvio topics",
    roles: Roles::SOURCE_AND_SINK,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

impl Connector for Fluvio {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        source_if_set(table, "/type/offset")
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let topic = str_at(table, "/topic").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("FluvioSink<{topic}>"),
            _ => format!("FluvioSource<{topic}>"),
        }
    }
}
