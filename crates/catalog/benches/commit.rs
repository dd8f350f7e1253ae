//! What a durable catalog write costs on this machine: `SledStore::apply` of one table
//! (record, name index and dependency key in one transaction, then a flush) against the
//! floor of one sled key written and flushed.
//!
//! `cargo bench -p tributary-catalog --bench commit`; results go in BENCHMARKS.md.

mod common;

use common::{profile, table};
use criterion::{Criterion, criterion_group, criterion_main};
use tributary_catalog::{CatalogStore, Change, SledStore};

fn bench_commit(c: &mut Criterion) {
    let mut g = c.benchmark_group("durable_commit");
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SledStore::open(dir.path()).expect("open");
    let profile = profile("prod");
    store
        .apply(vec![Change::PutProfile(profile.clone())])
        .expect("profile");
    let mut n = 0usize;
    g.bench_function("sled_store_put_table", |b| {
        b.iter(|| {
            n += 1;
            store
                .apply(vec![Change::PutTable(table(&profile, n))])
                .expect("apply")
        })
    });
    // Sixteen writers at once, as the REST benchmark's clients: group commit shares
    // flushes, so the time per create should fall well below one writer's.
    let writers = 16;
    let next = std::sync::atomic::AtomicUsize::new(1_000_000);
    g.bench_function("sled_store_put_table_16_writers", |b| {
        b.iter_custom(|iters| {
            let per_writer = iters.div_ceil(writers);
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for _ in 0..writers {
                    s.spawn(|| {
                        for _ in 0..per_writer {
                            let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            store
                                .apply(vec![Change::PutTable(table(&profile, n))])
                                .expect("apply");
                        }
                    });
                }
            });
            start.elapsed() * iters as u32 / (per_writer * writers) as u32
        })
    });
    let raw_dir = tempfile::tempdir().expect("tempdir");
    let db = sled::open(raw_dir.path()).expect("sled");
    let value = vec![7u8; 1_500];
    g.bench_function("sled_one_key_insert_flush", |b| {
        b.iter(|| {
            n += 1;
            db.insert(format!("k{n}"), value.as_slice())
                .expect("insert");
            db.flush().expect("flush")
        })
    });
    g.finish();
}

criterion_group!(benches, bench_commit);
criterion_main!(benches);
