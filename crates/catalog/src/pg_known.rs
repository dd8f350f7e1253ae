//! What a PostgreSQL catalog's writer already knows: the profiles its read-aheads found,
//! each with its key's version, so that a group that only creates tables can be checked
//! without reading first (`Prefetched::guessed`).
//!
//! Nothing here is trusted: the write claims each profile's key at the version known
//! (a profile's every change bumps it) and every new table's keys as absent, so a guess
//! gone stale writes nothing and the group is checked again on what it reads.

use std::collections::HashMap;

/// The most profiles remembered; past it, the writer starts again from nothing, so the
/// memory stays bounded however many profiles a catalog holds.
const MAX_KNOWN: usize = 4096;

/// A profile as a read-ahead found it.
#[derive(Debug, Clone)]
pub(crate) struct KnownProfile {
    /// The version of its key (`pg_keys::profile`) when its record was read.
    pub(crate) version: i64,
    /// Its record's JSON text.
    pub(crate) record: String,
}

/// The profiles a writer knows, by id.
#[derive(Debug, Default)]
pub(crate) struct KnownProfiles {
    by_id: HashMap<String, KnownProfile>,
}

impl KnownProfiles {
    /// Remember profile `id` as read at `version`.
    pub(crate) fn learn(&mut self, id: &str, version: i64, record: &str) {
        if self.by_id.len() >= MAX_KNOWN && !self.by_id.contains_key(id) {
            self.by_id.clear();
        }
        let known = KnownProfile {
            version,
            record: record.to_string(),
        };
        self.by_id.insert(id.to_string(), known);
    }

    /// Profile `id`, if known.
    pub(crate) fn get(&self, id: &str) -> Option<&KnownProfile> {
        self.by_id.get(id)
    }

    /// Forget profile `id` (this writer changed it).
    pub(crate) fn forget(&mut self, id: &str) {
        self.by_id.remove(id);
    }

    /// Forget everything (a guess went stale: another process is writing).
    pub(crate) fn clear(&mut self) {
        self.by_id.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_stays_bounded_however_many_profiles_are_learned() {
        let mut known = KnownProfiles::default();
        for i in 0..MAX_KNOWN * 3 {
            known.learn(&format!("cp_{i}"), 1, "{}");
            assert!(known.by_id.len() <= MAX_KNOWN);
        }
        let last = format!("cp_{}", MAX_KNOWN * 3 - 1);
        assert_eq!(known.get(&last).map(|k| k.version), Some(1));
        known.learn(&last, 2, "{}");
        assert_eq!(known.get(&last).map(|k| k.version), Some(2));
        known.forget(&last);
        assert!(known.get(&last).is_none());
    }
}
