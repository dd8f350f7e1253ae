//! The `blackhole` connector: a sink that discards rows and needs no format.

use crate::connector::{Connector, ConnectorInfo, Roles};
use crate::probe::Probe;
use crate::sink::SinkWriter;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `blackhole` connector.
#[derive(Debug)]
pub struct Blackhole;

const INFO: ConnectorInfo = ConnectorInfo {
    id: "blackhole",
    name: "Blackhole",
    description: "Discard every row written",
    roles: Roles::SINK,
    table_schema: include_str!("table.json"),
    table_options: &[],
    requires_format: false,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Blackhole {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn stays_local(&self, _table: &Value) -> bool {
        true
    }
    async fn open_sink(&self, _probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        Some(Box::new(crate::local_sinks::Discard))
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn table_description(&self, _table: &Value, _connection_type: ConnectionType) -> String {
        "BlackholeSink".into()
    }
}
