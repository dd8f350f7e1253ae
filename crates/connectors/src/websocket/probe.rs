//! The websocket connector's connection test: the endpoint's host resolved and reached
//! over TCP, the WebSocket handshake sent with the table's headers (a refused upgrade is
//! classified by its HTTP status), the subscription messages sent in order, and up to
//! `limit` text or binary messages read before the connection is closed cleanly.

use super::reader::WsReader;
use crate::http_probe::{status_failure, table_headers};
use crate::probe::{Probe, Stage, TestCode, human};
use crate::source::SourceReader;
use futures::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::http::header::HeaderName;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// The messages to send after connecting: `subscription_messages`, or the deprecated
/// single `subscription_message`.
fn subscription_messages(table: &Value) -> Vec<String> {
    if let Some(list) = table.get("subscription_messages").and_then(Value::as_array) {
        return list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
    }
    table
        .get("subscription_message")
        .and_then(Value::as_str)
        .map(|m| vec![m.to_string()])
        .unwrap_or_default()
}

/// `host:port` of a ws:// or wss:// URL, for the TCP pre-check.
fn authority(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let port = parsed.port_or_known_default()?;
    Some(format!("{}:{port}", parsed.host_str()?))
}

/// The socket a table reads, once the handshake is done and its subscription messages
/// sent.
pub(crate) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) async fn test_table(probe: &mut Probe<'_>) {
    let Some((mut socket, url, subscribed)) = connect(probe).await else {
        return;
    };
    if probe.wants_messages() {
        read(probe, &mut socket, &url, !subscribed).await;
    }
    let _ = tokio::time::timeout(probe.timeout, socket.close(None)).await;
}

/// A reader of the table's socket for a query.
pub(crate) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let (socket, url, _) = connect(probe).await?;
    Some(Box::new(WsReader::new(socket, url)))
}

/// Resolve, reach, hand-shake and subscribe: the socket, the endpoint, and whether
/// subscription messages were sent (the probe says why when `None`).
async fn connect(probe: &mut Probe<'_>) -> Option<(Socket, String, bool)> {
    let url = probe.table_setting("/endpoint", "endpoint")?;
    let headers = table_headers(probe)?;
    let subscriptions = probe.table.map(subscription_messages).unwrap_or_default();
    let Some(server) = authority(&url) else {
        probe.fail(
            Stage::Resolve,
            TestCode::BadResponse,
            format!("'{url}' is not a ws:// or wss:// URL with a host"),
            "Write 'endpoint' as ws://host:port/path or wss://host/path.",
        );
        return None;
    };
    let mut request = match url.as_str().into_client_request() {
        Ok(r) => r,
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::BadResponse,
                format!("'{url}' cannot be requested: {e}"),
                "Write 'endpoint' as ws://host:port/path or wss://host/path.",
            );
            return None;
        }
    };
    for (name, value) in &headers {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => {
                request.headers_mut().append(n, v);
            }
            _ => {
                probe.fail(
                    Stage::Resolve,
                    TestCode::BadResponse,
                    format!("option 'headers': header '{name}' is not a valid HTTP header"),
                    "Header names are tokens without spaces; values are visible ASCII.",
                );
                return None;
            }
        }
    }
    probe.pass(Stage::Resolve, format!("WebSocket {url}"));
    let addr = probe
        .reach_addr("server", &server, "'endpoint'", "the server is running")
        .await?;
    // The handshake runs over a connection to the address `reach` checked, so a second
    // lookup of the name cannot land anywhere else.
    let connected = probe
        .within(
            Stage::Connect,
            &format!("connecting to {server}"),
            tokio::net::TcpStream::connect(addr),
        )
        .await?;
    let stream = match connected {
        Ok(s) => s,
        Err(e) => {
            probe.fail(
                Stage::Connect,
                crate::probe::connect_code(&e),
                format!("cannot connect to server '{server}' ({addr}): {e}"),
                "Check 'endpoint', and that the server is running.",
            );
            return None;
        }
    };
    let handshake = probe
        .within(
            Stage::Connect,
            &format!("the WebSocket handshake with {url}"),
            tokio_tungstenite::client_async_tls(request, stream),
        )
        .await?;
    let mut socket = match handshake {
        Ok((socket, response)) => {
            probe.pass(Stage::Connect, format!("{url} answered"));
            probe.pass(Stage::Authenticate, format!("{}", response.status()));
            probe.pass(Stage::Locate, "the server upgraded to a WebSocket");
            socket
        }
        Err(WsError::Http(response)) if response.status().is_success() => {
            probe.fail(
                Stage::Locate,
                TestCode::BadResponse,
                format!(
                    "{url} answered {} without upgrading to a WebSocket",
                    response.status()
                ),
                "Check that 'endpoint' is the server's WebSocket path, not a plain HTTP one.",
            );
            return None;
        }
        Err(WsError::Http(response)) => {
            status_failure(probe, &url, response.status());
            return None;
        }
        Err(WsError::Tls(e)) => {
            probe.fail(
                Stage::Connect,
                TestCode::TlsFailed,
                format!("TLS with {url} failed: {e}"),
                "Check the server's certificate, or use ws:// for a plain endpoint.",
            );
            return None;
        }
        Err(e) => {
            probe.fail(
                Stage::Connect,
                TestCode::BadResponse,
                format!("{url} did not complete a WebSocket handshake: {e}"),
                "Check that 'endpoint' is a WebSocket endpoint (not plain HTTP).",
            );
            return None;
        }
    };
    for (i, m) in subscriptions.iter().enumerate() {
        let sent = probe
            .within(
                Stage::Write,
                &format!("sending subscription message {i}"),
                socket.send(Message::text(m.clone())),
            )
            .await;
        match sent {
            None => return None,
            Some(Ok(())) => {}
            Some(Err(e)) => {
                probe.fail(
                    Stage::Write,
                    TestCode::BadResponse,
                    format!("sending subscription message {i} failed: {e}"),
                    "Check 'subscription_messages'; the server may have closed the connection.",
                );
                return None;
            }
        }
    }
    if !subscriptions.is_empty() {
        probe.pass(
            Stage::Write,
            format!("sent {} subscription message(s)", subscriptions.len()),
        );
    }
    Some((socket, url, !subscriptions.is_empty()))
}

/// Read up to `limit` data messages within the timeout.
async fn read<S>(probe: &mut Probe<'_>, socket: &mut S, url: &str, no_subscriptions: bool)
where
    S: StreamExt<Item = Result<Message, WsError>> + Unpin,
{
    let deadline = tokio::time::Instant::now() + probe.timeout;
    let mut closed = None;
    while probe.messages.len() < probe.limit {
        match tokio::time::timeout_at(probe.sample_deadline(deadline), socket.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => probe.messages.push(t.as_bytes().to_vec().into()),
            Ok(Some(Ok(Message::Binary(b)))) => probe.messages.push(b.to_vec().into()),
            Ok(Some(Ok(Message::Close(frame)))) => {
                closed = Some(frame.map_or_else(
                    || "without a reason".to_string(),
                    |f| format!("with code {} '{}'", u16::from(f.code), f.reason),
                ));
                break;
            }
            // Pings are answered by the library; pongs and raw frames carry no data.
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => {
                closed = Some(format!("abruptly: {e}"));
                break;
            }
            Ok(None) | Err(_) => break,
        }
    }
    let n = probe.messages.len();
    if n > 0 {
        probe.pass(Stage::Read, probe.messages_read());
        return;
    }
    let (message, hint) = match closed {
        Some(how) => (
            format!("{url} closed the connection {how} before sending a message"),
            "Check 'subscription_messages' and 'headers': the server may have refused the subscription.",
        ),
        None if no_subscriptions => (
            format!(
                "no messages arrived from {url} within {}",
                human(probe.timeout)
            ),
            "Many servers send data only after a subscription: set 'subscription_messages.0', or give the test a longer TIMEOUT.",
        ),
        None => (
            format!(
                "no messages arrived from {url} within {}",
                human(probe.timeout)
            ),
            "Check that the subscription messages name data that is flowing, or give the test a longer TIMEOUT.",
        ),
    };
    probe.fail(Stage::Read, TestCode::Empty, message, hint);
}
