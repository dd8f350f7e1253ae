//! Completion at 10,000 tables: table names after FROM, columns after SELECT, option keys
//! inside WITH, warm (names cached for the catalog's generation) and cold (a new
//! completer, which reads the names first). The shell's target: under 20 ms.
//!
//! `cargo bench -p tributary-complete --bench complete`; results go in BENCHMARKS.md.

// The large catalog the SQL benches build, shared rather than copied.
#[path = "../../sql/benches/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;
use tributary_catalog::{CatalogStore, SledStore};
use tributary_complete::Completer;

const TABLES: usize = 10_000;

fn bench_complete(c: &mut Criterion) {
    let dir = common::catalog(TABLES);
    let store: Arc<dyn CatalogStore> = Arc::new(SledStore::open(&dir).expect("open"));
    let warm = Completer::new(store.clone());
    let cases = [
        ("table_after_from", "SELECT * FROM t99"),
        ("all_tables_after_from", "SELECT * FROM "),
        ("columns_after_select", "SELECT c FROM t1234"),
        (
            "option_keys_in_with",
            "CREATE TABLE x (id INT) WITH (connector = 'kafka', connection_profile = 'profile_1', ",
        ),
        (
            "profiles_after_profile",
            "DROP CONNECTION PROFILE profile_9",
        ),
    ];
    let mut g = c.benchmark_group("complete_10k_tables");
    for (name, text) in cases {
        // Columns: the cursor after `SELECT c`.
        let cursor = if name == "columns_after_select" {
            8
        } else {
            text.len()
        };
        let found = warm.complete(text, cursor).candidates.len();
        assert!(found > 0, "{name}: no candidates");
        g.bench_function(format!("{name}/warm"), |b| {
            b.iter(|| warm.complete(text, cursor));
        });
        g.bench_function(format!("{name}/cold"), |b| {
            b.iter(|| Completer::new(store.clone()).complete(text, cursor));
        });
    }
    g.finish();
}

criterion_group!(benches, bench_complete);
criterion_main!(benches);
