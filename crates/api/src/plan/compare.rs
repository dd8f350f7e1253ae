//! Object-by-object comparison of the catalog the files describe with a real one. Each
//! side is read in the form a dump writes (a table's options from its record, secrets
//! as the references a dump makes of them), so a dump planned against its own catalog
//! finds nothing to do, and no value shown holds a secret.

use super::{Action, Detail, ObjectKind, PlannedChange};
use crate::dump::dumped_value;
use std::collections::{BTreeMap, HashMap};
use tributary_catalog::{CatalogStore, Result};
use tributary_dialect::sql_writer::{create_definition, table_parts_of};
use tributary_types::{ConnectionProfile, ConnectionTable, DefinitionKind, OptionValue};

/// What is shown for a secret's value.
const SECRET: &str = "(secret)";

pub(super) fn functions(
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
) -> Result<Vec<PlannedChange>> {
    definitions(
        desired,
        actual,
        DefinitionKind::Function,
        ObjectKind::Function,
    )
}

pub(super) fn views(
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
) -> Result<Vec<PlannedChange>> {
    definitions(desired, actual, DefinitionKind::View, ObjectKind::View)
}

/// Views and declared functions, compared by the statement that makes them.
fn definitions(
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
    kind: DefinitionKind,
    object: ObjectKind,
) -> Result<Vec<PlannedChange>> {
    let wanted = by_name(desired.definitions(kind)?, |d| d.name.clone());
    let have = by_name(actual.definitions(kind)?, |d| d.name.clone());
    // Shown on one line, through the redaction path: a query's literals may hold
    // credentials (`'redis://u:pw@h'`).
    let shown = |text: &str| {
        let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        tributary_types::redact_text(&one_line).into_owned()
    };
    Ok(pair(&wanted, &have, object, |w, h| {
        let (before, after) = (create_definition(h), create_definition(w));
        if before == after {
            None
        } else {
            Some((
                Action::Change,
                vec![Detail {
                    what: "definition".into(),
                    before: Some(shown(&before)),
                    after: Some(shown(&after)),
                }],
            ))
        }
    }))
}

pub(super) fn profiles(
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
) -> Result<Vec<PlannedChange>> {
    let wanted = by_name(desired.profiles()?, |p| p.name.clone());
    let have = by_name(actual.profiles()?, |p| p.name.clone());
    Ok(pair(&wanted, &have, ObjectKind::Profile, |w, h| {
        if w.connector != h.connector {
            return Some((
                Action::Replace,
                vec![changed("connector", &h.connector, &w.connector)],
            ));
        }
        let details = option_details(&w.name, &profile_options(h), &profile_options(w), |key| {
            is_secret(&h.options, key) || is_secret(&w.options, key)
        });
        (!details.is_empty()).then_some((Action::Change, details))
    }))
}

pub(super) fn tables(
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
) -> Result<Vec<PlannedChange>> {
    let wanted_profiles = profile_names(desired)?;
    let have_profiles = profile_names(actual)?;
    let wanted = by_name(desired.tables()?, |t| t.name.clone());
    let names = actual.table_names()?;
    let have = tables_named(actual, &wanted, names.len())?;
    let mut planned = pair(&wanted, &have, ObjectKind::Table, |w, h| {
        let mut details = Vec::new();
        let role = |t: &ConnectionTable| {
            let temporary = if t.temporary { "temporary " } else { "" };
            format!(
                "{temporary}{} ({})",
                t.connection_type.as_str(),
                t.connector
            )
        };
        if w.connector != h.connector
            || w.connection_type != h.connection_type
            || w.temporary != h.temporary
        {
            details.push(changed("kind", &role(h), &role(w)));
            return Some((Action::Replace, details));
        }
        let profile_of = |t: &ConnectionTable, names: &HashMap<String, String>| {
            t.profile
                .as_ref()
                .and_then(|id| names.get(id.as_str()).cloned())
        };
        let (hp, wp) = (
            profile_of(h, &have_profiles),
            profile_of(w, &wanted_profiles),
        );
        if hp != wp {
            details.push(Detail {
                what: "profile".into(),
                before: hp.clone(),
                after: wp.clone(),
            });
        }
        if hp == wp && same_definition(h, w) {
            return None;
        }
        details.extend(column_details(h, w));
        details.extend(option_details(
            &w.name,
            &table_options(h, hp.as_deref()),
            &table_options(w, wp.as_deref()),
            |key| is_secret(&h.options, key) || is_secret(&w.options, key),
        ));
        (!details.is_empty()).then_some((Action::Change, details))
    });
    // The catalog's other tables are kept (or dropped): their names are enough.
    for name in names {
        if !wanted.contains_key(&name.to_lowercase()) {
            planned.push(PlannedChange {
                action: Action::Keep,
                kind: ObjectKind::Table,
                name,
                details: vec![],
            });
        }
    }
    Ok(planned)
}

/// Whether two records define the same table: equal in everything but what storing
/// gives a record (its id, its times, its last test) and its profile's id (whose name
/// the caller compares). Most tables of a plan are unchanged, and reading both as a dump
/// writes them, to compare option by option, costs more than the rest of the plan.
pub(super) fn same_definition(a: &ConnectionTable, b: &ConnectionTable) -> bool {
    // Every field named, so a field added later must be placed on one side or the other.
    let ConnectionTable {
        format_version,
        id: _,
        name,
        connector,
        profile: _,
        inline_profile,
        connection_type,
        config,
        schema,
        options,
        virtual_columns,
        watermark,
        event_time_field,
        idle_micros,
        partitioned_by,
        temporary,
        registry,
        description,
        created_at: _,
        updated_at: _,
        last_test: _,
    } = a;
    *format_version == b.format_version
        && *name == b.name
        && *connector == b.connector
        && *inline_profile == b.inline_profile
        && *connection_type == b.connection_type
        && *config == b.config
        && *schema == b.schema
        && *options == b.options
        && *virtual_columns == b.virtual_columns
        && *watermark == b.watermark
        && *event_time_field == b.event_time_field
        && *idle_micros == b.idle_micros
        && *partitioned_by == b.partitioned_by
        && *temporary == b.temporary
        && *registry == b.registry
        && *description == b.description
}

/// The catalog's tables that `wanted` names, by lowercase name. A few are looked up one
/// by one (a plan of 10,000 tables against 100,000 reads 10,000 records, not 100,000);
/// when the files name most of the catalog, one scan is cheaper.
fn tables_named(
    actual: &dyn CatalogStore,
    wanted: &BTreeMap<String, ConnectionTable>,
    in_catalog: usize,
) -> Result<BTreeMap<String, ConnectionTable>> {
    if wanted.len() * 4 >= in_catalog {
        let all = by_name(actual.tables()?, |t| t.name.clone());
        return Ok(all
            .into_iter()
            .filter(|(k, _)| wanted.contains_key(k))
            .collect());
    }
    let mut out = BTreeMap::new();
    for key in wanted.keys() {
        if let Some(t) = actual.table_by_name(key)? {
            out.insert(key.clone(), t);
        }
    }
    Ok(out)
}

/// Objects by lowercase name (names are unique case-insensitively).
fn by_name<T>(items: Vec<T>, name: impl Fn(&T) -> String) -> BTreeMap<String, T> {
    items
        .into_iter()
        .map(|i| (name(&i).to_lowercase(), i))
        .collect()
}

/// Every object of either side: created, compared by `differ`, or kept.
fn pair<T>(
    wanted: &BTreeMap<String, T>,
    have: &BTreeMap<String, T>,
    kind: ObjectKind,
    differ: impl Fn(&T, &T) -> Option<(Action, Vec<Detail>)>,
) -> Vec<PlannedChange>
where
    T: Named,
{
    let mut out = Vec::new();
    for (key, w) in wanted {
        match have.get(key) {
            None => out.push(PlannedChange {
                action: Action::Create,
                kind,
                name: w.name().to_string(),
                details: vec![],
            }),
            Some(h) => {
                if let Some((action, details)) = differ(w, h) {
                    out.push(PlannedChange {
                        action,
                        kind,
                        name: w.name().to_string(),
                        details,
                    });
                }
            }
        }
    }
    for (key, h) in have {
        if !wanted.contains_key(key) {
            out.push(PlannedChange {
                action: Action::Keep,
                kind,
                name: h.name().to_string(),
                details: vec![],
            });
        }
    }
    out
}

/// The name an object goes by.
trait Named {
    fn name(&self) -> &str;
}

impl Named for ConnectionProfile {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for ConnectionTable {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for tributary_types::Definition {
    fn name(&self) -> &str {
        &self.name
    }
}

fn changed(what: &str, before: &str, after: &str) -> Detail {
    Detail {
        what: what.into(),
        before: Some(before.into()),
        after: Some(after.into()),
    }
}

fn profile_names(store: &dyn CatalogStore) -> Result<HashMap<String, String>> {
    Ok(store
        .profiles()?
        .into_iter()
        .map(|p| (p.id.to_string(), p.name))
        .collect())
}

/// Whether option `key` holds a secret: marked so where it was stored, or by its name.
pub(super) fn is_secret(options: &[tributary_types::OptionEntry], key: &str) -> bool {
    options.iter().any(|o| o.key == key && o.sensitive)
        || tributary_connectors::is_secret_option(key)
}

/// A profile's settings, from its config (so two spellings of one setting agree).
pub(super) fn profile_options(p: &ConnectionProfile) -> Vec<(String, OptionValue)> {
    crate::config_options(&p.connector, &p.config, false).options
}

/// A table's options as a dump writes them: from its record where the record carries
/// the whole table, else as declared.
pub(super) fn table_options(
    t: &ConnectionTable,
    profile: Option<&str>,
) -> Vec<(String, OptionValue)> {
    let parts = crate::record_parts(t, profile).unwrap_or_else(|| table_parts_of(t, profile));
    parts
        .options
        .into_iter()
        .filter(|(k, _, _)| k != "connector" && k != "connection_profile" && k != "validate")
        .map(|(k, v, _)| (k, v))
        .collect()
}

/// Option by option: added, removed, changed. A value is the same when the files write
/// it as stored, or as a dump writes the stored one (a secret as its `{{ VAR }}`).
fn option_details(
    owner: &str,
    before: &[(String, OptionValue)],
    after: &[(String, OptionValue)],
    secret: impl Fn(&str) -> bool,
) -> Vec<Detail> {
    let have: HashMap<&str, &OptionValue> = before.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let want: HashMap<&str, &OptionValue> = after.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let shown = |key: &str, v: &OptionValue| {
        if secret(key) {
            SECRET.to_string()
        } else {
            // Credentials inside a value (URL userinfo) are shown as a dump writes them.
            dumped_value(owner, key, v, false).to_string()
        }
    };
    let mut out = Vec::new();
    for (key, w) in after {
        let what = format!("option {}", tributary_dialect::sql_writer::literal(key));
        match have.get(key.as_str()) {
            None => out.push(Detail {
                what,
                before: None,
                after: Some(shown(key, w)),
            }),
            Some(h) => {
                if !stands_for(owner, key, w, h, secret(key)) {
                    out.push(Detail {
                        what,
                        before: Some(shown(key, h)),
                        after: Some(shown(key, w)),
                    });
                }
            }
        }
    }
    for (key, h) in before {
        if !want.contains_key(key.as_str()) {
            out.push(Detail {
                what: format!("option {}", tributary_dialect::sql_writer::literal(key)),
                before: Some(shown(key, h)),
                after: None,
            });
        }
    }
    out
}

/// Whether the value the files write, `written`, stands for the stored one: the same,
/// or the form a dump writes of it (a secret as its `{{ VAR }}`).
fn stands_for(
    owner: &str,
    key: &str,
    written: &OptionValue,
    stored: &OptionValue,
    secret: bool,
) -> bool {
    written.to_string() == stored.to_string()
        || written.to_string() == dumped_value(owner, key, stored, secret).to_string()
}

/// A reference a dump writes in place of a stored secret (`{{
/// TRIBUTARY_SECRET_R_PASSWORD }}` for a password, or for the credentials inside a URL),
/// and the stored text it stands for. In files planned or applied against the catalog,
/// that reference means the stored value, wherever the files write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StandIn {
    /// The reference, as a dump writes it.
    pub written: String,
    /// What the catalog stores in its place.
    pub stored: String,
}

/// Every reference a dump of these stored options would write, with what it stands for.
pub(super) fn stand_ins(
    owner: &str,
    stored: &[(String, OptionValue)],
    secret: impl Fn(&str) -> bool,
) -> Vec<StandIn> {
    let mut out = Vec::new();
    for (key, value) in stored {
        let dumped = dumped_value(owner, key, value, secret(key));
        if dumped != *value {
            align(&dumped, value, &mut out);
        }
    }
    out
}

/// Match a dumped value with the stored one: each reference the dump put in, with the
/// stored text between the literal pieces around it.
fn align(dumped: &OptionValue, stored: &OptionValue, out: &mut Vec<StandIn>) {
    if let (OptionValue::Array(ds), OptionValue::Array(ss)) = (dumped, stored)
        && ds.len() == ss.len()
    {
        for (d, s) in ds.iter().zip(ss) {
            align(d, s, out);
        }
        return;
    }
    let (dumped, stored) = (dumped.as_text(), stored.as_text());
    let mut rest = dumped.as_str();
    let mut at = 0; // where in `stored` the text after the last piece begins
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}").map(|i| open + i + 2) else {
            return;
        };
        let literal = &rest[..open];
        if !stored[at..].starts_with(literal) {
            return;
        }
        at += literal.len();
        let reference = &rest[open..close];
        rest = &rest[close..];
        // The stored text runs to where the next literal piece begins (or to the end).
        let next_literal = rest.find("{{").map_or(rest, |i| &rest[..i]);
        let end = if next_literal.is_empty() {
            if rest.is_empty() { stored.len() } else { at }
        } else {
            match stored[at..].find(next_literal) {
                Some(i) => at + i,
                None => return,
            }
        };
        let piece = &stored[at..end];
        if tributary_types::is_env_reference(reference) && piece != reference && !piece.is_empty() {
            out.push(StandIn {
                written: reference.to_string(),
                stored: piece.to_string(),
            });
        }
        at = end;
    }
}

/// Column by column (physical, metadata and generated), then the watermark and key.
fn column_details(h: &ConnectionTable, w: &ConnectionTable) -> Vec<Detail> {
    let columns = |t: &ConnectionTable| -> Vec<(String, String, String)> {
        let mut out: Vec<(String, String, String)> = t
            .schema
            .fields
            .iter()
            .map(|f| {
                let mut d = f.field_type.sql_name();
                if f.required {
                    d.push_str(" NOT NULL");
                }
                if let Some(k) = &f.metadata_key {
                    d.push_str(&format!(
                        " METADATA FROM {}",
                        tributary_dialect::sql_writer::literal(k)
                    ));
                }
                (f.name.to_lowercase(), f.name.clone(), d)
            })
            .collect();
        out.extend(t.virtual_columns.iter().map(|v| {
            (
                v.name.to_lowercase(),
                v.name.clone(),
                format!(
                    "{} GENERATED ALWAYS AS ({})",
                    v.field_type.sql_name(),
                    v.expression
                ),
            )
        }));
        out
    };
    let (have, want) = (columns(h), columns(w));
    let have_map: HashMap<&str, &(String, String, String)> =
        have.iter().map(|c| (c.0.as_str(), c)).collect();
    let want_map: HashMap<&str, &(String, String, String)> =
        want.iter().map(|c| (c.0.as_str(), c)).collect();
    let mut out = Vec::new();
    for (key, name, d) in &want {
        let what = format!("column {}", tributary_dialect::sql_writer::ident(name));
        match have_map.get(key.as_str()) {
            None => out.push(Detail {
                what,
                before: None,
                after: Some(d.clone()),
            }),
            Some((_, _, hd)) if hd != d => out.push(Detail {
                what,
                before: Some(hd.clone()),
                after: Some(d.clone()),
            }),
            Some(_) => {}
        }
    }
    for (key, name, d) in &have {
        if !want_map.contains_key(key.as_str()) {
            out.push(Detail {
                what: format!("column {}", tributary_dialect::sql_writer::ident(name)),
                before: Some(d.clone()),
                after: None,
            });
        }
    }
    let watermark = |t: &ConnectionTable| {
        t.watermark.as_ref().map(|wm| match &wm.expression {
            Some(e) => format!(
                "FOR {} AS {e}",
                tributary_dialect::sql_writer::ident(&wm.column)
            ),
            None => format!("FOR {}", tributary_dialect::sql_writer::ident(&wm.column)),
        })
    };
    if watermark(h) != watermark(w) {
        out.push(Detail {
            what: "watermark".into(),
            before: watermark(h),
            after: watermark(w),
        });
    }
    let keys = |t: &ConnectionTable| {
        let k: Vec<String> = t
            .schema
            .primary_keys
            .iter()
            .map(|k| tributary_dialect::sql_writer::ident(k))
            .collect();
        (!k.is_empty()).then(|| k.join(", "))
    };
    if keys(h) != keys(w) {
        out.push(Detail {
            what: "primary key".into(),
            before: keys(h),
            after: keys(w),
        });
    }
    out
}
