//! `tributary catalog dump`: the whole catalog as a SQL script that recreates it, so a
//! catalog can live in git and be restored with `tributary run`. Declared functions
//! first, then profiles (with `validate = false`: a restore does not test connections),
//! tables, and views in the order they read each other. A table is written from its
//! record (the statement its REST body stands for: options in the connector's order,
//! spelled as its config holds them, defaults included), so two catalogs whose tables
//! mean the same dump the same text however each table was made; a table whose record
//! does not carry everything (a registry's or a document's schema, partitioning) is
//! written as it was declared. `{{ VAR }}` references are kept as
//! written; a secret stored in clear is never printed: it becomes a reference to an
//! environment variable named after its object and key, and the script's header lists
//! those variables, to be set before the script is run. That holds for a secret option's
//! whole value and for credentials inside any other value (URL userinfo, `password=...`
//! pairs in `client_configs`), which become references in place.

use std::collections::{BTreeSet, HashMap};
use tributary_catalog::{CatalogStore, Result};
use tributary_dialect::sql_writer::{create_definition, ident, literal, table_parts_of};
use tributary_types::{DefinitionBody, DefinitionKind, OptionEntry, OptionValue, is_env_reference};

/// A catalog as a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogDump {
    /// The script.
    pub script: String,
    /// The environment variables its secrets read, in order.
    pub secret_variables: Vec<String>,
}

/// The script that recreates everything `store` holds.
pub fn dump_catalog(store: &dyn CatalogStore) -> Result<CatalogDump> {
    let mut secrets = Secrets::default();
    let mut body = Vec::new();
    for f in store.definitions(DefinitionKind::Function)? {
        body.push(format!("{};", create_definition(&f)));
    }
    let profiles = store.profiles()?;
    let names: HashMap<String, String> = profiles
        .iter()
        .map(|p| (p.id.to_string(), p.name.clone()))
        .collect();
    for p in &profiles {
        let mut lines = vec![format!("connector = {}", literal(&p.connector))];
        for o in p
            .options
            .iter()
            .filter(|o| o.key != "connector" && o.key != "validate")
        {
            lines.push(secrets.option(&p.name, o));
        }
        lines.push("validate = false".into());
        body.push(format!(
            "CREATE CONNECTION PROFILE {} WITH (\n  {}\n);",
            ident(&p.name),
            lines.join(",\n  ")
        ));
    }
    for t in store.tables()? {
        let profile = t.profile.as_ref().and_then(|id| names.get(id.as_str()));
        // As its record says, so a table dumps the same however it was made; as it was
        // declared where the record alone does not carry it.
        let mut parts = crate::record_parts(&t, profile.map(String::as_str))
            .unwrap_or_else(|| table_parts_of(&t, profile.map(String::as_str)));
        let sensitive: BTreeSet<&str> = t
            .options
            .iter()
            .filter(|o| o.sensitive)
            .map(|o| o.key.as_str())
            .collect();
        for (key, value, _) in &mut parts.options {
            // A deprecated spelling as written is dumped in the current one.
            if let Some(current) = tributary_connectors::current_form(&t.connector, key, value) {
                *value = current;
            }
            let secret =
                sensitive.contains(key.as_str()) || tributary_connectors::is_secret_option(key);
            if secret && !is_env_reference(&value.as_text()) {
                *value = OptionValue::String(secrets.reference(&t.name, key));
            } else {
                if secret {
                    secrets.referenced(&value.as_text());
                }
                *value = secrets.embedded(&t.name, key, value);
            }
        }
        body.push(format!("{};", parts.statement(&t.name).sql));
    }
    // A view after every view it reads: by how deep it reads, then by name.
    let mut views = store.definitions(DefinitionKind::View)?;
    views.sort_by_key(|v| {
        let depth = match v.body {
            DefinitionBody::View { depth, .. } => depth,
            DefinitionBody::Function(_) => 0,
        };
        (depth, v.name.to_lowercase())
    });
    for v in &views {
        body.push(format!("{};", create_definition(v)));
    }
    let mut script = String::from("-- A Tributary catalog, as the statements that recreate it.\n");
    if !secrets.variables.is_empty() {
        script.push_str(
            "-- Its secrets are not written here: set these environment variables before running it:\n",
        );
        for v in &secrets.variables {
            script.push_str(&format!("--   {v}\n"));
        }
    }
    for statement in body {
        script.push('\n');
        script.push_str(&statement);
        script.push('\n');
    }
    Ok(CatalogDump {
        script,
        secret_variables: secrets.variables,
    })
}

/// The variables secrets become.
#[derive(Debug, Default)]
struct Secrets {
    variables: Vec<String>,
}

impl Secrets {
    /// An option line, its value a variable reference when it is a secret in clear.
    fn option(&mut self, owner: &str, o: &OptionEntry) -> String {
        if o.sensitive && !is_env_reference(&o.value.as_text()) {
            let reference = self.reference(owner, &o.key);
            return tributary_dialect::sql_writer::option(&o.key, &OptionValue::String(reference));
        }
        if o.sensitive {
            self.referenced(&o.value.as_text());
        }
        let value = self.embedded(owner, &o.key, &o.value);
        tributary_dialect::sql_writer::option(&o.key, &value)
    }

    /// `value` with the credentials inside its text (URL userinfo, `password=...`
    /// pairs) replaced by references: `redis://{{ TRIBUTARY_SECRET_R_ADDRESS }}@h:6379`.
    /// A second one in the same option gets a numbered variable.
    fn embedded(&mut self, owner: &str, key: &str, value: &OptionValue) -> OptionValue {
        match value {
            OptionValue::String(text) => OptionValue::String(self.embedded_text(owner, key, text)),
            OptionValue::Identifier(text) => {
                let replaced = self.embedded_text(owner, key, text);
                if replaced == *text {
                    value.clone()
                } else {
                    // A reference is not an identifier: it is written as a string.
                    OptionValue::String(replaced)
                }
            }
            OptionValue::Array(items) => {
                let mut nth = 0;
                let items = items
                    .iter()
                    .map(|item| {
                        nth += 1;
                        let key = if nth == 1 {
                            key.to_string()
                        } else {
                            format!("{key}_{nth}")
                        };
                        self.embedded(owner, &key, item)
                    })
                    .collect();
                OptionValue::Array(items)
            }
            other => other.clone(),
        }
    }

    fn embedded_text(&mut self, owner: &str, key: &str, text: &str) -> String {
        let ranges = tributary_types::secret_ranges(text);
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (nth, (start, end)) in ranges.into_iter().enumerate() {
            let part = &text[start..end];
            out.push_str(&text[at..start]);
            if is_env_reference(part) {
                out.push_str(part);
            } else if nth == 0 {
                out.push_str(&self.reference(owner, key));
            } else {
                out.push_str(&self.reference(owner, &format!("{key}_{}", nth + 1)));
            }
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }

    /// Remember the variable a secret written as a reference (`{{ VAR }}`) reads: the
    /// restored catalog needs it as much as those the dump makes up.
    fn referenced(&mut self, reference: &str) {
        let name = reference
            .trim()
            .trim_start_matches("{{")
            .trim_end_matches("}}")
            .trim()
            .to_string();
        if !name.is_empty() && !self.variables.contains(&name) {
            self.variables.push(name);
        }
    }

    /// `{{ TRIBUTARY_SECRET_<OWNER>_<KEY> }}`, remembering the variable.
    fn reference(&mut self, owner: &str, key: &str) -> String {
        let name = secret_variable(owner, key);
        if !self.variables.contains(&name) {
            self.variables.push(name.clone());
        }
        format!("{{{{ {name} }}}}")
    }
}

/// The variable a secret of `owner`'s `key` becomes where its value cannot be shown:
/// `TRIBUTARY_SECRET_<OWNER>_<KEY>`, uppercase, other characters as `_`.
pub(crate) fn secret_variable(owner: &str, key: &str) -> String {
    format!("TRIBUTARY_SECRET_{owner}_{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// `value` of `owner`'s option `key` as a dump writes it: a secret in clear as the
/// reference to its variable, credentials inside a value as references in place; the
/// rest as it is. `plan` compares what a file says with this form of what is stored, so
/// a dump planned against its own catalog changes nothing.
pub(crate) fn dumped_value(
    owner: &str,
    key: &str,
    value: &OptionValue,
    secret: bool,
) -> OptionValue {
    let mut secrets = Secrets::default();
    if secret && !is_env_reference(&value.as_text()) {
        OptionValue::String(secrets.reference(owner, key))
    } else {
        secrets.embedded(owner, key, value)
    }
}
