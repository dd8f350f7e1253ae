//! WebSocket for queries: the socket the table's test would open (handshake with its
//! headers, subscription messages sent), each text or binary message a message to decode.
//! The source ends when the server closes the connection.

use super::probe::Socket;
use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader};
use futures::{FutureExt, StreamExt};
use tokio_tungstenite::tungstenite::Message;

/// An open socket.
pub(crate) struct WsReader {
    socket: Socket,
    url: String,
    closed: bool,
}

impl std::fmt::Debug for WsReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WsReader({})", self.url)
    }
}

impl WsReader {
    pub(crate) fn new(socket: Socket, url: String) -> Self {
        Self {
            socket,
            url,
            closed: false,
        }
    }

    /// A data message from `m`, or `None` for control frames; a close ends the reader.
    fn data(&mut self, m: Message) -> Option<SampledMessage> {
        match m {
            Message::Text(t) => Some(t.as_bytes().to_vec().into()),
            Message::Binary(b) => Some(b.to_vec().into()),
            Message::Close(_) => {
                self.closed = true;
                None
            }
            // Pings are answered by the library; pongs and raw frames carry no data.
            _ => None,
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for WsReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        let mut out = Vec::new();
        while out.is_empty() && !self.closed {
            match self.socket.next().await {
                Some(Ok(m)) => out.extend(self.data(m)),
                Some(Err(e)) => {
                    return Err(ReadFailure::new(
                        format!("the connection to {} broke off: {e}", self.url),
                        "Check the server; TEST TABLE shows each stage.",
                    ));
                }
                None => self.closed = true,
            }
        }
        while out.len() < max.max(1) && !self.closed {
            match self.socket.next().now_or_never() {
                Some(Some(Ok(m))) => out.extend(self.data(m)),
                _ => break,
            }
        }
        Ok((!out.is_empty()).then_some(out))
    }
}
