//! Reading Kafka for real: a topic of JSON records of 10 fields on librdkafka's mock
//! cluster, read by `INSERT INTO blackhole SELECT *`, `SELECT count(*)` under
//! `preview.max_rows` and `INSERT INTO` another topic, against the bare decode of the
//! same payloads with `BatchDecoder`.
//! Prints records per second and the process's peak RSS, for BENCHMARKS.md.
//!
//! `cargo bench -p tributary-sql --bench kafka -- [--records N]` (default 1,000,000; run
//! it again with 100,000 to compare memory: one size per process, so each peak is its own).
//!
//! librdkafka's mock cluster keeps at most 5 MiB per partition and drops the oldest
//! message sets beyond that, so the records are spread evenly over one partition per
//! 10,000; the bench checks the watermarks before it reads.

use rdkafka::producer::{FutureProducer, FutureRecord};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tributary_catalog::OverlayStore;
use tributary_formats::BatchDecoder;
use tributary_sql::{Output, Session};
use tributary_types::{ConnectionSchema, FieldType, Format, JsonFormat, SourceField};

/// The `tributary` binary's allocator, so queries here allocate as they do there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn payload(i: u64) -> String {
    format!(
        r#"{{"id":{i},"user":"user-{}","amount":{}.5,"country":"country-{}","device":"d{}","score":{},"active":{},"tag":"t{}","ts":{},"note":"record number {i}"}}"#,
        i % 10_000,
        i % 1_000,
        i % 50,
        i % 7,
        i % 100,
        i.is_multiple_of(2),
        i % 13,
        1_700_000_000_000u64 + i
    )
}

const COLUMNS: &str = "id BIGINT, user TEXT, amount DOUBLE, country TEXT, device TEXT, \
                       score BIGINT, active BOOLEAN, tag TEXT, ts BIGINT, note TEXT";

fn records() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--records")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.replace([',', '_'], "").parse().ok())
        .unwrap_or(1_000_000)
}

/// A line of `/proc/self/status` (`VmRSS`, `VmHWM`), in MiB.
fn status_mib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

async fn rows_of(session: &Session, sql: &str) -> String {
    let results = session
        .execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    match &results.last().map(|r| &r.output) {
        Some(Output::Rows { batches, .. }) => {
            datafusion::arrow::util::pretty::pretty_format_batches(batches)
                .map(|t| t.to_string())
                .unwrap_or_default()
        }
        _ => String::new(),
    }
}

fn bare_decode(n: u64) -> f64 {
    let schema = ConnectionSchema {
        format: Some(Format::Json(JsonFormat::default())),
        fields: [
            ("id", FieldType::Int64),
            ("user", FieldType::String),
            ("amount", FieldType::Float64),
            ("country", FieldType::String),
            ("device", FieldType::String),
            ("score", FieldType::Int64),
            ("active", FieldType::Bool),
            ("tag", FieldType::String),
            ("ts", FieldType::Int64),
            ("note", FieldType::String),
        ]
        .into_iter()
        .map(|(name, t)| SourceField::new(name, t))
        .collect(),
        ..Default::default()
    };
    let payloads: Vec<String> = (0..n).map(payload).collect();
    let mut decoder = BatchDecoder::new(&schema).expect("decoder");
    let started = Instant::now();
    let mut rows = 0;
    for chunk in payloads.chunks(8192) {
        for p in chunk {
            decoder.push(p.as_bytes()).expect("push");
        }
        rows += decoder
            .finish()
            .expect("finish")
            .map_or(0, |b| b.num_rows());
    }
    assert_eq!(rows as u64, n);
    n as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let n = records();
    let mock = rdkafka::mocking::MockCluster::new(1).expect("mock cluster");
    // The mock cluster keeps at most 5 MiB per partition and drops older messages (the
    // low watermark moves), so the records are spread evenly (round robin; the default
    // partitioner sticks to one partition for a while) over enough partitions to hold
    // them all: 10,000 records of about 170 bytes each.
    let partitions = (n / 10_000).max(1) as i32;
    mock.create_topic("bench", partitions, 1).expect("topic");
    mock.create_topic("copy", partitions, 1).expect("topic");
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", mock.bootstrap_servers())
        .set("linger.ms", "20")
        .set("queue.buffering.max.messages", "1000000")
        .set("batch.num.messages", "1000")
        .create()
        .expect("producer");
    let started = Instant::now();
    let mut failed = 0u64;
    let mut pending = Vec::with_capacity(10_000);
    for i in 0..n {
        let p = payload(i);
        let queued = producer
            .send_result(
                FutureRecord::<(), _>::to("bench")
                    .payload(&p)
                    .partition((i % partitions as u64) as i32),
            )
            .map_err(|(e, _)| e)
            .expect("queued");
        pending.push(queued);
        if pending.len() == 10_000 {
            for f in pending.drain(..) {
                failed += u64::from(!matches!(f.await, Ok(Ok(_))));
            }
        }
    }
    for f in pending.drain(..) {
        failed += u64::from(!matches!(f.await, Ok(Ok(_))));
    }
    assert_eq!(failed, 0, "deliveries failed");
    drop(producer);
    println!(
        "produced {n} records in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    {
        use rdkafka::consumer::{BaseConsumer, Consumer};
        let c: BaseConsumer = rdkafka::ClientConfig::new()
            .set("bootstrap.servers", mock.bootstrap_servers())
            .create()
            .expect("consumer");
        let mut held = 0;
        for p in 0..partitions {
            let (low, high) = c
                .fetch_watermarks("bench", p, Duration::from_secs(5))
                .expect("watermarks");
            assert_eq!(
                low, 0,
                "the mock cluster dropped the start of partition {p}"
            );
            held += high - low;
        }
        assert_eq!(held as u64, n, "the topic holds every record");
    }
    let session = Session::new(Arc::new(OverlayStore::in_memory()));
    session
        .execute(&format!(
            "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '{}', validate = false); \
             CREATE TABLE k ({COLUMNS}) WITH (connector = 'kafka', connection_profile = 'k', topic = 'bench', \
             type = 'source', 'source.offset' = 'earliest', format = 'json'); \
             CREATE TABLE bh WITH (connector = 'blackhole'); \
             CREATE TABLE k_copy ({COLUMNS}) WITH (connector = 'kafka', connection_profile = 'k', topic = 'copy', \
             type = 'sink', format = 'json'); \
             SET preview.max_rows = {n}",
            mock.bootstrap_servers()
        ))
        .await
        .expect("setup");

    let bare = bare_decode(n);
    println!("| bare JSON decode (BatchDecoder, 8,192 per batch) | {bare:.0} records/s |");
    // The mock cluster holds the whole topic in this process: what the queries add is
    // their peak above this point (writing 5 to clear_refs resets the peak).
    let before = status_mib("VmRSS:");
    let _ = std::fs::write("/proc/self/clear_refs", "5");

    let started = Instant::now();
    let out = rows_of(&session, "INSERT INTO bh SELECT * FROM k").await;
    let took = started.elapsed().as_secs_f64();
    assert!(out.contains(&format!("| {n} ")), "{out}");
    println!(
        "| `INSERT INTO blackhole SELECT * FROM k` | {:.0} records/s ({took:.2} s) |",
        n as f64 / took
    );

    let started = Instant::now();
    let out = rows_of(&session, "SELECT count(*) AS n FROM k").await;
    let took = started.elapsed().as_secs_f64();
    assert!(out.contains(&format!("| {n} |")), "{out}");
    println!(
        "| `SELECT count(*) FROM k` (preview.max_rows = {n}) | {:.0} records/s ({took:.2} s), {:.0}% of the bare decode |",
        n as f64 / took,
        100.0 * (n as f64 / took) / bare
    );
    let started = Instant::now();
    let out = rows_of(&session, "INSERT INTO k_copy SELECT * FROM k").await;
    let took = started.elapsed().as_secs_f64();
    assert!(out.contains(&format!("| {n} ")), "{out}");
    println!(
        "| `INSERT INTO k_copy SELECT * FROM k` (Kafka to Kafka, at least once) | {:.0} records/s ({took:.2} s) |",
        n as f64 / took
    );

    // Let the readers' threads wind down before the last reading.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let peak = status_mib("VmHWM:");
    println!(
        "| RSS before the queries (the mock cluster holds the topic) | {before} MiB |\n\
         | peak RSS during the queries | {peak} MiB (+{} MiB) |",
        peak.saturating_sub(before)
    );
}
