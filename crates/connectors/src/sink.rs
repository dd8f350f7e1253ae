//! Writing a sink table from `INSERT INTO`. A connector opens a [`SinkWriter`] through the
//! same [`Probe`](crate::probe::Probe) its connection test uses (settings resolved,
//! failures recorded by stage with a stable code); the writer takes encoded messages in
//! batches and, at the end, flushes and commits what it was given. Encoding rows is the
//! caller's, with the table's `RowEncoder`.

use crate::file_layout::PartitionSpec;
use crate::source::ReadFailure;
use std::fmt;
use std::time::Duration;

/// Why writing failed: a sentence (never a secret) and what to check.
pub type WriteFailure = ReadFailure;

/// One message to write: the encoded row, and its key where the sink has keys.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutMessage {
    /// The encoded row.
    pub payload: Vec<u8>,
    /// The row's key (Kafka's message key, Redis's key suffix), when the table names one.
    pub key: Option<Vec<u8>>,
    /// The row's field within its key (a Redis hash field), when the table names one.
    pub field: Option<Vec<u8>>,
    /// The directory the row goes in under a file sink's path, when the sink partitions
    /// (see [`SinkWriter::partitioning`]).
    pub partition: Option<String>,
}

impl From<Vec<u8>> for OutMessage {
    fn from(payload: Vec<u8>) -> Self {
        Self {
            payload,
            key: None,
            field: None,
            partition: None,
        }
    }
}

/// One open sink. A statement that ends calls [`finish`](Self::finish); one that fails
/// calls [`abandon`](Self::abandon). Dropping it without either means the statement was
/// cancelled (Ctrl-C, a dropped stream): what was acknowledged stays written, and a writer
/// that commits (Kafka transactions) commits it.
#[async_trait::async_trait]
pub trait SinkWriter: Send + fmt::Debug {
    /// Write `messages`; returns once the system has accepted them (acknowledged, where
    /// it acknowledges).
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure>;

    /// Flush and commit everything written; called once, after the last write.
    async fn finish(&mut self) -> Result<(), WriteFailure> {
        Ok(())
    }

    /// The statement failed: discard what is not committed (abort a transaction).
    /// Called instead of `finish`.
    fn abandon(&mut self) {}

    /// The column whose value is each message's key, when the table names one.
    fn key_column(&self) -> Option<&str> {
        None
    }

    /// The column whose value is each message's field within its key, when the table
    /// names one.
    fn field_column(&self) -> Option<&str> {
        None
    }

    /// How the sink lays rows out in directories, when it does: the caller then encodes
    /// each directory's rows together and names it in [`OutMessage::partition`].
    fn partitioning(&self) -> Option<&PartitionSpec> {
        None
    }

    /// How often the writer wants [`tick`](Self::tick) while no rows arrive (to close
    /// files on time), if at all.
    fn tick_every(&self) -> Option<Duration> {
        None
    }

    /// Time passed with no rows: close what is due.
    async fn tick(&mut self) -> Result<(), WriteFailure> {
        Ok(())
    }
}
