//! Avro schema → table columns. Records become structs, `["null", T]` unions make T
//! nullable, arrays become lists and maps become Arrow maps, bytes and fixed become BYTEA,
//! decimals DECIMAL(p, s), and the date, time and timestamp logical types their SQL
//! counterparts. What has no single column type (other unions) becomes a JSON column, with
//! a note saying why.

use crate::expanded::{Budget, ColumnNote, Exceeded, ExpandedSchema, json_error_message};
use apache_avro::Schema;
use apache_avro::schema::{Name, ResolvedSchema, UnionSchema};
use std::collections::HashMap;
use tributary_types::limits::{MAX_EXPANDED_FIELDS, MAX_SCHEMA_DEPTH};
use tributary_types::{FieldType, SourceField, TimeUnit};

/// Why an Avro schema could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvroSchemaError {
    /// The text is not JSON.
    #[error(
        "the Avro schema is not valid JSON: {message} (line {line}, column {column} of the schema)"
    )]
    NotJson {
        /// What serde_json said, without its position.
        message: String,
        /// 1-based line within the schema text.
        line: usize,
        /// 1-based column within the schema text.
        column: usize,
    },
    /// The JSON is not an Avro schema.
    #[error("the Avro schema is invalid: {0}")]
    Invalid(String),
    /// The top level is not a record.
    #[error("the Avro schema's top level must be a record, but it is {found}")]
    RootNotRecord {
        /// The top-level type.
        found: String,
    },
    /// A record that contains itself.
    #[error("Avro type '{name}' at {path} contains itself; recursive types cannot be columns")]
    Recursive {
        /// The type's full name.
        name: String,
        /// Where the recursion closes.
        path: String,
    },
    /// A field whose only type is null.
    #[error("{path} has type null, which holds no data")]
    NullOnly {
        /// The field.
        path: String,
    },
    /// The schema expands to too many fields.
    #[error(
        "the Avro schema expands to more than {MAX_EXPANDED_FIELDS} fields (nested fields included, each named type counted where it is used)"
    )]
    TooLarge,
    /// Types nested too deeply.
    #[error("{path} is nested more than {MAX_SCHEMA_DEPTH} levels deep")]
    TooDeep {
        /// Where the limit was crossed.
        path: String,
    },
}

impl AvroSchemaError {
    fn exceeded(e: Exceeded, path: &str) -> Self {
        match e {
            Exceeded::Fields => AvroSchemaError::TooLarge,
            Exceeded::Depth => AvroSchemaError::TooDeep {
                path: path.to_string(),
            },
        }
    }
}

/// Parse Avro schema text, reporting JSON syntax errors with their position.
pub fn parse_avro_schema(text: &str) -> Result<Schema, AvroSchemaError> {
    let json: serde_json::Value =
        serde_json::from_str(text).map_err(|e| AvroSchemaError::NotJson {
            message: json_error_message(&e),
            line: e.line(),
            column: e.column(),
        })?;
    Schema::parse(&json).map_err(|e| AvroSchemaError::Invalid(e.to_string()))
}

/// Expand a parsed Avro record schema into columns.
pub fn fields_from_avro_schema(schema: &Schema) -> Result<ExpandedSchema, AvroSchemaError> {
    let resolved =
        ResolvedSchema::try_from(schema).map_err(|e| AvroSchemaError::Invalid(e.to_string()))?;
    let mut expander = Expander {
        names: resolved.get_names(),
        open: Vec::new(),
        notes: Vec::new(),
        budget: Budget::default(),
        depth: 0,
    };
    let record = match expander.deref(schema) {
        Schema::Record(r) => r,
        other => {
            return Err(AvroSchemaError::RootNotRecord {
                found: type_name(other),
            });
        }
    };
    expander.open.push(record.name.clone());
    let fields = record
        .fields
        .iter()
        .map(|f| expander.field(&f.name, &f.schema, &f.name))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ExpandedSchema {
        fields,
        notes: expander.notes,
    })
}

/// Named types, for following references, in the shape apache-avro resolves them to.
pub(crate) type AvroNames<'s> = HashMap<Name, &'s Schema>;

struct Expander<'a, 's> {
    names: &'a AvroNames<'s>,
    /// The records being expanded, outermost first, to catch recursion.
    open: Vec<Name>,
    notes: Vec<ColumnNote>,
    budget: Budget,
    /// How deeply types are nested at this point.
    depth: usize,
}

impl<'s> Expander<'_, 's> {
    /// A reference's target; other schemas as they are.
    fn deref<'x>(&self, schema: &'x Schema) -> &'x Schema
    where
        's: 'x,
    {
        match schema {
            Schema::Ref { name } => self.names.get(name).copied().unwrap_or(schema),
            other => other,
        }
    }

    fn field(
        &mut self,
        name: &str,
        schema: &Schema,
        path: &str,
    ) -> Result<SourceField, AvroSchemaError> {
        self.budget
            .field()
            .map_err(|e| AvroSchemaError::exceeded(e, path))?;
        let (inner, nullable) = match schema {
            Schema::Union(u) => match nullable_branch(u) {
                Some(t) => (t, true),
                None => {
                    return Ok(SourceField::new(name, self.union_as_json(u, path)));
                }
            },
            Schema::Null => return Err(AvroSchemaError::NullOnly { path: path.into() }),
            other => (other, false),
        };
        let field_type = self.field_type(inner, path)?;
        Ok(if nullable {
            SourceField::new(name, field_type)
        } else {
            SourceField::required(name, field_type)
        })
    }

    fn union_as_json(&mut self, u: &UnionSchema, path: &str) -> FieldType {
        let branches: Vec<String> = u.variants().iter().map(type_name).collect();
        self.notes.push(ColumnNote::new(
            path,
            format!(
                "is an Avro union of {}; it is read as a JSON column holding the value of whichever branch is set",
                branches.join(", ")
            ),
        ));
        FieldType::Json
    }

    fn field_type(&mut self, schema: &Schema, path: &str) -> Result<FieldType, AvroSchemaError> {
        self.depth += 1;
        let result = Budget::depth(self.depth)
            .map_err(|e| AvroSchemaError::exceeded(e, path))
            .and_then(|()| self.field_type_here(schema, path));
        self.depth -= 1;
        result
    }

    fn field_type_here(
        &mut self,
        schema: &Schema,
        path: &str,
    ) -> Result<FieldType, AvroSchemaError> {
        Ok(match self.deref(schema) {
            Schema::Null => return Err(AvroSchemaError::NullOnly { path: path.into() }),
            Schema::Boolean => FieldType::Bool,
            Schema::Int => FieldType::Int32,
            Schema::Long => FieldType::Int64,
            Schema::Float => FieldType::Float32,
            Schema::Double => FieldType::Float64,
            Schema::Bytes | Schema::Fixed(_) => FieldType::Bytes,
            Schema::String | Schema::Enum(_) | Schema::Uuid(_) => FieldType::String,
            Schema::Date => FieldType::Date,
            Schema::TimeMillis => FieldType::Time {
                unit: TimeUnit::Millisecond,
            },
            Schema::TimeMicros => FieldType::Time {
                unit: TimeUnit::Microsecond,
            },
            Schema::TimestampMillis | Schema::LocalTimestampMillis => FieldType::Timestamp {
                unit: TimeUnit::Millisecond,
            },
            Schema::TimestampMicros | Schema::LocalTimestampMicros => FieldType::Timestamp {
                unit: TimeUnit::Microsecond,
            },
            Schema::TimestampNanos | Schema::LocalTimestampNanos => FieldType::Timestamp {
                unit: TimeUnit::Nanosecond,
            },
            Schema::Decimal(d) if d.precision <= 38 => FieldType::Decimal128 {
                precision: d.precision as u8,
                scale: d.scale as i8,
            },
            Schema::Decimal(d) => {
                self.notes.push(ColumnNote::new(
                    path,
                    format!(
                        "is an Avro decimal of precision {}, more than DECIMAL's 38; it is read as its unscaled big-endian bytes",
                        d.precision
                    ),
                ));
                FieldType::Bytes
            }
            Schema::BigDecimal => {
                self.notes.push(ColumnNote::new(
                    path,
                    "is an Avro big-decimal, which has no fixed scale; it is read as its encoded bytes",
                ));
                FieldType::Bytes
            }
            Schema::Duration(_) => {
                self.notes.push(ColumnNote::new(
                    path,
                    "is an Avro duration; it is read as its 12 bytes (months, days and milliseconds, little-endian)",
                ));
                FieldType::Bytes
            }
            Schema::Array(a) => {
                let item = self.field("item", &a.items, &format!("{path}[]"))?;
                FieldType::List {
                    items: Box::new(item),
                }
            }
            Schema::Map(m) => {
                let value = self.field("values", &m.types, &format!("{path}.value"))?;
                FieldType::Map {
                    key: Box::new(SourceField::required("keys", FieldType::String)),
                    value: Box::new(value),
                }
            }
            Schema::Union(u) => match nullable_branch(u) {
                // A nullable union in a position that has no nullability of its own (a
                // union nested in a union is not valid Avro, so this is only reachable
                // through a reference).
                Some(t) => self.field_type(t, path)?,
                None => self.union_as_json(u, path),
            },
            Schema::Record(r) => {
                if self.open.contains(&r.name) {
                    return Err(AvroSchemaError::Recursive {
                        name: r.name.fullname(None),
                        path: path.into(),
                    });
                }
                self.open.push(r.name.clone());
                let fields = r
                    .fields
                    .iter()
                    .map(|f| self.field(&f.name, &f.schema, &format!("{path}.{}", f.name)))
                    .collect::<Result<Vec<_>, _>>();
                self.open.pop();
                FieldType::Struct { fields: fields? }
            }
            Schema::Ref { name } => {
                return Err(AvroSchemaError::Invalid(format!(
                    "{path} refers to type '{}', which is not defined",
                    name.fullname(None)
                )));
            }
        })
    }
}

/// For `["null", T]` (in either order), T.
pub(crate) fn nullable_branch(u: &UnionSchema) -> Option<&Schema> {
    match u.variants() {
        [Schema::Null, t] | [t, Schema::Null] if !matches!(t, Schema::Null) => Some(t),
        _ => None,
    }
}

/// A short name for a schema, as messages print it.
pub(crate) fn type_name(schema: &Schema) -> String {
    match schema {
        Schema::Record(r) => format!("record {}", r.name.fullname(None)),
        Schema::Enum(e) => format!("enum {}", e.name.fullname(None)),
        Schema::Fixed(f) => format!("fixed {}", f.name.fullname(None)),
        Schema::Ref { name } => name.fullname(None),
        other => simple_name(other).to_string(),
    }
}

fn simple_name(schema: &Schema) -> &'static str {
    match schema {
        Schema::Null => "null",
        Schema::Boolean => "boolean",
        Schema::Int => "int",
        Schema::Long => "long",
        Schema::Float => "float",
        Schema::Double => "double",
        Schema::Bytes => "bytes",
        Schema::String => "string",
        Schema::Array(_) => "array",
        Schema::Map(_) => "map",
        Schema::Union(_) => "union",
        Schema::Decimal(_) => "decimal",
        Schema::BigDecimal => "big-decimal",
        Schema::Uuid(_) => "uuid",
        Schema::Date => "date",
        Schema::TimeMillis => "time-millis",
        Schema::TimeMicros => "time-micros",
        Schema::TimestampMillis => "timestamp-millis",
        Schema::TimestampMicros => "timestamp-micros",
        Schema::TimestampNanos => "timestamp-nanos",
        Schema::LocalTimestampMillis => "local-timestamp-millis",
        Schema::LocalTimestampMicros => "local-timestamp-micros",
        Schema::LocalTimestampNanos => "local-timestamp-nanos",
        Schema::Duration(_) => "duration",
        Schema::Record(_) | Schema::Enum(_) | Schema::Fixed(_) | Schema::Ref { .. } => "named type",
    }
}
