//! The `impulse` connector: a bounded or unbounded generator of `counter` rows, with a fixed
//! schema.

mod reader;

use crate::connector::{Connector, ConnectorInfo, Roles};
use crate::probe::Probe;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, FieldType, SourceField};

/// The `impulse` connector.
#[derive(Debug)]
pub struct Impulse;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("event_rate", "/event_rate"),
    OptionSpec::at("event_time_interval", "/event_time_interval"),
    OptionSpec::at("message_count", "/message_count"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "impulse",
    name: "Impulse",
    description: "Generate counter rows at a fixed rate",
    roles: Roles::SOURCE,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    requires_format: false,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Impulse {
    fn record_time(&self, table: &Value) -> &'static str {
        if table.get("event_time_interval").is_some() {
            "the start plus event_time_interval nanoseconds per row"
        } else {
            "the wall clock when each row is made"
        }
    }
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn bounded(&self, table: &Value) -> bool {
        table.get("message_count").is_some()
    }
    fn stays_local(&self, _table: &Value) -> bool {
        true
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        let table = probe.table.unwrap_or(&Value::Null);
        Some(Box::new(reader::ImpulseReader::new(table)))
    }
    fn fixed_schema(&self) -> Option<Vec<SourceField>> {
        Some(vec![
            SourceField::required("counter", FieldType::Int64),
            SourceField::required("subtask_index", FieldType::Int64),
        ])
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Source
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        let rate = table
            .get("event_rate")
            .map(Value::to_string)
            .unwrap_or_default();
        let bounded = if table.get("message_count").is_some() {
            "Bounded"
        } else {
            ""
        };
        match table.get("event_time_interval") {
            Some(i) => format!("{bounded}Impulse<{rate} eps, {i}ns>"),
            None => format!("{bounded}Impulse<{rate} eps>"),
        }
    }
}
