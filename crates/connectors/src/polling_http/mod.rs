//! The `polling_http` connector: an HTTP endpoint requested at an interval, each response
//! body a message (a source).

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::http::check_http_table;
use crate::http_probe::{HttpTarget, read_body, request, root_cause, send};
use crate::http_source::PollingReader;
use crate::probe::{Probe, Stage, TestCode};
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use std::time::Duration;
use tributary_types::{ConnectionType, Diagnostic};

/// The `polling_http` connector.
#[derive(Debug)]
pub struct PollingHttp;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("endpoint", "/endpoint"),
    OptionSpec::at("headers", "/headers"),
    OptionSpec::at("method", "/method"),
    OptionSpec::at("body", "/body"),
    OptionSpec::at("poll_interval_ms", "/poll_interval_ms"),
    OptionSpec::at("emit_behavior", "/emit_behavior"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "polling_http",
    name: "Polling HTTP",
    description: "Poll an HTTP endpoint and read each response as a message",
    roles: Roles::SOURCE,
    testing: true,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for PollingHttp {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Source
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = check_http_table(cx, &["http", "https"]);
        if cx.config.get("body").is_some() && str_at(cx.config, "/method").unwrap_or("GET") == "GET"
        {
            out.push(
                Diagnostic::error("option 'body' needs method 'POST', 'PUT' or 'PATCH'")
                    .with_span(cx.span_of("body"))
                    .with_help("Set method = 'POST', or remove 'body'."),
            );
        }
        out
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "PollingHTTPSource<{}>",
            str_at(table, "/endpoint").unwrap_or_default()
        )
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(
            Stage::Connect,
            "polling_http tables carry their endpoint; TEST TABLE requests it",
        );
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        // One poll, as the source would make it.
        let (method, body) = method_and_body(probe);
        if let Some(response) = request(probe, &method, body).await {
            read_body(probe, response).await;
        }
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        let (method, body) = method_and_body(probe);
        let target = HttpTarget::of(probe, &method, body).await?;
        let response = send(probe, &target, false).await?;
        let first = match response.bytes().await {
            Ok(b) => b.to_vec(),
            Err(e) => {
                probe.fail(
                    Stage::Read,
                    TestCode::BadResponse,
                    format!("the response broke off: {}", root_cause(&e)),
                    "Check the server.",
                );
                return None;
            }
        };
        let table = probe.table.unwrap_or(&Value::Null);
        let interval = table
            .get("poll_interval_ms")
            .and_then(Value::as_u64)
            .unwrap_or(1000)
            .max(1);
        let only_changed = str_at(table, "/emit_behavior") == Some("changed");
        Some(Box::new(PollingReader::new(
            target,
            first,
            Duration::from_millis(interval),
            only_changed,
        )))
    }
}

/// The table's request method (GET unless it says otherwise) and body.
fn method_and_body(probe: &Probe<'_>) -> (String, Option<String>) {
    let method = probe
        .table
        .and_then(|t| str_at(t, "/method"))
        .unwrap_or("GET")
        .to_string();
    let body = probe
        .table
        .and_then(|t| str_at(t, "/body"))
        .map(str::to_string);
    (method, body)
}
