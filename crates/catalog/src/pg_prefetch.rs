//! What a group's checks will ask the PostgreSQL catalog, read in one query before they
//! run, with the version of each answer's key (`pg_keys`) in the same snapshot. Batches
//! in a group have disjoint footprints, so the state before the group is the state every
//! check in it sees. The rules (`record_rules`, `definition_rules`) ask by name, id and
//! key; for each key asked here the answer is known, present or absent, and a question
//! about any other key falls through to a query of its own (`None` below).

use crate::pg_compose::Composed;
use crate::pg_conn::PgConn;
use crate::pg_keys as keys;
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
    /// Dependencies whose readers' key a definition's new reads will bump.
    read_dependencies: HashSet<String>,
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
                        w.read_dependencies.insert(read.key());
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

    /// The keys of the answers asked for (besides those of the rows found by id: see
    /// `compose`).
    fn keys(&self) -> HashSet<String> {
        let mut out = HashSet::new();
        out.extend(self.table_ids.iter().map(|id| keys::table(id)));
        out.extend(self.table_names.iter().map(|n| keys::table_name(n)));
        out.extend(self.table_profiles.iter().map(|id| keys::profile(id)));
        out.extend(self.profile_ids.iter().map(|id| keys::profile(id)));
        out.extend(self.profile_names.iter().map(|n| keys::profile_name(n)));
        out.extend(self.definition_keys.iter().map(|k| keys::definition(k)));
        let readers = self
            .reader_dependencies
            .iter()
            .chain(&self.read_dependencies);
        out.extend(readers.map(|k| keys::readers(k)));
        out
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
    profile_names_by_id: HashMap<String, String>,
    definitions: HashMap<String, String>,
    readers: HashMap<String, Vec<String>>,
    /// The keys looked up, each with its version if it has a row.
    keys_looked: HashSet<String>,
    /// Profiles taken to exist without reading them (see [`Prefetched::guessed`]).
    profiles_assumed: HashSet<String>,
    key_versions: HashMap<String, i64>,
}

/// The read-ahead query for `wanted`, composed of a branch for each kind of key asked.
/// One branch per index, so that even the generic plan of the prepared statement looks
/// each key up by its index (an OR of `= ANY` conditions is planned as a scan). Rows:
/// kind, key, then three columns that depend on the kind, then a record.
fn compose<'a>(wanted: &'a Lists<'a>) -> (String, Composed<'a>) {
    let mut c = Composed::default();
    let mut branches: Vec<String> = Vec::new();
    let mut add =
        |c: &mut Composed<'a>, list: &'a Vec<&'a str>, branch: &dyn Fn(&str) -> String| {
            if !list.is_empty() {
                let param = c.param(list);
                branches.push(branch(&param));
            }
        };
    add(&mut c, &wanted.table_ids, &|ids| {
        // With each table's row, the keys its write bumps besides its id's: its name's
        // (a table renamed or dropped frees its name) and its readers' (a dropped table
        // is asked what reads it).
        format!(
            "SELECT 't', id, name_key, name, profile_id, record
               FROM tributary_tables WHERE id = ANY({ids})
             UNION ALL
             SELECT 'k', k.key, k.version::text, NULL, NULL, NULL
               FROM tributary_tables t JOIN tributary_keys k
                 ON k.key IN ('tn:' || t.name_key, 'rd:r:' || t.name_key)
              WHERE t.id = ANY({ids})"
        )
    });
    add(&mut c, &wanted.table_names, &|names| {
        format!(
            "SELECT 't', id, name_key, name, profile_id, record
               FROM tributary_tables WHERE name_key = ANY({names})"
        )
    });
    add(&mut c, &wanted.table_profiles, &|profiles| {
        format!(
            "SELECT 't', id, name_key, name, profile_id, NULL
               FROM tributary_tables WHERE profile_id = ANY({profiles})"
        )
    });
    add(&mut c, &wanted.profile_ids, &|ids| {
        // And the key of each profile's name, which a rename or drop frees.
        format!(
            "SELECT 'p', id, name_key, NULL, NULL, record
               FROM tributary_profiles WHERE id = ANY({ids})
             UNION ALL
             SELECT 'k', k.key, k.version::text, NULL, NULL, NULL
               FROM tributary_profiles p JOIN tributary_keys k ON k.key = 'pn:' || p.name_key
              WHERE p.id = ANY({ids})"
        )
    });
    add(&mut c, &wanted.profile_names, &|names| {
        format!(
            "SELECT 'p', id, name_key, NULL, NULL, record
               FROM tributary_profiles WHERE name_key = ANY({names})"
        )
    });
    add(&mut c, &wanted.definition_keys, &|keys| {
        format!(
            "SELECT 'd', key, NULL, NULL, NULL, record
               FROM tributary_definitions WHERE key = ANY({keys})"
        )
    });
    add(&mut c, &wanted.reader_dependencies, &|deps| {
        format!(
            "SELECT 'r', dependency, reader, NULL, NULL, NULL
               FROM tributary_readers WHERE dependency = ANY({deps})"
        )
    });
    add(&mut c, &wanted.keys, &|keys| {
        format!(
            "SELECT 'k', key, version::text, NULL, NULL, NULL
               FROM tributary_keys WHERE key = ANY({keys})"
        )
    });
    (branches.join("\nUNION ALL\n"), c)
}

/// [`Wanted`] as the query's array parameters.
struct Lists<'a> {
    table_ids: Vec<&'a str>,
    table_names: Vec<&'a str>,
    table_profiles: Vec<&'a str>,
    profile_ids: Vec<&'a str>,
    profile_names: Vec<&'a str>,
    definition_keys: Vec<&'a str>,
    reader_dependencies: Vec<&'a str>,
    keys: Vec<&'a str>,
}

impl Prefetched {
    /// The keys of the answers [`read`](Self::read) asks for `batches` (besides those of
    /// the rows it finds by id).
    pub(crate) fn keys_of(batches: &[Vec<Change>]) -> HashSet<String> {
        Wanted::of(batches).keys()
    }

    /// Read what `batches` will be checked against, and the version of every key of the
    /// answers, in one round trip and one snapshot.
    pub(crate) fn read(
        conn: &mut PgConn,
        batches: &[Vec<Change>],
    ) -> Result<Self, postgres::Error> {
        let wanted = Wanted::of(batches);
        let keys_asked = wanted.keys();
        let lists = Lists {
            table_ids: Wanted::list(&wanted.table_ids),
            table_names: Wanted::list(&wanted.table_names),
            table_profiles: Wanted::list(&wanted.table_profiles),
            profile_ids: Wanted::list(&wanted.profile_ids),
            profile_names: Wanted::list(&wanted.profile_names),
            definition_keys: Wanted::list(&wanted.definition_keys),
            reader_dependencies: Wanted::list(&wanted.reader_dependencies),
            keys: Wanted::list(&keys_asked),
        };
        let (sql, composed) = compose(&lists);
        let rows = if sql.is_empty() {
            Vec::new()
        } else {
            conn.query(&sql, composed.params())?
        };
        drop(composed);
        drop(lists);
        let mut p = Prefetched {
            wanted,
            keys_looked: keys_asked,
            ..Prefetched::default()
        };
        let mut unreadable = Vec::new();
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
                    p.profile_ids_by_name.insert(name_key.clone(), key.clone());
                    p.profile_names_by_id.insert(key.clone(), name_key);
                    p.profiles.insert(key, row.try_get(5)?);
                }
                "d" => {
                    p.definitions.insert(key, row.try_get(5)?);
                }
                "k" => {
                    // The version comes as text (the branches share their columns'
                    // types); one that does not read as a number is not taken as
                    // known, so the check reads it on its own.
                    let version: String = row.try_get(2)?;
                    match version.parse() {
                        Ok(version) => {
                            p.key_versions.insert(key, version);
                        }
                        Err(_) => unreadable.push(key),
                    }
                }
                _ => {
                    let reader: String = row.try_get(2)?;
                    p.readers.entry(key).or_default().push(reader);
                }
            }
        }
        for readers in p.readers.values_mut() {
            readers.sort();
        }
        let by_id = p
            .tables
            .values()
            .filter(|t| p.wanted.table_ids.contains(&t.id));
        let derived: Vec<String> = by_id
            .flat_map(|t| {
                let relation = Dependency::relation(&t.name).key();
                [keys::table_name(&t.name), keys::readers(&relation)]
            })
            .chain(
                p.profile_names_by_id
                    .iter()
                    .filter(|(id, _)| p.wanted.profile_ids.contains(*id))
                    .map(|(_, name_key)| keys::profile_name(name_key)),
            )
            .collect();
        p.keys_looked.extend(derived);
        for key in &unreadable {
            p.keys_looked.remove(key);
        }
        Ok(p)
    }

    /// The answers a group that only creates tables would read, guessed without
    /// asking: each table's id, name and relation definition absent (their keys without
    /// a row), and each profile a table is put on present. `None` when the group does
    /// anything else, or puts one table twice (a batch whose second change builds on
    /// its first, written change by change).
    ///
    /// The write proves the guess or writes nothing: it claims the absent keys by
    /// creating their rows, which fails if any has one (a key without a row was never
    /// written, so nothing exists under it; migration 3 made the rows of what older
    /// schemas held), and each table's foreign key fails if its profile is gone.
    pub(crate) fn guessed(batches: &[Vec<Change>]) -> Option<Self> {
        let mut ids = HashSet::new();
        let mut profiles_assumed = HashSet::new();
        for change in batches.iter().flatten() {
            let Change::PutTable(t) = change else {
                return None;
            };
            if !ids.insert(t.id.as_str()) {
                return None;
            }
            if let Some(p) = &t.profile {
                profiles_assumed.insert(p.to_string());
            }
        }
        let mut wanted = Wanted::of(batches);
        wanted.profile_ids.clear();
        Some(Prefetched {
            keys_looked: wanted.keys(),
            wanted,
            profiles_assumed,
            ..Prefetched::default()
        })
    }

    /// Whether profile `id` exists, if read ahead or assumed.
    pub(crate) fn profile_exists(&self, id: &str) -> Option<bool> {
        if self.profiles_assumed.contains(id) {
            return Some(true);
        }
        self.profile_record(id).map(|r| r.is_some())
    }

    /// The version of `key` read ahead: `Some(None)` when it was looked up and has no
    /// row, `None` when it was not looked up.
    pub(crate) fn key_version(&self, key: &str) -> Option<Option<i64>> {
        self.keys_looked
            .contains(key)
            .then(|| self.key_versions.get(key).copied())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{new_profile_id, new_table_id};
    use tributary_types::{ConnectionTable, ConnectionType, ProfileId, TableId};

    fn table(name: &str, profile: Option<&ProfileId>) -> (String, Change) {
        let t = ConnectionTable {
            profile: profile.cloned(),
            ..ConnectionTable::new(new_table_id(), name, "kafka", ConnectionType::Source)
        };
        (t.id.to_string(), Change::PutTable(t))
    }

    #[test]
    fn creations_are_guessed_absent_on_profiles_taken_to_exist() {
        let prod = new_profile_id();
        let (id, change) = table("Orders", Some(&prod));
        let (bare_id, bare) = table("events", None);
        let p = Prefetched::guessed(&[vec![change], vec![bare]]).expect("guessed");
        for id in [&id, &bare_id] {
            assert_eq!(p.key_version(&keys::table(id)), Some(None));
            assert_eq!(p.table_record(id), Some(None));
            assert_eq!(p.table_name(id), Some(None));
        }
        for name in ["orders", "events"] {
            assert_eq!(p.key_version(&keys::table_name(name)), Some(None));
            assert_eq!(p.table_id_named(name), Some(None));
            let relation = Dependency::relation(name).key();
            assert_eq!(p.key_version(&keys::definition(&relation)), Some(None));
            assert_eq!(p.definition(&relation), Some(None));
        }
        let profile = prod.as_str();
        assert_eq!(p.profile_exists(profile), Some(true));
        // Nothing else is answered, the profile's record and key included: a question
        // about them reads.
        assert_eq!(p.profile_record(profile), None);
        assert_eq!(p.key_version(&keys::profile(profile)), None);
        assert_eq!(p.profile_exists(new_profile_id().as_str()), None);
        assert_eq!(p.reader_keys("r:orders"), None);
    }

    #[test]
    fn only_groups_that_create_each_table_once_are_guessed() {
        let prod = new_profile_id();
        let (id, on_prod) = table("b", Some(&prod));
        assert!(Prefetched::guessed(&[vec![on_prod.clone()]]).is_some());
        let dropped = Change::DeleteTable(TableId::parse(&id).expect("id"));
        assert!(Prefetched::guessed(&[vec![on_prod.clone()], vec![dropped]]).is_none());
        let profile = Change::DeleteProfile(prod.clone());
        assert!(Prefetched::guessed(&[vec![on_prod.clone(), profile]]).is_none());
        assert!(Prefetched::guessed(&[vec![on_prod.clone()], vec![on_prod]]).is_none());
    }

    /// A read-ahead answers whether a profile exists from the row it found.
    #[test]
    fn a_profile_read_ahead_exists_only_if_found() {
        let (found, missing) = (new_profile_id(), new_profile_id());
        let (_, a) = table("a", Some(&found));
        let (_, b) = table("b", Some(&missing));
        let mut p = Prefetched {
            wanted: Wanted::of(&[vec![a, b]]),
            ..Prefetched::default()
        };
        p.profiles.insert(found.to_string(), "{}".into());
        assert_eq!(p.profile_exists(found.as_str()), Some(true));
        assert_eq!(p.profile_exists(missing.as_str()), Some(false));
        assert_eq!(p.profile_exists(new_profile_id().as_str()), None);
    }

    /// The read-ahead derives the keys a table or profile row's change bumps in SQL
    /// (`'tn:' || name_key`, `'rd:r:' || name_key`, `'pn:' || name_key`); they must be
    /// the keys `pg_keys` names in Rust, or a key read ahead would look absent.
    #[test]
    fn keys_derived_in_sql_are_the_keys_pg_keys_names() {
        let name = "Orders_ÄÖ";
        let stored = name_key(name);
        assert_eq!(keys::table_name(name), format!("tn:{stored}"));
        assert_eq!(
            keys::readers(&Dependency::relation(name).key()),
            format!("rd:r:{stored}")
        );
        assert_eq!(keys::profile_name(&stored), format!("pn:{stored}"));
        assert_eq!(keys::profile_name(name), format!("pn:{stored}"));
    }
}
