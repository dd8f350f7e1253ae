//! MQTT for queries: the client's event loop runs on a task of its own (it must be
//! polled for the connection to live), passing each published message to the query
//! through a bounded channel. Dropping the reader stops the task and disconnects. MQTT
//! delivers what is published while subscribed (and a retained message first), so the
//! source never ends.

use super::probe::published;
use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader};
use rumqttc::{AsyncClient, Event, EventLoop, Packet};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Messages waiting for the query at most; the event loop waits when they are not taken.
const CHANNEL_MESSAGES: usize = 1024;

/// A subscribed client and the task that polls it.
#[derive(Debug)]
pub(crate) struct MqttReader {
    client: AsyncClient,
    messages: mpsc::Receiver<Result<SampledMessage, String>>,
    pump: JoinHandle<()>,
}

impl MqttReader {
    /// Start reading; `early` holds messages that arrived while subscribing.
    pub(crate) fn start(
        client: AsyncClient,
        mut events: EventLoop,
        early: Vec<SampledMessage>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(CHANNEL_MESSAGES.max(early.len() + 1));
        for m in early {
            let _ = tx.try_send(Ok(m));
        }
        let pump = tokio::spawn(async move {
            loop {
                match events.poll().await {
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        if tx.send(Ok(published(&p))).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string())).await;
                        return;
                    }
                }
            }
        });
        Self {
            client,
            messages: rx,
            pump,
        }
    }
}

impl Drop for MqttReader {
    fn drop(&mut self) {
        let _ = self.client.try_disconnect();
        self.pump.abort();
    }
}

#[async_trait::async_trait]
impl SourceReader for MqttReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        let failed = |e: String| {
            ReadFailure::new(
                format!("the connection to the broker failed: {e}"),
                "Check that the broker is running; TEST TABLE shows each stage.",
            )
        };
        let first = match self.messages.recv().await {
            Some(m) => m.map_err(failed)?,
            None => return Err(failed("the client stopped".into())),
        };
        let mut out = vec![first];
        while out.len() < max.max(1) {
            match self.messages.try_recv() {
                Ok(m) => out.push(m.map_err(failed)?),
                Err(_) => break,
            }
        }
        Ok(Some(out))
    }
}
