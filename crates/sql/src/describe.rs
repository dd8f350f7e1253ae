//! Result sets of SHOW and DESCRIBE statements, rendered from the catalog and the
//! connector registry. Secrets are redacted here: sensitive options print as `********`,
//! and every cell of every result set built here passes `redact_text`, which hides
//! credentials inside other values (URL userinfo, `password=...` pairs).

use datafusion::arrow::array::RecordBatch;
use tributary_catalog::CatalogStore;
use tributary_connectors::{describe, registry};
use tributary_exec::result_text::text_batch;
use tributary_exec::windows::TIMESTAMP_COLUMN;
use tributary_types::{ConnectionProfile, ConnectionTable, FieldType};

fn yes(b: bool) -> String {
    if b { "yes".into() } else { "no".into() }
}

/// `SHOW TABLES`.
pub fn show_tables(store: &dyn CatalogStore, tables: &[ConnectionTable]) -> RecordBatch {
    let rows = tables
        .iter()
        .map(|t| {
            let profile = t
                .profile
                .as_ref()
                .and_then(|id| store.profile(id).ok().flatten())
                .map(|p| p.name)
                .unwrap_or_default();
            vec![
                t.name.clone(),
                t.connector.clone(),
                t.connection_type.to_string(),
                profile,
                t.schema
                    .format
                    .as_ref()
                    .map(|f| f.sql_name().to_string())
                    .unwrap_or_default(),
                t.description.clone(),
            ]
        })
        .collect();
    text_batch(
        &[
            "name",
            "connector",
            "type",
            "profile",
            "format",
            "description",
        ],
        rows,
    )
}

/// `SHOW CONNECTION PROFILES`.
pub fn show_profiles(store: &dyn CatalogStore, profiles: &[ConnectionProfile]) -> RecordBatch {
    let rows = profiles
        .iter()
        .map(|p| {
            let used = store.dependents(&p.id).map(|d| d.len()).unwrap_or(0);
            let (tested, result, latency) = match &p.last_test {
                Some(t) => (
                    timestamp(t.at),
                    match &t.code {
                        Some(code) => format!("{} ({code})", t.result),
                        None => t.result.clone(),
                    },
                    t.latency_ms.to_string(),
                ),
                None => (String::new(), "never tested".into(), String::new()),
            };
            vec![
                p.name.clone(),
                p.id.to_string(),
                p.connector.clone(),
                p.description.clone(),
                used.to_string(),
                tested,
                result,
                latency,
            ]
        })
        .collect();
    text_batch(
        &[
            "name",
            "id",
            "connector",
            "description",
            "tables",
            "last_tested",
            "last_result",
            "latency_ms",
        ],
        rows,
    )
}

/// Microseconds since the epoch as `2026-11-30 01:02:03 UTC`.
fn timestamp(micros: i64) -> String {
    datafusion::arrow::temporal_conversions::timestamp_us_to_datetime(micros)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| micros.to_string())
}

/// `SHOW CONNECTORS`.
pub fn show_connectors() -> RecordBatch {
    let rows = registry()
        .iter()
        .map(|e| {
            let c = e.connector;
            let r = c.roles();
            vec![
                c.id().into(),
                c.name().into(),
                yes(r.source),
                yes(r.sink),
                yes(r.lookup),
                yes(e.profile_schema.is_some()),
                yes(c.supports_testing()),
                c.description().into(),
            ]
        })
        .collect();
    text_batch(
        &[
            "id",
            "name",
            "source",
            "sink",
            "lookup",
            "profile",
            "testing",
            "description",
        ],
        rows,
    )
}

/// `DESCRIBE CONNECTOR x`: every option, then the metadata keys.
pub fn describe_connector(entry: &tributary_connectors::RegisteredConnector) -> RecordBatch {
    let mut rows: Vec<Vec<String>> = describe::option_docs(entry)
        .into_iter()
        .map(|d| {
            let mut description = d.description.clone();
            if let Some(c) = &d.condition {
                description = format!("{description} [when {c}]");
            }
            if d.env_allowed {
                description = format!("{description} [{{{{ VAR }}}} allowed]");
            }
            vec![
                d.scope.as_str().into(),
                d.key,
                d.json_name,
                d.value_type,
                d.default.unwrap_or_default(),
                d.allowed.join(", "),
                yes(d.required),
                yes(d.sensitive),
                description,
            ]
        })
        .collect();
    for m in entry.connector.metadata_keys() {
        rows.push(vec![
            "metadata".into(),
            m.key.into(),
            String::new(),
            m.sql_type.field_type().to_string(),
            String::new(),
            String::new(),
            "no".into(),
            "no".into(),
            m.description.into(),
        ]);
    }
    text_batch(
        &[
            "scope",
            "option",
            "json_name",
            "type",
            "default",
            "allowed",
            "required",
            "sensitive",
            "description",
        ],
        rows,
    )
}

/// Where a column of `t` came from: declared, a schema document, the connector, the
/// format, a sink's first INSERT, metadata or an expression.
fn origin(t: &ConnectionTable, field: &tributary_types::SourceField) -> String {
    if field.metadata_key.is_some() {
        return "metadata".into();
    }
    if let Some(o) = t.schema.column_origins.get(&field.name) {
        return o.clone();
    }
    if t.schema.inferred == Some(true) {
        return "first INSERT".into();
    }
    "declared".into()
}

/// `DESCRIBE table`: one row per column.
pub fn describe_table(t: &ConnectionTable) -> RecordBatch {
    let mut rows: Vec<(usize, Vec<String>)> = Vec::new();
    let positions: Vec<usize> = t.virtual_columns.iter().map(|v| v.position).collect();
    let mut next = 0;
    for f in &t.schema.fields {
        while positions.contains(&next) {
            next += 1;
        }
        let mut extra = match &f.metadata_key {
            Some(k) => format!("METADATA FROM '{k}'"),
            None => String::new(),
        };
        watermark_note(t, &f.name, &mut extra);
        if let Some(note) = t.schema.column_notes.get(&f.name) {
            if !extra.is_empty() {
                extra.push_str("; ");
            }
            extra.push_str(note);
        }
        rows.push((
            next,
            column_row(
                &f.name,
                &f.field_type,
                !f.required,
                t.schema.primary_keys.contains(&f.name),
                extra,
                origin(t, f),
            ),
        ));
        next += 1;
    }
    for v in &t.virtual_columns {
        let mut extra = format!(
            "GENERATED ALWAYS AS ({}){}",
            v.expression,
            if v.stored { " STORED" } else { "" }
        );
        watermark_note(t, &v.name, &mut extra);
        rows.push((
            v.position,
            column_row(
                &v.name,
                &v.field_type,
                !v.required,
                false,
                extra,
                "virtual".into(),
            ),
        ));
    }
    rows.sort_by_key(|(p, _)| *p);
    let own_timestamp = t.schema.fields.iter().any(|f| f.name == TIMESTAMP_COLUMN);
    if let Some(time) = event_time_of(t).filter(|_| !own_timestamp) {
        let extra = match &time.declared {
            Some(column) => format!("hidden from SELECT *; the event time: column '{column}'"),
            None => format!(
                "hidden from SELECT *; the event time: {}; WATERMARK AS {}",
                time.source, time.watermark
            ),
        };
        let ty = FieldType::Timestamp {
            unit: tributary_types::TimeUnit::Nanosecond,
        };
        rows.push((
            usize::MAX,
            column_row(
                TIMESTAMP_COLUMN,
                &ty,
                false,
                false,
                extra,
                "event time".into(),
            ),
        ));
    }
    text_batch(
        &[
            "column",
            "type",
            "nullable",
            "primary_key",
            "extra",
            "origin",
        ],
        rows.into_iter().map(|(_, r)| r).collect(),
    )
}

/// A source table's event time: what `DESCRIBE` shows on its `_timestamp` row and REST
/// answers as `event_time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventTimeOf {
    /// The column it is: `_timestamp`, or the WATERMARK FOR column.
    pub column: String,
    /// The declared WATERMARK FOR column, when there is one.
    pub declared: Option<String>,
    /// Where the time comes from: the column, or the connector's phrase.
    pub source: String,
    /// The watermark: the declared expression, or Arroyo's `_timestamp - 1 second`.
    pub watermark: String,
}

/// The event time of `t`'s rows; `None` for sinks and lookup tables, which have none, and
/// for a table whose own column is named `_timestamp` and declares no watermark.
pub fn event_time_of(t: &ConnectionTable) -> Option<EventTimeOf> {
    if t.connection_type != tributary_types::ConnectionType::Source {
        return None;
    }
    if let Some(column) = &t.event_time_field {
        let watermark = match &t.watermark {
            Some(w) => w.expression.clone().unwrap_or_else(|| column.clone()),
            None => column.clone(),
        };
        return Some(EventTimeOf {
            column: column.clone(),
            declared: Some(column.clone()),
            source: format!("column '{column}'"),
            watermark,
        });
    }
    if t.schema.fields.iter().any(|f| f.name == TIMESTAMP_COLUMN)
        || t.virtual_columns.iter().any(|v| v.name == TIMESTAMP_COLUMN)
    {
        return None;
    }
    let source = registry()
        .get(&t.connector)
        .map_or("the time each record is read", |e| {
            e.connector.record_time(&t.config)
        });
    Some(EventTimeOf {
        column: TIMESTAMP_COLUMN.into(),
        declared: None,
        source: source.into(),
        watermark: format!("{TIMESTAMP_COLUMN} - INTERVAL '1' SECOND"),
    })
}

fn watermark_note(t: &ConnectionTable, column: &str, extra: &mut String) {
    if let Some(w) = &t.watermark
        && w.column == column
    {
        let note = match &w.expression {
            Some(e) => format!("WATERMARK AS {e}"),
            None => "WATERMARK".into(),
        };
        *extra = if extra.is_empty() {
            note
        } else {
            format!("{extra}; {note}")
        };
    }
}

fn column_row(
    name: &str,
    ty: &FieldType,
    nullable: bool,
    pk: bool,
    extra: String,
    origin: String,
) -> Vec<String> {
    vec![
        name.into(),
        ty.sql_name(),
        yes(nullable),
        yes(pk),
        extra,
        origin,
    ]
}

/// `DESCRIBE CONNECTION PROFILE p`: its properties and options, secrets redacted.
pub fn describe_profile(store: &dyn CatalogStore, p: &ConnectionProfile) -> RecordBatch {
    let mut used: Vec<String> = store
        .dependents(&p.id)
        .unwrap_or_default()
        .iter()
        .filter_map(|id| store.table(id).ok().flatten().map(|t| t.name))
        .collect();
    used.sort();
    let mut rows = vec![
        vec!["name".into(), p.name.clone()],
        vec!["id".into(), p.id.to_string()],
        vec!["connector".into(), p.connector.clone()],
        vec!["description".into(), p.description.clone()],
        vec!["used by".into(), used.join(", ")],
    ];
    for o in &p.options {
        let value = o.printable_value().as_text();
        rows.push(vec![format!("option {}", o.key), value]);
    }
    text_batch(&["property", "value"], rows)
}

/// `SHOW CREATE ...`: one row with the statement.
pub fn create_statement(sql: String) -> RecordBatch {
    text_batch(&["create_statement"], vec![vec![sql]])
}
