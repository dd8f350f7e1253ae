//! Connection tests: a [`Probe`] carries the settings under test, resolves `{{ VAR }}`
//! references only now (a missing variable is a failure naming it), bounds every network
//! step with a timeout, and records what happened as [`TestEvent`]s by stage (resolve,
//! connect, authenticate, locate, read, write), each failure with a stable [`TestCode`] and
//! a hint. Sources hand back the raw messages they read; decoding them is the caller's.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tributary_types::access::Access;
use tributary_types::{ConnectionType, REDACTED, env_references, redact_text, resolve_env};

/// The step of a connection test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Settings and `{{ VAR }}` references turned into an address and credentials.
    Resolve,
    /// A connection to the system.
    Connect,
    /// Credentials accepted.
    Authenticate,
    /// The topic, subject, stream, queue, key space or path exists.
    Locate,
    /// Messages read.
    Read,
    /// Messages decoded with the table's format.
    Decode,
    /// The sink can write.
    Write,
}

impl Stage {
    /// Every stage, in the order a test goes through them.
    pub const ALL: [Stage; 7] = [
        Stage::Resolve,
        Stage::Connect,
        Stage::Authenticate,
        Stage::Locate,
        Stage::Read,
        Stage::Decode,
        Stage::Write,
    ];
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Resolve => "resolve",
            Stage::Connect => "connect",
            Stage::Authenticate => "authenticate",
            Stage::Locate => "locate",
            Stage::Read => "read",
            Stage::Decode => "decode",
            Stage::Write => "write",
        })
    }
}

/// Why a stage failed: stable codes that scripts and the REST API can match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TestCode {
    /// A `{{ VAR }}` reference names an unset variable.
    MissingVariable,
    /// The host name does not resolve.
    DnsUnresolved,
    /// Nothing listens at the address.
    ConnectRefused,
    /// No answer within the timeout.
    Timeout,
    /// Credentials refused.
    AuthFailed,
    /// TLS could not be established.
    TlsFailed,
    /// The topic, stream, path, ... does not exist.
    NotFound,
    /// Access to it is denied.
    PermissionDenied,
    /// Nothing arrived to read.
    Empty,
    /// A message did not decode.
    DecodeFailed,
    /// The system answered something unexpected.
    BadResponse,
    /// The system cannot be reached from here (a cloud service); only the configuration
    /// was checked.
    NotTestable,
    /// Reading (or writing) this connector from a query is not supported here.
    Unsupported,
    /// The server's operator does not allow it: a file, a variable or an address.
    Forbidden,
}

impl TestCode {
    /// The diagnostic code of a stage that ended so.
    pub fn code(self) -> tributary_types::codes::Code {
        use tributary_types::codes;
        match self {
            TestCode::MissingVariable => codes::TEST_MISSING_VARIABLE,
            TestCode::DnsUnresolved => codes::TEST_DNS_UNRESOLVED,
            TestCode::ConnectRefused => codes::TEST_CONNECT_REFUSED,
            TestCode::Timeout => codes::TEST_TIMEOUT,
            TestCode::AuthFailed => codes::TEST_AUTH_FAILED,
            TestCode::TlsFailed => codes::TEST_TLS_FAILED,
            TestCode::NotFound => codes::NOT_FOUND,
            TestCode::PermissionDenied => codes::TEST_PERMISSION_DENIED,
            TestCode::Empty => codes::TEST_EMPTY,
            TestCode::DecodeFailed => codes::TEST_DECODE_FAILED,
            TestCode::BadResponse => codes::TEST_BAD_RESPONSE,
            TestCode::NotTestable => codes::TEST_NOT_TESTABLE,
            TestCode::Unsupported => codes::UNSUPPORTED,
            TestCode::Forbidden => codes::FORBIDDEN,
        }
    }
}

impl fmt::Display for TestCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code().as_str())
    }
}

/// How a stage went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// It worked.
    Passed,
    /// It failed; the test stops.
    Failed,
    /// It was not run (say why in the message).
    Skipped,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
        })
    }
}

/// One thing a test did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestEvent {
    /// The step.
    pub stage: Stage,
    /// How it went.
    pub outcome: Outcome,
    /// Why it failed (or why it was skipped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<TestCode>,
    /// What happened, in a sentence (never a secret).
    pub message: String,
    /// What to check, for failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Milliseconds since the test started.
    pub elapsed_ms: u64,
}

/// One metadata value a connector attaches to a message (what `METADATA FROM 'key'`
/// columns read), typed as the connector's `MetadataKey` declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataValue {
    /// An `INT` value.
    Int(i32),
    /// A `BIGINT` value.
    BigInt(i64),
    /// A `TEXT` value; shared, since a reader attaches the same one (a topic) to many
    /// messages.
    Text(std::sync::Arc<str>),
    /// A `BYTEA` value.
    Bytes(Vec<u8>),
}

/// A message a test read: the payload to decode, and its metadata by key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SampledMessage {
    /// The raw payload.
    pub payload: Vec<u8>,
    /// Metadata values by `METADATA FROM` key (absent keys read as NULL).
    pub metadata: Vec<(&'static str, MetadataValue)>,
    /// The time the source gives the record, in nanoseconds since the epoch (a Kafka
    /// message's timestamp, a generated event's time); `None` where the source gives
    /// none, so the record's event time is the time it is read.
    pub event_time: Option<i64>,
}

impl SampledMessage {
    /// The message with the time its source gives it (nanoseconds since the epoch).
    pub fn at(mut self, event_time: i64) -> Self {
        self.event_time = Some(event_time);
        self
    }

    /// The `INT` metadata value under `key`.
    pub fn int(&self, key: &str) -> Option<i32> {
        self.metadata.iter().find_map(|(k, v)| match v {
            MetadataValue::Int(i) if *k == key => Some(*i),
            _ => None,
        })
    }

    /// The `BIGINT` metadata value under `key`.
    pub fn big_int(&self, key: &str) -> Option<i64> {
        self.metadata.iter().find_map(|(k, v)| match v {
            MetadataValue::BigInt(i) if *k == key => Some(*i),
            _ => None,
        })
    }
}

impl From<Vec<u8>> for SampledMessage {
    fn from(payload: Vec<u8>) -> Self {
        Self {
            payload,
            metadata: Vec::new(),
            event_time: None,
        }
    }
}

/// Where each event goes as it happens (the REPL prints it, the REST API streams it).
pub type EventSink = std::sync::Arc<dyn Fn(&TestEvent) + Send + Sync>;

/// What is being tested, and the record of it.
pub struct Probe<'a> {
    /// The connection settings (a profile's config, or a table's inline settings).
    pub connection: &'a Value,
    /// The table's config, for `TEST TABLE`.
    pub table: Option<&'a Value>,
    /// The table's role, for `TEST TABLE`.
    pub role: Option<ConnectionType>,
    /// The most messages to read.
    pub limit: usize,
    /// The bound on each network step.
    pub timeout: Duration,
    /// File sources return whole files as messages (binary formats: parquet, Avro
    /// container files) rather than lines.
    pub whole_files: bool,
    /// The probe opens a reader for a query (`Connector::open_source`) rather than
    /// testing: what a test may skip, a query needs.
    pub query: bool,
    /// The table's format, for sinks that name files by it.
    pub format: Option<tributary_types::Format>,
    /// The share of the source's partitions a reader takes, when a query reads it in
    /// several streams (see `Connector::splits`).
    pub split: Split,
    env: &'a (dyn Fn(&str) -> Option<String> + Send + Sync),
    access: Access,
    on_event: Option<EventSink>,
    started: Instant,
    events: Vec<TestEvent>,
    /// Messages read, for the caller to decode.
    pub messages: Vec<SampledMessage>,
    /// Values read from the environment, scrubbed from every report.
    resolved: Vec<String>,
}

/// How long a sample read waits for another message once some have come (see
/// [`Probe::sample_deadline`]).
pub const SAMPLE_IDLE: Duration = Duration::from_millis(500);

/// One of `count` readers of a source: it takes the source partitions whose number `n`
/// has `n % count == index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// This reader's place, below `count`.
    pub index: usize,
    /// How many readers share the source.
    pub count: usize,
}

impl Split {
    /// One reader takes every partition.
    pub const WHOLE: Split = Split { index: 0, count: 1 };

    /// Whether this reader takes source partition `n`.
    pub fn takes(self, n: usize) -> bool {
        self.count <= 1 || n % self.count == self.index
    }
}

impl fmt::Debug for Probe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("limit", &self.limit)
            .field("timeout", &self.timeout)
            .field("events", &self.events)
            .finish_non_exhaustive()
    }
}

impl<'a> Probe<'a> {
    /// A probe of `connection`, reading environment variables through `env`, and
    /// reaching only the files, variables and addresses `access` allows.
    pub fn new(
        connection: &'a Value,
        timeout: Duration,
        env: &'a (dyn Fn(&str) -> Option<String> + Send + Sync),
        access: &Access,
    ) -> Self {
        Self {
            connection,
            table: None,
            role: None,
            limit: 10,
            timeout,
            whole_files: false,
            query: false,
            format: None,
            split: Split::WHOLE,
            env,
            access: access.clone(),
            on_event: None,
            started: Instant::now(),
            events: Vec::new(),
            messages: Vec::new(),
            resolved: Vec::new(),
        }
    }

    /// Test a table (its config and role) as well, reading up to `limit` messages.
    pub fn with_table(mut self, table: &'a Value, role: ConnectionType, limit: usize) -> Self {
        self.table = Some(table);
        self.role = Some(role);
        self.limit = limit;
        self
    }

    /// Report each event as it happens (the REPL prints it, the REST API streams it).
    pub fn on_event(mut self, f: EventSink) -> Self {
        self.on_event = Some(f);
        self
    }

    /// What the probe may reach.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// What happened so far.
    pub fn events(&self) -> &[TestEvent] {
        &self.events
    }

    /// Whether the test should read messages (`limit` is 0 for a connect-only test).
    pub fn wants_messages(&self) -> bool {
        self.limit > 0
    }

    /// When a sample read stops waiting for its next message: at `deadline` (the test's
    /// timeout) while nothing has come, and once messages have come, after
    /// [`SAMPLE_IDLE`] without a new one, so a test of a quiet topic that holds one
    /// retained message answers at once rather than at its timeout.
    pub fn sample_deadline(&self, deadline: tokio::time::Instant) -> tokio::time::Instant {
        if self.messages.is_empty() {
            deadline
        } else {
            deadline.min(tokio::time::Instant::now() + SAMPLE_IDLE)
        }
    }

    /// "read 3 messages": what the read stage got so far.
    pub fn messages_read(&self) -> String {
        let n = self.messages.len();
        format!("read {n} message{}", if n == 1 { "" } else { "s" })
    }

    /// Whether a stage failed.
    pub fn failed(&self) -> bool {
        self.events.iter().any(|e| e.outcome == Outcome::Failed)
    }

    fn push(
        &mut self,
        stage: Stage,
        outcome: Outcome,
        code: Option<TestCode>,
        message: String,
        hint: Option<String>,
    ) {
        // Nothing a probe reports may carry a secret: not credentials inside an address,
        // and not a value it read from the environment, whatever a client library echoed.
        let clean = |text: String| {
            let mut text = redact_text(&text).into_owned();
            for secret in &self.resolved {
                if text.contains(secret.as_str()) {
                    text = text.replace(secret.as_str(), REDACTED);
                }
            }
            text
        };
        let event = TestEvent {
            stage,
            outcome,
            code,
            message: clean(message),
            hint: hint.map(clean),
            elapsed_ms: self.started.elapsed().as_millis() as u64,
        };
        if let Some(f) = &self.on_event {
            f(&event);
        }
        self.events.push(event);
    }

    /// A stage that worked.
    pub fn pass(&mut self, stage: Stage, message: impl Into<String>) {
        self.push(stage, Outcome::Passed, None, message.into(), None);
    }

    /// A stage that failed.
    pub fn fail(
        &mut self,
        stage: Stage,
        code: TestCode,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.push(
            stage,
            Outcome::Failed,
            Some(code),
            message.into(),
            Some(hint.into()),
        );
    }

    /// The resolve stage failed because the session may not reach something; `context`
    /// says where it was named ("option 'path'").
    pub fn refuse(&mut self, context: &str, refused: tributary_types::access::Refusal) {
        self.fail(
            Stage::Resolve,
            TestCode::Forbidden,
            format!(
                "{context}: {} is not allowed: {}",
                refused.what, refused.rule
            ),
            refused.help,
        );
    }

    /// A stage not run, and why.
    pub fn skip(&mut self, stage: Stage, code: TestCode, message: impl Into<String>) {
        self.push(stage, Outcome::Skipped, Some(code), message.into(), None);
    }

    /// A string setting of the connection at `pointer`, with `{{ VAR }}` references
    /// resolved; a missing variable fails the resolve stage, naming the option.
    pub fn setting(&mut self, pointer: &str, option: &str) -> Option<String> {
        let raw = self.connection.pointer(pointer)?.as_str()?.to_string();
        self.resolve(&raw, option)
    }

    /// A string setting of the table at `pointer`, resolved like [`Self::setting`].
    pub fn table_setting(&mut self, pointer: &str, option: &str) -> Option<String> {
        let raw = self.table?.pointer(pointer)?.as_str()?.to_string();
        self.resolve(&raw, option)
    }

    /// Resolve `{{ VAR }}` references in one value of `option`.
    pub fn resolve(&mut self, raw: &str, option: &str) -> Option<String> {
        let env = self.env;
        for name in env_references(raw) {
            if let Err(refused) = self.access.variable(&name) {
                self.refuse(&format!("option '{option}'"), refused);
                return None;
            }
        }
        match resolve_env(raw, env) {
            Ok(v) => {
                // What lands in a secret position is hidden from every output of the
                // process from now on, whichever library echoes it.
                tributary_types::remember_secrets_in(crate::is_secret_option(option), &v);
                // Values from the environment are secrets as far as reports go.
                for name in env_references(raw) {
                    if let Some(value) = env(&name).filter(|v| v.chars().count() >= 4)
                        && !self.resolved.contains(&value)
                    {
                        self.resolved.push(value);
                    }
                }
                Some(v)
            }
            Err(e) => {
                self.fail(
                    Stage::Resolve,
                    TestCode::MissingVariable,
                    format!("option '{option}': {e}"),
                    "Set the environment variable before testing, or write the value directly.",
                );
                None
            }
        }
    }

    /// Resolve `server` (`host:port`) and open a TCP connection to it, so that a name that
    /// does not resolve and a port that refuses are told apart before a client library
    /// blurs them. `what` names the server in messages ("bootstrap server"), `settings`
    /// the quoted options to fix ("'host' and 'port'"), and `running` what should be
    /// running there.
    pub async fn reach(&mut self, what: &str, server: &str, settings: &str, running: &str) -> bool {
        self.reach_addr(what, server, settings, running)
            .await
            .is_some()
    }

    /// [`Self::reach`], with the address it reached.
    pub async fn reach_addr(
        &mut self,
        what: &str,
        server: &str,
        settings: &str,
        running: &str,
    ) -> Option<SocketAddr> {
        let addr = self.checked_lookup(what, server, settings).await?;
        match self
            .within(
                Stage::Connect,
                &format!("connecting to {server}"),
                tokio::net::TcpStream::connect(addr),
            )
            .await
        {
            None => None,
            Some(Ok(_)) => Some(addr),
            Some(Err(e)) => {
                self.fail(
                    Stage::Connect,
                    connect_code(&e),
                    format!("cannot connect to {what} '{server}' ({addr}): {e}"),
                    format!("Check {settings}, and that {running}."),
                );
                None
            }
        }
    }

    /// The first of `addrs` (what `server` resolved to), once every one is an address
    /// the probe may reach: a name that resolves to any refused address is refused, so
    /// a client library that looks it up again cannot land on the refused one.
    fn checked(&mut self, what: &str, server: &str, addrs: &[SocketAddr]) -> Option<SocketAddr> {
        let host = host_of(server);
        for addr in addrs {
            if let Err(refused) = self.access.address(host, addr.ip()) {
                self.refuse(&format!("{what} '{server}'"), refused);
                return None;
            }
        }
        addrs.first().copied()
    }

    /// Look `server` (`host:port`) up and check its addresses without connecting, for
    /// client libraries that connect on their own; the address to connect to.
    pub async fn police(&mut self, what: &str, server: &str) -> Option<SocketAddr> {
        self.checked_lookup(what, server, "the host name").await
    }

    /// Look `server` up and check every address it resolves to; the first. A failure
    /// (no answer, no address, a refused address) is recorded, naming `settings`.
    async fn checked_lookup(
        &mut self,
        what: &str,
        server: &str,
        settings: &str,
    ) -> Option<SocketAddr> {
        let looked_up = self
            .within(
                Stage::Resolve,
                &format!("looking up {server}"),
                tokio::net::lookup_host(server.to_string()),
            )
            .await?;
        match looked_up.map(Iterator::collect::<Vec<SocketAddr>>) {
            Ok(addrs) if !addrs.is_empty() => self.checked(what, server, &addrs),
            Ok(_) => {
                self.fail(
                    Stage::Resolve,
                    TestCode::DnsUnresolved,
                    format!("{what} '{server}' has no address"),
                    format!("Check {settings}: the host name has no address here."),
                );
                None
            }
            Err(e) => {
                self.fail(
                    Stage::Resolve,
                    TestCode::DnsUnresolved,
                    format!("{what} '{server}' does not resolve: {e}"),
                    format!("Check {settings}: the host name does not resolve from here."),
                );
                None
            }
        }
    }

    /// The local path a file setting names, once the probe may read it (`file://`
    /// stripped; `None` with the failure recorded when it may not, or for other URLs,
    /// which the caller handles).
    pub fn readable_path(&mut self, setting: &str, option: &str) -> Option<PathBuf> {
        let path = crate::local_files::local_path(setting)?;
        match self.access.file_read(&path) {
            Ok(p) => Some(p),
            Err(refused) => {
                self.refuse(&format!("option '{option}'"), refused);
                None
            }
        }
    }

    /// [`Self::reach`] for clients that need any one of several servers: the first that
    /// answers passes; only when none does is the failure (the last server's) recorded.
    pub async fn reach_any(
        &mut self,
        what: &str,
        servers: &[String],
        settings: &str,
        running: &str,
    ) -> bool {
        for (i, server) in servers.iter().enumerate() {
            let recorded = self.events.len();
            if self.reach(what, server, settings, running).await {
                return true;
            }
            if i + 1 < servers.len() {
                // Another server may answer: this one's failure is not the test's.
                self.events.truncate(recorded);
            }
        }
        false
    }

    /// Run one network step with the probe's timeout; a timeout fails `stage`.
    pub async fn within<T>(
        &mut self,
        stage: Stage,
        what: &str,
        step: impl Future<Output = T>,
    ) -> Option<T> {
        match tokio::time::timeout(self.timeout, step).await {
            Ok(v) => Some(v),
            Err(_) => {
                let after = self.timeout;
                self.fail(
                    stage,
                    TestCode::Timeout,
                    format!("{what} did not finish within {}", human(after)),
                    "Check that the address is right and reachable from here, or give the test a longer TIMEOUT.",
                );
                None
            }
        }
    }
}

/// `host:port`, an IPv6 address bracketed (`[::1]:80`), as a lookup takes it.
pub fn host_port(host: &str, port: u16) -> String {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.contains(':') {
        format!("[{bare}]:{port}")
    } else {
        format!("{bare}:{port}")
    }
}

/// The host of `host:port` (`[v6]:port` unbracketed).
pub fn host_of(server: &str) -> &str {
    let host = match server.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => server,
    };
    host.trim_start_matches('[').trim_end_matches(']')
}

/// A duration for messages: `500 ms`, `5 s`.
pub fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The code for an I/O error on connecting.
pub fn connect_code(e: &std::io::Error) -> TestCode {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => TestCode::ConnectRefused,
        K::TimedOut => TestCode::Timeout,
        K::PermissionDenied => TestCode::PermissionDenied,
        K::NotFound => TestCode::NotFound,
        _ if is_dns_error(&e.to_string()) => TestCode::DnsUnresolved,
        _ => TestCode::ConnectRefused,
    }
}

/// Whether an error text is a failed name lookup (the resolvers' wordings).
pub fn is_dns_error(text: &str) -> bool {
    let t = text.to_lowercase();
    t.contains("failed to lookup address")
        || t.contains("name or service not known")
        || t.contains("no address associated")
        || t.contains("nodename nor servname")
        || t.contains("temporary failure in name resolution")
        || t.contains("dns error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_code_is_written_as_its_diagnostic_code() {
        use TestCode::*;
        for code in [
            MissingVariable,
            DnsUnresolved,
            ConnectRefused,
            Timeout,
            AuthFailed,
            TlsFailed,
            NotFound,
            PermissionDenied,
            Empty,
            DecodeFailed,
            BadResponse,
            NotTestable,
            Unsupported,
            Forbidden,
        ] {
            // Written the same in a test's JSON and as a diagnostic's code.
            let json = serde_json::to_value(code).expect("a code serialises");
            assert_eq!(json.as_str(), Some(code.code().as_str()));
        }
    }

    #[test]
    fn missing_variables_fail_the_resolve_stage_by_name() {
        let config = serde_json::json!({"password": "{{ NOPE_NOT_SET }}"});
        let env = |_: &str| None;
        let mut p = Probe::new(
            &config,
            Duration::from_secs(1),
            &env,
            &Access::unrestricted(),
        );
        assert_eq!(p.setting("/password", "password"), None);
        let e = &p.events()[0];
        assert_eq!(
            (e.stage, e.code),
            (Stage::Resolve, Some(TestCode::MissingVariable))
        );
        assert!(e.message.contains("NOPE_NOT_SET"), "{}", e.message);
        assert_eq!(TestCode::ConnectRefused.to_string(), "CONNECT_REFUSED");
    }
}
