//! What file-writing sinks share (filesystem, delta, iceberg): the rolling, naming,
//! partitioning and multipart options, under a connector-specific JSON prefix, and the
//! checks on format, path and partition columns.

use crate::connector::{TableCheck, str_at};
use serde_json::Value;
use tributary_types::{Diagnostic, FieldType, Format, SourceField, TimeUnit};

/// The table options of a file sink whose settings live under JSON Pointer `$prefix`,
/// after the connector's own `$extra` options. Each applies when `type` is `'sink'`. With
/// `partitioned`, the directory partitioning options of filesystem and delta are added
/// (iceberg partitions with PARTITIONED BY instead).
macro_rules! file_table_options {
    ($prefix:literal, partitioned; $($extra:expr),* $(,)?) => {
        file_table_options!($prefix;
            $($extra,)*
            $crate::spec::OptionSpec::at(
                "partitioning.time_pattern",
                concat!($prefix, "/partitioning/time_pattern"),
            )
            .when("type", &["sink"]),
            $crate::spec::OptionSpec::at(
                "partitioning.fields",
                concat!($prefix, "/partitioning/fields"),
            )
            .when("type", &["sink"]),
            $crate::spec::OptionSpec::at(
                "shuffle_by_partition.enabled",
                concat!($prefix, "/partitioning/shuffle_by_partition/enabled"),
            )
            .when("type", &["sink"]),
        )
    };
    ($prefix:literal; $($extra:expr),* $(,)?) => {
        &[
            $($extra,)*
            $crate::spec::OptionSpec::prefixed(
                "storage.",
                concat!($prefix, "/storage_options"),
                "Object-store settings (credentials, region, endpoint)",
            ),
                $crate::spec::OptionSpec::at(
                    "rolling_policy.file_size",
                    concat!($prefix, "/rolling_policy/file_size_bytes"),
                )
                .when("type", &["sink"])
                .kind($crate::spec::ValueKind::DataSize),
                $crate::spec::OptionSpec::at(
                    "rolling_policy.interval",
                    concat!($prefix, "/rolling_policy/interval_seconds"),
                )
                .when("type", &["sink"])
                .kind($crate::spec::ValueKind::IntervalSeconds),
                $crate::spec::OptionSpec::at(
                    "rolling_policy.inactivity_interval",
                    concat!($prefix, "/rolling_policy/inactivity_seconds"),
                )
                .when("type", &["sink"])
                .kind($crate::spec::ValueKind::IntervalSeconds),
                $crate::spec::OptionSpec::at(
                    "rolling_policy.watermark_expiration",
                    concat!($prefix, "/rolling_policy/watermark_expiration"),
                )
                .when("type", &["sink"]),
                $crate::spec::OptionSpec::at("filename.prefix", concat!($prefix, "/file_naming/prefix")).when("type", &["sink"]),
                $crate::spec::OptionSpec::at("filename.suffix", concat!($prefix, "/file_naming/suffix")).when("type", &["sink"]),
                $crate::spec::OptionSpec::at("filename.strategy", concat!($prefix, "/file_naming/strategy")).when("type", &["sink"]),
                $crate::spec::OptionSpec::at(
                    "multipart.target_part_size",
                    concat!($prefix, "/multipart/target_part_size_bytes"),
                )
                .when("type", &["sink"])
                .kind($crate::spec::ValueKind::DataSize),
                $crate::spec::OptionSpec::at("multipart.max_parts", concat!($prefix, "/multipart/max_parts")).when("type", &["sink"]),
                $crate::spec::OptionSpec::at(
                    "multipart.minimum_multipart_size",
                    concat!($prefix, "/multipart/minimum_multipart_size"),
                )
                .when("type", &["sink"])
                .kind($crate::spec::ValueKind::DataSize),
                $crate::spec::OptionSpec::at("sink.version", concat!($prefix, "/version")).when("type", &["sink"]),
        ]
    };
}
pub(crate) use file_table_options;

/// File sinks write Parquet or JSON.
pub(crate) fn check_format(cx: &TableCheck<'_>, connector: &str, out: &mut Vec<Diagnostic>) {
    match &cx.schema.format {
        Some(Format::Json(_)) | Some(Format::Parquet(_)) | None => {}
        Some(other) => out.push(
            Diagnostic::error(format!(
                "{connector} sinks support the json and parquet formats, not '{other}'"
            ))
            .with_span(cx.span_of("format"))
            .with_help("Use format = 'parquet' or format = 'json'."),
        ),
    }
}

/// Refuse an INSERT into a table format (Delta Lake, Iceberg) whose commit protocol this
/// build does not write, saying what to do instead.
pub(crate) fn refuse_table_format_write(probe: &mut crate::probe::Probe<'_>, format: &str) {
    probe.fail(
        crate::probe::Stage::Write,
        crate::probe::TestCode::Unsupported,
        format!(
            "queries cannot write {format} tables: this build has no {format} commit writer \
             (data files are only part of a table; the commit that adds them is the format's)"
        ),
        "Write the rows as parquet with a filesystem sink (same partitioning and rolling \
         options) and add the files with the format's own tools, or run the INSERT as a \
         pipeline on Arroyo, which writes the table.",
    );
}

/// A time pattern must be one chrono can format, naming directories under the path.
pub(crate) fn check_time_pattern(cx: &TableCheck<'_>, pointer: &str, out: &mut Vec<Diagnostic>) {
    let Some(pattern) = cx.config.pointer(pointer).and_then(Value::as_str) else {
        return;
    };
    if let Err(why) = crate::file_layout::check_time_pattern(pattern) {
        out.push(
            Diagnostic::error(format!("invalid 'partitioning.time_pattern': {why}"))
                .with_span(cx.span_of("partitioning.time_pattern"))
                .with_help("Use strftime items under the path, such as '%Y/%m/%d/%H'."),
        );
    }
}

/// Partition fields must be columns of the table.
pub(crate) fn check_partition_fields(
    cx: &TableCheck<'_>,
    pointer: &str,
    out: &mut Vec<Diagnostic>,
) {
    let Some(fields) = cx.config.pointer(pointer).and_then(Value::as_array) else {
        return;
    };
    if cx.schema.fields.is_empty() {
        return;
    }
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

/// `V1` or `V2`, from `sink.version`.
pub(crate) fn version(table: &Value, pointer: &str) -> &'static str {
    if str_at(table, pointer) == Some("v2") {
        "V2"
    } else {
        "V1"
    }
}

/// Table formats store timestamps in microseconds (Iceberg has no nanosecond type before
/// v3): every timestamp column, nested ones included, is declared at that precision.
pub(crate) fn timestamps_to_micros(fields: &mut [SourceField]) {
    for f in fields {
        match &mut f.field_type {
            FieldType::Timestamp { unit } => *unit = TimeUnit::Microsecond,
            FieldType::Struct { fields } => timestamps_to_micros(fields),
            FieldType::List { items } => timestamps_to_micros(std::slice::from_mut(items)),
            _ => {}
        }
    }
}
