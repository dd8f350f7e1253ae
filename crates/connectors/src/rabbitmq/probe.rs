//! The rabbitmq connector's connection test over the stream protocol: the node resolved
//! and reached over TCP, the handshake with the profile's user, password and virtual
//! host, the table's stream located through its metadata, and up to `limit` messages read
//! from the table's offset by a subscription on a node that holds the stream, which stores
//! no offset and is closed afterwards. The stream protocol cannot list streams, so
//! completion (and the suggestion for a misspelled stream) asks the management API
//! (port 15672) when its plugin is enabled.

use super::client::{Broker, Offset, StreamClient, StreamError};
use super::reader::RabbitReader;
use super::wire::code;
use super::writer::RabbitWriter;
use crate::probe::{Probe, SampledMessage, Stage, TestCode, connect_code, human, is_dns_error};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use serde_json::Value;

/// The management API's port, which completion asks for the stream names.
const MANAGEMENT_PORT: u16 = 15672;
/// How many connections a load balancer gets to land on a node holding the stream.
const LOAD_BALANCER_ATTEMPTS: usize = 10;

/// Where and as whom to connect, with `{{ VAR }}` references resolved.
struct Target {
    host: String,
    port: u16,
    user: String,
    password: String,
    vhost: String,
    load_balancer: bool,
}

impl Target {
    fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A string setting of the profile, or its documented default when it is absent.
fn setting_or(probe: &mut Probe<'_>, pointer: &str, option: &str, default: &str) -> Option<String> {
    if probe.connection.pointer(pointer).is_some() {
        probe.setting(pointer, option)
    } else {
        Some(default.to_string())
    }
}

fn target(probe: &mut Probe<'_>) -> Option<Target> {
    let host = setting_or(probe, "/host", "host", "localhost")?;
    let user = setting_or(probe, "/username", "username", "guest")?;
    let password = setting_or(probe, "/password", "password", "guest")?;
    let vhost = setting_or(probe, "/virtual_host", "virtual_host", "/")?;
    let port = probe
        .connection
        .pointer("/port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(5552);
    let load_balancer = probe
        .connection
        .pointer("/load_balancer_mode")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if probe
        .connection
        .pointer("/tls_config/enabled")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        probe.skip(
            Stage::Connect,
            TestCode::NotTestable,
            "TLS stream connections are not live-tested yet; the configuration was checked",
        );
        return None;
    }
    probe.pass(
        Stage::Resolve,
        format!("node {host}:{port}, virtual host '{vhost}'"),
    );
    Some(Target {
        host,
        port,
        user,
        password,
        vhost,
        load_balancer,
    })
}

/// The stage, code and hint of a failed handshake.
fn classify(e: &StreamError, target: &Target) -> (Stage, TestCode, String) {
    let credentials = format!(
        "Check 'username' and 'password' on the connection profile (user '{}').",
        target.user
    );
    match e {
        StreamError::Refused(
            code::AUTHENTICATION_FAILURE | code::SASL_ERROR | code::SASL_MECHANISM_NOT_SUPPORTED,
        )
        | StreamError::NoPlain(_) => (Stage::Authenticate, TestCode::AuthFailed, credentials),
        StreamError::Refused(code::AUTHENTICATION_FAILURE_LOOPBACK) => (
            Stage::Authenticate,
            TestCode::AuthFailed,
            format!(
                "User '{}' may only connect from localhost; create a user for remote access.",
                target.user
            ),
        ),
        StreamError::Refused(code::VIRTUAL_HOST_ACCESS_FAILURE) => (
            Stage::Authenticate,
            TestCode::PermissionDenied,
            format!(
                "Check 'virtual_host' ('{}') and that user '{}' may use it.",
                target.vhost, target.user
            ),
        ),
        StreamError::Io(io) if is_dns_error(&io.to_string()) => (
            Stage::Resolve,
            TestCode::DnsUnresolved,
            "Check 'host'.".to_string(),
        ),
        StreamError::Io(io) => (
            Stage::Connect,
            connect_code(io),
            "Check 'host' and 'port', and that the rabbitmq_stream plugin is enabled.".to_string(),
        ),
        _ => (
            Stage::Connect,
            TestCode::BadResponse,
            "Check that 'port' is the stream protocol's (5552 by default), not AMQP's (5672)."
                .to_string(),
        ),
    }
}

/// Open a stream connection to `address` (the profile's node, or one the metadata names).
async fn open(probe: &mut Probe<'_>, target: &Target, address: &str) -> Option<StreamClient> {
    let connected = probe
        .within(
            Stage::Authenticate,
            &format!("the stream protocol handshake with {address}"),
            StreamClient::connect(address, &target.user, &target.password, &target.vhost),
        )
        .await?;
    match connected {
        Ok(client) => Some(client),
        Err(e) => {
            let (stage, code, hint) = classify(&e, target);
            probe.fail(
                stage,
                code,
                format!("cannot open a stream connection to {address}: {e}"),
                hint,
            );
            None
        }
    }
}

/// Reach the profile's node and complete the handshake.
async fn connect(probe: &mut Probe<'_>) -> Option<(Target, StreamClient)> {
    let target = target(probe)?;
    let address = target.address();
    if !probe
        .reach(
            "node",
            &address,
            "'host' and 'port'",
            "the rabbitmq_stream plugin is enabled",
        )
        .await
    {
        return None;
    }
    let client = open(probe, &target, &address).await?;
    probe.pass(Stage::Connect, format!("connected to {address}"));
    probe.pass(
        Stage::Authenticate,
        format!(
            "user '{}' opened virtual host '{}'",
            target.user, target.vhost
        ),
    );
    Some((target, client))
}

pub(crate) async fn test_connection(probe: &mut Probe<'_>) {
    if let Some((_, client)) = connect(probe).await {
        client.close().await;
    }
}

pub(crate) async fn test_table(probe: &mut Probe<'_>) {
    let Some((target, mut client)) = connect(probe).await else {
        return;
    };
    let Some(stream) = probe.table_setting("/stream", "stream") else {
        client.close().await;
        return;
    };
    let Some(members) = locate(probe, &target, &mut client, &stream).await else {
        client.close().await;
        return;
    };
    if !probe.wants_messages() {
        client.close().await;
        return;
    }
    if let Some(client) = member_connection(probe, &target, client, &members).await {
        read(probe, client, &stream).await;
    }
}

/// Find the stream through the node's metadata; its members (leader first) when found.
async fn locate(
    probe: &mut Probe<'_>,
    target: &Target,
    client: &mut StreamClient,
    stream: &str,
) -> Option<Vec<Broker>> {
    let found = probe
        .within(
            Stage::Locate,
            &format!("looking up stream '{stream}'"),
            client.metadata(stream),
        )
        .await?;
    let info = match found {
        Ok(info) => info,
        Err(e) => {
            probe.fail(
                Stage::Locate,
                TestCode::BadResponse,
                format!("cannot read the metadata of stream '{stream}': {e}"),
                "Check the node's health.",
            );
            return None;
        }
    };
    match (info.code, info.leader) {
        (code::OK, Some(leader)) => {
            probe.pass(
                Stage::Locate,
                format!(
                    "stream '{stream}' found; its leader is {leader} with {} replica(s)",
                    info.replicas.len()
                ),
            );
            let mut members = vec![leader];
            members.extend(info.replicas);
            Some(members)
        }
        (code::OK | code::STREAM_NOT_AVAILABLE, _) => {
            probe.fail(
                Stage::Locate,
                TestCode::BadResponse,
                format!("stream '{stream}' exists but is not available (it has no leader)"),
                "Check the cluster: the stream's members may be down.",
            );
            None
        }
        (code::ACCESS_REFUSED, _) => {
            probe.fail(
                Stage::Locate,
                TestCode::PermissionDenied,
                format!("user '{}' may not see stream '{stream}'", target.user),
                "Grant the user read permission on the stream.",
            );
            None
        }
        _ => {
            let hint = match list_streams(target).await {
                Ok(names) => {
                    match tributary_types::closest(stream, names.iter().map(String::as_str)) {
                        Some(c) => {
                            format!("Did you mean '{c}'? SHOW TOPICS IN PROFILE lists the streams.")
                        }
                        None if names.is_empty() => format!(
                            "Virtual host '{}' has no streams; declare one first.",
                            target.vhost
                        ),
                        None => format!(
                            "The streams of virtual host '{}' are: {}.",
                            target.vhost,
                            names.join(", ")
                        ),
                    }
                }
                // Without the management API nothing can be suggested.
                Err(_) => "Check 'stream'; a classic or quorum queue of that name is not a stream."
                    .to_string(),
            };
            probe.fail(
                Stage::Locate,
                TestCode::NotFound,
                format!(
                    "stream '{stream}' does not exist in virtual host '{}'",
                    target.vhost
                ),
                hint,
            );
            None
        }
    }
}

/// A connection to a node that holds the stream, as the source would read it: the one
/// already open when its node is a member; through a load balancer, new connections until
/// one lands on a member; otherwise a connection to a member's advertised address.
async fn member_connection(
    probe: &mut Probe<'_>,
    target: &Target,
    client: StreamClient,
    members: &[Broker],
) -> Option<StreamClient> {
    node_connection(probe, target, client, members, false).await
}

/// A connection to a node among `members` (the leader first): the leader itself when
/// `leader_only` (publishers write there), else a replica when there is one.
async fn node_connection(
    probe: &mut Probe<'_>,
    target: &Target,
    client: StreamClient,
    members: &[Broker],
    leader_only: bool,
) -> Option<StreamClient> {
    let members = if leader_only { &members[..1] } else { members };
    let holds = |c: &StreamClient| c.advertised.as_ref().is_none_or(|a| members.contains(a));
    if holds(&client) {
        return Some(client);
    }
    client.close().await;
    if target.load_balancer {
        let address = target.address();
        for _ in 0..LOAD_BALANCER_ATTEMPTS {
            let c = open(probe, target, &address).await?;
            if holds(&c) {
                return Some(c);
            }
            c.close().await;
        }
        probe.fail(
            Stage::Read,
            TestCode::BadResponse,
            format!(
                "{LOAD_BALANCER_ATTEMPTS} connections through {address} never reached a node holding the stream"
            ),
            "Check the load balancer's targets.",
        );
        return None;
    }
    // A replica, as the source prefers, else the leader.
    let member = members.get(1).unwrap_or(&members[0]).to_string();
    match probe
        .within(
            Stage::Read,
            &format!("connecting to {member}"),
            StreamClient::connect(&member, &target.user, &target.password, &target.vhost),
        )
        .await?
    {
        Ok(c) => Some(c),
        Err(e) => {
            let text = e.to_string();
            let code = match &e {
                StreamError::Io(_) if is_dns_error(&text) => TestCode::DnsUnresolved,
                StreamError::Io(io) => connect_code(io),
                _ => TestCode::BadResponse,
            };
            probe.fail(
                Stage::Read,
                code,
                format!("cannot reach {member}, which the node advertises for the stream: {text}"),
                "The source connects to the host and port the nodes advertise: set 'load_balancer_mode' = true when a load balancer sits in front, or the nodes' advertised_host.",
            );
            None
        }
    }
}

/// The table's start offset, its name, and what it means when nothing arrives from it.
fn offset(probe: &Probe<'_>) -> (Offset, &'static str, &'static str) {
    let name = probe
        .table
        .and_then(|t| t.pointer("/type/offset"))
        .and_then(Value::as_str)
        .unwrap_or("last");
    match name {
        "first" => (
            Offset::First,
            "first",
            "The stream is empty: publish to it first, or check 'stream'.",
        ),
        "next" => (
            Offset::Next,
            "next",
            "Offset 'next' reads only messages published after the test subscribed: publish while testing, or set 'source.offset' = 'first' to read what the stream holds.",
        ),
        _ => (
            Offset::Last,
            "last",
            "Offset 'last' starts at the stream's last chunk, so the stream is empty: publish to it first, or check 'stream'.",
        ),
    }
}

/// Subscribe to `stream` from the table's offset; whether that worked (the probe says
/// why not).
async fn subscribe(probe: &mut Probe<'_>, client: &mut StreamClient, stream: &str) -> bool {
    let (spec, _, _) = offset(probe);
    let subscribed = probe
        .within(
            Stage::Read,
            &format!("subscribing to stream '{stream}'"),
            client.subscribe(stream, spec),
        )
        .await;
    match subscribed {
        None => false,
        Some(Ok(())) => true,
        Some(Err(e)) => {
            let code = match e {
                StreamError::Refused(code::ACCESS_REFUSED) => TestCode::PermissionDenied,
                _ => TestCode::BadResponse,
            };
            probe.fail(
                Stage::Read,
                code,
                format!("cannot subscribe to stream '{stream}': {e}"),
                "Check that the user may read the stream.",
            );
            false
        }
    }
}

/// A connection for a query, the table's stream, and the nodes that hold it (the leader
/// first).
async fn located(probe: &mut Probe<'_>) -> Option<(Target, StreamClient, String, Vec<Broker>)> {
    let (target, mut client) = connect(probe).await?;
    let Some(stream) = probe.table_setting("/stream", "stream") else {
        client.close().await;
        return None;
    };
    let Some(members) = locate(probe, &target, &mut client, &stream).await else {
        client.close().await;
        return None;
    };
    Some((target, client, stream, members))
}

/// A reader of the table's stream for a query, subscribed from its offset on a node
/// that holds it; anonymous, so no offset is stored.
pub(crate) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let (target, client, stream, members) = located(probe).await?;
    let mut client = member_connection(probe, &target, client, &members).await?;
    if !subscribe(probe, &mut client, &stream).await {
        client.close().await;
        return None;
    }
    Some(Box::new(RabbitReader::new(client, stream)))
}

/// A publisher on the table's stream for `INSERT INTO`, connected to its leader.
pub(crate) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    let (target, client, stream, members) = located(probe).await?;
    let mut client = node_connection(probe, &target, client, &members, true).await?;
    let declared = probe
        .within(
            Stage::Write,
            &format!("declaring a publisher on stream '{stream}'"),
            client.declare_publisher(&stream),
        )
        .await;
    match declared {
        Some(Ok(())) => {
            probe.pass(Stage::Write, format!("publishing to stream '{stream}'"));
            Some(Box::new(RabbitWriter::new(client, stream)))
        }
        Some(Err(e)) => {
            let code = match e {
                StreamError::Refused(code::ACCESS_REFUSED) => TestCode::PermissionDenied,
                _ => TestCode::BadResponse,
            };
            probe.fail(
                Stage::Write,
                code,
                format!("cannot publish to stream '{stream}': {e}"),
                "Check that the user may write the stream.",
            );
            client.close().await;
            None
        }
        None => None,
    }
}

/// Read up to `limit` messages from the table's offset; the subscription is anonymous,
/// so no offset is stored, and closing the connection ends it.
async fn read(probe: &mut Probe<'_>, mut client: StreamClient, stream: &str) {
    let (_, offset_name, empty_hint) = offset(probe);
    if !subscribe(probe, &mut client, stream).await {
        return client.close().await;
    }
    let deadline = tokio::time::Instant::now() + probe.timeout;
    let mut failure = None;
    while probe.messages.len() < probe.limit {
        match tokio::time::timeout_at(probe.sample_deadline(deadline), client.next_messages()).await
        {
            Ok(Ok(messages)) => {
                let room = probe.limit - probe.messages.len();
                probe
                    .messages
                    .extend(messages.into_iter().take(room).map(SampledMessage::from));
            }
            Ok(Err(e)) => {
                failure = Some(e.to_string());
                break;
            }
            Err(_) => break,
        }
    }
    client.close().await;
    let n = probe.messages.len();
    match failure {
        Some(e) if n == 0 => probe.fail(
            Stage::Read,
            TestCode::BadResponse,
            format!("reading stream '{stream}' failed: {e}"),
            "Check the node's logs.",
        ),
        _ if n > 0 => probe.pass(
            Stage::Read,
            format!(
                "{} from offset '{offset_name}' (no offset stored)",
                probe.messages_read()
            ),
        ),
        _ => probe.fail(
            Stage::Read,
            TestCode::Empty,
            format!(
                "no messages arrived from stream '{stream}' at offset '{offset_name}' within {}",
                human(probe.timeout)
            ),
            empty_hint,
        ),
    }
}

/// The stream names of the profile's virtual host, from the management API.
async fn list_streams(target: &Target) -> Result<Vec<String>, String> {
    let vhost: String = url::form_urlencoded::byte_serialize(target.vhost.as_bytes()).collect();
    let url = format!(
        "http://{}:{MANAGEMENT_PORT}/api/queues/{vhost}?columns=name,type",
        target.host
    );
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(5))
        .build()
        .map_err(|e| e.to_string())?;
    let response = client
        .get(&url)
        .basic_auth(&target.user, Some(&target.password))
        .send()
        .await
        .map_err(|e| format!("{url} did not answer: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("{url} did not finish its answer: {e}"))?;
    let queues: Vec<Value> =
        serde_json::from_slice(&body).map_err(|e| format!("{url} sent an unreadable list: {e}"))?;
    let mut names: Vec<String> = queues
        .iter()
        .filter(|q| q.get("type").and_then(Value::as_str) == Some("stream"))
        .filter_map(|q| q.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    names.sort();
    Ok(names)
}

/// The streams of the profile's virtual host, for completion.
pub(crate) async fn streams(probe: &mut Probe<'_>) -> Option<Vec<String>> {
    let target = target(probe)?;
    match list_streams(&target).await {
        Ok(names) => {
            probe.pass(Stage::Locate, format!("listed {} stream(s)", names.len()));
            Some(names)
        }
        Err(e) => {
            probe.fail(
                Stage::Locate,
                TestCode::NotTestable,
                format!("the stream protocol cannot list streams, and the management API failed: {e}"),
                "Enable the rabbitmq_management plugin (rabbitmq-plugins enable rabbitmq_management) to list streams.",
            );
            None
        }
    }
}
