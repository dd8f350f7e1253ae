//! Which option keys hold secrets, across every connector: what masks option values in
//! the source lines that diagnostics quote, before anything knows which connector (if
//! any) a statement names. Each connector's schemas decide for their own keys; free maps
//! (`storage.*`) and keys no connector declares are judged by their names.

use crate::registry::registry;
use crate::schema_doc::property;
use crate::spec::Target;
use std::collections::HashMap;
use std::sync::OnceLock;
use tributary_types::{closest, looks_secret};

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
}

fn secret_keys() -> &'static SecretKeys {
    static KEYS: OnceLock<SecretKeys> = OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = SecretKeys {
            exact: HashMap::new(),
            free: Vec::new(),
            numbered: Vec::new(),
            aliases: HashMap::new(),
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
    // A misspelled secret (`pasword`) is as secret as the key it misspells.
    looks_secret(key)
        || closest(key, keys.exact.iter().filter(|(_, s)| **s).map(|(k, _)| *k)).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert!(is_secret_option(secret), "{secret}");
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
        }
    }
}
