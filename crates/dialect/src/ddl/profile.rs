//! `CREATE`, `ALTER` and `DROP CONNECTION PROFILE`.

use super::generic::GENERIC_PROFILE_OPTIONS;
use super::unknown::{drop_follow_ons, report_unknown};
use crate::parser::ast::{DropBehavior, Name};
use tributary_catalog::{CatalogStore, Change, new_profile_id, now_micros};
use tributary_connectors::{MapRequest, ProfileCheck, describe, map_options, registry};
use tributary_types::options::quoted_list;
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, Diagnostic, Span, SqlOption, WithOptions, closest,
};

/// Split diagnostics into warnings (returned) and errors (an `Err` with everything).
pub(crate) fn finish(diags: Vec<Diagnostic>) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
    if diags.iter().any(Diagnostic::is_error) {
        Err(diags)
    } else {
        Ok(diags)
    }
}

/// The connector named by a `connector` option, or the diagnostics saying why not.
pub(crate) fn connector_option(
    opts: &mut WithOptions,
    missing_span: Span,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'static tributary_connectors::RegisteredConnector> {
    match opts.take_string("connector") {
        Err(d) => {
            diags.push(d);
            None
        }
        Ok(None) => {
            // A misspelled `connector` is the likely cause: point at it.
            let typo = opts
                .remaining()
                .into_iter()
                .find(|o| closest(&o.key, ["connector"]).is_some());
            let d = match typo {
                Some(o) => Diagnostic::error("missing required option 'connector'")
                    .with_span(o.key_span)
                    .with_help(format!(
                        "Did you mean 'connector'? Write connector = '{}'.",
                        tributary_types::limits::shorten(&o.value.as_text())
                    ))
                    .with_code(tributary_types::codes::MISSING_OPTION),
                None => Diagnostic::error("missing required option 'connector'")
                    .with_span(missing_span)
                    .with_help("Add connector = 'kafka' (or another connector; SHOW CONNECTORS lists them).")
                    .with_code(tributary_types::codes::MISSING_OPTION),
            };
            diags.push(d);
            None
        }
        Ok(Some((id, span))) => match registry().get(&id) {
            Some(c) => Some(c),
            // Arroyo's internal result sink: named here so users learn why it is refused.
            None if id == "preview" => {
                diags.push(
                    Diagnostic::error("connector 'preview' cannot be used in CREATE TABLE")
                        .with_span(span)
                        .with_note("it is the internal sink that collects the results of a query")
                        .with_help("Run the SELECT on its own to see its rows, or write to connector = 'stdout'.")
                        .with_code(tributary_types::codes::UNSUPPORTED),
                );
                None
            }
            None => {
                let ids: Vec<&str> = registry().ids().collect();
                let mut d = Diagnostic::error(format!("unknown connector '{id}'"))
                    .with_span(span)
                    .with_code(tributary_types::codes::UNKNOWN_CONNECTOR)
                    .with_note(format!("available connectors are {}", quoted_list(&ids)));
                d = match closest(&id, ids.iter().copied()) {
                    Some(s) => d.with_help(format!("Did you mean '{s}'?")),
                    None => d.with_help("Run SHOW CONNECTORS to list the connectors."),
                };
                diags.push(d);
                None
            }
        },
    }
}

/// Validate a profile definition. `existing` is the profile being altered, whose id and
/// creation time are kept.
pub fn build_profile(
    name: &Name,
    options: Vec<SqlOption>,
    with_span: Span,
    existing: Option<&ConnectionProfile>,
) -> Result<(ConnectionProfile, Vec<Diagnostic>), Vec<Diagnostic>> {
    let order: Vec<String> = options.iter().map(|o| o.key.clone()).collect();
    // Messages name the profile: a long statement's snippet may not show its name.
    let shown = existing.map_or(name.value.as_str(), |p| p.name.as_str());
    let object = format!(
        "connection profile '{}'",
        tributary_types::limits::shorten(shown)
    );
    let (mut opts, mut diags) = WithOptions::new(options);
    let Some(entry) = connector_option(&mut opts, with_span, &mut diags) else {
        return Err(diags);
    };
    let c = entry.connector;
    let Some(schema) = entry.profile_schema.as_ref() else {
        diags.push(
            Diagnostic::error(format!(
                "connector '{}' does not use connection profiles",
                c.id()
            ))
            .with_span(
                opts.all()
                    .iter()
                    .find(|o| o.key == "connector")
                    .map(|o| o.value_span)
                    .unwrap_or(with_span),
            )
            .with_help(format!(
                "Give its options directly in CREATE TABLE ... WITH (connector = '{}', ...).",
                c.id()
            ))
            .with_code(tributary_types::codes::INVALID_OPTION),
        );
        return Err(diags);
    };
    let validate = match opts.take_bool("validate") {
        Ok(v) => v.map(|(b, _)| b),
        Err(d) => {
            diags.push(d);
            None
        }
    };
    let req = MapRequest {
        connector: c.id(),
        object: &object,
        specs: c.profile_options(),
        schema,
        missing_span: with_span,
        missing_hint: None,
    };
    let mapped = map_options(req, &mut opts, &mut diags);
    if !diags.iter().any(Diagnostic::is_error) {
        let mut found = c.check_profile(&ProfileCheck {
            config: &mapped.config,
            options: &mapped,
            statement_span: with_span,
            object: &object,
        });
        tributary_types::codes::fill(&mut found, tributary_types::codes::INVALID_OPTION);
        diags.extend(found);
    }
    let candidates = || {
        describe::option_docs(entry)
            .into_iter()
            .filter(|d| d.scope == describe::Scope::Profile)
            .map(|d| d.key)
            .chain(GENERIC_PROFILE_OPTIONS.iter().map(|g| g.key.to_string()))
            .collect()
    };
    let misspelled = report_unknown(&opts, &object, c.id(), candidates, &mut diags);
    drop_follow_ons(&mut diags, &misspelled);
    let warnings = finish(diags)?;
    let mut entries = vec![];
    if let Some(v) = validate {
        entries.push(tributary_types::OptionEntry {
            key: "validate".into(),
            value: tributary_types::OptionValue::Bool(v),
            sensitive: false,
        });
    }
    // Keep the options in the order they were written.
    let mut written = mapped.entries.clone();
    written.sort_by_key(|e| order.iter().position(|k| *k == e.key).unwrap_or(usize::MAX));
    entries.extend(written);
    let now = now_micros();
    let profile = ConnectionProfile {
        format_version: CURRENT_FORMAT_VERSION,
        id: existing
            .map(|p| p.id.clone())
            .unwrap_or_else(new_profile_id),
        name: existing
            .map(|p| p.name.clone())
            .unwrap_or_else(|| name.value.clone()),
        connector: c.id().to_string(),
        description: tributary_types::redact_text(&c.profile_description(&mapped.config))
            .into_owned(),
        config: mapped.config,
        options: entries,
        created_at: existing.map(|p| p.created_at).unwrap_or(now),
        updated_at: now,
        last_test: None,
    };
    Ok((profile, warnings))
}

/// `ALTER CONNECTION PROFILE name SET (...)`: the new options replace the old ones of the
/// same key, and those named in `removed` go; the whole profile is validated again.
pub fn alter_profile(
    store: &dyn CatalogStore,
    name: &Name,
    options: Vec<SqlOption>,
    with_span: Span,
    removed: &[String],
) -> Result<(Vec<Change>, Vec<Diagnostic>), Vec<Diagnostic>> {
    let existing = lookup(store, name)?;
    if let Some(o) = options.iter().find(|o| o.key == "connector")
        && o.value.as_text() != existing.connector
    {
        return Err(vec![
            Diagnostic::error(format!(
                "the connector of connection profile '{}' cannot be changed",
                existing.name
            ))
            .with_span(o.value_span)
            .with_help("Create a new profile for the other connector.")
            .with_code(tributary_types::codes::UNSUPPORTED),
        ]);
    }
    // A secret stored for one address never follows a change of address: unless the
    // statement gives it again, it is dropped, and a warning names it.
    let stored: Vec<(String, String)> = existing
        .options
        .iter()
        .map(|o| (o.key.clone(), o.value.as_text()))
        .collect();
    let changed: Vec<(String, String)> = options
        .iter()
        .map(|o| (o.key.clone(), o.value.as_text()))
        .collect();
    let unbound: Vec<String> = tributary_connectors::secrets_unbound_by(&stored, &changed)
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut removed: Vec<String> = removed.to_vec();
    removed.extend(unbound.iter().cloned());
    let removed = removed.as_slice();
    let mut merged: Vec<SqlOption> = vec![SqlOption {
        key: "connector".into(),
        key_span: with_span,
        value: tributary_types::OptionValue::String(existing.connector.clone()),
        value_span: with_span,
    }];
    // A new value replaces the old one in place; new keys follow.
    let mut options: Vec<SqlOption> = options
        .into_iter()
        .filter(|o| o.key != "connector")
        .collect();
    // `validate` belongs to the statement that said it: this one tests (or not) anew.
    for old in existing
        .options
        .iter()
        .filter(|o| !removed.contains(&o.key) && o.key != "validate")
    {
        match options.iter().position(|n| n.key == old.key) {
            Some(i) => merged.push(options.remove(i)),
            None => merged.push(SqlOption {
                key: old.key.clone(),
                key_span: with_span,
                value: old.value.clone(),
                value_span: with_span,
            }),
        }
    }
    merged.extend(options);
    let (profile, mut warnings) = build_profile(name, merged, with_span, Some(&existing))?;
    if !unbound.is_empty() {
        warnings.push(
            Diagnostic::warning(tributary_connectors::secrets_dropped_message(
                &format!("connection profile '{}'", existing.name),
                &unbound,
            ))
            .with_span(with_span)
            .with_note("a secret is only ever sent where it was stored for")
            .with_help("Give the secrets again in the same statement (or request) that changes the address.")
            .with_code(tributary_types::codes::SECRET),
        );
    }
    Ok((vec![Change::PutProfile(profile)], warnings))
}

/// `DROP CONNECTION PROFILE`: the profile, and under CASCADE the tables using it.
pub fn drop_profile(
    store: &dyn CatalogStore,
    name: &Name,
    if_exists: bool,
    behavior: DropBehavior,
) -> Result<Vec<Change>, Vec<Diagnostic>> {
    let profile = match store.profile_by_name(&name.value) {
        Ok(Some(p)) => p,
        Ok(None) if if_exists => return Ok(vec![]),
        Ok(None) => return Err(vec![not_found(store, name)]),
        Err(e) => return Err(vec![super::catalog_diagnostic(e, name.span)]),
    };
    let mut changes = Vec::new();
    if behavior == DropBehavior::Cascade {
        let dependents = store
            .dependents(&profile.id)
            .map_err(|e| vec![super::catalog_diagnostic(e, name.span)])?;
        changes.extend(dependents.into_iter().map(Change::DeleteTable));
    }
    changes.push(Change::DeleteProfile(profile.id));
    Ok(changes)
}

/// A profile by name, or a diagnostic suggesting the existing names.
pub fn lookup(store: &dyn CatalogStore, name: &Name) -> Result<ConnectionProfile, Vec<Diagnostic>> {
    match store.profile_by_name(&name.value) {
        Ok(Some(p)) => Ok(p),
        Ok(None) => Err(vec![not_found(store, name)]),
        Err(e) => Err(vec![super::catalog_diagnostic(e, name.span)]),
    }
}

/// `connection profile 'x' does not exist`, with the closest existing name.
pub(crate) fn not_found(store: &dyn CatalogStore, name: &Name) -> Diagnostic {
    profile_not_found(store, &name.value, name.span)
}

pub(crate) fn profile_not_found(store: &dyn CatalogStore, name: &str, span: Span) -> Diagnostic {
    let names: Vec<String> = store
        .profiles()
        .map(|ps| ps.into_iter().map(|p| p.name).collect())
        .unwrap_or_default();
    let d = Diagnostic::error(format!("connection profile '{name}' does not exist"))
        .with_span(span)
        .with_code(tributary_types::codes::NOT_FOUND);
    match closest(name, names.iter().map(String::as_str)) {
        Some(s) => d.with_help(format!("Did you mean '{s}'?")),
        None if names.is_empty() => d.with_help("Create it first with CREATE CONNECTION PROFILE."),
        None => d.with_help(format!("Existing profiles are {}.", quoted_list(&names))),
    }
}
