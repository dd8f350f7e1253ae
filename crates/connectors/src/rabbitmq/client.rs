//! A client of the RabbitMQ stream protocol, enough for connection tests and queries: the
//! handshake (peer properties, SASL PLAIN, tune, open), a stream's metadata, one
//! subscription read a chunk at a time with a credit of one, and one publisher whose
//! batches are confirmed before they count as written. It runs on the caller's task:
//! each request waits for its response, handling deliveries, heartbeats and the server's
//! close as they come. It speaks protocol version 1 only, which every server since 3.9
//! accepts (newer clients negotiate versions with a command older servers reject).

use super::wire::{Frame, Reader, WireError, amqp_message, chunk_messages, code, code_name, key};
use std::collections::VecDeque;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Frames larger than this are refused rather than allocated.
const MAX_FRAME: u32 = 8 << 20;
/// The subscription the test uses (one per connection).
const SUBSCRIPTION: u8 = 1;
/// The publisher a sink uses (one per connection).
const PUBLISHER: u8 = 1;
/// Publish frames are cut at about this size, well under any node's frame limit.
const PUBLISH_FRAME: usize = 1 << 20;

/// Why a stream protocol exchange failed.
#[derive(Debug, Error)]
pub(crate) enum StreamError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A response carried a code other than OK.
    #[error("the node answered {}", code_name(*.0))]
    Refused(u16),
    #[error("the node offers no PLAIN authentication (it offers {0})")]
    NoPlain(String),
    #[error("the node closed the connection: {0}")]
    Closed(String),
    #[error("frame of {0} bytes is larger than {MAX_FRAME}")]
    TooLarge(u32),
    /// The node refused published messages (the first refusal's code).
    #[error("the node refused {count} message(s): {}", code_name(*.code))]
    NotPublished { count: usize, code: u16 },
}

/// A node as the metadata names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Broker {
    pub host: String,
    pub port: u32,
}

impl std::fmt::Display for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// A stream's metadata: its response code, leader and replicas.
#[derive(Debug)]
pub(crate) struct StreamInfo {
    pub code: u16,
    pub leader: Option<Broker>,
    pub replicas: Vec<Broker>,
}

/// Where a subscription starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offset {
    First,
    Last,
    Next,
}

impl Offset {
    fn wire(self) -> u16 {
        match self {
            Offset::First => 1,
            Offset::Last => 2,
            Offset::Next => 3,
        }
    }
}

/// An open, authenticated connection to one node.
pub(crate) struct StreamClient {
    io: TcpStream,
    next_correlation: u32,
    /// The host and port the node advertises (from the open response).
    pub advertised: Option<Broker>,
    /// Messages delivered while waiting for a response.
    pending: VecDeque<Vec<u8>>,
    /// The next publishing id (ids rise, as the node's deduplication expects).
    next_publishing: u64,
    /// Published messages the node confirmed, and those it refused (with the first
    /// refusal's code), since the last publish began.
    confirmed: usize,
    refused: usize,
    refusal: Option<u16>,
}

impl StreamClient {
    /// Connect to `address` and complete the handshake as `user` on `vhost`.
    pub async fn connect(
        address: &str,
        user: &str,
        password: &str,
        vhost: &str,
    ) -> Result<Self, StreamError> {
        let io = TcpStream::connect(address).await?;
        let mut client = Self {
            io,
            next_correlation: 1,
            advertised: None,
            pending: VecDeque::new(),
            next_publishing: 0,
            confirmed: 0,
            refused: 0,
            refusal: None,
        };
        let c = client.correlation();
        let properties = [
            ("product", "Tributary"),
            ("connection_name", "tributary connection test"),
        ];
        let mut f = Frame::new(key::PEER_PROPERTIES);
        f.u32(c).u32(properties.len() as u32);
        for (k, v) in properties {
            f.str(k).str(v);
        }
        client.request(key::PEER_PROPERTIES, c, f.finish()).await?;

        let c = client.correlation();
        let body = client
            .request(
                key::SASL_HANDSHAKE,
                c,
                Frame::new(key::SASL_HANDSHAKE).u32(c).finish(),
            )
            .await?;
        let mut r = Reader::new(&body);
        let mechanisms: Vec<String> = (0..r.count()?).map(|_| r.str()).collect::<Result<_, _>>()?;
        if !mechanisms.iter().any(|m| m == "PLAIN") {
            return Err(StreamError::NoPlain(mechanisms.join(", ")));
        }

        let c = client.correlation();
        let credentials = format!("\0{user}\0{password}");
        let f = Frame::new(key::SASL_AUTHENTICATE)
            .u32(c)
            .str("PLAIN")
            .bytes(credentials.as_bytes())
            .finish();
        client.request(key::SASL_AUTHENTICATE, c, f).await?;

        // The node proposes its frame size and heartbeat, which must be answered before
        // the virtual host is opened.
        loop {
            let frame = client.read_frame().await?;
            let tune = Reader::new(&frame).u16()? == key::TUNE;
            client.dispatch(&frame).await?;
            if tune {
                break;
            }
        }
        let c = client.correlation();
        let f = Frame::new(key::OPEN).u32(c).str(vhost).finish();
        let body = client.request(key::OPEN, c, f).await?;
        let mut r = Reader::new(&body);
        if !r.is_empty() {
            let properties = r.map()?;
            let get = |k: &str| properties.iter().find(|(n, _)| n == k).map(|(_, v)| v);
            if let (Some(host), Some(port)) = (get("advertised_host"), get("advertised_port")) {
                client.advertised = Some(Broker {
                    host: host.clone(),
                    port: port.parse().unwrap_or(5552),
                });
            }
        }
        Ok(client)
    }

    fn correlation(&mut self) -> u32 {
        let c = self.next_correlation;
        self.next_correlation = self.next_correlation.wrapping_add(1);
        c
    }

    /// The metadata of `stream`.
    pub async fn metadata(&mut self, stream: &str) -> Result<StreamInfo, StreamError> {
        let c = self.correlation();
        let f = Frame::new(key::METADATA).u32(c).u32(1).str(stream).finish();
        self.send(&f).await?;
        // The metadata response has no code of its own, only one per stream.
        let body = self.await_response(key::METADATA, c).await?;
        let mut r = Reader::new(&body);
        let mut brokers = Vec::new();
        for _ in 0..r.count()? {
            let reference = r.u16()?;
            let host = r.str()?;
            let port = r.u32()?;
            brokers.push((reference, Broker { host, port }));
        }
        let broker = |reference: u16| {
            brokers
                .iter()
                .find(|(r, _)| *r == reference)
                .map(|(_, b)| b.clone())
        };
        let mut info = StreamInfo {
            code: code::STREAM_DOES_NOT_EXIST,
            leader: None,
            replicas: Vec::new(),
        };
        for _ in 0..r.count()? {
            let name = r.str()?;
            let code = r.u16()?;
            let leader = r.u16()?;
            let replicas: Vec<u16> = (0..r.count()?).map(|_| r.u16()).collect::<Result<_, _>>()?;
            if name == stream {
                info = StreamInfo {
                    code,
                    leader: broker(leader),
                    replicas: replicas.into_iter().filter_map(broker).collect(),
                };
            }
        }
        Ok(info)
    }

    /// Subscribe to `stream` from `offset`, with a credit of one chunk.
    pub async fn subscribe(&mut self, stream: &str, offset: Offset) -> Result<(), StreamError> {
        let c = self.correlation();
        let f = Frame::new(key::SUBSCRIBE)
            .u32(c)
            .u8(SUBSCRIPTION)
            .str(stream)
            .u16(offset.wire())
            .u16(1)
            .finish();
        self.request(key::SUBSCRIBE, c, f).await.map(|_| ())
    }

    /// The messages of the next delivered chunk (waiting for one as long as it takes; the
    /// caller bounds the wait).
    pub async fn next_messages(&mut self) -> Result<Vec<Vec<u8>>, StreamError> {
        loop {
            if !self.pending.is_empty() {
                return Ok(self.pending.drain(..).collect());
            }
            let frame = self.read_frame().await?;
            self.dispatch(&frame).await?;
        }
    }

    /// Declare the connection's publisher on `stream` (anonymous: no deduplication
    /// across connections).
    pub async fn declare_publisher(&mut self, stream: &str) -> Result<(), StreamError> {
        let c = self.correlation();
        let f = Frame::new(key::DECLARE_PUBLISHER)
            .u32(c)
            .u8(PUBLISHER)
            .str("") // no reference: the node parses an empty one as none
            .str(stream)
            .finish();
        self.request(key::DECLARE_PUBLISHER, c, f).await.map(|_| ())
    }

    /// Publish `messages` (each wrapped as an AMQP 1.0 data section) and wait until the
    /// node has confirmed or refused every one; any refusal is an error.
    pub async fn publish(&mut self, messages: &[Vec<u8>]) -> Result<(), StreamError> {
        self.confirmed = 0;
        self.refused = 0;
        self.refusal = None;
        let mut frame = Frame::new(key::PUBLISH);
        let mut in_frame: Vec<Vec<u8>> = Vec::new();
        let mut size = 0;
        for m in messages {
            let message = amqp_message(m);
            if !in_frame.is_empty() && size + message.len() > PUBLISH_FRAME {
                self.send_publish(&mut frame, &mut in_frame).await?;
                size = 0;
            }
            size += message.len() + 12;
            in_frame.push(message);
        }
        self.send_publish(&mut frame, &mut in_frame).await?;
        while self.confirmed + self.refused < messages.len() {
            let frame = self.read_frame().await?;
            self.dispatch(&frame).await?;
        }
        match self.refusal {
            Some(code) => Err(StreamError::NotPublished {
                count: self.refused,
                code,
            }),
            None => Ok(()),
        }
    }

    /// Send the messages gathered for one publish frame.
    async fn send_publish(
        &mut self,
        frame: &mut Frame,
        messages: &mut Vec<Vec<u8>>,
    ) -> Result<(), StreamError> {
        if messages.is_empty() {
            return Ok(());
        }
        *frame = Frame::new(key::PUBLISH);
        frame.u8(PUBLISHER).u32(messages.len() as u32);
        for m in messages.drain(..) {
            frame.u64(self.next_publishing).bytes(&m);
            self.next_publishing += 1;
        }
        let bytes = frame.finish();
        self.send(&bytes).await
    }

    /// Say goodbye: unsubscribing is implied by closing, and nothing was stored.
    pub async fn close(mut self) {
        let c = self.correlation();
        let f = Frame::new(key::CLOSE)
            .u32(c)
            .u16(code::OK)
            .str("connection test done")
            .finish();
        if self.send(&f).await.is_ok() {
            let _ = tokio::time::timeout(
                std::time::Duration::from_secs(1),
                self.await_response(key::CLOSE, c),
            )
            .await;
        }
    }

    async fn send(&mut self, frame: &[u8]) -> Result<(), StreamError> {
        self.io.write_all(frame).await?;
        Ok(())
    }

    async fn read_frame(&mut self) -> Result<Vec<u8>, StreamError> {
        let size = self.io.read_u32().await.map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                StreamError::Closed("it hung up".into())
            } else {
                StreamError::Io(e)
            }
        })?;
        if size > MAX_FRAME {
            return Err(StreamError::TooLarge(size));
        }
        let mut frame = vec![0; size as usize];
        self.io.read_exact(&mut frame).await?;
        Ok(frame)
    }

    /// Send a request and read its response, whose code must be OK; what follows the
    /// code is returned.
    async fn request(
        &mut self,
        key: u16,
        correlation: u32,
        frame: Vec<u8>,
    ) -> Result<Vec<u8>, StreamError> {
        self.send(&frame).await?;
        let mut body = self.await_response(key, correlation).await?;
        match Reader::new(&body).u16()? {
            code::OK => Ok(body.split_off(2)),
            other => Err(StreamError::Refused(other)),
        }
    }

    /// Read frames until the response to (`key`, `correlation`) arrives; its body after
    /// the correlation id is returned.
    async fn await_response(&mut self, key: u16, correlation: u32) -> Result<Vec<u8>, StreamError> {
        loop {
            let frame = self.read_frame().await?;
            let mut r = Reader::new(&frame);
            let k = r.u16()?;
            let _version = r.u16()?;
            if k == key | key::RESPONSE && r.u32()? == correlation {
                return Ok(frame[8..].to_vec());
            }
            self.dispatch(&frame).await?;
        }
    }

    /// Handle a frame that is not the awaited response.
    async fn dispatch(&mut self, frame: &[u8]) -> Result<(), StreamError> {
        let mut r = Reader::new(frame);
        let k = r.u16()?;
        let version = r.u16()?;
        match k {
            key::TUNE => {
                // Accept the node's frame size and heartbeat as they are.
                let frame_max = r.u32()?;
                let heartbeat = r.u32()?;
                let f = Frame::new(key::TUNE).u32(frame_max).u32(heartbeat).finish();
                self.send(&f).await
            }
            key::HEARTBEAT => self.send(&Frame::new(key::HEARTBEAT).finish()).await,
            key::DELIVER => {
                let _subscription = r.u8()?;
                if version >= 2 {
                    let _committed = r.u64()?;
                }
                let messages = chunk_messages(&mut r)?;
                self.pending.extend(messages);
                let f = Frame::new(key::CREDIT).u8(SUBSCRIPTION).u16(1).finish();
                self.send(&f).await
            }
            key::PUBLISH_CONFIRM => {
                let _publisher = r.u8()?;
                let ids = r.count()?;
                for _ in 0..ids {
                    let _id = r.u64()?;
                }
                self.confirmed += ids;
                Ok(())
            }
            key::PUBLISH_ERROR => {
                let _publisher = r.u8()?;
                for _ in 0..r.count()? {
                    let _id = r.u64()?;
                    let code = r.u16()?;
                    self.refused += 1;
                    self.refusal.get_or_insert(code);
                }
                Ok(())
            }
            key::CLOSE => {
                let correlation = r.u32()?;
                let _code = r.u16()?;
                let reason = r.str()?;
                let f = Frame::new(key::CLOSE | key::RESPONSE)
                    .u32(correlation)
                    .u16(code::OK)
                    .finish();
                let _ = self.send(&f).await;
                Err(StreamError::Closed(reason))
            }
            // Metadata updates, credit errors and the like do not concern a short test.
            _ => Ok(()),
        }
    }
}
