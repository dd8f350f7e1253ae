//! A per-session cache of decoded connection tables, so a table read again is not
//! looked up and decoded again: a hit costs an atomic load, a lock, a hash probe and two
//! `Arc` clones. It
//! is valid for one catalog generation; any change anywhere (this process's, or one the
//! store reports from elsewhere) empties it. It holds a bounded number of tables.

use super::table::DecodedTable;
use std::collections::HashMap;
use std::sync::Mutex;

/// The most tables kept; past it, the cache starts over (a session planning against
/// more tables than this at once gains little from caching).
const MAX_ENTRIES: usize = 10_000;

/// Decoded tables by lowercase name, for one catalog generation.
#[derive(Debug, Default)]
pub(crate) struct ProviderCache {
    inner: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    generation: u64,
    tables: HashMap<String, DecodedTable>,
}

impl ProviderCache {
    /// The table cached for `name` at catalog generation `generation`.
    pub fn get(&self, name: &str, generation: u64) -> Option<DecodedTable> {
        let mut entries = self.inner.lock().ok()?;
        if entries.generation != generation {
            entries.generation = generation;
            entries.tables.clear();
            return None;
        }
        entries.tables.get(&key(name)).cloned()
    }

    /// Keep `table` for `name`, read at catalog generation `generation`.
    pub fn put(&self, name: &str, generation: u64, table: DecodedTable) {
        let Ok(mut entries) = self.inner.lock() else {
            return;
        };
        if entries.generation != generation {
            entries.generation = generation;
            entries.tables.clear();
        }
        if entries.tables.len() >= MAX_ENTRIES {
            entries.tables.clear();
        }
        entries.tables.insert(key(name), table);
    }
}

/// Names are case-insensitive, like the catalog's.
fn key(name: &str) -> String {
    if name.bytes().any(|b| b.is_ascii_uppercase()) || !name.is_ascii() {
        name.to_lowercase()
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::SessionShared;
    use crate::provider::table::ConnectionTableProvider;
    use std::sync::Arc;
    use tributary_catalog::OverlayStore;
    use tributary_types::{ConnectionTable, ConnectionType};

    fn provider() -> DecodedTable {
        let table = ConnectionTable::new(
            tributary_catalog::new_table_id(),
            "t",
            "impulse",
            ConnectionType::Source,
        );
        let shared = SessionShared::new(Arc::new(OverlayStore::in_memory()));
        ConnectionTableProvider::new(table, shared).decoded()
    }

    #[test]
    fn hits_within_a_generation_and_misses_after_any_change() {
        let cache = ProviderCache::default();
        assert!(cache.get("t", 1).is_none());
        cache.put("T", 1, provider());
        assert!(cache.get("t", 1).is_some(), "names ignore case");
        assert!(cache.get("t", 2).is_none(), "a new generation empties it");
        assert!(cache.get("t", 1).is_none(), "and what was there is gone");
    }

    #[test]
    fn it_stays_bounded() {
        let cache = ProviderCache::default();
        for i in 0..MAX_ENTRIES + 5 {
            cache.put(&format!("t{i}"), 7, provider());
        }
        let held = cache.inner.lock().map(|e| e.tables.len()).unwrap_or(0);
        assert!(held <= MAX_ENTRIES && held > 0, "{held}");
    }
}
