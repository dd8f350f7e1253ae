//! The `stdout` connector: a sink that writes each row to standard output in its format.

use crate::connector::{Connector, Roles};
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::ConnectionType;

/// The `stdout` connector.
#[derive(Debug)]
pub struct Stdout;

impl Connector for Stdout {
    fn id(&self) -> &'static str {
        "stdout"
    }
    fn name(&self) -> &'static str {
        "StdOut"
    }
    fn description(&self) -> &'static str {
        "Write rows to standard output"
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
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn table_description(&self, _table: &Value, _connection_type: ConnectionType) -> String {
        "StdoutSink".into()
    }
}
