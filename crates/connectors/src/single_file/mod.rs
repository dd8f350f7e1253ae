//! The `single_file` connector: one local file as a source or sink.

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `single_file` connector.
#[derive(Debug)]
pub struct SingleFile;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("path", "/path"),
    OptionSpec::at("type", "/table_type"),
    OptionSpec::at("wait_for_control", "/wait_for_control"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "single_file",
    name: "Single File",
    description: "Read or write one local file",
    roles: Roles::SOURCE_AND_SINK,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    ..ConnectorInfo::BASE
};

impl Connector for SingleFile {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        if str_at(table, "/table_type") == Some("sink") {
            ConnectionType::Sink
        } else {
            ConnectionType::Source
        }
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let path = str_at(cx.config, "/path").unwrap_or_default();
        if path.contains("://") && !path.starts_with("file://") {
            return vec![
                Diagnostic::error(format!(
                    "single_file paths must be local, but '{path}' is a URL"
                ))
                .with_span(cx.span_of("path"))
                .with_help("Use a local path, or the filesystem connector for object stores."),
            ];
        }
        vec![]
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let path = str_at(table, "/path").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("SingleFileSink<{path}>"),
            _ => format!("SingleFileSource<{path}>"),
        }
    }
}
