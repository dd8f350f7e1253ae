//! The session's statements that connect: `TEST CONNECTION PROFILE`, `TEST TABLE`,
//! `SHOW TOPICS IN PROFILE`, and the table test that `validate` runs. `check` and offline
//! sessions run none of them: they look the object up (so a misspelled name is still an
//! error) and say that nothing was tested.

use super::Session;
use super::outcome::{Handled, Mode, Reply};
use datafusion::arrow::array::RecordBatch;
use tributary_catalog::Change;
use tributary_connectors::probe::TestCode;
use tributary_dialect::parser::ast::Name;
use tributary_exec::connection_probe;
use tributary_types::{ConnectionTable, Diagnostic, Span};

impl Session {
    /// Whether a statement run in `mode` may reach other systems: never under `check`,
    /// never in an offline session.
    pub(super) fn may_connect(&self, mode: Mode) -> bool {
        mode == Mode::Run && self.connection_tests
    }

    /// Why a statement that needs the network did not use it, or `None` when it may.
    fn network_refused(&self, mode: Mode, what: &str, span: Span) -> Option<Handled> {
        if self.may_connect(mode) {
            return None;
        }
        Some(if mode == Mode::Check {
            Ok(Reply::done(
                "NOT TESTED",
                vec![
                    Diagnostic::note(format!("{what} was not run: check makes no network calls"))
                        .with_span(span),
                ],
            ))
        } else {
            Err(vec![
                Diagnostic::error(format!("{what} needs the network, which this session does not use"))
                    .with_span(span)
                    .with_note("the session is offline: it never connects to other systems")
                    .with_help("Run the statement in a session that is not offline, such as `tributary run` or the REPL.")
                    .with_code(tributary_types::codes::UNSUPPORTED),
            ])
        })
    }

    pub(super) async fn test_profile(
        &self,
        name: &Name,
        timeout: &Option<(String, Span)>,
        mode: Mode,
    ) -> Handled {
        let timeout = connection_probe::parse_timeout(timeout).map_err(|d| vec![d])?;
        let mut profile = tributary_dialect::ddl::lookup_profile(self.shared.store.as_ref(), name)?;
        if let Some(refused) = self.network_refused(mode, "the connection test", name.span) {
            return refused;
        }
        let tested = connection_probe::test_profile(
            &profile,
            timeout,
            self.progress.as_ref(),
            &self.shared.access(),
        )
        .await;
        profile.last_test = Some(tested.summary(tributary_catalog::now_micros()));
        self.apply(vec![Change::PutProfile(profile.clone())], name.span)
            .await?;
        let what = format!("connection profile '{}'", profile.name);
        if let Some(d) = connection_probe::failure_diagnostic(&what, &tested, name.span) {
            return Err(vec![d]);
        }
        Ok(Reply::rows(connection_probe::events_batch(&tested.events)))
    }

    pub(super) async fn test_table(
        &self,
        name: &Name,
        limit: Option<u64>,
        timeout: &Option<(String, Span)>,
        mode: Mode,
    ) -> Handled {
        let timeout = connection_probe::parse_timeout(timeout).map_err(|d| vec![d])?;
        let table = self.lookup_table(name)?;
        if let Some(refused) = self.network_refused(mode, "the connection test", name.span) {
            return refused;
        }
        let limit = limit.unwrap_or(connection_probe::DEFAULT_LIMIT);
        let (tested, outcome) = self
            .run_table_test(&table, limit, timeout, name.span, self.progress.as_ref())
            .await;
        // The outcome is kept with the table, as a profile's is, passed or failed.
        let mut table = table;
        table.last_test = Some(tested.summary(tributary_catalog::now_micros()));
        self.apply(vec![Change::PutTable(table)], name.span).await?;
        let (batch, notes) = outcome?;
        Ok(Reply::rows_with(batch, notes))
    }

    pub(super) async fn show_topics(&self, name: &Name, mode: Mode) -> Handled {
        let profile = tributary_dialect::ddl::lookup_profile(self.shared.store.as_ref(), name)?;
        if let Some(refused) = self.network_refused(mode, "SHOW TOPICS", name.span) {
            return refused;
        }
        let (found, tested) = connection_probe::complete(
            &profile,
            connection_probe::DEFAULT_TIMEOUT,
            self.progress.as_ref(),
            &self.shared.access(),
        )
        .await;
        let what = format!("connection profile '{}'", profile.name);
        if let Some(d) = connection_probe::failure_diagnostic(&what, &tested, name.span) {
            return Err(vec![d]);
        }
        match found {
            Some(c) => Ok(Reply::rows(tributary_exec::result_text::text_batch(
                &["name", "kind"],
                c.names
                    .into_iter()
                    .map(|n| vec![n, c.kind.to_string()])
                    .collect(),
            ))),
            None => Err(vec![Diagnostic::error(format!(
                "connector '{}' has no names to list",
                profile.connector
            ))
            .with_span(name.span)
            .with_note("Kafka and Confluent profiles list topics, NATS and RabbitMQ profiles streams, Redis profiles key prefixes; for filesystem paths, SHOW DIRECTORIES IN 'path' lists directories")
            .with_code(tributary_types::codes::UNSUPPORTED)]),
        }
    }

    /// The names a table of profile `name` can use (Kafka topics, Redis key prefixes),
    /// found by connecting: what `SHOW TOPICS IN PROFILE` lists, for the REPL's completion
    /// and the REST API. `Ok(None)` when the connector has nothing to list.
    pub async fn completions(
        &self,
        name: &str,
    ) -> Result<Option<tributary_connectors::Completions>, Vec<Diagnostic>> {
        let n = Name {
            value: name.to_string(),
            span: Span::default(),
        };
        let profile = tributary_dialect::ddl::lookup_profile(self.shared.store.as_ref(), &n)?;
        if let Some(Err(refused)) = self.network_refused(Mode::Run, "completion", n.span) {
            return Err(refused);
        }
        let (found, tested) = connection_probe::complete(
            &profile,
            connection_probe::DEFAULT_TIMEOUT,
            self.progress.as_ref(),
            &self.shared.access(),
        )
        .await;
        match connection_probe::failure_diagnostic(
            &format!("connection profile '{name}'"),
            &tested,
            n.span,
        ) {
            Some(d) => Err(vec![d]),
            None => Ok(found),
        }
    }

    /// Test a table, reporting each event to `progress`: what the test did, and the
    /// decoded sample rows (sources) or the stages (sinks) with notes, or why it failed.
    pub(super) async fn run_table_test(
        &self,
        table: &ConnectionTable,
        limit: u64,
        timeout: std::time::Duration,
        span: Span,
        progress: Option<&connection_probe::Progress>,
    ) -> (
        connection_probe::Tested,
        Result<(RecordBatch, Vec<Diagnostic>), Vec<Diagnostic>>,
    ) {
        let connection = connection_probe::connection_of(self.shared.store.as_ref(), table);
        let tested = connection_probe::test_table(
            table,
            &connection,
            limit,
            timeout,
            progress,
            &self.shared.access(),
        )
        .await;
        let outcome = judge_table_test(table, &tested, span);
        (tested, outcome)
    }
}

/// What a table test came to: the decoded sample rows (sources) or the stages (sinks)
/// with notes, or why it failed.
fn judge_table_test(
    table: &ConnectionTable,
    tested: &connection_probe::Tested,
    span: Span,
) -> Result<(RecordBatch, Vec<Diagnostic>), Vec<Diagnostic>> {
    let what = format!("table '{}'", table.name);
    if let Some(d) = connection_probe::failure_diagnostic(&what, tested, span) {
        return Err(vec![d]);
    }
    let mut notes = connection_probe::event_notes(&tested.events, span);
    if !connection_probe::read_anything(tested, table.connection_type) {
        return Ok((connection_probe::events_batch(&tested.events), notes));
    }
    let decoded = connection_probe::decode(table, &tested.messages).map_err(|e| {
        vec![
            Diagnostic::error(format!(
                "table '{}' cannot decode its messages: {e}",
                table.name
            ))
            .with_span(span)
            .with_code(tributary_types::codes::INVALID_FORMAT),
        ]
    })?;
    for (i, reason) in &decoded.failures {
        notes.push(
            Diagnostic::warning(format!("message {i} could not be decoded: {reason}"))
                .with_span(span)
                .with_code(tributary_types::codes::ADVICE),
        );
    }
    match decoded.batch {
        Some(batch) => Ok((batch, notes)),
        None => {
            let mut d = Diagnostic::error(format!(
                    "the connection test of table '{}' failed at stage 'decode' [{}]: none of the {} message(s) read decoded",
                    table.name,
                    TestCode::DecodeFailed,
                    tested.messages.len()
                ))
                .with_span(span)
                .with_help("Check the table's format and columns against the messages (DESCRIBE shows them).")
                .with_code(tributary_types::codes::TEST_DECODE_FAILED);
            for (i, reason) in decoded.failures {
                d = d.with_note(format!("message {i}: {reason}"));
            }
            Err(vec![d])
        }
    }
}
