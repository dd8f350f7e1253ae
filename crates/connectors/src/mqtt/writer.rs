//! MQTT for INSERT INTO: each row published on the table's topic with its `qos` and
//! `sink.retain`. The client's event loop runs on a task of its own; at QoS 1 and 2 the
//! INSERT finishes only when the broker has acknowledged every publish.

use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use rumqttc::{AsyncClient, Event, EventLoop, Outgoing, Packet, QoS};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long the broker may take to acknowledge what was published.
const ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// A client publishing on one topic.
#[derive(Debug)]
pub(crate) struct MqttWriter {
    client: AsyncClient,
    topic: String,
    qos: QoS,
    retain: bool,
    published: u64,
    /// Acknowledgements received (at QoS 0, publishes sent), or the connection's error.
    acked: watch::Receiver<Result<u64, String>>,
    pump: JoinHandle<()>,
}

impl MqttWriter {
    pub(crate) fn start(
        client: AsyncClient,
        mut events: EventLoop,
        topic: String,
        qos: QoS,
        retain: bool,
    ) -> Self {
        let (tx, acked) = watch::channel(Ok(0));
        let pump = tokio::spawn(async move {
            let mut n = 0u64;
            loop {
                let counted = match events.poll().await {
                    Ok(Event::Incoming(Packet::PubAck(_) | Packet::PubComp(_))) => {
                        qos != QoS::AtMostOnce
                    }
                    Ok(Event::Outgoing(Outgoing::Publish(_))) => qos == QoS::AtMostOnce,
                    Ok(_) => false,
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                if counted {
                    n += 1;
                    if tx.send(Ok(n)).is_err() {
                        return;
                    }
                }
            }
        });
        Self {
            client,
            topic,
            qos,
            retain,
            published: 0,
            acked,
            pump,
        }
    }
}

impl Drop for MqttWriter {
    fn drop(&mut self) {
        let _ = self.client.try_disconnect();
        self.pump.abort();
    }
}

fn failure(e: impl std::fmt::Display) -> WriteFailure {
    WriteFailure::new(
        format!("publishing failed: {e}"),
        "Check that the broker is running and allows publishing on the topic.",
    )
}

#[async_trait::async_trait]
impl SinkWriter for MqttWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        for m in messages {
            self.client
                .publish(self.topic.clone(), self.qos, self.retain, m.payload)
                .await
                .map_err(failure)?;
            self.published += 1;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        let want = self.published;
        let done = self.acked.wait_for(|a| match a {
            Ok(n) => *n >= want,
            Err(_) => true,
        });
        match tokio::time::timeout(ACK_TIMEOUT, done).await {
            Ok(Ok(state)) => match &*state {
                Ok(_) => Ok(()),
                Err(e) => Err(failure(e)),
            },
            Ok(Err(_)) => Err(failure("the client stopped")),
            Err(_) => Err(failure(format!(
                "the broker acknowledged fewer than {want} messages within {} s",
                ACK_TIMEOUT.as_secs()
            ))),
        }
    }
}
