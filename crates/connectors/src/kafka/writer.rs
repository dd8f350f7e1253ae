//! Kafka for INSERT INTO. At least once: every message is produced and its delivery
//! awaited before the batch counts as written. Exactly once (`sink.commit_mode =
//! 'exactly_once'`): one transaction per INSERT, committed when it finishes; a failed or
//! cancelled INSERT aborts it (librdkafka aborts an open transaction when the producer is
//! dropped), so a `read_committed` reader sees all of its rows or none.

use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use futures::future::join_all;
use rdkafka::config::ClientConfig;
use rdkafka::error::KafkaError;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use serde_json::Value;
use std::time::Duration;

/// How long a delivery or a transaction step may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A producer to one topic.
pub(crate) struct KafkaWriter {
    producer: FutureProducer,
    topic: String,
    key_field: Option<String>,
    transactional: bool,
    /// The transaction was committed (or there is none to abort).
    finished: bool,
}

impl std::fmt::Debug for KafkaWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaWriter")
            .field("topic", &self.topic)
            .field("transactional", &self.transactional)
            .finish_non_exhaustive()
    }
}

fn failure(what: &str, e: &KafkaError) -> WriteFailure {
    WriteFailure::new(
        format!("{what}: {e}"),
        "Check the cluster's health and the user's permissions on the topic.",
    )
}

/// A producer with the profile's `config` for the table's `topic`; exactly-once tables
/// begin their transaction now.
pub(crate) fn open(
    mut config: ClientConfig,
    topic: &str,
    table: &Value,
) -> Result<KafkaWriter, KafkaError> {
    let sink = table.get("type").unwrap_or(&Value::Null);
    let transactional = sink.get("commit_mode").and_then(Value::as_str) == Some("exactly_once");
    config.set("message.timeout.ms", TIMEOUT.as_millis().to_string());
    if transactional {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        config.set(
            "transactional.id",
            format!("tributary-{topic}-{}-{n}", std::process::id()),
        );
    }
    let producer: FutureProducer = config.create()?;
    if transactional {
        producer.init_transactions(TIMEOUT)?;
        producer.begin_transaction()?;
    }
    Ok(KafkaWriter {
        producer,
        topic: topic.to_string(),
        key_field: sink
            .get("key_field")
            .and_then(Value::as_str)
            .map(str::to_string),
        transactional,
        finished: !transactional,
    })
}

impl Drop for KafkaWriter {
    /// An INSERT that failed or was cancelled aborts its transaction now, rather than
    /// leaving the broker to time it out.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let producer = self.producer.clone();
        let abort = move || {
            let _ = producer.abort_transaction(TIMEOUT);
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(abort);
            }
            Err(_) => abort(),
        }
    }
}

#[async_trait::async_trait]
impl SinkWriter for KafkaWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let sends = messages.iter().map(|m| {
            let mut record = FutureRecord::to(&self.topic).payload(&m.payload);
            if let Some(k) = &m.key {
                record = record.key(k);
            }
            self.producer.send(record, TIMEOUT)
        });
        for delivered in join_all(sends).await {
            delivered.map_err(|(e, _)| failure("a message was not delivered", &e))?;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        if self.transactional {
            let producer = self.producer.clone();
            tokio::task::spawn_blocking(move || producer.commit_transaction(TIMEOUT))
                .await
                .map_err(|e| {
                    WriteFailure::new(format!("the commit was interrupted: {e}"), "Try again.")
                })?
                .map_err(|e| failure("the transaction did not commit", &e))?;
            self.finished = true;
        } else {
            let producer = self.producer.clone();
            tokio::task::spawn_blocking(move || producer.flush(TIMEOUT))
                .await
                .map_err(|e| {
                    WriteFailure::new(format!("the flush was interrupted: {e}"), "Try again.")
                })?
                .map_err(|e| failure("the producer did not flush", &e))?;
        }
        Ok(())
    }

    fn key_column(&self) -> Option<&str> {
        self.key_field.as_deref()
    }
}
