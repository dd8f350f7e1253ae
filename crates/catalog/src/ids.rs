//! New public ids and timestamps.

use rand::Rng;
use std::time::{SystemTime, UNIX_EPOCH};
use tributary_types::{ProfileId, TableId};

const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn suffix() -> String {
    let mut rng = rand::rng();
    (0..10)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// A fresh `cp_…` id.
pub fn new_profile_id() -> ProfileId {
    ProfileId::from_suffix(&suffix())
}

/// A fresh `ct_…` id.
pub fn new_table_id() -> TableId {
    TableId::from_suffix(&suffix())
}

/// Microseconds since the Unix epoch.
pub fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_prefix_and_parse_back() {
        let p = new_profile_id();
        assert!(ProfileId::parse(p.as_str()).is_some());
        assert_eq!(p.as_str().len(), 13);
        assert_ne!(new_table_id(), new_table_id());
    }
}
