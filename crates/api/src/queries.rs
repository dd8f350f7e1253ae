//! Statements sent as text: `POST /sql` runs (or checks) a script as `tributary run -c`
//! does; `POST /pipelines/validate_query` checks one against the catalog like
//! `tributary check` and answers in Arroyo's shape, with the plan as a graph.

use super::bodies::{SqlPost, ValidateQueryPost};
use super::error::{ApiDiagnostic, ApiError};
use super::rows::rows_as_arrays;
use super::views::{
    PipelineEdge, PipelineGraph, PipelineNode, QueryValidationResult, SqlColumn, SqlDiagnostic,
    SqlLocation, SqlResponse, SqlSpan, SqlStatementResult,
};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::logical_expr::LogicalPlan;
use std::ops::ControlFlow;
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_dialect::parser::ast::Statement;
use tributary_dialect::parser::parse_script;
use tributary_sql::session::{Mode, Outcome, Output, Session};
use tributary_types::Diagnostic;

/// The most rows one statement's result carries in a `POST /sql` answer.
pub const MAX_RESULT_ROWS: usize = 10_000;

/// `POST /sql`: run (`mode: "run"`, the default, stopping at the first failure) or check
/// (`"check"`: against a copy of the catalog, connecting nowhere, every failure reported)
/// a script. `session` runs it; a check runs on an overlay of its store.
pub async fn run_sql(session: &Arc<Session>, post: &SqlPost) -> Result<SqlResponse, ApiError> {
    let mode = sql_mode(post)?;
    let asked = super::governed::asked_deadline(post.deadline.as_deref())?;
    let post = post.clone();
    super::governed::governed(session, asked, move |session| async move {
        run_sql_here(&session, &post, mode).await
    })
    .await
}

/// `run_sql`'s work, on whichever thread runs it.
async fn run_sql_here(session: &Session, post: &SqlPost, mode: Mode) -> SqlResponse {
    let checking;
    let session = if mode == Mode::Check {
        checking = checking_session(session);
        &checking
    } else {
        session
    };
    let mut results = Vec::new();
    let summary = session
        .run_script_with(&post.sql, mode, |outcome| {
            results.push(statement_result(outcome));
            ControlFlow::Continue(())
        })
        .await;
    SqlResponse {
        results,
        failed: summary.failed,
        suppressed_diagnostics: summary.suppressed_diagnostics,
    }
}

/// `mode`: `run` (the default) or `check`.
pub(crate) fn sql_mode(post: &SqlPost) -> Result<Mode, ApiError> {
    match post.mode.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("run") => Ok(Mode::Run),
        Some("check") => Ok(Mode::Check),
        Some(other) => Err(ApiError::body(format!(
            "mode must be 'run' or 'check', not '{}'",
            tributary_types::limits::shorten(other)
        ))),
    }
}

/// A session checking against a copy of `session`'s catalog (changes are not kept).
pub(crate) fn checking_session(session: &Session) -> Session {
    session.sibling(Arc::new(OverlayStore::over(Arc::clone(session.store()))))
}

/// The columns of a result, with their SQL types.
pub(crate) fn sql_columns(schema: &SchemaRef) -> Vec<SqlColumn> {
    schema
        .fields()
        .iter()
        .map(|f| SqlColumn {
            name: f.name().clone(),
            data_type: tributary_types::SourceField::from_arrow(f)
                .map(|s| s.field_type.sql_name())
                .unwrap_or_else(|| f.data_type().to_string()),
            nullable: f.is_nullable(),
        })
        .collect()
}

/// One statement's outcome in `POST /sql`'s shape.
pub(crate) fn statement_result(outcome: Outcome) -> SqlStatementResult {
    let (span, error, diags, output) = match outcome {
        Ok(r) => (r.span, false, r.warnings, Some(r.output)),
        Err(e) => (e.span, true, e.diagnostics, None),
    };
    let mut diagnostics: Vec<ApiDiagnostic> = diags.iter().map(ApiDiagnostic::in_sql).collect();
    let mut row_count = None;
    let (tag, columns, rows, schema) = match output {
        None => ("ERROR".to_string(), vec![], vec![], None),
        Some(Output::Done(tag)) => (tag, vec![], vec![], None),
        Some(Output::Streamed {
            schema,
            rows,
            stopped,
        }) => {
            row_count = Some(rows);
            if stopped {
                diagnostics.push(ApiDiagnostic::in_sql(
                    &Diagnostic::note(format!("the query was stopped after {rows} rows"))
                        .with_span(span),
                ));
            }
            let columns = sql_columns(&schema);
            let schema = serde_json::to_value(schema.as_ref()).ok();
            ("SELECT".to_string(), columns, vec![], schema)
        }
        Some(Output::Rows { schema, batches }) => {
            let columns = sql_columns(&schema);
            let rows = match rows_as_arrays(&batches, MAX_RESULT_ROWS) {
                Ok((rows, truncated)) => {
                    if truncated {
                        diagnostics.push(ApiDiagnostic::in_sql(
                            &Diagnostic::warning(format!(
                                "the result was cut to its first {MAX_RESULT_ROWS} rows"
                            ))
                            .with_span(span)
                            .with_help("Add a LIMIT, or aggregate, to see the rows you need."),
                        ));
                    }
                    rows
                }
                Err(e) => {
                    diagnostics.push(ApiDiagnostic::in_sql(
                        &Diagnostic::error(format!("the result cannot be written as JSON: {e}"))
                            .with_span(span),
                    ));
                    vec![]
                }
            };
            let schema = serde_json::to_value(schema.as_ref()).ok();
            ("SELECT".to_string(), columns, rows, schema)
        }
    };
    SqlStatementResult {
        line: span.start.line,
        column: span.start.column,
        end_line: span.end.line,
        end_column: span.end.column,
        tag,
        columns,
        rows,
        arrow_schema: schema,
        diagnostics,
        error,
        row_count,
    }
}

/// `POST /pipelines/validate_query`: check the statements against `store` (on an
/// overlay: nothing is stored, nothing connects); valid when there are no errors and a
/// query to plan, whose plan is the graph.
pub async fn validate_query(
    session: &Arc<Session>,
    post: &ValidateQueryPost,
) -> Result<QueryValidationResult, ApiError> {
    let post = post.clone();
    super::governed::governed(session, None, move |session| async move {
        validate_query_here(&session, &post).await
    })
    .await
}

/// `validate_query`'s work, on whichever thread runs it.
async fn validate_query_here(parent: &Session, post: &ValidateQueryPost) -> QueryValidationResult {
    let store = Arc::clone(parent.store());
    let mut errors = Vec::new();
    if post.udfs.as_ref().is_some_and(|u| !u.is_empty()) {
        errors.push(SqlDiagnostic {
            message: "Tributary does not compile UDFs: remove udfs, and declare each UDF's signature in the query with CREATE FUNCTION name(arg TYPE, ...) RETURNS TYPE".into(),
            span: None,
        });
    }
    let mut session = parent.sibling(Arc::new(OverlayStore::over(store)));
    // The graph is planned after the script ran: its memory tables must still be there.
    session.set_keep_script_tables(true);
    let mut last_query = None;
    let parsed = parse_script(&post.query);
    for p in parsed.iter().flatten() {
        if matches!(p.statement, Statement::Query) {
            last_query = Some(p.text.clone());
        }
    }
    session
        .run_script_with(&post.query, Mode::Check, |outcome| {
            if let Err(e) = outcome {
                errors.extend(
                    e.diagnostics
                        .iter()
                        .filter(|d| d.is_error())
                        .map(sql_diagnostic),
                );
            }
            ControlFlow::Continue(())
        })
        .await;
    if errors.is_empty() && last_query.is_none() {
        errors.push(SqlDiagnostic {
            message: "the SQL contains no query to validate: add a SELECT or INSERT INTO statement"
                .into(),
            span: None,
        });
    }
    let graph = match (&last_query, errors.is_empty()) {
        (Some(q), true) => match session.sql(q).await {
            Ok(frame) => Some(graph_of(frame.logical_plan(), q)),
            Err(e) => {
                errors.extend(
                    e.diagnostics
                        .iter()
                        .filter(|d| d.is_error())
                        .map(sql_diagnostic),
                );
                None
            }
        },
        _ => None,
    };
    QueryValidationResult { errors, graph }
}

fn sql_diagnostic(d: &Diagnostic) -> SqlDiagnostic {
    let message = match &d.help {
        Some(h) => format!("{}. {h}", d.message),
        None => d.message.clone(),
    };
    SqlDiagnostic {
        message,
        span: d.span.filter(|s| s.is_known()).map(|s| SqlSpan {
            start: SqlLocation {
                line: s.start.line,
                column: s.start.column,
            },
            end: SqlLocation {
                line: s.end.line,
                column: s.end.column,
            },
        }),
    }
}

/// Plans nest as deep as their statements, which the parser bounds; the walk stops here
/// regardless.
const MAX_PLAN_DEPTH: usize = 1_024;

/// The plan of `query` as nodes (inputs first) and edges from each input to its consumer.
fn graph_of(plan: &LogicalPlan, query: &str) -> PipelineGraph {
    let mut graph = PipelineGraph {
        nodes: vec![],
        edges: vec![],
    };
    // Redacted as an answer to the query: what the query itself shows is echoed, so a
    // plan never confirms that a literal equals someone's secret.
    let shown = tributary_dialect::secret_spans::masked(query);
    add_node(plan, &mut graph, 0, &shown);
    graph
}

fn add_node(plan: &LogicalPlan, graph: &mut PipelineGraph, depth: usize, shown: &str) -> u64 {
    let inputs: Vec<u64> = if depth < MAX_PLAN_DEPTH {
        plan.inputs()
            .into_iter()
            .map(|i| add_node(i, graph, depth + 1, shown))
            .collect()
    } else {
        vec![]
    };
    let id = graph.nodes.len() as u64;
    let description =
        tributary_types::redact_answer(&plan.display().to_string(), shown).into_owned();
    let operator = description
        .split_once(':')
        .map(|(op, _)| op.to_string())
        .unwrap_or_else(|| description.clone());
    graph.nodes.push(PipelineNode {
        node_id: id,
        operator,
        description,
        parallelism: 1,
    });
    let value_type = plan
        .schema()
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect::<Vec<_>>()
        .join(", ");
    for src in inputs {
        graph.edges.push(PipelineEdge {
            src_id: src,
            dest_id: id,
            key_type: String::new(),
            value_type: value_type.clone(),
            edge_type: "forward".into(),
        });
    }
    id
}
