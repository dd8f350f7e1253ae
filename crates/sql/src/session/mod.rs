//! [`Session`]: a DataFusion `SessionContext` wired to a Tributary catalog, running scripts
//! statement by statement.
//!
//! The statement handlers live beside this file, one file per family: `ddl` (profiles
//! and tables), `show` (SHOW and DESCRIBE), `probes` (the statements that connect) and
//! `query` (everything DataFusion plans).

mod boundary;
mod ddl;
mod definitions;
mod durability;
mod functions;
mod outcome;
mod probes;
mod query;
mod script_tables;
mod set;
mod show;
mod streaming;
mod validation;
mod views;

pub use definitions::DefinitionTest;
pub use outcome::{Mode, Outcome, Output, ScriptSummary, StatementError, StatementResult};
use streaming::Delivery;
pub use streaming::{IDLE_TICK, RowSink};

use datafusion::prelude::{DataFrame, SessionConfig, SessionContext};
use outcome::Handled;
use std::ops::ControlFlow;
use std::sync::Arc;
use tributary_catalog::{CatalogStore, Change};
use tributary_dialect::datafusion_diagnostics::datafusion_diagnostic;
use tributary_dialect::ddl::catalog_diagnostic;
use tributary_dialect::parser::ast::{Name, ParsedStatement, Statement};
use tributary_dialect::parser::parse_script;
use tributary_exec::connection_probe;
use tributary_exec::provider::{SessionShared, TributaryCatalogProvider};
use tributary_types::{Diagnostic, Span, closest};

/// The DataFusion configuration Tributary sessions use: the `tributary` catalog and its
/// `public` schema are the defaults, and `information_schema` is available.
pub fn session_config() -> SessionConfig {
    SessionConfig::new()
        .with_default_catalog_and_schema(tributary_exec::CATALOG_NAME, tributary_exec::SCHEMA_NAME)
        .with_create_default_catalog_and_schema(false)
        .with_information_schema(true)
        .with_option_extension(tributary_exec::preview_bounds::PreviewOptions::default())
        .with_option_extension(tributary_exec::pipeline_options::PipelineOptions::default())
        // Spans on plan errors ("no field named x" at the column), for diagnostics that
        // point at the expression rather than the statement.
        .set_bool("datafusion.sql_parser.collect_spans", true)
}

/// Register Tributary's catalog (as `tributary`) and window functions on a context, and
/// return the state its providers share. Use [`session_config`] for the context so that
/// unqualified table names resolve to Tributary's tables.
pub fn register(ctx: &SessionContext, store: Arc<dyn CatalogStore>) -> Arc<SessionShared> {
    let shared = SessionShared::new(store);
    shared.set_state(ctx.state_weak_ref());
    ctx.register_catalog(
        tributary_exec::CATALOG_NAME,
        Arc::new(TributaryCatalogProvider::new(shared.clone())),
    );
    for f in tributary_exec::windows::window_functions()
        .into_iter()
        .chain(tributary_exec::json_path::json_path_functions())
    {
        ctx.register_udf(f);
    }
    // Arroyo's JSON functions and operators (`json_get`, `->`, `->>`, `?`). Registering
    // them into a fresh state cannot fail; if it ever did, queries would say the
    // function is unknown, which is the truth.
    let _ = datafusion_functions_json::register_all(&mut *ctx.state_ref().write());
    ctx.add_analyzer_rule(Arc::new(tributary_exec::windows::EventTimeWindows));
    ctx.add_analyzer_rule(Arc::new(tributary_exec::windows::ExpandWindows));
    shared
}

/// A SQL session over a catalog store.
pub struct Session {
    ctx: SessionContext,
    shared: Arc<SessionShared>,
    /// Whether statements may reach other systems (connection tests, the schema
    /// registry); an offline session never does.
    connection_tests: bool,
    /// Whether queries may write files through DataFusion (`COPY ... TO`).
    file_writes: bool,
    /// Where connection tests report their events as they happen.
    progress: Option<connection_probe::Progress>,
    /// Memory tables and named results last for the session (the shell), not for each
    /// script.
    session_script_tables: bool,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("session_id", &self.ctx.session_id())
            .field("store", &self.shared.store)
            .finish()
    }
}

impl Session {
    /// A session over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Self {
        Self::with_context(SessionContext::new_with_config(session_config()), store)
    }

    /// A session over `store` using a DataFusion context made from `ctx`'s state (create
    /// it with [`session_config`]), with Tributary's planning added: joins with lookup
    /// tables become lookup joins. [`Session::context`] is that new context.
    pub fn with_context(ctx: SessionContext, store: Arc<dyn CatalogStore>) -> Self {
        let state = datafusion::execution::SessionStateBuilder::new_from_existing(ctx.state())
            .with_query_planner(Arc::new(tributary_exec::provider::TributaryQueryPlanner))
            .with_physical_optimizer_rule(Arc::new(tributary_exec::provider::PromptRows))
            .build();
        let ctx = SessionContext::new_with_state(state);
        ctx.add_optimizer_rule(Arc::new(tributary_exec::provider::LookupJoins));
        let shared = register(&ctx, store);
        Self {
            ctx,
            shared,
            connection_tests: true,
            file_writes: false,
            progress: None,
            session_script_tables: false,
        }
    }

    /// Keep memory tables and `CREATE TABLE .. AS` results from one
    /// script to the next (the shell runs each input as a script). Without it each
    /// script has its own, which end with it.
    pub fn set_keep_script_tables(&mut self, keep: bool) {
        self.session_script_tables = keep;
    }

    /// The same session, never reaching another system: profiles and tables are created
    /// without testing their connections (as if each said `validate = false`), registry
    /// schemas are not fetched or registered, and statements that exist to connect
    /// (`TEST`, `SHOW TOPICS`) are refused. For offline work and DDL test suites.
    pub fn offline(mut self) -> Self {
        self.connection_tests = false;
        self.shared.set_offline();
        self
    }

    /// The same session, letting `COPY ... TO 'path'` write files. Without it, COPY is
    /// refused: a script must not write arbitrary files unless its runner allows it.
    pub fn allow_file_writes(mut self) -> Self {
        self.file_writes = true;
        self
    }

    /// The same session, reaching only the files, `{{ VAR }}` variables and network
    /// addresses `access` allows: a server shared by a team confines its session, so a
    /// token holder cannot read the host's files or secrets through a statement.
    pub fn confine(self, access: tributary_types::access::Access) -> Self {
        self.shared.set_access(access);
        self
    }

    /// Reach only what `access` allows from now on (a shared session: a server's).
    pub fn set_access(&self, access: tributary_types::access::Access) {
        self.shared.set_access(access);
    }

    /// What the session may reach.
    pub fn access(&self) -> tributary_types::access::Access {
        self.shared.access()
    }

    /// Run every query inside `resources` from now on: each gets a memory pool of its
    /// own, drawn from the server's total. (Slots, deadlines and query threads are the
    /// request's: see `tributary_api`.)
    pub fn govern(&self, resources: Arc<tributary_exec::resources::Resources>) {
        self.shared.set_resources(resources);
    }

    /// The resources queries run inside, if the session is governed.
    pub fn resources(&self) -> Option<Arc<tributary_exec::resources::Resources>> {
        self.shared.resources()
    }

    /// A new session over `store` that reaches, writes and spends what this one may:
    /// for checking a script over an overlay of the same catalog.
    pub fn sibling(&self, store: Arc<dyn CatalogStore>) -> Session {
        let mut s = Session::new(store).confine(self.access());
        s.file_writes = self.file_writes;
        if let Some(r) = self.resources() {
            s.govern(r);
        }
        s
    }

    /// The same session, reporting each connection test event to `progress` as it
    /// happens (the stage results still arrive with the statement's result).
    pub fn with_progress(mut self, progress: connection_probe::Progress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Report each connection test event to `progress` from now on.
    pub fn set_progress(&mut self, progress: connection_probe::Progress) {
        self.progress = Some(progress);
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
        let mut parsed = parse_script(sql).into_iter();
        let (stmt, extra) = (parsed.next(), parsed.count());
        let stmt = match stmt {
            Some(Ok(s)) if extra == 0 => s,
            Some(Err(f)) if extra == 0 => {
                let mut diagnostics = vec![*f.diagnostic];
                boundary::seal_diagnostics(&mut diagnostics, &f.text);
                return Err(StatementError {
                    span: f.span,
                    diagnostics,
                });
            }
            other => {
                let found = usize::from(other.is_some()) + extra;
                return Err(StatementError {
                    span: Span::default(),
                    diagnostics: vec![
                        Diagnostic::error(format!(
                            "expected exactly one statement, but found {found}"
                        ))
                        .with_help("Use Session::execute to run a script of several statements.")
                        .with_code(tributary_types::codes::INVALID),
                    ],
                });
            }
        };
        let span = stmt.span;
        let fail = |mut diagnostics: Vec<Diagnostic>| {
            boundary::seal_diagnostics(&mut diagnostics, &stmt.text);
            StatementError { span, diagnostics }
        };
        if let Statement::Query = stmt.statement {
            self.catch_up(span).map_err(fail)?;
            self.sync_functions(span).map_err(fail)?;
            let state = self.ctx.state();
            let planned = self.plan_query(&stmt, &state).await.map_err(fail)?;
            return self
                .ctx
                .execute_logical_plan(planned.plan)
                .await
                .map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]));
        }
        let result = self
            .run_statement(&stmt, Mode::Run, Delivery::Gathered)
            .await?;
        let frame = match result.output {
            Output::Rows { batches, .. } => self.ctx.read_batches(batches),
            Output::Done(_) | Output::Streamed { .. } => self.ctx.read_empty(),
        };
        frame.map_err(|e| fail(vec![datafusion_diagnostic(&e, span)]))
    }

    /// Run (or check) a script, one outcome per statement. In [`Mode::Run`] the script
    /// stops at the first failure, which is the last outcome.
    pub async fn run_script(&self, sql: &str, mode: Mode) -> Vec<Outcome> {
        let mut out = Vec::new();
        self.run_script_with(sql, mode, |o| {
            out.push(o);
            ControlFlow::Continue(())
        })
        .await;
        out
    }

    /// Run (or check) a script, handing each statement's outcome to `each` as soon as the
    /// statement has finished (and, for DDL, its change is durable), so a caller can print
    /// it before the next statement starts. In [`Mode::Run`] the script stops at the first
    /// failure, and wherever `each` breaks (its reader has gone). A script reports at most
    /// `limits::MAX_DIAGNOSTICS_PER_SCRIPT` diagnostics; the summary counts the rest.
    pub async fn run_script_with(
        &self,
        sql: &str,
        mode: Mode,
        each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> ScriptSummary {
        self.run_script_delivering(sql, mode, Delivery::Gathered, each)
            .await
    }

    /// Run (or check) a script as [`Session::run_script_with`] does, handing each query's
    /// rows to `rows` as they arrive (its outcome is then [`Output::Streamed`]). A query
    /// reading an endless source without a bound streams until `rows` stops it or this
    /// future is dropped, which closes its connections.
    pub async fn run_script_streaming(
        &self,
        sql: &str,
        mode: Mode,
        rows: &dyn RowSink,
        each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> ScriptSummary {
        self.run_script_delivering(sql, mode, Delivery::Streamed(rows), each)
            .await
    }

    async fn run_script_delivering(
        &self,
        sql: &str,
        mode: Mode,
        delivery: Delivery<'_>,
        each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> ScriptSummary {
        let run = self.run_parsed(sql, mode, delivery, each);
        if self.session_script_tables {
            run.await
        } else {
            tributary_exec::provider::script::in_script_scope(run).await
        }
    }

    async fn run_parsed(
        &self,
        sql: &str,
        mode: Mode,
        delivery: Delivery<'_>,
        each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> ScriptSummary {
        let mut budget = boundary::ScriptBudget::new();
        let mut summary = ScriptSummary::default();
        let mut to = durability::Handout {
            each,
            budget: &mut budget,
            summary: &mut summary,
            mode,
        };
        let store = self.shared.store.as_ref();
        // Outcomes run but waiting for their writes to be durable, in order.
        let mut unconfirmed = durability::Unconfirmed::default();
        let mut stopped = false;
        for parsed in tributary_dialect::parser::parse_script_lazily(sql) {
            let (outcome, writes) = match parsed {
                Err(f) => {
                    let mut o = Err(StatementError {
                        span: f.span,
                        diagnostics: vec![*f.diagnostic],
                    });
                    boundary::seal(&mut o, &f.text);
                    (o, Vec::new())
                }
                Ok(stmt) if mode == Mode::Run && durability::may_defer(&stmt.statement) => {
                    // Boxed: the statement's future is large, and this one holds it
                    // beside the script's own state.
                    let ran =
                        durability::collecting(Box::pin(self.run_statement(&stmt, mode, delivery)))
                            .await;
                    // What a staging store kept back goes down once it has waited enough.
                    store.write_staged(false);
                    ran
                }
                Ok(stmt) => {
                    // Everything before it is out before it runs.
                    if unconfirmed.deliver_all(store, &mut to).await.is_break() {
                        stopped = true;
                        break;
                    }
                    (self.run_statement(&stmt, mode, delivery).await, Vec::new())
                }
            };
            let failed = outcome.is_err();
            unconfirmed.push(outcome, writes);
            let flow = match failed && mode == Mode::Run {
                // The script stops at its first failure: what ran before it is out first.
                true => unconfirmed.deliver_all(store, &mut to).await,
                false => unconfirmed.deliver_ready(&mut to),
            };
            if flow.is_break() {
                stopped = true;
                break;
            }
        }
        // The script's last outcomes, once their writes are durable. After a stop (a
        // failure, or `each` has no reader), the outcomes not handed out are dropped:
        // their statements ran; what a staging store still holds of them is discarded,
        // what reached the store below stays.
        if stopped {
            // Nothing the script did not report is stored, where that is still possible.
            store.discard_staged();
        } else {
            let _ = unconfirmed.deliver_all(store, &mut to).await;
        }
        summary.suppressed_diagnostics = budget.suppressed();
        summary
    }

    async fn run_statement(
        &self,
        stmt: &ParsedStatement,
        mode: Mode,
        delivery: Delivery<'_>,
    ) -> Outcome {
        let span = stmt.span;
        if let Err(d) = self.catch_up(span) {
            return boundary::sealed(Err(d), span, &stmt.text);
        }
        let handled: Handled = match &stmt.statement {
            Statement::CreateProfile {
                name,
                if_not_exists,
                options,
                with_span,
            } => {
                self.create_profile(name, *if_not_exists, options, *with_span, mode)
                    .await
            }
            Statement::AlterProfile {
                name,
                options,
                with_span,
            } => self.alter_profile(name, options, *with_span, mode).await,
            Statement::DropProfile {
                name,
                if_exists,
                behavior,
            } => self.drop_profile(name, *if_exists, *behavior).await,
            Statement::CreateTable(create) if !create.has_with => self.create_memory_table(create),
            Statement::CreateTable(create) => self.create_table(create, mode).await,
            Statement::DropTable {
                names,
                if_exists,
                behavior,
            } => self.drop_table(names, *if_exists, *behavior, span).await,
            Statement::CreateView(view) => self.create_view(view, mode).await,
            Statement::DropView {
                names,
                if_exists,
                behavior,
            } => self.drop_view(names, *if_exists, *behavior, span).await,
            Statement::ShowViews => self.show_views(span),
            Statement::ShowCreateView(n) => self.show_create_view(n),
            Statement::CreateTableAs { name, query } => {
                self.create_table_as(name, query, mode == Mode::Check)
            }
            Statement::CreateFunction(f) => self.create_function(f).await,
            Statement::DropFunction { name, if_exists } => {
                self.drop_function(name, *if_exists).await
            }
            Statement::ShowTables => self.show_tables(span),
            Statement::ShowTopics(name) => self.show_topics(name, mode).await,
            Statement::ShowDirectories { path, span } => self.show_directories(path, *span),
            Statement::ShowProfiles => self.show_profiles(span),
            Statement::ShowConnectors => {
                Ok(outcome::Reply::rows(crate::describe::show_connectors()))
            }
            Statement::ShowCreateTable(n) => self.show_create_table(n),
            Statement::ShowCreateProfile(n) => self.show_create_profile(n),
            Statement::DescribeTable(n) => self.describe_table(n),
            Statement::DescribeProfile(n) => self.describe_profile(n),
            Statement::DescribeConnector(n) => self.describe_connector(n),
            Statement::TestProfile { name, timeout } => {
                self.test_profile(name, timeout, mode).await
            }
            Statement::TestTable {
                name,
                limit,
                timeout,
            } => self.test_table(name, *limit, timeout, mode).await,
            Statement::Set {
                name,
                value,
                value_span,
            } => self.set_option(name, value, *value_span),
            Statement::Query => self.run_query(stmt, mode, delivery).await,
        };
        boundary::sealed(handled, span, &stmt.text)
    }

    /// Before a statement: learn of changes other processes sharing the catalog have
    /// acknowledged, so that nothing cached from before them is used.
    fn catch_up(&self, span: Span) -> Result<(), Vec<Diagnostic>> {
        self.shared
            .store
            .refresh()
            .map_err(|e| vec![catalog_diagnostic(e, span)])
    }

    /// Store a statement's changes, awaiting their flush: no thread waits meanwhile, so a
    /// server's concurrent writes reach the catalog together and share a group commit. A
    /// script's catalog statement awaits only their visibility, and the script collects
    /// their durability before it hands out the statement's outcome (`durability`).
    async fn apply(&self, changes: Vec<Change>, span: Span) -> Result<(), Vec<Diagnostic>> {
        if changes.is_empty() {
            return Ok(());
        }
        let failed = |e| vec![catalog_diagnostic(e, span)];
        if !durability::deferring() {
            return self.shared.store.submit(changes).await.map_err(failed);
        }
        // In a script: visible now, for the next statement; durable before this
        // statement's outcome is handed out.
        let durable = self
            .shared
            .store
            .submit_staged(changes)
            .visible()
            .await
            .map_err(failed)?;
        match durability::defer(durable) {
            Ok(()) => Ok(()),
            Err(durable) => durable.await.map_err(failed),
        }
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
        table_not_found_among(n, &names)
    }
}

/// `table 'x' does not exist`, with the closest of `names`.
fn table_not_found_among(n: &Name, names: &[String]) -> Diagnostic {
    let d = Diagnostic::error(format!("table '{}' does not exist", n.value))
        .with_span(n.span)
        .with_code(tributary_types::codes::NOT_FOUND);
    match closest(&n.value, names.iter().map(String::as_str)) {
        Some(s) => d.with_help(format!("Did you mean '{s}'?")),
        None => d.with_help("Run SHOW TABLES to list the tables."),
    }
}
