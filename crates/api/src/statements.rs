//! REST bodies rendered as the SQL statements they stand for, so a request runs the same
//! pipeline as `CREATE TABLE` in a script. Every piece is written on lines of its own and
//! remembered with the body path it came from: a diagnostic's line then names the part
//! of the request it is about.

use super::bodies::SchemaPost;
use tributary_connectors::{ConfigOptions, OptionSpec, options_from_config, registry};
use tributary_dialect::sql_writer::{
    TableParts, WrittenStatement, column, ident, is_schema_option, literal, option,
};
use tributary_types::{
    BadData, DecimalEncoding, Format, Framing, JsonCompression, OptionValue, ParquetCompression,
    SchemaDefinition, TimestampFormat,
};

/// The options a connector `config` stands for: the connector's own keys (JSON config
/// or SQL-style), and, for tables, the generic table options written SQL-style
/// (`event_time_field`). Unknown connectors take nothing (the statement then says the
/// connector is unknown).
pub(crate) fn config_options(
    connector: &str,
    config: &serde_json::Value,
    table: bool,
) -> ConfigOptions {
    let Some(entry) = registry().get(connector) else {
        return ConfigOptions::default();
    };
    let specs: &[OptionSpec] = if table {
        entry.connector.table_options()
    } else {
        entry.connector.profile_options()
    };
    let mut out = options_from_config(specs, config);
    if table {
        let generic = |key: &str| {
            tributary_dialect::GENERIC_TABLE_OPTIONS
                .iter()
                .any(|o| o.key == key && o.key != "connector" && o.key != "connection_profile")
        };
        let mut kept = Vec::new();
        for path in std::mem::take(&mut out.ignored) {
            let key = path
                .trim_start_matches('/')
                .replace("~1", "/")
                .replace("~0", "~");
            match config.get(&key) {
                Some(v) if generic(&key) && !v.is_null() && !v.is_object() => {
                    if let Some(value) = json_option(v) {
                        out.options.push((key, value));
                        continue;
                    }
                    kept.push(path);
                }
                Some(serde_json::Value::Null) if generic(&key) => out.removed.push(key),
                _ => kept.push(path),
            }
        }
        out.ignored = kept;
    }
    out
}

/// The body path of option `key`: the config field it came from, else `/config`.
pub(crate) fn config_path(options: &ConfigOptions, key: &str) -> String {
    match options.origin(key) {
        Some(pointer) => format!("/config{pointer}"),
        None => "/config".to_string(),
    }
}

fn json_option(v: &serde_json::Value) -> Option<OptionValue> {
    Some(match v {
        // `"INTERVAL '1' MINUTE"`, as a table's view shows an interval option.
        serde_json::Value::String(s)
            if s.trim_start().to_ascii_uppercase().starts_with("INTERVAL ")
                && tributary_types::parse_interval_micros(s).is_ok() =>
        {
            OptionValue::Interval(s.trim().to_string())
        }
        serde_json::Value::String(s) => OptionValue::String(s.clone()),
        serde_json::Value::Number(n) => OptionValue::Number(n.to_string()),
        serde_json::Value::Bool(b) => OptionValue::Bool(*b),
        _ => return None,
    })
}

/// `CREATE CONNECTION PROFILE "name" WITH (...)` for a profile body.
pub fn profile_statement(
    name: &str,
    connector: &str,
    config: &serde_json::Value,
    validate: Option<bool>,
) -> WrittenStatement {
    let mut s = WrittenStatement::new();
    let options = config_options(connector, config, false);
    s.push(
        &format!("CREATE CONNECTION PROFILE {}", ident(name)),
        "/name",
    );
    s.raw(" WITH (\n");
    s.push(
        &format!("  connector = {}", literal(connector)),
        "/connector",
    );
    for (key, value) in &options.options {
        s.raw(",\n");
        s.push(
            &format!("  {}", option(key, value)),
            &config_path(&options, key),
        );
    }
    if let Some(v) = validate {
        s.raw(",\n");
        s.push(&format!("  validate = {v}"), "/validate");
    }
    s.raw("\n)");
    s.ignore_config(&options);
    s
}

/// Replace the schema's part (columns, key, format options) with `schema`'s.
pub(crate) fn set_schema(parts: &mut TableParts, schema: &SchemaPost, read_only: &mut Vec<String>) {
    let virtual_columns: Vec<(String, String)> = std::mem::take(&mut parts.columns)
        .into_iter()
        .filter(|(_, origin)| origin == tributary_dialect::sql_writer::VIRTUAL_COLUMNS)
        .collect();
    parts.columns = schema_columns(schema);
    parts.columns.extend(virtual_columns);
    parts
        .constraints
        .retain(|(line, _)| !line.starts_with("PRIMARY KEY"));
    parts
        .constraints
        .retain(|(line, _)| !line.starts_with("WATERMARK FOR"));
    if let Some(w) = &schema.watermark {
        let line = match &w.expression {
            Some(e) if !e.trim().is_empty() => format!("WATERMARK FOR {} AS {e}", ident(&w.column)),
            _ => format!("WATERMARK FOR {}", ident(&w.column)),
        };
        parts.constraints.push((line, "/schema/watermark".into()));
    }
    if !schema.primary_keys.is_empty() {
        let keys: Vec<String> = schema.primary_keys.iter().map(|k| ident(k)).collect();
        parts.constraints.push((
            format!("PRIMARY KEY ({})", keys.join(", ")),
            "/schema/primary_keys".into(),
        ));
    }
    parts.options.retain(|(key, _, _)| !is_schema_option(key));
    parts.options.extend(schema_options(schema, read_only));
}

/// The parts of a table body.
pub fn table_parts(
    connector: &str,
    profile: Option<&str>,
    config: &serde_json::Value,
    schema: Option<&SchemaPost>,
    validate: Option<&serde_json::Value>,
    read_only: &mut Vec<String>,
) -> (TableParts, ConfigOptions) {
    let mut parts = TableParts::default();
    parts.set_connection(connector, profile);
    let options = config_options(connector, config, true);
    let paths: Vec<String> = options
        .options
        .iter()
        .map(|(k, _)| config_path(&options, k))
        .collect();
    parts.options.extend(
        options
            .options
            .clone()
            .into_iter()
            .zip(paths)
            .map(|((k, v), path)| (k, v, path)),
    );
    if let Some(schema) = schema {
        set_schema(&mut parts, schema, read_only);
        // A connector that supplies its own columns (impulse, nexmark) takes none from the
        // body: the fields a GET shows are its own, and nested `NOT NULL` fields have no
        // SQL spelling.
        let fixed = registry()
            .get(connector)
            .is_some_and(|e| e.connector.fixed_schema().is_some());
        if fixed {
            parts
                .columns
                .retain(|(_, origin)| origin == tributary_dialect::sql_writer::VIRTUAL_COLUMNS);
        }
    }
    // A lookup table is written `CREATE TEMPORARY TABLE`, as SQL declares one.
    if parts
        .options
        .iter()
        .any(|(k, v, _)| k == "type" && v.as_text() == "lookup")
    {
        parts.temporary = true;
    }
    if let Some(v) = validate.and_then(json_option) {
        parts
            .options
            .push(("validate".into(), v, "/validate".into()));
    }
    (parts, options)
}

/// Put each computed column of a body at its place among the columns (after them when
/// it names none, or names one past them).
pub(crate) fn add_virtual_columns(
    parts: &mut TableParts,
    columns: &[super::bodies::VirtualColumnPost],
) {
    for (i, v) in columns.iter().enumerate() {
        let stored = if v.stored { " STORED" } else { "" };
        let line = format!(
            "{} {} GENERATED ALWAYS AS ({}){stored}",
            ident(&v.name),
            v.sql_name,
            v.expression
        );
        let at = v.position.unwrap_or(usize::MAX).min(parts.columns.len());
        parts
            .columns
            .insert(at, (line, format!("/virtual_columns/{i}")));
    }
}

/// `CREATE TABLE` for a table body.
pub fn table_statement(
    name: &str,
    connector: &str,
    profile: Option<&str>,
    config: &serde_json::Value,
    schema: Option<&SchemaPost>,
    validate: Option<&serde_json::Value>,
    virtual_columns: &[super::bodies::VirtualColumnPost],
) -> WrittenStatement {
    let mut read_only = Vec::new();
    let (mut parts, options) =
        table_parts(connector, profile, config, schema, validate, &mut read_only);
    add_virtual_columns(&mut parts, virtual_columns);
    let mut s = parts.statement(name);
    s.ignore_config(&options);
    s.read_only = read_only;
    s
}

/// Column lines: every field, or with a schema document only the metadata fields (the
/// document gives the rest, as in SQL without declared columns).
fn schema_columns(schema: &SchemaPost) -> Vec<(String, String)> {
    schema
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| schema.definition.is_none() || f.metadata_key.is_some())
        .map(|(i, f)| (column(f), format!("/schema/fields/{i}")))
        .collect()
}

fn schema_options(
    schema: &SchemaPost,
    read_only: &mut Vec<String>,
) -> Vec<(String, OptionValue, String)> {
    let mut out: Vec<(String, OptionValue, String)> = Vec::new();
    let s = |v: &str| OptionValue::String(v.to_string());
    let n = |v: u64| OptionValue::Number(v.to_string());
    let mut add = |key: &str, value: OptionValue, path: &str| {
        out.push((key.to_string(), value, path.to_string()))
    };
    const F: &str = "/schema/format";
    let mut registry_id = None;
    match &schema.format {
        None => {}
        Some(Format::Json(j)) => {
            add(
                "format",
                s(if j.debezium { "debezium_json" } else { "json" }),
                F,
            );
            if j.confluent_schema_registry {
                add("json.confluent_schema_registry", OptionValue::Bool(true), F);
                registry_id = j.schema_id;
            }
            if j.include_schema {
                add("json.include_schema", OptionValue::Bool(true), F);
            }
            if j.unstructured {
                add("json.unstructured", OptionValue::Bool(true), F);
            }
            if j.timestamp_format == TimestampFormat::UnixMillis {
                add("json.timestamp_format", s("unix_millis"), F);
            }
            match j.decimal_encoding {
                DecimalEncoding::Number => {}
                DecimalEncoding::String => add("json.decimal_encoding", s("string"), F),
                DecimalEncoding::Bytes => add("json.decimal_encoding", s("bytes"), F),
            }
            if j.compression == JsonCompression::Gzip {
                add("json.compression", s("gzip"), F);
            }
        }
        Some(Format::Avro(a)) => {
            add("format", s("avro"), F);
            if a.confluent_schema_registry {
                add("avro.confluent_schema_registry", OptionValue::Bool(true), F);
                registry_id = a.schema_id;
            }
            if a.raw_datums {
                add("avro.raw_datums", OptionValue::Bool(true), F);
            }
            if a.into_unstructured_json {
                add("avro.into_unstructured_json", OptionValue::Bool(true), F);
            }
            // Arroyo's responses carry the reader schema; given back without a
            // definition, it is the definition.
            if let Some(reader) = &a.reader_schema
                && schema.definition.is_none()
            {
                add("avro.schema", s(reader), "/schema/format/reader_schema");
            }
        }
        Some(Format::Protobuf(p)) => {
            add("format", s("protobuf"), F);
            if let Some(m) = &p.message_name {
                add("protobuf.message", s(m), "/schema/format/message_name");
            }
            if p.confluent_schema_registry {
                add(
                    "protobuf.confluent_schema_registry",
                    OptionValue::Bool(true),
                    F,
                );
                registry_id = p.schema_id;
            }
            if p.length_delimited {
                add("protobuf.length_delimited", OptionValue::Bool(true), F);
            }
            if p.into_unstructured_json {
                add(
                    "protobuf.into_unstructured_json",
                    OptionValue::Bool(true),
                    F,
                );
            }
            if p.compiled_schema.is_some() {
                read_only.push("/schema/format/compiled_schema".into());
            }
        }
        Some(Format::Parquet(p)) => {
            add("format", s("parquet"), F);
            let codec = match p.compression {
                ParquetCompression::Zstd => None,
                ParquetCompression::Uncompressed => Some("uncompressed"),
                ParquetCompression::Snappy => Some("snappy"),
                ParquetCompression::Gzip => Some("gzip"),
                ParquetCompression::Lz4 => Some("lz4"),
                ParquetCompression::Lz4Raw => Some("lz4_raw"),
            };
            if let Some(c) = codec {
                add("parquet.compression", s(c), F);
            }
            if let Some(bytes) = p.row_group_bytes {
                add("parquet.row_group_size", n(bytes), F);
            }
        }
        Some(Format::RawString {}) => add("format", s("raw_string"), F),
        Some(Format::RawBytes {}) => add("format", s("raw_bytes"), F),
    }
    if let Some(id) = registry_id {
        add("schema_registry.id", s(&id.to_string()), F);
    }
    if let Some(b) = schema.bad_data {
        let v = match b {
            BadData::Fail => "fail",
            BadData::Drop => "drop",
        };
        add("bad_data", s(v), "/schema/bad_data");
    }
    if let Some(Framing::Newline { max_line_length }) = schema.framing {
        add("framing", s("newline"), "/schema/framing");
        if let Some(max) = max_line_length {
            add("framing.newline.max_length", n(max), "/schema/framing");
        }
    }
    const D: &str = "/schema/definition";
    match &schema.definition {
        None => {}
        Some(SchemaDefinition::JsonSchema { schema }) => add("json.schema", s(schema), D),
        Some(SchemaDefinition::AvroSchema { schema }) => add("avro.schema", s(schema), D),
        Some(SchemaDefinition::ProtobufSchema {
            schema,
            dependencies,
        }) => {
            add("protobuf.schema", s(schema), D);
            for (path, source) in dependencies {
                add(&format!("protobuf.import.{path}"), s(source), D);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tributary_types::Diagnostic;

    #[test]
    fn the_seed_body_becomes_the_seed_statement() {
        let schema = SchemaPost::from_value(
            &json!({"format": {"json": {}}, "definition": {"jsonSchema": {"schema": "{\"type\": \"object\"}"}}, "fields": []}),
            "schema",
        )
        .unwrap();
        let s = table_statement(
            "orders",
            "kafka",
            Some("prod"),
            &json!({"topic": "orders", "type": "source", "source.offset": "latest"}),
            schema.as_ref(),
            None,
            &[],
        );
        assert_eq!(
            s.sql,
            "CREATE TABLE \"orders\" WITH (\n  connector = 'kafka',\n  connection_profile = 'prod',\n  'topic' = 'orders',\n  'type' = 'source',\n  'source.offset' = 'latest',\n  'format' = 'json',\n  'json.schema' = '{\"type\": \"object\"}'\n)"
        );
        assert!(s.ignored.is_empty());
        let at = |line| {
            s.path_of(
                &Diagnostic::error("x").with_span(tributary_types::Span::new(
                    tributary_types::Location::new(line, 3),
                    tributary_types::Location::new(line, 5),
                )),
            )
        };
        assert_eq!(at(1).as_deref(), Some("/name"));
        assert_eq!(at(3).as_deref(), Some("/connection_profile_id"));
        assert_eq!(at(4).as_deref(), Some("/config/topic"));
        assert_eq!(at(5).as_deref(), Some("/config/type"));
        assert_eq!(at(6).as_deref(), Some("/config/source.offset"));
        assert_eq!(at(7).as_deref(), Some("/schema/format"));
        assert_eq!(at(8).as_deref(), Some("/schema/definition"));
    }

    #[test]
    fn fields_become_columns_and_console_keys_are_ignored() {
        let schema = SchemaPost::from_value(
            &json!({"format": {"type": "raw_string"}, "fields": [{"name": "value", "type": "string", "required": true}, {"name": "Offset", "type": "int64", "metadata_key": "offset"}], "primary_keys": ["value"]}),
            "schema",
        )
        .unwrap();
        let s = table_statement(
            "t",
            "kafka",
            None,
            &json!({"topic": "a", "__meta": {"x": 1}, "name": "t", "event_time_field": "ts"}),
            schema.as_ref(),
            Some(&json!("connect")),
            &[],
        );
        assert!(s.sql.contains("\"value\" TEXT NOT NULL,\n  \"Offset\" BIGINT METADATA FROM 'offset',\n  PRIMARY KEY (\"value\")"), "{}", s.sql);
        assert!(s.sql.contains("'event_time_field' = 'ts'"), "{}", s.sql);
        assert!(s.sql.contains("'validate' = 'connect'"), "{}", s.sql);
        assert_eq!(s.ignored, ["/config/__meta", "/config/name"]);
    }

    #[test]
    fn names_and_values_are_quoted_whatever_they_hold() {
        let s = profile_statement(
            "a\"b; DROP",
            "kafka",
            &json!({"bootstrap_servers": "x'; --"}),
            Some(false),
        );
        assert!(
            s.sql
                .starts_with("CREATE CONNECTION PROFILE \"a\"\"b; DROP\" WITH"),
            "{}",
            s.sql
        );
        assert!(
            s.sql.contains("'bootstrap_servers' = 'x''; --'"),
            "{}",
            s.sql
        );
        assert!(s.sql.ends_with("validate = false\n)"), "{}", s.sql);
    }
}
