//! A catalog's fingerprint: one value that changes whenever any object is created,
//! changed or dropped, so `apply --plan-file` can refuse a plan made against a catalog
//! that has changed since. It is computed from each object's kind, id, name and last
//! update time, never from its contents: a plan file holds no trace of a secret.

use tributary_catalog::{CatalogStore, Result};
use tributary_types::DefinitionKind;

/// The fingerprint of what `store` holds now: 16 hex digits.
pub fn fingerprint(store: &dyn CatalogStore) -> Result<String> {
    let mut lines: Vec<String> = Vec::new();
    for p in store.profiles()? {
        lines.push(format!(
            "profile\t{}\t{}\t{}",
            p.id,
            p.name.to_lowercase(),
            p.updated_at
        ));
    }
    for t in store.tables()? {
        lines.push(format!(
            "table\t{}\t{}\t{}",
            t.id,
            t.name.to_lowercase(),
            t.updated_at
        ));
    }
    for kind in [DefinitionKind::Function, DefinitionKind::View] {
        for d in store.definitions(kind)? {
            lines.push(format!(
                "{kind}\t{}\t{}\t{}",
                d.name.to_lowercase(),
                d.created_at,
                d.updated_at
            ));
        }
    }
    lines.sort_unstable();
    Ok(format!("{:016x}", fnv1a(&lines)))
}

/// FNV-1a over the lines: stable across builds and platforms (std's hasher is not), and
/// enough to tell one catalog state from another; it guards against a stale plan, not an
/// adversary.
fn fnv1a(lines: &[String]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for line in lines {
        for byte in line.bytes().chain(std::iter::once(b'\n')) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}
