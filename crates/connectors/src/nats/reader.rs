//! NATS for queries. A JetStream stream is read by sequence from its first message,
//! without creating a consumer (so a preview leaves nothing on the server), and then
//! follows new messages as they are stored. A core subject is subscribed to and delivers
//! what is published while the query reads. Neither ends on its own.

use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader};
use async_nats::jetstream::stream::Stream;
use async_nats::{Client, Subscriber};
use futures::{FutureExt, StreamExt};
use std::time::Duration;

/// How long a reader that has caught up with a stream waits before looking again.
const CAUGHT_UP_WAIT: Duration = Duration::from_millis(100);

/// A reader of a stream or a subject; the client is held so the connection lives as
/// long as the reader, and closes with it.
pub(crate) struct NatsReader {
    _client: Client,
    from: Origin,
}

enum Origin {
    Stream { stream: Box<Stream>, next: u64 },
    Subject(Subscriber),
}

impl std::fmt::Debug for NatsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.from {
            Origin::Stream { next, .. } => write!(f, "NatsReader(stream, next sequence {next})"),
            Origin::Subject(_) => f.write_str("NatsReader(subject)"),
        }
    }
}

impl NatsReader {
    pub(crate) fn stream(client: Client, stream: Stream, first: u64) -> Self {
        Self {
            _client: client,
            from: Origin::Stream {
                stream: Box::new(stream),
                next: first.max(1),
            },
        }
    }

    pub(crate) fn subject(client: Client, subscription: Subscriber) -> Self {
        Self {
            _client: client,
            from: Origin::Subject(subscription),
        }
    }
}

fn message(payload: &[u8]) -> SampledMessage {
    // NATS tables declare no METADATA keys: the payload is the message.
    SampledMessage::from(payload.to_vec())
}

#[async_trait::async_trait]
impl SourceReader for NatsReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        let max = max.max(1);
        let mut out = Vec::new();
        match &mut self.from {
            Origin::Subject(subscription) => {
                let Some(first) = subscription.next().await else {
                    return Err(ReadFailure::new(
                        "the subscription was closed by the server",
                        "Check the server's logs and the user's permissions.",
                    ));
                };
                out.push(message(&first.payload));
                while out.len() < max {
                    match subscription.next().now_or_never() {
                        Some(Some(m)) => out.push(message(&m.payload)),
                        _ => break,
                    }
                }
            }
            Origin::Stream { stream, next } => loop {
                match stream.get_raw_message(*next).await {
                    Ok(m) => {
                        out.push(message(&m.payload));
                        *next += 1;
                        if out.len() >= max {
                            break;
                        }
                    }
                    Err(e) => {
                        let last = stream
                            .info()
                            .await
                            .map_err(|i| {
                                ReadFailure::new(
                                    format!("the stream's state cannot be read: {i} (after: {e})"),
                                    "Check the stream's health.",
                                )
                            })?
                            .state
                            .last_sequence;
                        if *next <= last {
                            // A deleted message leaves a gap in the sequence.
                            *next += 1;
                        } else if !out.is_empty() {
                            break;
                        } else {
                            tokio::time::sleep(CAUGHT_UP_WAIT).await;
                        }
                    }
                }
            },
        }
        Ok(Some(out))
    }
}
