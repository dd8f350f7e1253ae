//! Definitions that are not statements of a script: a profile or table built and tested
//! but never stored (the REST API's tests and schema inference), a stored table replaced
//! in place (PATCH), a profile changed by id with options removed, and the check that a
//! changed profile keeps the tables using it valid (ALTER CONNECTION PROFILE and PATCH).
//! They run the same builders and probes as the statements, and their diagnostics pass
//! the same boundary.

use super::outcome::{Mode, Outcome, Reply, StatementError, StatementResult};
use super::{Session, boundary};
use datafusion::arrow::array::RecordBatch;
use std::sync::Arc;
use std::time::Duration;
use tributary_catalog::{CatalogStore, Change, OverlayStore};
use tributary_connectors::probe::TestEvent;
use tributary_dialect::ddl::{alter_profile, build_profile, build_table, catalog_diagnostic};
use tributary_dialect::parser::ast::{Name, ParsedStatement, Statement};
use tributary_dialect::parser::parse_script;
use tributary_exec::connection_probe::{self, Progress};
use tributary_types::{ConnectionProfile, ConnectionTable, Diagnostic, ProfileId, Span, TableId};

/// What testing a definition found.
#[derive(Debug)]
pub struct DefinitionTest {
    /// Every stage's event, in order (each was also sent to the progress sink).
    pub events: Vec<TestEvent>,
    /// The decoded sample rows of a source that read messages.
    pub rows: Option<RecordBatch>,
    /// The raw payloads read (for schema inference).
    pub payloads: Vec<Vec<u8>>,
    /// Warnings and notes: the definition's, and messages that did not decode.
    pub notes: Vec<Diagnostic>,
    /// Why the test failed, when it did.
    pub failure: Option<Vec<Diagnostic>>,
}

impl Session {
    /// The one statement of `sql`, or an error saying what was expected.
    fn only_statement(sql: &str, expected: &str) -> Result<ParsedStatement, StatementError> {
        let mut parsed = parse_script(sql).into_iter();
        match (parsed.next(), parsed.next()) {
            (Some(Ok(stmt)), None) => Ok(stmt),
            (Some(Err(f)), None) => {
                let mut diagnostics = vec![*f.diagnostic];
                boundary::seal_diagnostics(&mut diagnostics, &f.text);
                Err(StatementError {
                    span: f.span,
                    diagnostics,
                })
            }
            _ => Err(StatementError {
                span: Span::default(),
                diagnostics: vec![
                    Diagnostic::error(format!("expected exactly one {expected}"))
                        .with_code(tributary_types::codes::INVALID),
                ],
            }),
        }
    }

    /// Build the profile or table `sql` creates and test its connection, reporting each
    /// event to `progress`; nothing is stored and no schema is registered. A table test
    /// reads up to `limit` messages.
    pub async fn test_definition(
        &self,
        sql: &str,
        limit: u64,
        timeout: Duration,
        progress: Option<Progress>,
    ) -> Result<DefinitionTest, StatementError> {
        let stmt = Self::only_statement(sql, "CREATE TABLE or CREATE CONNECTION PROFILE")?;
        let span = stmt.span;
        let fail = |mut diagnostics: Vec<Diagnostic>| {
            boundary::seal_diagnostics(&mut diagnostics, &stmt.text);
            StatementError { span, diagnostics }
        };
        if !self.may_connect(Mode::Run) {
            return Err(fail(vec![
                Diagnostic::error(
                    "the connection test needs the network, which this session does not use",
                )
                .with_span(span)
                .with_code(tributary_types::codes::UNSUPPORTED),
            ]));
        }
        let mut result = match &stmt.statement {
            Statement::CreateProfile {
                name,
                options,
                with_span,
                ..
            } => {
                let (profile, notes) =
                    build_profile(name, options.clone(), *with_span, None).map_err(fail)?;
                let tested = connection_probe::test_profile(
                    &profile,
                    timeout,
                    progress.as_ref(),
                    &self.shared.access(),
                )
                .await;
                let what = format!("connection profile '{}'", profile.name);
                DefinitionTest {
                    failure: connection_probe::failure_diagnostic(&what, &tested, name.span)
                        .map(|d| vec![d]),
                    events: tested.events,
                    rows: None,
                    payloads: vec![],
                    notes,
                }
            }
            Statement::CreateTable(create) => {
                let prepared = self
                    .prepare_table(create, Mode::Run, false)
                    .await
                    .map_err(fail)?;
                let (tested, outcome) = self
                    .run_table_test(
                        &prepared.table,
                        limit,
                        timeout,
                        create.name.span,
                        progress.as_ref(),
                    )
                    .await;
                let mut notes = prepared.warnings;
                let (rows, failure) = match outcome {
                    Ok((batch, more)) => {
                        notes.extend(more);
                        let read = connection_probe::read_anything(
                            &tested,
                            prepared.table.connection_type,
                        );
                        (read.then_some(batch), None)
                    }
                    Err(d) => (None, Some(d)),
                };
                DefinitionTest {
                    events: tested.events,
                    rows,
                    payloads: tested.messages.into_iter().map(|m| m.payload).collect(),
                    notes,
                    failure,
                }
            }
            _ => {
                return Err(fail(vec![
                    Diagnostic::error("expected CREATE TABLE or CREATE CONNECTION PROFILE")
                        .with_span(span)
                        .with_code(tributary_types::codes::INVALID),
                ]));
            }
        };
        boundary::seal_diagnostics(&mut result.notes, &stmt.text);
        if let Some(f) = &mut result.failure {
            boundary::seal_diagnostics(f, &stmt.text);
        }
        Ok(result)
    }

    /// Run `sql`, one CREATE TABLE, and give the record it stored beside its result
    /// (none when IF NOT EXISTS skipped it). A caller answering with the new table (REST)
    /// needs no second read, which a concurrent drop or rename could miss.
    pub async fn create_table_stored(
        &self,
        sql: &str,
    ) -> Result<(StatementResult, Option<ConnectionTable>), StatementError> {
        let stmt = Self::only_statement(sql, "CREATE TABLE")?;
        let span = stmt.span;
        let handled = match &stmt.statement {
            Statement::CreateTable(create) => self.create_table_record(create, Mode::Run).await,
            _ => Err(vec![
                Diagnostic::error("expected CREATE TABLE")
                    .with_span(span)
                    .with_code(tributary_types::codes::INVALID),
            ]),
        };
        boundary::sealed_with(handled, span, &stmt.text)
    }

    /// Replace the table `id` with the one `sql` (a CREATE TABLE) defines, keeping its id
    /// and creation time: the whole definition is validated (and tested, as its
    /// `validate` asks) like a new table, and stored only if it passes. The record
    /// stored comes beside the result.
    pub async fn replace_table(
        &self,
        id: &TableId,
        sql: &str,
    ) -> Result<(StatementResult, ConnectionTable), StatementError> {
        let stmt = Self::only_statement(sql, "CREATE TABLE")?;
        let span = stmt.span;
        let handled = match &stmt.statement {
            Statement::CreateTable(create) => match self.shared.store.table(id) {
                Ok(Some(existing)) => match self.prepare_table(create, Mode::Run, true).await {
                    Ok(mut prepared) => {
                        prepared.table.id = existing.id;
                        prepared.table.created_at = existing.created_at;
                        self.store_table(prepared, create.name.span, Mode::Run)
                            .await
                            .map(|(r, table)| (Reply::done("REPLACE TABLE", r.warnings), table))
                    }
                    Err(d) => Err(d),
                },
                Ok(None) => Err(vec![
                    Diagnostic::error(format!("table '{id}' does not exist"))
                        .with_span(span)
                        .with_code(tributary_types::codes::NOT_FOUND),
                ]),
                Err(e) => Err(vec![catalog_diagnostic(e, span)]),
            },
            _ => Err(vec![
                Diagnostic::error("expected CREATE TABLE")
                    .with_span(span)
                    .with_code(tributary_types::codes::INVALID),
            ]),
        };
        boundary::sealed_with(handled, span, &stmt.text)
    }

    /// Change the profile `id` as `sql` (an `ALTER CONNECTION PROFILE ... SET`) says,
    /// also removing the options named in `removed`; the whole profile is validated
    /// again, and refused if a table using it would no longer be valid.
    pub async fn alter_profile_by_id(
        &self,
        id: &ProfileId,
        sql: &str,
        removed: &[String],
    ) -> Outcome {
        let stmt = Self::only_statement(sql, "ALTER CONNECTION PROFILE")?;
        let span = stmt.span;
        let handled = match (&stmt.statement, self.shared.store.profile(id)) {
            (
                Statement::AlterProfile {
                    options, with_span, ..
                },
                Ok(Some(existing)),
            ) => {
                let name = Name {
                    value: existing.name.clone(),
                    span,
                };
                self.alter_profile_removing(&name, options, *with_span, removed, Mode::Run)
                    .await
            }
            (_, Ok(None)) => Err(vec![
                Diagnostic::error(format!("connection profile '{id}' does not exist"))
                    .with_span(span)
                    .with_code(tributary_types::codes::NOT_FOUND),
            ]),
            (_, Err(e)) => Err(vec![catalog_diagnostic(e, span)]),
            _ => Err(vec![
                Diagnostic::error("expected ALTER CONNECTION PROFILE")
                    .with_span(span)
                    .with_code(tributary_types::codes::INVALID),
            ]),
        };
        boundary::sealed(handled, span, &stmt.text)
    }

    /// `ALTER CONNECTION PROFILE`, with `removed` options dropped, checked against the
    /// tables that use the profile.
    pub(super) async fn alter_profile_removing(
        &self,
        name: &Name,
        options: &[tributary_types::SqlOption],
        with_span: Span,
        removed: &[String],
        mode: Mode,
    ) -> super::outcome::Handled {
        let store = self.shared.store.as_ref();
        let (mut changes, mut warnings) =
            alter_profile(store, name, options.to_vec(), with_span, removed)?;
        for change in &mut changes {
            if let Change::PutProfile(p) = change {
                self.check_dependents(p, name.span, &|_| false)?;
                // The changed connection proves itself as a new one would.
                warnings.extend(
                    self.test_profile_before_storing(p, options, mode, name.span)
                        .await?,
                );
            }
        }
        self.apply(changes, name.span).await?;
        Ok(Reply::done("ALTER CONNECTION PROFILE", warnings))
    }

    /// Every table using `profile` must still build with it: a change that would break
    /// one is refused, naming the table and why. Tables `rebuilt` says are replaced in
    /// the same batch (`apply` checks those against the profile itself) are passed over.
    pub fn check_dependents(
        &self,
        profile: &ConnectionProfile,
        span: Span,
        rebuilt: &dyn Fn(&ConnectionTable) -> bool,
    ) -> Result<(), Vec<Diagnostic>> {
        let store = &self.shared.store;
        let dependents = store
            .dependents(&profile.id)
            .map_err(|e| vec![catalog_diagnostic(e, span)])?;
        if dependents.is_empty() {
            return Ok(());
        }
        let overlay = OverlayStore::over(Arc::clone(store));
        overlay
            .apply(vec![Change::PutProfile(profile.clone())])
            .map_err(|e| vec![catalog_diagnostic(e, span)])?;
        let mut errors = Vec::new();
        for id in dependents {
            let Some(table) = store
                .table(&id)
                .map_err(|e| vec![catalog_diagnostic(e, span)])?
            else {
                continue;
            };
            if rebuilt(&table) {
                continue;
            }
            let text = tributary_dialect::sql_writer::table_parts_of(&table, Some(&profile.name))
                .statement(&table.name)
                .sql;
            let Some(Ok(ParsedStatement {
                statement: Statement::CreateTable(create),
                ..
            })) = parse_script(&text).into_iter().next()
            else {
                continue;
            };
            let state = self.ctx.state_ref();
            let state = state.read();
            // The table must still build, and still find the registry it reads its schema
            // from or registers its writer schema with (checked without connecting).
            let access = self.shared.access();
            let built = tributary_dialect::deep_stack::for_depth(create.depth, || {
                build_table(
                    &overlay,
                    &state,
                    &create,
                    None,
                    table.registry.is_some(),
                    &access,
                )
            })
            .and_then(|(rebuilt, _)| {
                tributary_dialect::ddl::registry_not_fetched(&overlay, &create)?;
                tributary_dialect::ddl::plan_sink_registration(&overlay, &create, &rebuilt)
            });
            if let Err(diags) = built
                && let Some(first) = diags.into_iter().find(Diagnostic::is_error)
            {
                let mut d = Diagnostic::error(format!(
                    "the change would break table '{}': {}",
                    table.name, first.message
                ))
                .with_span(span)
                .with_help(format!(
                    "Keep the setting the table needs, or change or drop table '{}' first.",
                    table.name
                ))
                .with_code(tributary_types::codes::IN_USE);
                d.notes = first.notes;
                errors.push(d);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}
