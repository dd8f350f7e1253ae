//! REST throughput and latency against a 10,000-table sled catalog, beside a bare axum
//! handler serving the same bytes from memory, measured in the same run by a tokio load
//! generator in this process. Prints a Markdown table for BENCHMARKS.md.
//!
//! `cargo bench -p tributary-server --bench rest` (options: `--seconds N` per scenario,
//! default 5; `--rss-seconds N` for the memory run, default 60; `--tables N`, default
//! 10,000; `--only get|post|rss` for one part; `--volatile` to keep writes in memory
//! above the catalog, measuring creates without the durable commit; `--url URL --pid
//! PID` to load a `tributary serve` running as its own process and sample its RSS alone).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // A benchmark program.

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use bytes::Bytes;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_catalog::{CatalogStore, OverlayStore, SledStore};
use tributary_server::{Auth, ServerConfig, router};
use tributary_sql::Session;

/// The `tributary` binary's allocator, so the server here allocates as it does there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOKEN: &str = "bench-token-0123456789";
const PROFILE: &str = "prod";

/// Ten columns and an event-time column with a watermark: the catalog benchmarks' table.
const COLUMNS: &str = "c0 BIGINT, c1 TEXT, c2 BIGINT, c3 TEXT, c4 BIGINT, c5 TEXT, c6 BIGINT, c7 TEXT, c8 BIGINT, ts TIMESTAMP(3) NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND";

struct Args {
    /// Run one part only: `get`, `post` or `rss`.
    only: Option<String>,
    /// A server running as its own process, and its pid (`--url`, `--pid`).
    url: Option<String>,
    pid: Option<String>,
    seconds: u64,
    rss_seconds: u64,
    tables: usize,
    /// Writes go to memory above the sled catalog (`--volatile`): what creates cost
    /// without the durable commit, the ceiling group commit can approach.
    volatile: bool,
}

fn args() -> Args {
    let mut a = Args {
        only: None,
        url: None,
        pid: None,
        seconds: 5,
        rss_seconds: 60,
        tables: 10_000,
        volatile: false,
    };
    let argv: Vec<String> = std::env::args().collect();
    let value = |i: usize| argv.get(i + 1).and_then(|v| v.parse().ok());
    for (i, arg) in argv.iter().enumerate() {
        match arg.as_str() {
            "--seconds" => a.seconds = value(i).unwrap_or(a.seconds),
            "--rss-seconds" => a.rss_seconds = value(i).unwrap_or(a.rss_seconds),
            "--only" => a.only = argv.get(i + 1).cloned(),
            "--url" => a.url = argv.get(i + 1).cloned(),
            "--pid" => a.pid = argv.get(i + 1).cloned(),
            "--tables" => a.tables = value(i).unwrap_or(a.tables as u64) as usize,
            "--volatile" => a.volatile = true,
            _ => {}
        }
    }
    a
}

/// Build (once) a sled catalog of `tables` Kafka tables through one profile, written by
/// SQL so the records are the ones users make; then copy it, so every run starts equal.
fn catalog(tables: usize, rt: &tokio::runtime::Runtime) -> (tempfile::TempDir, PathBuf) {
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../target/bench-catalogs/rest-{tables}"));
    if !built.join("ready").exists() {
        let _ = std::fs::remove_dir_all(&built);
        let session = Session::new(Arc::new(SledStore::open(&built).expect("open"))).offline();
        let mut script = format!(
            "CREATE CONNECTION PROFILE {PROFILE} WITH (connector = 'kafka', bootstrap_servers = 'b1:9092,b2:9092');\n"
        );
        for n in 0..tables {
            script.push_str(&format!(
                "CREATE TABLE t{n} ({COLUMNS}) WITH (connector = 'kafka', connection_profile = '{PROFILE}', topic = 't{n}', type = 'source', format = 'json');\n"
            ));
            if n % 1000 == 999 || n + 1 == tables {
                rt.block_on(session.execute(&script))
                    .expect("build catalog");
                script.clear();
            }
        }
        drop(session);
        std::fs::write(built.join("ready"), b"").expect("marker");
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let copy = tmp.path().join("catalog");
    copy_dir(&built, &copy);
    (tmp, copy)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copy");
        }
    }
}

/// What one scenario measured.
struct Stats {
    ok: u64,
    errors: u64,
    elapsed: Duration,
    latencies_us: Vec<u32>,
}

impl Stats {
    fn rate(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }
    fn percentile(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies_us.len() as f64 - 1.0) * p).round() as usize;
        self.latencies_us[i] as f64 / 1000.0
    }
}

/// Send requests from `clients` concurrent keep-alive clients for `duration`. `request`
/// builds client `c`'s `n`th request.
async fn load<F>(clients: usize, duration: Duration, request: F) -> Stats
where
    F: Fn(&reqwest::Client, usize, u64) -> reqwest::RequestBuilder + Send + Sync + 'static,
{
    let request = Arc::new(request);
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for c in 0..clients {
        let request = Arc::clone(&request);
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::builder()
                .pool_max_idle_per_host(1)
                .build()
                .expect("client");
            let (mut ok, mut errors, mut lat) = (0u64, 0u64, Vec::new());
            let mut n = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                let sent = request(&http, c, n).send().await;
                n += 1;
                match sent {
                    Ok(r) if r.status().is_success() => {
                        if r.bytes().await.is_ok() {
                            ok += 1;
                            lat.push(t.elapsed().as_micros().min(u32::MAX as u128) as u32);
                        } else {
                            errors += 1;
                        }
                    }
                    Ok(r) => {
                        errors += 1;
                        if errors == 1 {
                            eprintln!(
                                "error {}: {}",
                                r.status(),
                                r.text().await.unwrap_or_default()
                            );
                        }
                    }
                    Err(e) => {
                        errors += 1;
                        if errors == 1 {
                            eprintln!("error: {e}");
                        }
                    }
                }
            }
            (ok, errors, lat)
        }));
    }
    let mut stats = Stats {
        ok: 0,
        errors: 0,
        elapsed: Duration::ZERO,
        latencies_us: Vec::new(),
    };
    for t in tasks {
        let (ok, errors, lat) = t.await.expect("client task");
        stats.ok += ok;
        stats.errors += errors;
        stats.latencies_us.extend(lat);
    }
    stats.elapsed = started.elapsed();
    stats.latencies_us.sort_unstable();
    stats
}

/// A bare axum server answering `paths` with fixed bytes: the ceiling for the same
/// response over the same HTTP stack.
async fn bare_server(answers: Vec<(String, Bytes)>) -> String {
    let mut app = Router::new();
    for (path, body) in answers {
        app = app.route(
            &path,
            get(move || {
                let body = body.clone();
                async move { ([(CONTENT_TYPE, "application/json")], body) }
            }),
        );
    }
    serve(app).await
}

async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
    url
}

/// The resident set of process `pid` (`self` for this one), in MiB.
fn rss_mib(pid: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn table_body(name: &str, profile_id: &str) -> Value {
    let mut fields: Vec<Value> = (0..9)
        .map(|i| {
            json!({"name": format!("c{i}"), "type": if i % 2 == 0 { "int64" } else { "string" }})
        })
        .collect();
    fields
        .push(json!({"name": "ts", "type": "timestamp", "unit": "millisecond", "required": true}));
    json!({
        "name": name,
        "connector": "kafka",
        "connection_profile_id": profile_id,
        "validate": false,
        "config": {"topic": name, "type": {"offset": "latest"}},
        "schema": {"format": {"type": "json"}, "fields": fields}
    })
}

fn main() {
    let args = args();
    if let (Some(url), Some(pid)) = (&args.url, &args.pid) {
        return external(url, pid, args.rss_seconds);
    }
    // The server runs on its own two-thread runtime, as `tributary serve` would here; the
    // load generator on another, so both compete for the machine's two cores.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // Request logs on, as in production, written to a sink.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("info"))
        .with_writer(std::io::sink)
        .init();
    eprintln!("building a catalog of {} tables...", args.tables);
    let (_tmp, path) = catalog(args.tables, &server_rt);
    let store: Arc<dyn CatalogStore> = Arc::new(SledStore::open(&path).expect("open"));
    let store: Arc<dyn CatalogStore> = if args.volatile {
        Arc::new(OverlayStore::over(store))
    } else {
        store
    };
    let session = Arc::new(Session::new(Arc::clone(&store)));
    let app = router(session, ServerConfig::new(Auth::tokens([TOKEN])));
    let url = server_rt.block_on(serve(app));

    let http = reqwest::Client::new();
    let fetch = |path: &str| -> Bytes {
        client_rt.block_on(async {
            let r = http
                .get(format!("{url}{path}"))
                .bearer_auth(TOKEN)
                .send()
                .await
                .expect("get");
            assert!(r.status().is_success(), "{path}: {}", r.status());
            r.bytes().await.expect("body")
        })
    };
    let list10 = fetch("/api/v1/connection_tables?limit=10");
    let list100 = fetch("/api/v1/connection_tables?limit=100");
    let first: Value = serde_json::from_slice(&list10).expect("json");
    let table_id = first["data"][0]["id"].as_str().expect("id").to_string();
    let one = fetch(&format!("/api/v1/connection_tables/{table_id}"));
    let connectors = fetch("/api/v1/connectors");
    let profiles: Value =
        serde_json::from_slice(&fetch("/api/v1/connection_profiles")).expect("json");
    let profile_id = profiles["data"][0]["id"].as_str().expect("id").to_string();
    // The bare server answers each path with the bytes Tributary gave; it routes on the
    // path alone, so the list answers get paths of their own.
    let bare = server_rt.block_on(bare_server(vec![
        ("/list10".into(), list10.clone()),
        ("/list100".into(), list100.clone()),
        ("/one".into(), one.clone()),
        ("/connectors".into(), connectors.clone()),
    ]));

    let secs = Duration::from_secs(args.seconds);
    let clients = 16;
    println!(
        "| request | bytes | Tributary req/s | p50 ms | p99 ms | bare axum req/s | bare p99 ms | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let gets = [
        (
            "GET /api/v1/connection_tables?limit=10",
            "/api/v1/connection_tables?limit=10".to_string(),
            "/list10",
            list10.len(),
        ),
        (
            "GET /api/v1/connection_tables?limit=100",
            "/api/v1/connection_tables?limit=100".to_string(),
            "/list100",
            list100.len(),
        ),
        (
            "GET /api/v1/connection_tables/{id}",
            format!("/api/v1/connection_tables/{table_id}"),
            "/one",
            one.len(),
        ),
        (
            "GET /api/v1/connectors",
            "/api/v1/connectors".to_string(),
            "/connectors",
            connectors.len(),
        ),
    ];
    let runs = |part: &str| args.only.as_deref().is_none_or(|o| o == part);
    for (label, path, bare_path, bytes) in gets.into_iter().filter(|_| runs("get")) {
        let (u, p) = (url.clone(), path.clone());
        let ours = client_rt.block_on(load(clients, secs, move |h, _, _| {
            h.get(format!("{u}{p}")).bearer_auth(TOKEN)
        }));
        let (b, bp) = (bare.clone(), bare_path.to_string());
        let base = client_rt.block_on(load(clients, secs, move |h, _, _| {
            h.get(format!("{b}{bp}")).bearer_auth(TOKEN)
        }));
        println!(
            "| `{label}` | {bytes} | {:.0} | {:.2} | {:.2} | {:.0} | {:.2} | {:.0}% |{}",
            ours.rate(),
            ours.percentile(0.5),
            ours.percentile(0.99),
            base.rate(),
            base.percentile(0.99),
            100.0 * ours.rate() / base.rate(),
            if ours.errors + base.errors > 0 {
                format!(" errors: {} / {}", ours.errors, base.errors)
            } else {
                String::new()
            }
        );
    }

    println!();
    println!(
        "| `POST /api/v1/connection_tables` (kafka via profile, validate false), {} | creates/s | p50 ms | p99 ms | errors |",
        if args.volatile {
            "volatile (--volatile)"
        } else {
            "durable"
        }
    );
    println!("|---|---|---|---|---|");
    for (run, clients) in [(0, 1usize), (1, 16)].into_iter().filter(|_| runs("post")) {
        let (u, pid) = (url.clone(), profile_id.clone());
        let created = client_rt.block_on(load(clients, secs, move |h, c, n| {
            h.post(format!("{u}/api/v1/connection_tables"))
                .bearer_auth(TOKEN)
                .header(CONTENT_TYPE, "application/json")
                .body(table_body(&format!("new_{run}_{c}_{n}"), &pid).to_string())
        }));
        println!(
            "| {clients} client{} | {:.0} | {:.2} | {:.2} | {} |",
            if clients == 1 { "" } else { "s" },
            created.rate(),
            created.percentile(0.5),
            created.percentile(0.99),
            created.errors
        );
    }

    // Memory: a mixed read load for `rss_seconds`, RSS sampled every tenth of the run.
    if !runs("rss") {
        return;
    }
    println!();
    rss_run(&client_rt, &url, TOKEN, &table_id, "self", args.rss_seconds);
}

/// A mixed read load for `seconds` against `url`, sampling the RSS of process `pid`
/// every tenth of the run.
fn rss_run(
    client_rt: &tokio::runtime::Runtime,
    url: &str,
    token: &str,
    table_id: &str,
    pid: &str,
    seconds: u64,
) {
    let mut samples = vec![format!("{:.0}", rss_mib(pid))];
    let step = Duration::from_secs(seconds.max(10) / 10);
    let mut total = 0u64;
    let mut errors = 0u64;
    for _ in 0..10 {
        let (u, t, token) = (url.to_string(), table_id.to_string(), token.to_string());
        let s = client_rt.block_on(load(16, step, move |h, c, n| {
            let path = match (c as u64 + n) % 3 {
                0 => "/api/v1/connection_tables?limit=10".to_string(),
                1 => format!("/api/v1/connection_tables/{t}"),
                _ => "/api/v1/connectors".to_string(),
            };
            h.get(format!("{u}{path}")).bearer_auth(&token)
        }));
        total += s.ok;
        errors += s.errors;
        samples.push(format!("{:.0}", rss_mib(pid)));
    }
    println!(
        "RSS of process {pid} over {} s of mixed GETs ({total} requests, {errors} errors), MiB every {} s: {}",
        step.as_secs() * 10,
        step.as_secs(),
        samples.join(", ")
    );
}

/// `--url URL --pid PID`: load a server running as its own process (a real `tributary
/// serve`, token in `TRIBUTARY_TOKEN`) and sample that process's RSS alone.
fn external(url: &str, pid: &str, seconds: u64) {
    let client_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let token = std::env::var("TRIBUTARY_TOKEN").expect("set TRIBUTARY_TOKEN");
    let first: Value = client_rt.block_on(async {
        let r = reqwest::Client::new()
            .get(format!("{url}/api/v1/connection_tables?limit=1"))
            .bearer_auth(&token)
            .send()
            .await
            .expect("get");
        serde_json::from_slice(&r.bytes().await.expect("body")).expect("json")
    });
    let table_id = first["data"][0]["id"]
        .as_str()
        .expect("a table")
        .to_string();
    rss_run(&client_rt, url, &token, &table_id, pid, seconds);
}
