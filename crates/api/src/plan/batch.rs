//! The one catalog batch that carries out a plan: every change of every object, deletes
//! first (so a replaced object's name is free again), then profiles, tables and
//! definitions in the order they refer to each other. What the catalog already holds
//! keeps its id and creation time; where the files write the reference a dump of the
//! catalog writes for a stored secret, the stored secret is kept (in the option's value,
//! its config and its description), even inside a value the files change.

use super::compare::{self, StandIn};
use super::{Action, ObjectKind, Plan};
use serde_json::Value;
use std::collections::HashMap;
use tributary_catalog::{CatalogStore, Change, Result};
use tributary_types::{
    ConnectionProfile, ConnectionTable, DefinitionKind, OptionEntry, OptionValue, ProfileId,
};

/// The changes that make `actual` hold what `desired` holds, as `plan` lists them.
pub(super) fn changes(
    plan: &Plan,
    desired: &dyn CatalogStore,
    actual: &dyn CatalogStore,
) -> Result<Vec<Change>> {
    let actions: HashMap<(ObjectKind, String), Action> = plan
        .changes
        .iter()
        .map(|c| ((c.kind, c.name.to_lowercase()), c.action))
        .collect();
    let of = |kind: ObjectKind, name: &str| actions.get(&(kind, name.to_lowercase())).copied();

    let mut deletes = Vec::new();

    // What is dropped goes first (definitions before the tables they read, tables before
    // their profiles), looked up by name: only the dropped objects are read.
    let dropped = |kind: ObjectKind| {
        plan.changes
            .iter()
            .filter(move |c| c.kind == kind && c.action == Action::Drop)
            .map(|c| c.name.as_str())
    };
    for kind in [DefinitionKind::View, DefinitionKind::Function] {
        for name in dropped(object_kind(kind)) {
            if let Some(have) = actual.definition(kind, name)? {
                deletes.push(Change::DeleteDefinition(kind, have.name));
            }
        }
    }
    for name in dropped(ObjectKind::Table) {
        if let Some(have) = actual.table_by_name(name)? {
            deletes.push(Change::DeleteTable(have.id));
        }
    }
    for name in dropped(ObjectKind::Profile) {
        if let Some(have) = actual.profile_by_name(name)? {
            deletes.push(Change::DeleteProfile(have.id));
        }
    }

    // Profiles: a desired profile's id becomes the stored one's wherever one is kept.
    let mut profile_ids: HashMap<ProfileId, ProfileId> = HashMap::new();
    let wanted_profiles = desired.profiles()?;
    let want_profile_names: HashMap<String, String> = wanted_profiles
        .iter()
        .map(|p| (p.id.to_string(), p.name.clone()))
        .collect();
    let mut profile_puts = Vec::new();
    for want in wanted_profiles {
        let have = actual.profile_by_name(&want.name)?;
        match (of(ObjectKind::Profile, &want.name), have) {
            (Some(Action::Create), _) | (_, None) => {
                profile_ids.insert(want.id.clone(), want.id.clone());
                profile_puts.push(Change::PutProfile(want));
            }
            (Some(Action::Replace), Some(have)) => {
                deletes.push(Change::DeleteProfile(have.id));
                profile_ids.insert(want.id.clone(), want.id.clone());
                profile_puts.push(Change::PutProfile(want));
            }
            (Some(Action::Change), Some(have)) => {
                profile_ids.insert(want.id.clone(), have.id.clone());
                profile_puts.push(Change::PutProfile(changed_profile(want, &have)));
            }
            (_, Some(have)) => {
                profile_ids.insert(want.id.clone(), have.id.clone());
            }
        }
    }

    // Tables, on their profiles' final ids.
    let mapped = |t: &Option<ProfileId>| t.as_ref().and_then(|p| profile_ids.get(p).cloned());
    let mut table_puts = Vec::new();
    for mut want in desired.tables()? {
        let profile = want
            .profile
            .as_ref()
            .and_then(|p| want_profile_names.get(p.as_str()))
            .cloned();
        want.profile = mapped(&want.profile);
        let have = actual.table_by_name(&want.name)?;
        match (of(ObjectKind::Table, &want.name), have) {
            (Some(Action::Create), _) | (_, None) => table_puts.push(Change::PutTable(want)),
            (Some(Action::Replace), Some(have)) => {
                deletes.push(Change::DeleteTable(have.id));
                table_puts.push(Change::PutTable(want));
            }
            (Some(Action::Change), Some(have)) => {
                table_puts.push(Change::PutTable(changed_table(
                    want,
                    &have,
                    profile.as_deref(),
                )));
            }
            // Unchanged, but on a profile the batch replaces: it moves to the new one.
            (_, Some(mut have)) => {
                if have.profile != want.profile {
                    have.profile = want.profile;
                    table_puts.push(Change::PutTable(have));
                }
            }
        }
    }

    // Functions before the views that may call them.
    let mut definition_puts = Vec::new();
    for kind in [DefinitionKind::Function, DefinitionKind::View] {
        for mut want in desired.definitions(kind)? {
            match of(object_kind(kind), &want.name) {
                Some(Action::Create) => definition_puts.push(Change::PutDefinition {
                    definition: want,
                    replace: false,
                }),
                Some(Action::Change | Action::Replace) => {
                    if let Some(have) = actual.definition(kind, &want.name)? {
                        want.created_at = have.created_at;
                    }
                    definition_puts.push(Change::PutDefinition {
                        definition: want,
                        replace: true,
                    });
                }
                _ => {}
            }
        }
    }

    let mut out = deletes;
    out.extend(profile_puts);
    out.extend(table_puts);
    out.extend(definition_puts);
    Ok(out)
}

fn object_kind(kind: DefinitionKind) -> ObjectKind {
    match kind {
        DefinitionKind::View => ObjectKind::View,
        DefinitionKind::Function => ObjectKind::Function,
    }
}

/// The desired profile in the stored one's place: its id, creation time, and every secret
/// the files write as the dump's reference to the stored value.
fn changed_profile(mut want: ConnectionProfile, have: &ConnectionProfile) -> ConnectionProfile {
    let stand_ins = compare::stand_ins(&want.name, &compare::profile_options(have), |key| {
        compare::is_secret(&have.options, key)
    });
    restore(&stand_ins, &mut want.config, &mut want.options);
    restore_text(&stand_ins, &mut want.description);
    want.id = have.id.clone();
    want.created_at = have.created_at;
    // The stored test was of the old connection.
    want.last_test = None;
    want
}

/// The desired table in the stored one's place, as [`changed_profile`].
fn changed_table(
    mut want: ConnectionTable,
    have: &ConnectionTable,
    profile: Option<&str>,
) -> ConnectionTable {
    let stand_ins = compare::stand_ins(&want.name, &compare::table_options(have, profile), |key| {
        compare::is_secret(&have.options, key)
    });
    restore(&stand_ins, &mut want.config, &mut want.options);
    if let Some(inline) = &mut want.inline_profile {
        restore_json(&stand_ins, inline);
    }
    want.id = have.id.clone();
    want.created_at = have.created_at;
    want.last_test = None;
    want
}

/// Put each stored value back where the files wrote its stand-in.
fn restore(stand_ins: &[StandIn], config: &mut Value, options: &mut [OptionEntry]) {
    if stand_ins.is_empty() {
        return;
    }
    restore_json(stand_ins, config);
    for o in options {
        restore_option(stand_ins, &mut o.value);
    }
}

fn restore_json(stand_ins: &[StandIn], value: &mut Value) {
    // Iterative: a config is as deep as its connector's schema, but never trust depth.
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => restore_text(stand_ins, s),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// Each reference in `text` that stands for a stored value, replaced by it.
fn restore_text(stand_ins: &[StandIn], text: &mut String) {
    for si in stand_ins {
        if text.contains(&si.written) {
            *text = text.replace(&si.written, &si.stored);
        }
    }
}

fn restore_option(stand_ins: &[StandIn], value: &mut OptionValue) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            OptionValue::String(s) | OptionValue::Identifier(s) => restore_text(stand_ins, s),
            OptionValue::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
}
