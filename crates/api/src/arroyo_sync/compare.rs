//! Whether an object here and its namesake there are the same, and secrets that arrived
//! redacted. Configs are compared with secrets redacted on both sides: a Tributary API
//! never shows them, so only what both sides can see is compared.

use super::client::RemoteTable;
use crate::dump::secret_variable;
use serde_json::Value;
use tributary_connectors::{ConfigKind, redact_config};
use tributary_types::{ConnectionTable, REDACTED};

/// Deepest a config is walked for redacted secrets (configs nest a few levels).
const MAX_DEPTH: usize = 64;

/// What is compared of a table.
#[derive(Debug, Clone)]
pub(crate) struct TableShape<'a> {
    pub(crate) connector: &'a str,
    /// The profile's name, if any.
    pub(crate) profile: Option<&'a str>,
    pub(crate) config: &'a Value,
    /// The schema in the API's shape.
    pub(crate) schema: &'a Value,
    /// Generated columns, as `name = expression` (Arroyo's API shows none).
    pub(crate) generated: Vec<String>,
    /// The watermark, as `column AS expression` (likewise).
    pub(crate) watermark: Option<String>,
}

/// A table's generated columns and watermark as compared, here.
pub(crate) fn extras_here(t: &ConnectionTable) -> (Vec<String>, Option<String>) {
    extras(
        t.virtual_columns.iter().map(|v| (&v.name, &v.expression)),
        t.watermark.as_ref(),
    )
}

/// A table's generated columns and watermark as compared, as the other side shows them.
pub(crate) fn extras_there(t: &RemoteTable) -> (Vec<String>, Option<String>) {
    extras(
        t.virtual_columns.iter().map(|v| (&v.name, &v.expression)),
        t.watermark.as_ref(),
    )
}

/// Generated columns as `name = expression`, and the watermark as `column AS expression`.
fn extras<'a>(
    generated: impl Iterator<Item = (&'a String, &'a String)>,
    watermark: Option<&tributary_types::Watermark>,
) -> (Vec<String>, Option<String>) {
    let generated = generated.map(|(n, e)| format!("{n} = {e}")).collect();
    let watermark = watermark.map(|w| {
        format!(
            "{} AS {}",
            w.column,
            w.expression.as_deref().unwrap_or(&w.column)
        )
    });
    (generated, watermark)
}

/// The parts of two profiles that differ.
pub(crate) fn profile_differences(
    (here_connector, here_config): (&str, &Value),
    (there_connector, there_config): (&str, &Value),
) -> Vec<&'static str> {
    let mut parts = Vec::new();
    if here_connector != there_connector {
        parts.push("connector");
    } else if !same_visible(
        &redact_config(here_connector, ConfigKind::Profile, here_config),
        &redact_config(there_connector, ConfigKind::Profile, there_config),
        0,
    ) {
        parts.push("config");
    }
    parts
}

/// The parts of two tables that differ.
pub(crate) fn table_differences(
    here: &TableShape<'_>,
    there: &TableShape<'_>,
) -> Vec<&'static str> {
    let mut parts = Vec::new();
    if here.connector != there.connector {
        parts.push("connector");
        return parts;
    }
    let lower = |p: Option<&str>| p.map(str::to_lowercase);
    if lower(here.profile) != lower(there.profile) {
        parts.push("profile");
    }
    if !same_visible(
        &redact_config(here.connector, ConfigKind::Table, here.config),
        &redact_config(there.connector, ConfigKind::Table, there.config),
        0,
    ) {
        parts.push("config");
    }
    if schema_essence(here.schema) != schema_essence(there.schema) {
        parts.push("schema");
    }
    if here.generated != there.generated {
        parts.push("generated columns");
    }
    if here.watermark != there.watermark {
        parts.push("watermark");
    }
    parts
}

/// Whether two redacted configs agree wherever both show a value: a secret one side
/// hides (`********`) matches whatever the other holds there, even a `{{ VAR }}`
/// reference, since what it hides cannot be compared.
fn same_visible(a: &Value, b: &Value, depth: usize) -> bool {
    let hidden = |v: &Value| v.as_str() == Some(REDACTED);
    if hidden(a) || hidden(b) {
        return true;
    }
    if depth >= MAX_DEPTH {
        return a == b;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_visible(v, w, depth + 1)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_visible(v, w, depth + 1))
        }
        _ => a == b,
    }
}

/// A schema without what an API derives from it (each field's Arrow type, empty
/// lists), so that a schema written and read back compares equal.
fn schema_essence(schema: &Value) -> Value {
    fn strip(v: &Value, depth: usize) -> Value {
        match v {
            Value::Object(map) if depth < MAX_DEPTH => Value::Object(
                map.iter()
                    .filter(|(k, v)| {
                        !matches!(k.as_str(), "arrow_type" | "arrowType")
                            && !v.is_null()
                            && v.as_array().is_none_or(|a| !a.is_empty())
                    })
                    .map(|(k, v)| (k.clone(), strip(v, depth + 1)))
                    .collect(),
            ),
            Value::Array(items) if depth < MAX_DEPTH => {
                Value::Array(items.iter().map(|i| strip(i, depth + 1)).collect())
            }
            other => other.clone(),
        }
    }
    strip(schema, 0)
}

/// Replace every secret that arrived redacted in `config` by a reference to the
/// variable `TRIBUTARY_SECRET_<OWNER>_<KEY>`; the variables, for the report.
pub(crate) fn reference_redacted(owner: &str, config: &mut Value) -> Vec<String> {
    fn walk(owner: &str, key: &str, v: &mut Value, depth: usize, found: &mut Vec<String>) {
        match v {
            Value::String(s) if s == REDACTED => {
                let name = secret_variable(owner, key);
                *s = format!("{{{{ {name} }}}}");
                if !found.contains(&name) {
                    found.push(name);
                }
            }
            Value::Object(map) if depth < MAX_DEPTH => {
                for (k, child) in map.iter_mut() {
                    walk(owner, k, child, depth + 1, found);
                }
            }
            Value::Array(items) if depth < MAX_DEPTH => {
                for child in items.iter_mut() {
                    walk(owner, key, child, depth + 1, found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(owner, "", config, 0, &mut found);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacted_secrets_become_references_named_after_their_owner_and_key() {
        let mut config = json!({"address": "redis://h", "password": REDACTED,
            "auth": {"token": REDACTED, "kept": "{{ MINE }}"}});
        let found = reference_redacted("cache-prod", &mut config);
        assert_eq!(
            found,
            [
                "TRIBUTARY_SECRET_CACHE_PROD_PASSWORD",
                "TRIBUTARY_SECRET_CACHE_PROD_TOKEN"
            ]
        );
        assert_eq!(
            config["password"],
            "{{ TRIBUTARY_SECRET_CACHE_PROD_PASSWORD }}"
        );
        assert_eq!(config["auth"]["kept"], "{{ MINE }}");
    }

    #[test]
    fn configs_compare_without_their_secrets_and_schemas_without_derived_types() {
        let here = json!({"address": "redis://h", "password": "in-clear"});
        let there = json!({"address": "redis://h", "password": REDACTED});
        assert!(profile_differences(("redis", &here), ("redis", &there)).is_empty());
        let referenced = json!({"address": "redis://h", "password": "{{ PW }}"});
        assert!(profile_differences(("redis", &referenced), ("redis", &there)).is_empty());
        let moved = json!({"address": "redis://other", "password": REDACTED});
        assert_eq!(
            profile_differences(("redis", &here), ("redis", &moved)),
            ["config"]
        );
        assert_eq!(
            profile_differences(("redis", &here), ("kafka", &here)),
            ["connector"]
        );

        let schema_a =
            json!({"fields": [{"field_name": "id", "arrow_type": "Int64"}], "primary_keys": []});
        let schema_b = json!({"fields": [{"field_name": "id"}]});
        let schema_c = json!({"fields": [{"field_name": "id2"}]});
        let config = json!({"topic": "t"});
        let shape = |profile, schema| TableShape {
            connector: "kafka",
            profile,
            config: &config,
            schema,
            generated: vec![],
            watermark: None,
        };
        assert!(
            table_differences(&shape(Some("K"), &schema_a), &shape(Some("k"), &schema_b))
                .is_empty()
        );
        assert_eq!(
            table_differences(&shape(Some("k"), &schema_a), &shape(None, &schema_c)),
            ["profile", "schema"]
        );
    }
}
