//! The `iceberg` connector: Iceberg tables in a REST catalog, written as Parquet sinks,
//! partitioned by `PARTITIONED BY (bucket(col, N), day(ts), ...)`.

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::file_sink::{self, file_table_options};
use crate::spec::{OptionSpec, PartitionArg, PartitionTerm};
use serde_json::{Value, json};
use tributary_types::{ConnectionType, Diagnostic, FieldType, Format, SourceField};

/// The `iceberg` connector.
#[derive(Debug)]
pub struct Iceberg;

const PROFILE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("catalog.type", "/catalog/type"),
    OptionSpec::at("catalog.rest.url", "/catalog/url"),
    OptionSpec::at("catalog.warehouse", "/catalog/warehouse"),
    OptionSpec::at("catalog.rest.token", "/catalog/token"),
];

const TABLE_OPTIONS: &[OptionSpec] = file_table_options!("";
    OptionSpec::at("type", "/type"),
    OptionSpec::at("namespace", "/namespace"),
    OptionSpec::at("table_name", "/table_name"),
    OptionSpec::at("location_path", "/location_path"),
    OptionSpec::at(
        "shuffle_by_partition.enabled",
        "/partitioning/shuffle_by_partition/enabled",
    ),
);

const INFO: ConnectorInfo = ConnectorInfo {
    id: "iceberg",
    name: "Iceberg",
    description: "Write Iceberg tables through a REST catalog",
    roles: Roles::SINK,
    profile_schema: Some(include_str!("profile.json")),
    table_schema: include_str!("table.json"),
    profile_options: PROFILE_OPTIONS,
    table_options: TABLE_OPTIONS,
    // Parquet is the only format, and the default.
    requires_format: false,
    ..ConnectorInfo::BASE
};

/// Transforms and the integer argument they take after the column.
const TRANSFORMS: &[(&str, bool)] = &[
    ("identity", false),
    ("bucket", true),
    ("truncate", true),
    ("year", false),
    ("month", false),
    ("day", false),
    ("hour", false),
    ("void", false),
];

#[async_trait::async_trait]
impl Connector for Iceberg {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    async fn open_sink(
        &self,
        probe: &mut crate::probe::Probe<'_>,
    ) -> Option<Box<dyn crate::sink::SinkWriter>> {
        file_sink::refuse_table_format_write(probe, "Iceberg");
        None
    }
    fn connection_type(&self, _table: &Value) -> ConnectionType {
        ConnectionType::Sink
    }
    fn adjust_fields(&self, fields: &mut [SourceField]) {
        file_sink::timestamps_to_micros(fields);
    }
    fn default_format(&self) -> Option<Format> {
        Some(Format::Parquet(Default::default()))
    }
    fn partition_by(&self, terms: &[PartitionTerm], config: &mut Value) -> Option<Vec<Diagnostic>> {
        let mut diags = Vec::new();
        let mut fields = Vec::new();
        for term in terms {
            match partition_field(term) {
                Ok(f) => fields.push(f),
                Err(d) => diags.push(d),
            }
        }
        if diags.is_empty() {
            crate::schema_doc::insert_at(config, "/partitioning/fields", Value::Array(fields));
        }
        Some(diags)
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        match &cx.schema.format {
            None | Some(Format::Parquet(_)) => {}
            Some(other) => out.push(
                Diagnostic::error(format!("iceberg sinks write parquet, not '{other}'"))
                    .with_span(cx.span_of("format"))
                    .with_help("Use format = 'parquet', or leave 'format' out."),
            ),
        }
        let Some(fields) = cx
            .config
            .pointer("/partitioning/fields")
            .and_then(Value::as_array)
        else {
            return out;
        };
        for f in fields {
            let column = str_at(f, "/field").unwrap_or_default();
            let transform = f.get("transform");
            let Some(col) = cx.schema.field(column) else {
                if !cx.schema.fields.is_empty() {
                    out.push(
                        Diagnostic::error(format!(
                            "PARTITIONED BY names column '{column}', which table '{}' does not have",
                            cx.table
                        ))
                        .with_span(cx.statement_span)
                        .with_help("Partition by columns of the table."),
                    );
                }
                continue;
            };
            let time = matches!(
                transform.and_then(Value::as_str),
                Some("year" | "month" | "day" | "hour")
            );
            if time && !col.field_type.is_timestamp() {
                out.push(
                    Diagnostic::error(format!(
                        "partition transform '{}' needs a TIMESTAMP column, but '{column}' is {}",
                        transform.and_then(Value::as_str).unwrap_or_default(),
                        col.field_type
                    ))
                    .with_span(cx.statement_span)
                    .with_help(
                        "Use identity, bucket or truncate for columns that are not timestamps.",
                    ),
                );
            }
            let truncate = transform.is_some_and(|t| t.get("truncate").is_some());
            let truncatable = matches!(
                col.field_type,
                FieldType::Int32
                    | FieldType::Int64
                    | FieldType::String
                    | FieldType::Decimal128 { .. }
            );
            if truncate && !truncatable {
                out.push(
                    Diagnostic::error(format!(
                        "partition transform 'truncate' needs an integer, decimal or TEXT column, but '{column}' is {}",
                        col.field_type
                    ))
                    .with_span(cx.statement_span)
                    .with_help("Use bucket or identity for this column."),
                );
            }
        }
        out
    }
    fn profile_description(&self, profile: &Value) -> String {
        str_at(profile, "/catalog/url")
            .unwrap_or_default()
            .to_string()
    }
    fn table_description(&self, table: &Value, _connection_type: ConnectionType) -> String {
        format!(
            "IcebergSink{}<{}.{}>",
            file_sink::version(table, "/version"),
            str_at(table, "/namespace").unwrap_or("default"),
            str_at(table, "/table_name").unwrap_or_default()
        )
    }
}

/// One term as an Iceberg partition field: `{name, field, transform}`.
fn partition_field(term: &PartitionTerm) -> Result<Value, Diagnostic> {
    let err = |message: String, help: &str| {
        Diagnostic::error(message)
            .with_span(term.span)
            .with_help(help.to_string())
    };
    let Some(function) = &term.function else {
        let Some(PartitionArg::Column(c)) = term.args.first() else {
            return Err(err(
                format!("'{}' is not a partition term", term.text),
                "Write a column, or a transform such as bucket(id, 16) or day(ts).",
            ));
        };
        return Ok(json!({"name": c, "field": c, "transform": "identity"}));
    };
    let Some((_, takes_width)) = TRANSFORMS.iter().find(|(t, _)| t == function) else {
        let names: Vec<&str> = TRANSFORMS.iter().map(|(t, _)| *t).collect();
        return Err(err(
            format!("unknown iceberg partition transform '{function}'"),
            &format!(
                "Use one of {}.",
                tributary_types::options::quoted_list(&names)
            ),
        ));
    };
    let arity = if *takes_width { 2 } else { 1 };
    if term.args.len() != arity {
        let form = if *takes_width {
            format!("{function}(column, N)")
        } else {
            format!("{function}(column)")
        };
        return Err(err(
            format!(
                "partition transform '{function}' takes {arity} argument{}, got {}",
                if arity == 1 { "" } else { "s" },
                term.args.len()
            ),
            &format!("Write it as {form}."),
        ));
    }
    let PartitionArg::Column(column) = &term.args[0] else {
        return Err(err(
            format!("the first argument of '{function}' must be a column name"),
            &format!(
                "Write it as {function}(column{}).",
                if *takes_width { ", N" } else { "" }
            ),
        ));
    };
    let transform = if *takes_width {
        match &term.args[1] {
            PartitionArg::Integer(n) if *n > 0 => json!({ function.as_str(): n }),
            _ => {
                return Err(err(
                    format!("the second argument of '{function}' must be a positive integer"),
                    &format!("Write it as {function}({column}, 16)."),
                ));
            }
        }
    } else {
        Value::String(function.clone())
    };
    let suffix = match &term.args.get(1) {
        Some(PartitionArg::Integer(n)) => format!("{function}_{n}"),
        _ => function.clone(),
    };
    Ok(json!({"name": format!("{column}_{suffix}"), "field": column, "transform": transform}))
}
