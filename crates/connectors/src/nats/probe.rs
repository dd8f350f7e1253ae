//! The nats connector's connection test: connect to the servers with the profile's
//! credentials (user and password; JWT profiles are not live-tested yet); for a JetStream
//! source, find the stream and read its first messages by sequence (no consumer is created,
//! so the test leaves nothing behind); for a core-subject source, subscribe and wait; for a
//! sink, say that publishing cannot be checked without publishing. Completion lists the
//! JetStream streams.

use super::reader::NatsReader;
use super::writer::NatsWriter;
use crate::probe::{Probe, Stage, TestCode, human, is_dns_error};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use async_nats::jetstream::stream::Stream;
use async_nats::{Client, ConnectErrorKind, ConnectOptions, Subscriber};
use futures::StreamExt;
use serde_json::Value;
use tributary_types::ConnectionType;

async fn connect(probe: &mut Probe<'_>) -> Option<Client> {
    let servers = probe.setting("/servers", "servers")?;
    let auth = probe
        .connection
        .pointer("/authentication")
        .cloned()
        .unwrap_or(Value::Null);
    let mut options = ConnectOptions::new().connection_timeout(probe.timeout);
    if auth.get("jwt").is_some() {
        probe.skip(Stage::Authenticate, TestCode::NotTestable, "JWT-authenticated NATS profiles are not live-tested yet; the configuration was checked");
        return None;
    }
    if auth.get("username").is_some() {
        let user = probe.setting("/authentication/username", "auth.username")?;
        let password = probe.setting("/authentication/password", "auth.password")?;
        options = options.user_and_password(user, password);
    }
    probe.pass(Stage::Resolve, format!("servers {servers}"));
    let addrs: Vec<String> = servers
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    // Refused ports, unknown hosts and silent addresses are told apart on plain TCP
    // first; the client library reports them all alike.
    let hosts: Vec<String> = addrs.iter().map(|a| host_port(a)).collect();
    if !probe
        .reach_any("server", &hosts, "'servers'", "NATS is running")
        .await
    {
        return None;
    }
    let connected = probe
        .within(
            Stage::Connect,
            &format!("connecting to {servers}"),
            options.connect(addrs),
        )
        .await?;
    match connected {
        Ok(client) => {
            probe.pass(Stage::Connect, format!("connected to {servers}"));
            probe.pass(Stage::Authenticate, "the server accepted the connection");
            Some(client)
        }
        Err(e) => {
            let text = e.to_string();
            let (stage, code, hint) = match e.kind() {
                ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication => (
                    Stage::Authenticate,
                    TestCode::AuthFailed,
                    "Check 'auth.username' and 'auth.password' on the connection profile.",
                ),
                ConnectErrorKind::Dns => (
                    Stage::Resolve,
                    TestCode::DnsUnresolved,
                    "Check the host names in 'servers'.",
                ),
                ConnectErrorKind::TimedOut => (
                    Stage::Connect,
                    TestCode::Timeout,
                    "Check that the servers are reachable from here.",
                ),
                ConnectErrorKind::Tls => (
                    Stage::Connect,
                    TestCode::TlsFailed,
                    "Check the server's TLS settings.",
                ),
                _ if is_dns_error(&text) => (
                    Stage::Resolve,
                    TestCode::DnsUnresolved,
                    "Check the host names in 'servers'.",
                ),
                // The port accepted a TCP connection, so whatever failed is the protocol.
                _ => (
                    Stage::Connect,
                    TestCode::BadResponse,
                    "The server accepted the connection but did not speak NATS: check the port in 'servers' (NATS clients use 4222).",
                ),
            };
            probe.fail(
                stage,
                code,
                format!("cannot connect to {servers}: {text}"),
                hint,
            );
            None
        }
    }
}

/// `host:port` of a server URL (`nats://host:4222`, `tls://host`, or bare `host`).
fn host_port(server: &str) -> String {
    let rest = server.split_once("://").map_or(server, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let rest = rest.split('/').next().unwrap_or(rest);
    // A bracketed IPv6 address has colons of its own.
    let has_port = match rest.rfind(']') {
        Some(close) => rest[close..].contains(':'),
        None => rest.contains(':'),
    };
    if has_port {
        rest.to_string()
    } else {
        format!("{rest}:4222")
    }
}

pub(crate) async fn test_connection(probe: &mut Probe<'_>) {
    connect(probe).await;
}

pub(crate) async fn test_table(probe: &mut Probe<'_>) {
    let Some(client) = connect(probe).await else {
        return;
    };
    if probe.role == Some(ConnectionType::Sink) {
        let subject = probe
            .table_setting("/connectorType/sinkType/subject", "subject")
            .unwrap_or_default();
        probe.skip(Stage::Write, TestCode::NotTestable, format!("NATS cannot check publish permission on '{subject}' without publishing; nothing was published"));
        return;
    }
    if let Some(stream) = probe.table_setting("/connectorType/sourceType/stream", "stream") {
        read_stream(probe, client, &stream).await;
    } else if let Some(subject) =
        probe.table_setting("/connectorType/sourceType/subject", "subject")
    {
        read_subject(probe, client, &subject).await;
    }
}

/// A source's reader for a query: a JetStream stream read by sequence from its start, or
/// a core subject subscribed to (the probe says why not).
pub(crate) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let client = connect(probe).await?;
    if let Some(name) = probe.table_setting("/connectorType/sourceType/stream", "stream") {
        let (stream, first, _) = locate_stream(probe, &client, &name).await?;
        return Some(Box::new(NatsReader::stream(client, stream, first)));
    }
    let subject = probe.table_setting("/connectorType/sourceType/subject", "subject")?;
    let subscription = subscribe(probe, &client, &subject).await?;
    Some(Box::new(NatsReader::subject(client, subscription)))
}

/// A publisher on the table's sink subject.
pub(crate) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    let client = connect(probe).await?;
    let subject = probe.table_setting("/connectorType/sinkType/subject", "subject")?;
    probe.pass(Stage::Write, format!("publishing on '{subject}'"));
    Some(Box::new(NatsWriter::new(client, subject)))
}

/// Find a JetStream stream: the stream, its first sequence and how many messages it holds.
async fn locate_stream(
    probe: &mut Probe<'_>,
    client: &Client,
    name: &str,
) -> Option<(Stream, u64, u64)> {
    let js = async_nats::jetstream::new(client.clone());
    let found = probe
        .within(
            Stage::Locate,
            &format!("looking up stream '{name}'"),
            js.get_stream(name),
        )
        .await;
    let mut stream = match found {
        None => return None,
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            let mut names = Vec::new();
            let mut listing = js.stream_names();
            while let Some(Ok(n)) = listing.next().await {
                names.push(n);
            }
            let hint = match tributary_types::closest(name, names.iter().map(String::as_str)) {
                Some(c) => format!("Did you mean '{c}'? SHOW TOPICS IN PROFILE lists the streams."),
                None => "Check 'stream'; SHOW TOPICS IN PROFILE lists the streams.".to_string(),
            };
            probe.fail(
                Stage::Locate,
                TestCode::NotFound,
                format!("stream '{name}' is not available: {e}"),
                hint,
            );
            return None;
        }
    };
    let (first, count) = match stream.info().await {
        Ok(info) => (info.state.first_sequence, info.state.messages),
        Err(e) => {
            probe.fail(
                Stage::Locate,
                TestCode::BadResponse,
                format!("stream '{name}' has no readable state: {e}"),
                "Check the stream's health.",
            );
            return None;
        }
    };
    probe.pass(
        Stage::Locate,
        format!("stream '{name}' holds {count} message(s)"),
    );
    Some((stream, first, count))
}

async fn read_stream(probe: &mut Probe<'_>, client: Client, name: &str) {
    let Some((stream, first, count)) = locate_stream(probe, &client, name).await else {
        return;
    };
    if !probe.wants_messages() {
        return;
    }
    if count == 0 {
        probe.fail(
            Stage::Read,
            TestCode::Empty,
            format!("stream '{name}' is empty"),
            "Publish to the stream's subjects first, or check 'stream'.",
        );
        return;
    }
    let mut seq = first;
    while probe.messages.len() < probe.limit && seq < first + count + probe.limit as u64 {
        match probe
            .within(
                Stage::Read,
                &format!("reading message {seq}"),
                stream.get_raw_message(seq),
            )
            .await
        {
            None => return,
            Some(Ok(m)) => probe.messages.push(m.payload.to_vec().into()),
            // Deleted sequences leave gaps; the next one is tried.
            Some(Err(_)) if seq < first + count => {}
            Some(Err(_)) => break,
        }
        seq += 1;
    }
    let read = format!(
        "{} from the start of the stream (no consumer created)",
        probe.messages_read()
    );
    probe.pass(Stage::Read, read);
}

/// Subscribe to a core subject (the probe records the locate stage).
async fn subscribe(probe: &mut Probe<'_>, client: &Client, subject: &str) -> Option<Subscriber> {
    match client.subscribe(subject.to_string()).await {
        Ok(s) => {
            probe.pass(Stage::Locate, format!("subscribed to '{subject}'"));
            Some(s)
        }
        Err(e) => {
            probe.fail(
                Stage::Locate,
                TestCode::PermissionDenied,
                format!("cannot subscribe to '{subject}': {e}"),
                "Check the subject and the user's permissions.",
            );
            None
        }
    }
}

async fn read_subject(probe: &mut Probe<'_>, client: Client, subject: &str) {
    let Some(mut subscription) = subscribe(probe, &client, subject).await else {
        return;
    };
    if !probe.wants_messages() {
        return;
    }
    let deadline = tokio::time::Instant::now() + probe.timeout;
    while probe.messages.len() < probe.limit {
        match tokio::time::timeout_at(probe.sample_deadline(deadline), subscription.next()).await {
            Ok(Some(m)) => probe.messages.push(m.payload.to_vec().into()),
            _ => break,
        }
    }
    let n = probe.messages.len();
    if n > 0 {
        probe.pass(Stage::Read, probe.messages_read());
    } else {
        probe.fail(
            Stage::Read,
            TestCode::Empty,
            format!("no messages arrived on '{subject}' within {}", human(probe.timeout)),
            "Core NATS delivers only messages published while subscribed: publish while testing, read a JetStream stream with 'stream', or give the test a longer TIMEOUT.",
        );
    }
}

/// The JetStream streams on the server.
pub(crate) async fn streams(probe: &mut Probe<'_>) -> Option<Vec<String>> {
    let client = connect(probe).await?;
    let js = async_nats::jetstream::new(client);
    let mut names = Vec::new();
    let mut listing = js.stream_names();
    while let Some(next) = listing.next().await {
        match next {
            Ok(n) => names.push(n),
            Err(e) => {
                probe.fail(
                    Stage::Locate,
                    TestCode::BadResponse,
                    format!("cannot list the streams: {e}"),
                    "Check that JetStream is enabled on the server.",
                );
                return None;
            }
        }
    }
    names.sort();
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn server_urls_become_host_and_port() {
        assert_eq!(host_port("nats://h:4333"), "h:4333");
        assert_eq!(host_port("nats://u:p@h"), "h:4222");
        assert_eq!(host_port("tls://[::1]"), "[::1]:4222");
        assert_eq!(host_port("[::1]:5000"), "[::1]:5000");
        assert_eq!(host_port("h"), "h:4222");
    }
}
