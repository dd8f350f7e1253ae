//! The `confluent` connector: Kafka on Confluent Cloud. Its profile holds an API key and
//! secret (SASL_SSL with PLAIN underneath); its tables are Kafka tables.

use crate::connector::{
    Completions, Connector, ConnectorInfo, ProfileCheck, Roles, TableCheck, str_at,
};
use crate::kafka;
use crate::probe::Probe;
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `confluent` connector.
#[derive(Debug)]
pub struct Confluent;

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("bootstrap_servers", "/bootstrapServers"),
    OptionSpec::at("key", "/key"),
    OptionSpec::at("secret", "/secret"),
    OptionSpec::at("schema_registry.endpoint", "/schemaRegistry/endpoint"),
    OptionSpec::at("schema_registry.api_key", "/schemaRegistry/apiKey"),
    OptionSpec::at("schema_registry.api_secret", "/schemaRegistry/apiSecret"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "confluent",
    name: "Confluent Cloud",
    description: "Read and write Kafka topics on Confluent Cloud",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: kafka::TABLE_SCHEMA,
    profile_options: PROFILE_OPTIONS,
    table_options: kafka::TABLE_OPTIONS,
    metadata_keys: kafka::METADATA,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Confluent {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn record_time(&self, _table: &Value) -> &'static str {
        kafka::MESSAGE_TIME
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        kafka::connection_type(table)
    }
    fn check_profile(&self, cx: &ProfileCheck<'_>) -> Vec<Diagnostic> {
        // Unlike kafka, a Confluent registry needs both credentials (Arroyo's rule); a
        // credential without an endpoint is caught by the schema's dependentRequired.
        let mut out = Vec::new();
        if cx.config.pointer("/schemaRegistry/endpoint").is_some() {
            for key in ["schema_registry.api_key", "schema_registry.api_secret"] {
                if !cx.options.spans.contains_key(key) {
                    out.push(
                        Diagnostic::error(format!(
                            "missing required option '{key}' for {} of connector 'confluent'",
                            cx.object
                        ))
                        .with_span(cx.span_of("schema_registry.endpoint"))
                        .with_note("Confluent Cloud's schema registry needs an API key and secret")
                        .with_help(format!("Add '{key}' = '...' to the WITH clause.")),
                    );
                }
            }
        }
        out
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        kafka::check_table(cx)
    }
    fn profile_description(&self, profile: &Value) -> String {
        str_at(profile, "/bootstrapServers")
            .unwrap_or_default()
            .to_string()
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        kafka::describe_table(table, connection_type)
    }
    // Confluent tables are Kafka tables; the Kafka probe reads the key and secret as
    // SASL_SSL PLAIN credentials.
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        kafka::probe::test_connection(probe).await;
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        kafka::probe::test_table(probe).await;
    }
    async fn complete(&self, probe: &mut Probe<'_>) -> Option<Completions> {
        kafka::probe::topics(probe).await.map(|names| Completions {
            kind: "topic",
            names,
        })
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        kafka::open_source(probe).await
    }

    fn splits(&self, _table: &Value) -> bool {
        true
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        kafka::open_sink(probe).await
    }
}
