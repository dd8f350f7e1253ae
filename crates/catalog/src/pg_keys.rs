//! The keys a PostgreSQL catalog's writes are checked and serialised by.
//!
//! Every question a batch's checks ask (`record_rules`, `definition_rules`) is answered
//! under one key, and every change bumps the keys whose answers it changes, in the same
//! statement. A write reads each key's version with its answer (or before it), and
//! commits only if every key it read still has that version, locking them as it checks
//! (`CLAIM`): the keys it writes exclusively, the ones it only read shared. So writes
//! whose keys do not meet commit side by side, and a write whose answers went stale
//! writes nothing and is checked again.
//!
//! One question is a range, not a point: the tables using a profile. And one answer
//! needs no key: that the profile a table is put on exists. Creating a table claims
//! nothing of its profile (many tables are created on one profile at once): the foreign
//! key from tables to profiles fails whichever of a creation and the profile's deletion
//! commits second, a failure that counts as a conflict like a stale key; checked again,
//! the deletion is refused as in use, or the creation as naming no profile.
//!
//! A key without a row was never written, so nothing exists under it (every write
//! creates the rows of the keys it claims; migration 3 made those of what older schemas
//! held). That lets a group of creations guess its new names and ids free and claim
//! them as such without reading first.

use crate::pg_compose::Composed;
use crate::store::name_key;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// Slots of the catalog's version counter (`tributary_version_slots`, migration 2).
pub(crate) const VERSION_SLOTS: i32 = 64;

/// The key of a profile's record (and of the set of tables using it).
pub(crate) fn profile(id: &str) -> String {
    format!("p:{id}")
}

/// The key of which profile has a name.
pub(crate) fn profile_name(name: &str) -> String {
    format!("pn:{}", name_key(name))
}

/// The key of a table's record.
pub(crate) fn table(id: &str) -> String {
    format!("t:{id}")
}

/// The key of which table has a name.
pub(crate) fn table_name(name: &str) -> String {
    format!("tn:{}", name_key(name))
}

/// The key of a definition (its [`tributary_types::Dependency::key`]).
pub(crate) fn definition(key: &str) -> String {
    format!("d:{key}")
}

/// The key of the set of definitions reading a dependency key.
pub(crate) fn readers(dependency_key: &str) -> String {
    format!("rd:{dependency_key}")
}

/// The keys one batch (or a group of them) read, with the version each had when read
/// (`None`: no row yet), and the keys it writes (each also read).
#[derive(Debug, Default)]
pub(crate) struct KeySet {
    seen: BTreeMap<String, Option<i64>>,
    written: BTreeSet<String>,
    /// Two batches of the group read one key at different versions: the earlier one's
    /// answer may be stale.
    torn: bool,
}

impl KeySet {
    /// Record that `key` was read at `version`.
    pub(crate) fn read(&mut self, key: String, version: Option<i64>) {
        if let Some(before) = self.seen.insert(key, version)
            && before != version
        {
            self.torn = true;
        }
    }

    /// Record that `key` (already read) is written.
    pub(crate) fn write(&mut self, key: String) {
        self.written.insert(key);
    }

    /// Whether `key` was read.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.seen.contains_key(key)
    }

    /// Add another batch's keys.
    pub(crate) fn merge(&mut self, other: KeySet) {
        self.torn |= other.torn;
        for (key, version) in other.seen {
            self.read(key, version);
        }
        self.written.extend(other.written);
    }

    /// Whether the keys were read at two versions (the group must be checked again).
    pub(crate) fn torn(&self) -> bool {
        self.torn
    }

    /// The parameters of [`CLAIM`]: keys to bump, with the version read; keys without a
    /// row, to create; keys only read, with the version read. Each list in key order.
    pub(crate) fn claim(&self) -> Claim<'_> {
        let mut c = Claim::default();
        for (key, version) in &self.seen {
            match version {
                None => c.create.push(key),
                Some(v) if self.written.contains(key) => {
                    c.bump.push(key);
                    c.bump_seen.push(*v);
                }
                Some(v) => {
                    c.share.push(key);
                    c.share_seen.push(*v);
                }
            }
        }
        c
    }
}

/// A group's keys, by what claiming them does.
#[derive(Debug, Default)]
pub(crate) struct Claim<'a> {
    pub(crate) bump: Vec<&'a str>,
    pub(crate) bump_seen: Vec<i64>,
    pub(crate) create: Vec<&'a str>,
    pub(crate) share: Vec<&'a str>,
    pub(crate) share_seen: Vec<i64>,
}

impl<'a> Claim<'a> {
    /// The common table expressions that claim the keys, then bump the writer's version
    /// `slot`, for a statement composed in `c`: the last, `v`, has a row only if every
    /// key still had the version read; the statement gates its writes on it.
    ///
    /// A key read and written is bumped only at its version (`kw`), after waiting for any
    /// writer holding it; a key without a row is created (`ka`), which waits for, and
    /// then fails against, another writer creating it; a key only read is locked shared
    /// at its version (`kr`). Only the parts with keys are composed.
    pub(crate) fn ctes(&'a self, c: &mut Composed<'a>, slot: &'a i32) -> Vec<String> {
        let mut ctes = Vec::new();
        let mut checks = Vec::new();
        if !self.bump.is_empty() {
            let (keys, seen) = (c.param(&self.bump), c.param(&self.bump_seen));
            ctes.push(format!(
                "kw AS (UPDATE tributary_keys k SET version = k.version + 1
                 FROM unnest({keys}::text[], {seen}::int8[]) AS u(key, seen)
                 WHERE k.key = u.key AND k.version = u.seen RETURNING k.key)"
            ));
            checks.push(format!(
                "(SELECT count(*) FROM kw) = cardinality({keys}::text[])"
            ));
        }
        if !self.create.is_empty() {
            let keys = c.param(&self.create);
            ctes.push(format!(
                "ka AS (INSERT INTO tributary_keys (key, version)
                 SELECT key, 1 FROM unnest({keys}::text[]) AS u(key)
                 ON CONFLICT (key) DO NOTHING RETURNING key)"
            ));
            checks.push(format!(
                "(SELECT count(*) FROM ka) = cardinality({keys}::text[])"
            ));
        }
        if !self.share.is_empty() {
            let (keys, seen) = (c.param(&self.share), c.param(&self.share_seen));
            ctes.push(format!(
                "kr AS (SELECT k.key FROM tributary_keys k
                 JOIN unnest({keys}::text[], {seen}::int8[]) AS u(key, seen) ON k.key = u.key
                 WHERE k.version = u.seen FOR SHARE OF k)"
            ));
            checks.push(format!(
                "(SELECT count(*) FROM kr) = cardinality({keys}::text[])"
            ));
        }
        let ok = if checks.is_empty() {
            "true".to_string()
        } else {
            checks.join(" AND ")
        };
        let slot = c.param(slot);
        ctes.push(format!(
            "v AS (UPDATE tributary_version_slots SET version = version + 1
             WHERE slot = {slot} AND ({ok}) RETURNING version)"
        ));
        ctes
    }
}

/// A statement claiming `claim`'s keys and bumping `slot`, writing nothing else (the
/// change-by-change path's first statement, in a transaction): one row if claimed.
pub(crate) fn claim_only<'a>(claim: &'a Claim<'a>, slot: &'a i32) -> (String, Composed<'a>) {
    let mut c = Composed::default();
    let ctes = claim.ctes(&mut c, slot);
    (
        format!("WITH {}\nSELECT version FROM v", ctes.join(",\n")),
        c,
    )
}

/// Tell the other processes the catalog changed: a statement of its own, sent once the
/// write has committed. A transaction that notifies holds a database-wide lock through
/// its commit (PostgreSQL queues notifications in commit order), WAL flush included, so
/// notifying from the write itself made every process's writes commit one at a time;
/// this statement writes nothing, so it holds the lock for a moment.
pub(crate) const NOTIFY: &str = "SELECT pg_notify($1, '')";

/// Lock the keys `$1` in key order, creating their rows (at version 0), and keep them to
/// the end of the transaction: a writer that met a conflict holds what it will read
/// before it reads it, so its next attempt meets none on those keys.
pub(crate) const LOCK_KEYS: &str = "
INSERT INTO tributary_keys (key, version)
SELECT key, 0 FROM unnest($1::text[]) AS u(key) ORDER BY key
ON CONFLICT (key) DO UPDATE SET version = tributary_keys.version";

/// Claim a version slot for a writing session: the first of the catalog's slots no other
/// live session holds (a session-level advisory lock, released when the connection
/// ends), or, when all are held, one shared by backend pid.
pub(crate) static CLAIM_SLOT: LazyLock<String> = LazyLock::new(|| {
    let last = VERSION_SLOTS - 1;
    format!(
        "SELECT coalesce(
           (SELECT s FROM generate_series(0, {last}) AS s
             WHERE pg_try_advisory_lock(hashtext($1), s) LIMIT 1),
           pg_backend_pid() % {VERSION_SLOTS})"
    )
});

/// The catalog's version: the sum of the slots, which every commit raises by one.
pub(crate) const VERSION: &str =
    "SELECT coalesce(sum(version), 0)::int8 FROM tributary_version_slots";

/// Whether a failed write statement lost a race rather than met a fault: a deadlock or
/// serialisation failure, or a unique or foreign key the keys did not foresee (a
/// profile deleted while a table was created on it). The group is checked again.
pub(crate) fn lost_race(e: &postgres::Error) -> bool {
    use postgres::error::SqlState;
    e.code().is_some_and(|code| {
        [
            SqlState::T_R_DEADLOCK_DETECTED,
            SqlState::T_R_SERIALIZATION_FAILURE,
            SqlState::UNIQUE_VIOLATION,
            SqlState::FOREIGN_KEY_VIOLATION,
        ]
        .contains(code)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_sort_keys_by_what_happens_to_them() {
        let mut a = KeySet::default();
        a.read(table("1"), None);
        a.read(profile("p"), Some(4));
        a.read(table_name("Orders"), Some(2));
        a.write(table_name("orders"));
        a.write(table("1"));
        let c = a.claim();
        assert_eq!(c.create, ["t:1"]);
        assert_eq!((c.bump, c.bump_seen), (vec!["tn:orders"], vec![2]));
        assert_eq!((c.share, c.share_seen), (vec!["p:p"], vec![4]));
        assert!(!a.torn());
    }

    #[test]
    fn one_key_read_at_two_versions_tears_the_group() {
        let mut a = KeySet::default();
        a.read(profile("p"), Some(4));
        let mut b = KeySet::default();
        b.read(profile("p"), Some(4));
        a.merge(b);
        assert!(!a.torn());
        let mut c = KeySet::default();
        c.read(profile("p"), Some(5));
        a.merge(c);
        assert!(a.torn());
    }
}
