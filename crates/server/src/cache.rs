//! Rendered answers of the hottest reads (table pages, one table), kept until the
//! catalog changes: each entry carries the catalog's generation when it was rendered,
//! and is used only while the generation is unchanged.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::RwLock;

/// Entries kept before the cache starts over.
const CAPACITY: usize = 4_096;

/// Rendered JSON by request path and query.
#[derive(Debug, Default)]
pub(crate) struct PageCache {
    entries: RwLock<HashMap<String, (u64, Bytes)>>,
}

impl PageCache {
    /// The answer rendered for `key` at `generation`, if any.
    pub fn get(&self, key: &str, generation: u64) -> Option<Bytes> {
        let entries = self.entries.read().ok()?;
        match entries.get(key) {
            Some((g, b)) if *g == generation => Some(b.clone()),
            _ => None,
        }
    }

    /// Keep `body` as the answer for `key` at `generation`.
    pub fn put(&self, key: String, generation: u64, body: Bytes) {
        if let Ok(mut entries) = self.entries.write() {
            if entries.len() >= CAPACITY {
                // Old generations are useless; a full cache of current ones starts over.
                entries.retain(|_, (g, _)| *g == generation);
                if entries.len() >= CAPACITY {
                    entries.clear();
                }
            }
            entries.insert(key, (generation, body));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_used_only_in_their_generation() {
        let c = PageCache::default();
        c.put("/a".into(), 1, Bytes::from_static(b"one"));
        assert_eq!(c.get("/a", 1).as_deref(), Some(&b"one"[..]));
        assert!(c.get("/a", 2).is_none());
        assert!(c.get("/b", 1).is_none());
    }
}
