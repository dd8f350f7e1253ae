//! Columns from a schema document (`json.schema`): the expansion, and the rule that
//! declared columns must be a compatible subset of it.

use super::columns::Columns;
use tributary_formats::fields_from_json_schema;
use tributary_types::{Diagnostic, FieldType, SchemaDefinition, SourceField, Span};

/// Expand `json.schema` into the table's columns. Without declared columns, the schema's
/// columns are the table's (metadata columns kept after them); with declared columns, each
/// must be in the schema with a compatible type. Returns the definition to store.
pub(crate) fn apply_json_schema(
    text: &str,
    span: Span,
    cols: &mut Columns,
    diags: &mut Vec<Diagnostic>,
) -> Option<SchemaDefinition> {
    let expanded = match fields_from_json_schema(text) {
        Ok(e) => e,
        Err(e) => {
            diags.push(
                Diagnostic::error(format!("invalid value for option 'json.schema': {e}"))
                    .with_span(span)
                    .with_help("Give a JSON Schema object with properties, such as '{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"}}}'."),
            );
            return None;
        }
    };
    for note in &expanded.notes {
        diags.push(
            Diagnostic::warning(note.clone())
                .with_span(span)
                .with_help("Query it with the json functions, or narrow the schema to one type."),
        );
    }
    let declared: Vec<&SourceField> = cols
        .fields
        .iter()
        .filter(|f| f.metadata_key.is_none())
        .collect();
    if declared.is_empty() {
        let metadata = std::mem::take(&mut cols.fields);
        cols.fields = expanded.fields;
        cols.fields.extend(metadata);
    } else {
        for f in declared {
            let at = cols
                .spans
                .get(&f.name.to_lowercase())
                .copied()
                .unwrap_or(span);
            if let Some(d) = check_column(f, &expanded.fields, at) {
                diags.push(d);
            }
        }
    }
    Some(SchemaDefinition::JsonSchema {
        schema: text.to_string(),
    })
}

/// A declared column against the schema's columns.
fn check_column(f: &SourceField, schema: &[SourceField], at: Span) -> Option<Diagnostic> {
    let Some(s) = schema.iter().find(|s| s.name == f.name) else {
        let names: Vec<&str> = schema.iter().map(|s| s.name.as_str()).collect();
        let mut d = Diagnostic::error(format!("column '{}' is not in the JSON schema", f.name))
            .with_span(at)
            .with_note(format!(
                "the schema's properties are {}",
                tributary_types::options::quoted_list(&names)
            ));
        d = match tributary_types::closest(&f.name, names.iter().copied()) {
            Some(c) => d.with_help(format!("Did you mean '{c}'? Column names must match the property names.")),
            None => d.with_help("Declare only columns the schema has, or leave the column list out to take them all."),
        };
        return Some(d);
    };
    if !compatible(&f.field_type, &s.field_type) {
        return Some(
            Diagnostic::error(format!(
                "column '{}' is declared {}, but the JSON schema gives {}",
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
                "column '{}' is NOT NULL, but the JSON schema does not require it",
                f.name
            ))
            .with_span(at)
            .with_help("Drop NOT NULL, or list the property under the schema's \"required\"."),
        );
    }
    None
}

/// Whether a declared type reads the values the schema describes: equal types, any
/// timestamp precision, TEXT for JSON, and structs and lists element by element.
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
        (d, s) => d == s,
    }
}
