//! The session's DDL statements: connection profiles and connection tables are built by
//! `tributary_dialect::ddl`, tested where the statement asks, then applied in one catalog batch.

use super::Session;
use super::outcome::{Handled, Mode, Reply};
use super::validation::{registry_framed, table_validation, take_validate};
use tributary_catalog::Change;
use tributary_dialect::ddl::{
    build_profile, build_table, catalog_diagnostic, drop_profile, fetch_registry_schema,
    register_sink_schema,
};
use tributary_dialect::parser::ast::{CreateTable, DropBehavior, Name};
use tributary_exec::connection_probe;
use tributary_types::{ConnectionTable, ConnectionType, Diagnostic, OptionValue, Span, SqlOption};

impl Session {
    pub(super) async fn create_profile(
        &self,
        name: &Name,
        if_not_exists: bool,
        options: &[SqlOption],
        with_span: Span,
        mode: Mode,
    ) -> Handled {
        let store = self.shared.store.as_ref();
        if if_not_exists && matches!(store.profile_by_name(&name.value), Ok(Some(_))) {
            return Ok(Reply::done(
                "CREATE CONNECTION PROFILE",
                vec![skipped("connection profile", name)],
            ));
        }
        let (mut profile, mut warnings) = build_profile(name, options.to_vec(), with_span, None)?;
        warnings.extend(
            self.test_profile_before_storing(&mut profile, options, mode, name.span)
                .await?,
        );
        self.apply(vec![Change::PutProfile(profile)], name.span)
            .await?;
        Ok(Reply::done("CREATE CONNECTION PROFILE", warnings))
    }

    /// Test a profile a CREATE or ALTER is about to store, unless its statement says
    /// `validate = false` (checked and offline sessions never connect): the notes to
    /// report, with the result kept as the profile's `last_test`; or why nothing may be
    /// stored.
    pub async fn test_profile_before_storing(
        &self,
        profile: &mut tributary_types::ConnectionProfile,
        statement_options: &[SqlOption],
        mode: Mode,
        span: Span,
    ) -> Result<Vec<Diagnostic>, Vec<Diagnostic>> {
        let declined = statement_options
            .iter()
            .any(|o| o.key == "validate" && o.value == OptionValue::Bool(false));
        if declined {
            return Ok(vec![
                Diagnostic::note("the connection was not tested (validate = false)")
                    .with_span(span),
            ]);
        }
        if !self.may_connect(mode) {
            return Ok(vec![]);
        }
        let tested = connection_probe::test_profile(
            profile,
            connection_probe::DEFAULT_TIMEOUT,
            self.progress.as_ref(),
            &self.shared.access(),
        )
        .await;
        let what = format!("connection profile '{}'", profile.name);
        if let Some(d) = connection_probe::failure_diagnostic(&what, &tested, span) {
            return Err(vec![d.with_note(
                "nothing was stored; add validate = false to store the profile without testing it",
            )]);
        }
        profile.last_test = Some(tested.summary(tributary_catalog::now_micros()));
        Ok(connection_probe::event_notes(&tested.events, span))
    }

    pub(super) async fn alter_profile(
        &self,
        name: &Name,
        options: &[SqlOption],
        with_span: Span,
        mode: Mode,
    ) -> Handled {
        self.alter_profile_removing(name, options, with_span, &[], mode)
            .await
    }

    pub(super) async fn drop_profile(
        &self,
        name: &Name,
        if_exists: bool,
        behavior: DropBehavior,
    ) -> Handled {
        let changes = drop_profile(self.shared.store.as_ref(), name, if_exists, behavior)?;
        let warnings = if changes.is_empty() {
            vec![skipped_missing("connection profile", name)]
        } else {
            vec![]
        };
        self.apply(changes, name.span).await?;
        Ok(Reply::done("DROP CONNECTION PROFILE", warnings))
    }

    pub(super) async fn create_table(&self, create: &CreateTable, mode: Mode) -> Handled {
        self.create_table_record(create, mode)
            .await
            .map(|(reply, _)| reply)
    }

    /// `CREATE TABLE`, and the record it stored (none when IF NOT EXISTS skipped it).
    pub(super) async fn create_table_record(
        &self,
        create: &CreateTable,
        mode: Mode,
    ) -> Result<(Reply, Option<ConnectionTable>), Vec<Diagnostic>> {
        let store = self.shared.store.as_ref();
        if create.if_not_exists && matches!(store.table_by_name(&create.name.value), Ok(Some(_))) {
            return Ok((
                Reply::done("CREATE TABLE", vec![skipped("table", &create.name)]),
                None,
            ));
        }
        let prepared = self.prepare_table(create, mode, true).await?;
        let (reply, table) = self.store_table(prepared, create.name.span, mode).await?;
        Ok((reply, Some(table)))
    }

    /// Build a table from its statement: `validate` split off, its registry schema
    /// fetched (when the session may connect), validated, and (when `register` and the
    /// session may connect) a registry-framed sink's schema registered.
    pub(super) async fn prepare_table(
        &self,
        create: &CreateTable,
        mode: Mode,
        register: bool,
    ) -> Result<PreparedTable, Vec<Diagnostic>> {
        let store = self.shared.store.as_ref();
        // `validate` is about the statement, not the table: split it off.
        let (validate, options) = take_validate(&create.options);
        let given = validate.is_some();
        let validate = table_validation(validate).map_err(|d| vec![d])?;
        let stripped;
        let create = if given {
            stripped = CreateTable {
                options,
                ..create.clone()
            };
            &stripped
        } else {
            create
        };
        // A registry-framed source without a schema of its own reads it from the schema
        // registry first; `check` and offline sessions never do (the table is checked as
        // far as it can be without the schema, and a note says so).
        let mut notes = Vec::new();
        let fetched = if self.may_connect(mode) {
            fetch_registry_schema(store, create, &self.shared.access()).await?
        } else {
            notes.extend(tributary_dialect::ddl::registry_not_fetched(store, create)?);
            None
        };
        let (mut table, mut warnings) =
            self.build_table_deep(create, fetched, !notes.is_empty())?;
        warnings.splice(0..0, notes);
        // Registering is a change in another system: `check` does not make it.
        if register && self.may_connect(mode) {
            register_sink_schema(store, create, &mut table, &self.shared.access()).await?;
        } else if table.connection_type == ConnectionType::Sink
            && registry_framed(table.schema.format.as_ref())
        {
            let said = if mode == Mode::Check {
                "the sink's schema would be registered with the schema registry when the statement runs"
            } else if register {
                "the sink's schema was not registered with the schema registry: this session makes no network calls"
            } else {
                "the sink's schema was not registered with the schema registry: the table was not stored"
            };
            warnings.push(Diagnostic::note(said).with_span(create.name.span));
        }
        if validate.is_some() && !self.may_connect(mode) {
            warnings.push(
                Diagnostic::note("the table's connection was not tested: check and offline sessions make no network calls")
                    .with_span(create.name.span),
            );
        }
        Ok(PreparedTable {
            table,
            warnings,
            validate,
        })
    }

    /// Test a prepared table as its `validate` asks, then store it; the record stored.
    pub(super) async fn store_table(
        &self,
        prepared: PreparedTable,
        span: Span,
        mode: Mode,
    ) -> Result<(Reply, ConnectionTable), Vec<Diagnostic>> {
        let PreparedTable {
            mut table,
            mut warnings,
            validate,
        } = prepared;
        // validate = 'connect' | 'sample': the table proves itself before it is stored.
        if let Some(limit) = validate
            && self.may_connect(mode)
        {
            let (tested, outcome) = self
                .run_table_test(
                    &table,
                    limit,
                    connection_probe::DEFAULT_TIMEOUT,
                    span,
                    self.progress.as_ref(),
                )
                .await;
            table.last_test = Some(tested.summary(tributary_catalog::now_micros()));
            let (_, notes) = outcome.map_err(|mut d| {
                if let Some(first) = d.first_mut() {
                    first.notes.push("nothing was stored".into());
                }
                d
            })?;
            warnings.extend(notes);
        }
        self.apply(vec![Change::PutTable(table.clone())], span)
            .await?;
        Ok((Reply::done("CREATE TABLE", warnings), table))
    }

    /// Validate a table definition. Its expressions are planned by DataFusion, whose
    /// recursion runs on a stack deep enough for the statement.
    fn build_table_deep(
        &self,
        create: &CreateTable,
        fetched: Option<tributary_dialect::ddl::FetchedSchema>,
        schema_pending: bool,
    ) -> Result<(ConnectionTable, Vec<Diagnostic>), Vec<Diagnostic>> {
        // Borrow the session state rather than cloning it (a clone copies every function
        // registry); table definitions plan their expressions with it.
        let state = self.ctx.state_ref();
        let state = state.read();
        let access = self.shared.access();
        tributary_dialect::deep_stack::for_depth(create.depth, || {
            build_table(
                self.shared.store.as_ref(),
                &state,
                create,
                fetched,
                schema_pending,
                &access,
            )
        })
    }

    pub(super) async fn drop_table(
        &self,
        names: &[Name],
        if_exists: bool,
        behavior: DropBehavior,
        span: Span,
    ) -> Handled {
        let store = self.shared.store.as_ref();
        let mut changes = Vec::new();
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        let mut known_names = None;
        for n in names {
            match store.table_by_name(&n.value) {
                Ok(Some(t)) => {
                    let dependency = tributary_types::Dependency::relation(&t.name);
                    changes.push(Change::DeleteTable(t.id));
                    if behavior == DropBehavior::Cascade {
                        super::views::cascade(store, &dependency, &mut changes)
                            .map_err(|e| vec![catalog_diagnostic(e, n.span)])?;
                    }
                }
                Ok(None) if if_exists => warnings.push(skipped_missing("table", n)),
                Ok(None) => {
                    // Every name is read once, however many are missing.
                    let known =
                        known_names.get_or_insert_with(|| store.table_names().unwrap_or_default());
                    errors.push(super::table_not_found_among(n, known));
                }
                Err(e) => errors.push(catalog_diagnostic(e, n.span)),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        self.apply(super::views::dedupe(changes), span)
            .await
            .map_err(|d| super::views::with_cascade_help(d, "DROP TABLE"))?;
        Ok(Reply::done("DROP TABLE", warnings))
    }
}

/// A table built from its statement, not yet tested or stored.
pub(super) struct PreparedTable {
    pub table: ConnectionTable,
    pub warnings: Vec<Diagnostic>,
    /// How many messages `validate` asks to read (0: connect only), if any.
    pub validate: Option<u64>,
}

pub(super) fn skipped(kind: &str, name: &Name) -> Diagnostic {
    Diagnostic::warning(format!("{kind} '{}' already exists, skipping", name.value))
        .with_span(name.span)
}

pub(super) fn skipped_missing(kind: &str, name: &Name) -> Diagnostic {
    Diagnostic::warning(format!("{kind} '{}' does not exist, skipping", name.value))
        .with_span(name.span)
}
