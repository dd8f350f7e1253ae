//! Queries and every other statement DataFusion plans: Tributary's plan checks, a sink
//! awaiting its schema, and planning on a grown stack.

use super::Session;
use super::outcome::{Handled, Mode, Reply};
use super::streaming::{Delivery, IDLE_TICK, RowSink};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;
use tributary_catalog::Change;
use tributary_dialect::datafusion_diagnostics::datafusion_diagnostic;
use tributary_dialect::parser::ast::{Name, ParsedStatement};
use tributary_exec::preview_bounds::PreviewOptions;
use tributary_exec::provider::{
    SessionShared, StatementText, check_plan, streaming_violations, unbounded_reads,
};
use tributary_exec::sinks::{InsertTarget, insert_target, window_into_timestamp};
use tributary_exec::windows::implicit_time::plan_statement;
use tributary_types::{Diagnostic, Span};

impl Session {
    pub(super) async fn run_query(
        &self,
        stmt: &ParsedStatement,
        mode: Mode,
        delivery: Delivery<'_>,
    ) -> Handled {
        let span = stmt.span;
        self.sync_functions(span)?;
        let state = self.ctx.state();
        // `check` runs nothing: what only running needs (writing files here) is a note.
        let file_writes = self.file_writes || mode == Mode::Check;
        let Planned {
            plan,
            target,
            _inferred: _guard,
        } = self
            .plan_query_with(stmt, &state, file_writes, mode == Mode::Check)
            .await?;
        if let Some(written) = self.write_script_table(&plan, span) {
            return written;
        }
        let is_explain = matches!(plan, LogicalPlan::Explain(_) | LogicalPlan::Analyze(_));
        if mode == Mode::Check && !is_explain {
            // A checked query is a pipeline to be: reading an endless source is its
            // normal life, so only a query run here must be bounded.
            let physical =
                tributary_dialect::deep_stack::block_on_deep(state.create_physical_plan(&plan))
                    .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
            let mut notes = preview_notes(&physical, &state, span);
            if !self.file_writes {
                notes.extend(tributary_exec::provider::file_write_notes(&plan, span));
            }
            return Ok(Reply::done("PLANNED", notes));
        }
        let df = self
            .ctx
            .execute_logical_plan(plan)
            .await
            .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
        let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
        let mut task = df.task_ctx();
        if let Some(resources) = self.shared.resources() {
            // The query's operators reserve from a pool of its own.
            let runtime = resources.query_runtime(&task.runtime_env());
            task = task.with_runtime(runtime);
        }
        let task = Arc::new(task);
        // Analysis and optimisation recurse once per level of the query's nesting, as
        // planning does: on a grown stack too.
        let physical = tributary_dialect::deep_stack::block_on_deep(df.create_physical_plan())
            .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
        let streamed = matches!(delivery, Delivery::Streamed(_));
        check_bounds(&physical, &self.ctx.state(), span, streamed)?;
        let output = match delivery {
            Delivery::Gathered => {
                let batches = datafusion::physical_plan::collect(physical, task)
                    .await
                    .map_err(|e| vec![datafusion_diagnostic(&e, span)])?;
                super::Output::Rows { schema, batches }
            }
            Delivery::Streamed(sink) => stream_rows(physical, task, schema, sink, span).await?,
        };
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
            self.apply(vec![Change::PutTable(updated)], span).await?;
        }
        Ok(Reply {
            output,
            warnings: vec![],
        })
    }

    /// Plan a DataFusion statement with Tributary's rules: a sink awaiting its schema gets
    /// the query's for this statement, and the plan is checked (sources read, sinks
    /// written, lookups joined). DataFusion's planner recurses over the statement, so it
    /// runs on a grown stack.
    pub(super) async fn plan_query(
        &self,
        stmt: &ParsedStatement,
        state: &SessionState,
    ) -> Result<Planned, Vec<Diagnostic>> {
        self.plan_query_with(stmt, state, self.file_writes, false)
            .await
    }

    /// [`Self::plan_query`], judging file writes as allowed or not by `file_writes`, and
    /// the statement as a `pipeline` (every source a stream) or as a preview.
    async fn plan_query_with(
        &self,
        stmt: &ParsedStatement,
        state: &SessionState,
        file_writes: bool,
        pipeline: bool,
    ) -> Result<Planned, Vec<Diagnostic>> {
        let span = stmt.span;
        let store = self.shared.store.as_ref();
        let target = tributary_dialect::deep_stack::block_on_deep(insert_target(
            &stmt.text, store, state, span,
        ))?;
        let inferred = target.as_ref().and_then(|t| {
            t.inferred
                .as_ref()
                .map(|f| self.set_inferred(&t.table.name, f.clone()))
        });
        let planning = plan_statement(&stmt.text, state.create_logical_plan(&stmt.text));
        let plan = match tributary_dialect::deep_stack::block_on_deep(planning) {
            Ok(plan) => plan,
            Err(e) => {
                // A window written into a TIMESTAMP column: name the column.
                let window = tributary_dialect::deep_stack::block_on_deep(window_into_timestamp(
                    &stmt.text, store, state, span,
                ));
                let mut d = window.unwrap_or_else(|| self.query_diagnostic(&e, span));
                tributary_exec::windows::implicit_time::explain_wildcard(&mut d, &stmt.text);
                return Err(vec![d]);
            }
        };
        let mut problems = check_plan(&plan, span, file_writes);
        if problems.is_empty() {
            let at = StatementText {
                text: &stmt.text,
                span,
                pipeline,
            };
            problems = streaming_violations(&plan, &at);
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        // EXPLAIN prints a plan that fails analysis as rows; the failure is the statement's.
        if let LogicalPlan::Explain(explain) = &plan {
            tributary_dialect::deep_stack::on_deep_stack(|| state.optimize(&explain.plan))
                .map_err(|e| vec![self.query_diagnostic(&e, span)])?;
        }
        Ok(Planned {
            plan,
            target,
            _inferred: inferred,
        })
    }

    /// A planning error; DataFusion's "table not found" becomes Tributary's wording with a
    /// suggestion.
    pub(super) fn query_diagnostic(
        &self,
        e: &datafusion::error::DataFusionError,
        span: Span,
    ) -> Diagnostic {
        let d = datafusion_diagnostic(e, span);
        let qualified = format!(
            "{}.{}.",
            tributary_exec::CATALOG_NAME,
            tributary_exec::SCHEMA_NAME
        );
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
}

/// Run `plan`, handing its batches to `sink` as they arrive, until it ends or the sink
/// stops it (dropping the stream stops its readers and closes their connections).
async fn stream_rows(
    plan: Arc<dyn ExecutionPlan>,
    task: Arc<datafusion::execution::TaskContext>,
    schema: SchemaRef,
    sink: &dyn RowSink,
    span: Span,
) -> Result<super::Output, Vec<Diagnostic>> {
    use futures::StreamExt;
    let failed = |e: datafusion::error::DataFusionError| vec![datafusion_diagnostic(&e, span)];
    let mut stream = datafusion::physical_plan::execute_stream(plan, task).map_err(failed)?;
    let mut rows = 0u64;
    let mut stopped = sink.begin(span, &schema).await.is_break();
    while !stopped {
        let batch = match tokio::time::timeout(IDLE_TICK, stream.next()).await {
            Err(_) => {
                stopped = sink.idle().await.is_break();
                continue;
            }
            Ok(None) => break,
            Ok(Some(batch)) => batch.map_err(failed)?,
        };
        if batch.num_rows() == 0 {
            continue;
        }
        rows += batch.num_rows() as u64;
        stopped = sink.batch(batch).await.is_break();
    }
    Ok(super::Output::Streamed {
        schema,
        rows,
        stopped,
    })
}

/// What `check` says of a query a preview would refuse: the refusal, as a note. A
/// pipeline reads forever, so the query is valid; run here, it would not finish.
fn preview_notes(
    plan: &Arc<dyn ExecutionPlan>,
    state: &SessionState,
    span: Span,
) -> Vec<Diagnostic> {
    match check_bounds(plan, state, span, false) {
        Ok(()) => vec![],
        Err(refusals) => refusals
            .into_iter()
            .map(|r| r.into_note("as a preview (run, the shell, POST /sql)"))
            .collect(),
    }
}

/// Refuse a plan that reads a source with no end and nothing to bound the read. A
/// `streamed` result may pass an endless read's rows on as they come.
fn check_bounds(
    plan: &Arc<dyn ExecutionPlan>,
    state: &SessionState,
    span: Span,
    streamed: bool,
) -> Result<(), Vec<Diagnostic>> {
    let preview = state
        .config()
        .options()
        .extensions
        .get::<PreviewOptions>()
        .cloned()
        .unwrap_or_default();
    let problems = unbounded_reads(plan, &preview, span, streamed);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// A checked plan, with what it needs until it has run.
pub(super) struct Planned {
    pub plan: LogicalPlan,
    pub target: Option<InsertTarget>,
    // Keeps the inferred sink schema visible until the statement ends.
    pub _inferred: Option<InferredGuard>,
}

/// Removes a statement's inferred sink schema when the statement ends, however it ends.
pub(super) struct InferredGuard {
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
