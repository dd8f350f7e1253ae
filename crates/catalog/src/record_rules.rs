//! The rules a batch must keep for profiles and tables, shared by every store: names are
//! unique case-insensitively (within the batch too), a table's profile exists after the
//! batch, what is deleted exists, and no profile is deleted while a table still uses it.
//! A store answers the point lookups of [`RecordState`]; the rules return the
//! profile-to-table edges the batch adds and removes.

use crate::error::{CatalogError, Result};
use crate::store::{Change, ObjectKind, name_key};
use std::collections::{BTreeSet, HashMap};
use tributary_types::{ConnectionProfile, ConnectionTable, ProfileId, TableId};

/// The committed state a batch is checked against.
pub(crate) trait RecordState {
    /// The id of the profile of this name (case-insensitive).
    fn profile_id_named(&self, name: &str) -> Result<Option<String>>;
    /// The id of the table of this name (case-insensitive).
    fn table_id_named(&self, name: &str) -> Result<Option<String>>;
    /// Whether a profile with this id exists.
    fn profile_exists(&self, id: &str) -> Result<bool>;
    /// Whether the profile a table is put on exists. A store whose tables hold a
    /// foreign key to their profile may answer this as a guess the write then proves.
    fn table_profile_exists(&self, id: &str) -> Result<bool> {
        self.profile_exists(id)
    }
    /// A profile by id.
    fn profile_record(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>>;
    /// A table by id.
    fn table_record(&self, id: &TableId) -> Result<Option<ConnectionTable>>;
    /// The tables that use a profile.
    fn tables_using(&self, profile: &ProfileId) -> Result<Vec<TableId>>;
}

/// Profile-to-table edges a batch adds and removes.
#[derive(Debug, Default)]
pub(crate) struct DependencyEdits {
    pub(crate) add: Vec<(ProfileId, TableId)>,
    pub(crate) remove: Vec<(ProfileId, TableId)>,
}

/// Check the profile and table rules of `changes` against `state`.
pub(crate) fn check(state: &dyn RecordState, changes: &[Change]) -> Result<DependencyEdits> {
    let mut deleted_tables: BTreeSet<String> = BTreeSet::new();
    let mut deleted_profiles: BTreeSet<String> = BTreeSet::new();
    let mut put_profiles: HashMap<String, &ConnectionProfile> = HashMap::new();
    let mut put_tables: HashMap<String, &ConnectionTable> = HashMap::new();
    let mut edits = DependencyEdits::default();
    let mut batch_names: HashMap<(bool, String), String> = HashMap::new();
    for change in changes {
        let named = match change {
            Change::PutProfile(p) => Some((true, &p.name, p.id.as_str(), ObjectKind::Profile)),
            Change::PutTable(t) => Some((false, &t.name, t.id.as_str(), ObjectKind::Table)),
            _ => None,
        };
        if let Some((is_profile, name, id, kind)) = named
            && let Some(other) = batch_names.insert((is_profile, name_key(name)), id.to_string())
            && other != id
        {
            return Err(CatalogError::AlreadyExists {
                kind,
                name: name.clone(),
            });
        }
        match change {
            Change::PutProfile(p) => {
                if let Some(existing) = state.profile_id_named(&p.name)?
                    && existing != p.id.as_str()
                    && !deleted_profiles.contains(&existing)
                {
                    return Err(CatalogError::AlreadyExists {
                        kind: ObjectKind::Profile,
                        name: p.name.clone(),
                    });
                }
                put_profiles.insert(p.id.to_string(), p);
            }
            Change::PutTable(t) => {
                if let Some(existing) = state.table_id_named(&t.name)?
                    && existing != t.id.as_str()
                    && !deleted_tables.contains(&existing)
                {
                    return Err(CatalogError::AlreadyExists {
                        kind: ObjectKind::Table,
                        name: t.name.clone(),
                    });
                }
                if let Some(old) = state.table_record(&t.id)?
                    && let Some(p) = old.profile
                {
                    edits.remove.push((p, t.id.clone()));
                }
                if let Some(p) = &t.profile {
                    let known = put_profiles.contains_key(p.as_str())
                        || (state.table_profile_exists(p.as_str())?
                            && !deleted_profiles.contains(p.as_str()));
                    if !known {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Profile,
                            name: p.to_string(),
                        });
                    }
                    edits.add.push((p.clone(), t.id.clone()));
                }
                put_tables.insert(t.id.to_string(), t);
            }
            Change::DeleteTable(id) => {
                let Some(old) = state.table_record(id)? else {
                    return Err(CatalogError::NotFound {
                        kind: ObjectKind::Table,
                        name: id.to_string(),
                    });
                };
                if let Some(p) = old.profile {
                    edits.remove.push((p, id.clone()));
                }
                deleted_tables.insert(id.to_string());
            }
            Change::PutDefinition { .. } | Change::DeleteDefinition(..) => {}
            Change::DeleteProfile(id) => {
                if !state.profile_exists(id.as_str())? {
                    return Err(CatalogError::NotFound {
                        kind: ObjectKind::Profile,
                        name: id.to_string(),
                    });
                }
                deleted_profiles.insert(id.to_string());
            }
        }
    }
    for pid in &deleted_profiles {
        let Some(profile_id) = ProfileId::parse(pid) else {
            return Err(CatalogError::Storage(format!("bad profile id '{pid}'")));
        };
        let mut users: Vec<String> = Vec::new();
        for tid in state.tables_using(&profile_id)? {
            let gone = deleted_tables.contains(tid.as_str())
                || put_tables
                    .get(tid.as_str())
                    .is_some_and(|t| t.profile.as_ref() != Some(&profile_id));
            if !gone && let Some(t) = state.table_record(&tid)? {
                users.push(t.name);
            }
        }
        users.extend(
            put_tables
                .values()
                .filter(|t| t.profile.as_ref() == Some(&profile_id))
                .map(|t| t.name.clone()),
        );
        if !users.is_empty() {
            let name = state
                .profile_record(&profile_id)?
                .map(|p| p.name)
                .unwrap_or_else(|| pid.clone());
            users.sort();
            return Err(CatalogError::ProfileInUse {
                profile: name,
                tables: users,
            });
        }
    }
    Ok(edits)
}
