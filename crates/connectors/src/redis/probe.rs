//! The redis connector's connection test: connect to the server (each node of a cluster),
//! authenticate with the profile's user and password, PING; for a table, count the keys
//! under its prefix, and for a sink ask the server (`ACL DRYRUN`) whether the user may write
//! there, without writing. Queries open their writer and lookups here too, connected the
//! same way.

use super::lookup::RedisLookup;
use super::writer::RedisWriter;
use crate::lookup::LookupReader;
use crate::probe::{Probe, Stage, TestCode, connect_code, is_dns_error};
use crate::sink::SinkWriter;
use ::redis::aio::MultiplexedConnection;
use ::redis::{ErrorKind, IntoConnectionInfo, RedisError};
use serde_json::Value;
use std::time::Duration;
use tributary_types::ConnectionType;

/// Connect, authenticate and PING every configured node; the first node's connection.
pub(super) async fn connect(probe: &mut Probe<'_>) -> Option<MultiplexedConnection> {
    let mut addresses = Vec::new();
    match probe
        .connection
        .pointer("/connection/addresses")
        .and_then(Value::as_array)
    {
        Some(nodes) => {
            for (i, node) in nodes.iter().enumerate() {
                let raw = node.as_str().unwrap_or_default().to_string();
                addresses.push(probe.resolve(&raw, &format!("cluster.addresses[{i}]"))?);
            }
        }
        None => addresses.push(probe.setting("/connection/address", "address")?),
    }
    let username = match probe.connection.pointer("/username") {
        Some(_) => Some(probe.setting("/username", "username")?),
        None => None,
    };
    let password = match probe.connection.pointer("/password") {
        Some(_) => Some(probe.setting("/password", "password")?),
        None => None,
    };
    probe.pass(
        Stage::Resolve,
        format!("{} address(es) to test", addresses.len()),
    );
    let mut first = None;
    for address in &addresses {
        let conn = node(probe, address, username.as_deref(), password.as_deref()).await?;
        first.get_or_insert(conn);
    }
    first
}

async fn node(
    probe: &mut Probe<'_>,
    address: &str,
    username: Option<&str>,
    password: Option<&str>,
) -> Option<MultiplexedConnection> {
    let mut info = match address.into_connection_info() {
        Ok(i) => i,
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::BadResponse,
                format!("'{address}' is not a redis address: {e}"),
                "Write the address as redis://host:port or rediss://host:port.",
            );
            return None;
        }
    };
    // The server the client will connect to, checked first (a confined session does
    // not reach link-local or, if its operator says so, private addresses).
    let server = match info.addr() {
        ::redis::ConnectionAddr::Tcp(host, port)
        | ::redis::ConnectionAddr::TcpTls { host, port, .. } => {
            crate::probe::host_port(host, *port)
        }
        // A local socket is a loopback address under another name.
        _ => "127.0.0.1:0".to_string(),
    };
    if !probe.access().is_unrestricted() {
        let checked = probe.police("redis server", &server).await?;
        // Without TLS (which needs the name), connect to the checked address itself, so
        // a second lookup of the name cannot land anywhere else.
        if let ::redis::ConnectionAddr::Tcp(_, port) = info.addr() {
            let port = *port;
            info = info.set_addr(::redis::ConnectionAddr::Tcp(checked.ip().to_string(), port));
        }
    }
    let mut settings = info.redis_settings().clone();
    if let Some(u) = username {
        settings = settings.set_username(u);
    }
    if let Some(p) = password {
        settings = settings.set_password(p);
    }
    info = info.set_redis_settings(settings);
    let client = match ::redis::Client::open(info) {
        Ok(c) => c,
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::BadResponse,
                format!("'{address}' cannot be used: {e}"),
                "Check the address.",
            );
            return None;
        }
    };
    let shown = address_without_credentials(address);
    let connected = probe
        .within(
            Stage::Connect,
            &format!("connecting to {shown}"),
            // The crate's own defaults (1 s to connect, 500 ms per reply) would cut the
            // test's TIMEOUT short; a little longer, they leave the timing to `within`.
            client.get_multiplexed_async_connection_with_config(
                &::redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(probe.timeout + Duration::from_secs(1)))
                    .set_response_timeout(Some(probe.timeout + Duration::from_secs(1))),
            ),
        )
        .await?;
    let mut conn = match connected {
        Ok(c) => c,
        Err(e) => {
            fail_redis(probe, &shown, &e);
            return None;
        }
    };
    probe.pass(Stage::Connect, format!("connected to {shown}"));
    let pong = probe
        .within(
            Stage::Authenticate,
            "PING",
            ::redis::cmd("PING").query_async::<String>(&mut conn),
        )
        .await?;
    match pong {
        Ok(_) => {
            let who = username.unwrap_or("default");
            probe.pass(
                Stage::Authenticate,
                format!("PING answered as user '{who}'"),
            );
            Some(conn)
        }
        Err(e) => {
            fail_redis(probe, &shown, &e);
            None
        }
    }
}

/// Report a redis error at the stage it belongs to.
fn fail_redis(probe: &mut Probe<'_>, address: &str, e: &RedisError) {
    let text = e.to_string();
    let auth = e.kind() == ErrorKind::AuthenticationFailed
        || text.contains("WRONGPASS")
        || text.contains("NOAUTH")
        || text.contains("invalid password");
    if auth {
        probe.fail(
            Stage::Authenticate,
            TestCode::AuthFailed,
            format!("{address} refused the credentials: {text}"),
            "Check 'username' and 'password' on the connection profile.",
        );
    } else if is_dns_error(&text) {
        probe.fail(
            Stage::Connect,
            TestCode::DnsUnresolved,
            format!("the host of {address} does not resolve: {text}"),
            "Check the host name in the address.",
        );
    } else if e.is_connection_refusal() {
        probe.fail(
            Stage::Connect,
            TestCode::ConnectRefused,
            format!("nothing accepts connections at {address}: {text}"),
            "Check the host and port, and that Redis is running.",
        );
    } else if e.is_timeout() {
        probe.fail(
            Stage::Connect,
            TestCode::Timeout,
            format!("{address} did not answer in time: {text}"),
            "Check that the address is reachable from here.",
        );
    } else {
        let code = std::io::Error::other(text.clone());
        probe.fail(
            Stage::Connect,
            connect_code(&code),
            format!("cannot connect to {address}: {text}"),
            "Check the address and that Redis is running.",
        );
    }
}

/// The address with any `user:password@` removed, for messages.
fn address_without_credentials(address: &str) -> String {
    match (address.split_once("://"), address.rsplit_once('@')) {
        (Some((scheme, _)), Some((_, host))) => format!("{scheme}://{host}"),
        _ => address.to_string(),
    }
}

/// The table's key prefix, whatever its target.
/// A writer of the table's target, on the profile's server. A cluster profile is
/// refused: its keys live on many nodes, and this client talks to one.
pub(super) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    if probe.connection.pointer("/connection/addresses").is_some() {
        probe.fail(
            Stage::Write,
            TestCode::Unsupported,
            "queries cannot write to a Redis cluster yet",
            "Write through a profile with a single 'address'.",
        );
        return None;
    }
    let conn = connect(probe).await?;
    let table = probe.table.cloned().unwrap_or_default();
    probe.pass(Stage::Write, "writing with one pipeline per batch");
    Some(Box::new(RedisWriter::new(conn, &table)))
}

/// Open the table for lookups: connect as the table's test does.
pub(super) async fn open_lookup(probe: &mut Probe<'_>) -> Option<Box<dyn LookupReader>> {
    if probe.connection.pointer("/connection/addresses").is_some() {
        probe.fail(
            Stage::Read,
            TestCode::Unsupported,
            "queries cannot look rows up in a Redis cluster yet",
            "Look up through a profile with a single 'address'.",
        );
        return None;
    }
    let conn = connect(probe).await?;
    probe.pass(Stage::Read, "looking keys up with one MGET per batch");
    Some(Box::new(RedisLookup::new(conn)))
}

fn key_prefix(table: &Value) -> Option<&str> {
    [
        "/connectorType/target/keyPrefix",
        "/connectorType/target/listPrefix",
        "/connectorType/target/hashKeyPrefix",
        "/connectorType/lookup/keyPrefix",
    ]
    .iter()
    .find_map(|p| table.pointer(p).and_then(Value::as_str))
}

pub(super) async fn test_table(probe: &mut Probe<'_>) {
    let Some(mut conn) = connect(probe).await else {
        return;
    };
    let prefix = probe
        .table
        .and_then(key_prefix)
        .unwrap_or_default()
        .to_string();
    let pattern = format!("{prefix}*");
    let scanned = scan(probe, &mut conn, &pattern).await;
    match scanned {
        Some(Ok((_, keys))) => probe.pass(
            Stage::Locate,
            format!(
                "{} key(s) match '{pattern}' in the first scan batch",
                keys.len()
            ),
        ),
        Some(Err(e)) => {
            probe.fail(
                Stage::Locate,
                TestCode::PermissionDenied,
                format!("SCAN MATCH '{pattern}' failed: {e}"),
                "Grant the user the SCAN command, or check the key prefix.",
            );
            return;
        }
        None => return,
    }
    if probe.role != Some(ConnectionType::Sink) {
        return;
    }
    let user = match probe
        .connection
        .pointer("/username")
        .and_then(Value::as_str)
    {
        Some(u) => u.to_string(),
        None => "default".to_string(),
    };
    let dry = probe
        .within(
            Stage::Write,
            "ACL DRYRUN",
            ::redis::cmd("ACL")
                .arg("DRYRUN")
                .arg(&user)
                .arg("SET")
                .arg(format!("{prefix}tributary-probe"))
                .arg("x")
                .query_async::<String>(&mut conn),
        )
        .await;
    match dry {
        Some(Ok(answer)) if answer == "OK" => probe.pass(
            Stage::Write,
            format!("user '{user}' may write keys under '{prefix}' (checked with ACL DRYRUN, nothing written)"),
        ),
        Some(Ok(answer)) => probe.fail(
            Stage::Write,
            TestCode::PermissionDenied,
            format!("user '{user}' may not write keys under '{prefix}': {answer}"),
            "Grant the user write access to the key prefix (ACL SETUSER ... ~prefix* +set).",
        ),
        Some(Err(e)) => probe.skip(
            Stage::Write,
            TestCode::BadResponse,
            format!("the server cannot check write permission without writing (ACL DRYRUN: {e}); nothing was written"),
        ),
        None => {}
    }
}

/// One SCAN batch of keys matching `pattern` (cheap: the server answers at once).
async fn scan(
    probe: &mut Probe<'_>,
    conn: &mut MultiplexedConnection,
    pattern: &str,
) -> Option<Result<(u64, Vec<String>), RedisError>> {
    probe
        .within(
            Stage::Locate,
            "scanning keys",
            ::redis::cmd("SCAN")
                .arg(0)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async::<(u64, Vec<String>)>(conn),
        )
        .await
}

/// Key prefixes in use (the part of each key up to its last ':'), from one SCAN batch:
/// cheap, and enough to suggest a `target.key_prefix`.
pub(super) async fn key_prefixes(probe: &mut Probe<'_>) -> Option<Vec<String>> {
    let mut conn = connect(probe).await?;
    match scan(probe, &mut conn, "*").await? {
        Ok((_, keys)) => {
            let mut prefixes: Vec<String> = keys
                .iter()
                .filter_map(|k| k.rfind(':').map(|i| k[..=i].to_string()))
                .collect();
            prefixes.sort();
            prefixes.dedup();
            Some(prefixes)
        }
        Err(e) => {
            probe.fail(
                Stage::Locate,
                TestCode::PermissionDenied,
                format!("SCAN failed: {e}"),
                "Grant the user the SCAN command.",
            );
            None
        }
    }
}
