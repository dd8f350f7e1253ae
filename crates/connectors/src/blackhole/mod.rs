//! The `blackhole` connector: a sink that discards rows and needs no format.

use crate::connector::{Connector, Roles};
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `blackhole` connector.
#[derive(Debug)]
pub struct Blackhole;

impl Connector for Blackhole {
    fn id(&self) -> &'static str {
        "blackhole"
    }
    fn name(&self) -> &'static str {
        "Blackhole"
    }
    fn description(&self) -> &'static str {
        "Discard every row written"
    }
    fn roles(&self) -> Roles {
        Roles {
            source: false,
            sink: true,
            lookup: false,
        }
    }
    fn table_schema(&self) -> &'static str {
        include_str!("table.json")
    }
    fn table_options(&self) -> &'static [OptionSpec] {
        &[]
    }
    fn requires_format(&self) -> bool {
        false
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn table_description(&self, _table: &Value, _connection_type: ConnectionType) -> String {
        "BlackholeSink".into()
    }
}
