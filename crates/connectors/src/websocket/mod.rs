//! The `websocket` connector: a WebSocket server's messages as a source, with optional
//! subscription messages sent after connecting.

mod probe;
mod reader;

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::http::check_http_table;
use crate::probe::{Probe, Stage};
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `websocket` connector.
#[derive(Debug)]
pub struct Websocket;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("endpoint", "/endpoint"),
    OptionSpec::at("headers", "/headers"),
    OptionSpec::at("subscription_message", "/subscription_message"),
    OptionSpec::indexed(
        "subscription_messages.",
        "/subscription_messages",
        "A message sent after connecting; numbered from 0, sent in order",
    ),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "websocket",
    name: "Websocket",
    description: "Read messages from a WebSocket server",
    roles: Roles::SOURCE,
    testing: true,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Websocket {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Source
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = check_http_table(cx, &["ws", "wss"]);
        if cx.config.get("subscription_message").is_some() {
            if cx.config.get("subscription_messages").is_some() {
                out.push(
                    Diagnostic::error(
                        "options 'subscription_message' and 'subscription_messages.N' cannot both be set",
                    )
                    .with_span(cx.span_of("subscription_message"))
                    .with_help("Move the message to 'subscription_messages.0' and number the others after it."),
                );
            } else {
                out.push(
                    Diagnostic::warning("option 'subscription_message' is deprecated")
                        .with_span(cx.span_of("subscription_message"))
                        .with_help("Write 'subscription_messages.0' instead."),
                );
            }
        }
        out
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "WebsocketSource<{}>",
            str_at(table, "/endpoint").unwrap_or_default()
        )
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(
            Stage::Connect,
            "websocket tables carry their endpoint; TEST TABLE connects to it",
        );
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        probe::test_table(probe).await;
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        probe::open_source(probe).await
    }
}
