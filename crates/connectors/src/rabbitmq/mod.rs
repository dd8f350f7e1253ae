//! The `rabbitmq` connector: RabbitMQ streams (the stream protocol, port 5552) as sources
//! and sinks. Every profile setting has a default, so a profile may be empty.

mod client;
mod probe;
mod reader;
mod wire;
mod writer;

use crate::connector::{Completions, Connector, ConnectorInfo, Roles, source_if_set, str_at};
use crate::probe::Probe;
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `rabbitmq` connector.
#[derive(Debug)]
pub struct Rabbitmq;

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("host", "/host"),
    OptionSpec::at("port", "/port"),
    OptionSpec::at("username", "/username"),
    OptionSpec::at("password", "/password"),
    OptionSpec::at("virtual_host", "/virtual_host"),
    OptionSpec::at("load_balancer_mode", "/load_balancer_mode"),
    OptionSpec::at("tls_config.enabled", "/tls_config/enabled"),
    OptionSpec::at(
        "tls_config.trust_certificates",
        "/tls_config/trust_certificates",
    ),
    OptionSpec::at(
        "tls_config.root_certificates_path",
        "/tls_config/root_certificates_path",
    ),
    OptionSpec::at(
        "tls_config.client_certificates_path",
        "/tls_config/client_certificates_path",
    ),
    OptionSpec::at(
        "tls_config.client_keys_path",
        "/tls_config/client_keys_path",
    ),
];

// Arroyo declares a sink (`type: {}`) but never implemented it; here it publishes.
const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("stream", "/stream"),
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        Some("source"),
        "Whether the table reads the stream (source) or publishes to it (sink)",
    )
    .creates(&[("sink", "/type")]),
    OptionSpec::at("source.offset", "/type/offset").when("type", &["source"]),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "rabbitmq",
    name: "RabbitMQ Stream",
    description: "Read and write RabbitMQ streams over the stream protocol",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: include_str!("table.json"),
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Rabbitmq {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        source_if_set(table, "/type/offset")
    }
    fn profile_description(&self, profile: &Value) -> String {
        let host = str_at(profile, "/host").unwrap_or("localhost");
        let port = profile.get("port").and_then(Value::as_u64).unwrap_or(5552);
        format!("{host}:{port}")
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let stream = str_at(table, "/stream").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("RabbitmqStreamSink<{stream}>"),
            _ => format!("RabbitmqStreamSource<{stream}>"),
        }
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe::test_connection(probe).await;
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        probe::test_table(probe).await;
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        probe::open_source(probe).await
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        probe::open_sink(probe).await
    }
    async fn complete(&self, probe: &mut Probe<'_>) -> Option<Completions> {
        probe::streams(probe).await.map(|names| Completions {
            kind: "stream",
            names,
        })
    }
}
