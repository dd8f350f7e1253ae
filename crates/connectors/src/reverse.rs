//! The option engine run backwards: a connector's JSON config (as Arroyo's REST API and
//! console send it) into the WITH options that produce it, so that REST requests go
//! through the same pipeline as SQL. Keys written SQL-style at the top level of the config
//! (`"source.offset": "latest"`, the seed's shape) are taken as options directly; selectors
//! (`type = 'source'`) are inferred from which variant's settings are present; keys no
//! option produces (a console's `__meta`, its form's `name`) are returned as ignored.

use crate::spec::{OptionSpec, Target, ValueKind};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tributary_types::OptionValue;

/// What a config became.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigOptions {
    /// The options, in the order the connector declares them.
    pub options: Vec<(String, OptionValue)>,
    /// JSON paths of the config that no option produces (`/__meta`, `/name`): ignored.
    pub ignored: Vec<String>,
    /// Options set to `null` (a PATCH removing them).
    pub removed: Vec<String>,
    /// Where in the config each option came from (a JSON Pointer), so a diagnostic about
    /// the option can name the field.
    pub origins: BTreeMap<String, String>,
    /// For an ignored path whose last key is close to an option (a misspelling), that
    /// option's name: SQL key or JSON field, in the style the path used.
    pub suggestions: BTreeMap<String, String>,
}

impl ConfigOptions {
    /// The JSON Pointer of the config field option `key` came from, when known.
    pub fn origin(&self, key: &str) -> Option<&str> {
        self.origins.get(key).map(String::as_str)
    }
}

/// Whether the value given for `spec`'s key came from `spec`'s own place: a key that two
/// variants place differently (NATS's `subject`) speaks for the variant whose pointer
/// held it. A value given SQL-style at the top level speaks for every variant.
fn supplied_by(spec: &OptionSpec, origins: &BTreeMap<String, String>) -> bool {
    match (&spec.target, origins.get(spec.key)) {
        (Target::Pointer(pointer), Some(origin)) if *origin != format!("/{}", escape(spec.key)) => {
            origin == pointer
        }
        _ => true,
    }
}

/// The WITH options a JSON `config` stands for, by the connector's `specs`.
pub fn options_from_config(specs: &[OptionSpec], config: &Value) -> ConfigOptions {
    let mut out = ConfigOptions::default();
    let Some(top) = config.as_object() else {
        if !config.is_null() {
            out.ignored.push(String::new());
        }
        return out;
    };
    // Pointers (and containers) something consumed, to tell ignored keys apart.
    let mut consumed: BTreeSet<String> = BTreeSet::new();
    let mut given: BTreeMap<String, OptionValue> = BTreeMap::new();
    // 1. SQL-style keys at the top level.
    for (key, value) in top {
        let known = specs.iter().any(|s| {
            s.key == key
                || s.deprecated_aliases.contains(&key.as_str())
                || (matches!(s.target, Target::Prefixed { .. } | Target::Indexed { .. })
                    && key.starts_with(s.key))
        });
        let sql_style = known && (key.contains('.') || !value.is_object());
        if sql_style && value.is_null() {
            out.removed.push(key.clone());
            consumed.insert(format!("/{}", escape(key)));
        } else if sql_style
            && let Some(v) = option_value(
                value,
                specs
                    .iter()
                    .find(|s| s.key == key && s.kind == ValueKind::Field)
                    .map_or(ValueKind::Auto, |s| s.kind),
            )
        {
            given.insert(key.clone(), v);
            consumed.insert(format!("/{}", escape(key)));
            out.origins.insert(key.clone(), format!("/{}", escape(key)));
        }
    }
    // 2. Values at the specs' pointers.
    for spec in specs {
        if given.contains_key(spec.key) {
            continue;
        }
        match spec.target {
            Target::Pointer(pointer) => {
                if consumed
                    .iter()
                    .any(|c| pointer.starts_with(c.as_str()) && c != pointer)
                {
                    continue;
                }
                if config.pointer(pointer).is_some_and(Value::is_null) {
                    out.removed.push(spec.key.to_string());
                    consumed.insert(pointer.to_string());
                } else if let Some(v) = config.pointer(pointer)
                    && let Some(option) = option_value(v, spec.kind)
                {
                    given.insert(spec.key.to_string(), option);
                    consumed.insert(pointer.to_string());
                    out.origins
                        .insert(spec.key.to_string(), pointer.to_string());
                }
            }
            Target::Prefixed { pointer, .. } => {
                if let Some(map) = config.pointer(pointer).and_then(Value::as_object) {
                    for (k, v) in map {
                        if let Some(option) = option_value(v, ValueKind::Auto) {
                            given.insert(format!("{}{k}", spec.key), option);
                            consumed.insert(format!("{pointer}/{}", escape(k)));
                            out.origins.insert(
                                format!("{}{k}", spec.key),
                                format!("{pointer}/{}", escape(k)),
                            );
                        }
                    }
                    consumed.insert(pointer.to_string());
                }
            }
            Target::Indexed { pointer, .. } => {
                if let Some(items) = config.pointer(pointer).and_then(Value::as_array) {
                    for (i, v) in items.iter().enumerate() {
                        if let Some(option) = option_value(v, ValueKind::Auto) {
                            given.insert(format!("{}{i}", spec.key), option);
                            out.origins
                                .insert(format!("{}{i}", spec.key), format!("{pointer}/{i}"));
                        }
                    }
                    consumed.insert(pointer.to_string());
                }
            }
            Target::Selector { .. } => {}
        }
    }
    // 3. Selectors: the variant whose settings are present (or whose empty object is).
    for spec in specs {
        let Target::Selector { values, .. } = spec.target else {
            continue;
        };
        if given.contains_key(spec.key) {
            continue;
        }
        let mut scores: Vec<(usize, &str)> = values
            .iter()
            .map(|value| {
                let settings = specs
                    .iter()
                    .filter(|s| {
                        s.when
                            .is_some_and(|c| c.key == spec.key && c.values.contains(value))
                    })
                    .filter(|s| given.contains_key(s.key) && supplied_by(s, &out.origins))
                    .count();
                // An empty object chooses its variant (`"type": {}` for a source); one with
                // settings in it is chosen by those settings.
                let created = spec.creates.iter().any(|(v, pointer)| {
                    v == value
                        && config
                            .pointer(pointer)
                            .and_then(Value::as_object)
                            .is_some_and(serde_json::Map::is_empty)
                });
                (settings + usize::from(created), *value)
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scores.sort_by_key(|b| std::cmp::Reverse(b.0));
        match scores.as_slice() {
            [(best, value), rest @ ..] if rest.first().is_none_or(|(next, _)| next < best) => {
                given.insert(
                    spec.key.to_string(),
                    OptionValue::String((*value).to_string()),
                );
                for (v, pointer) in spec.creates {
                    if v == value {
                        consumed.insert((*pointer).to_string());
                        out.origins
                            .entry(spec.key.to_string())
                            .or_insert_with(|| (*pointer).to_string());
                    }
                }
            }
            _ => {}
        }
    }
    // 4. In the declared order; then whatever else was given SQL-style (prefixed keys).
    for spec in specs {
        if let Some(v) = given.remove(spec.key) {
            out.options.push((spec.key.to_string(), v));
        }
    }
    out.options.extend(given);
    // 5. Ignored: leaves under no consumed pointer, with the option each may have meant.
    leaves(config, "", &consumed, &mut out.ignored);
    let names: Vec<&str> = specs
        .iter()
        .flat_map(|s| {
            let field = match s.target {
                Target::Pointer(p)
                | Target::Prefixed { pointer: p, .. }
                | Target::Indexed { pointer: p, .. } => p.rsplit('/').next(),
                Target::Selector { .. } => None,
            };
            std::iter::once(s.key).chain(field)
        })
        .collect();
    for path in &out.ignored {
        let last = path.rsplit('/').next().unwrap_or_default();
        if let Some(near) = tributary_types::closest(last, names.iter().copied())
            && near != last
        {
            out.suggestions.insert(path.clone(), near.to_string());
        }
    }
    out
}

/// The option value of a JSON value, or `None` for one no option can hold.
/// A number as SQL writes it: a whole number without the `.0` a float config value
/// carries (`10`, not `10.0`), so an option reads back as it was written.
fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

fn option_value(v: &Value, kind: ValueKind) -> Option<OptionValue> {
    let interval = |unit: &str| match v {
        Value::Number(n) => Some(OptionValue::Interval(format!("INTERVAL '{n}' {unit}"))),
        Value::String(s) => Some(OptionValue::String(s.clone())),
        _ => None,
    };
    match kind {
        // Column names are written bare, as SQL wants them; a name that needs quoting stays
        // a string (accepted, with the deprecation warning SQL gives it).
        ValueKind::Field => {
            if let Value::String(s) = v
                && plain_identifier(s)
            {
                return Some(OptionValue::Identifier(s.clone()));
            }
        }
        ValueKind::IntervalSeconds => return interval("SECOND"),
        ValueKind::IntervalMillis => return interval("MILLISECOND"),
        ValueKind::IntervalMicros => return interval("MICROSECOND"),
        _ => {}
    }
    Some(match v {
        Value::String(s) => OptionValue::String(s.clone()),
        Value::Number(n) => OptionValue::Number(number_text(n)),
        Value::Bool(b) => OptionValue::Bool(*b),
        Value::Array(items) => OptionValue::Array(
            items
                .iter()
                .map(|i| option_value(i, ValueKind::Auto))
                .collect::<Option<Vec<_>>>()?,
        ),
        // An object of strings is written `'k1=v1,k2=v2'` (Kafka's `client_configs`).
        Value::Object(map) => OptionValue::String(
            map.iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Some(format!("{k}={s}")),
                    Value::Number(n) => Some(format!("{k}={n}")),
                    Value::Bool(b) => Some(format!("{k}={b}")),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?
                .join(","),
        ),
        Value::Null => return None,
    })
}

/// Whether `name` reads the same written bare: lower case letters, digits and `_`.
fn plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The JSON Pointer escaping of one key.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Every path of `v` that no consumed pointer covers (empty objects under a consumed
/// container, such as a variant with no settings, count as covered).
fn leaves(v: &Value, path: &str, consumed: &BTreeSet<String>, out: &mut Vec<String>) {
    if consumed.contains(path) {
        return;
    }
    let covers = |p: &str| consumed.iter().any(|c| c.starts_with(&format!("{p}/")));
    match v {
        Value::Object(map) if map.is_empty() => {}
        Value::Object(map) => {
            for (k, child) in map {
                let child_path = format!("{path}/{}", escape(k));
                if consumed.contains(&child_path) {
                    continue;
                }
                if child.is_object()
                    && (covers(&child_path) || child.as_object().is_some_and(|m| m.is_empty()))
                {
                    leaves(child, &child_path, consumed, out);
                } else if !covers(&child_path) {
                    out.push(child_path);
                }
            }
        }
        _ => out.push(path.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::registry;
    use serde_json::json;

    fn table_options(connector: &str, config: Value) -> ConfigOptions {
        let entry = registry().get(connector).unwrap();
        options_from_config(entry.connector.table_options(), &config)
    }

    fn profile_options(connector: &str, config: Value) -> ConfigOptions {
        let entry = registry().get(connector).unwrap();
        options_from_config(entry.connector.profile_options(), &config)
    }

    fn keys(c: &ConfigOptions) -> Vec<String> {
        c.options.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn column_names_are_written_bare_and_origins_kept() {
        let c = table_options(
            "redis",
            json!({"connectorType": {"target": {"keyPrefix": "p:", "keyColumn": "id"}}}),
        );
        assert!(
            keys(&c).contains(&"target.key_column=id".to_string()),
            "{:?}",
            keys(&c)
        );
        assert_eq!(
            c.origin("target.key_column"),
            Some("/connectorType/target/keyColumn")
        );
        // A name that needs quoting stays a string.
        let c = table_options(
            "redis",
            json!({"target.key_column": "Order Id", "target.key_prefix": "p:"}),
        );
        assert!(
            keys(&c).contains(&"target.key_column='Order Id'".to_string()),
            "{:?}",
            keys(&c)
        );
        assert_eq!(c.origin("target.key_column"), Some("/target.key_column"));
    }

    #[test]
    fn near_misses_are_suggested() {
        let c = table_options("kafka", json!({"topik": "t", "__meta": {"x": 1}}));
        assert_eq!(
            c.suggestions.get("/topik").map(String::as_str),
            Some("topic")
        );
        assert_eq!(c.suggestions.len(), 1, "{:?}", c.suggestions);
    }

    #[test]
    fn nulls_remove_options() {
        let c = table_options(
            "kafka",
            json!({"topic": "t", "source.offset": null, "type": {"read_mode": null}}),
        );
        assert_eq!(c.removed, ["source.offset", "source.read_mode"]);
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
    }

    #[test]
    fn arroyo_configs_become_options_with_selectors_inferred() {
        let c = table_options(
            "kafka",
            json!({"type": {"offset": "latest", "read_mode": "read_uncommitted"}, "topic": "console_events"}),
        );
        assert_eq!(
            keys(&c),
            [
                "topic='console_events'",
                "type='source'",
                "source.offset='latest'",
                "source.read_mode='read_uncommitted'"
            ]
        );
        assert!(c.ignored.is_empty(), "{:?}", c.ignored);
        let c = table_options(
            "kafka",
            json!({"type": {"commit_mode": "exactly_once"}, "topic": "t", "client_configs": {"linger.ms": "5"}}),
        );
        assert_eq!(
            keys(&c),
            [
                "topic='t'",
                "type='sink'",
                "sink.commit_mode='exactly_once'",
                "client_configs='linger.ms=5'"
            ]
        );
    }

    #[test]
    fn the_consoles_extra_keys_are_ignored_and_named() {
        let c = profile_options(
            "kafka",
            json!({"__meta": {"authentication": {"type": "None"}, "schemaRegistryEnum": {"type": "None"}}, "authentication": {}, "schemaRegistryEnum": {}, "name": "p", "bootstrapServers": "localhost:9092"}),
        );
        assert_eq!(keys(&c), ["bootstrap_servers='localhost:9092'"]);
        assert_eq!(c.ignored, ["/__meta", "/name"]);
        let c = profile_options(
            "kafka",
            json!({"bootstrapServers": "b:1", "authentication": {"protocol": "SASL_SSL", "mechanism": "PLAIN", "username": "u", "password": "{{ PW }}"}}),
        );
        assert_eq!(
            keys(&c),
            [
                "bootstrap_servers='b:1'",
                "auth.type='sasl'",
                "auth.protocol='SASL_SSL'",
                "auth.mechanism='PLAIN'",
                "auth.username='u'",
                "auth.password='{{ PW }}'"
            ]
        );
    }

    #[test]
    fn sql_style_keys_are_taken_as_written() {
        let c = table_options(
            "kafka",
            json!({"topic": "orders", "type": "source", "source.offset": "latest"}),
        );
        assert_eq!(
            keys(&c),
            ["topic='orders'", "type='source'", "source.offset='latest'"]
        );
        assert!(c.ignored.is_empty());
    }

    #[test]
    fn prefixed_and_numbered_options_come_back() {
        let c = table_options(
            "websocket",
            json!({"endpoint": "ws://h/x", "subscription_messages": ["a", "b"]}),
        );
        assert_eq!(
            keys(&c),
            [
                "endpoint='ws://h/x'",
                "subscription_messages.0='a'",
                "subscription_messages.1='b'"
            ]
        );
    }
}
