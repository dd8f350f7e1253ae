//! The `sse` connector: a Server-Sent Events stream as a source.

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::http::check_http_table;
use crate::http_probe::{read_events, request};
use crate::http_source::SseReader;
use crate::probe::{Probe, Stage};
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `sse` connector.
#[derive(Debug)]
pub struct Sse;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("endpoint", "/endpoint"),
    OptionSpec::at("headers", "/headers"),
    OptionSpec::at("events", "/events"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "sse",
    name: "Server-Sent Events",
    description: "Read events from a Server-Sent Events endpoint",
    roles: Roles::SOURCE,
    testing: true,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Sse {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Source
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        check_http_table(cx, &["http", "https"])
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "SSESource<{}>",
            str_at(table, "/endpoint").unwrap_or_default()
        )
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(
            Stage::Connect,
            "sse tables carry their endpoint; TEST TABLE connects to it",
        );
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        let events = event_types(probe);
        if let Some(response) = request(probe, "GET", None).await {
            read_events(probe, response, &events).await;
        }
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        let events = event_types(probe);
        let response = request(probe, "GET", None).await?;
        Some(Box::new(SseReader::new(response, events)))
    }
}

/// The event types the table reads (`events`, comma-separated); empty for all.
fn event_types(probe: &Probe<'_>) -> Vec<String> {
    probe
        .table
        .and_then(|t| str_at(t, "/events"))
        .map(|e| {
            e.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default()
}
