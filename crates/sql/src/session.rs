//! [`Session`]: a DataFusion `SessionContext` wired to a Tributary catalog, running scripts
//! statement by statement.

use crate::ddl::{
    alter_profile, build_profile, build_table, catalog_diagnostic, drop_profile,
    fetch_registry_schema, register_sink_schema,
};
use crate::describe;
use crate::errors::datafusion_diagnostic;
use crate::parser::ast::CreateTable;
use crate::parser::ast::{Name, ParsedStatement, Statement};
use crate::parser::parse_script;
use crate::provider::{SessionShared, TributaryCatalogProvider, check_plan};
use crate::sinks::{InsertTarget, insert_target};
use crate::testing;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use std::sync::Arc;
use tributary_catalog::{CatalogStore, Change};
use tributary_connectors::probe::TestCode;
use tributary_connectors::registry;
use tributary_types::options::quoted_list;
use tributary_types::{ConnectionType, Diagnostic, Span, closest};

/// Split `validate` off a statement's options.
fn take_validate(
    options: &[tributary_types::SqlOption],
) -> (
    Option<(tributary_types::OptionValue, Span)>,
    Vec<tributary_types::SqlOption>,
) {
    let mut validate = None;
    let mut rest = Vec::with_capacity(options.len());
    for o in options {
        if o.key == "validate" {
            validate = Some((o.value.clone(), o.value_span));
        } else {
            rest.push(o.clone());
        }
    }
    (validate, rest)
}

/// `validate` on CREATE TABLE: `None` (do not test), or how many messages to read
/// (0 for 'connect', which stops before reading).
fn table_validation(
    validate: Option<(tributary_types::OptionValue, Span)>,
) -> Result<Option<u64>, Diagnostic> {
    let Some((value, span)) = validate else {
        return Ok(None);
    };
    match value.as_text().to_lowercase().as_str() {
        "connect" => Ok(Some(0)),
        "sample" => Ok(Some(testing::DEFAULT_LIMIT)),
        "false" | "none" => Ok(None),
        other => Err(tributary_types::options::not_allowed(
            "validate",
            other,
            &["connect", "sample", "false"],
            span,
        )),
    }
}

/// Whether a format writes the Confluent wire header (and so needs a registered schema).
fn registry_framed(format: Option<&tributary_types::Format>) -> bool {
    use tributary_types::Format;
    match format {
        Some(Format::Avro(a)) => a.confluent_schema_registry,
        Some(Format::Json(j)) => j.confluent_schema_registry,
        Some(Format::Protobuf(p)) => p.confluent_schema_registry,
        _ => false,
    }
}

/// How a script is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Execute every statement; stop at the first failure.
    Run,
    /// Validate every statement: DDL is applied to the session's store (an overlay, for
    /// `tributary check`), queries are planned but not run, and every failure is reported.
    Check,
}

/// What a successful statement produced.
#[derive(Debug, Clone)]
pub enum Output {
    /// A command that returns no rows: its tag, such as `CREATE TABLE`.
    Done(String),
    /// Rows.
    Rows {
        /// The result schema.
        schema: SchemaRef,
        /// The rows.
        batches: Vec<RecordBatch>,
    },
}

/// One statement's success.
#[derive(Debug, Clone)]
pub struct StatementResult {
    /// Where the statement is.
    pub span: Span,
    /// What it produced.
    pub output: Output,
    /// Warnings (deprecated spellings, skipped IF NOT EXISTS, ...).
    pub warnings: Vec<Diagnostic>,
}

/// One statement's failure: nothing it would have changed was changed.
#[derive(Debug, Clone)]
pub struct StatementError {
    /// Where the statement is.
    pub span: Span,
    /// Every problem found, errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for StatementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for StatementError {}

/// The DataFusion configuration Tributary sessions use: the `tributary` catalog and its
/// `public` schema are the defaults, and `information_schema` is available.
pub fn session_config() -> SessionConfig {
    SessionConfig::new()
        .with_default_catalog_and_schema(crate::CATALOG_NAME, crate::SCHEMA_NAME)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(true)
}

/// Register Tributary's catalog (as `tributary`) and window functions on a context, and
/// return the state its providers share. Use [`session_config`] for the context so that
/// unqualified table names resolve to Tributary's tables.
pub fn register(ctx: &SessionContext, store: Arc<dyn CatalogStore>) -> Arc<SessionShared> {
    let shared = SessionShared::new(store);
    ctx.register_catalog(
        crate::CATALOG_NAME,
        Arc::new(TributaryCatalogProvider::new(shared.clone())),
    );
    for f in crate::windows::window_functions() {
        ctx.register_udf(f);
    }
    shared
}

/// A SQL session over a catalog store.
pub struct Session {
    ctx: SessionContext,
    shared: Arc<SessionShared>,
    /// Whether CREATE statements test connections before storing (TEST statements
    /// always connect).
    connection_tests: bool,
    /// Where connection tests report their events as they happen.
    progress: Option<testing::Progress>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("session_id", &self.ctx.session_id())
            .field("store", &self.shared.store)
            .finish()
    }
}

type Outcome = Result<StatementResult, StatementError>;

impl Session {
    /// A session over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        Self::with_context(SessionContext::new_with_config(session_config()), store)
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
        let profile = crate::ddl::lookup_profile(self.shared.store.as_ref(), &n)?;
        let (found, tested) =
            testing::complete(&profile, testing::DEFAULT_TIMEOUT, self.progress.as_ref()).await;
        match testing::failure_diagnostic(&format!("connection profile '{name}'"), &tested, n.span)
        {
            Some(d) => Err(vec![d]),
            None => Ok(found),
        }
    }

    /// The same session, creating profiles and tables without testing their connections
    /// first (as if each said `validate = false`): for offline work and DDL test suites.
    /// `TEST CONNECTION PROFILE` and `TEST TABLE` still connect.
    pub fn offline(mut self) -> Self {
        self.connection_tests = false;
        self
    }

    /// The same session, reporting each connection test event to `progress` as it
    /// happens (the stage results still arrive with the statement's result).
    pub fn with_progress(mut self, progress: testing::Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// A session over `store` using an existing DataFusion context (create it with
    /// [`session_config`]).
    pub fn with_context(ctx: SessionContext, store: Arc<dyn CatalogStore>) -> Self {
        let shared = register(&ctx, store);
        Self {
            ctx,
            shared,
            connection_tests: true,
            progress: None,
        }
    }

    /// The DataFusion context, for running DataFusion APIs against the catalog.
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// The catalog store.
    pub fn store(&self) -> &Arc<dyn CatalogStore> {
        &self.shared.store
    }

    /// Run a script, stopping at the first failure; the results of the statements run.
    pub async fn execute(&self, sql: &str) -> Result<Vec<StatementResult>, StatementError> {
        let mut out = Vec::new();
        for r in self.run_script(sql, Mode::Run).await {
            out.push(r?);
        }
        Ok(out)
    }

    /// One statement as a DataFusion [`DataFrame`]. Queries are planned with Tributary's
    /// checks (sources are read, sinks written, lookups joined) and run when the frame is
    /// collected; Tributary's own statements run now and their rows (if any) make the frame.
    ///
    /// A sink without columns gets its schema persisted only through [`Session::execute`].
    pub async fn sql(&self, sql: &str) -> Result<DataFrame, StatementError> {
        let mut parsed = parse_script(sql);
        if parsed.len() != 1 {
            return Err(StatementError {
                span: Span::default(),
                diagnostics: vec![
                    Diagnostic::error(format!(
                        "expected exactly one statement, but found {}",
                        parsed.len()
                    ))
                    .with_help("Use Session::execute to run a script of several statements."),
                ],
            });
        }
        let stmt = match parsed.remove(0) {
            Ok(s) => s,
            Err(f) => {
                return Err(StatementError {
                    span: f.span,
                    diagnostics: vec![*f.diagnostic],
                });
            }
        };
        let span = stmt.span;
        let fail = |diagnostics: Vec<Diagnostic>| StatementError { span, diagnostics };
        if let Statement::Query = stmt.statement {
            let state = self.ctx.state();
            let planned = self.plan_query(&stmt, &state).await?;
            let plan = planned.plan;
            return self
                .ctx
                .execute_logical_plan(plan)
                .await
                .map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]));
        }
        let result = self.run_statement(&stmt, Mode::Run).await?;
        let frame = match result.output {
            Output::Rows { batches, .. } => self.ctx.read_batches(batches),
            Output::Done(_) => self.ctx.read_empty(),
        };
        frame.map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]))
    }

    /// Run (or check) a script, one outcome per statement. In [`Mode::Run`] the script
    /// stops at the first failure, which is the last outcome.
    pub async fn run_script(&self, sql: &str, mode: Mode) -> Vec<Outcome> {
        let mut out = Vec::new();
        for parsed in parse_script(sql) {
            let outcome = match parsed {
                Err(f) => Err(StatementError {
                    span: f.span,
                    diagnostics: vec![*f.diagnostic],
                }),
                Ok(stmt) => self.run_statement(&stmt, mode).await,
            };
            let failed = outcome.is_err();
            out.push(outcome);
            if failed && mode == Mode::Run {
                break;
            }
        }
        out
    }

    async fn run_statement(&self, stmt: &ParsedStatement, mode: Mode) -> Outcome {
        let span = stmt.span;
        let fail = |diagnostics: Vec<Diagnostic>| StatementError { span, diagnostics };
        let done = |tag: &str, warnings: Vec<Diagnostic>| StatementResult {
            span,
            output: Output::Done(tag.into()),
            warnings,
        };
        let rows = |batch: RecordBatch| StatementResult {
            span,
            output: Output::Rows {
                schema: batch.schema(),
                batches: vec![batch],
            },
            warnings: vec![],
        };
        let store = self.shared.store.as_ref();
        match &stmt.statement {
            Statement::CreateProfile {
                name,
                if_not_exists,
                options,
                with_span,
            } => {
                if *if_not_exists && matches!(store.profile_by_name(&name.value), Ok(Some(_))) {
                    return Ok(done(
                        "CREATE CONNECTION PROFILE",
                        vec![skipped("connection profile", name)],
                    ));
                }
                let (mut profile, mut warnings) =
                    build_profile(name, options.clone(), *with_span, None).map_err(fail)?;
                // The connection is tested before anything is stored (not by `check`, and
                // not when the statement says validate = false).
                let offline = profile.options.iter().any(|o| {
                    o.key == "validate" && o.value == tributary_types::OptionValue::Bool(false)
                });
                match (offline || !self.connection_tests, mode) {
                    (true, _) if offline => warnings.push(
                        Diagnostic::note("the connection was not tested (validate = false)")
                            .with_span(name.span),
                    ),
                    (true, _) | (_, Mode::Check) => {}
                    (false, Mode::Run) => {
                        let tested = testing::test_profile(
                            &profile,
                            testing::DEFAULT_TIMEOUT,
                            self.progress.as_ref(),
                        )
                        .await;
                        let what = format!("connection profile '{}'", profile.name);
                        if let Some(d) = testing::failure_diagnostic(&what, &tested, name.span) {
                            return Err(fail(vec![d.with_note(
                                "nothing was stored; add validate = false to create the profile without testing it",
                            )]));
                        }
                        warnings.extend(testing::event_notes(&tested.events, name.span));
                        profile.last_test = Some(tested.summary(tributary_catalog::now_micros()));
                    }
                }
                self.apply(vec![Change::PutProfile(profile)], name.span)
                    .map_err(fail)?;
                Ok(done("CREATE CONNECTION PROFILE", warnings))
            }
            Statement::AlterProfile {
                name,
                options,
                with_span,
            } => {
                let (changes, warnings) =
                    alter_profile(store, name, options.clone(), *with_span).map_err(fail)?;
                self.apply(changes, name.span).map_err(fail)?;
                Ok(done("ALTER CONNECTION PROFILE", warnings))
            }
            Statement::DropProfile {
                name,
                if_exists,
                behavior,
            } => {
                let changes = drop_profile(store, name, *if_exists, *behavior).map_err(fail)?;
                let warnings = if changes.is_empty() {
                    vec![skipped_missing("connection profile", name)]
                } else {
                    vec![]
                };
                self.apply(changes, name.span).map_err(fail)?;
                Ok(done("DROP CONNECTION PROFILE", warnings))
            }
            Statement::CreateTable(create) => {
                if create.if_not_exists
                    && matches!(store.table_by_name(&create.name.value), Ok(Some(_)))
                {
                    return Ok(done("CREATE TABLE", vec![skipped("table", &create.name)]));
                }
                // `validate` is about the statement, not the table: split it off.
                let (validate, options) = take_validate(&create.options);
                let validate = table_validation(validate).map_err(|d| fail(vec![d]))?;
                let stripped;
                let create = if validate.is_some() {
                    stripped = CreateTable {
                        options,
                        ..(**create).clone()
                    };
                    &stripped
                } else {
                    &**create
                };
                // A registry-framed source without a schema of its own reads it from
                // the schema registry first (the only network call DDL makes).
                let fetched = fetch_registry_schema(store, create).await.map_err(fail)?;
                // Borrow the session state rather than cloning it (a clone copies every
                // function registry); table definitions plan their expressions with it.
                let built = {
                    let state = self.ctx.state_ref();
                    let state = state.read();
                    build_table(store, &state, create, fetched)
                };
                let (mut table, mut warnings) = built.map_err(fail)?;
                // Registering is a change in another system: `check` does not make it.
                if mode == Mode::Run {
                    register_sink_schema(store, create, &mut table)
                        .await
                        .map_err(fail)?;
                } else if table.connection_type == ConnectionType::Sink
                    && registry_framed(table.schema.format.as_ref())
                {
                    warnings.push(
                        Diagnostic::note("the sink's schema would be registered with the schema registry when the statement runs")
                            .with_span(create.name.span),
                    );
                }
                // validate = 'connect' | 'sample': the table proves itself before it is stored.
                if let Some(limit) = validate
                    && mode == Mode::Run
                    && self.connection_tests
                {
                    let (_, notes) = self
                        .run_table_test(&table, limit, testing::DEFAULT_TIMEOUT, create.name.span)
                        .await
                        .map_err(|mut d| {
                            if let Some(first) = d.first_mut() {
                                first.notes.push("nothing was stored".into());
                            }
                            fail(d)
                        })?;
                    warnings.extend(notes);
                }
                self.apply(vec![Change::PutTable(table)], create.name.span)
                    .map_err(fail)?;
                Ok(done("CREATE TABLE", warnings))
            }
            Statement::DropTable { names, if_exists } => {
                let mut changes = Vec::new();
                let mut warnings = Vec::new();
                let mut errors = Vec::new();
                for n in names {
                    match store.table_by_name(&n.value) {
                        Ok(Some(t)) => changes.push(Change::DeleteTable(t.id)),
                        Ok(None) if *if_exists => warnings.push(skipped_missing("table", n)),
                        Ok(None) => errors.push(self.table_not_found(n)),
                        Err(e) => errors.push(catalog_diagnostic(e, n.span)),
                    }
                }
                if !errors.is_empty() {
                    return Err(fail(errors));
                }
                self.apply(changes, span).map_err(fail)?;
                Ok(done("DROP TABLE", warnings))
            }
            Statement::ShowTables => {
                let tables = store
                    .tables()
                    .map_err(|e| fail(vec![catalog_diagnostic(e, span)]))?;
                Ok(rows(describe::show_tables(store, &tables)))
            }
            Statement::ShowTopics(name) => {
                let profile = crate::ddl::lookup_profile(store, name).map_err(fail)?;
                let (found, tested) =
                    testing::complete(&profile, testing::DEFAULT_TIMEOUT, self.progress.as_ref())
                        .await;
                if let Some(d) = testing::failure_diagnostic(
                    &format!("connection profile '{}'", profile.name),
                    &tested,
                    name.span,
                ) {
                    return Err(fail(vec![d]));
                }
                match found {
                    Some(c) => Ok(rows(describe::text_batch(
                        &["name", "kind"],
                        c.names
                            .into_iter()
                            .map(|n| vec![n, c.kind.to_string()])
                            .collect(),
                    ))),
                    None => Err(fail(vec![Diagnostic::error(format!(
                        "connector '{}' has no names to list",
                        profile.connector
                    ))
                    .with_span(name.span)
                    .with_note("Kafka and Confluent profiles list topics, NATS and RabbitMQ profiles streams, Redis profiles key prefixes; for filesystem paths, SHOW DIRECTORIES IN 'path' lists directories")])),
                }
            }
            Statement::ShowDirectories { path, span } => {
                match tributary_connectors::subdirectories(path) {
                    Ok(dirs) => Ok(rows(describe::text_batch(
                        &["name", "kind"],
                        dirs.into_iter()
                            .map(|d| vec![d, "directory".to_string()])
                            .collect(),
                    ))),
                    Err(e) => {
                        let help = match e {
                            tributary_connectors::ListError::Remote(_) => {
                                "Listing an object store needs the real endpoint; write the table's path directly."
                            }
                            tributary_connectors::ListError::Io { .. } => {
                                "Give an existing local directory, such as '/data' or 'file:///data'."
                            }
                        };
                        Err(fail(vec![
                            Diagnostic::error(e.to_string())
                                .with_span(*span)
                                .with_help(help),
                        ]))
                    }
                }
            }
            Statement::ShowProfiles => {
                let profiles = store
                    .profiles()
                    .map_err(|e| fail(vec![catalog_diagnostic(e, span)]))?;
                Ok(rows(describe::show_profiles(store, &profiles)))
            }
            Statement::ShowConnectors => Ok(rows(describe::show_connectors())),
            Statement::ShowCreateTable(n) => {
                let t = self.lookup_table(n).map_err(fail)?;
                let profile = t
                    .profile
                    .as_ref()
                    .and_then(|id| store.profile(id).ok().flatten())
                    .map(|p| p.name);
                Ok(rows(describe::create_statement(
                    t.to_create_sql(profile.as_deref()),
                )))
            }
            Statement::ShowCreateProfile(n) => {
                let p = crate::ddl::lookup_profile(store, n).map_err(fail)?;
                Ok(rows(describe::create_statement(p.to_create_sql())))
            }
            Statement::DescribeTable(n) => {
                let t = self.lookup_table(n).map_err(fail)?;
                let mut result = rows(describe::describe_table(&t));
                if let Some(r) = &t.registry {
                    result.warnings.push(
                        Diagnostic::note(format!("the columns come from the schema registry: {r}"))
                            .with_span(n.span),
                    );
                }
                if t.awaits_inferred_schema() {
                    result.warnings.push(
                        Diagnostic::warning(format!("table '{}' has no columns yet", t.name))
                            .with_span(n.span)
                            .with_note("a sink created without columns takes them from its first INSERT INTO"),
                    );
                }
                Ok(result)
            }
            Statement::DescribeProfile(n) => {
                let p = crate::ddl::lookup_profile(store, n).map_err(fail)?;
                Ok(rows(describe::describe_profile(store, &p)))
            }
            Statement::DescribeConnector(n) => match registry().get(&n.value) {
                Some(e) => Ok(rows(describe::describe_connector(e))),
                None => {
                    let ids: Vec<&str> = registry().ids().collect();
                    let d = Diagnostic::error(format!("unknown connector '{}'", n.value))
                        .with_span(n.span);
                    let d = match closest(&n.value, ids.iter().copied()) {
                        Some(s) => d.with_help(format!("Did you mean '{s}'?")),
                        None => {
                            d.with_help(format!("Available connectors are {}.", quoted_list(&ids)))
                        }
                    };
                    Err(fail(vec![d]))
                }
            },
            Statement::TestProfile { name, timeout } => {
                let timeout = testing::parse_timeout(timeout).map_err(|d| fail(vec![d]))?;
                let mut profile = crate::ddl::lookup_profile(store, name).map_err(fail)?;
                let tested = testing::test_profile(&profile, timeout, self.progress.as_ref()).await;
                if mode == Mode::Run {
                    profile.last_test = Some(tested.summary(tributary_catalog::now_micros()));
                    self.apply(vec![Change::PutProfile(profile.clone())], name.span)
                        .map_err(fail)?;
                }
                let what = format!("connection profile '{}'", profile.name);
                if let Some(d) = testing::failure_diagnostic(&what, &tested, name.span) {
                    return Err(fail(vec![d]));
                }
                Ok(rows(testing::events_batch(&tested.events)))
            }
            Statement::TestTable {
                name,
                limit,
                timeout,
            } => {
                let timeout = testing::parse_timeout(timeout).map_err(|d| fail(vec![d]))?;
                let table = self.lookup_table(name).map_err(fail)?;
                self.run_table_test(
                    &table,
                    limit.unwrap_or(testing::DEFAULT_LIMIT),
                    timeout,
                    name.span,
                )
                .await
                .map(|(batch, warnings)| StatementResult {
                    span,
                    output: Output::Rows {
                        schema: batch.schema(),
                        batches: vec![batch],
                    },
                    warnings,
                })
                .map_err(fail)
            }
            Statement::Query => self.run_query(stmt, &self.ctx.state(), mode).await,
        }
    }

    /// Test a table; the decoded sample rows (sources) or the stages (sinks), with notes.
    async fn run_table_test(
        &self,
        table: &tributary_types::ConnectionTable,
        limit: u64,
        timeout: std::time::Duration,
        span: Span,
    ) -> Result<(RecordBatch, Vec<Diagnostic>), Vec<Diagnostic>> {
        let store = self.shared.store.as_ref();
        let connection = match (&table.profile, &table.inline_profile) {
            (Some(id), _) => store
                .profile(id)
                .ok()
                .flatten()
                .map(|p| p.config)
                .unwrap_or_default(),
            (None, Some(inline)) => inline.clone(),
            (None, None) => serde_json::Value::Null,
        };
        let tested =
            testing::test_table(table, &connection, limit, timeout, self.progress.as_ref()).await;
        let what = format!("table '{}'", table.name);
        if let Some(d) = testing::failure_diagnostic(&what, &tested, span) {
            return Err(vec![d]);
        }
        let mut notes = testing::event_notes(&tested.events, span);
        if !testing::read_anything(&tested, table.connection_type) {
            return Ok((testing::events_batch(&tested.events), notes));
        }
        let decoded = testing::decode(table, &tested.messages).map_err(|e| {
            vec![
                Diagnostic::error(format!(
                    "table '{}' cannot decode its messages: {e}",
                    table.name
                ))
                .with_span(span),
            ]
        })?;
        for (i, reason) in &decoded.failures {
            notes.push(
                Diagnostic::warning(format!("message {i} could not be decoded: {reason}"))
                    .with_span(span),
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
                .with_help("Check the table's format and columns against the messages (DESCRIBE shows them).");
                for (i, reason) in decoded.failures {
                    d = d.with_note(format!("message {i}: {reason}"));
                }
                Err(vec![d])
            }
        }
    }

    async fn run_query(&self, stmt: &ParsedStatement, state: &SessionState, mode: Mode) -> Outcome {
        let span = stmt.span;
        let fail = |diagnostics: Vec<Diagnostic>| StatementError { span, diagnostics };
        let Planned {
            plan,
            target,
            _inferred: _guard,
        } = self.plan_query(stmt, state).await?;
        let is_explain = matches!(plan, LogicalPlan::Explain(_) | LogicalPlan::Analyze(_));
        if mode == Mode::Check && !is_explain {
            state
                .create_physical_plan(&plan)
                .await
                .map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]))?;
            return Ok(StatementResult {
                span,
                output: Output::Done("PLANNED".into()),
                warnings: vec![],
            });
        }
        let df = self
            .ctx
            .execute_logical_plan(plan)
            .await
            .map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]))?;
        let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        let batches = df
            .collect()
            .await
            .map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]))?;
        if let Some(InsertTarget {
            table,
            inferred: Some(fields),
            ..
        }) = target.filter(|_| !is_explain)
        {
            // The first INSERT into a sink without columns fixes its schema.
            let mut updated = table.clone();
            updated.schema.fields = fields;
            updated.updated_at = tributary_catalog::now_micros();
            self.apply(vec![Change::PutTable(updated)], span)
                .map_err(fail)?;
        }
        Ok(StatementResult {
            span,
            output: Output::Rows { schema, batches },
            warnings: vec![],
        })
    }

    /// Plan a DataFusion statement with Tributary's rules: a sink awaiting its schema gets
    /// the query's for this statement, and the plan is checked (sources read, sinks
    /// written, lookups joined).
    async fn plan_query(
        &self,
        stmt: &ParsedStatement,
        state: &SessionState,
    ) -> Result<Planned, StatementError> {
        let span = stmt.span;
        let fail = |diagnostics: Vec<Diagnostic>| StatementError { span, diagnostics };
        let target = insert_target(&stmt.text, self.shared.store.as_ref(), state, span)
            .await
            .map_err(fail)?;
        let inferred = target.as_ref().and_then(|t| {
            t.inferred
                .as_ref()
                .map(|f| self.set_inferred(&t.table.name, f.clone()))
        });
        let plan = state
            .create_logical_plan(&stmt.text)
            .await
            .map_err(|e| fail(vec![self.query_diagnostic(&e, span)]))?;
        let problems = check_plan(&plan, span);
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(Planned {
            plan,
            target,
            _inferred: inferred,
        })
    }

    /// A planning error; DataFusion's "table not found" becomes Tributary's wording with a
    /// suggestion.
    fn query_diagnostic(&self, e: &datafusion::error::DataFusionError, span: Span) -> Diagnostic {
        let d = datafusion_diagnostic(e, span);
        let qualified = format!("{}.{}.", crate::CATALOG_NAME, crate::SCHEMA_NAME);
        if let Some(rest) = d.message.strip_prefix("table '")
            && let Some(name) = rest.strip_suffix("' not found")
        {
            let name = name.strip_prefix(&qualified).unwrap_or(name);
            let mut nf = self.table_not_found(&Name {
                value: name.to_string(),
                span: d.span.unwrap_or(span),
            });
            nf.span = d.span.or(Some(span));
            return nf;
        }
        d
    }

    fn set_inferred(
        &self,
        table: &str,
        fields: Vec<tributary_types::SourceField>,
    ) -> InferredGuard {
        if let Ok(mut m) = self.shared.inferred.lock() {
            m.insert(table.to_lowercase(), fields);
        }
        InferredGuard {
            shared: self.shared.clone(),
            table: table.to_lowercase(),
        }
    }

    fn apply(&self, changes: Vec<Change>, span: Span) -> Result<(), Vec<Diagnostic>> {
        if changes.is_empty() {
            return Ok(());
        }
        self.shared
            .store
            .apply(changes)
            .map_err(|e| vec![catalog_diagnostic(e, span)])
    }

    fn lookup_table(&self, n: &Name) -> Result<tributary_types::ConnectionTable, Vec<Diagnostic>> {
        match self.shared.store.table_by_name(&n.value) {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(vec![self.table_not_found(n)]),
            Err(e) => Err(vec![catalog_diagnostic(e, n.span)]),
        }
    }

    fn table_not_found(&self, n: &Name) -> Diagnostic {
        let names = self.shared.store.table_names().unwrap_or_default();
        let d = Diagnostic::error(format!("table '{}' does not exist", n.value)).with_span(n.span);
        match closest(&n.value, names.iter().map(String::as_str)) {
            Some(s) => d.with_help(format!("Did you mean '{s}'?")),
            None => d.with_help("Run SHOW TABLES to list the tables."),
        }
    }
}

/// A checked plan, with what it needs until it has run.
struct Planned {
    plan: LogicalPlan,
    target: Option<InsertTarget>,
    // Keeps the inferred sink schema visible until the statement ends.
    _inferred: Option<InferredGuard>,
}

/// Removes a statement's inferred sink schema when the statement ends, however it ends.
struct InferredGuard {
    shared: Arc<SessionShared>,
    table: String,
}

impl Drop for InferredGuard {
    fn drop(&mut self) {
        if let Ok(mut m) = self.shared.inferred.lock() {
            m.remove(&self.table);
        }
    }
}

fn skipped(kind: &str, name: &Name) -> Diagnostic {
    Diagnostic::warning(format!("{kind} '{}' already exists, skipping", name.value))
        .with_span(name.span)
}

fn skipped_missing(kind: &str, name: &Name) -> Diagnostic {
    Diagnostic::warning(format!("{kind} '{}' does not exist, skipping", name.value))
        .with_span(name.span)
}
