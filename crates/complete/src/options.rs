//! Option keys and values for completion, read from the registries validation uses:
//! the generic table and profile options, the format registry, and each connector's
//! documented options (`describe::option_docs`, which `DESCRIBE CONNECTOR` prints).

use super::context::Options;
use super::{Candidate, CandidateKind};
use tributary_connectors::describe::{OptionDoc, Scope, option_docs};
use tributary_connectors::registry;
use tributary_dialect::ddl::{GENERIC_PROFILE_OPTIONS, GENERIC_TABLE_OPTIONS};
use tributary_formats::{FormatOption, GENERIC_FORMAT_OPTIONS, format_spec};

/// What an option list configures.
#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    /// A profile's options rather than a table's.
    pub for_profile: bool,
    /// The connector, when named (or known from the profile).
    pub connector: Option<String>,
    /// The profile a table names (or the one being altered).
    pub profile: Option<String>,
}

/// One option a list may take, flattened from the registries.
struct Opt {
    key: String,
    value_type: String,
    default: Option<String>,
    allowed: Vec<String>,
    required: bool,
}

impl Opt {
    fn detail(&self) -> String {
        let mut d = self.value_type.clone();
        if let Some(def) = &self.default {
            d.push_str(&format!(", default {def}"));
        } else if self.required {
            d.push_str(", required");
        }
        d
    }
}

/// Every option the list may take, in the order to offer them.
fn all_options(target: &Target, given: Option<&Options>) -> Vec<Opt> {
    let mut out = Vec::new();
    let generic = if target.for_profile {
        GENERIC_PROFILE_OPTIONS
    } else {
        GENERIC_TABLE_OPTIONS
    };
    out.extend(generic.iter().map(|g| Opt {
        key: g.key.to_string(),
        value_type: g.value_type.to_string(),
        default: g.default.map(str::to_string),
        allowed: Vec::new(),
        required: g.key == "connector",
    }));
    let entry = target.connector.as_deref().and_then(|c| registry().get(c));
    if !target.for_profile {
        let takes_format = entry.is_none_or(|e| e.connector.fixed_schema().is_none());
        if takes_format {
            out.extend(GENERIC_FORMAT_OPTIONS.iter().map(format_opt));
            let format = given.and_then(|o| o.value("format"));
            if let Some(spec) = format.and_then(format_spec) {
                out.extend(spec.options.iter().map(format_opt));
            }
        }
    }
    if let Some(entry) = entry {
        // A table with a profile takes its connection settings from it.
        let profile_keys = target.for_profile || target.profile.is_none();
        out.extend(
            option_docs(entry)
                .into_iter()
                .filter(|d| match d.scope {
                    Scope::Profile => profile_keys,
                    Scope::Table => !target.for_profile,
                })
                .map(doc_opt),
        );
    }
    out
}

fn format_opt(o: &FormatOption) -> Opt {
    Opt {
        key: o.key.to_string(),
        value_type: o.value_type.to_string(),
        default: o.default.map(str::to_string),
        allowed: o.allowed.iter().map(|a| (*a).to_string()).collect(),
        required: false,
    }
}

fn doc_opt(d: OptionDoc) -> Opt {
    Opt {
        // `subscription_messages.<n>`: the placeholder is the user's to fill.
        key: d.key.replace("<n>", "").replace("<name>", ""),
        value_type: d.value_type,
        default: d.default,
        allowed: d.allowed,
        required: d.required && d.condition.is_none(),
    }
}

/// The keys not given yet.
pub(crate) fn keys(target: &Target, options: &Options) -> Vec<Candidate> {
    let mut seen = std::collections::HashSet::new();
    all_options(target, Some(options))
        .into_iter()
        .filter(|o| options.value(&o.key).is_none() && seen.insert(o.key.clone()))
        .map(|o| Candidate {
            detail: o.detail(),
            text: o.key,
            kind: CandidateKind::OptionKey,
        })
        .collect()
}

/// The values `key` may take: connectors, profiles, formats, an enumeration, booleans,
/// or the profile's live names for the option its table schema marks for completion.
pub(crate) fn values(
    target: &Target,
    given: &Options,
    key: &str,
    profiles: &dyn Fn() -> std::sync::Arc<Vec<(String, String)>>,
    live: &dyn Fn(&str) -> Option<Vec<String>>,
) -> Vec<Candidate> {
    let value = |v: &str, detail: &str| Candidate {
        text: quote_value(v),
        kind: CandidateKind::Value,
        detail: detail.to_string(),
    };
    match key {
        "connector" => {
            return connectors(target.for_profile)
                .into_iter()
                .map(|c| Candidate {
                    text: quote_value(&c.text),
                    ..c
                })
                .collect();
        }
        "connection_profile" => {
            return profiles()
                .iter()
                .filter(|(_, c)| target.connector.as_deref().is_none_or(|t| t == c))
                .map(|(name, c)| value(name, c))
                .collect();
        }
        _ => {}
    }
    let options = all_options(target, Some(given));
    let Some(opt) = options.iter().find(|o| o.key == key) else {
        return Vec::new();
    };
    if !opt.allowed.is_empty() {
        return opt.allowed.iter().map(|a| value(a, "")).collect();
    }
    if opt.value_type == "boolean" {
        return ["true", "false"]
            .iter()
            .map(|b| Candidate {
                text: (*b).to_string(),
                kind: CandidateKind::Value,
                detail: String::new(),
            })
            .collect();
    }
    if live_key(target).as_deref() == Some(key)
        && let Some(profile) = &target.profile
        && let Some(names) = live(profile)
    {
        return names.iter().map(|n| value(n, profile)).collect();
    }
    Vec::new()
}

/// The type and default of `key`, as a hint where its value is to be typed.
pub(crate) fn describe(target: &Target, given: &Options, key: &str) -> Option<String> {
    let options = all_options(target, Some(given));
    let opt = options.iter().find(|o| o.key == key)?;
    let mut text = opt.detail();
    if !opt.allowed.is_empty() {
        text.push_str(&format!(": {}", opt.allowed.join(" | ")));
    }
    Some(format!("  -- {text}"))
}

/// The SQL key of the table option whose values the connector can list live (the
/// table schema property marked `"format": "autocomplete"`, such as Kafka's `topic`).
fn live_key(target: &Target) -> Option<String> {
    let entry = registry().get(target.connector.as_deref()?)?;
    let props = entry.table_schema.document.get("properties")?.as_object()?;
    let marked = props.iter().find_map(|(k, v)| {
        (v.get("format").and_then(|f| f.as_str()) == Some("autocomplete")).then_some(k)
    })?;
    option_docs(entry)
        .into_iter()
        .find(|d| d.scope == Scope::Table && d.json_name == *marked)
        .map(|d| d.key)
}

/// Connector ids, bare (only those that take a profile, for profiles).
pub(crate) fn connectors(for_profile: bool) -> Vec<Candidate> {
    registry()
        .iter()
        .filter(|e| !for_profile || e.profile_schema.is_some())
        .map(|e| Candidate {
            text: e.connector.id().to_string(),
            kind: CandidateKind::Connector,
            detail: e.connector.info().description.to_string(),
        })
        .collect()
}

/// The metadata keys of `connector` (of every connector when none is named yet).
pub(crate) fn metadata_keys(connector: Option<&str>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for e in registry().iter() {
        if connector.is_some_and(|c| c != e.connector.id()) {
            continue;
        }
        for k in e.connector.metadata_keys() {
            let text = quote_value(k.key);
            if out.iter().any(|c| c.text == text) {
                continue;
            }
            out.push(Candidate {
                text,
                kind: CandidateKind::MetadataKey,
                detail: k.sql_type.field_type().sql_name(),
            });
        }
    }
    out
}

/// A string literal.
fn quote_value(v: &str) -> String {
    format!("'{}'", v.replace('\'', "''"))
}
