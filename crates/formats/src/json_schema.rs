//! JSON Schema → table columns: the fields a JSON message described by a schema decodes
//! into. Objects become structs, `required` decides nullability, `format: date-time`
//! becomes a timestamp, arrays become lists, local `$ref`s are followed, string enums stay
//! strings, and what has no single Arrow type (unions, free-form maps) becomes a JSON
//! column, with a note saying why.

use crate::expanded::{Budget, ColumnNote, Exceeded, ExpandedSchema, json_error_message};
use serde_json::{Map, Value};
use std::borrow::Cow;
use tributary_types::limits::{MAX_EXPANDED_FIELDS, MAX_SCHEMA_DEPTH};
use tributary_types::{FieldType, SourceField, TimeUnit, closest};

/// Why a schema could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonSchemaError {
    /// The text is not JSON.
    #[error("the schema is not valid JSON: {message} (line {line}, column {column} of the schema)")]
    NotJson {
        /// What serde_json said, without its position.
        message: String,
        /// 1-based line within the schema text.
        line: usize,
        /// 1-based column within the schema text.
        column: usize,
    },
    /// The root does not describe an object with properties.
    #[error("the schema's root must describe an object with properties, but it {found}")]
    RootNotObject {
        /// What the root is.
        found: String,
    },
    /// A `$ref` that is not a local JSON Pointer, or points at nothing.
    #[error("cannot resolve $ref '{reference}' at {path}: {reason}")]
    BadRef {
        /// The reference as written.
        reference: String,
        /// Where it is (`schema.a.b`).
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// A `$ref` cycle: a recursive type has no fixed set of columns.
    #[error(
        "$ref '{reference}' at {path} refers back to itself; recursive types cannot be columns"
    )]
    Recursive {
        /// The reference as written.
        reference: String,
        /// Where it is.
        path: String,
    },
    /// A property's schema is not an object or boolean.
    #[error("the schema of {path} must be an object, but it is {found}")]
    NotASchema {
        /// Where it is.
        path: String,
        /// What it is.
        found: String,
    },
    /// A `type` that JSON Schema does not have.
    #[error("{path} has type '{found}', which is not a JSON Schema type{}", suggestion.as_ref().map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    UnknownType {
        /// Where it is.
        path: String,
        /// The type as written.
        found: String,
        /// The closest real type.
        suggestion: Option<String>,
    },
    /// The schema expands to too many fields.
    #[error(
        "the schema expands to more than {MAX_EXPANDED_FIELDS} fields (nested fields included, each reference counted where it is used)"
    )]
    TooLarge,
    /// Types nested (or references chained) too deeply.
    #[error(
        "{path} is nested more than {MAX_SCHEMA_DEPTH} levels deep (types inside types, or references to references)"
    )]
    TooDeep {
        /// Where the limit was crossed.
        path: String,
    },
}

/// The type names JSON Schema has.
const JSON_TYPES: [&str; 7] = [
    "string", "integer", "number", "boolean", "object", "array", "null",
];

impl JsonSchemaError {
    fn exceeded(e: Exceeded, path: &str) -> Self {
        match e {
            Exceeded::Fields => JsonSchemaError::TooLarge,
            Exceeded::Depth => JsonSchemaError::TooDeep {
                path: path.to_string(),
            },
        }
    }
}

/// Expand schema text into columns.
pub fn fields_from_json_schema(text: &str) -> Result<ExpandedSchema, JsonSchemaError> {
    let root: Value = serde_json::from_str(text).map_err(|e| JsonSchemaError::NotJson {
        message: json_error_message(&e),
        line: e.line(),
        column: e.column(),
    })?;
    let mut cx = Expander {
        root: &root,
        stack: Vec::new(),
        notes: Vec::new(),
        budget: Budget::default(),
        depth: 0,
    };
    let node = cx.resolve(&root, "schema")?;
    let Some(props) = object_properties(&node) else {
        return Err(JsonSchemaError::RootNotObject {
            found: describe(&node),
        });
    };
    let required = required_names(&node);
    let fields = cx.properties(props, &required, "")?;
    Ok(ExpandedSchema {
        fields,
        notes: cx.notes,
    })
}

struct Expander<'a> {
    root: &'a Value,
    /// The `$ref`s being expanded, to catch cycles.
    stack: Vec<String>,
    notes: Vec<ColumnNote>,
    budget: Budget,
    /// How deep the expansion is: nested types and followed references.
    depth: usize,
}

impl<'a> Expander<'a> {
    /// Run `f` one level deeper, refusing to go past the depth limit.
    fn nested<T>(
        &mut self,
        path: &str,
        f: impl FnOnce(&mut Self) -> Result<T, JsonSchemaError>,
    ) -> Result<T, JsonSchemaError> {
        self.depth += 1;
        let result = Budget::depth(self.depth)
            .map_err(|e| JsonSchemaError::exceeded(e, path))
            .and_then(|()| f(self));
        self.depth -= 1;
        result
    }

    /// Follow `$ref`s (and merge `allOf` parts) until a plain schema remains; borrowed
    /// unless parts had to be merged.
    fn resolve<'n>(
        &mut self,
        node: &'n Value,
        path: &str,
    ) -> Result<Cow<'n, Value>, JsonSchemaError>
    where
        'a: 'n,
    {
        self.nested(path, |cx| cx.resolve_here(node, path))
    }

    fn resolve_here<'n>(
        &mut self,
        node: &'n Value,
        path: &str,
    ) -> Result<Cow<'n, Value>, JsonSchemaError>
    where
        'a: 'n,
    {
        let Some(obj) = node.as_object() else {
            return match node {
                // `true` admits anything; `false` nothing: neither has a shape.
                Value::Bool(_) => Ok(Cow::Owned(Value::Object(Map::new()))),
                other => Err(JsonSchemaError::NotASchema {
                    path: path.to_string(),
                    found: describe(other),
                }),
            };
        };
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            if self.stack.iter().any(|r| r == reference) {
                return Err(JsonSchemaError::Recursive {
                    reference: reference.to_string(),
                    path: path.to_string(),
                });
            }
            let target: &'n Value = self.lookup(reference, path)?;
            self.stack.push(reference.to_string());
            let resolved = self.resolve(target, path);
            self.stack.pop();
            return resolved;
        }
        if let Some(parts) = obj.get("allOf").and_then(Value::as_array) {
            let mut merged = obj.clone();
            merged.remove("allOf");
            for part in parts {
                let part = self.resolve(part, path)?;
                merge_into(&mut merged, &part);
                // Merging copies the parts' properties: count them against the budget, so
                // that many parts referring to one large definition stay bounded.
                for _ in part
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    self.budget
                        .field()
                        .map_err(|e| JsonSchemaError::exceeded(e, path))?;
                }
            }
            return Ok(Cow::Owned(Value::Object(merged)));
        }
        Ok(Cow::Borrowed(node))
    }

    fn lookup(&self, reference: &str, path: &str) -> Result<&'a Value, JsonSchemaError> {
        let bad = |reason: &str| JsonSchemaError::BadRef {
            reference: reference.to_string(),
            path: path.to_string(),
            reason: reason.to_string(),
        };
        let Some(pointer) = reference.strip_prefix('#') else {
            return Err(bad(
                "only references within the schema ('#/$defs/Name') are supported",
            ));
        };
        let root: &'a Value = self.root;
        root.pointer(&pointer.replace("%24", "$"))
            .ok_or_else(|| bad("nothing is defined there"))
    }

    fn properties(
        &mut self,
        props: &Map<String, Value>,
        required: &[&str],
        prefix: &str,
    ) -> Result<Vec<SourceField>, JsonSchemaError> {
        let mut out = Vec::with_capacity(props.len());
        for (name, schema) in props {
            let path = format!("{prefix}{name}");
            self.budget
                .field()
                .map_err(|e| JsonSchemaError::exceeded(e, &path))?;
            let (field_type, nullable) = self.field_type(schema, &path)?;
            let mut f = SourceField::new(name.clone(), field_type);
            f.required = required.contains(&name.as_str()) && !nullable;
            out.push(f);
        }
        Ok(out)
    }

    /// A property's type, and whether the schema itself admits null.
    fn field_type(
        &mut self,
        schema: &Value,
        path: &str,
    ) -> Result<(FieldType, bool), JsonSchemaError> {
        self.nested(path, |cx| cx.field_type_here(schema, path))
    }

    fn field_type_here(
        &mut self,
        schema: &Value,
        path: &str,
    ) -> Result<(FieldType, bool), JsonSchemaError> {
        // A reference stays on the stack while its target is expanded, so a type that
        // contains itself is caught instead of recursing forever.
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            if self.stack.iter().any(|r| r == reference) {
                return Err(JsonSchemaError::Recursive {
                    reference: reference.to_string(),
                    path: path.to_string(),
                });
            }
            let target = self.lookup(reference, path)?;
            self.stack.push(reference.to_string());
            let expanded = self.field_type(target, path);
            self.stack.pop();
            return expanded;
        }
        let node = self.resolve(schema, path)?;
        // `oneOf`/`anyOf` with one non-null branch is that branch, nullable.
        for key in ["oneOf", "anyOf"] {
            if let Some(branches) = node.get(key).and_then(Value::as_array) {
                let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null_type(b)).collect();
                let nullable = non_null.len() < branches.len();
                if let [only] = non_null.as_slice() {
                    let (t, inner_nullable) = self.field_type(only, path)?;
                    return Ok((t, nullable || inner_nullable));
                }
                self.notes.push(ColumnNote::new(
                    path,
                    format!(
                        "is a union ({key} of {} alternatives), stored as JSON",
                        non_null.len()
                    ),
                ));
                return Ok((FieldType::Json, nullable));
            }
        }
        let (types, nullable) = type_names(&node);
        if let Some(unknown) = types.iter().find(|t| !JSON_TYPES.contains(&t.as_str())) {
            return Err(JsonSchemaError::UnknownType {
                path: path.to_string(),
                found: unknown.clone(),
                suggestion: closest(unknown, JSON_TYPES).map(str::to_string),
            });
        }
        let t = match types.as_slice() {
            [] if node.get("properties").is_some() => self.object_type(&node, path)?,
            [] if is_string_enum(&node) => FieldType::String,
            [] => {
                self.notes
                    .push(ColumnNote::new(path, "has no type, stored as JSON"));
                FieldType::Json
            }
            [one] => match one.as_str() {
                "object" => self.object_type(&node, path)?,
                "array" => self.list_type(&node, path)?,
                other => scalar_type(other, &node),
            },
            many => {
                self.notes.push(ColumnNote::new(
                    path,
                    format!("may be any of {}, stored as JSON", many.join(", ")),
                ));
                FieldType::Json
            }
        };
        Ok((t, nullable))
    }

    fn object_type(&mut self, node: &Value, path: &str) -> Result<FieldType, JsonSchemaError> {
        match node.get("properties").and_then(Value::as_object) {
            Some(props) if !props.is_empty() => {
                let required = required_names(node);
                let fields = self.properties(props, &required, &format!("{path}."))?;
                Ok(FieldType::Struct { fields })
            }
            _ => {
                self.notes.push(ColumnNote::new(
                    path,
                    "is an object without declared properties (a map), stored as JSON",
                ));
                Ok(FieldType::Json)
            }
        }
    }

    fn list_type(&mut self, node: &Value, path: &str) -> Result<FieldType, JsonSchemaError> {
        match node.get("items") {
            Some(items) if items.is_object() => {
                let item_path = format!("{path}[]");
                self.budget
                    .field()
                    .map_err(|e| JsonSchemaError::exceeded(e, &item_path))?;
                let (t, nullable) = self.field_type(items, &item_path)?;
                let mut item = SourceField::new("item", t);
                item.required = !nullable;
                Ok(FieldType::List {
                    items: Box::new(item),
                })
            }
            _ => {
                self.notes.push(ColumnNote::new(
                    path,
                    "is an array without a single item schema, stored as JSON",
                ));
                Ok(FieldType::Json)
            }
        }
    }
}

fn is_string_enum(node: &Value) -> bool {
    match (node.get("enum"), node.get("const")) {
        (Some(Value::Array(values)), _) => {
            !values.is_empty() && values.iter().all(Value::is_string)
        }
        (_, Some(c)) => c.is_string(),
        _ => false,
    }
}

/// Scalar JSON types. Integer and number formats from OpenAPI (`int32`, `float`) narrow
/// the type; strings with `format: date-time` are timestamps and base64 content is bytes.
fn scalar_type(name: &str, node: &Value) -> FieldType {
    let format = node.get("format").and_then(Value::as_str).unwrap_or("");
    match name {
        "integer" => match format {
            "int32" => FieldType::Int32,
            "uint32" => FieldType::Uint32,
            "uint64" => FieldType::Uint64,
            _ => FieldType::Int64,
        },
        "number" => match format {
            "float" => FieldType::Float32,
            _ => FieldType::Float64,
        },
        "boolean" => FieldType::Bool,
        "string" => {
            if format == "date-time" {
                FieldType::Timestamp {
                    unit: TimeUnit::Nanosecond,
                }
            } else if node.get("contentEncoding").and_then(Value::as_str) == Some("base64") {
                FieldType::Bytes
            } else {
                FieldType::String
            }
        }
        _ => FieldType::Json,
    }
}

/// The non-null type names of a schema, and whether it admits null.
fn type_names(node: &Value) -> (Vec<String>, bool) {
    match node.get("type") {
        Some(Value::String(t)) if t == "null" => (vec![], true),
        Some(Value::String(t)) => (vec![t.clone()], false),
        Some(Value::Array(ts)) => {
            let names: Vec<String> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .map(str::to_string)
                .collect();
            let nullable = ts.iter().any(|t| t == "null");
            (names, nullable)
        }
        _ => (vec![], false),
    }
}

fn is_null_type(node: &Value) -> bool {
    node.get("type").and_then(Value::as_str) == Some("null")
}

fn object_properties(node: &Value) -> Option<&Map<String, Value>> {
    let is_object = match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        None => node.get("properties").is_some(),
        _ => false,
    };
    if !is_object {
        return None;
    }
    node.get("properties").and_then(Value::as_object)
}

fn required_names(node: &Value) -> Vec<&str> {
    node.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Merge an `allOf` part: properties and required lists are unioned; other keywords are
/// taken when not already set.
fn merge_into(target: &mut Map<String, Value>, part: &Value) {
    let Some(part) = part.as_object() else {
        return;
    };
    for (k, v) in part {
        match (k.as_str(), target.get_mut(k), v) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (pk, pv) in theirs {
                    mine.entry(pk.clone()).or_insert_with(|| pv.clone());
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for r in theirs {
                    if !mine.contains(r) {
                        mine.push(r.clone());
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, _) => {
                target.insert(k.clone(), v.clone());
            }
        }
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::Object(o) => match o.get("type") {
            Some(t) => format!("has type {t}"),
            None => "declares no properties".into(),
        },
        Value::Array(_) => "is an array".into(),
        Value::String(_) => "is a string".into(),
        Value::Number(_) => "is a number".into(),
        Value::Bool(_) => "is a boolean".into(),
        Value::Null => "is null".into(),
    }
}

/// The JSON Schema (draft 2020-12) describing messages a sink with these columns writes:
/// required columns listed under `required`, nullable ones admitting `null`.
pub fn json_schema_for_fields(fields: &[SourceField], unix_millis: bool) -> Value {
    let mut schema = object_schema(fields, unix_millis);
    if let Value::Object(o) = &mut schema {
        o.insert(
            "$schema".into(),
            Value::from("https://json-schema.org/draft/2020-12/schema"),
        );
    }
    schema
}

fn object_schema(fields: &[SourceField], unix_millis: bool) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in fields {
        if f.required {
            required.push(Value::from(f.name.clone()));
        }
        properties.insert(f.name.clone(), nullable(f, unix_millis));
    }
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

/// A list item's or map value's schema, admitting null unless required.
fn nullable(f: &SourceField, unix_millis: bool) -> Value {
    let t = type_schema(&f.field_type, unix_millis);
    if f.required {
        t
    } else {
        serde_json::json!({"oneOf": [{"type": "null"}, t]})
    }
}

fn type_schema(t: &FieldType, unix_millis: bool) -> Value {
    use serde_json::json;
    match t {
        FieldType::Int32 => json!({"type": "integer", "format": "int32"}),
        FieldType::Int64 => json!({"type": "integer"}),
        FieldType::Uint32 | FieldType::Uint64 => json!({"type": "integer", "minimum": 0}),
        FieldType::Float32 | FieldType::Float64 | FieldType::Decimal128 { .. } => {
            json!({"type": "number"})
        }
        FieldType::Bool => json!({"type": "boolean"}),
        FieldType::String => json!({"type": "string"}),
        FieldType::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
        FieldType::Date => json!({"type": "string", "format": "date"}),
        FieldType::Time { .. } => json!({"type": "string", "format": "time"}),
        FieldType::Timestamp { .. } if unix_millis => json!({"type": "integer"}),
        FieldType::Timestamp { .. } => json!({"type": "string", "format": "date-time"}),
        FieldType::Json => json!({}),
        FieldType::Struct { fields } => object_schema(fields, unix_millis),
        FieldType::List { items } => {
            json!({"type": "array", "items": nullable(items, unix_millis)})
        }
        FieldType::Map { value, .. } => {
            json!({"type": "object", "additionalProperties": nullable(value, unix_millis)})
        }
    }
}
