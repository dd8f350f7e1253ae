//! The `kafka` connector: Kafka topics as sources and sinks, with profiles holding the
//! brokers, authentication and schema registry. `confluent` reuses its table half.

pub(crate) mod probe;
mod reader;
mod writer;

use crate::connector::{
    Completions, Connector, ConnectorInfo, ProfileCheck, Roles, TableCheck, sink_if_set, str_at,
};
use crate::probe::{Probe, Stage, TestCode};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::{MetadataKey, MetadataType, OptionSpec, ValueKind};
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic, FieldType};

/// The table schema, shared with `confluent`.
pub(crate) const TABLE_SCHEMA: &str = include_str!("table.json");

/// The `kafka` connector.
#[derive(Debug)]
pub struct Kafka;

const SOURCE: &[&str] = &["source"];
const SINK: &[&str] = &["sink"];

/// Table options, shared with `confluent`.
pub(crate) const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("topic", "/topic"),
    OptionSpec::selector(
        "type",
        &["source", "sink"],
        None,
        "Whether the table reads the topic (source) or writes it (sink)",
    ),
    OptionSpec::at("source.offset", "/type/offset").when("type", SOURCE),
    OptionSpec::at("source.read_mode", "/type/read_mode").when("type", SOURCE),
    OptionSpec::at("source.group_id", "/type/group_id").when("type", SOURCE),
    OptionSpec::at("source.group_id_prefix", "/type/group_id_prefix").when("type", SOURCE),
    OptionSpec::at("sink.commit_mode", "/type/commit_mode").when("type", SINK),
    OptionSpec::at("sink.key_field", "/type/key_field")
        .when("type", SINK)
        .kind(ValueKind::Field),
    OptionSpec::at("sink.timestamp_field", "/type/timestamp_field")
        .when("type", SINK)
        .kind(ValueKind::Field),
    OptionSpec::at("client_configs", "/client_configs"),
    OptionSpec::at("value.subject", "/value_subject"),
];

const AUTH_SASL: &[&str] = &["sasl"];

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("bootstrap_servers", "/bootstrapServers"),
    OptionSpec::selector(
        "auth.type",
        &["none", "sasl", "aws_msk_iam"],
        Some("none"),
        "How clients authenticate to the brokers",
    ),
    OptionSpec::at("auth.protocol", "/authentication/protocol").when("auth.type", AUTH_SASL),
    OptionSpec::at("auth.mechanism", "/authentication/mechanism").when("auth.type", AUTH_SASL),
    OptionSpec::at("auth.username", "/authentication/username").when("auth.type", AUTH_SASL),
    OptionSpec::at("auth.password", "/authentication/password").when("auth.type", AUTH_SASL),
    OptionSpec::at("auth.region", "/authentication/region").when("auth.type", &["aws_msk_iam"]),
    OptionSpec::at("schema_registry.endpoint", "/schemaRegistryEnum/endpoint"),
    OptionSpec::at("schema_registry.api_key", "/schemaRegistryEnum/apiKey"),
    OptionSpec::at(
        "schema_registry.api_secret",
        "/schemaRegistryEnum/apiSecret",
    ),
];

/// Metadata keys, shared with `confluent`.
pub(crate) const METADATA: &[MetadataKey] = &[
    MetadataKey {
        key: "key",
        sql_type: MetadataType::Bytea,
        description: "The message key",
    },
    MetadataKey {
        key: "offset_id",
        sql_type: MetadataType::BigInt,
        description: "The message offset in its partition",
    },
    MetadataKey {
        key: "partition",
        sql_type: MetadataType::Int,
        description: "The partition the message came from",
    },
    MetadataKey {
        key: "timestamp",
        sql_type: MetadataType::BigInt,
        description: "The message timestamp, milliseconds since the epoch",
    },
    MetadataKey {
        key: "topic",
        sql_type: MetadataType::Text,
        description: "The topic the message came from",
    },
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "kafka",
    name: "Kafka",
    description: "Read and write Kafka topics",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: TABLE_SCHEMA,
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    metadata_keys: METADATA,
    ..ConnectorInfo::BASE
};

/// A Kafka record's event time, as `DESCRIBE` says it (Confluent's too).
pub(crate) const MESSAGE_TIME: &str = "each message's Kafka timestamp";

#[async_trait::async_trait]
impl Connector for Kafka {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn record_time(&self, _table: &Value) -> &'static str {
        MESSAGE_TIME
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        connection_type(table)
    }
    fn check_profile(&self, cx: &ProfileCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let registry = cx.config.get("schemaRegistryEnum");
        let has_endpoint = registry.and_then(|r| r.get("endpoint")).is_some();
        for key in ["schema_registry.api_key", "schema_registry.api_secret"] {
            if cx.options.spans.contains_key(key) && !has_endpoint {
                out.push(
                    Diagnostic::error(format!("option '{key}' requires 'schema_registry.endpoint'"))
                        .with_span(cx.span_of(key))
                        .with_help("Add 'schema_registry.endpoint' = 'http://host:8081', or remove the credential."),
                );
            }
        }
        out
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        check_table(cx)
    }
    fn profile_description(&self, profile: &Value) -> String {
        str_at(profile, "/bootstrapServers")
            .unwrap_or_default()
            .to_string()
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        describe_table(table, connection_type)
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe::test_connection(probe).await;
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        probe::test_table(probe).await;
    }
    async fn complete(&self, probe: &mut Probe<'_>) -> Option<Completions> {
        probe::topics(probe).await.map(|names| Completions {
            kind: "topic",
            names,
        })
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        open_source(probe).await
    }

    fn splits(&self, _table: &Value) -> bool {
        true
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        open_sink(probe).await
    }
}

/// A producer to the table's topic (kafka and confluent tables).
pub(crate) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    let table = probe.table.cloned().unwrap_or_default();
    if table.pointer("/type/timestamp_field").is_some() {
        probe.fail(
            Stage::Write,
            TestCode::Unsupported,
            "queries cannot set message timestamps from 'sink.timestamp_field' yet",
            "Remove sink.timestamp_field to write with the producer's timestamps.",
        );
        return None;
    }
    let (config, topic, _) = probe::locate(probe).await?;
    let opened = tokio::task::spawn_blocking(move || {
        writer::open(config, &topic, &table).map(|w| (w, topic))
    })
    .await;
    match opened {
        Ok(Ok((w, topic))) => {
            probe.pass(Stage::Write, format!("producing to '{topic}'"));
            Some(Box::new(w))
        }
        Ok(Err(e)) => {
            probe.fail(
                Stage::Write,
                TestCode::BadResponse,
                format!("cannot start a producer: {e}"),
                "Check the table's client_configs; exactly-once needs a cluster with transactions.",
            );
            None
        }
        Err(e) => {
            probe.fail(
                Stage::Write,
                TestCode::BadResponse,
                format!("starting the producer was interrupted: {e}"),
                "Try again.",
            );
            None
        }
    }
}

/// A reader of the table's topic, every partition, from its start offset (kafka and
/// confluent tables).
pub(crate) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let (config, topic, mut partitions) = probe::locate(probe).await?;
    let split = probe.split;
    partitions.retain(|p| usize::try_from(*p).is_ok_and(|n| split.takes(n)));
    if partitions.is_empty() {
        // More readers than partitions: this one has nothing to read.
        probe.pass(
            Stage::Read,
            format!("no partition of '{topic}' to read here"),
        );
        return Some(Box::new(crate::source::BufferedReader::default()));
    }
    let table = probe.table.cloned().unwrap_or_default();
    match reader::open(config, &topic, &partitions, &table) {
        Ok(r) => {
            probe.pass(
                Stage::Read,
                format!("reading {} partition(s) of '{topic}'", partitions.len()),
            );
            Some(Box::new(r))
        }
        Err(e) => {
            probe.fail(
                Stage::Read,
                TestCode::BadResponse,
                format!("cannot start a consumer of '{topic}': {e}"),
                "Check the table's client_configs and source options.",
            );
            None
        }
    }
}

/// Source when the `type` object holds source settings, sink otherwise.
pub(crate) fn connection_type(table: &Value) -> ConnectionType {
    sink_if_set(table, "/type/commit_mode")
}

pub(crate) fn describe_table(table: &Value, connection_type: ConnectionType) -> String {
    let topic = str_at(table, "/topic").unwrap_or_default();
    match connection_type {
        ConnectionType::Sink => format!("KafkaSink<{topic}>"),
        _ => format!("KafkaSource<{topic}>"),
    }
}

/// Table rules shared by `kafka` and `confluent`.
pub(crate) fn check_table(cx: &TableCheck<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if cx.config.pointer("/type/group_id").is_some()
        && cx.config.pointer("/type/group_id_prefix").is_some()
    {
        out.push(
            Diagnostic::warning(
                "option 'source.group_id_prefix' is ignored because 'source.group_id' is set",
            )
            .with_span(cx.span_of("source.group_id_prefix"))
            .with_help("Remove one of the two options."),
        );
    }
    type ColumnRule = (
        &'static str,
        &'static str,
        fn(&FieldType) -> bool,
        &'static str,
    );
    let column_rules: [ColumnRule; 2] = [
        (
            "/type/key_field",
            "sink.key_field",
            |t| *t == FieldType::String,
            "TEXT",
        ),
        (
            "/type/timestamp_field",
            "sink.timestamp_field",
            FieldType::is_timestamp,
            "TIMESTAMP",
        ),
    ];
    for (pointer, key, ok, want) in column_rules {
        let Some(col) = str_at(cx.config, pointer) else {
            continue;
        };
        if cx.schema.fields.is_empty() {
            continue;
        }
        match cx.schema.field(col) {
            None => out.push(
                Diagnostic::error(format!(
                    "option '{key}' names column '{col}', which table '{}' does not have",
                    cx.table
                ))
                .with_span(cx.span_of(key))
                .with_help(format!("Name a {want} column of the table.")),
            ),
            Some(f) if !ok(&f.field_type) => out.push(
                Diagnostic::error(format!(
                    "option '{key}' must name a {want} column, but column '{col}' is {}",
                    f.field_type
                ))
                .with_span(cx.span_of(key))
                .with_help(format!("Name a {want} column of the table.")),
            ),
            Some(_) => {}
        }
    }
    if cx.config.get("value_subject").is_some() {
        let has_registry = cx.profile.is_some_and(|p| {
            p.pointer("/schemaRegistryEnum/endpoint").is_some()
                || p.pointer("/schemaRegistry/endpoint").is_some()
        });
        if !has_registry {
            out.push(
                Diagnostic::error("option 'value.subject' requires a schema registry")
                    .with_span(cx.span_of("value.subject"))
                    .with_note("the connection settings configure no 'schema_registry.endpoint'")
                    .with_help("Set 'schema_registry.endpoint' on the connection profile, or remove 'value.subject'."),
            );
        }
    }
    out
}
