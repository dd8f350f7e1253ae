//! Rules on a table's schema: fixed schemas, tables without columns, Avro and Protobuf
//! schemas, Debezium, registry pins and the event-time column.

use super::columns::Columns;
use crate::parser::ast::CreateTable;
use tributary_types::{
    ConnectionType, Diagnostic, FieldType, Format, SourceField, Span, WithOptions,
};

pub(super) fn fixed_schema(
    id: &str,
    fixed: Vec<SourceField>,
    cols: &mut Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if !stmt.columns.is_empty() {
        let declared: Vec<(String, FieldType, bool)> = cols
            .fields
            .iter()
            .map(|f| (f.name.clone(), f.field_type.clone(), f.required))
            .collect();
        let expected: Vec<(String, FieldType, bool)> = fixed
            .iter()
            .map(|f| (f.name.clone(), f.field_type.clone(), f.required))
            .collect();
        if declared == expected && cols.declared_types.is_empty() {
            // Exactly the connector's columns: nothing to say.
        } else if cols.declared_types.is_empty() && same_columns(&declared, &expected) {
            // Arroyo's documentation declares impulse's columns `BIGINT UNSIGNED`: the
            // connector's own columns, in a compatible type, are its schema.
            diags.push(
                Diagnostic::note(format!(
                    "table '{}' takes the columns of connector '{id}' as it supplies them: {}",
                    stmt.name.value,
                    schema_list(&fixed)
                ))
                .with_span(stmt.columns[0].span)
                .with_help("Omit the column list; the connector supplies its schema.")
                .with_code(tributary_types::codes::ADVICE),
            );
        } else {
            diags.push(
                Diagnostic::error(format!(
                    "the columns of table '{}' do not match the fixed schema of connector '{id}'",
                    stmt.name.value
                ))
                .with_span(stmt.columns[0].span)
                .with_note(format!("its schema is: {}", schema_list(&fixed)))
                .with_help("Omit the column list; the connector supplies its schema.")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
            );
        }
    }
    cols.set_fields(fixed, tributary_types::column_origin::CONNECTOR);
}

/// `counter BIGINT NOT NULL, subtask_index BIGINT NOT NULL`.
fn schema_list(fields: &[SourceField]) -> String {
    let list: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{} {}{}",
                f.name,
                f.field_type,
                if f.required { " NOT NULL" } else { "" }
            )
        })
        .collect();
    list.join(", ")
}

/// Whether `declared` names the connector's columns, in order, each in a type of the same
/// family (integers of any width and sign, floating point), whatever its nullability.
fn same_columns(
    declared: &[(String, FieldType, bool)],
    expected: &[(String, FieldType, bool)],
) -> bool {
    let family = |t: &FieldType| match t {
        FieldType::Int32 | FieldType::Int64 | FieldType::Uint32 | FieldType::Uint64 => {
            Some("integer")
        }
        FieldType::Float32 | FieldType::Float64 => Some("float"),
        _ => None,
    };
    declared.len() == expected.len()
        && declared
            .iter()
            .zip(expected)
            .all(|((dn, dt, _), (en, et, _))| {
                dn.eq_ignore_ascii_case(en)
                    && (dt == et || (family(dt).is_some() && family(dt) == family(et)))
            })
}

/// A source without declared physical columns: formats that read the whole message as
/// one `value` column get it (before any metadata and virtual columns); other sources
/// must declare columns. Sinks take their schema from the first INSERT.
pub(super) fn no_columns(
    name: &str,
    t: ConnectionType,
    format: Option<&Format>,
    cols: &mut Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if t == ConnectionType::Sink {
        return;
    }
    let value = match format {
        Some(Format::RawString {}) => Some(FieldType::String),
        Some(Format::RawBytes {}) => Some(FieldType::Bytes),
        Some(f) if f.unstructured_option().is_some() => Some(FieldType::Json),
        _ => None,
    };
    match value {
        Some(t) => cols.insert_at_star(vec![SourceField::new("value", t)], "format"),
        None if cols.fields.is_empty() && cols.declared_types.is_empty() => diags.push(
            Diagnostic::error(format!("{t} table '{name}' declares no columns"))
                .with_span(stmt.name.span)
                .with_help("Declare its columns: CREATE TABLE name (col TYPE, ...) WITH (...).")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
        ),
        None => {}
    }
}

/// `schema_registry.version` and `schema_registry.id` (read by the registry fetch) only
/// make sense with a registry-framed format.
pub(super) fn registry_pins(
    opts: &mut WithOptions,
    format: Option<&Format>,
    diags: &mut Vec<Diagnostic>,
) {
    let framed = match format {
        Some(Format::Avro(a)) => a.confluent_schema_registry,
        Some(Format::Json(j)) => j.confluent_schema_registry,
        Some(Format::Protobuf(p)) => p.confluent_schema_registry,
        _ => false,
    };
    for key in ["schema_registry.version", "schema_registry.id"] {
        if let Some(o) = opts.take(key)
            && !framed
        {
            diags.push(
                Diagnostic::error(format!(
                    "option '{key}' needs a registry-framed format"
                ))
                .with_span(o.key_span)
                .with_help("Set '<format>.confluent_schema_registry' = true (avro, json or protobuf), or remove the option.")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
            );
        }
    }
}

/// Avro and Protobuf tables need a schema: sources read with it, and Avro sinks without
/// one write with the schema their columns imply.
pub(super) fn avro_rules(
    name: &str,
    format: Option<&mut Format>,
    t: ConnectionType,
    cols: &Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    let a = match format {
        Some(Format::Avro(a)) => a,
        Some(Format::Protobuf(p)) if p.compiled_schema.is_none() => {
            diags.push(
                Diagnostic::error(format!("protobuf {t} table '{name}' needs the message's schema"))
                    .with_span(stmt.name.span)
                    .with_help("Give 'protobuf.descriptor_file' or 'protobuf.schema_file' with 'protobuf.message', or name the topic so its '<topic>-value' subject is read from the schema registry.")
                    .with_code(tributary_types::codes::INVALID_SCHEMA),
            );
            return;
        }
        _ => return,
    };
    if a.reader_schema.is_some() {
        return;
    }
    if t == ConnectionType::Sink {
        let physical: Vec<SourceField> = cols
            .fields
            .iter()
            .filter(|f| f.metadata_key.is_none())
            .cloned()
            .collect();
        match tributary_formats::avro_schema_for_fields(name, &physical) {
            Ok(text) => a.reader_schema = Some(text),
            Err(e) => diags.push(
                Diagnostic::error(format!(
                    "sink table '{name}' cannot be written as Avro: {e}"
                ))
                .with_span(stmt.name.span)
                .with_help(
                    "Change the column's type, or give the writer schema with 'avro.schema'.",
                )
                .with_code(tributary_types::codes::INVALID_SCHEMA),
            ),
        }
        return;
    }
    let help = if a.confluent_schema_registry {
        "Give the schema with 'avro.schema' or 'avro.schema_file', or name the topic so its '<topic>-value' subject is read from the schema registry."
    } else {
        "Give the schema with 'avro.schema' or 'avro.schema_file', or set 'avro.confluent_schema_registry' to read it from the schema registry."
    };
    diags.push(
        Diagnostic::error(format!("avro {t} table '{name}' needs an Avro schema"))
            .with_span(stmt.name.span)
            .with_note(
                "Avro messages carry no field names; the reader schema says how to read them",
            )
            .with_help(help)
            .with_code(tributary_types::codes::INVALID_SCHEMA),
    );
}

pub(super) fn debezium_rules(
    format: &Option<Format>,
    t: ConnectionType,
    cols: &Columns,
    stmt: &CreateTable,
    diags: &mut Vec<Diagnostic>,
) {
    if !format.as_ref().is_some_and(Format::is_updating) {
        return;
    }
    if let Some(v) = cols.virtual_columns.first() {
        diags.push(
            Diagnostic::error("virtual columns cannot be used with the debezium_json format")
                .with_span(
                    cols.spans
                        .get(&v.name.to_lowercase())
                        .copied()
                        .unwrap_or(stmt.name.span),
                )
                .with_help("Remove the virtual column and compute it in a query instead.")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
        );
    }
    if t == ConnectionType::Source && cols.primary_keys.is_empty() {
        diags.push(
            Diagnostic::error(format!(
                "debezium_json source table '{}' must have a PRIMARY KEY",
                stmt.name.value
            ))
            .with_span(stmt.name.span)
            .with_help("Mark the key columns with PRIMARY KEY, or add PRIMARY KEY (col, ...).")
            .with_code(tributary_types::codes::INVALID_SCHEMA),
        );
    }
}

pub(super) fn event_time(
    cols: &Columns,
    field: Option<(String, Span)>,
    watermark_field: Option<(String, Span)>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    if let Some(w) = &cols.watermark {
        if let Some((_, s)) = &field {
            diags.push(
                Diagnostic::error(
                    "option 'event_time_field' cannot be combined with WATERMARK FOR",
                )
                .with_span(*s)
                .with_help("Remove 'event_time_field'; WATERMARK FOR names the event-time column.")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
            );
        }
        return Some(w.column.clone());
    }
    let schema = cols.arrow_schema();
    for (key, value) in [
        ("event_time_field", &field),
        ("watermark_field", &watermark_field),
    ] {
        let Some((name, span)) = value else { continue };
        match schema
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(name))
        {
            None => diags.push(
                Diagnostic::error(format!(
                    "option '{key}' names column '{name}', which does not exist"
                ))
                .with_span(*span)
                .with_help("Name a TIMESTAMP column of the table.")
                .with_code(tributary_types::codes::INVALID_SCHEMA),
            ),
            Some(f)
                if !matches!(
                    f.data_type(),
                    datafusion::arrow::datatypes::DataType::Timestamp(_, None)
                ) =>
            {
                diags.push(
                    Diagnostic::error(format!(
                        "option '{key}' names column '{name}', which is not a TIMESTAMP"
                    ))
                    .with_span(*span)
                    .with_help("Name a TIMESTAMP column of the table.")
                    .with_code(tributary_types::codes::INVALID_SCHEMA),
                )
            }
            Some(_) => {}
        }
    }
    field.map(|(n, _)| n)
}

pub(super) fn schema_help(e: &tributary_types::SchemaError) -> String {
    match e {
        tributary_types::SchemaError::DuplicateField { .. } => {
            "Give every field a distinct name at each nesting level.".into()
        }
        tributary_types::SchemaError::RawString => {
            "Declare exactly one column: value TEXT (metadata columns may be added).".into()
        }
        tributary_types::SchemaError::RawBytes => {
            "Declare exactly one column: value BYTEA (metadata columns may be added).".into()
        }
        tributary_types::SchemaError::Unstructured { .. } => {
            "Declare exactly one column: value JSON (metadata columns may be added).".into()
        }
    }
}
