//! Kafka for INSERT INTO. At least once: every message is produced and its delivery
//! awaited before the batch counts as written. Exactly once (`sink.commit_mode =
//! 'exactly_once'`): one transaction per INSERT, committed when it finishes or is
//! cancelled (an endless INSERT ends that way: what was delivered is committed), and
//! aborted when it fails, so a `read_committed` reader sees a failed INSERT's rows never.

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
    /// The transaction was committed (or there is none).
    finished: bool,
    /// A write failed or the statement did: the transaction must be aborted.
    failed: bool,
}

/// What ending a writer without `finish` does to its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Nothing is open.
    Nothing,
    /// The statement failed: abort.
    Abort,
    /// The statement was cancelled: commit what was delivered.
    Commit,
}

impl KafkaWriter {
    fn ending(&self) -> Ending {
        match (self.finished, self.failed) {
            (true, _) => Ending::Nothing,
            (false, true) => Ending::Abort,
            (false, false) => Ending::Commit,
        }
    }

    /// End the open transaction as `ending` says, off the async threads (librdkafka's
    /// transaction calls block).
    fn end_transaction(&mut self, ending: Ending) {
        if ending == Ending::Nothing {
            return;
        }
        self.finished = true;
        let producer = self.producer.clone();
        let end = move || {
            let _ = match ending {
                Ending::Commit => producer.commit_transaction(TIMEOUT),
                _ => producer.abort_transaction(TIMEOUT),
            };
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(end);
            }
            Err(_) => end(),
        }
    }
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
        failed: false,
    })
}

impl Drop for KafkaWriter {
    /// A cancelled INSERT commits what was delivered; a failed one aborts, rather than
    /// leaving the broker to time the transaction out.
    fn drop(&mut self) {
        let ending = self.ending();
        self.end_transaction(ending);
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
            if let Err((e, _)) = delivered {
                self.failed = true;
                return Err(failure("a message was not delivered", &e));
            }
        }
        Ok(())
    }

    fn abandon(&mut self) {
        self.failed = true;
        let ending = self.ending();
        self.end_transaction(ending);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(transactional: bool) -> KafkaWriter {
        // No broker is contacted until a message is produced.
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", "127.0.0.1:1")
            .create()
            .expect("producer");
        KafkaWriter {
            producer,
            topic: "t".into(),
            key_field: None,
            transactional,
            finished: !transactional,
            failed: false,
        }
    }

    #[test]
    fn a_cancelled_transaction_commits_a_failed_one_aborts_a_finished_one_is_left() {
        let mut w = writer(true);
        assert_eq!(
            w.ending(),
            Ending::Commit,
            "dropped without finish: cancelled"
        );
        w.failed = true;
        assert_eq!(w.ending(), Ending::Abort);
        w.finished = true;
        assert_eq!(w.ending(), Ending::Nothing);
        // Without a transaction there is nothing to end.
        let plain = writer(false);
        assert_eq!(plain.ending(), Ending::Nothing);
    }
}
