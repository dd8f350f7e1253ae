//! The `filesystem` connector: files in local directories and object stores, as sources and
//! sinks. Object-store URLs are validated but not reached here.

mod path;

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::spec::{OptionSpec, ValueKind};
use serde_json::Value;
use tributary_types::{ConnectionType, Diagnostic, Format};

/// The `filesystem` connector.
#[derive(Debug)]
pub struct FileSystem;

const SOURCE: &[&str] = &["source"];
const SINK: &[&str] = &["sink"];

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("type", "/table_type/type"),
    OptionSpec::at("path", "/table_type/path"),
    OptionSpec::prefixed(
        "storage.",
        "/table_type/storage_options",
        "Object-store settings (credentials, region, endpoint)",
    ),
    OptionSpec::at("source.compression", "/table_type/compression_format").when("type", SOURCE),
    OptionSpec::at("source.regex_pattern", "/table_type/regex_pattern").when("type", SOURCE),
    OptionSpec::at(
        "rolling_policy.file_size",
        "/table_type/rolling_policy/file_size_bytes",
    )
    .when("type", SINK)
    .kind(ValueKind::DataSize),
    OptionSpec::at(
        "rolling_policy.interval",
        "/table_type/rolling_policy/interval_seconds",
    )
    .when("type", SINK)
    .kind(ValueKind::IntervalSeconds),
    OptionSpec::at(
        "rolling_policy.inactivity_interval",
        "/table_type/rolling_policy/inactivity_seconds",
    )
    .when("type", SINK)
    .kind(ValueKind::IntervalSeconds),
    OptionSpec::at(
        "rolling_policy.watermark_expiration",
        "/table_type/rolling_policy/watermark_expiration",
    )
    .when("type", SINK),
    OptionSpec::at("filename.prefix", "/table_type/file_naming/prefix").when("type", SINK),
    OptionSpec::at("filename.suffix", "/table_type/file_naming/suffix").when("type", SINK),
    OptionSpec::at("filename.strategy", "/table_type/file_naming/strategy").when("type", SINK),
    OptionSpec::at(
        "partitioning.time_pattern",
        "/table_type/partitioning/time_pattern",
    )
    .when("type", SINK),
    OptionSpec::at("partitioning.fields", "/table_type/partitioning/fields").when("type", SINK),
    OptionSpec::at(
        "shuffle_by_partition.enabled",
        "/table_type/partitioning/shuffle_by_partition/enabled",
    )
    .when("type", SINK),
    OptionSpec::at(
        "multipart.target_part_size",
        "/table_type/multipart/target_part_size_bytes",
    )
    .when("type", SINK)
    .kind(ValueKind::DataSize),
    OptionSpec::at("multipart.max_parts", "/table_type/multipart/max_parts").when("type", SINK),
    OptionSpec::at(
        "multipart.minimum_multipart_size",
        "/table_type/multipart/minimum_multipart_size",
    )
    .when("type", SINK)
    .kind(ValueKind::DataSize),
    OptionSpec::at("sink.version", "/table_type/version").when("type", SINK),
];

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
            match &cx.schema.format {
                Some(Format::Json(_)) | Some(Format::Parquet(_)) | None => {}
                Some(other) => out.push(
                    Diagnostic::error(format!(
                        "filesystem sinks support the json and parquet formats, not '{other}'"
                    ))
                    .with_span(cx.span_of("format"))
                    .with_help("Use format = 'parquet' or format = 'json'."),
                ),
            }
            if let Some(fields) = cx
                .config
                .pointer("/table_type/partitioning/fields")
                .and_then(Value::as_array)
                && !cx.schema.fields.is_empty()
            {
                for f in fields.iter().filter_map(Value::as_str) {
                    if cx.schema.field(f).is_none() {
                        out.push(
                            Diagnostic::error(format!(
                                "partition field '{f}' is not a column of table '{}'",
                                cx.table
                            ))
                            .with_span(cx.span_of("partitioning.fields"))
                            .with_help("Partition by columns of the table."),
                        );
                    }
                }
            }
        }
        out
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let p = str_at(table, "/table_type/path").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => {
                let version = if str_at(table, "/table_type/version") == Some("v2") {
                    "V2"
                } else {
                    "V1"
                };
                format!("FileSystemSink{version}<{p}>")
            }
            _ => format!("FileSystemSource<{p}>"),
        }
    }
}
