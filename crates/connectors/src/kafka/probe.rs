//! The kafka connector's connection test: each bootstrap server resolved and reached over
//! TCP (so DNS failures and refusals are told apart), cluster metadata fetched with the
//! profile's authentication, the table's topic located (with a suggestion when it is
//! misspelled), and up to `limit` messages read from the table's start offset. Also the
//! topic list for completion. librdkafka's calls block, so they run on the blocking pool.

use crate::probe::{MetadataValue, Probe, SampledMessage, Stage, TestCode, human, is_dns_error};
use rdkafka::client::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::Message;
use rdkafka::metadata::Metadata;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tributary_registry::{RegistryClient, RegistryError};
use tributary_types::ConnectionType;

/// The librdkafka settings of the profile (and the table's `client_configs`).
fn client_config(probe: &mut Probe<'_>, servers: &str) -> Option<ClientConfig> {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", servers)
        .set("group.id", format!("tributary-test-{}", std::process::id()))
        .set("enable.auto.commit", "false")
        .set("allow.auto.create.topics", "false")
        .set("log_level", "0");
    if let Some(auth) = probe.connection.pointer("/authentication").cloned()
        && auth.get("mechanism").is_some()
    {
        let protocol = auth
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or("SASL_SSL")
            .to_string();
        let mechanism = auth
            .get("mechanism")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let user = probe.setting("/authentication/username", "auth.username")?;
        let password = probe.setting("/authentication/password", "auth.password")?;
        config
            .set("security.protocol", protocol)
            .set("sasl.mechanism", mechanism)
            .set("sasl.username", user)
            .set("sasl.password", password);
    } else if probe.connection.get("key").is_some() {
        // A Confluent Cloud profile: an API key and secret, always SASL_SSL with PLAIN.
        let key = probe.setting("/key", "key")?;
        let secret = probe.setting("/secret", "secret")?;
        config
            .set("security.protocol", "SASL_SSL")
            .set("sasl.mechanism", "PLAIN")
            .set("sasl.username", key)
            .set("sasl.password", secret);
    }
    if let Some(extra) = probe
        .table
        .and_then(|t| t.pointer("/client_configs"))
        .and_then(Value::as_object)
    {
        for (k, v) in extra {
            if let Some(v) = v.as_str() {
                config.set(k, v);
            }
        }
    }
    Some(config)
}

/// Resolve and reach every bootstrap server over TCP.
async fn reach(probe: &mut Probe<'_>, servers: &str) -> bool {
    let list: Vec<&str> = servers
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    for server in &list {
        if !probe
            .reach(
                "bootstrap server",
                server,
                "'bootstrap_servers'",
                "the broker is running",
            )
            .await
        {
            return false;
        }
    }
    probe.pass(
        Stage::Connect,
        format!("reached {} bootstrap server(s)", list.len()),
    );
    true
}

/// Keeps the errors librdkafka reported (each once): a failed TLS or SASL handshake is
/// told only there, while the call that failed says "broker transport failure". Error
/// events wait in a queue until the client is polled, but librdkafka's broker threads log
/// the same failures at once, so both are recorded.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl Recorder {
    fn record(&self, reason: &str) {
        if let Ok(mut seen) = self.0.lock()
            && !seen.iter().any(|r| r == reason)
        {
            seen.push(reason.to_string());
        }
    }
}

impl ClientContext for Recorder {
    fn error(&self, _error: KafkaError, reason: &str) {
        self.record(reason);
    }

    fn log(&self, level: RDKafkaLogLevel, _facility: &str, message: &str) {
        if matches!(
            level,
            RDKafkaLogLevel::Emerg
                | RDKafkaLogLevel::Alert
                | RDKafkaLogLevel::Critical
                | RDKafkaLogLevel::Error
        ) {
            self.record(message);
        }
    }
}

impl ConsumerContext for Recorder {}

/// A failed librdkafka call, with what librdkafka reported meanwhile.
struct Failure {
    error: KafkaError,
    detail: Option<String>,
    /// Whether the call used up its whole timeout (librdkafka then reports a mute broker
    /// as a transport failure).
    timed_out: bool,
}

/// Set when the future waiting for a blocking call is dropped before the call ends.
#[derive(Default)]
struct Abandoned(Arc<AtomicBool>);

impl Drop for Abandoned {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Cluster metadata (of one topic, or all), fetched on the blocking pool.
async fn metadata(
    config: ClientConfig,
    topic: Option<String>,
    timeout: Duration,
) -> Result<Metadata, Failure> {
    let recorder = Recorder::default();
    let context = recorder.clone();
    let started = Instant::now();
    // A caller that stops waiting (a query that has its rows) drops this future; a fetch
    // not yet started on the blocking pool then never starts.
    let abandoned = Abandoned::default();
    let skip = abandoned.0.clone();
    let fetched = tokio::task::spawn_blocking(move || {
        if skip.load(Ordering::Acquire) {
            return Err(KafkaError::Canceled);
        }
        let consumer: BaseConsumer<Recorder> = config.create_with_context(context)?;
        let fetched = consumer.fetch_metadata(topic.as_deref(), timeout);
        if fetched.is_err() {
            // librdkafka's errors reach the context only when the client is polled.
            for _ in 0..8 {
                let _ = consumer.poll(Duration::ZERO);
            }
        }
        // Closing a client waits about 100 ms for its broker threads; nothing here
        // needs to wait for that.
        let _ = std::thread::Builder::new()
            .name("kafka-close".into())
            .spawn(move || drop(consumer));
        fetched
    })
    .await
    .unwrap_or(Err(KafkaError::MetadataFetch(RDKafkaErrorCode::Fail)));
    drop(abandoned);
    fetched.map_err(|error| Failure {
        error,
        timed_out: started.elapsed() >= timeout,
        detail: recorder
            .0
            .lock()
            .ok()
            .map(|seen| seen.join("; "))
            .filter(|d| !d.is_empty()),
    })
}

/// Connect and authenticate; the settings that worked.
async fn connect(probe: &mut Probe<'_>) -> Option<ClientConfig> {
    let servers = probe.setting("/bootstrapServers", "bootstrap_servers")?;
    let config = client_config(probe, &servers)?;
    probe.pass(Stage::Resolve, format!("bootstrap servers {servers}"));
    if !reach(probe, &servers).await {
        return None;
    }
    match metadata(config.clone(), None, probe.timeout).await {
        Ok(m) => {
            probe.pass(
                Stage::Authenticate,
                format!(
                    "the cluster answered: {} broker(s), {} topic(s)",
                    m.brokers().len(),
                    m.topics().len()
                ),
            );
            check_registry(probe).await.then_some(config)
        }
        Err(e) => {
            fail_kafka(probe, Stage::Authenticate, &e);
            None
        }
    }
}

/// The profile's schema registry (kafka's `schemaRegistryEnum`, confluent's
/// `schemaRegistry`), asked for its subjects with the profile's credentials; `true` when
/// there is none or it answered.
async fn check_registry(probe: &mut Probe<'_>) -> bool {
    let Some(base) = ["/schemaRegistryEnum", "/schemaRegistry"]
        .into_iter()
        .find(|p| probe.connection.pointer(&format!("{p}/endpoint")).is_some())
    else {
        return true;
    };
    let Some(endpoint) = probe.setting(&format!("{base}/endpoint"), "schema_registry.endpoint")
    else {
        return false;
    };
    let auth = match probe.connection.pointer(&format!("{base}/apiKey")) {
        Some(_) => {
            let Some(key) = probe.setting(&format!("{base}/apiKey"), "schema_registry.api_key")
            else {
                return false;
            };
            let Some(secret) =
                probe.setting(&format!("{base}/apiSecret"), "schema_registry.api_secret")
            else {
                return false;
            };
            Some((key, secret))
        }
        None => None,
    };
    let listed = match RegistryClient::new(&endpoint, auth, probe.timeout) {
        Ok(client) => client.subjects().await,
        Err(e) => Err(e),
    };
    let error = match listed {
        Ok(subjects) => {
            probe.pass(
                Stage::Authenticate,
                format!(
                    "the schema registry at {endpoint} answered: {} subject(s)",
                    subjects.len()
                ),
            );
            return true;
        }
        Err(e) => e,
    };
    let (stage, code, hint) = match &error {
        RegistryError::Unauthorized { .. } => (
            Stage::Authenticate,
            TestCode::AuthFailed,
            "Check 'schema_registry.api_key' and 'schema_registry.api_secret'.",
        ),
        RegistryError::Timeout { .. } => (
            Stage::Connect,
            TestCode::Timeout,
            "Check that the registry is reachable from here, or give the test a longer TIMEOUT.",
        ),
        RegistryError::Connect { reason, .. } if is_dns_error(reason) => (
            Stage::Resolve,
            TestCode::DnsUnresolved,
            "Check the host name in 'schema_registry.endpoint'.",
        ),
        RegistryError::Connect { .. } => (
            Stage::Connect,
            TestCode::ConnectRefused,
            "Check 'schema_registry.endpoint' and that the registry is running.",
        ),
        _ => (
            Stage::Locate,
            TestCode::BadResponse,
            "Check that 'schema_registry.endpoint' is a Confluent Schema Registry (its /subjects path).",
        ),
    };
    probe.fail(stage, code, error.to_string(), hint);
    false
}

fn fail_kafka(probe: &mut Probe<'_>, stage: Stage, failure: &Failure) {
    let e = &failure.error;
    let text = match &failure.detail {
        Some(detail) => format!("{e} ({detail})"),
        None => e.to_string(),
    };
    let detail = failure.detail.as_deref().unwrap_or_default();
    let code = e.rdkafka_error_code();
    let credentials = if probe.connection.get("key").is_some() {
        "Check the API 'key' and 'secret' of the Confluent profile."
    } else {
        "Check 'auth.username', 'auth.password' and 'auth.mechanism'."
    };
    let (code, hint) = match code {
        Some(RDKafkaErrorCode::SaslAuthenticationFailed | RDKafkaErrorCode::Authentication) => {
            (TestCode::AuthFailed, credentials)
        }
        _ if detail.contains("SASL authentication") => (TestCode::AuthFailed, credentials),
        Some(
            RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::OperationTimedOut,
        ) if failure.timed_out && !detail.contains("SSL") => (
            TestCode::Timeout,
            "The brokers accepted the connection but did not answer in time: check that the port is Kafka's, or give the test a longer TIMEOUT.",
        ),
        _ if detail.contains("SSL") => (
            TestCode::TlsFailed,
            "The TLS handshake failed: check that the brokers speak TLS on these ports and that their certificate is trusted (or the profile's protocol).",
        ),
        Some(RDKafkaErrorCode::OperationTimedOut | RDKafkaErrorCode::RequestTimedOut) => (
            TestCode::Timeout,
            "The brokers did not answer in time; check that they are reachable and healthy.",
        ),
        Some(
            RDKafkaErrorCode::TopicAuthorizationFailed
            | RDKafkaErrorCode::ClusterAuthorizationFailed
            | RDKafkaErrorCode::GroupAuthorizationFailed,
        ) => (
            TestCode::PermissionDenied,
            "Grant the user access with the cluster's ACLs.",
        ),
        _ if is_dns_error(&text) => (
            TestCode::DnsUnresolved,
            "Check the host names in 'bootstrap_servers'.",
        ),
        _ => (
            TestCode::BadResponse,
            "Check the brokers' addresses and the profile's authentication.",
        ),
    };
    probe.fail(
        stage,
        code,
        format!("the cluster did not answer as expected: {text}"),
        hint,
    );
}

pub(crate) async fn test_connection(probe: &mut Probe<'_>) {
    connect(probe).await;
}

pub(crate) async fn test_table(probe: &mut Probe<'_>) {
    let Some((config, topic, partitions)) = locate(probe).await else {
        return;
    };
    if probe.role == Some(ConnectionType::Sink) {
        probe.skip(
            Stage::Write,
            TestCode::NotTestable,
            "Kafka cannot check write permission without producing; nothing was written",
        );
        return;
    }
    if !probe.wants_messages() {
        return;
    }
    read_sample(probe, config, topic, partitions).await;
}

/// Connect, then find the table's topic and its partitions: the client settings, the
/// topic and the partition ids, or `None` (the probe says why).
pub(super) async fn locate(probe: &mut Probe<'_>) -> Option<(ClientConfig, String, Vec<i32>)> {
    let config = connect(probe).await?;
    let topic = probe.table_setting("/topic", "topic")?;
    let all = match metadata(config.clone(), None, probe.timeout).await {
        Ok(m) => m,
        Err(e) => {
            fail_kafka(probe, Stage::Locate, &e);
            return None;
        }
    };
    let names: Vec<String> = all.topics().iter().map(|t| t.name().to_string()).collect();
    let Some(found) = all.topics().iter().find(|t| t.name() == topic) else {
        let visible: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|n| !n.starts_with('_'))
            .collect();
        let hint = match tributary_types::closest(&topic, visible.iter().copied()) {
            Some(c) => format!("Did you mean '{c}'? SHOW TOPICS IN PROFILE lists the topics."),
            None => "Check 'topic'; SHOW TOPICS IN PROFILE lists the cluster's topics.".to_string(),
        };
        probe.fail(
            Stage::Locate,
            TestCode::NotFound,
            format!(
                "topic '{topic}' does not exist ({} topic(s) in the cluster)",
                visible.len()
            ),
            hint,
        );
        return None;
    };
    let partitions: Vec<i32> = found.partitions().iter().map(|p| p.id()).collect();
    probe.pass(
        Stage::Locate,
        format!("topic '{topic}' has {} partition(s)", partitions.len()),
    );
    Some((config, topic, partitions))
}

/// Read up to `probe.limit` messages from the table's start offset into the probe.
async fn read_sample(
    probe: &mut Probe<'_>,
    config: ClientConfig,
    topic: String,
    partitions: Vec<i32>,
) {
    let offset = probe
        .table
        .and_then(|t| t.pointer("/type/offset"))
        .and_then(Value::as_str)
        .unwrap_or("latest")
        .to_string();
    let limit = probe.limit;
    let timeout = probe.timeout;
    let read_topic = topic.clone();
    let read = tokio::task::spawn_blocking(move || {
        read(config, &read_topic, &partitions, &offset, limit, timeout)
    })
    .await;
    let (messages, waiting) = match read {
        Ok(Ok(r)) => r,
        Ok(Err(error)) => {
            let failure = Failure {
                error,
                detail: None,
                timed_out: false,
            };
            return fail_kafka(probe, Stage::Read, &failure);
        }
        Err(_) => {
            probe.fail(
                Stage::Read,
                TestCode::BadResponse,
                "reading was interrupted",
                "Try again.",
            );
            return;
        }
    };
    probe.messages = messages;
    let n = probe.messages.len();
    if n > 0 {
        probe.pass(Stage::Read, probe.messages_read());
        return;
    }
    let offset = probe
        .table
        .and_then(|t| t.pointer("/type/offset"))
        .and_then(Value::as_str)
        .unwrap_or("latest");
    let why = match (offset, waiting) {
        ("latest", w) if w > 0 => format!(
            "the table reads from the latest offset, so the {w} message(s) already in the topic are skipped and only new ones would arrive; set 'source.offset' = 'earliest' to read them"
        ),
        (_, 0) => format!("topic '{topic}' is empty"),
        (o, w) => {
            format!("{w} message(s) are in the topic, but none arrived from offset '{o}' in time")
        }
    };
    probe.fail(
        Stage::Read,
        TestCode::Empty,
        format!("no messages arrived within {}: {why}", human(timeout)),
        "Produce to the topic while testing, check 'topic' and 'source.offset', or give the test a longer TIMEOUT.",
    );
}

/// Up to `limit` messages from the start offset, and how many messages the partitions
/// hold in all (to say why nothing arrived).
fn read(
    config: ClientConfig,
    topic: &str,
    partitions: &[i32],
    offset: &str,
    limit: usize,
    timeout: Duration,
) -> Result<(Vec<SampledMessage>, i64), KafkaError> {
    let consumer: BaseConsumer = config.create()?;
    let mut held = 0;
    let mut assignment = TopicPartitionList::new();
    for p in partitions {
        let (low, high) = consumer.fetch_watermarks(topic, *p, timeout)?;
        held += high - low;
        let start = match offset {
            "earliest" => Offset::Beginning,
            "group" => Offset::Stored,
            _ => Offset::End,
        };
        assignment.add_partition_offset(topic, *p, start)?;
    }
    consumer.assign(&assignment)?;
    let deadline = Instant::now() + timeout;
    let topic: Arc<str> = topic.into();
    let mut out = Vec::new();
    // Once messages have come, a quiet spell ends the sample (as `Probe::sample_deadline`).
    let mut idle_until = deadline;
    while out.len() < limit {
        let left = deadline
            .min(idle_until)
            .saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        match consumer.poll(left.min(Duration::from_millis(200))) {
            Some(Ok(m)) => {
                out.extend(sampled(&m, &topic));
                idle_until = Instant::now() + crate::probe::SAMPLE_IDLE;
            }
            Some(Err(KafkaError::PartitionEOF(_))) | None => {}
            Some(Err(e)) => return Err(e),
        }
    }
    Ok((out, held))
}

/// A message's payload with the values METADATA FROM columns read, as the connector
/// declares them; `None` for a message without a payload (a tombstone).
pub(super) fn sampled(m: &impl Message, topic: &Arc<str>) -> Option<SampledMessage> {
    let payload = m.payload()?;
    let mut metadata = Vec::with_capacity(5);
    metadata.extend([
        ("topic", MetadataValue::Text(topic.clone())),
        ("partition", MetadataValue::Int(m.partition())),
        ("offset_id", MetadataValue::BigInt(m.offset())),
    ]);
    if let Some(key) = m.key() {
        metadata.push(("key", MetadataValue::Bytes(key.to_vec())));
    }
    let millis = m.timestamp().to_millis();
    if let Some(ms) = millis {
        metadata.push(("timestamp", MetadataValue::BigInt(ms)));
    }
    Some(SampledMessage {
        payload: payload.to_vec(),
        metadata,
        // The message's timestamp is its event time, as in Arroyo.
        event_time: millis.map(|ms| ms.saturating_mul(1_000_000)),
    })
}

/// The cluster's topics, without internal ones (starting with `_`).
pub(crate) async fn topics(probe: &mut Probe<'_>) -> Option<Vec<String>> {
    let config = connect(probe).await?;
    match metadata(config, None, probe.timeout).await {
        Ok(m) => {
            let mut names: Vec<String> = m
                .topics()
                .iter()
                .map(|t| t.name().to_string())
                .filter(|n| !n.starts_with('_'))
                .collect();
            names.sort();
            Some(names)
        }
        Err(e) => {
            fail_kafka(probe, Stage::Locate, &e);
            None
        }
    }
}
