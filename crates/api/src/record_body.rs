//! A stored table as the REST body that recreates it (its config as written, with the
//! options Arroyo's config has no place for, its schema, generated columns and
//! watermark), and as the statement that body stands for. `arroyo push` sends the
//! body; `catalog dump` writes the statement, so two catalogs whose tables mean the same
//! dump the same text, however each table was made (SQL, REST, a pull).

use super::bodies::{ConnectionTablePost, SchemaPost};
use super::statements::{add_virtual_columns, table_parts};
use super::views::{ConnectionTableView, schema_view, with_table_options};
use serde_json::{Value, json};
use tributary_dialect::sql_writer::TableParts;
use tributary_types::ConnectionTable;
use tributary_types::column_origin::DOCUMENTS as DOCUMENT_ORIGINS;

/// The body `POST /connection_tables` takes to make `t` again; `profile` is the
/// profile's id or name where the body goes.
pub(crate) fn table_body(t: &ConnectionTable, profile: Option<String>) -> Value {
    let view = ConnectionTableView::of(t, None);
    let mut body = json!({
        "name": t.name,
        "connector": t.connector,
        "connection_profile_id": profile,
        "config": with_table_options(t.config.clone(), t, false),
        "schema": schema_view(&t.schema),
    });
    if !t.virtual_columns.is_empty() {
        body["virtual_columns"] = json!(view.virtual_columns);
    }
    if let Some(w) = &view.watermark {
        body["watermark"] = w.clone();
    }
    body
}

/// The statement `t`'s body stands for, its options in the connector's order and
/// spelled as its config holds them; `None` where the body does not carry the whole
/// table (a schema read from a registry or a document, partitioning), which is then
/// written as it was declared.
pub(crate) fn record_parts(t: &ConnectionTable, profile: Option<&str>) -> Option<TableParts> {
    let from_elsewhere = t.registry.is_some()
        || !t.partitioned_by.is_empty()
        || t.awaits_inferred_schema()
        || t.schema
            .column_origins
            .values()
            .any(|o| DOCUMENT_ORIGINS.contains(&o.as_str()));
    if from_elsewhere {
        return None;
    }
    let body = table_body(t, profile.map(str::to_string));
    let post: ConnectionTablePost = serde_json::from_value(body).ok()?;
    let mut schema = match &post.schema {
        Some(v) => SchemaPost::from_value(v, "schema").ok()?,
        None => None,
    };
    if let Some(s) = schema.as_mut()
        && s.watermark.is_none()
    {
        s.watermark = post.watermark.clone();
    }
    let mut read_only = Vec::new();
    let (mut parts, _) = table_parts(
        &t.connector,
        profile,
        &post.config,
        schema.as_ref(),
        None,
        &mut read_only,
    );
    add_virtual_columns(&mut parts, &post.virtual_columns);
    Some(parts)
}
