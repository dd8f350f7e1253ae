//! Reading a source table for a query. A connector opens a [`SourceReader`] through the
//! same [`Probe`](crate::probe::Probe) its connection test uses (settings resolved,
//! `{{ VAR }}` references read only now, every step bounded, failures recorded by stage
//! with a stable code), then the reader hands back raw messages in batches until the
//! source ends or the query stops reading. Decoding them is the caller's, with the same
//! `BatchDecoder` that `TEST TABLE` uses.

use crate::probe::SampledMessage;
use std::fmt;
use tributary_types::Format;

/// The wall clock, in nanoseconds since the epoch: the event time of a record its source
/// gives none (the time it is read), and a generator's clock.
pub fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Why reading stopped with an error: a sentence (never a secret) and what to check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReadFailure {
    /// What went wrong.
    pub message: String,
    /// What to check.
    pub hint: String,
}

impl ReadFailure {
    /// A failure and its hint.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

/// One open source: messages in arrival order, across all its partitions.
///
/// A reader holds its connections; dropping it closes them, which is how a query that
/// has read enough (a `LIMIT`, a preview bound) or is cancelled stops it.
#[async_trait::async_trait]
pub trait SourceReader: Send + fmt::Debug {
    /// Up to `max` messages (at least one), waiting for them as long as it takes;
    /// `Ok(None)` once a bounded source has nothing left.
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure>;

    /// The format of the messages when the reader makes them itself (generators make
    /// JSON); `None` when they are the system's bytes, to decode with the table's format.
    fn generated_format(&self) -> Option<Format> {
        None
    }
}

/// A reader over messages already in memory, in batches of the size asked for: what
/// bounded sources that read everything at open (a single file) hand back.
#[derive(Debug, Default)]
pub struct BufferedReader {
    messages: std::collections::VecDeque<SampledMessage>,
}

impl BufferedReader {
    /// A reader of `messages`, in order.
    pub fn new(messages: Vec<SampledMessage>) -> Self {
        Self {
            messages: messages.into(),
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for BufferedReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        if self.messages.is_empty() {
            return Ok(None);
        }
        let n = max.max(1).min(self.messages.len());
        Ok(Some(self.messages.drain(..n).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_buffered_reader_hands_back_batches_of_the_size_asked_then_ends() {
        let messages: Vec<SampledMessage> =
            (0..5u8).map(|i| SampledMessage::from(vec![i])).collect();
        let mut r = BufferedReader::new(messages);
        let sizes = [2, 2, 2];
        let mut got = Vec::new();
        for max in sizes {
            let batch = r.next_batch(max).await.expect("read").expect("a batch");
            got.extend(batch.into_iter().map(|m| m.payload[0]));
        }
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert_eq!(r.next_batch(2).await, Ok(None));
    }
}
