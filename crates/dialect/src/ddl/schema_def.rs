//! Columns from a schema document (`json.schema`, `avro.schema`/`avro.schema_file`): the
//! expansion, and the rule that declared columns must be a compatible subset of it.

use super::columns::Columns;
use tributary_formats::{
    AvroSchemaError, ExpandedSchema, JsonSchemaError, ProtoSchemaError, SchemaSource,
    fields_from_avro_schema, fields_from_json_schema, fields_from_protobuf, parse_avro_schema,
};
use tributary_types::{
    Diagnostic, FieldType, Format, SchemaDefinition, SourceField, Span, column_origin,
};

/// Expand a schema document into the table's columns. Without declared columns, the
/// schema's columns are the table's (metadata columns kept after them); with declared
/// columns, each must be in the schema with a compatible type. `whole_value` formats
/// (unstructured) keep their single `value` column. Returns the definition to store, and
/// records the schema in the format where decoding needs it.
pub(crate) fn apply_schema(
    source: &SchemaSource,
    from_registry: bool,
    format: Option<&mut Format>,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) -> Option<SchemaDefinition> {
    let first = diags.len();
    let definition = expand_schema(source, from_registry, format, cols, diags);
    tributary_types::codes::fill(&mut diags[first..], tributary_types::codes::INVALID_FORMAT);
    definition
}

fn expand_schema(
    source: &SchemaSource,
    from_registry: bool,
    format: Option<&mut Format>,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) -> Option<SchemaDefinition> {
    // Unstructured Avro keeps its single JSON column; the schema only says how to read.
    let whole_value = format
        .as_ref()
        .is_some_and(|f| f.unstructured_option().is_some());
    let (expanded, definition, span, kind) = match source {
        SchemaSource::Json { text, span } => match fields_from_json_schema(text) {
            Ok(e) => (
                e,
                Some(SchemaDefinition::JsonSchema {
                    schema: text.clone(),
                }),
                *span,
                column_origin::JSON_SCHEMA,
            ),
            Err(e) => {
                let help = match &e {
                    JsonSchemaError::TooLarge | JsonSchemaError::TooDeep { .. } => TOO_BIG_HELP,
                    JsonSchemaError::UnknownType { .. } => {
                        "Use one of JSON Schema's types: string, integer, number, boolean, object, array or null."
                    }
                    _ => {
                        "Give a JSON Schema object with properties, such as '{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"}}}'."
                    }
                };
                diags.push(
                    Diagnostic::error(format!("invalid value for option 'json.schema': {e}"))
                        .with_span(*span)
                        .with_help(help),
                );
                return None;
            }
        },
        SchemaSource::Avro { text, span } => {
            match parse_avro_schema(text).and_then(|s| fields_from_avro_schema(&s)) {
                Ok(e) => {
                    if let Some(Format::Avro(a)) = format {
                        a.reader_schema = Some(text.clone());
                    }
                    (
                        e,
                        Some(SchemaDefinition::AvroSchema {
                            schema: text.clone(),
                        }),
                        *span,
                        column_origin::AVRO_SCHEMA,
                    )
                }
                Err(e) => {
                    let help = match &e {
                        AvroSchemaError::TooLarge | AvroSchemaError::TooDeep { .. } => TOO_BIG_HELP,
                        _ => {
                            "Give an Avro record schema, such as '{\"type\": \"record\", \"name\": \"Order\", \"fields\": [{\"name\": \"id\", \"type\": \"long\"}]}'."
                        }
                    };
                    diags.push(
                        Diagnostic::error(format!("invalid Avro schema: {e}"))
                            .with_span(*span)
                            .with_help(help),
                    );
                    return None;
                }
            }
        }
        SchemaSource::Protobuf {
            descriptor,
            message,
            span,
            source,
        } => match fields_from_protobuf(descriptor, message) {
            // The compiled descriptor set is kept in the format, which is what decoding
            // reads; the .proto text is the definition when it was given inline.
            Ok(e) => {
                if let Some(Format::Protobuf(p)) = format {
                    p.compiled_schema = Some(descriptor.clone());
                    p.message_name = Some(message.clone());
                }
                let definition =
                    source
                        .as_ref()
                        .map(|(schema, deps)| SchemaDefinition::ProtobufSchema {
                            schema: schema.clone(),
                            dependencies: deps.clone(),
                        });
                (e, definition, *span, column_origin::PROTOBUF_MESSAGE)
            }
            Err(e) => {
                let help = match &e {
                    ProtoSchemaError::TooLarge | ProtoSchemaError::TooDeep { .. } => TOO_BIG_HELP,
                    _ => "Name a message the descriptor set defines, in full: 'package.Message'.",
                };
                diags.push(
                    Diagnostic::error(format!("invalid Protobuf schema: {e}"))
                        .with_span(*span)
                        .with_help(help),
                );
                return None;
            }
        },
    };
    if !whole_value {
        let origin = if from_registry {
            column_origin::SCHEMA_REGISTRY
        } else {
            kind
        };
        merge(expanded, span, kind, origin, cols, diags);
    }
    definition
}

/// What to do about a schema past the expansion limits.
const TOO_BIG_HELP: &str = "Narrow the schema to the fields the table reads, or keep a large or deep part as one JSON column (an object without declared properties).";

/// The expansion's columns into the table. With `*`, or without declared physical
/// columns, the schema's columns are the table's (at the `*`, or first), and a declared
/// column of the same name overrides one (checked compatible). With declared physical
/// columns and no `*`, the table keeps only those, each checked against the schema, and
/// a note names the columns left out.
fn merge(
    expanded: ExpandedSchema,
    span: Span,
    kind: &str,
    origin: &str,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) {
    let declared: Vec<SourceField> = cols.declared_physical().into_iter().cloned().collect();
    for f in &declared {
        let at = cols
            .spans
            .get(&f.name.to_lowercase())
            .copied()
            .unwrap_or(span);
        if let Some(d) = check_column(f, &expanded.fields, kind, at) {
            diags.push(d);
        }
    }
    let declared_names: Vec<&str> = declared.iter().map(|f| f.name.as_str()).collect();
    if cols.has_star() || declared.is_empty() {
        let rest: Vec<SourceField> = expanded
            .fields
            .into_iter()
            .filter(|f| !declared_names.contains(&f.name.as_str()))
            .collect();
        cols.insert_at_star(rest, origin);
    } else {
        let dropped: Vec<&str> = expanded
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .filter(|n| !declared_names.contains(n))
            .collect();
        if !dropped.is_empty() {
            diags.push(
                Diagnostic::note(format!(
                    "the table keeps {} of the {kind}'s {} columns; left out: {}",
                    declared.len(),
                    declared.len() + dropped.len(),
                    tributary_types::options::quoted_list(&dropped)
                ))
                .with_span(span)
                .with_help("Write '*' in the column list to keep every column of the schema, with the declared columns beside it."),
            );
        }
    }
    // Notes on the columns kept: a warning now, and with the column (DESCRIBE shows them).
    for note in &expanded.notes {
        if cols.fields.iter().any(|f| f.name == note.column()) {
            diags.push(
                Diagnostic::warning(note.to_string())
                    .with_span(span)
                    .with_help(
                        "Query it with the json functions, or narrow the schema to one type.",
                    ),
            );
            let entry = cols.notes.entry(note.column().to_string()).or_default();
            if !entry.is_empty() {
                entry.push_str("; ");
            }
            entry.push_str(&note.to_string());
        }
    }
}

/// A declared column against the schema's columns.
fn check_column(
    f: &SourceField,
    schema: &[SourceField],
    kind: &str,
    at: Span,
) -> Option<Diagnostic> {
    let Some(s) = schema.iter().find(|s| s.name == f.name) else {
        let names: Vec<&str> = schema.iter().map(|s| s.name.as_str()).collect();
        let mut d = Diagnostic::error(format!("column '{}' is not in the {kind}", f.name))
            .with_span(at)
            .with_note(format!(
                "the {kind} has columns {}",
                tributary_types::options::quoted_list(&names)
            ));
        d = match tributary_types::closest(&f.name, names.iter().copied()) {
            Some(c) => d.with_help(format!("Did you mean '{c}'? Column names must match the schema's field names.")),
            None => d.with_help("Declare only columns the schema has, or leave the column list out to take them all."),
        };
        return Some(d);
    };
    if !compatible(&f.field_type, &s.field_type) {
        return Some(
            Diagnostic::error(format!(
                "column '{}' is declared {}, but the {kind} gives {}",
                f.name, f.field_type, s.field_type
            ))
            .with_span(at)
            .with_help(format!(
                "Declare it as {}, or leave the column list out.",
                s.field_type
            )),
        );
    }
    if f.required && !s.required {
        return Some(
            Diagnostic::error(format!(
                "column '{}' is NOT NULL, but the {kind} allows it to be null",
                f.name
            ))
            .with_span(at)
            .with_help("Drop NOT NULL, or make the field required in the schema."),
        );
    }
    None
}

/// Whether a declared type reads the values the schema describes: equal types, any
/// timestamp precision, TEXT for JSON, and structs, lists and maps element by element.
fn compatible(declared: &FieldType, schema: &FieldType) -> bool {
    match (declared, schema) {
        (FieldType::Timestamp { .. }, FieldType::Timestamp { .. }) => true,
        (FieldType::String | FieldType::Json, FieldType::Json) => true,
        (FieldType::Struct { fields: d }, FieldType::Struct { fields: s }) => d.iter().all(|df| {
            s.iter()
                .find(|sf| sf.name == df.name)
                .is_some_and(|sf| compatible(&df.field_type, &sf.field_type))
        }),
        (FieldType::List { items: d }, FieldType::List { items: s }) => {
            compatible(&d.field_type, &s.field_type)
        }
        (FieldType::Map { key: dk, value: dv }, FieldType::Map { key: sk, value: sv }) => {
            compatible(&dk.field_type, &sk.field_type) && compatible(&dv.field_type, &sv.field_type)
        }
        (d, s) => d == s,
    }
}
