//! Connection tests from SQL: `TEST CONNECTION PROFILE`, `TEST TABLE` (connect, locate,
//! read sample messages, decode them with the table's format), and the tests that
//! `CREATE CONNECTION PROFILE` and `CREATE TABLE ... validate = 'connect' | 'sample'` run
//! before anything is stored. Stages become result rows and notes; the first failure
//! becomes a diagnostic naming the stage and its stable code.

use datafusion::arrow::array::RecordBatch;
use serde_json::Value;
use std::time::Duration;
use tributary_connectors::probe::{Outcome, Probe, Stage, TestCode, TestEvent};
use tributary_connectors::registry;
use tributary_types::{
    ConnectionProfile, ConnectionTable, ConnectionType, Diagnostic, Format, LastTest, Span, codes,
    parse_interval_micros,
};

use crate::result_text::text_batch;
use tributary_types::access::Access;

/// The bound on each network step unless `TIMEOUT` says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Messages a table test reads unless `LIMIT` says otherwise.
pub const DEFAULT_LIMIT: u64 = 10;

/// A `TIMEOUT` clause as a duration.
pub fn parse_timeout(timeout: &Option<(String, Span)>) -> Result<Duration, Diagnostic> {
    let Some((text, span)) = timeout else {
        return Ok(DEFAULT_TIMEOUT);
    };
    match parse_interval_micros(text) {
        Ok(us) if us > 0 => Ok(Duration::from_micros(us as u64)),
        Ok(_) => Err(Diagnostic::error("TIMEOUT must be longer than zero")
            .with_span(*span)
            .with_help("Write TIMEOUT INTERVAL '5' SECOND.")),
        Err(e) => Err(Diagnostic::error(format!("invalid TIMEOUT '{text}': {e}"))
            .with_span(*span)
            .with_help("Write TIMEOUT INTERVAL '5' SECOND or TIMEOUT '500 milliseconds'.")),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// What a test did.
#[derive(Debug)]
pub struct Tested {
    pub events: Vec<TestEvent>,
    pub messages: Vec<tributary_connectors::probe::SampledMessage>,
}

impl Tested {
    pub(crate) fn failure(&self) -> Option<&TestEvent> {
        self.events.iter().find(|e| e.outcome == Outcome::Failed)
    }

    /// The summary kept with a profile.
    pub fn summary(&self, at: i64) -> LastTest {
        let failure = self.failure();
        let skipped = self.events.iter().all(|e| e.outcome == Outcome::Skipped);
        LastTest {
            at,
            result: match (failure, skipped) {
                (Some(_), _) => "failed",
                (None, true) => "skipped",
                (None, false) => "passed",
            }
            .into(),
            code: failure.and_then(|f| f.code).map(|c| c.to_string()),
            latency_ms: self.events.last().map(|e| e.elapsed_ms).unwrap_or(0),
        }
    }
}

/// Where a session reports each test event as it happens (the REPL prints them; the REST
/// API will stream them over SSE).
pub type Progress = tributary_connectors::probe::EventSink;

/// Run `f` on a probe that reports to `progress`, if any.
async fn probing<T>(
    probe: Probe<'_>,
    progress: Option<&Progress>,
    f: impl AsyncFnOnce(&mut Probe<'_>) -> T,
) -> (T, Tested) {
    let mut probe = match progress {
        Some(p) => probe.on_event(p.clone()),
        None => probe,
    };
    let out = f(&mut probe).await;
    let tested = Tested {
        events: probe.events().to_vec(),
        messages: std::mem::take(&mut probe.messages),
    };
    (out, tested)
}

/// Test a profile's connection.
pub async fn test_profile(
    profile: &ConnectionProfile,
    timeout: Duration,
    progress: Option<&Progress>,
    access: &Access,
) -> Tested {
    let Some(entry) = registry().get(&profile.connector) else {
        return Tested {
            events: vec![],
            messages: vec![],
        };
    };
    let env: &(dyn Fn(&str) -> Option<String> + Send + Sync) = &env;
    let probe = Probe::new(&profile.config, timeout, env, access);
    let connector = &entry.connector;
    probing(probe, progress, async |p| {
        connector.test_connection(p).await
    })
    .await
    .1
}

/// The names a user can pick for a table of `profile`, found by connecting (the library
/// call behind `SHOW TOPICS IN PROFILE`; the REPL and the REST API use it too).
pub async fn complete(
    profile: &ConnectionProfile,
    timeout: Duration,
    progress: Option<&Progress>,
    access: &Access,
) -> (Option<tributary_connectors::Completions>, Tested) {
    let Some(entry) = registry().get(&profile.connector) else {
        return (
            None,
            Tested {
                events: vec![],
                messages: vec![],
            },
        );
    };
    let env: &(dyn Fn(&str) -> Option<String> + Send + Sync) = &env;
    let probe = Probe::new(&profile.config, timeout, env, access);
    let connector = &entry.connector;
    probing(probe, progress, async |p| connector.complete(p).await).await
}

/// Test a table: its connection, its topic/path/..., and (sources) up to `limit` messages.
pub async fn test_table(
    table: &ConnectionTable,
    connection: &Value,
    limit: u64,
    timeout: Duration,
    progress: Option<&Progress>,
    access: &Access,
) -> Tested {
    let Some(entry) = registry().get(&table.connector) else {
        return Tested {
            events: vec![],
            messages: vec![],
        };
    };
    let env: &(dyn Fn(&str) -> Option<String> + Send + Sync) = &env;
    let mut probe = Probe::new(connection, timeout, env, access).with_table(
        &table.config,
        table.connection_type,
        limit as usize,
    );
    probe.whole_files = whole_files(table);
    let connector = &entry.connector;
    probing(probe, progress, async |p| connector.test_table(p).await)
        .await
        .1
}

/// Whether a file source's messages are whole files (binary formats: parquet, Avro
/// container files) rather than lines.
pub(crate) fn whole_files(table: &ConnectionTable) -> bool {
    matches!(
        &table.schema.format,
        Some(Format::Parquet(_))
            | Some(Format::Avro(tributary_types::AvroFormat {
                raw_datums: false,
                confluent_schema_registry: false,
                ..
            }))
    )
}

/// The connection settings a table's connector uses: its profile's config, or the
/// settings written inline (`Null` when it has neither, or the profile is gone).
pub fn connection_of(
    store: &dyn tributary_catalog::CatalogStore,
    table: &ConnectionTable,
) -> Value {
    match (&table.profile, &table.inline_profile) {
        (Some(id), _) => store
            .profile(id)
            .ok()
            .flatten()
            .map(|p| p.config)
            .unwrap_or_default(),
        (None, Some(inline)) => inline.clone(),
        (None, None) => Value::Null,
    }
}

/// Environment variables, as probes read `{{ VAR }}` references.
pub(crate) fn env_var(name: &str) -> Option<String> {
    env(name)
}

pub use crate::sample_rows::decode;

/// The events as rows: stage, result, code, detail, elapsed.
pub fn events_batch(events: &[TestEvent]) -> RecordBatch {
    text_batch(
        &["stage", "result", "code", "detail", "elapsed_ms"],
        events
            .iter()
            .map(|e| {
                vec![
                    e.stage.to_string(),
                    e.outcome.to_string(),
                    e.code.map(|c| c.to_string()).unwrap_or_default(),
                    e.message.clone(),
                    e.elapsed_ms.to_string(),
                ]
            })
            .collect(),
    )
}

/// Whether `d` is a note [`event_notes`] made: a stage that passed or was skipped,
/// which a caller that showed the events as they happened need not show again.
pub fn is_stage_note(d: &Diagnostic) -> bool {
    d.severity == tributary_types::Severity::Note
        && Stage::ALL.iter().any(|stage| {
            d.message
                .strip_prefix(&stage.to_string())
                .is_some_and(|rest| rest.starts_with(": "))
        })
}

/// Each event as a note, for statements whose result is something else.
pub fn event_notes(events: &[TestEvent], span: Span) -> Vec<Diagnostic> {
    events
        .iter()
        .filter(|e| e.outcome != Outcome::Failed)
        .map(|e| {
            let code = e.code.map(|c| format!(" [{c}]")).unwrap_or_default();
            Diagnostic::note(format!(
                "{}: {}{code} ({} ms)",
                e.stage, e.message, e.elapsed_ms
            ))
            .with_span(span)
            .with_code(e.code.map_or(codes::INFO, TestCode::code))
        })
        .collect()
}

/// The diagnostic for a failed test of `what` (`connection profile 'p'`).
pub fn failure_diagnostic(what: &str, tested: &Tested, span: Span) -> Option<Diagnostic> {
    let failed = tested.failure()?;
    let code = failed.code.unwrap_or(TestCode::BadResponse);
    let mut d = Diagnostic::error(format!(
        "the connection test of {what} failed at stage '{}' [{code}]: {}",
        failed.stage, failed.message
    ))
    .with_span(span)
    .with_code(code.code());
    for e in tested
        .events
        .iter()
        .filter(|e| e.outcome == Outcome::Passed)
    {
        d = d.with_note(format!("{} passed: {}", e.stage, e.message));
    }
    if let Some(h) = &failed.hint {
        d = d.with_help(h.clone());
    }
    Some(d)
}

/// Whether the test reached the point of reading (a source that read messages).
pub fn read_anything(tested: &Tested, role: ConnectionType) -> bool {
    role != ConnectionType::Sink
        && tested
            .events
            .iter()
            .any(|e| e.stage == Stage::Read && e.outcome == Outcome::Passed)
}
