//! A whole group's writes to the PostgreSQL catalog in one statement: every upsert and
//! delete as arrays, the version bump (only if the version is still the one the group
//! was checked against) and the notification, so a group costs one round trip however
//! many batches it holds. A group that touches one key twice (possible
//! within a batch, where order matters) is written change by change instead (`None`).

use crate::pg_conn::PgConn;
use crate::pg_write::CheckedBatch;
use crate::store::{Change, name_key};
use std::collections::{HashMap, HashSet};
use tributary_types::Dependency;

// `v` bumps the version only if it is still the one the group was checked against ($20;
// NULL when the writer holds the version row's lock). Every other part runs only if `v`
// did, so a group whose checks went stale writes nothing. The version row's lock, taken
// by `v` and kept to the commit, orders this group's commit among every other writer's.
const WRITE_GROUP: &str = "
WITH
 v AS (UPDATE tributary_state SET version = version + 1
       WHERE id = 1 AND ($20::int8 IS NULL OR version = $20) RETURNING version),
 dp AS (DELETE FROM tributary_profiles WHERE id = ANY($1) AND EXISTS (SELECT FROM v)),
 pp AS (INSERT INTO tributary_profiles (id, name_key, record)
        SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) WHERE EXISTS (SELECT FROM v)
        ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, record = EXCLUDED.record),
 dt AS (DELETE FROM tributary_tables WHERE id = ANY($5) AND EXISTS (SELECT FROM v)),
 pt AS (INSERT INTO tributary_tables (id, name_key, name, profile_id, created_at, record)
        SELECT * FROM unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::int8[], $11::text[])
        WHERE EXISTS (SELECT FROM v)
        ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, name = EXCLUDED.name,
          profile_id = EXCLUDED.profile_id, created_at = EXCLUDED.created_at,
          record = EXCLUDED.record),
 dd AS (DELETE FROM tributary_definitions WHERE key = ANY($12) AND EXISTS (SELECT FROM v)),
 pd AS (INSERT INTO tributary_definitions (key, record)
        SELECT * FROM unnest($13::text[], $14::text[]) WHERE EXISTS (SELECT FROM v)
        ON CONFLICT (key) DO UPDATE SET record = EXCLUDED.record),
 dr AS (DELETE FROM tributary_readers
        WHERE (dependency, reader) IN (SELECT * FROM unnest($15::text[], $16::text[]))
          AND EXISTS (SELECT FROM v)),
 ar AS (INSERT INTO tributary_readers (dependency, reader)
        SELECT * FROM unnest($17::text[], $18::text[]) WHERE EXISTS (SELECT FROM v)
        ON CONFLICT DO NOTHING)
SELECT version, pg_notify($19, version::text) FROM v";

/// Bump the version if it is still `$1` (or whatever it is, `$1` NULL); the new version,
/// or no row. The change-by-change path's first statement.
pub(crate) const BUMP_VERSION: &str = "
UPDATE tributary_state SET version = version + 1
 WHERE id = 1 AND ($1::int8 IS NULL OR version = $1) RETURNING version";

/// What [`write_group`] came to.
pub(crate) enum Bulk {
    /// Written, at this new version.
    Written(i64),
    /// Nothing written: the version had moved on.
    Stale,
    /// Nothing written: the group touches a key twice, so it must be written change by
    /// change.
    ChangeByChange,
}

/// The group's writes, column by column.
#[derive(Default)]
struct Columns<'a> {
    deleted_profiles: Vec<&'a str>,
    profile_ids: Vec<&'a str>,
    profile_names: Vec<String>,
    profile_records: Vec<&'a str>,
    deleted_tables: Vec<&'a str>,
    table_ids: Vec<&'a str>,
    table_name_keys: Vec<String>,
    table_names: Vec<&'a str>,
    table_profiles: Vec<Option<&'a str>>,
    table_created: Vec<i64>,
    table_records: Vec<&'a str>,
    deleted_definitions: Vec<String>,
    definition_keys: Vec<String>,
    definition_records: Vec<&'a str>,
}

impl<'a> Columns<'a> {
    /// The columns of `group`, or `None` when a key is written twice.
    fn of(group: &'a [CheckedBatch]) -> Option<Self> {
        let mut c = Columns::default();
        let mut seen: HashSet<String> = HashSet::new();
        let mut first = |key: String| seen.insert(key);
        for batch in group {
            for (change, record) in batch.changes.iter().zip(&batch.records) {
                let record = record.as_deref().unwrap_or_default();
                match change {
                    Change::PutProfile(p) => {
                        if !first(format!("p:{}", p.id)) {
                            return None;
                        }
                        c.profile_ids.push(p.id.as_str());
                        c.profile_names.push(name_key(&p.name));
                        c.profile_records.push(record);
                    }
                    Change::DeleteProfile(id) => {
                        if !first(format!("p:{id}")) {
                            return None;
                        }
                        c.deleted_profiles.push(id.as_str());
                    }
                    Change::PutTable(t) => {
                        if !first(format!("t:{}", t.id)) {
                            return None;
                        }
                        c.table_ids.push(t.id.as_str());
                        c.table_name_keys.push(name_key(&t.name));
                        c.table_names.push(&t.name);
                        c.table_profiles
                            .push(t.profile.as_ref().map(|p| p.as_str()));
                        c.table_created.push(t.created_at);
                        c.table_records.push(record);
                    }
                    Change::DeleteTable(id) => {
                        if !first(format!("t:{id}")) {
                            return None;
                        }
                        c.deleted_tables.push(id.as_str());
                    }
                    Change::PutDefinition { definition, .. } => {
                        let key = definition.key();
                        if !first(format!("d:{key}")) {
                            return None;
                        }
                        c.definition_keys.push(key);
                        c.definition_records.push(record);
                    }
                    Change::DeleteDefinition(kind, name) => {
                        let key = Dependency {
                            namespace: kind.namespace(),
                            name: name.clone(),
                        }
                        .key();
                        if !first(format!("d:{key}")) {
                            return None;
                        }
                        c.deleted_definitions.push(key);
                    }
                }
            }
        }
        Some(c)
    }
}

/// The reader-index rows removed and added by `group`, net: each batch removes its old
/// reads before adding its new ones, so a pair's last edit decides.
/// Reader-index rows, `(dependency, reader)`.
type ReaderRows<'a> = Vec<(&'a str, &'a str)>;

fn reader_edits(group: &[CheckedBatch]) -> (ReaderRows<'_>, ReaderRows<'_>) {
    let mut last: HashMap<(&str, &str), bool> = HashMap::new();
    for batch in group {
        for (d, r) in &batch.readers.remove {
            last.insert((d, r), false);
        }
        for (d, r) in &batch.readers.add {
            last.insert((d, r), true);
        }
    }
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for (pair, present) in last {
        if present {
            added.push(pair);
        } else {
            removed.push(pair);
        }
    }
    (removed, added)
}

/// Write `group`, bump the version and notify `channel`, in one statement, provided the
/// version is still `expected` (any, when `None`).
pub(crate) fn write_group(
    conn: &mut PgConn,
    group: &[CheckedBatch],
    channel: &str,
    expected: Option<i64>,
) -> Result<Bulk, postgres::Error> {
    let Some(c) = Columns::of(group) else {
        return Ok(Bulk::ChangeByChange);
    };
    let (removed, added) = reader_edits(group);
    let (removed_deps, removed_readers): (Vec<&str>, Vec<&str>) = removed.into_iter().unzip();
    let (added_deps, added_readers): (Vec<&str>, Vec<&str>) = added.into_iter().unzip();
    let row = conn.query_opt(
        WRITE_GROUP,
        &[
            &c.deleted_profiles,
            &c.profile_ids,
            &c.profile_names,
            &c.profile_records,
            &c.deleted_tables,
            &c.table_ids,
            &c.table_name_keys,
            &c.table_names,
            &c.table_profiles,
            &c.table_created,
            &c.table_records,
            &c.deleted_definitions,
            &c.definition_keys,
            &c.definition_records,
            &removed_deps,
            &removed_readers,
            &added_deps,
            &added_readers,
            &channel,
            &expected,
        ],
    )?;
    Ok(match row {
        Some(row) => Bulk::Written(row.try_get(0)?),
        None => Bulk::Stale,
    })
}
