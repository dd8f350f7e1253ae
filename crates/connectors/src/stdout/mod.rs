//! The `stdout` connector: a sink that writes each row to standard output in its format.

use crate::connector::{Connector, ConnectorInfo, Roles};
use crate::probe::Probe;
use crate::sink::SinkWriter;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `stdout` connector.
#[derive(Debug)]
pub struct Stdout;

const INFO: ConnectorInfo = ConnectorInfo {
    id: "stdout",
    name: "StdOut",
    description: "Write rows to standard output",
    roles: Roles::SINK,
    table_schema: include_str!("table.json"),
    table_options: &[],
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Stdout {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn stays_local(&self, _table: &Value) -> bool {
        true
    }
    async fn open_sink(&self, _probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        Some(Box::new(crate::local_sinks::Stdout))
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn table_description(&self, _table: &Value, _connection_type: ConnectionType) -> String {
        "StdoutSink".into()
    }
}
