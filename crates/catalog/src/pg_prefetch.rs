//! What a group's checks will ask the PostgreSQL catalog, read in one query before they
//! run. Batches in a group have disjoint footprints, so the state before the group is the
//! state every check in it sees. The rules (`record_rules`, `definition_rules`) ask by
//! name, id and key; for each key asked here the answer is known, present or absent, and
//! a question about any other key falls through to a query of its own (`None` below).

use crate::pg_conn::PgConn;
use crate::store::{Change, name_key};
use std::collections::{HashMap, HashSet};
use tributary_types::{Dependency, Namespace};

/// The keys a group's checks will ask about.
#[derive(Debug, Default)]
struct Wanted {
    table_ids: HashSet<String>,
    table_names: HashSet<String>,
    /// Profiles whose tables are asked for (a profile dropped).
    table_profiles: HashSet<String>,
    profile_ids: HashSet<String>,
    profile_names: HashSet<String>,
    definition_keys: HashSet<String>,
    reader_dependencies: HashSet<String>,
}

impl Wanted {
    fn of(batches: &[Vec<Change>]) -> Self {
        let mut w = Wanted::default();
        for change in batches.iter().flatten() {
            match change {
                Change::PutProfile(p) => {
                    w.profile_ids.insert(p.id.to_string());
                    w.profile_names.insert(name_key(&p.name));
                }
                Change::DeleteProfile(id) => {
                    w.profile_ids.insert(id.to_string());
                    w.table_profiles.insert(id.to_string());
                }
                Change::PutTable(t) => {
                    w.table_ids.insert(t.id.to_string());
                    w.table_names.insert(name_key(&t.name));
                    w.definition_keys
                        .insert(Dependency::relation(&t.name).key());
                    if let Some(p) = &t.profile {
                        w.profile_ids.insert(p.to_string());
                    }
                }
                Change::DeleteTable(id) => {
                    w.table_ids.insert(id.to_string());
                }
                Change::PutDefinition { definition, .. } => {
                    w.definition_keys.insert(definition.key());
                    for read in &definition.reads {
                        w.definition_keys.insert(read.key());
                        if read.namespace == Namespace::Relation {
                            w.table_names.insert(name_key(&read.name));
                        }
                    }
                }
                Change::DeleteDefinition(kind, name) => {
                    let key = Dependency {
                        namespace: kind.namespace(),
                        name: name.clone(),
                    }
                    .key();
                    w.definition_keys.insert(key.clone());
                    w.reader_dependencies.insert(key);
                }
            }
        }
        w
    }

    fn list(set: &HashSet<String>) -> Vec<&str> {
        set.iter().map(String::as_str).collect()
    }
}

/// A table row read ahead.
#[derive(Debug)]
struct TableRow {
    id: String,
    name: String,
    profile_id: Option<String>,
    /// Present when the row was asked for by id or name (not only by its profile).
    record: Option<String>,
}

/// The answers read ahead for one group.
#[derive(Debug, Default)]
pub(crate) struct Prefetched {
    wanted: Wanted,
    tables: HashMap<String, TableRow>,
    table_ids_by_name: HashMap<String, String>,
    profiles: HashMap<String, String>,
    profile_ids_by_name: HashMap<String, String>,
    definitions: HashMap<String, String>,
    readers: HashMap<String, Vec<String>>,
    /// The catalog's version in the same snapshot: a write checked against these answers
    /// is only valid while the version is still this one.
    /// `None` if the version row is missing (a damaged catalog).
    pub(crate) version: Option<i64>,
}

// One branch per index, so that even the generic plan of this prepared statement looks
// each key up by its index (an OR of `= ANY` conditions is planned as a scan).
const PREFETCH: &str = "
SELECT 't', id, name_key, name, profile_id, record FROM tributary_tables WHERE id = ANY($1)
UNION ALL
SELECT 't', id, name_key, name, profile_id, record FROM tributary_tables WHERE name_key = ANY($2)
UNION ALL
SELECT 't', id, name_key, name, profile_id, NULL FROM tributary_tables WHERE profile_id = ANY($3)
UNION ALL
SELECT 'p', id, name_key, NULL, NULL, record FROM tributary_profiles WHERE id = ANY($4)
UNION ALL
SELECT 'p', id, name_key, NULL, NULL, record FROM tributary_profiles WHERE name_key = ANY($5)
UNION ALL
SELECT 'd', key, NULL, NULL, NULL, record FROM tributary_definitions WHERE key = ANY($6)
UNION ALL
SELECT 'r', dependency, reader, NULL, NULL, NULL
  FROM tributary_readers WHERE dependency = ANY($7)
UNION ALL
SELECT 'v', version::text, NULL, NULL, NULL, NULL FROM tributary_state WHERE id = 1";

impl Prefetched {
    /// Read what `batches` will be checked against, and the catalog's version, in one
    /// round trip and one snapshot.
    pub(crate) fn read(
        conn: &mut PgConn,
        batches: &[Vec<Change>],
    ) -> Result<Self, postgres::Error> {
        let wanted = Wanted::of(batches);
        let rows = conn.query(
            PREFETCH,
            &[
                &Wanted::list(&wanted.table_ids),
                &Wanted::list(&wanted.table_names),
                &Wanted::list(&wanted.table_profiles),
                &Wanted::list(&wanted.profile_ids),
                &Wanted::list(&wanted.profile_names),
                &Wanted::list(&wanted.definition_keys),
                &Wanted::list(&wanted.reader_dependencies),
            ],
        )?;
        let mut p = Prefetched {
            wanted,
            ..Prefetched::default()
        };
        for row in rows {
            let kind: &str = row.try_get(0)?;
            let key: String = row.try_get(1)?;
            match kind {
                "t" => {
                    let name_key: String = row.try_get(2)?;
                    p.table_ids_by_name.insert(name_key, key.clone());
                    let table = TableRow {
                        id: key.clone(),
                        name: row.try_get(3)?,
                        profile_id: row.try_get(4)?,
                        record: row.try_get(5)?,
                    };
                    // A row found by its profile comes without its record: keep the
                    // one found by id or name.
                    let known = p.tables.get(&key).is_some_and(|t| t.record.is_some());
                    if !known {
                        p.tables.insert(key, table);
                    }
                }
                "p" => {
                    let name_key: String = row.try_get(2)?;
                    p.profile_ids_by_name.insert(name_key, key.clone());
                    p.profiles.insert(key, row.try_get(5)?);
                }
                "d" => {
                    p.definitions.insert(key, row.try_get(5)?);
                }
                "v" => p.version = key.parse().ok(),
                _ => {
                    let reader: String = row.try_get(2)?;
                    p.readers.entry(key).or_default().push(reader);
                }
            }
        }
        for readers in p.readers.values_mut() {
            readers.sort();
        }
        Ok(p)
    }

    /// The id of the table named `name_key`, if that name was read ahead.
    pub(crate) fn table_id_named(&self, name_key: &str) -> Option<Option<String>> {
        self.wanted
            .table_names
            .contains(name_key)
            .then(|| self.table_ids_by_name.get(name_key).cloned())
    }

    /// The record text of table `id`, if that id was read ahead.
    pub(crate) fn table_record(&self, id: &str) -> Option<Option<&str>> {
        if !self.wanted.table_ids.contains(id) {
            return None;
        }
        Some(self.tables.get(id).and_then(|t| t.record.as_deref()))
    }

    /// The name of table `id`, if that id was read ahead.
    pub(crate) fn table_name(&self, id: &str) -> Option<Option<String>> {
        self.wanted
            .table_ids
            .contains(id)
            .then(|| self.tables.get(id).map(|t| t.name.clone()))
    }

    /// The ids of the tables using `profile`, if they were read ahead.
    pub(crate) fn tables_using(&self, profile: &str) -> Option<Vec<String>> {
        self.wanted.table_profiles.contains(profile).then(|| {
            let mut ids: Vec<String> = self
                .tables
                .values()
                .filter(|t| t.profile_id.as_deref() == Some(profile))
                .map(|t| t.id.clone())
                .collect();
            ids.sort();
            ids
        })
    }

    /// The id of the profile named `name_key`, if that name was read ahead.
    pub(crate) fn profile_id_named(&self, name_key: &str) -> Option<Option<String>> {
        self.wanted
            .profile_names
            .contains(name_key)
            .then(|| self.profile_ids_by_name.get(name_key).cloned())
    }

    /// The record text of profile `id`, if that id was read ahead.
    pub(crate) fn profile_record(&self, id: &str) -> Option<Option<&str>> {
        self.wanted
            .profile_ids
            .contains(id)
            .then(|| self.profiles.get(id).map(String::as_str))
    }

    /// The record text of the definition `key`, if that key was read ahead.
    pub(crate) fn definition(&self, key: &str) -> Option<Option<&str>> {
        self.wanted
            .definition_keys
            .contains(key)
            .then(|| self.definitions.get(key).map(String::as_str))
    }

    /// The keys of the definitions reading `dependency`, if they were read ahead.
    pub(crate) fn reader_keys(&self, dependency: &str) -> Option<Vec<String>> {
        self.wanted
            .reader_dependencies
            .contains(dependency)
            .then(|| self.readers.get(dependency).cloned().unwrap_or_default())
    }
}
