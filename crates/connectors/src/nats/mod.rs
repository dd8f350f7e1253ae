//! The `nats` connector: NATS core subjects and JetStream streams as sources, subjects as
//! sinks, with profiles holding the servers and authentication.

mod probe;
mod reader;
mod writer;

use crate::connector::Completions;
use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, sink_if_set, str_at};
use crate::probe::Probe;
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::{OptionSpec, ValueKind};
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `nats` connector.
#[derive(Debug)]
pub struct Nats;

const CREDENTIALS: &[&str] = &["credentials"];
const JWT: &[&str] = &["jwt"];

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("servers", "/servers"),
    OptionSpec::selector(
        "auth.type",
        &["none", "credentials", "jwt"],
        Some("none"),
        "How the client authenticates",
    )
    .creates(&[("none", "/authentication")]),
    OptionSpec::at("auth.username", "/authentication/username").when("auth.type", CREDENTIALS),
    OptionSpec::at("auth.password", "/authentication/password").when("auth.type", CREDENTIALS),
    OptionSpec::at("auth.jwt", "/authentication/jwt").when("auth.type", JWT),
    OptionSpec::at("auth.nkey_seed", "/authentication/nkeySeed").when("auth.type", JWT),
];

const SOURCE: &[&str] = &["source"];
const STREAM: &str = "/connectorType/sourceType/stream";

macro_rules! consumer {
    ($key:literal, $json:literal) => {
        OptionSpec::at($key, concat!("/connectorType/sourceType/", $json)).when("type", SOURCE)
    };
}

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        None,
        "Whether the table subscribes (source) or publishes (sink)",
    ),
    // A source reads a JetStream stream or a core subject; `subject` lands in the core
    // source or in the sink, by `type`.
    OptionSpec::at("stream", "/connectorType/sourceType/stream")
        .when("type", SOURCE)
        .exclusive_with(&["subject"]),
    OptionSpec::at("subject", "/connectorType/sourceType/subject")
        .when("type", SOURCE)
        .exclusive_with(&["stream"]),
    OptionSpec::at("subject", "/connectorType/sinkType/subject").when("type", &["sink"]),
    consumer!("consumer.description", "description"),
    consumer!("consumer.ack_policy", "ackPolicy").kind(ValueKind::Pascal),
    consumer!("consumer.replay_policy", "replayPolicy").kind(ValueKind::Pascal),
    consumer!("consumer.ack_wait", "ackWait"),
    consumer!("consumer.filter_subjects", "filterSubjects"),
    consumer!("consumer.sample_frequency", "sampleFrequency"),
    consumer!("consumer.num_replicas", "numReplicas"),
    consumer!("consumer.inactive_threshold", "inactiveThreshold"),
    consumer!("consumer.rate_limit", "rateLimit"),
    consumer!("consumer.max_ack_pending", "maxAckPending"),
    consumer!("consumer.max_deliver", "maxDeliver"),
    consumer!("consumer.max_waiting", "maxWaiting"),
    consumer!("consumer.max_batch", "maxBatch"),
    consumer!("consumer.max_bytes", "maxBytes"),
    consumer!("consumer.max_expires", "maxExpires"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "nats",
    name: "NATS",
    description: "Read NATS subjects and JetStream streams; publish to subjects",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: include_str!("table.json"),
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Nats {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        sink_if_set(table, "/connectorType/sinkType")
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if cx.connection_type != ConnectionType::Source {
            return out;
        }
        let reads_stream = cx.config.pointer(STREAM).is_some();
        if !reads_stream {
            for key in cx
                .options
                .spans
                .keys()
                .filter(|k| k.starts_with("consumer."))
            {
                out.push(
                    Diagnostic::error(format!(
                        "option '{key}' applies only to JetStream sources (set with 'stream')"
                    ))
                    .with_span(cx.span_of(key))
                    .with_help(
                        "Remove the consumer option, or read a stream instead of a subject.",
                    ),
                );
            }
        }
        out
    }
    fn profile_description(&self, profile: &Value) -> String {
        str_at(profile, "/servers").unwrap_or_default().to_string()
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let at = |p: &str| str_at(table, p).unwrap_or_default().to_string();
        match connection_type {
            ConnectionType::Sink => format!("NatsSink<{}>", at("/connectorType/sinkType/subject")),
            _ => match str_at(table, "/connectorType/sourceType/stream") {
                Some(stream) => format!("NatsSource<stream {stream}>"),
                None => format!("NatsSource<{}>", at("/connectorType/sourceType/subject")),
            },
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
