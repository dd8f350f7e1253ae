//! A whole group's writes to the PostgreSQL catalog in one statement: the claim of its
//! keys (only if each still has the version its checks read, `pg_keys`), every insert,
//! upsert and delete as arrays (a lone table as a row of values) and the bump of the
//! writer's version slot, so a group costs one round trip however many batches it
//! holds. A group that touches one
//! row twice (possible within a batch, where order matters) is written change by change
//! instead.

use crate::pg_compose::Composed;
use crate::pg_conn::PgConn;
use crate::pg_keys::{self as keys, Claim, lost_race};
use crate::pg_write::CheckedBatch;
use crate::store::{Change, name_key};
use std::collections::{HashMap, HashSet};
use tributary_types::Dependency;

/// What [`write_group`] came to.
pub(crate) enum Bulk {
    /// Written.
    Written,
    /// Nothing written: a key the checks read has moved on, or the statement lost a
    /// race PostgreSQL caught (`pg_keys::lost_race`).
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

/// Write `group` if its keys are still as its checks read them (`claim`, with the
/// writer's version `slot`), and bump the slot, in one statement: the claim
/// (`Claim::ctes`), then a part for each kind of row the group writes, each run only if
/// the claim's last part, `v`, has a row.
pub(crate) fn write_group(
    conn: &mut PgConn,
    group: &[CheckedBatch],
    claim: &Claim<'_>,
    slot: i32,
) -> Result<Bulk, postgres::Error> {
    let Some(cols) = Columns::of(group) else {
        return Ok(Bulk::ChangeByChange);
    };
    let (removed, added) = reader_edits(group);
    let (removed_deps, removed_readers): (Vec<&str>, Vec<&str>) = removed.into_iter().unzip();
    let (added_deps, added_readers): (Vec<&str>, Vec<&str>) = added.into_iter().unzip();
    let mut c = Composed::default();
    let mut ctes = claim.ctes(&mut c, &slot);
    const GATE: &str = "EXISTS (SELECT FROM v)";
    if !cols.deleted_profiles.is_empty() {
        let ids = c.param(&cols.deleted_profiles);
        ctes.push(format!(
            "dp AS (DELETE FROM tributary_profiles WHERE id = ANY({ids}) AND {GATE})"
        ));
    }
    if !cols.profile_ids.is_empty() {
        let (ids, names, records) = (
            c.param(&cols.profile_ids),
            c.param(&cols.profile_names),
            c.param(&cols.profile_records),
        );
        ctes.push(format!(
            "pp AS (INSERT INTO tributary_profiles (id, name_key, record)
             SELECT * FROM unnest({ids}::text[], {names}::text[], {records}::text[]) WHERE {GATE}
             ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, record = EXCLUDED.record)"
        ));
    }
    if !cols.deleted_tables.is_empty() {
        let ids = c.param(&cols.deleted_tables);
        ctes.push(format!(
            "dt AS (DELETE FROM tributary_tables WHERE id = ANY({ids}) AND {GATE})"
        ));
    }
    if !cols.table_ids.is_empty() {
        // Tables whose id's key the claim creates have no row (a key without a row was
        // never written): a plain insert, cheaper than an upsert; a row there after all
        // breaks the primary key, a lost race. (`Claim`'s lists are in key order.)
        let all_new = cols.table_ids.iter().all(|id| {
            claim
                .create
                .binary_search(&keys::table(id).as_str())
                .is_ok()
        });
        let upsert = if all_new {
            ""
        } else {
            "ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, name = EXCLUDED.name,
               profile_id = EXCLUDED.profile_id, created_at = EXCLUDED.created_at,
               record = EXCLUDED.record"
        };
        // One table (a statement's usual group) as a row of values: the server sets up
        // no function scan over six arrays.
        let one = (
            cols.table_ids.as_slice(),
            cols.table_name_keys.as_slice(),
            cols.table_names.as_slice(),
            cols.table_profiles.as_slice(),
            cols.table_created.as_slice(),
            cols.table_records.as_slice(),
        );
        let rows = if let ([id], [name_key], [name], [profile], [created], [record]) = one {
            format!(
                "SELECT {}::text, {}::text, {}::text, {}::text, {}::int8, {}::text",
                c.param(id),
                c.param(name_key),
                c.param(name),
                c.param(profile),
                c.param(created),
                c.param(record)
            )
        } else {
            format!(
                "SELECT * FROM unnest({}::text[], {}::text[], {}::text[], {}::text[], {}::int8[], {}::text[])",
                c.param(&cols.table_ids),
                c.param(&cols.table_name_keys),
                c.param(&cols.table_names),
                c.param(&cols.table_profiles),
                c.param(&cols.table_created),
                c.param(&cols.table_records)
            )
        };
        ctes.push(format!(
            "pt AS (INSERT INTO tributary_tables (id, name_key, name, profile_id, created_at, record)
             {rows} WHERE {GATE} {upsert})"
        ));
    }
    if !cols.deleted_definitions.is_empty() {
        let keys = c.param(&cols.deleted_definitions);
        ctes.push(format!(
            "dd AS (DELETE FROM tributary_definitions WHERE key = ANY({keys}) AND {GATE})"
        ));
    }
    if !cols.definition_keys.is_empty() {
        let (keys, records) = (
            c.param(&cols.definition_keys),
            c.param(&cols.definition_records),
        );
        ctes.push(format!(
            "pd AS (INSERT INTO tributary_definitions (key, record)
             SELECT * FROM unnest({keys}::text[], {records}::text[]) WHERE {GATE}
             ON CONFLICT (key) DO UPDATE SET record = EXCLUDED.record)"
        ));
    }
    if !removed_deps.is_empty() {
        let (deps, readers) = (c.param(&removed_deps), c.param(&removed_readers));
        ctes.push(format!(
            "dr AS (DELETE FROM tributary_readers
             WHERE (dependency, reader) IN (SELECT * FROM unnest({deps}::text[], {readers}::text[]))
               AND {GATE})"
        ));
    }
    if !added_deps.is_empty() {
        let (deps, readers) = (c.param(&added_deps), c.param(&added_readers));
        ctes.push(format!(
            "ar AS (INSERT INTO tributary_readers (dependency, reader)
             SELECT * FROM unnest({deps}::text[], {readers}::text[]) WHERE {GATE}
             ON CONFLICT DO NOTHING)"
        ));
    }
    let sql = format!("WITH {}\nSELECT version FROM v", ctes.join(",\n"));
    match conn.query_opt(&sql, c.params()) {
        Ok(Some(_)) => Ok(Bulk::Written),
        Ok(None) => Ok(Bulk::Stale),
        Err(e) if lost_race(&e) => Ok(Bulk::Stale),
        Err(e) => Err(e),
    }
}
