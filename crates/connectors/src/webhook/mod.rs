//! The `webhook` connector: rows POSTed as JSON to an HTTP endpoint (a sink).

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck};
use crate::http::check_http_table;
use crate::http_probe::{HttpTarget, request_allowing};
use crate::http_source::WebhookWriter;
use crate::probe::{Probe, Stage, TestCode};
use crate::sink::SinkWriter;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic, Format};

/// The `webhook` connector.
#[derive(Debug)]
pub struct Webhook;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("endpoint", "/endpoint"),
    OptionSpec::at("headers", "/headers"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "webhook",
    name: "Webhook",
    description: "POST rows to an HTTP endpoint",
    roles: Roles::SINK,
    testing: true,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Webhook {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = check_http_table(cx, &["https", "http"]);
        match &cx.schema.format {
            Some(Format::Json(_)) | Some(Format::RawString { .. }) | None => {}
            Some(other) => out.push(
                Diagnostic::error(format!(
                    "webhook sinks send each row as a request body in the json or raw_string format, not '{other}'"
                ))
                .with_span(cx.span_of("format"))
                .with_help("Use format = 'json'."),
            ),
        }
        out
    }
    fn table_description(&self, _table: &Value, _connection_type: ConnectionType) -> String {
        // The endpoint may hold a token in its query string: it is not repeated here.
        "WebhookSink".into()
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(
            Stage::Connect,
            "webhook tables carry their endpoint; TEST TABLE reaches it",
        );
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        if probe.format.is_none() {
            probe.fail(
                Stage::Write,
                TestCode::Unsupported,
                "the table has no format to write its rows in",
                "Set format = 'json' on the webhook table.",
            );
            return None;
        }
        let target = HttpTarget::of(probe, "POST", None).await?;
        probe.pass(Stage::Write, "posting each row");
        Some(Box::new(WebhookWriter::new(target)))
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        // OPTIONS reaches the endpoint (and its authentication) without posting a row.
        if request_allowing(probe, "OPTIONS", None, true)
            .await
            .is_some()
        {
            probe.pass(
                Stage::Write,
                "the endpoint is reachable; nothing was posted (OPTIONS request)",
            );
        }
    }
}
