//! The documents the catalog persists: connection profiles and connection tables.
//!
//! Every record carries `format_version`, so a newer binary can read (and migrate) an older
//! catalog, and an older binary can refuse a newer one instead of misreading it.

use crate::field::{FieldType, quote_ident};
use crate::ids::{ProfileId, TableId};
use crate::schema::{ConnectionSchema, ConnectionType};
use crate::secret::{REDACTED, printable_secret, redact_text};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The record format this binary writes. Bump it (and add a migration) when a record
/// changes incompatibly.
pub const CURRENT_FORMAT_VERSION: u32 = 1;

/// A WITH-option value as written, kept for `SHOW CREATE` and `DESCRIBE`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum OptionValue {
    /// `'text'`.
    String(String),
    /// `42`, `1.5` (kept as written).
    Number(String),
    /// `true` / `false`.
    Bool(bool),
    /// `INTERVAL '5' SECOND` (kept as written).
    Interval(String),
    /// A bare identifier, `event_time`.
    Identifier(String),
    /// `[a, 'b']`.
    Array(Vec<OptionValue>),
}

impl OptionValue {
    /// The value as plain text (strings unquoted), used for conversions.
    pub fn as_text(&self) -> String {
        match self {
            OptionValue::String(s)
            | OptionValue::Number(s)
            | OptionValue::Interval(s)
            | OptionValue::Identifier(s) => s.clone(),
            OptionValue::Bool(b) => b.to_string(),
            OptionValue::Array(items) => items
                .iter()
                .map(OptionValue::as_text)
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

impl fmt::Display for OptionValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionValue::String(s) => write!(f, "'{}'", s.replace('\'', "''")),
            OptionValue::Number(s) | OptionValue::Interval(s) | OptionValue::Identifier(s) => {
                f.write_str(s)
            }
            OptionValue::Bool(b) => write!(f, "{b}"),
            OptionValue::Array(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// One WITH option of a stored profile or table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionEntry {
    /// The SQL key as written (`'source.offset'`).
    pub key: String,
    /// The value as written.
    pub value: OptionValue,
    /// Whether the value is a secret and must be redacted when printed.
    #[serde(default)]
    pub sensitive: bool,
}

impl OptionEntry {
    /// Teach the redaction path the secrets this option holds (see
    /// [`crate::remember_secrets_in`]).
    pub fn remember_secrets(&self) {
        fn walk(sensitive: bool, value: &OptionValue) {
            match value {
                OptionValue::String(s) | OptionValue::Identifier(s) => {
                    crate::remember_secrets_in(sensitive, s)
                }
                OptionValue::Array(items) => items.iter().for_each(|i| walk(sensitive, i)),
                _ => {}
            }
        }
        walk(self.sensitive, &self.value);
    }

    /// The option as SQL, `key = value`, with secrets redacted.
    pub fn to_sql_redacted(&self) -> String {
        let key = if self
            .key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            self.key.clone()
        } else {
            format!("'{}'", self.key)
        };
        format!("{key} = {}", self.printable_value())
    }

    /// The value as SQL, safe to print: a secret as `'********'`, and credentials inside
    /// other values (URL userinfo, `password=...` pairs) redacted.
    pub fn printable_value(&self) -> OptionValue {
        if self.sensitive {
            let shown = match &self.value {
                OptionValue::String(s) => printable_secret(s),
                _ => REDACTED,
            };
            return OptionValue::String(shown.into());
        }
        self.value.redacted()
    }
}

impl OptionValue {
    /// The value with credentials inside its text redacted (see [`crate::redact_text`]).
    pub fn redacted(&self) -> OptionValue {
        match self {
            OptionValue::String(s) => OptionValue::String(redact_text(s).into_owned()),
            OptionValue::Identifier(s) => OptionValue::Identifier(redact_text(s).into_owned()),
            OptionValue::Array(items) => {
                OptionValue::Array(items.iter().map(OptionValue::redacted).collect())
            }
            other => other.clone(),
        }
    }
}

/// A reusable set of connection settings (servers, credentials).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionProfile {
    /// Record format version.
    pub format_version: u32,
    /// Public id.
    pub id: ProfileId,
    /// Name, unique case-insensitively.
    pub name: String,
    /// The connector id (`kafka`).
    pub connector: String,
    /// The validated JSON config. Secrets keep their `{{ VAR }}` references.
    pub config: serde_json::Value,
    /// The WITH options as written.
    pub options: Vec<OptionEntry>,
    /// A one-line description (for Kafka, its bootstrap servers).
    #[serde(default)]
    pub description: String,
    /// Creation time, microseconds since the epoch.
    pub created_at: i64,
    /// Last change, microseconds since the epoch.
    pub updated_at: i64,
    /// The last connection test, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_test: Option<LastTest>,
}

/// A column computed from other columns: `GENERATED ALWAYS AS (expr) [STORED]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VirtualColumn {
    /// Column name.
    pub name: String,
    /// The expression as SQL text.
    pub expression: String,
    /// Its type, as planned.
    #[serde(flatten)]
    pub field_type: FieldType,
    /// Whether the expression can never be NULL.
    #[serde(default)]
    pub required: bool,
    /// `STORED` was written.
    #[serde(default)]
    pub stored: bool,
    /// Position among all columns (physical, metadata and virtual) as declared.
    pub position: usize,
}

/// `WATERMARK FOR column [AS expression]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Watermark {
    /// The event-time column.
    pub column: String,
    /// The watermark expression as SQL text, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
}

/// The outcome of a profile's last connection test, shown by `SHOW CONNECTION PROFILES`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastTest {
    /// When it ran, in microseconds since the epoch.
    pub at: i64,
    /// `passed`, `failed` or `skipped` (not testable from here).
    pub result: String,
    /// The failure code, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// How long the test took, in milliseconds.
    pub latency_ms: u64,
}

/// Where a table's schema came from in a schema registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrySource {
    /// The subject, when fetched by subject (not when pinned by id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The version within the subject, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The schema id, which registry-framed messages carry.
    pub id: u32,
}

impl fmt::Display for RegistrySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.subject {
            write!(f, "subject '{s}', ")?;
        }
        if let Some(v) = self.version {
            write!(f, "version {v}, ")?;
        }
        write!(f, "schema id {}", self.id)
    }
}

/// A named external source, sink or lookup table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionTable {
    /// Record format version.
    pub format_version: u32,
    /// Public id.
    pub id: TableId,
    /// Name, unique case-insensitively.
    pub name: String,
    /// The connector id.
    pub connector: String,
    /// The profile it uses, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileId>,
    /// Connection settings given inline in the table's WITH clause instead of a profile
    /// (the profile-shaped JSON config), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inline_profile: Option<serde_json::Value>,
    /// Source, sink or lookup.
    pub connection_type: ConnectionType,
    /// The validated table JSON config.
    pub config: serde_json::Value,
    /// Fields, format and policies.
    pub schema: ConnectionSchema,
    /// The table's own WITH options as written.
    pub options: Vec<OptionEntry>,
    /// Computed columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub virtual_columns: Vec<VirtualColumn>,
    /// The watermark declaration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watermark: Option<Watermark>,
    /// The event-time column (from `WATERMARK FOR` or `event_time_field`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time_field: Option<String>,
    /// Idleness timeout in microseconds; `None` is the 5-minute default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_micros: Option<i64>,
    /// `PARTITIONED BY` expressions as SQL text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitioned_by: Vec<String>,
    /// Created with `CREATE TEMPORARY TABLE`.
    #[serde(default)]
    pub temporary: bool,
    /// The schema registry entry the columns were expanded from, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<RegistrySource>,
    /// A one-line description, `KafkaSource<orders>`.
    #[serde(default)]
    pub description: String,
    /// Creation time, microseconds since the epoch.
    pub created_at: i64,
    /// Last change, microseconds since the epoch.
    pub updated_at: i64,
    /// The last connection test (`TEST TABLE`, or a create with `validate`), when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_test: Option<LastTest>,
}

impl ConnectionTable {
    /// Teach the redaction path the secrets its options hold.
    pub fn remember_secrets(&self) {
        self.options.iter().for_each(OptionEntry::remember_secrets);
    }

    /// Whether its messages are changes to rows (Debezium) rather than rows appended.
    pub fn is_updating(&self) -> bool {
        self.schema.format.as_ref().is_some_and(|f| f.is_updating())
    }

    /// A table with only its identity and role: no profile, an empty config, no columns,
    /// options or watermark, created at time 0. For tests and tools that build records by
    /// hand; DDL builds every field from the statement.
    pub fn new(
        id: TableId,
        name: impl Into<String>,
        connector: impl Into<String>,
        connection_type: ConnectionType,
    ) -> Self {
        Self {
            format_version: CURRENT_FORMAT_VERSION,
            id,
            name: name.into(),
            connector: connector.into(),
            profile: None,
            inline_profile: None,
            connection_type,
            config: serde_json::json!({}),
            schema: ConnectionSchema::default(),
            options: vec![],
            virtual_columns: vec![],
            watermark: None,
            event_time_field: None,
            idle_micros: None,
            partitioned_by: vec![],
            temporary: false,
            registry: None,
            description: String::new(),
            created_at: 0,
            updated_at: 0,
            last_test: None,
        }
    }

    /// Whether the sink's columns still await its first `INSERT INTO`.
    pub fn awaits_inferred_schema(&self) -> bool {
        self.schema.inferred == Some(true)
            && self.schema.fields.is_empty()
            && self.virtual_columns.is_empty()
    }

    /// The table's `CREATE` statement, regenerated from the stored definition, with secrets
    /// redacted and the profile referenced by `profile_name`.
    pub fn to_create_sql(&self, profile_name: Option<&str>) -> String {
        let mut columns: Vec<(usize, String)> = Vec::new();
        let virtual_positions: Vec<usize> =
            self.virtual_columns.iter().map(|v| v.position).collect();
        let mut next = 0usize;
        let inferred = self.schema.inferred == Some(true);
        // What a schema document gave comes from it again through `*`; what a connector
        // supplies (impulse, nexmark) is left out: the statement reads back either way
        // (nested `NOT NULL` fields have no SQL spelling).
        let origin = |name: &str| self.schema.column_origins.get(name).map(String::as_str);
        let mut star = false;
        if !inferred || !self.virtual_columns.is_empty() {
            for f in &self.schema.fields {
                while virtual_positions.contains(&next) {
                    next += 1;
                }
                match origin(&f.name) {
                    Some(crate::schema::column_origin::CONNECTOR) => {
                        next += 1;
                        continue;
                    }
                    Some(o) if crate::schema::column_origin::DOCUMENTS.contains(&o) => {
                        if !star {
                            star = true;
                            columns.push((next, "*".into()));
                        }
                        next += 1;
                        continue;
                    }
                    _ => {}
                }
                let mut line = format!("{} {}", quote_ident(&f.name), f.field_type.sql_name());
                if f.required {
                    line.push_str(" NOT NULL");
                }
                if let Some(key) = &f.metadata_key {
                    line.push_str(&format!(" METADATA FROM '{}'", key.replace('\'', "''")));
                }
                columns.push((next, line));
                next += 1;
            }
        }
        for v in &self.virtual_columns {
            let stored = if v.stored { " STORED" } else { "" };
            columns.push((
                v.position,
                format!(
                    "{} {} GENERATED ALWAYS AS ({}){stored}",
                    quote_ident(&v.name),
                    v.field_type.sql_name(),
                    v.expression
                ),
            ));
        }
        columns.sort_by_key(|(p, _)| *p);
        let mut lines: Vec<String> = columns.into_iter().map(|(_, l)| l).collect();
        if let Some(w) = &self.watermark {
            match &w.expression {
                Some(e) => lines.push(format!("WATERMARK FOR {} AS {e}", quote_ident(&w.column))),
                None => lines.push(format!("WATERMARK FOR {}", quote_ident(&w.column))),
            }
        }
        if !self.schema.primary_keys.is_empty() {
            let keys: Vec<String> = self
                .schema
                .primary_keys
                .iter()
                .map(|k| quote_ident(k))
                .collect();
            lines.push(format!("PRIMARY KEY ({})", keys.join(", ")));
        }
        let mut options = vec![format!("connector = '{}'", self.connector)];
        if let Some(p) = profile_name {
            options.push(format!("connection_profile = '{p}'"));
        }
        options.extend(
            self.options
                .iter()
                .filter(|o| o.key != "connector" && o.key != "connection_profile")
                .map(OptionEntry::to_sql_redacted),
        );
        // A schema fetched from a registry is pinned by id, so the statement recreates
        // the same table even after the subject moves on.
        if let Some(r) = &self.registry
            && !self
                .options
                .iter()
                .any(|o| o.key == "schema_registry.id" || o.key == "schema_registry.version")
        {
            options.push(format!("'schema_registry.id' = '{}'", r.id));
        }
        let temp = if self.temporary { "TEMPORARY " } else { "" };
        let mut sql = format!("CREATE {temp}TABLE {}", quote_ident(&self.name));
        if !lines.is_empty() {
            sql.push_str(&format!(" (\n    {}\n)", lines.join(",\n    ")));
        }
        sql.push_str(&format!(" WITH (\n    {}\n)", options.join(",\n    ")));
        if !self.partitioned_by.is_empty() {
            sql.push_str(&format!(
                " PARTITIONED BY ({})",
                self.partitioned_by.join(", ")
            ));
        }
        sql.push(';');
        sql
    }
}

impl ConnectionProfile {
    /// Teach the redaction path the secrets its options hold.
    pub fn remember_secrets(&self) {
        self.options.iter().for_each(OptionEntry::remember_secrets);
    }

    /// The profile's `CREATE` statement with secrets redacted.
    pub fn to_create_sql(&self) -> String {
        let mut options = vec![format!("connector = '{}'", self.connector)];
        options.extend(
            self.options
                .iter()
                .filter(|o| o.key != "connector")
                .map(OptionEntry::to_sql_redacted),
        );
        format!(
            "CREATE CONNECTION PROFILE {} WITH (\n    {}\n);",
            quote_ident(&self.name),
            options.join(",\n    ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::SourceField;

    #[test]
    fn option_rendering_redacts_secrets_and_quotes_dotted_keys() {
        let e = OptionEntry {
            key: "auth.password".into(),
            value: OptionValue::String("hunter2".into()),
            sensitive: true,
        };
        assert_eq!(e.to_sql_redacted(), "'auth.password' = '********'");
        let e = OptionEntry {
            key: "topic".into(),
            value: OptionValue::String("it's".into()),
            sensitive: false,
        };
        assert_eq!(e.to_sql_redacted(), "topic = 'it''s'");
        let arr = OptionValue::Array(vec![
            OptionValue::Identifier("a".into()),
            OptionValue::String("b".into()),
        ]);
        assert_eq!(arr.to_string(), "[a, 'b']");
        assert_eq!(arr.as_text(), "a,b");
    }

    #[test]
    fn create_sql_interleaves_virtual_columns() {
        let table = ConnectionTable {
            schema: ConnectionSchema {
                fields: vec![
                    SourceField::required("a", FieldType::Int64),
                    SourceField::new("b", FieldType::String),
                ],
                ..Default::default()
            },
            virtual_columns: vec![VirtualColumn {
                name: "c".into(),
                expression: "a + 1".into(),
                field_type: FieldType::Int64,
                required: true,
                stored: false,
                position: 1,
            }],
            ..ConnectionTable::new(
                TableId::from_suffix("0000000000"),
                "t",
                "kafka",
                ConnectionType::Source,
            )
        };
        let sql = table.to_create_sql(Some("prod"));
        assert_eq!(
            sql,
            "CREATE TABLE t (\n    a BIGINT NOT NULL,\n    c BIGINT GENERATED ALWAYS AS (a + 1),\n    b TEXT\n) WITH (\n    connector = 'kafka',\n    connection_profile = 'prod'\n);"
        );
    }
}
