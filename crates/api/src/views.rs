//! Response bodies of the REST API, in Arroyo's shapes (collections camelCase, objects
//! snake_case), rendered from catalog records with every secret redacted.

use super::error::ApiDiagnostic;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tributary_connectors::{ConfigKind, redact_config, registry};
use tributary_types::{ConnectionProfile, ConnectionSchema, ConnectionTable, SourceField};
use utoipa::ToSchema;

/// A connection profile.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectionProfileView {
    /// Its id, `cp_...`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The connector id.
    pub connector: String,
    /// The connection settings, secrets redacted (`{{ VAR }}` references shown).
    #[schema(value_type = Object)]
    pub config: Value,
    /// A one-line description (for Kafka, its servers).
    pub description: String,
    /// When it was created, microseconds since the epoch.
    pub created_at: i64,
    /// When it last changed, microseconds since the epoch.
    pub updated_at: i64,
    /// The WITH options as written, secrets redacted, in SQL form.
    #[schema(value_type = Object)]
    pub options: Value,
    /// Its last connection test: `at` (µs since the epoch), `result` (`passed`,
    /// `failed`, `skipped`), `code` when it failed, `latency_ms`. Beyond Arroyo.
    #[schema(value_type = Option<Object>)]
    pub last_test: Option<tributary_types::LastTest>,
    /// The names of the tables that use it, in name order (in listings and single
    /// profiles; empty in the answer to a create). Beyond Arroyo.
    pub tables: Vec<String>,
    /// The profile's `CREATE CONNECTION PROFILE` statement, secrets redacted. Beyond
    /// Arroyo.
    pub create_sql: String,
    /// What the request did not use or should know.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ApiDiagnostic>,
}

impl ConnectionProfileView {
    /// The view of a stored profile used by `tables`.
    pub fn with_tables(p: &ConnectionProfile, mut tables: Vec<String>) -> Self {
        tables.sort_by_key(|t| t.to_lowercase());
        Self {
            tables,
            ..Self::of(p)
        }
    }

    /// The view of a stored profile (its tables left out).
    pub fn of(p: &ConnectionProfile) -> Self {
        Self {
            id: p.id.to_string(),
            name: p.name.clone(),
            connector: p.connector.clone(),
            config: redact_config(&p.connector, ConfigKind::Profile, &p.config),
            description: p.description.clone(),
            created_at: p.created_at,
            updated_at: p.updated_at,
            options: options_view(&p.options),
            last_test: p.last_test.clone(),
            tables: vec![],
            create_sql: p.to_create_sql(),
            warnings: vec![],
        }
    }
}

/// The options as `{key: value}` in SQL's spelling, secrets redacted.
fn options_view(options: &[tributary_types::OptionEntry]) -> Value {
    Value::Object(
        options
            .iter()
            .map(|o| (o.key.clone(), option_json(&o.printable_value())))
            .collect(),
    )
}

fn option_json(v: &tributary_types::OptionValue) -> Value {
    use tributary_types::OptionValue as O;
    match v {
        O::String(s) | O::Identifier(s) | O::Interval(s) => Value::String(s.clone()),
        O::Number(n) => serde_json::from_str(n).unwrap_or_else(|_| Value::String(n.clone())),
        O::Bool(b) => Value::Bool(*b),
        O::Array(items) => Value::Array(items.iter().map(option_json).collect()),
    }
}

/// `{"data": [...]}` of profiles.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectionProfileCollection {
    /// The profiles, most recently changed first.
    pub data: Vec<ConnectionProfileView>,
}

/// A connection table.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectionTableView {
    /// Its id, `ct_...`.
    pub id: String,
    /// Its name.
    pub name: String,
    /// When it was created, microseconds since the epoch (an integer).
    pub created_at: i64,
    /// When it last changed, microseconds since the epoch.
    pub updated_at: i64,
    /// The connector id.
    pub connector: String,
    /// The profile it uses, if any.
    pub connection_profile: Option<ConnectionProfileView>,
    /// `source`, `sink` or `lookup`.
    pub table_type: String,
    /// The table settings, secrets redacted.
    #[schema(value_type = Object)]
    pub config: Value,
    /// Columns computed from others (`GENERATED ALWAYS AS`): `name`, `sql_name`,
    /// `expression`. Beyond Arroyo.
    #[schema(value_type = Vec<Object>)]
    pub virtual_columns: Vec<Value>,
    /// The event-time column and its watermark: `column`, `expression` (null for the
    /// column itself). Beyond Arroyo.
    #[schema(value_type = Option<Object>)]
    pub watermark: Option<Value>,
    /// A source's event time (Arroyo's hidden `_timestamp`): `column` (`_timestamp` or
    /// the WATERMARK FOR column), `origin` (`declared` or `connector`), `source` (where
    /// the time comes from, a phrase) and `watermark`; null for sinks and lookups.
    /// Beyond Arroyo.
    #[schema(value_type = Option<Object>)]
    pub event_time: Option<Value>,
    /// Its last connection test (`TEST TABLE`, or a create with `validate`): `at`,
    /// `result`, `code`, `latency_ms`. Beyond Arroyo.
    #[schema(value_type = Option<Object>)]
    pub last_test: Option<tributary_types::LastTest>,
    /// Columns (each with its `sql_name`), format and schema document.
    #[schema(value_type = Object)]
    pub schema: Value,
    /// Pipelines using it: always 0 (Tributary runs no pipelines).
    pub consumers: u64,
    /// A one-line description, `KafkaSource<orders>`.
    pub description: String,
    /// The table's `CREATE TABLE` statement, secrets redacted.
    pub create_sql: String,
    /// What the request did not use or should know.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<ApiDiagnostic>,
}

impl ConnectionTableView {
    /// The view of a stored table and its profile.
    pub fn of(t: &ConnectionTable, profile: Option<&ConnectionProfile>) -> Self {
        Self {
            id: t.id.to_string(),
            name: t.name.clone(),
            created_at: t.created_at,
            updated_at: t.updated_at,
            connector: t.connector.clone(),
            connection_profile: profile.map(ConnectionProfileView::of),
            table_type: t.connection_type.as_str().into(),
            config: table_config(t),
            virtual_columns: t
                .virtual_columns
                .iter()
                .map(|v| {
                    serde_json::json!({
                        "name": v.name,
                        "sql_name": v.field_type.sql_name(),
                        "expression": v.expression,
                        "position": v.position,
                        "stored": v.stored,
                    })
                })
                .collect(),
            watermark: match (&t.watermark, &t.event_time_field) {
                (Some(w), _) => {
                    Some(serde_json::json!({"column": w.column, "expression": w.expression}))
                }
                (None, Some(column)) => {
                    Some(serde_json::json!({"column": column, "expression": null}))
                }
                (None, None) => None,
            },
            event_time: tributary_sql::describe::event_time_of(t).map(|time| {
                serde_json::json!({
                    "column": time.column,
                    "origin": if time.declared.is_some() { "declared" } else { "connector" },
                    "source": time.source,
                    "watermark": time.watermark,
                })
            }),
            last_test: t.last_test.clone(),
            schema: schema_view(&t.schema),
            consumers: 0,
            description: t.description.clone(),
            create_sql: t.to_create_sql(profile.map(|p| p.name.as_str())),
            warnings: vec![],
        }
    }
}

/// Options of a table that neither its config nor its schema carries; the view shows
/// them in `config` under their SQL keys, which a POST of the same body takes back.
const OPTIONS_IN_CONFIG: &[&str] = &["lookup.cache.max_bytes", "lookup.cache.ttl", "idle_micros"];

/// A table's config as shown: Arroyo's JSON, secrets redacted, with [`OPTIONS_IN_CONFIG`].
fn table_config(t: &ConnectionTable) -> Value {
    let config = redact_config(&t.connector, ConfigKind::Table, &t.config);
    with_table_options(config, t, true)
}

/// `config` with the table's [`OPTIONS_IN_CONFIG`] under their SQL keys; `redacted`
/// for an answer, not for a push (which sends settings as written).
pub(crate) fn with_table_options(mut config: Value, t: &ConnectionTable, redacted: bool) -> Value {
    if let Some(map) = config.as_object_mut() {
        for o in t
            .options
            .iter()
            .filter(|o| OPTIONS_IN_CONFIG.contains(&o.key.as_str()))
        {
            let value = if redacted {
                o.printable_value()
            } else {
                o.value.clone()
            };
            map.insert(o.key.clone(), option_json(&value));
        }
    }
    config
}

/// A schema in Arroyo's shape: every field carries its `sql_name`; Tributary's own
/// bookkeeping (column origins and notes) is left out.
pub fn schema_view(schema: &ConnectionSchema) -> Value {
    let mut v = serde_json::to_value(schema).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("column_notes");
        o.remove("column_origins");
        o.insert(
            "fields".into(),
            Value::Array(schema.fields.iter().map(field_view).collect()),
        );
        o.entry("primary_keys")
            .or_insert_with(|| Value::Array(vec![]));
    }
    v
}

/// A field with its `sql_name`, recursively.
pub fn field_view(f: &SourceField) -> Value {
    let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("sql_name".into(), Value::String(f.field_type.sql_name()));
        o.insert(
            "arrow_type".into(),
            Value::String(f.field_type.to_arrow().to_string()),
        );
        match &f.field_type {
            tributary_types::FieldType::Struct { fields } => {
                o.insert(
                    "fields".into(),
                    Value::Array(fields.iter().map(field_view).collect()),
                );
            }
            tributary_types::FieldType::List { items } => {
                o.insert("items".into(), field_view(items));
            }
            tributary_types::FieldType::Map { key, value } => {
                o.insert("key".into(), field_view(key));
                o.insert("value".into(), field_view(value));
            }
            _ => {}
        }
    }
    v
}

/// `{"data": [...], "hasMore": bool}` of tables.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectionTableCollection {
    /// One page of tables, newest first.
    pub data: Vec<ConnectionTableView>,
    /// Whether another page follows (ask with `starting_after` = the last id).
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

/// A connector.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectorView {
    /// The id used in `connector = '...'`.
    pub id: String,
    /// A display name.
    pub name: String,
    /// An SVG icon (text).
    pub icon: String,
    /// What it connects to.
    pub description: String,
    /// The table settings' JSON Schema, as text.
    pub table_config: String,
    /// Always true.
    pub enabled: bool,
    /// Whether tables can read from it.
    pub source: bool,
    /// Whether tables can write to it.
    pub sink: bool,
    /// Whether tables can be looked up by key (Tributary only).
    pub lookup: bool,
    /// Whether tables declare their own schema (false for fixed-schema generators).
    pub custom_schemas: bool,
    /// Whether connection tests reach the system from here.
    pub testing: bool,
    /// Whether a console should hide it.
    pub hidden: bool,
    /// The profile settings' JSON Schema as text, or null when the connector takes no
    /// profile.
    pub connection_config: Option<String>,
    /// The metadata a column can read with `METADATA FROM 'key'`: `key`, `sql_name`,
    /// `description`. Beyond Arroyo.
    #[schema(value_type = Vec<Object>)]
    pub metadata: Vec<Value>,
}

/// `{"data": [...]}` of connectors.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectorCollection {
    /// Every connector, by id.
    pub data: Vec<ConnectorView>,
}

/// Every connector in the registry.
pub fn connectors() -> ConnectorCollection {
    let mut data: Vec<ConnectorView> = registry()
        .iter()
        .map(|e| {
            let c = e.connector;
            let roles = c.roles();
            ConnectorView {
                id: c.id().into(),
                name: c.name().into(),
                icon: icon(c.name()),
                description: c.description().into(),
                table_config: console_ready(c.table_schema()),
                enabled: true,
                source: roles.source,
                sink: roles.sink,
                lookup: roles.lookup,
                custom_schemas: c.fixed_schema().is_none(),
                testing: c.supports_testing(),
                hidden: false,
                connection_config: c.profile_schema().map(console_ready),
                metadata: c
                    .metadata_keys()
                    .iter()
                    .map(|m| {
                        serde_json::json!({
                            "key": m.key,
                            "sql_name": m.sql_type.field_type().sql_name(),
                            "description": m.description,
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    data.sort_by(|a, b| a.id.cmp(&b.id));
    ConnectorCollection { data }
}

/// A connector's schema in the form Arroyo's console compiles and renders, as Arroyo's
/// own schemas are written: without `$schema` (its Ajv build is draft 2019-09, which
/// cannot resolve 2020-12's meta-schema), and with `"type": "object"` beside every
/// `oneOf` (its renderer picks a widget by `type`, and offers a choice of `oneOf`
/// branches only for an object). Tributary's own console reads the same documents.
fn console_ready(schema: &str) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(schema) else {
        return schema.to_string();
    };
    if let Some(top) = doc.as_object_mut() {
        top.remove("$schema");
    }
    type_beside_one_of(&mut doc, 0);
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| schema.to_string())
}

/// Schemas nest a few levels; past this the walk stops (ours are far shallower).
const MAX_SCHEMA_DEPTH: usize = 64;

fn type_beside_one_of(node: &mut Value, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    match node {
        Value::Object(map) => {
            if map.contains_key("oneOf") {
                map.insert("type".into(), Value::String("object".into()));
            }
            for child in map.values_mut() {
                type_beside_one_of(child, depth + 1);
            }
        }
        Value::Array(items) => {
            for item in items {
                type_beside_one_of(item, depth + 1);
            }
        }
        _ => {}
    }
}

/// A plain SVG badge with the connector's initials.
fn icon(name: &str) -> String {
    let initials: String = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|w| w.chars().next())
        .take(2)
        .collect::<String>()
        .to_uppercase();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\"><rect width=\"64\" height=\"64\" rx=\"12\" fill=\"#2b6cb0\"/><text x=\"32\" y=\"41\" font-family=\"sans-serif\" font-size=\"26\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"#fff\">{initials}</text></svg>"
    )
}

/// One event of a connection test (Arroyo's `TestSourceMessage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct TestSourceMessage {
    /// Whether this event is a failure.
    pub error: bool,
    /// Whether this is the last event.
    pub done: bool,
    /// What happened.
    pub message: String,
    /// The stage (`resolve`, `connect`, `auth`, `read`, ...; Tributary only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// The failure code, as `TEST TABLE` reports it (Tributary only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What to check (Tributary only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Sampled rows, decoded with the table's format (the final event of a source test).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub rows: Option<Vec<Value>>,
}

impl TestSourceMessage {
    /// An informational event.
    pub fn info(message: impl Into<String>) -> Self {
        Self {
            error: false,
            done: false,
            message: message.into(),
            stage: None,
            code: None,
            hint: None,
            rows: None,
        }
    }

    /// The final event of a test that passed.
    pub fn done(message: impl Into<String>) -> Self {
        Self {
            done: true,
            ..Self::info(message)
        }
    }

    /// The final event of a test that failed.
    pub fn fail(message: impl Into<String>) -> Self {
        Self {
            error: true,
            done: true,
            ..Self::info(message)
        }
    }
}

/// `{"values": {"topic": [...]}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConnectionAutocompleteResp {
    /// Suggestions by table-config field.
    pub values: std::collections::BTreeMap<String, Vec<String>>,
}

/// A position in submitted SQL.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SqlLocation {
    /// 1-based line.
    pub line: u64,
    /// 1-based column.
    pub column: u64,
}

/// A range in submitted SQL.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SqlSpan {
    /// Where it starts.
    pub start: SqlLocation,
    /// Where it ends.
    pub end: SqlLocation,
}

/// One problem in a query (Arroyo's `SqlDiagnostic`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SqlDiagnostic {
    /// What is wrong, with its help.
    pub message: String,
    /// Where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span: Option<SqlSpan>,
}

/// One node of a validated query's plan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PipelineNode {
    /// Its index.
    pub node_id: u64,
    /// The operator (`KafkaSource<orders>`, `Projection`, ...).
    pub operator: String,
    /// What it does.
    pub description: String,
    /// Always 1.
    pub parallelism: u64,
}

/// One edge of a validated query's plan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PipelineEdge {
    /// The producing node.
    pub src_id: u64,
    /// The consuming node.
    pub dest_id: u64,
    /// The key type (empty: Tributary does not shuffle).
    pub key_type: String,
    /// The rows' schema.
    pub value_type: String,
    /// `forward`.
    pub edge_type: String,
}

/// A validated query's plan.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PipelineGraph {
    /// The nodes, sources first.
    pub nodes: Vec<PipelineNode>,
    /// The edges.
    pub edges: Vec<PipelineEdge>,
}

/// `POST /pipelines/validate_query`'s answer: a `graph` means valid.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct QueryValidationResult {
    /// What is wrong (empty when valid).
    pub errors: Vec<SqlDiagnostic>,
    /// The plan, when the query is valid.
    pub graph: Option<PipelineGraph>,
}

/// A result column of `POST /sql`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SqlColumn {
    /// Its name.
    pub name: String,
    /// Its SQL type.
    #[serde(rename = "type")]
    pub data_type: String,
    /// Whether it can be NULL.
    pub nullable: bool,
}

/// One statement's result of `POST /sql`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SqlStatementResult {
    /// The statement's first line.
    pub line: u64,
    /// The statement's first column.
    pub column: u64,
    /// Where the statement ends (exclusive).
    pub end_line: u64,
    /// See `end_line`.
    pub end_column: u64,
    /// The command tag (`CREATE TABLE`) or `SELECT` for rows.
    pub tag: String,
    /// Result columns (empty for commands).
    pub columns: Vec<SqlColumn>,
    /// Rows, each an array in column order (JSON values; timestamps as text).
    #[schema(value_type = Vec<Vec<Object>>)]
    pub rows: Vec<Vec<Value>>,
    /// The result's Arrow schema (for clients that rebuild Arrow batches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub arrow_schema: Option<Value>,
    /// Warnings and notes.
    pub diagnostics: Vec<ApiDiagnostic>,
    /// Whether it failed.
    pub error: bool,
    /// How many rows were streamed, when the rows came as `rows` events (a streamed
    /// answer) rather than in `rows`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_count: Option<u64>,
}

/// One event of a streamed `POST /sql` answer (newline-delimited JSON, or server-sent
/// events named by `event`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SqlEvent {
    /// A query's rows begin: its columns.
    Columns {
        /// The statement's first line.
        line: u64,
        /// The statement's first column.
        column: u64,
        /// The result columns.
        columns: Vec<SqlColumn>,
        /// The columns as an Arrow schema (for clients that rebuild Arrow batches).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<Object>)]
        arrow_schema: Option<Value>,
    },
    /// Rows, as they arrived, each an array in column order.
    Rows {
        /// The rows.
        #[schema(value_type = Vec<Vec<Object>>)]
        rows: Vec<Vec<Value>>,
    },
    /// A statement ended: its result (for a query, without its rows and with `row_count`).
    Result(SqlStatementResult),
    /// The script ended.
    Summary {
        /// Statements that failed.
        failed: usize,
        /// Diagnostics not reported because the script reached its limit.
        suppressed_diagnostics: usize,
    },
}

/// `POST /sql`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SqlResponse {
    /// Each statement run, in order; in `run` mode the last one may have failed.
    pub results: Vec<SqlStatementResult>,
    /// Statements that failed.
    pub failed: usize,
    /// Diagnostics not reported because the script reached its limit.
    pub suppressed_diagnostics: usize,
}

/// `{"data": []}`: GET /jobs.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EmptyCollection {
    /// Always empty: Tributary runs no jobs.
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<Value>,
}

/// `{"data": [], "hasMore": false}`: GET /pipelines.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EmptyPage {
    /// Always empty: Tributary runs no pipelines.
    #[schema(value_type = Vec<Object>)]
    pub data: Vec<Value>,
    /// Always false.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connector_is_listed_with_its_schemas_as_text() {
        let c = connectors();
        assert_eq!(c.data.len(), registry().iter().count());
        let kafka = c.data.iter().find(|c| c.id == "kafka").unwrap();
        assert!(serde_json::from_str::<Value>(&kafka.table_config).is_ok());
        assert!(kafka.connection_config.is_some() && kafka.custom_schemas && kafka.testing);
        let impulse = c.data.iter().find(|c| c.id == "impulse").unwrap();
        assert!(impulse.connection_config.is_none() && !impulse.custom_schemas);
        assert!(c.data.windows(2).all(|w| w[0].id < w[1].id));
    }

    /// What Arroyo's console needs of every served schema: no `$schema` its draft
    /// 2019-09 Ajv cannot resolve, and every property one its renderer draws: a string
    /// (a select when it has an enum), a number, a boolean, an array of strings, or an
    /// object with a `oneOf` of titled objects, with properties, or a map of strings.
    /// (`crates/cli/tests/arroyo_console_schemas.cjs` compiles them with Ajv itself.)
    #[test]
    fn every_served_schema_is_one_arroyos_console_renders() {
        fn object(schema: &Value, path: &str, problems: &mut Vec<String>) {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, p) in props {
                if p.get("deprecated").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                let at = format!("{path}/{key}");
                match p.get("type").and_then(Value::as_str) {
                    Some("string" | "number" | "integer" | "boolean") => {}
                    Some("array") => {
                        // Iceberg's partition fields are objects in Arroyo's schema too:
                        // its renderer draws the list without a widget for them.
                        let arroyos_own = at == "iceberg table/partitioning/fields";
                        if p.pointer("/items/type").and_then(Value::as_str) != Some("string")
                            && !arroyos_own
                        {
                            problems.push(format!("{at}: an array of other than strings"));
                        }
                    }
                    Some("object") => {
                        if let Some(branches) = p.get("oneOf").and_then(Value::as_array) {
                            for (i, b) in branches.iter().enumerate() {
                                if b.get("title").and_then(Value::as_str).is_none() {
                                    problems.push(format!("{at}/oneOf/{i}: no title"));
                                }
                                object(b, &format!("{at}/oneOf/{i}"), problems);
                            }
                        } else if p.get("properties").is_some() {
                            object(p, &at, problems);
                        } else if p
                            .pointer("/additionalProperties/type")
                            .and_then(Value::as_str)
                            != Some("string")
                        {
                            problems.push(format!("{at}: an object the renderer cannot draw"));
                        }
                    }
                    other => problems.push(format!("{at}: type {other:?}")),
                }
            }
        }
        let mut problems = Vec::new();
        for c in connectors().data {
            for (which, text) in [
                ("table", Some(&c.table_config)),
                ("profile", c.connection_config.as_ref()),
            ] {
                let Some(text) = text else { continue };
                let doc: Value = serde_json::from_str(text).unwrap();
                if doc.get("$schema").is_some() {
                    problems.push(format!("{} {which}: $schema", c.id));
                }
                object(&doc, &format!("{} {which}", c.id), &mut problems);
            }
        }
        assert!(problems.is_empty(), "{problems:?}");
    }
}
