//! RabbitMQ streams for `INSERT INTO`: one publisher on a connection to the stream's
//! leader (only the leader takes writes), each batch published and confirmed by the node
//! before the write returns, so a finished INSERT's rows are stored.

use super::client::StreamClient;
use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use std::time::Duration;

/// How long a batch may wait for the node's confirmations.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// A publisher on one stream.
pub(crate) struct RabbitWriter {
    client: Option<StreamClient>,
    stream: String,
}

impl std::fmt::Debug for RabbitWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RabbitWriter({})", self.stream)
    }
}

impl RabbitWriter {
    /// A writer over `client`, whose publisher is declared on `stream`.
    pub(crate) fn new(client: StreamClient, stream: String) -> Self {
        Self {
            client: Some(client),
            stream,
        }
    }
}

#[async_trait::async_trait]
impl SinkWriter for RabbitWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let Some(client) = &mut self.client else {
            return Err(WriteFailure::new(
                "the connection is closed",
                "Run the INSERT again.",
            ));
        };
        let payloads: Vec<Vec<u8>> = messages.into_iter().map(|m| m.payload).collect();
        match tokio::time::timeout(CONFIRM_TIMEOUT, client.publish(&payloads)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(WriteFailure::new(
                format!("publishing to stream '{}' failed: {e}", self.stream),
                "Check that the user may write the stream and the node's logs.",
            )),
            Err(_) => Err(WriteFailure::new(
                format!(
                    "stream '{}' did not confirm a batch within {} s",
                    self.stream,
                    CONFIRM_TIMEOUT.as_secs()
                ),
                "Check the node's health and disk alarms.",
            )),
        }
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        if let Some(client) = self.client.take() {
            client.close().await;
        }
        Ok(())
    }
}
