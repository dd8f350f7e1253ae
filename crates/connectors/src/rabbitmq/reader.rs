//! RabbitMQ streams for queries: the subscription the table's test makes (from
//! `source.offset`, anonymous, so nothing is stored on the server), read chunk by chunk.
//! Dropping the reader closes the connection, which ends the subscription. Never ends on
//! its own.

use super::client::StreamClient;
use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader};
use std::collections::VecDeque;

/// A subscribed connection.
pub(crate) struct RabbitReader {
    client: StreamClient,
    stream: String,
    pending: VecDeque<Vec<u8>>,
}

impl std::fmt::Debug for RabbitReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RabbitReader({})", self.stream)
    }
}

impl RabbitReader {
    pub(crate) fn new(client: StreamClient, stream: String) -> Self {
        Self {
            client,
            stream,
            pending: VecDeque::new(),
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for RabbitReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        while self.pending.is_empty() {
            let chunk = self.client.next_messages().await.map_err(|e| {
                ReadFailure::new(
                    format!("reading stream '{}' failed: {e}", self.stream),
                    "Check the node's logs; TEST TABLE shows each stage.",
                )
            })?;
            self.pending.extend(chunk);
        }
        let n = max.max(1).min(self.pending.len());
        Ok(Some(
            self.pending.drain(..n).map(SampledMessage::from).collect(),
        ))
    }
}
