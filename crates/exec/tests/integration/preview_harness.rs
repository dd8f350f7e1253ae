//! The invariant of live previews: the same records delivered one at a time, slowly, with
//! late and on-time records interleaved, give a preview the same answer as a batch read
//! of the same records, and the answer arrives promptly once the last record it needs has
//! come. One harness drives each connector's real service (publish, wait, publish) and
//! compares, for each query shape (a plain LIMIT, a selective WHERE with a LIMIT, a
//! tumbling and a session window over a watermark with late records, an aggregate under
//! `preview.max_rows`, a lookup join with a Redis table), the preview's rows with those of the same query over a
//! `single_file` table holding the records in the same order.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::table;
use futures::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;
use tributary_catalog::OverlayStore;
use tributary_sql::Session;

/// The records, in arrival order: key, value, event time (seconds past midnight). The
/// watermark trails the largest event time by 5 s, so the third and sixth are late.
const RECORDS: [(&str, i64, u32); 8] = [
    ("a", 1, 10),
    ("b", 5, 12),
    ("a", 7, 3),
    ("c", 6, 14),
    ("b", 2, 21),
    ("a", 9, 13),
    ("c", 8, 22),
    ("a", 4, 30),
];

fn payload((k, v, ts): (&str, i64, u32)) -> String {
    format!(r#"{{"k": "{k}", "v": {v}, "ts": "2026-01-01T00:00:{ts:02}Z"}}"#)
}

const COLUMNS: &str =
    "k TEXT, v BIGINT, ts TIMESTAMP NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND";

/// A query shape: its SQL over table `{t}`, the session's settings, and how many records
/// (in arrival order) its answer needs.
struct Case {
    name: &'static str,
    /// Statements run first: settings, lookup tables.
    settings: &'static str,
    sql: &'static str,
    needs: usize,
}

/// A Redis lookup table whose keys [`lookup_keys`] sets.
const NAMES: &str = "CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:6379', validate = false); \
     CREATE TEMPORARY TABLE names (k TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT) WITH (connector = 'redis', connection_profile = 'r', format = 'json')";

const CASES: [Case; 6] = [
    Case {
        name: "limit",
        settings: "",
        sql: "SELECT k, v, ts FROM {t} LIMIT 3",
        // a1, b5, (a7 late), c6
        needs: 4,
    },
    Case {
        name: "selective_where",
        settings: "",
        sql: "SELECT k, v FROM {t} WHERE v > 5 LIMIT 2",
        // c6 and c8; a7 and a9 are late
        needs: 7,
    },
    Case {
        name: "tumble",
        settings: "SET preview.max_rows = 6",
        sql: "SELECT tumble(INTERVAL '10' SECOND) AS w, count(*) AS n, sum(v) AS s FROM {t} GROUP BY w ORDER BY w",
        needs: 8,
    },
    Case {
        name: "session",
        settings: "SET preview.max_rows = 6",
        sql: "SELECT session(INTERVAL '5' SECOND) AS w, k, count(*) AS n FROM {t} GROUP BY w, k ORDER BY k, w",
        needs: 8,
    },
    Case {
        name: "aggregate",
        settings: "SET preview.max_rows = 6",
        sql: "SELECT k, count(*) AS n, sum(v) AS s FROM {t} GROUP BY k ORDER BY k",
        needs: 8,
    },
    Case {
        name: "lookup_join",
        settings: NAMES,
        sql: "SELECT t.k, t.v, n.name FROM {t} t LEFT JOIN names n ON concat('{prefix}', t.k) = n.k LIMIT 4",
        // a1 Ann, b5 Bob, c6 (no name), b2 Bob
        needs: 5,
    },
];

/// The Redis keys prefix of this process's lookups.
fn lookup_prefix() -> String {
    format!("harness:{}:", std::process::id())
}

/// Set the lookup table's rows: `a` is Ann, `b` is Bob, `c` has none.
async fn lookup_keys() {
    let client = redis::Client::open("redis://127.0.0.1:6379").unwrap();
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .unwrap_or_else(|e| panic!("is redis-server running on 127.0.0.1:6379? {e}"));
    for (k, name) in [("a", "Ann"), ("b", "Bob")] {
        let _: () = redis::cmd("SET")
            .arg(format!("{}{k}", lookup_prefix()))
            .arg(format!(r#"{{"name": "{name}"}}"#))
            .query_async(&mut conn)
            .await
            .unwrap();
    }
}

/// `sql` with its table and lookup prefix filled in.
fn query_of(case: &Case, table: &str) -> String {
    case.sql
        .replace("{t}", table)
        .replace("{prefix}", &lookup_prefix())
}

/// How a connector's service receives records.
#[async_trait::async_trait(?Send)]
trait Feed {
    /// The source table's WITH options, reading what [`Feed::publish`] sends to `channel`.
    fn options(&self, channel: &str) -> String;

    /// Statements the table needs first (a connection profile).
    fn setup(&self) -> Option<String> {
        None
    }

    /// Make `channel` exist before the query starts (a topic, a stream).
    async fn prepare(&mut self, _channel: &str) {}

    /// Deliver one record.
    async fn publish(&mut self, channel: &str, payload: &str);
}

/// The batch answer of every case: the records in a file, read by `single_file`.
async fn batch_answers(dir: &std::path::Path) -> Vec<String> {
    let file = dir.join("records.json");
    let lines: Vec<String> = RECORDS.iter().map(|r| payload(*r)).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let mut out = Vec::new();
    for case in &CASES {
        let s = Session::new(Arc::new(OverlayStore::in_memory()));
        // One stream, so the records keep their order as a live source delivers them.
        s.execute("SET datafusion.execution.target_partitions = 1")
            .await
            .unwrap();
        s.execute(&format!(
            "CREATE TABLE b ({COLUMNS}) WITH (connector = 'single_file', path = '{}', type = 'source', format = 'json')",
            file.display()
        ))
        .await
        .unwrap();
        if !case.settings.is_empty() {
            s.execute(case.settings).await.unwrap();
        }
        out.push(table(&s, &query_of(case, "b")).await);
    }
    out
}

/// Run every case over `feed`, checking each preview against the batch answer and the
/// time from the last record it needs to its answer.
async fn check_connector(connector: &str, feed: &mut dyn Feed) {
    let dir = tempfile::tempdir().unwrap();
    lookup_keys().await;
    let expected = batch_answers(dir.path()).await;
    for (case, expected) in CASES.iter().zip(expected) {
        let channel = format!("harness-{connector}-{}-{}", case.name, std::process::id());
        feed.prepare(&channel).await;
        let s = Arc::new(Session::new(Arc::new(OverlayStore::in_memory())));
        if let Some(setup) = feed.setup() {
            s.execute(&setup).await.unwrap();
        }
        s.execute(&format!(
            "SET preview.timeout = '30 seconds'; CREATE TABLE t ({COLUMNS}) WITH ({})",
            feed.options(&channel)
        ))
        .await
        .unwrap_or_else(|e| panic!("{connector}: {e}"));
        if !case.settings.is_empty() {
            s.execute(case.settings).await.unwrap();
        }
        let sql = query_of(case, "t");
        let query = {
            let s = s.clone();
            tokio::spawn(async move {
                let rows = table(&s, &sql).await;
                (rows, Instant::now())
            })
        };
        // The reader subscribes (a subject, a topic without retention); then one record
        // every 150 ms.
        tokio::time::sleep(Duration::from_millis(700)).await;
        let mut needed_at = None;
        for (i, record) in RECORDS.iter().enumerate() {
            if query.is_finished() {
                break;
            }
            feed.publish(&channel, &payload(*record)).await;
            if i + 1 == case.needs {
                needed_at = Some(Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        let (rows, answered) = tokio::time::timeout(Duration::from_secs(20), query)
            .await
            .unwrap_or_else(|_| panic!("{connector} {}: no answer within 20 s", case.name))
            .unwrap();
        assert_eq!(
            rows, expected,
            "{connector} {}: the preview differs from the batch answer",
            case.name
        );
        let needed_at = needed_at.unwrap();
        let took = answered.saturating_duration_since(needed_at);
        assert!(
            took < Duration::from_secs(1),
            "{connector} {}: the answer came {took:?} after the last record it needs",
            case.name
        );
    }
}

/// NATS core subjects.
struct Nats(async_nats::Client);

#[async_trait::async_trait(?Send)]
impl Feed for Nats {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'nats', servers = '127.0.0.1:4222', subject = '{channel}', type = 'source', format = 'json'"
        )
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        self.0
            .publish(channel.to_string(), payload.to_string().into())
            .await
            .unwrap();
        self.0.flush().await.unwrap();
    }
}

#[tokio::test]
async fn nats_previews_equal_the_batch_answer() {
    let client = async_nats::connect("127.0.0.1:4222")
        .await
        .unwrap_or_else(|e| panic!("is nats-server running on 127.0.0.1:4222? {e}"));
    check_connector("nats", &mut Nats(client)).await;
}

/// MQTT topics on the local Mosquitto.
struct Mqtt {
    client: rumqttc::AsyncClient,
    events: Arc<tokio::sync::Mutex<rumqttc::EventLoop>>,
}

#[async_trait::async_trait(?Send)]
impl Feed for Mqtt {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'mqtt', url = 'tcp://127.0.0.1:1883', topic = '{channel}', type = 'source', format = 'json'"
        )
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        use rumqttc::{Event, Packet, QoS};
        self.client
            .publish(
                channel,
                QoS::AtLeastOnce,
                false,
                payload.as_bytes().to_vec(),
            )
            .await
            .unwrap();
        let mut events = self.events.lock().await;
        loop {
            match tokio::time::timeout(Duration::from_secs(5), events.poll()).await {
                Ok(Ok(Event::Incoming(Packet::PubAck(_)))) => break,
                Ok(Ok(_)) => {}
                other => panic!("is mosquitto running on 127.0.0.1:1883? {other:?}"),
            }
        }
    }
}

#[tokio::test]
async fn mqtt_previews_equal_the_batch_answer() {
    let (client, events) = rumqttc::AsyncClient::new(
        rumqttc::MqttOptions::new(format!("harness-{}", std::process::id()), "127.0.0.1", 1883),
        10,
    );
    let mut feed = Mqtt {
        client,
        events: Arc::new(tokio::sync::Mutex::new(events)),
    };
    check_connector("mqtt", &mut feed).await;
}

/// Kafka topics of librdkafka's mock cluster, one partition each.
struct Kafka {
    mock: rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext>,
    producer: rdkafka::producer::FutureProducer,
}

#[async_trait::async_trait(?Send)]
impl Feed for Kafka {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'kafka', bootstrap_servers = '{}', topic = '{channel}', type = 'source', 'source.offset' = 'earliest', format = 'json'",
            self.mock.bootstrap_servers()
        )
    }

    async fn prepare(&mut self, channel: &str) {
        self.mock.create_topic(channel, 1, 1).unwrap();
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        self.producer
            .send(
                rdkafka::producer::FutureRecord::<(), _>::to(channel).payload(payload),
                Duration::from_secs(5),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }
}

#[tokio::test]
async fn kafka_previews_equal_the_batch_answer() {
    let mock = rdkafka::mocking::MockCluster::new(1).unwrap();
    let producer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", mock.bootstrap_servers())
        .create()
        .unwrap();
    check_connector("kafka", &mut Kafka { mock, producer }).await;
}

/// Confluent profiles (their tables are Kafka tables) over the same mock cluster, its
/// TLS turned off by the table's client settings as the cluster speaks plaintext.
struct Confluent(Kafka);

#[async_trait::async_trait(?Send)]
impl Feed for Confluent {
    fn setup(&self) -> Option<String> {
        Some(format!(
            "CREATE CONNECTION PROFILE cc WITH (connector = 'confluent', bootstrap_servers = '{}', key = 'API-KEY', secret = 'api-secret-value', validate = false)",
            self.0.mock.bootstrap_servers()
        ))
    }

    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'confluent', connection_profile = 'cc', topic = '{channel}', type = 'source', 'source.offset' = 'earliest', format = 'json', client_configs = 'security.protocol=plaintext'"
        )
    }

    async fn prepare(&mut self, channel: &str) {
        self.0.prepare(channel).await;
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        self.0.publish(channel, payload).await;
    }
}

#[tokio::test]
async fn confluent_previews_equal_the_batch_answer() {
    let mock = rdkafka::mocking::MockCluster::new(1).unwrap();
    let producer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", mock.bootstrap_servers())
        .create()
        .unwrap();
    check_connector("confluent", &mut Confluent(Kafka { mock, producer })).await;
}

/// Channels an HTTP test server pushes records on.
#[derive(Clone, Default)]
struct Channels(Arc<Mutex<HashMap<String, broadcast::Sender<String>>>>);

impl Channels {
    fn sender(&self, channel: &str) -> broadcast::Sender<String> {
        let mut map = self.0.lock().unwrap();
        map.entry(channel.to_string())
            .or_insert_with(|| broadcast::channel(64).0)
            .clone()
    }
}

/// Server-sent events from a test server.
struct Sse {
    base: String,
    channels: Channels,
}

#[async_trait::async_trait(?Send)]
impl Feed for Sse {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'sse', endpoint = '{}/sse/{channel}', format = 'json'",
            self.base
        )
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        let _ = self.channels.sender(channel).send(payload.to_string());
    }
}

#[tokio::test]
async fn sse_previews_equal_the_batch_answer() {
    use axum::extract::{Path, State};
    use axum::response::sse::{Event, Sse as SseResponse};
    let channels = Channels::default();
    let app = axum::Router::new()
        .route(
            "/sse/{channel}",
            axum::routing::get(
                |State(channels): State<Channels>, Path(channel): Path<String>| async move {
                    let rx = channels.sender(&channel).subscribe();
                    let events = tokio_stream_of(rx)
                        .map(|p| Ok::<_, std::convert::Infallible>(Event::default().data(p)));
                    SseResponse::new(events)
                },
            ),
        )
        .with_state(channels.clone());
    let base = crate::connection_tests::serve(app).await;
    check_connector("sse", &mut Sse { base, channels }).await;
}

/// A broadcast receiver as a stream of its values.
fn tokio_stream_of(rx: broadcast::Receiver<String>) -> impl futures::Stream<Item = String> {
    futures::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(v) => return Some((v, rx)),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    })
}

/// WebSocket messages from a test server.
struct WebSocket {
    base: String,
    channels: Channels,
}

#[async_trait::async_trait(?Send)]
impl Feed for WebSocket {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'websocket', endpoint = '{}/{channel}', format = 'json'",
            self.base
        )
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        let _ = self.channels.sender(channel).send(payload.to_string());
    }
}

// The handshake callback's error type is tungstenite's, whatever its size.
#[allow(clippy::result_large_err)]
#[tokio::test]
async fn websocket_previews_equal_the_batch_answer() {
    use tokio_tungstenite::tungstenite::Message;
    use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
    let channels = Channels::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("ws://{}", listener.local_addr().unwrap());
    let served = channels.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let channels = served.clone();
            tokio::spawn(async move {
                let mut path = String::new();
                let Ok(mut socket) =
                    tokio_tungstenite::accept_hdr_async(tcp, |req: &Request, resp: Response| {
                        path = req.uri().path().trim_start_matches('/').to_string();
                        Ok(resp)
                    })
                    .await
                else {
                    return;
                };
                let mut records = Box::pin(tokio_stream_of(channels.sender(&path).subscribe()));
                while let Some(p) = records.next().await {
                    if socket.send(Message::text(p)).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    check_connector("websocket", &mut WebSocket { base, channels }).await;
}

/// RabbitMQ streams, published through the management API, read from the first offset.
struct RabbitMq;

#[async_trait::async_trait(?Send)]
impl Feed for RabbitMq {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'rabbitmq', host = '127.0.0.1', stream = '{channel}', type = 'source', 'source.offset' = 'first', format = 'json'"
        )
    }

    async fn prepare(&mut self, channel: &str) {
        crate::connection_tests::rabbitmq_stream(channel, &[]).await;
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        let routed = crate::connection_tests::rabbitmq_api(
            reqwest::Method::POST,
            "exchanges/%2F/amq.default/publish",
            serde_json::json!({"properties": {}, "routing_key": channel, "payload": payload, "payload_encoding": "string"}),
        )
        .await;
        assert!(routed.contains("true"), "{routed}");
    }
}

#[tokio::test]
async fn rabbitmq_previews_equal_the_batch_answer() {
    check_connector("rabbitmq", &mut RabbitMq).await;
}

/// An endpoint polled every 10 ms whose body is the latest record published; only
/// changed bodies are read. Its first body is the first record.
struct Polling {
    base: String,
    bodies: Arc<Mutex<HashMap<String, String>>>,
}

#[async_trait::async_trait(?Send)]
impl Feed for Polling {
    fn options(&self, channel: &str) -> String {
        format!(
            "connector = 'polling_http', endpoint = '{}/poll/{channel}', poll_interval_ms = '10', emit_behavior = 'changed', format = 'json'",
            self.base
        )
    }

    async fn prepare(&mut self, channel: &str) {
        self.bodies
            .lock()
            .unwrap()
            .insert(channel.to_string(), payload(RECORDS[0]));
    }

    async fn publish(&mut self, channel: &str, payload: &str) {
        self.bodies
            .lock()
            .unwrap()
            .insert(channel.to_string(), payload.to_string());
    }
}

#[tokio::test]
async fn polling_http_previews_equal_the_batch_answer() {
    use axum::extract::{Path, State};
    type Bodies = Arc<Mutex<HashMap<String, String>>>;
    let bodies: Bodies = Arc::default();
    let app = axum::Router::new()
        .route(
            "/poll/{channel}",
            axum::routing::get(
                |State(bodies): State<Bodies>, Path(channel): Path<String>| async move {
                    bodies
                        .lock()
                        .unwrap()
                        .get(&channel)
                        .cloned()
                        .unwrap_or_default()
                },
            ),
        )
        .with_state(bodies.clone());
    let base = crate::connection_tests::serve(app).await;
    check_connector("polling_http", &mut Polling { base, bodies }).await;
}

/// Files are the batch side; a directory read by `filesystem` gives the same answers as
/// the one file read by `single_file`.
#[tokio::test]
async fn filesystem_reads_equal_the_single_file_answer() {
    let dir = tempfile::tempdir().unwrap();
    lookup_keys().await;
    let expected = batch_answers(dir.path()).await;
    let records = dir.path().join("records");
    std::fs::create_dir(&records).unwrap();
    std::fs::copy(dir.path().join("records.json"), records.join("part-0.json")).unwrap();
    for (case, expected) in CASES.iter().zip(expected) {
        let s = Session::new(Arc::new(OverlayStore::in_memory()));
        s.execute("SET datafusion.execution.target_partitions = 1")
            .await
            .unwrap();
        s.execute(&format!(
            "CREATE TABLE f ({COLUMNS}) WITH (connector = 'filesystem', path = '{}', type = 'source', format = 'json')",
            records.display()
        ))
        .await
        .unwrap();
        s.execute(case.settings).await.unwrap();
        assert_eq!(
            table(&s, &query_of(case, "f")).await,
            expected,
            "{}",
            case.name
        );
    }
}

/// All of a query's rows, read as they stream, as a pretty table.
async fn streamed(s: &Session, sql: &str) -> String {
    let mut stream = s.sql(sql).await.unwrap().execute_stream().await.unwrap();
    let mut batches = Vec::new();
    while let Some(b) = stream.next().await {
        batches.push(b.unwrap());
    }
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
}

/// Generators: a query's rows streamed equal its rows gathered, and a selective read of
/// a slow generator answers within a second of the row it needs being generated.
#[tokio::test]
async fn generator_previews_stream_what_they_gather_and_answer_promptly() {
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(
        "CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '50'); \
         CREATE TABLE slow WITH (connector = 'impulse', event_rate = 10)",
    )
    .await
    .unwrap();
    for sql in [
        "SELECT counter FROM counted WHERE counter % 7 = 3 LIMIT 4",
        "SELECT counter % 3 AS r, count(*) AS n FROM counted GROUP BY r ORDER BY r",
    ] {
        assert_eq!(streamed(&s, sql).await, table(&s, sql).await, "{sql}");
    }
    // Counter 5 is generated at 0.5 s; its answer must not wait for more.
    let started = Instant::now();
    let rows = table(&s, "SELECT counter FROM slow WHERE counter % 3 = 2 LIMIT 2").await;
    assert!(
        rows.contains("| 2       |") && rows.contains("| 5       |"),
        "{rows}"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_millis(1500), "{took:?}");

    s.execute("CREATE TABLE bids WITH (connector = 'nexmark', event_rate = 20)")
        .await
        .unwrap();
    // Nexmark's events are the same on every read: streamed and gathered agree.
    let sql = "SELECT bid.auction, bid.price, bid.bidder FROM bids WHERE bid IS NOT NULL LIMIT 5";
    assert_eq!(streamed(&s, sql).await, table(&s, sql).await);
    let started = Instant::now();
    let rows = table(
        &s,
        "SELECT bid.auction FROM bids WHERE bid IS NOT NULL LIMIT 3",
    )
    .await;
    assert_eq!(
        rows.lines().filter(|l| l.starts_with("| ")).count(),
        4,
        "{rows}"
    );
    // Most Nexmark events are bids: three come within a second at 20 events a second.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(2), "{took:?}");
}
