//! `tributary catalog dump`: the whole catalog as a SQL script that recreates it, so a
//! catalog can live in git and be restored with `tributary run`. Declared functions
//! first, then profiles (with `validate = false`: a restore does not test connections),
//! tables, and views in the order they read each other. `{{ VAR }}` references are kept as
//! written; a secret stored in clear is never printed: it becomes a reference to an
//! environment variable named after its object and key, and the script's header lists
//! those variables, to be set before the script is run.

use crate::sql_text::{create_definition, ident, literal, table_parts_of};
use std::collections::{BTreeSet, HashMap};
use tributary_catalog::{CatalogStore, Result};
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
        let mut parts = table_parts_of(&t, profile.map(String::as_str));
        let sensitive: BTreeSet<&str> = t
            .options
            .iter()
            .filter(|o| o.sensitive)
            .map(|o| o.key.as_str())
            .collect();
        for (key, value, _) in &mut parts.options {
            if sensitive.contains(key.as_str()) && !is_env_reference(&value.as_text()) {
                *value = OptionValue::String(secrets.reference(&t.name, key));
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
            return crate::sql_text::option(&o.key, &OptionValue::String(reference));
        }
        crate::sql_text::option(&o.key, &o.value)
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
