//! The `nexmark` connector: the Nexmark benchmark generator, with its fixed schema of
//! `person`, `auction` and `bid` structs.

mod reader;

use crate::connector::{Connector, ConnectorInfo, Roles};
use crate::probe::Probe;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, FieldType, SourceField, TimeUnit};

/// The `nexmark` connector.
#[derive(Debug)]
pub struct Nexmark;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("event_rate", "/event_rate"),
    OptionSpec::at("runtime", "/runtime"),
];

fn required_struct(fields: &[(&str, FieldType)]) -> FieldType {
    FieldType::Struct {
        fields: fields
            .iter()
            .map(|(n, t)| SourceField::required(*n, t.clone()))
            .collect(),
    }
}

const INFO: ConnectorInfo = ConnectorInfo {
    id: "nexmark",
    name: "Nexmark",
    description: "Generate the Nexmark benchmark's persons, auctions and bids",
    roles: Roles::SOURCE,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    requires_format: false,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Nexmark {
    fn record_time(&self, _table: &Value) -> &'static str {
        "each event's time (the date_time of its person, auction or bid)"
    }
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn bounded(&self, table: &Value) -> bool {
        table.get("runtime").is_some()
    }
    fn stays_local(&self, _table: &Value) -> bool {
        true
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        let table = probe.table.unwrap_or(&Value::Null);
        Some(Box::new(reader::NexmarkReader::new(table)))
    }
    fn fixed_schema(&self) -> Option<Vec<SourceField>> {
        let ts = FieldType::Timestamp {
            unit: TimeUnit::Nanosecond,
        };
        let (text, big) = (FieldType::String, FieldType::Int64);
        Some(vec![
            SourceField::new(
                "person",
                required_struct(&[
                    ("id", big.clone()),
                    ("name", text.clone()),
                    ("email_address", text.clone()),
                    ("credit_card", text.clone()),
                    ("city", text.clone()),
                    ("state", text.clone()),
                    ("datetime", ts.clone()),
                    ("extra", text.clone()),
                ]),
            ),
            SourceField::new(
                "auction",
                required_struct(&[
                    ("id", big.clone()),
                    ("description", text.clone()),
                    ("item_name", text.clone()),
                    ("initial_bid", big.clone()),
                    ("reserve", big.clone()),
                    ("datetime", ts.clone()),
                    ("expires", ts.clone()),
                    ("seller", big.clone()),
                    ("category", big.clone()),
                    ("extra", text.clone()),
                ]),
            ),
            SourceField::new(
                "bid",
                required_struct(&[
                    ("auction", big.clone()),
                    ("bidder", big.clone()),
                    ("price", big),
                    ("channel", text.clone()),
                    ("url", text.clone()),
                    ("datetime", ts),
                    ("extra", text),
                ]),
            ),
        ])
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Source
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "Nexmark<{} eps>",
            table
                .get("event_rate")
                .map(Value::to_string)
                .unwrap_or_default()
        )
    }
}
