//! NATS for INSERT INTO: each row published on the table's subject; the client is
//! flushed when the INSERT finishes, so every message has reached the server by then.
//! (Core NATS does not acknowledge publishes; a JetStream stream bound to the subject
//! stores them.)

use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use async_nats::Client;

/// A client publishing on one subject.
#[derive(Debug)]
pub(crate) struct NatsWriter {
    client: Client,
    subject: String,
}

impl NatsWriter {
    pub(crate) fn new(client: Client, subject: String) -> Self {
        Self { client, subject }
    }
}

fn failure(e: impl std::fmt::Display) -> WriteFailure {
    WriteFailure::new(
        format!("publishing failed: {e}"),
        "Check the server and the user's publish permissions.",
    )
}

#[async_trait::async_trait]
impl SinkWriter for NatsWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        for m in messages {
            self.client
                .publish(self.subject.clone(), m.payload.into())
                .await
                .map_err(failure)?;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        self.client.flush().await.map_err(failure)
    }
}
