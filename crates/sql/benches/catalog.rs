//! Catalog and planning performance with a large catalog (100,000 tables across 1,000
//! profiles), against DataFusion's in-memory `MemorySchemaProvider` as the baseline.
//!
//! `cargo bench -p tributary-sql --bench catalog`; results go in BENCHMARKS.md.
//! The large catalog is built once under `target/bench-catalogs/` and reused.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::catalog::{MemoryCatalogProvider, MemorySchemaProvider, SchemaProvider};
use datafusion::datasource::empty::EmptyTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_catalog::{CatalogStore, OverlayStore, SledStore};
use tributary_sql::{Session, session_config};

mod common;

use common::{catalog, fields};

fn memory_baseline(tables: usize) -> SessionContext {
    let schema = Arc::new(Schema::new(
        fields()
            .iter()
            .map(|f| Field::new(&f.name, f.field_type.to_arrow(), !f.required))
            .collect::<Vec<_>>(),
    ));
    let provider = Arc::new(MemorySchemaProvider::new());
    for i in 0..tables {
        provider
            .register_table(format!("t{i}"), Arc::new(EmptyTable::new(schema.clone())))
            .expect("register");
    }
    let catalog = Arc::new(MemoryCatalogProvider::new());
    datafusion::catalog::CatalogProvider::register_schema(catalog.as_ref(), "public", provider)
        .expect("schema");
    let ctx = SessionContext::new_with_config(
        SessionConfig::new()
            .with_default_catalog_and_schema("mem", "public")
            .with_create_default_catalog_and_schema(false),
    );
    ctx.register_catalog("mem", catalog);
    ctx
}

fn bench_open(c: &mut Criterion) {
    let mut g = c.benchmark_group("open_catalog");
    g.sample_size(20);
    for tables in [1_000, 100_000] {
        let dir = catalog(tables);
        g.bench_with_input(BenchmarkId::from_parameter(tables), &dir, |b, dir| {
            b.iter(|| SledStore::open(dir).expect("open"));
        });
    }
    g.finish();
}

fn bench_lookup_and_plan(c: &mut Criterion) {
    let dir = catalog(100_000);
    let store: Arc<dyn CatalogStore> = Arc::new(SledStore::open(&dir).expect("open"));
    lookup_and_plan(c, "", store);
}

/// The same lookups and plans on a PostgreSQL catalog of the same 100,000 tables
/// (copied into a fresh schema of the machine's server).
fn bench_lookup_and_plan_postgres(c: &mut Criterion) {
    let pg = tributary_catalog::testing::PgSchema::new();
    {
        let dir = catalog(100_000);
        let sled = SledStore::open(&dir).expect("open");
        let target = tributary_catalog::PostgresStore::open(&pg.url).expect("open");
        tributary_catalog::copy_catalog(&sled, &target).expect("copy");
    }
    pg.execute("VACUUM ANALYZE");
    let store: Arc<dyn CatalogStore> =
        Arc::new(tributary_catalog::PostgresStore::open(&pg.url).expect("open"));
    lookup_and_plan(c, "_postgres", store);
}

/// Look tables up and plan a query over each through `store` (`label` tells the
/// store), against `MemorySchemaProvider` holding as many tables.
fn lookup_and_plan(c: &mut Criterion, label: &str, store: Arc<dyn CatalogStore>) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let session = Session::new(store.clone()).offline();
    let schema = session
        .context()
        .catalog("tributary")
        .and_then(|c| c.schema("public"))
        .expect("schema");
    let baseline = memory_baseline(100_000);
    let base_schema = baseline
        .catalog("mem")
        .and_then(|c| c.schema("public"))
        .expect("schema");

    let mut g = c.benchmark_group(format!("lookup_table_100k{label}"));
    let mut i = 0usize;
    g.bench_function("tributary", |b| {
        b.iter(|| {
            i = (i + 7_919) % 100_000;
            rt.block_on(schema.table(&format!("t{i}")))
                .expect("lookup")
                .expect("exists")
        })
    });
    // Warm: the same 1,000 tables again and again, as a session planning its pipelines
    // reads them; each was read once before.
    let warm: Vec<String> = (0..1_000).map(|k| format!("t{}", k * 97)).collect();
    for name in &warm {
        rt.block_on(schema.table(name)).expect("lookup");
    }
    let mut w = 0usize;
    g.bench_function("tributary_warm", |b| {
        b.iter(|| {
            w = (w + 1) % warm.len();
            rt.block_on(schema.table(&warm[w]))
                .expect("lookup")
                .expect("exists")
        })
    });
    g.bench_function("memory_schema_provider", |b| {
        b.iter(|| {
            i = (i + 7_919) % 100_000;
            rt.block_on(base_schema.table(&format!("t{i}")))
                .expect("lookup")
                .expect("exists")
        })
    });
    g.finish();

    let plan = |state: datafusion::execution::SessionState, table: String| {
        rt.block_on(async move {
            let plan = state
                .create_logical_plan(&format!("SELECT * FROM {table} WHERE c0 > 1"))
                .await
                .expect("plan");
            state.create_physical_plan(&plan).await.expect("physical")
        })
    };
    let mut g = c.benchmark_group(format!("plan_select_100k{label}"));
    g.bench_function("tributary", |b| {
        b.iter(|| {
            i = (i + 7_919) % 100_000;
            plan(session.context().state(), format!("t{i}"))
        })
    });
    g.bench_function("tributary_warm", |b| {
        b.iter(|| {
            w = (w + 1) % warm.len();
            plan(session.context().state(), warm[w].clone())
        })
    });
    g.bench_function("memory_schema_provider", |b| {
        b.iter(|| {
            i = (i + 7_919) % 100_000;
            plan(baseline.state(), format!("t{i}"))
        })
    });
    g.finish();
}

fn bench_create_table(c: &mut Criterion) {
    // The runtime the CLI runs scripts on.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let session = Session::new(Arc::new(SledStore::open(dir.path()).expect("open"))).offline();
    rt.block_on(session.execute("CREATE CONNECTION PROFILE prod WITH (connector = 'kafka', bootstrap_servers = 'b1:9092,b2:9092')")).expect("profile");
    let statement = |n: usize| {
        format!(
            "CREATE TABLE t{n} (c0 BIGINT, c1 TEXT, c2 BIGINT, c3 TEXT, c4 BIGINT, c5 TEXT, c6 BIGINT, c7 TEXT, c8 BIGINT, ts TIMESTAMP(3) NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
             WITH (connector = 'kafka', connection_profile = 'prod', topic = 't{n}', type = 'source', format = 'json')"
        )
    };
    let mut n = 0usize;
    let mut g = c.benchmark_group("create_table");
    g.throughput(criterion::Throughput::Elements(1));
    g.bench_function("kafka_json_10_columns_watermark_profile_durable", |b| {
        b.iter(|| {
            n += 1;
            rt.block_on(session.execute(&statement(n))).expect("create")
        })
    });
    // The same statement into the in-memory catalog: everything but the durable commit.
    let memory = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    rt.block_on(memory.execute("CREATE CONNECTION PROFILE prod WITH (connector = 'kafka', bootstrap_servers = 'b1:9092,b2:9092')")).expect("profile");
    let mut m = 0usize;
    g.bench_function("kafka_json_10_columns_watermark_profile_in_memory", |b| {
        b.iter(|| {
            m += 1;
            rt.block_on(memory.execute(&statement(m))).expect("create")
        })
    });
    g.finish();
}

/// Resident memory after opening a catalog and planning 100 queries, for two catalog
/// sizes; criterion times the work and the RSS is printed for BENCHMARKS.md.
fn bench_memory(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut g = c.benchmark_group("open_and_plan_100_queries");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for tables in [1_000, 100_000] {
        let dir = catalog(tables);
        g.bench_with_input(BenchmarkId::from_parameter(tables), &dir, |b, dir| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    let before = rss_kib();
                    let session = Session::with_context(
                        SessionContext::new_with_config(session_config()),
                        Arc::new(SledStore::open(dir).expect("open")),
                    );
                    rt.block_on(async {
                        for q in 0..100 {
                            let state = session.context().state();
                            let plan = state
                                .create_logical_plan(&format!(
                                    "SELECT c1, COUNT(*) FROM t{} GROUP BY c1",
                                    q * 7 % tables
                                ))
                                .await
                                .expect("plan");
                            state.create_physical_plan(&plan).await.expect("physical");
                        }
                    });
                    let after = rss_kib();
                    eprintln!(
                        "rss: tables={tables} grew {} KiB (before {before} KiB, after {after} KiB)",
                        after.saturating_sub(before)
                    );
                }
                start.elapsed()
            })
        });
    }
    g.finish();
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

criterion_group!(
    benches,
    bench_open,
    bench_lookup_and_plan,
    bench_lookup_and_plan_postgres,
    bench_create_table,
    bench_memory
);
criterion_main!(benches);
