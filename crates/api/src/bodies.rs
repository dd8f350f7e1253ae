//! Request bodies of the REST API, in Arroyo's shapes. Schemas are read leniently: the
//! current tagged shapes (`{"type": "json"}`) and the older externally tagged ones the
//! seed uses (`{"json": {}}`, `{"jsonSchema": {"schema": ...}}`) both work.

use super::error::ApiError;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use tributary_types::{BadData, Format, Framing, SchemaDefinition, SourceField};
use utoipa::ToSchema;

/// `POST /connection_profiles` and `POST /connection_profiles/test`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ConnectionProfilePost {
    /// The profile's name, unique case-insensitively.
    pub name: String,
    /// The connector id (`kafka`).
    pub connector: String,
    /// The connection settings: the connector's profile JSON config, or its SQL option
    /// keys (`"bootstrap_servers": "..."`). Keys that are neither are ignored and named in
    /// the response's `warnings`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Value,
    /// `false` stores the profile without testing its connection (as `validate = false`
    /// does in SQL). Tributary only; Arroyo never tests on create.
    #[serde(default)]
    pub validate: Option<bool>,
}

/// `POST /connection_tables` and `POST /connection_tables/test`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ConnectionTablePost {
    /// The table's name, unique case-insensitively.
    pub name: String,
    /// The connector id.
    pub connector: String,
    /// The profile's id (`cp_...`) or name.
    #[serde(default)]
    pub connection_profile_id: Option<String>,
    /// The table settings: the connector's table JSON config, or its SQL option keys
    /// (`"type": "source"`, `"source.offset": "latest"`).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Value,
    /// Columns, format and schema document.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub schema: Option<Value>,
    /// How far the table proves its connection before it is stored: `false` (the
    /// default), `"connect"` or `"sample"`, as the `validate` option of CREATE TABLE.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub validate: Option<Value>,
    /// Computed columns as a table's view shows them (`name`, `sql_name`, `expression`,
    /// `position`, `stored`), so a table read with GET posts back whole. Beyond Arroyo.
    #[serde(default)]
    pub virtual_columns: Vec<VirtualColumnPost>,
    /// The event-time column and its watermark as a table's view shows them (the same as
    /// `schema.watermark`, which wins when both are given). Beyond Arroyo.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub watermark: Option<tributary_types::Watermark>,
}

/// A computed column in a table body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct VirtualColumnPost {
    /// The column's name.
    pub name: String,
    /// Its SQL type (`DOUBLE`).
    pub sql_name: String,
    /// The SQL expression over the table's other columns.
    pub expression: String,
    /// Its place among the columns; after the others when not given.
    #[serde(default)]
    pub position: Option<usize>,
    /// `STORED`.
    #[serde(default)]
    pub stored: bool,
}

/// `PATCH /connection_profiles/{id}`: the options to change, as `ALTER CONNECTION
/// PROFILE ... SET` does. A `null` value removes an option.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionProfilePatch {
    /// Settings to change (profile JSON config or SQL option keys).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Value,
    /// `false` stores the changed profile without testing its connection; by default it
    /// is tested, as a new profile is.
    #[serde(default)]
    pub validate: Option<bool>,
}

/// `PATCH /connection_tables/{id}`: what to change; the whole table is validated again.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectionTablePatch {
    /// A new name.
    #[serde(default)]
    pub name: Option<String>,
    /// Another profile (id or name).
    #[serde(default)]
    pub connection_profile_id: Option<String>,
    /// Settings to change; a `null` value removes an option.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Value,
    /// A replacement schema (columns, format and schema document together).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub schema: Option<Value>,
}

/// `GET /connection_tables` query parameters.
#[derive(Debug, Clone, Default, Deserialize, ToSchema, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PaginationQueryParams {
    /// The id of the last table of the previous page.
    #[serde(default)]
    pub starting_after: Option<String>,
    /// Page size, 1 to 1,000 (default 10).
    #[serde(default)]
    pub limit: Option<i64>,
}

/// A UDF sent with a query to validate (accepted and ignored: Tributary has none yet).
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct Udf {
    /// Its source.
    pub definition: String,
    /// `rust` or `python`.
    #[serde(default)]
    pub language: Option<String>,
}

/// `POST /pipelines/validate_query`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ValidateQueryPost {
    /// The statements to check.
    pub query: String,
    /// UDFs (Tributary declares none yet: a non-empty list is refused).
    #[serde(default)]
    pub udfs: Option<Vec<Udf>>,
}

/// `POST /sql`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlPost {
    /// One or more statements, as `tributary run -c` takes them.
    pub sql: String,
    /// `run` (default) or `check`.
    #[serde(default)]
    pub mode: Option<String>,
    /// How long the request may run before it is cancelled ('30 seconds', '2 minutes');
    /// the server's default when absent, at most its maximum.
    #[serde(default)]
    pub deadline: Option<String>,
}

/// `POST /connection_tables/schemas/infer`: `{"table": {...}, "limit": 20}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaInferPost {
    /// The table to sample, as for `POST /connection_tables/test`.
    pub table: ConnectionTablePost,
    /// How many messages to read (default 10, at most 1,000).
    #[serde(default)]
    pub limit: Option<u64>,
}

/// A `ConnectionSchema` request body, normalised.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SchemaPost {
    /// The wire format.
    pub format: Option<Format>,
    /// The bad-data policy.
    pub bad_data: Option<BadData>,
    /// The framing.
    pub framing: Option<Framing>,
    /// Declared columns.
    pub fields: Vec<SourceField>,
    /// A schema document the columns come from.
    pub definition: Option<SchemaDefinition>,
    /// Primary-key column names.
    pub primary_keys: BTreeSet<String>,
    /// The event-time column and its watermark (`WATERMARK FOR column [AS expression]`).
    /// Beyond Arroyo.
    pub watermark: Option<tributary_types::Watermark>,
}

#[derive(Deserialize)]
struct SchemaShape {
    #[serde(default)]
    format: Option<Format>,
    #[serde(default)]
    bad_data: Option<BadData>,
    #[serde(default)]
    framing: Option<Framing>,
    #[serde(default)]
    fields: Vec<SourceField>,
    #[serde(default)]
    definition: Option<SchemaDefinition>,
    #[serde(default)]
    primary_keys: BTreeSet<String>,
    #[serde(default)]
    watermark: Option<tributary_types::Watermark>,
    // Read-only or informational in Arroyo's shape: accepted, not used.
    #[serde(default, rename = "inferred")]
    _inferred: Option<Value>,
}

impl SchemaPost {
    /// Read a schema body at `path` (for error messages), accepting Arroyo's current and
    /// older shapes. `null` is no schema.
    pub fn from_value(value: &Value, path: &str) -> Result<Option<Self>, ApiError> {
        if value.is_null() {
            return Ok(None);
        }
        let Some(object) = value.as_object() else {
            return Err(ApiError::body(format!("{path} must be an object")));
        };
        let mut object = object.clone();
        for (key, tag) in [
            ("format", "type"),
            ("definition", "type"),
            ("bad_data", "behavior"),
            ("framing", "method"),
        ] {
            if let Some(v) = object.get_mut(key) {
                retag(v, tag);
            }
        }
        if let Some(fields) = object.get_mut("fields") {
            name_list_items(fields, 0);
        }
        let shape: SchemaShape =
            serde_path_to_error::deserialize(Value::Object(object)).map_err(|e| {
                let at = e.path().to_string();
                let at = if at == "." {
                    path.to_string()
                } else {
                    format!("{path}.{at}")
                };
                ApiError::body(format!("{at}: {}", e.inner()))
            })?;
        Ok(Some(SchemaPost {
            format: shape.format,
            bad_data: shape.bad_data,
            framing: shape.framing,
            fields: shape.fields,
            definition: shape.definition,
            primary_keys: shape.primary_keys,
            watermark: shape.watermark,
        }))
    }
}

/// `{"json": {...}}` (an older Arroyo shape, externally tagged in camelCase) into
/// `{"type": "json", ...}`; an object that already has its tag is left alone.
fn retag(value: &mut Value, tag: &str) {
    let Some(object) = value.as_object() else {
        return;
    };
    if object.contains_key(tag) || object.len() != 1 {
        return;
    }
    let Some((variant, inner)) = object.iter().next() else {
        return;
    };
    let inner = match inner {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return,
    };
    let mut tagged = inner;
    tagged.insert(tag.to_string(), Value::String(snake_case(variant)));
    *value = Value::Object(tagged);
}

/// `jsonSchema` → `json_schema`.
fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Arroyo's list items may omit their name (`item`); nested depth is bounded by the
/// request's JSON depth limit, checked before this runs.
fn name_list_items(fields: &mut Value, depth: usize) {
    if depth > tributary_types::limits::MAX_JSON_DEPTH {
        return;
    }
    let Some(list) = fields.as_array_mut() else {
        return;
    };
    for field in list {
        name_nested(field, depth);
    }
}

fn name_nested(field: &mut Value, depth: usize) {
    let Some(object) = field.as_object_mut() else {
        return;
    };
    if let Some(items) = object.get_mut("items")
        && let Some(item) = items.as_object_mut()
    {
        item.entry("name")
            .or_insert_with(|| Value::String("item".into()));
        name_nested(items, depth + 1);
    }
    if let Some(nested) = object.get_mut("fields") {
        name_list_items(nested, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tributary_types::FieldType;

    #[test]
    fn the_seed_shape_and_the_current_shape_read_the_same() {
        let seed = json!({
            "format": {"json": {}},
            "definition": {"jsonSchema": {"schema": "{\"type\": \"object\"}"}},
            "fields": []
        });
        let current = json!({
            "format": {"type": "json"},
            "definition": {"type": "json_schema", "schema": "{\"type\": \"object\"}"},
            "fields": []
        });
        let a = SchemaPost::from_value(&seed, "schema").unwrap().unwrap();
        let b = SchemaPost::from_value(&current, "schema").unwrap().unwrap();
        assert_eq!(a, b);
        assert!(matches!(a.format, Some(Format::Json(_))));
        assert!(matches!(
            a.definition,
            Some(SchemaDefinition::JsonSchema { .. })
        ));
    }

    #[test]
    fn arroyo_fields_with_sql_names_and_unnamed_list_items_read() {
        let body = json!({
            "format": {"type": "raw_string"},
            "bad_data": {"drop": {}},
            "framing": {"method": "newline", "max_line_length": 10},
            "fields": [
                {"name": "ts", "type": "timestamp", "unit": "millisecond", "required": false,
                 "metadata_key": "timestamp", "sql_name": "TIMESTAMP(3)"},
                {"name": "tags", "type": "list", "items": {"type": "string", "required": false}}
            ]
        });
        let s = SchemaPost::from_value(&body, "schema").unwrap().unwrap();
        assert_eq!(s.bad_data, Some(BadData::Drop));
        assert_eq!(s.fields[0].metadata_key.as_deref(), Some("timestamp"));
        let FieldType::List { items } = &s.fields[1].field_type else {
            panic!("not a list: {:?}", s.fields[1]);
        };
        assert_eq!(items.name, "item");
    }

    #[test]
    fn a_bad_field_type_names_where_it_is() {
        let body =
            json!({"fields": [{"name": "a", "type": "int64"}, {"name": "b", "type": "int8"}]});
        let e = SchemaPost::from_value(&body, "schema").unwrap_err();
        assert!(e.message.starts_with("schema.fields[1]"), "{}", e.message);
        assert!(e.message.contains("int8"), "{}", e.message);
    }
}
