//! The `filesystem` connector: files in local directories and object stores, as sources and
//! sinks. Object-store URLs are validated but not reached here.

pub(crate) mod path;
mod probe;

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::file_sink::{self, file_table_options};
use crate::local_files::local_path;
use crate::probe::{Probe, Stage};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic};

/// The `filesystem` connector.
#[derive(Debug)]
pub struct FileSystem;

const SOURCE: &[&str] = &["source"];

const TABLE_OPTIONS: &[OptionSpec] = file_table_options!("/table_type", partitioned;
    OptionSpec::at("type", "/table_type/type"),
    OptionSpec::at("path", "/table_type/path"),
    OptionSpec::at("source.compression", "/table_type/compression_format").when("type", SOURCE),
    OptionSpec::at("source.regex_pattern", "/table_type/regex_pattern").when("type", SOURCE),
);

const INFO: ConnectorInfo = ConnectorInfo {
    id: "filesystem",
    name: "FileSystem",
    description: "Read and write files in local directories and object stores (S3, GCS, Azure, R2)",
    roles: Roles::SOURCE_AND_SINK,
    testing: true,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    json_compression: true,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for FileSystem {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        if str_at(table, "/table_type/type") == Some("sink") {
            ConnectionType::Sink
        } else {
            ConnectionType::Source
        }
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if let Some(p) = str_at(cx.config, "/table_type/path")
            && let Err(e) = path::validate(p)
        {
            out.push(
                Diagnostic::error(format!("invalid path '{p}': {e}"))
                    .with_span(cx.span_of("path"))
                    .with_help("Use a local path, a file:// URL, or an object-store URL such as 's3://bucket/prefix'."),
            );
        }
        if let Some(pattern) = str_at(cx.config, "/table_type/regex_pattern")
            && let Err(e) = regex::Regex::new(pattern)
        {
            let first = e
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .trim()
                .to_string();
            out.push(
                Diagnostic::error(format!(
                    "option 'source.regex_pattern' is not a valid regular expression: {first}"
                ))
                .with_span(cx.span_of("source.regex_pattern"))
                .with_help("Fix the expression; for example '.*\\.json$' matches JSON files."),
            );
        }
        if cx.connection_type == ConnectionType::Sink {
            file_sink::check_format(cx, "filesystem", &mut out);
            file_sink::check_partition_fields(cx, "/table_type/partitioning/fields", &mut out);
            file_sink::check_time_pattern(cx, "/table_type/partitioning/time_pattern", &mut out);
        }
        out
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let p = str_at(table, "/table_type/path").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!(
                "FileSystemSink{}<{p}>",
                file_sink::version(table, "/table_type/version")
            ),
            _ => format!("FileSystemSource<{p}>"),
        }
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(
            Stage::Connect,
            "the filesystem connector has no connection settings",
        );
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        probe::test_table(probe).await;
    }
    fn bounded(&self, _table: &Value) -> bool {
        // A source reads the files there when the query starts, then ends.
        true
    }
    fn splits(&self, _table: &Value) -> bool {
        // Each file is a split: several streams read a directory's files side by side.
        true
    }
    fn stays_local(&self, table: &Value) -> bool {
        str_at(table, "/table_type/path").is_some_and(|p| local_path(p).is_some())
    }
    fn writes_local_files(&self, table: &Value) -> bool {
        self.stays_local(table)
    }
    fn local_read_path<'t>(&self, table: &'t Value) -> Option<&'t str> {
        str_at(table, "/table_type/path").filter(|p| local_path(p).is_some())
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        probe::open_source(probe).await
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        probe::open_sink(probe).await
    }
}
