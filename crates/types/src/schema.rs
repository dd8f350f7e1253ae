//! [`ConnectionSchema`]: the fields, format and policies of a connection table, and the
//! structural rules every schema must satisfy.

use crate::field::{FieldType, SourceField};
use crate::format::{BadData, Format, Framing};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};
use std::fmt;

/// Whether a table is read, written or looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionType {
    /// Rows are read from it.
    Source,
    /// Rows are written to it.
    Sink,
    /// Rows are fetched by key in a join.
    Lookup,
}

impl ConnectionType {
    /// `source`, `sink` or `lookup`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionType::Source => "source",
            ConnectionType::Sink => "sink",
            ConnectionType::Lookup => "lookup",
        }
    }
}

impl fmt::Display for ConnectionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a column that was not declared came from, as
/// [`ConnectionSchema::column_origins`] records it. The rule every writer of `CREATE`
/// statements follows (`SHOW CREATE`, the dump, REST's `create_sql`): a schema
/// document's columns are written `*`, a connector's are left out.
pub mod column_origin {
    /// A JSON Schema document.
    pub const JSON_SCHEMA: &str = "JSON schema";
    /// An Avro schema.
    pub const AVRO_SCHEMA: &str = "Avro schema";
    /// A Protobuf message.
    pub const PROTOBUF_MESSAGE: &str = "Protobuf message";
    /// A schema fetched from a registry.
    pub const SCHEMA_REGISTRY: &str = "schema registry";
    /// The connector's own fixed schema (impulse, nexmark).
    pub const CONNECTOR: &str = "connector";
    /// Origins whose columns come back from their document through `*`.
    pub const DOCUMENTS: &[&str] = &[JSON_SCHEMA, AVRO_SCHEMA, PROTOBUF_MESSAGE, SCHEMA_REGISTRY];
}

/// The data layout of a connection table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ConnectionSchema {
    /// The wire format, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    /// What to do with undecodable records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_data: Option<BadData>,
    /// How a byte stream is split into records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framing: Option<Framing>,
    /// Physical and metadata fields, in declaration order.
    #[serde(default)]
    pub fields: Vec<SourceField>,
    /// True when the fields were not declared and come from elsewhere (a fixed connector
    /// schema, or a sink's first `INSERT INTO`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inferred: Option<bool>,
    /// Primary-key column names.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub primary_keys: BTreeSet<String>,
    /// The schema text the fields were expanded from, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<SchemaDefinition>,
    /// Why columns expanded from the definition were approximated (a union read as
    /// JSON, ...), by column name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub column_notes: std::collections::BTreeMap<String, String>,
    /// Where columns that were not declared came from (`JSON schema`, `Avro schema`,
    /// `Protobuf message`, `schema registry`, `connector`, `format`), by column name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub column_origins: std::collections::BTreeMap<String, String>,
}

/// A schema document a table's fields come from (Arroyo's `SchemaDefinition`, tagged by
/// `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SchemaDefinition {
    /// A JSON Schema document.
    JsonSchema {
        /// The schema text.
        schema: String,
    },
    /// An Avro schema.
    AvroSchema {
        /// The schema text.
        schema: String,
    },
    /// A Protobuf schema with its imports.
    ProtobufSchema {
        /// The `.proto` text.
        schema: String,
        /// Imported files by path.
        #[serde(default)]
        dependencies: std::collections::BTreeMap<String, String>,
    },
}

/// A structural problem with a schema. `path` names the offending field (`a.b`, `events[]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// Two fields with the same name (case-insensitively) at one nesting level.
    #[error("duplicate column name '{name}' in {path}")]
    DuplicateField {
        /// The repeated name.
        name: String,
        /// `table` for the top level, `table.a.b` for nested structs.
        path: String,
    },
    /// raw_string needs exactly one TEXT column named `value`.
    #[error("raw_string format requires exactly one column named 'value' of type TEXT")]
    RawString,
    /// raw_bytes needs exactly one BYTEA column named `value`.
    #[error("raw_bytes format requires exactly one column named 'value' of type BYTEA")]
    RawBytes,
    /// Messages read whole into JSON (`json.unstructured`, `avro.into_unstructured_json`,
    /// `protobuf.into_unstructured_json`) need exactly one JSON column named `value`.
    #[error(
        "{format} format with '{option}' requires exactly one column named 'value' of type JSON"
    )]
    Unstructured {
        /// The format's name.
        format: &'static str,
        /// The option that asks for it.
        option: &'static str,
    },
}

impl ConnectionSchema {
    /// The non-metadata fields (what the format decodes).
    pub fn physical_fields(&self) -> impl Iterator<Item = &SourceField> {
        self.fields.iter().filter(|f| f.metadata_key.is_none())
    }

    /// Check names and format rules, returning every problem found.
    pub fn validate(&self) -> Vec<SchemaError> {
        let mut errors = Vec::new();
        check_unique(&self.fields, "table", &mut errors);
        let physical: Vec<&SourceField> = self.physical_fields().collect();
        let single_value = |ty: &FieldType| {
            physical.len() == 1 && physical[0].name == "value" && &physical[0].field_type == ty
        };
        // An empty field list is an inferred schema; the format rules apply once fields exist.
        if !physical.is_empty() {
            match &self.format {
                Some(Format::RawString {}) if !single_value(&FieldType::String) => {
                    errors.push(SchemaError::RawString)
                }
                Some(Format::RawBytes {}) if !single_value(&FieldType::Bytes) => {
                    errors.push(SchemaError::RawBytes)
                }
                Some(f) if !single_value(&FieldType::Json) => {
                    if let Some(option) = f.unstructured_option() {
                        errors.push(SchemaError::Unstructured {
                            format: f.sql_name(),
                            option,
                        });
                    }
                }
                _ => {}
            }
        }
        errors
    }

    /// Look a top-level field up by name, case-insensitively.
    pub fn field(&self, name: &str) -> Option<&SourceField> {
        self.fields
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }
}

fn check_unique(fields: &[SourceField], path: &str, errors: &mut Vec<SchemaError>) {
    let mut seen = HashSet::new();
    for f in fields {
        if !seen.insert(f.name.to_lowercase()) {
            errors.push(SchemaError::DuplicateField {
                name: f.name.clone(),
                path: path.to_string(),
            });
        }
        check_nested(&f.field_type, &format!("{path}.{}", f.name), errors);
    }
}

fn check_nested(ty: &FieldType, path: &str, errors: &mut Vec<SchemaError>) {
    match ty {
        FieldType::Struct { fields } => check_unique(fields, path, errors),
        FieldType::List { items } => check_nested(&items.field_type, &format!("{path}[]"), errors),
        FieldType::Map { key, value } => {
            check_nested(&key.field_type, &format!("{path}.key"), errors);
            check_nested(&value.field_type, &format!("{path}.value"), errors);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::JsonFormat;

    #[test]
    fn duplicates_found_at_every_level() {
        let inner = FieldType::Struct {
            fields: vec![
                SourceField::new("id", FieldType::Int32),
                SourceField::new("ID", FieldType::Int64),
            ],
        };
        let schema = ConnectionSchema {
            fields: vec![
                SourceField::new("a", FieldType::Int32),
                SourceField::new("A", FieldType::Int32),
                SourceField::new(
                    "events",
                    FieldType::List {
                        items: Box::new(SourceField::new("item", inner)),
                    },
                ),
            ],
            ..Default::default()
        };
        let errs = schema.validate();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].to_string(), "duplicate column name 'A' in table");
        assert_eq!(
            errs[1].to_string(),
            "duplicate column name 'ID' in table.events[]"
        );
    }

    #[test]
    fn raw_string_and_unstructured_rules() {
        let mut schema = ConnectionSchema {
            format: Some(Format::RawString {}),
            fields: vec![SourceField::new("value", FieldType::String)],
            ..Default::default()
        };
        assert!(schema.validate().is_empty());
        schema
            .fields
            .push(SourceField::new("other", FieldType::String));
        assert_eq!(schema.validate(), vec![SchemaError::RawString]);
        // Metadata fields do not count.
        schema.fields[1].metadata_key = Some("topic".into());
        assert!(schema.validate().is_empty());
        let json = ConnectionSchema {
            format: Some(Format::Json(JsonFormat {
                unstructured: true,
                ..Default::default()
            })),
            fields: vec![SourceField::new("value", FieldType::String)],
            ..Default::default()
        };
        assert_eq!(
            json.validate(),
            vec![SchemaError::Unstructured {
                format: "json",
                option: "json.unstructured"
            }]
        );
    }
}
