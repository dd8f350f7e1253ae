//! Which option keys hold secrets, across every connector: what masks option values in
//! the source lines that diagnostics quote, before anything knows which connector (if
//! any) a statement names. Each connector's schemas decide for their own keys; free maps
//! (`storage.*`) and keys no connector declares are judged by their names.

use crate::registry::registry;
use crate::schema_doc::property;
use crate::spec::Target;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use tributary_types::{REDACTED, closest, looks_secret, printable_secret, redact_text};

/// What the registry says of SQL keys.
struct SecretKeys {
    /// Declared keys, and whether any connector marks them sensitive.
    exact: HashMap<&'static str, bool>,
    /// Prefixes of free maps (`storage.`), whose keys are judged by name.
    free: Vec<&'static str>,
    /// Prefixes of numbered keys (`subscription_messages.`), and whether they are secret.
    numbered: Vec<(&'static str, bool)>,
    /// Deprecated spellings, with the sensitivity of the key they stand for.
    aliases: HashMap<&'static str, bool>,
    /// Undeclared keys already judged by name: a script repeats the same few keys
    /// (`connector`, `connection_profile`) thousands of times, and judging one compares
    /// it with every declared secret key.
    judged: Mutex<HashMap<String, bool>>,
}

/// The most undeclared keys [`SecretKeys::judged`] remembers, and the longest (others
/// are judged each time), so hostile input cannot grow it without bound.
const MAX_JUDGED: usize = 4096;
const MAX_JUDGED_KEY: usize = 128;

fn secret_keys() -> &'static SecretKeys {
    static KEYS: OnceLock<SecretKeys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = SecretKeys {
            exact: HashMap::new(),
            free: Vec::new(),
            numbered: Vec::new(),
            aliases: HashMap::new(),
            judged: Mutex::new(HashMap::new()),
        };
        for entry in registry().iter() {
            let c = entry.connector;
            let groups = [
                (c.profile_options(), entry.profile_schema.as_ref()),
                (c.table_options(), Some(&entry.table_schema)),
            ];
            for (specs, schema) in groups {
                let Some(schema) = schema else { continue };
                for spec in specs {
                    let sensitive = |pointer: &str| {
                        property(&schema.document, pointer).is_some_and(|i| i.sensitive)
                    };
                    match spec.target {
                        Target::Pointer(pointer) => {
                            let s = sensitive(pointer);
                            *keys.exact.entry(spec.key).or_default() |= s;
                            for alias in spec.deprecated_aliases {
                                *keys.aliases.entry(alias).or_default() |= s;
                            }
                        }
                        Target::Prefixed { .. } => keys.free.push(spec.key),
                        Target::Indexed { pointer, .. } => {
                            keys.numbered.push((spec.key, sensitive(pointer)));
                        }
                        Target::Selector { .. } => {
                            keys.exact.entry(spec.key).or_default();
                        }
                    }
                }
            }
        }
        keys
    })
}

/// Whether the value of option `key` is a secret in some connector, or, for keys of free
/// maps and keys no connector declares, whether its name says so.
pub fn is_secret_option(key: &str) -> bool {
    let keys = secret_keys();
    if let Some(&s) = keys.exact.get(key).or_else(|| keys.aliases.get(key)) {
        return s;
    }
    if let Some((_, s)) = keys.numbered.iter().find(|(p, _)| key.starts_with(p)) {
        return *s;
    }
    if let Some(prefix) = keys.free.iter().find(|p| key.starts_with(*p)) {
        return looks_secret(&key[prefix.len()..]);
    }
    let judged = || {
        keys.judged
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(&s) = judged().get(key) {
        return s;
    }
    // A misspelled secret (`pasword`) is as secret as the key it misspells.
    let secret = looks_secret(key)
        || closest(key, keys.exact.iter().filter(|(_, s)| **s).map(|(k, _)| *k)).is_some();
    let mut remembered = judged();
    if remembered.len() < MAX_JUDGED && key.len() <= MAX_JUDGED_KEY {
        remembered.insert(key.to_owned(), secret);
    }
    secret
}

/// Which of a connector's configs a JSON document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// A connection profile's config.
    Profile,
    /// A connection table's config.
    Table,
}

/// A connector's JSON `config` as it may be shown (REST responses): values the
/// connector's schema marks sensitive, and values of keys whose names say secret, become
/// `********` (a lone `{{ VAR }}` reference is shown as written); credentials inside
/// other strings (URL userinfo, `password=...` pairs) are redacted. An unknown connector's
/// config is judged by key names alone.
pub fn redact_config(connector: &str, kind: ConfigKind, config: &Value) -> Value {
    let schema = registry().get(connector).and_then(|e| match kind {
        ConfigKind::Profile => e.profile_schema.as_ref(),
        ConfigKind::Table => Some(&e.table_schema),
    });
    let mut out = config.clone();
    redact_node(schema.map(|s| &s.document), "", &mut out, 0);
    out
}

/// Configs nest a few levels; a hostile one is cut off (and hidden) past this depth.
const MAX_CONFIG_DEPTH: usize = 64;

fn redact_node(schema: Option<&Value>, pointer: &str, node: &mut Value, depth: usize) {
    if depth > MAX_CONFIG_DEPTH {
        *node = Value::String(REDACTED.into());
        return;
    }
    match node {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let path = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                let sensitive = looks_secret(key)
                    || schema
                        .and_then(|s| property(s, &path))
                        .is_some_and(|i| i.sensitive);
                if sensitive && !child.is_null() {
                    *child = hide(child);
                } else {
                    redact_node(schema, &path, child, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                redact_node(schema, pointer, item, depth + 1);
            }
        }
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redact_text(s) {
                *s = r;
            }
        }
        _ => {}
    }
}

fn hide(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(printable_secret(s).to_string()),
        Value::Array(items) => Value::Array(items.iter().map(hide).collect()),
        _ => Value::String(REDACTED.into()),
    }
}

/// Whether an option says where a connection goes (a URL, host, port, server list,
/// endpoint or broker): a secret stored for one place must not follow it to another.
pub fn is_address_option(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "address", "url", "host", "server", "endpoint", "broker", "uri", "port",
    ]
    .iter()
    .any(|part| k.contains(part))
}

/// Whether an option holds a secret: a key the schemas mark sensitive, or a value with
/// credentials inside (URL userinfo, `password=...` pairs).
pub fn holds_secret(key: &str, value: &str) -> bool {
    is_secret_option(key) || redact_text(value) != value
}

/// What a change that dropped `keys` says: "the address of table 'hook' changed, so
/// its stored secrets were dropped: 'headers'".
pub fn secrets_dropped_message(object: &str, keys: &[String]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
    format!(
        "the address of {object} changed, so its stored secrets were dropped: {}",
        keys.join(", ")
    )
}

/// The stored options whose secrets a change must drop: when `changed` moves an
/// address (an address-like key to a new value), every option of `stored` that holds
/// a secret and that `changed` does not give again, so the secret is never sent to the
/// new place. `stored` and `changed` are (key, value) pairs.
pub fn secrets_unbound_by<'a>(
    stored: &'a [(String, String)],
    changed: &[(String, String)],
) -> Vec<&'a str> {
    let moved = changed.iter().any(|(k, v)| {
        is_address_option(k)
            && stored
                .iter()
                .find(|(sk, _)| sk == k)
                .is_none_or(|(_, sv)| sv != v)
    });
    if !moved {
        return Vec::new();
    }
    stored
        .iter()
        .filter(|(k, v)| {
            !is_address_option(k) && holds_secret(k, v) && !changed.iter().any(|(ck, _)| ck == k)
        })
        .map(|(k, _)| k.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_hide_sensitive_values_and_keep_references() {
        let config = serde_json::json!({
            "bootstrapServers": "b:9092",
            "authentication": {"type": "sasl", "username": "u", "password": "hunter2", "mechanism": "PLAIN"},
            "schemaRegistryEnum": {"endpoint": "https://user:pw@reg:8081", "apiSecret": "{{ REG_SECRET }}"},
            "connectionProperties": {"sasl.jaas.config": "x password=abc"}
        });
        let shown = redact_config("kafka", ConfigKind::Profile, &config);
        assert_eq!(shown["authentication"]["password"], REDACTED);
        assert_eq!(shown["authentication"]["username"], "u");
        assert_eq!(shown["schemaRegistryEnum"]["apiSecret"], "{{ REG_SECRET }}");
        assert!(!shown.to_string().contains("hunter2"));
        assert!(!shown.to_string().contains("pw@"));
        assert!(!shown.to_string().contains("abc"), "{shown}");
        let unknown = redact_config(
            "nope",
            ConfigKind::Table,
            &serde_json::json!({"token": "t0k", "a": [{"secret": 1}]}),
        );
        assert_eq!(unknown["token"], REDACTED);
        assert_eq!(unknown["a"][0]["secret"], REDACTED);
    }

    #[test]
    fn the_schemas_decide_for_declared_keys_and_names_for_the_rest() {
        for secret in [
            "password",
            "auth.password",
            "schema_registry.api_secret",
            "secret",
            "headers",
            "subscription_messages.0",
            "storage.aws_secret_access_key",
            "pasword",
        ] {
            // Asked twice: the second answer comes from what was judged the first time.
            assert!(is_secret_option(secret), "{secret}");
            assert!(is_secret_option(secret), "{secret}, judged again");
        }
        for plain in [
            "topic",
            "bootstrap_servers",
            "source.offset",
            "storage.aws_region",
            "connector",
            "format",
        ] {
            assert!(!is_secret_option(plain), "{plain}");
            assert!(!is_secret_option(plain), "{plain}, judged again");
        }
    }
}
