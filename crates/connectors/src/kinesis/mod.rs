//! The `kinesis` connector: AWS Kinesis data streams as sources and sinks. Credentials come
//! from the AWS environment, so there is no profile.

use crate::connector::{Connector, ConnectorInfo, Roles, source_if_set, str_at};
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `kinesis` connector.
#[derive(Debug)]
pub struct Kinesis;

const SINK: &[&str] = &["sink"];

// SQL and JSON names differ for the sink settings; both are Arroyo's.
const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("stream_name", "/stream_name"),
    OptionSpec::at("aws_region", "/aws_region"),
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        None,
        "Whether the table reads the stream (source) or writes it (sink)",
    )
    .creates(&[("sink", "/type")]),
    OptionSpec::at("source.offset", "/type/offset").when("type", &["source"]),
    OptionSpec::at(
        "sink.flush_interval_millis",
        "/type/batch_flush_interval_millis",
    )
    .when("type", SINK),
    OptionSpec::at("sink.max_bytes_per_batch", "/type/batch_max_buffer_size").when("type", SINK),
    OptionSpec::at("sink.max_records_per_batch", "/type/records_per_batch").when("type", SINK),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "kinesis",
    name: "Kinesis",
    description: "Read and write AWS Kinesis data streams",
    roles: Roles::SOURCE_AND_SINK,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

impl Connector for Kinesis {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        source_if_set(table, "/type/offset")
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let stream = str_at(table, "/stream_name").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("KinesisSink<{stream}>"),
            _ => format!("KinesisSource<{stream}>"),
        }
    }
}
