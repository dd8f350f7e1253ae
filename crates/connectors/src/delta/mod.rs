//! The `delta` connector: Delta Lake tables in local directories or object stores, written
//! as sinks with the filesystem sink's options.

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::file_sink::{self, file_table_options};
use crate::filesystem::path;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic, SourceField};

/// The `delta` connector.
#[derive(Debug)]
pub struct Delta;

const TABLE_OPTIONS: &[OptionSpec] = file_table_options!("/table_type", partitioned;
    OptionSpec::at("type", "/table_type/type"),
    OptionSpec::at("path", "/table_type/path"),
);

const INFO: ConnectorInfo = ConnectorInfo {
    id: "delta",
    name: "Delta Lake",
    description: "Write Delta Lake tables in local directories and object stores",
    roles: Roles::SINK,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for Delta {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    async fn open_sink(
        &self,
        probe: &mut crate::probe::Probe<'_>,
    ) -> Option<Box<dyn crate::sink::SinkWriter>> {
        file_sink::refuse_table_format_write(probe, "Delta Lake");
        None
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn adjust_fields(&self, fields: &mut [SourceField]) {
        file_sink::timestamps_to_micros(fields);
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if let Some(p) = str_at(cx.config, "/table_type/path")
            && let Err(e) = path::validate(p)
        {
            out.push(
                Diagnostic::error(format!("invalid path '{p}': {e}"))
                    .with_span(cx.span_of("path"))
                    .with_help("Use a local directory, a file:// URL, or an object-store URL such as 's3://bucket/table'."),
            );
        }
        file_sink::check_format(cx, "delta", &mut out);
        file_sink::check_partition_fields(cx, "/table_type/partitioning/fields", &mut out);
        out
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "DeltaLakeSink<{}>",
            str_at(table, "/table_type/path").unwrap_or_default()
        )
    }
}
