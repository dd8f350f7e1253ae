//! Documentation rows rendered from a connector's schemas and option declarations: what
//! `DESCRIBE CONNECTOR`, `SHOW CONNECTORS`, suggestions and the generated docs print.

use crate::registry::RegisteredConnector;
use crate::schema_doc::property;
use crate::spec::{OptionSpec, Target, ValueKind};
use serde_json::Value;

/// Whether an option belongs to the profile or the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// A connection-profile option (also accepted inline in a table without a profile).
    Profile,
    /// A table option.
    Table,
}

impl Scope {
    /// `profile` or `table`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Profile => "profile",
            Scope::Table => "table",
        }
    }
}

/// One documented option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionDoc {
    /// Profile or table.
    pub scope: Scope,
    /// The SQL key.
    pub key: String,
    /// The JSON config name (`type.offset`), empty for selectors.
    pub json_name: String,
    /// The value type as users write it.
    pub value_type: String,
    /// The default, if any.
    pub default: Option<String>,
    /// Allowed values, if an enumeration.
    pub allowed: Vec<String>,
    /// Whether it must be given (possibly only under `condition`).
    pub required: bool,
    /// When it applies (`type = 'source'`).
    pub condition: Option<String>,
    /// Whether it is a secret.
    pub sensitive: bool,
    /// Whether `{{ VAR }}` references are allowed.
    pub env_allowed: bool,
    /// What it does.
    pub description: String,
}

/// Every option of a connector, profile options first, in declaration order.
pub fn option_docs(entry: &RegisteredConnector) -> Vec<OptionDoc> {
    let mut out = Vec::new();
    if let Some(schema) = &entry.profile_schema {
        out.extend(
            entry
                .connector
                .profile_options()
                .iter()
                .map(|s| doc(Scope::Profile, s, &schema.document)),
        );
    }
    out.extend(
        entry
            .connector
            .table_options()
            .iter()
            .map(|s| doc(Scope::Table, s, &entry.table_schema.document)),
    );
    out
}

fn doc(scope: Scope, spec: &OptionSpec, schema: &Value) -> OptionDoc {
    let condition = spec.when.map(|c| {
        let values: Vec<String> = c.values.iter().map(|v| format!("'{v}'")).collect();
        format!("{} = {}", c.key, values.join(" | "))
    });
    let d = OptionDoc {
        scope,
        key: spec.key.to_string(),
        json_name: String::new(),
        value_type: String::new(),
        default: None,
        allowed: vec![],
        required: false,
        condition,
        sensitive: false,
        env_allowed: false,
        description: String::new(),
    };
    let mut d = describe_target(d, spec, schema);
    if !spec.exclusive_with.is_empty() {
        let mut keys: Vec<&str> = std::iter::once(spec.key)
            .chain(spec.exclusive_with.iter().copied())
            .collect();
        keys.sort_unstable();
        let keys: Vec<String> = keys.iter().map(|k| format!("'{k}'")).collect();
        d.required = false;
        d.description = format!(
            "{} (exactly one of {} is required)",
            d.description,
            keys.join(", ")
        );
    }
    d
}

fn describe_target(mut d: OptionDoc, spec: &OptionSpec, schema: &Value) -> OptionDoc {
    match spec.target {
        Target::Selector {
            values,
            default,
            description,
        } => {
            d.value_type = "string".into();
            d.allowed = values.iter().map(|v| (*v).to_string()).collect();
            d.default = default.map(str::to_string);
            d.required = default.is_none();
            d.description = description.to_string();
        }
        Target::Prefixed {
            pointer,
            description,
        } => {
            d.key = format!("{}<name>", spec.key);
            d.json_name = format!("{}.<name>", json_name(pointer));
            d.value_type = "string".into();
            d.description = description.to_string();
            d.sensitive = true;
        }
        Target::Indexed {
            pointer,
            description,
        } => {
            d.key = format!("{}<n>", spec.key);
            d.json_name = format!("{}[n]", json_name(pointer));
            d.value_type = "string".into();
            d.description = description.to_string();
            d.sensitive = property(schema, pointer).is_some_and(|i| i.sensitive);
        }
        Target::Pointer(pointer) => {
            d.json_name = json_name(pointer);
            if let Some(info) = property(schema, pointer) {
                d.value_type = match spec.kind {
                    ValueKind::IntervalSeconds
                    | ValueKind::IntervalMillis
                    | ValueKind::IntervalMicros => "interval".into(),
                    ValueKind::DataSize => "data size".into(),
                    ValueKind::Field => "column name".into(),
                    ValueKind::Pascal | ValueKind::Auto => match info.type_name() {
                        Some("object") => "'k=v,...' pairs".into(),
                        Some("array") => "array of strings".into(),
                        Some(t) => t.to_string(),
                        None => "string".into(),
                    },
                };
                d.default = info.default().map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string())
                });
                d.allowed = info.enum_values();
                // An option with a default never has to be given.
                d.required = info.required && d.default.is_none();
                d.sensitive = info.sensitive;
                d.env_allowed = info.is_var_str() || info.sensitive;
                d.description = info.description().to_string();
                let range = [("minimum", "at least"), ("maximum", "at most")]
                    .iter()
                    .filter_map(|(k, w)| info.node.get(*k).map(|v| format!("{w} {v}")))
                    .collect::<Vec<_>>();
                if !range.is_empty() {
                    d.description = format!("{} ({})", d.description, range.join(", "));
                }
            }
        }
    }
    d
}

fn json_name(pointer: &str) -> String {
    pointer.trim_start_matches('/').replace('/', ".")
}

/// Every SQL key a connector accepts, for suggestions.
pub fn all_keys(entry: &RegisteredConnector) -> Vec<String> {
    option_docs(entry)
        .into_iter()
        .map(|d| d.key.replace("<name>", ""))
        .collect()
}
