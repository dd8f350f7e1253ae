//! [`LookupCache`]: the values a lookup join fetched, kept by key so that a key seen again
//! is not fetched again. Bounded by `lookup.cache.max_bytes` and, with
//! `lookup.cache.ttl`, by age; the oldest entries go first either way. Absent keys are
//! remembered too, so a stream of unknown keys costs one fetch per key, not one per row.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use tributary_connectors::probe::SampledMessage;
use tributary_types::{ConnectionTable, parse_interval_micros};

/// The cache's bounds, from the table's `lookup.cache.*` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CacheSettings {
    /// The most bytes kept (keys, values and bookkeeping).
    pub max_bytes: u64,
    /// How long an entry is used; `None` keeps it until it is evicted for room.
    pub ttl: Option<Duration>,
}

/// The bytes a cache holds when only `lookup.cache.ttl` is set (as documented).
pub(crate) const DEFAULT_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// What each entry costs beyond its key and value: the map's and the queue's slots.
const ENTRY_OVERHEAD: u64 = 96;

impl CacheSettings {
    /// The table's cache, or `None` when it sets neither option (every key is fetched).
    /// The options were checked when the table was created.
    pub(crate) fn of(table: &ConnectionTable) -> Option<Self> {
        let option = |key: &str| {
            table
                .options
                .iter()
                .find(|o| o.key.eq_ignore_ascii_case(key))
                .map(|o| o.value.as_text())
        };
        let max_bytes = option("lookup.cache.max_bytes").and_then(|v| v.trim().parse::<u64>().ok());
        let ttl = option("lookup.cache.ttl")
            .and_then(|v| parse_interval_micros(&v).ok())
            .map(|micros| Duration::from_micros(micros.max(0) as u64));
        if max_bytes.is_none() && ttl.is_none() {
            return None;
        }
        Some(Self {
            max_bytes: max_bytes.unwrap_or(DEFAULT_CACHE_BYTES),
            ttl,
        })
    }
}

struct Entry {
    value: Option<SampledMessage>,
    size: u64,
    stored: Instant,
}

/// Fetched values by key, oldest first out.
pub(crate) struct LookupCache {
    settings: CacheSettings,
    entries: HashMap<String, Entry>,
    /// Keys in the order they were stored (a key stored again appears again; the stale
    /// position is skipped when it comes up).
    order: VecDeque<(String, Instant)>,
    bytes: u64,
}

impl LookupCache {
    pub(crate) fn new(settings: CacheSettings) -> Self {
        Self {
            settings,
            entries: HashMap::new(),
            order: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The cached value of `key` at `now`: `Some(None)` when the key is known to be
    /// absent, `None` when it must be fetched.
    pub(crate) fn get(&mut self, key: &str, now: Instant) -> Option<Option<SampledMessage>> {
        self.expire(now);
        self.entries.get(key).map(|e| e.value.clone())
    }

    /// Remember `value` for `key`, stored at `now`, making room by evicting the oldest.
    /// A value larger than the whole cache is not kept.
    pub(crate) fn put(&mut self, key: String, value: Option<SampledMessage>, now: Instant) {
        let size = key.len() as u64
            + value.as_ref().map_or(0, |m| m.payload.len() as u64)
            + ENTRY_OVERHEAD;
        if size > self.settings.max_bytes {
            return;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.bytes -= old.size;
        }
        while self.bytes + size > self.settings.max_bytes {
            if !self.evict_oldest() {
                break;
            }
        }
        self.bytes += size;
        self.order.push_back((key.clone(), now));
        self.entries.insert(
            key,
            Entry {
                value,
                size,
                stored: now,
            },
        );
        // Re-stored keys leave stale positions behind; keep the queue within a constant
        // factor of the entries so it cannot grow without bound.
        if self.order.len() > 2 * self.entries.len() + 16 {
            let entries = &self.entries;
            self.order
                .retain(|(k, at)| entries.get(k).is_some_and(|e| e.stored == *at));
        }
    }

    /// Its bounds.
    pub(crate) fn settings(&self) -> CacheSettings {
        self.settings
    }

    /// The bytes held.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Drop entries older than the TTL.
    fn expire(&mut self, now: Instant) {
        let Some(ttl) = self.settings.ttl else {
            return;
        };
        while let Some((_, at)) = self.order.front() {
            if now.saturating_duration_since(*at) < ttl {
                break;
            }
            self.evict_oldest();
        }
    }

    /// Drop the oldest entry; false when there was none.
    fn evict_oldest(&mut self) -> bool {
        while let Some((key, at)) = self.order.pop_front() {
            // A position is current only if the entry was stored at that moment.
            if self.entries.get(&key).is_some_and(|e| e.stored == at) {
                if let Some(e) = self.entries.remove(&key) {
                    self.bytes -= e.size;
                }
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(bytes: usize) -> Option<SampledMessage> {
        Some(SampledMessage::from(vec![b'x'; bytes]))
    }

    fn cache(max_bytes: u64, ttl: Option<Duration>) -> LookupCache {
        LookupCache::new(CacheSettings { max_bytes, ttl })
    }

    #[test]
    fn a_stored_value_and_a_known_absence_are_both_hits() {
        let now = Instant::now();
        let mut c = cache(10_000, None);
        assert_eq!(c.get("a", now), None);
        c.put("a".into(), value(3), now);
        c.put("missing".into(), None, now);
        assert_eq!(c.get("a", now).unwrap().unwrap().payload, b"xxx");
        assert_eq!(c.get("missing", now), Some(None));
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let t0 = Instant::now();
        let mut c = cache(10_000, Some(Duration::from_secs(5)));
        c.put("a".into(), value(1), t0);
        c.put("b".into(), value(1), t0 + Duration::from_secs(3));
        assert!(c.get("a", t0 + Duration::from_secs(4)).is_some());
        assert_eq!(c.get("a", t0 + Duration::from_secs(5)), None, "a expired");
        assert!(
            c.get("b", t0 + Duration::from_secs(5)).is_some(),
            "b is younger"
        );
        assert_eq!(c.get("b", t0 + Duration::from_secs(8)), None);
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn the_oldest_entries_make_room_and_bytes_stay_under_the_bound() {
        let now = Instant::now();
        let entry = 1 + 100 + ENTRY_OVERHEAD;
        let mut c = cache(3 * entry, None);
        for k in ["a", "b", "c", "d"] {
            c.put(k.into(), value(100), now);
            assert!(c.bytes() <= 3 * entry);
        }
        assert_eq!(c.get("a", now), None, "the oldest went first");
        for k in ["b", "c", "d"] {
            assert!(c.get(k, now).is_some(), "{k} kept");
        }
    }

    #[test]
    fn a_value_larger_than_the_cache_is_not_kept_and_evicts_nothing() {
        let now = Instant::now();
        let mut c = cache(500, None);
        c.put("a".into(), value(10), now);
        c.put("big".into(), value(1_000), now);
        assert_eq!(c.get("big", now), None);
        assert!(c.get("a", now).is_some());
    }

    #[test]
    fn storing_a_key_again_replaces_it_and_the_queue_stays_bounded() {
        let mut now = Instant::now();
        let mut c = cache(1_000_000, None);
        for i in 0..10_000u32 {
            now += Duration::from_micros(1);
            c.put("same".into(), value((i % 7) as usize), now);
        }
        assert_eq!(c.entries.len(), 1);
        assert!(
            c.order.len() <= 2 * c.entries.len() + 17,
            "{}",
            c.order.len()
        );
        assert_eq!(
            c.bytes(),
            4 + 3 + ENTRY_OVERHEAD,
            "the last value: 9999 % 7 = 3 bytes"
        );
    }
}
