//! The mqtt connector's connection test: connect to the broker with the profile's
//! credentials and read its CONNACK (refusals told apart: bad credentials, not authorized,
//! unavailable); for a source table, subscribe to its topic and read up to `limit`
//! messages. MQTT has no way to list or check a topic, so an idle topic is reported as
//! such. TLS brokers (`mqtts://`, `ssl://`) are verified against the profile's CA (or
//! this machine's roots), with the client certificate when one is given.

use super::reader::MqttReader;
use super::writer::MqttWriter;
use crate::probe::{
    MetadataValue, Probe, SampledMessage, Stage, TestCode, connect_code, human, is_dns_error,
};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use rumqttc::{
    AsyncClient, ConnectReturnCode, ConnectionError, Event, EventLoop, MqttOptions, Packet, QoS,
    TlsConfiguration, Transport,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use std::time::Duration;
use tributary_types::ConnectionType;

/// A client id no other connection of this process uses (a broker disconnects the older
/// of two clients with one id), after the profile's `client_prefix`.
fn client_id(probe: &Probe<'_>) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let prefix = probe
        .connection
        .get("clientPrefix")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("tributary");
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

/// Connect and wait for the broker's CONNACK.
async fn connect(probe: &mut Probe<'_>) -> Option<(AsyncClient, EventLoop)> {
    let url = probe.setting("/url", "url")?;
    let parsed = match url::Url::parse(&url) {
        Ok(u) => u,
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::BadResponse,
                format!("'{url}' is not a URL: {e}"),
                "Write the broker as mqtt://host:1883.",
            );
            return None;
        }
    };
    let tls = matches!(parsed.scheme(), "mqtts" | "ssl" | "tls");
    let host = parsed.host_str().unwrap_or("localhost").to_string();
    let port = parsed.port().unwrap_or(if tls { 8883 } else { 1883 });
    // A confined session connects to the address it checked (without TLS, which needs
    // the name), so a second lookup of the name cannot land anywhere else.
    let mut connect_to = host.clone();
    if !probe.access().is_unrestricted() {
        let checked = probe
            .police("broker", &crate::probe::host_port(&host, port))
            .await?;
        if !tls {
            connect_to = checked.ip().to_string();
        }
    }
    let mut options = MqttOptions::new(client_id(probe), connect_to, port);
    if tls {
        options.set_transport(Transport::tls_with_config(tls_config(probe)?));
    }
    options.set_keep_alive(Duration::from_secs(5));
    let user = match probe.connection.pointer("/username") {
        Some(_) => Some(probe.setting("/username", "username")?),
        None => None,
    };
    if let Some(user) = &user {
        let password = match probe.connection.pointer("/password") {
            Some(_) => probe.setting("/password", "password")?,
            None => String::new(),
        };
        options.set_credentials(user.clone(), password);
    }
    probe.pass(Stage::Resolve, format!("broker {host}:{port}"));
    let (client, mut events) = AsyncClient::new(options, 16);
    let first = probe
        .within(
            Stage::Connect,
            &format!("connecting to {host}:{port}"),
            events.poll(),
        )
        .await?;
    match first {
        Ok(Event::Incoming(Packet::ConnAck(_))) => {
            probe.pass(Stage::Connect, format!("connected to {host}:{port}"));
            probe.pass(
                Stage::Authenticate,
                format!(
                    "the broker accepted the connection{}",
                    user.map(|u| format!(" as '{u}'")).unwrap_or_default()
                ),
            );
            Some((client, events))
        }
        Ok(other) => {
            probe.fail(
                Stage::Connect,
                TestCode::BadResponse,
                format!("expected the broker's CONNACK, got {}", describe(&other)),
                "Check that the address is an MQTT broker.",
            );
            None
        }
        Err(e) => {
            fail_connection(probe, &format!("{host}:{port}"), &e);
            None
        }
    }
}

/// A PEM setting of `tls`: inline PEM, or the path of a PEM file. `Some(None)` when the
/// setting is absent; `None` (with the failure recorded) when it cannot be read.
fn pem(probe: &mut Probe<'_>, key: &str) -> Option<Option<Vec<u8>>> {
    let pointer = format!("/tls/{key}");
    if probe.connection.pointer(&pointer).is_none() {
        return Some(None);
    }
    let option = format!("tls.{key}");
    let value = probe.setting(&pointer, &option)?;
    if value.trim_start().starts_with("-----BEGIN") {
        return Some(Some(value.into_bytes()));
    }
    match std::fs::read(&value) {
        Ok(bytes) => Some(Some(bytes)),
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::NotFound,
                format!("option '{option}': cannot read '{value}': {e}"),
                "Give the path of a PEM file, or the PEM text itself.",
            );
            None
        }
    }
}

/// The TLS settings: the profile's CA (else this machine's roots) and client certificate.
fn tls_config(probe: &mut Probe<'_>) -> Option<TlsConfiguration> {
    let ca = pem(probe, "ca")?;
    let client = match (pem(probe, "cert")?, pem(probe, "key")?) {
        (Some(cert), Some(key)) => Some((cert, key)),
        (None, None) => None,
        _ => {
            probe.fail(
                Stage::Resolve,
                TestCode::TlsFailed,
                "a client certificate needs both 'tls.cert' and 'tls.key'",
                "Give both, or neither.",
            );
            return None;
        }
    };
    let mut roots = rustls::RootCertStore::empty();
    let found = match &ca {
        Some(pem) => CertificateDer::pem_slice_iter(pem)
            .filter_map(Result::ok)
            .filter(|c| roots.add(c.clone()).is_ok())
            .count(),
        None => rustls_native_certs::load_native_certs()
            .certs
            .into_iter()
            .filter(|c| roots.add(c.clone()).is_ok())
            .count(),
    };
    if found == 0 {
        let (message, hint) = match ca {
            Some(_) => (
                "option 'tls.ca' holds no PEM certificate",
                "Give the CA certificate that signed the broker's, in PEM.",
            ),
            None => (
                "this machine has no trusted root certificates",
                "Set 'tls.ca' to the CA certificate that signed the broker's.",
            ),
        };
        probe.fail(Stage::Resolve, TestCode::TlsFailed, message, hint);
        return None;
    }
    let builder = rustls::ClientConfig::builder().with_root_certificates(roots);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert)
                .filter_map(Result::ok)
                .collect();
            let built = PrivateKeyDer::from_pem_slice(&key)
                .map_err(|e| format!("'tls.key' holds no PEM private key: {e}"))
                .and_then(|key| {
                    builder
                        .with_client_auth_cert(chain, key)
                        .map_err(|e| format!("the client certificate cannot be used: {e}"))
                });
            match built {
                Ok(c) => c,
                Err(message) => {
                    probe.fail(
                        Stage::Resolve,
                        TestCode::TlsFailed,
                        message,
                        "Check 'tls.cert' and 'tls.key': a PEM certificate and its private key.",
                    );
                    return None;
                }
            }
        }
    };
    Some(TlsConfiguration::Rustls(Arc::new(config)))
}

fn describe(event: &Event) -> &'static str {
    match event {
        Event::Incoming(_) => "another packet",
        Event::Outgoing(_) => "nothing",
    }
}

fn fail_connection(probe: &mut Probe<'_>, address: &str, e: &ConnectionError) {
    match e {
        ConnectionError::ConnectionRefused(code) => {
            let (code, why, hint) = match code {
                ConnectReturnCode::BadUserNamePassword => (
                    TestCode::AuthFailed,
                    "bad user name or password",
                    "Check 'username' and 'password' on the connection profile.",
                ),
                ConnectReturnCode::NotAuthorized => (
                    TestCode::AuthFailed,
                    "not authorized",
                    "Check the credentials and the broker's access rules.",
                ),
                ConnectReturnCode::ServiceUnavailable => (
                    TestCode::BadResponse,
                    "the service is unavailable",
                    "Check the broker's health.",
                ),
                _ => (
                    TestCode::BadResponse,
                    "the connection was refused",
                    "Check the broker's settings.",
                ),
            };
            let stage = if code == TestCode::AuthFailed {
                Stage::Authenticate
            } else {
                Stage::Connect
            };
            probe.fail(
                stage,
                code,
                format!("the broker at {address} refused the connection: {why}"),
                hint,
            );
        }
        ConnectionError::Io(io) => {
            let code = if is_dns_error(&io.to_string()) {
                TestCode::DnsUnresolved
            } else {
                connect_code(io)
            };
            probe.fail(
                Stage::Connect,
                code,
                format!("cannot connect to {address}: {io}"),
                "Check the host and port in 'url', and that the broker is running.",
            );
        }
        ConnectionError::Tls(tls) => {
            // A refused or unresolvable address arrives here too, from inside the TLS
            // connector.
            let text = tls.to_string();
            let (code, hint) = if is_dns_error(&text) {
                (TestCode::DnsUnresolved, "Check the host in 'url'.")
            } else if text.contains("refused") {
                (
                    TestCode::ConnectRefused,
                    "Check the host and port in 'url', and that the broker is running.",
                )
            } else {
                (
                    TestCode::TlsFailed,
                    "Check that the port speaks TLS and that 'tls.ca' signed the broker's certificate (issued for the host in 'url').",
                )
            };
            probe.fail(
                Stage::Connect,
                code,
                format!("TLS with {address} failed: {text}"),
                hint,
            );
        }
        ConnectionError::NetworkTimeout => probe.fail(
            Stage::Connect,
            TestCode::Timeout,
            format!("{address} did not answer in time"),
            "Check that the broker is reachable from here.",
        ),
        other => probe.fail(
            Stage::Connect,
            TestCode::BadResponse,
            format!("the connection to {address} failed: {other}"),
            "Check the broker's address and settings.",
        ),
    }
}

pub(crate) async fn test_connection(probe: &mut Probe<'_>) {
    if let Some((client, _events)) = connect(probe).await {
        let _ = client.try_disconnect();
    }
}

/// The table's `qos` (at least once unless it says otherwise).
fn qos(probe: &Probe<'_>) -> QoS {
    match probe
        .table
        .and_then(|t| t.get("qos"))
        .and_then(serde_json::Value::as_str)
    {
        Some("AtMostOnce") => QoS::AtMostOnce,
        Some("ExactlyOnce") => QoS::ExactlyOnce,
        _ => QoS::AtLeastOnce,
    }
}

/// A published message with its METADATA values.
pub(super) fn published(p: &rumqttc::Publish) -> SampledMessage {
    SampledMessage {
        payload: p.payload.to_vec(),
        metadata: vec![("topic", MetadataValue::Text(p.topic.as_str().into()))],
        event_time: None,
    }
}

/// Subscribe to `topic` and wait (within the probe's timeout) for the broker's answer;
/// `Some(())` once it accepted, `None` when it refused or failed (the probe says why).
/// Messages that arrive first (a retained one) are kept in the probe.
async fn subscribe(
    probe: &mut Probe<'_>,
    client: &AsyncClient,
    events: &mut EventLoop,
    topic: &str,
    qos: QoS,
) -> Option<()> {
    if let Err(e) = client.subscribe(topic.to_string(), qos).await {
        probe.fail(
            Stage::Locate,
            TestCode::BadResponse,
            format!("cannot subscribe to '{topic}': {e}"),
            "Check the topic filter.",
        );
        return None;
    }
    let deadline = tokio::time::Instant::now() + probe.timeout;
    loop {
        let event =
            match tokio::time::timeout_at(probe.sample_deadline(deadline), events.poll()).await {
                Err(_) => {
                    probe.fail(
                    Stage::Locate,
                    TestCode::Timeout,
                    format!(
                        "the broker did not acknowledge the subscription to '{topic}' within {}",
                        human(probe.timeout)
                    ),
                    "Check that the broker is healthy.",
                );
                    return None;
                }
                Ok(Err(e)) => {
                    fail_connection(probe, "the broker", &e);
                    return None;
                }
                Ok(Ok(e)) => e,
            };
        match event {
            Event::Incoming(Packet::SubAck(ack)) => {
                let refused = ack
                    .return_codes
                    .iter()
                    .any(|c| matches!(c, rumqttc::SubscribeReasonCode::Failure));
                if refused {
                    probe.fail(
                        Stage::Locate,
                        TestCode::PermissionDenied,
                        format!("the broker refused the subscription to '{topic}'"),
                        "Check the broker's access rules for this topic.",
                    );
                    return None;
                }
                probe.pass(Stage::Locate, format!("subscribed to '{topic}'"));
                return Some(());
            }
            Event::Incoming(Packet::Publish(p)) => probe.messages.push(published(&p)),
            _ => {}
        }
    }
}

/// A reader of the table's topic for a query: subscribed, then fed by the client's
/// event loop on a task of its own.
pub(crate) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let (client, mut events) = connect(probe).await?;
    let topic = probe.table_setting("/topic", "topic")?;
    subscribe(probe, &client, &mut events, &topic, qos(probe)).await?;
    let early = std::mem::take(&mut probe.messages);
    Some(Box::new(MqttReader::start(client, events, early)))
}

/// A publisher on the table's topic.
pub(crate) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    let (client, events) = connect(probe).await?;
    let topic = probe.table_setting("/topic", "topic")?;
    let retain = probe
        .table
        .and_then(|t| t.pointer("/type/retain"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    probe.pass(Stage::Write, format!("publishing on '{topic}'"));
    Some(Box::new(MqttWriter::start(
        client,
        events,
        topic,
        qos(probe),
        retain,
    )))
}

pub(crate) async fn test_table(probe: &mut Probe<'_>) {
    let Some((client, mut events)) = connect(probe).await else {
        return;
    };
    let Some(topic) = probe.table_setting("/topic", "topic") else {
        return;
    };
    if probe.role == Some(ConnectionType::Sink) {
        probe.skip(Stage::Write, TestCode::NotTestable, format!("MQTT cannot check publish permission on '{topic}' without publishing; nothing was published"));
        let _ = client.try_disconnect();
        return;
    }
    if !probe.wants_messages() {
        let _ = client.try_disconnect();
        return;
    }
    if subscribe(probe, &client, &mut events, &topic, qos(probe))
        .await
        .is_none()
    {
        return;
    }
    let deadline = tokio::time::Instant::now() + probe.timeout;
    while probe.messages.len() < probe.limit {
        let event =
            match tokio::time::timeout_at(probe.sample_deadline(deadline), events.poll()).await {
                Err(_) => break,
                Ok(Err(e)) => {
                    fail_connection(probe, "the broker", &e);
                    return;
                }
                Ok(Ok(e)) => e,
            };
        if let Event::Incoming(Packet::Publish(p)) = event {
            probe.messages.push(published(&p));
        }
    }
    let _ = client.try_disconnect();
    let n = probe.messages.len();
    if n > 0 {
        probe.pass(Stage::Read, probe.messages_read());
    } else {
        probe.fail(
            Stage::Read,
            TestCode::Empty,
            format!("no messages arrived on '{topic}' within {}", human(probe.timeout)),
            "MQTT delivers only messages published while subscribed (and a retained one): publish while testing, check 'topic', or give the test a longer TIMEOUT.",
        );
    }
}
