//! The PostgreSQL catalog on this machine's server (127.0.0.1:5432, `fsync` and
//! `synchronous_commit` on): durable `CREATE TABLE` records from one writer, from 16
//! writers in one process, and from 16 stores (16 sets of connections, as 16 processes
//! have); opening a catalog of 100,000 tables; a table looked up by name at that size.
//!
//! `cargo bench -p tributary-catalog --bench postgres`; results go in BENCHMARKS.md.

mod common;

use common::{profile, table};
use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tributary_catalog::testing::PgSchema;
use tributary_catalog::{CatalogStore, Change, PostgresStore};
use tributary_types::ConnectionProfile;

/// `writers` threads, each applying through `stores[i % stores.len()]`, sharing `iters`
/// creates; the time per create.
fn concurrent(
    stores: &[PostgresStore],
    profile: &ConnectionProfile,
    writers: u64,
    iters: u64,
    next: &AtomicUsize,
) -> Duration {
    let per_writer = iters.div_ceil(writers);
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..writers as usize {
            let store = &stores[w % stores.len()];
            s.spawn(move || {
                for _ in 0..per_writer {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    store
                        .apply(vec![Change::PutTable(table(profile, n))])
                        .expect("apply");
                }
            });
        }
    });
    start.elapsed() * iters as u32 / (per_writer * writers) as u32
}

fn bench_writes(c: &mut Criterion) {
    let mut g = c.benchmark_group("postgres_commit");
    let schema = PgSchema::new();
    let store = PostgresStore::open(&schema.url).expect("open");
    let p = profile("prod");
    store
        .apply(vec![Change::PutProfile(p.clone())])
        .expect("profile");
    let next = AtomicUsize::new(0);
    g.bench_function("put_table_1_writer", |b| {
        b.iter(|| {
            let n = next.fetch_add(1, Ordering::Relaxed);
            store
                .apply(vec![Change::PutTable(table(&p, n))])
                .expect("apply")
        })
    });
    let one = [store];
    g.bench_function("put_table_16_writers_one_store", |b| {
        b.iter_custom(|iters| concurrent(&one, &p, 16, iters, &next))
    });
    let sixteen: Vec<PostgresStore> = (0..16)
        .map(|_| PostgresStore::open(&schema.url).expect("open"))
        .collect();
    g.bench_function("put_table_16_stores", |b| {
        b.iter_custom(|iters| concurrent(&sixteen, &p, 16, iters, &next))
    });
    g.finish();
}

fn bench_large(c: &mut Criterion) {
    const TABLES: usize = 100_000;
    let mut g = c.benchmark_group("postgres_100k_tables");
    let schema = PgSchema::new();
    {
        let store = PostgresStore::open(&schema.url).expect("open");
        let profiles: Vec<ConnectionProfile> =
            (0..1_000).map(|i| profile(&format!("p{i}"))).collect();
        store
            .apply(profiles.iter().cloned().map(Change::PutProfile).collect())
            .expect("profiles");
        for chunk in (0..TABLES).collect::<Vec<_>>().chunks(5_000) {
            store
                .apply(
                    chunk
                        .iter()
                        .map(|&n| Change::PutTable(table(&profiles[n % 1_000], n)))
                        .collect(),
                )
                .expect("tables");
        }
        schema.execute("VACUUM ANALYZE");
    }
    g.bench_function("open", |b| {
        b.iter(|| PostgresStore::open(&schema.url).expect("open"))
    });
    let store = PostgresStore::open(&schema.url).expect("open");
    let mut n = 0usize;
    g.bench_function("table_by_name", |b| {
        b.iter(|| {
            n = (n + 7_919) % TABLES;
            store
                .table_by_name(&format!("T{n}"))
                .expect("lookup")
                .expect("present")
        })
    });
    g.bench_function("refresh", |b| b.iter(|| store.refresh().expect("refresh")));
    g.finish();
}

criterion_group!(benches, bench_writes, bench_large);
criterion_main!(benches);
