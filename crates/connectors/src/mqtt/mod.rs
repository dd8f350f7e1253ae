//! The `mqtt` connector: MQTT topics as sources (subscriptions, with wildcards) and sinks
//! (publishing), with profiles holding the broker URL, credentials and TLS files.

mod probe;
mod reader;
mod writer;

use crate::connector::{
    Connector, ConnectorInfo, ProfileCheck, Roles, TableCheck, sink_if_set, str_at,
};
use crate::probe::Probe;
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::{MetadataKey, MetadataType, OptionSpec, ValueKind};
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `mqtt` connector.
#[derive(Debug)]
pub struct Mqtt;

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("url", "/url"),
    OptionSpec::at("username", "/username"),
    OptionSpec::at("password", "/password"),
    OptionSpec::at("client_prefix", "/clientPrefix"),
    OptionSpec::at("max_packet_size", "/maxPacketSize"),
    OptionSpec::at("tls.ca", "/tls/ca"),
    OptionSpec::at("tls.cert", "/tls/cert"),
    OptionSpec::at("tls.key", "/tls/key"),
];

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("topic", "/topic"),
    OptionSpec::at("qos", "/qos").kind(ValueKind::Pascal),
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        None,
        "Whether the table subscribes to the topic (source) or publishes to it (sink)",
    )
    .creates(&[("source", "/type")]),
    OptionSpec::at("sink.retain", "/type/retain").when("type", &["sink"]),
];

const METADATA: &[MetadataKey] = &[MetadataKey {
    key: "topic",
    sql_type: MetadataType::Text,
    description: "The topic the message was published to",
}];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "mqtt",
    name: "MQTT",
    description: "Subscribe to and publish MQTT topics",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: include_str!("table.json"),
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    metadata_keys: METADATA,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Mqtt {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        sink_if_set(table, "/type/retain")
    }
    fn check_profile(&self, cx: &ProfileCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let url = str_at(cx.config, "/url").unwrap_or_default();
        let tls_url = url.starts_with("ssl://") || url.starts_with("mqtts://");
        if !tls_url && let Some(tls) = cx.config.get("tls").and_then(Value::as_object) {
            for key in tls.keys() {
                let option = format!("tls.{key}");
                out.push(
                    Diagnostic::error(format!(
                        "option '{option}' only applies to ssl:// and mqtts:// URLs"
                    ))
                    .with_span(cx.span_of(&option))
                    .with_help("Use an mqtts:// URL, or remove the TLS options."),
                );
            }
        }
        let has = |k: &str| cx.config.pointer(&format!("/tls/{k}")).is_some();
        if has("cert") != has("key") {
            let (given, missing) = if has("cert") {
                ("tls.cert", "tls.key")
            } else {
                ("tls.key", "tls.cert")
            };
            out.push(
                Diagnostic::error(format!("option '{given}' requires '{missing}'"))
                    .with_span(cx.span_of(given))
                    .with_help("A client certificate needs its private key: set both or neither."),
            );
        }
        if cx.config.get("password").is_some() && cx.config.get("username").is_none() {
            out.push(
                Diagnostic::error("option 'password' requires 'username'")
                    .with_span(cx.span_of("password"))
                    .with_help("Add username = '...', or remove the password."),
            );
        }
        out
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if cx.connection_type == ConnectionType::Sink
            && let Some(topic) = str_at(cx.config, "/topic")
            && topic.contains(['+', '#'])
        {
            out.push(
                Diagnostic::error(format!(
                    "mqtt sinks publish to one topic; '{topic}' contains a wildcard"
                ))
                .with_span(cx.span_of("topic"))
                .with_help("Wildcards (+ and #) are for sources; name a single topic."),
            );
        }
        out
    }
    fn profile_description(&self, profile: &Value) -> String {
        str_at(profile, "/url").unwrap_or_default().to_string()
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let topic = str_at(table, "/topic").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("MqttSink<{topic}>"),
            _ => format!("MqttSource<{topic}>"),
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
}
