//! Kafka for queries: a consumer assigned every partition of the table's topic from its
//! start offset (`source.offset`: earliest, latest, or the group's committed offsets), on
//! a thread of its own because librdkafka's calls block, handing messages to the query
//! through a small bounded channel (so a slow query slows the consumer, and memory stays
//! bounded by the batch size). Offsets are committed only when the table names a group
//! (`source.group_id`), and then only for the messages the query took, as the reader
//! closes: a preview of a table without a group leaves no trace in the cluster.

use super::probe::sampled;
use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::{Offset, TopicPartitionList};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// Messages the consumer thread gathers before handing them over.
const THREAD_BATCH: usize = 4096;
/// Batches waiting in the channel at most.
const CHANNEL_BATCHES: usize = 4;
/// How long the reader waits for the topic's metadata before it assigns partitions.
const METADATA_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one poll waits, which bounds how soon the thread notices a closed reader.
const POLL: Duration = Duration::from_millis(100);

/// The next offset to commit per partition: one past the last message the query took.
type Taken = Arc<Mutex<HashMap<i32, i64>>>;

/// A reader of one topic.
#[derive(Debug)]
pub(crate) struct KafkaReader {
    batches: mpsc::Receiver<Result<Vec<SampledMessage>, String>>,
    pending: VecDeque<SampledMessage>,
    /// What the query took, when the table names a group to commit it for.
    taken: Option<Taken>,
}

/// Open a consumer of `partitions` of `topic` with the profile's `config` and the
/// table's source settings, and start its thread.
pub(crate) fn open(
    mut config: ClientConfig,
    topic: &str,
    partitions: &[i32],
    table: &Value,
) -> Result<KafkaReader, KafkaError> {
    let source = table.get("type").unwrap_or(&Value::Null);
    let group = source.get("group_id").and_then(Value::as_str);
    let group_id = match (group, source.get("group_id_prefix").and_then(Value::as_str)) {
        (Some(g), _) => g.to_string(),
        (None, Some(prefix)) => format!("{prefix}-tributary-preview-{}", std::process::id()),
        (None, None) => format!("tributary-preview-{}", std::process::id()),
    };
    config
        .set("group.id", group_id)
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        // A caught-up preview shows new messages within 100 ms, not librdkafka's 500.
        .set("fetch.wait.max.ms", "100");
    if let Some(mode) = source.get("read_mode").and_then(Value::as_str) {
        config.set("isolation.level", mode);
    }
    let start = match source.get("offset").and_then(Value::as_str) {
        Some("earliest") => Offset::Beginning,
        Some("group") => Offset::Stored,
        _ => Offset::End,
    };
    let consumer: BaseConsumer = config.create()?;
    let mut assignment = TopicPartitionList::new();
    for p in partitions {
        assignment.add_partition_offset(topic, *p, start)?;
    }
    let (tx, rx) = mpsc::channel(CHANNEL_BATCHES);
    let taken: Option<Taken> = group.map(|_| Arc::default());
    let commit = taken.clone().map(|t| (topic.to_string(), t));
    let topic = topic.to_string();
    std::thread::Builder::new()
        .name("kafka-reader".into())
        .spawn(move || {
            // Partitions assigned before the client knows their leaders wait for
            // librdkafka's fixed 500 ms offset-query retry; with the topic's metadata
            // fetched first, the first fetch leaves at once.
            let assigned = consumer
                .fetch_metadata(Some(&topic), METADATA_TIMEOUT)
                .and_then(|_| consumer.assign(&assignment));
            match assigned {
                Ok(()) => consume(&consumer, &topic.as_str().into(), &tx, commit),
                Err(e) => {
                    let _ = tx.blocking_send(Err(e.to_string()));
                }
            }
        })
        .map_err(|e| KafkaError::ClientCreation(format!("cannot start the reader thread: {e}")))?;
    Ok(KafkaReader {
        batches: rx,
        pending: VecDeque::new(),
        taken,
    })
}

/// Poll until the reader goes away; then commit what it took, when the table has a group.
fn consume(
    consumer: &BaseConsumer,
    topic: &Arc<str>,
    tx: &mpsc::Sender<Result<Vec<SampledMessage>, String>>,
    commit: Option<(String, Taken)>,
) {
    let mut batch = Vec::new();
    while !tx.is_closed() {
        // Gather what is already there, and hand it over as soon as nothing more is.
        let wait = if batch.is_empty() {
            POLL
        } else {
            Duration::ZERO
        };
        match consumer.poll(wait) {
            Some(Ok(m)) => {
                batch.extend(sampled(&m, topic));
                if batch.len() < THREAD_BATCH {
                    continue;
                }
            }
            Some(Err(KafkaError::PartitionEOF(_))) | None => {}
            Some(Err(e)) => {
                let _ = tx.blocking_send(Err(e.to_string()));
                break;
            }
        }
        if !batch.is_empty() && tx.blocking_send(Ok(std::mem::take(&mut batch))).is_err() {
            break;
        }
    }
    if let Some((topic, taken)) = commit {
        let offsets = taken.lock().map(|t| t.clone()).unwrap_or_default();
        let mut list = TopicPartitionList::new();
        for (p, next) in offsets {
            let _ = list.add_partition_offset(&topic, p, Offset::Offset(next));
        }
        if list.count() > 0 {
            let _ = consumer.commit(&list, CommitMode::Sync);
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for KafkaReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        if self.pending.is_empty() {
            match self.batches.recv().await {
                Some(Ok(batch)) => self.pending.extend(batch),
                Some(Err(e)) => {
                    return Err(ReadFailure::new(
                        format!("the consumer failed: {e}"),
                        "Check the cluster's health and the topic; TEST TABLE shows each stage.",
                    ));
                }
                None => {
                    return Err(ReadFailure::new(
                        "the consumer stopped",
                        "Run the query again; TEST TABLE shows each stage.",
                    ));
                }
            }
        }
        let n = max.max(1).min(self.pending.len());
        let out: Vec<SampledMessage> = self.pending.drain(..n).collect();
        if let Some(Ok(mut taken)) = self.taken.as_ref().map(|t| t.lock()) {
            for m in &out {
                if let (Some(p), Some(o)) = (m.int("partition"), m.big_int("offset_id")) {
                    let next = taken.entry(p).or_insert(0);
                    *next = (*next).max(o + 1);
                }
            }
        }
        Ok(Some(out))
    }
}
