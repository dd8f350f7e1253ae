//! Rules on planned statements that DataFusion does not know: sources are only read, sinks
//! only written, lookup tables only used as the right side of a join, and files are
//! written (`COPY ... TO`) only where the session allows it.

use super::table::ConnectionTableProvider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::source_as_provider;
use datafusion::logical_expr::{JoinType, LogicalPlan, WriteOp};
use tributary_types::{ConnectionTable, ConnectionType, Diagnostic, Span};

fn connection_table(
    source: &std::sync::Arc<dyn datafusion::logical_expr::TableSource>,
) -> Option<ConnectionTable> {
    let provider = source_as_provider(source).ok()?;
    provider
        .downcast_ref::<ConnectionTableProvider>()
        .map(|p| p.table().clone())
}

/// The name of the memory table `source` is, if it is one nothing has written yet.
fn unwritten_script_table(
    source: &std::sync::Arc<dyn datafusion::logical_expr::TableSource>,
) -> Option<String> {
    let provider = source_as_provider(source).ok()?;
    let t = provider.downcast_ref::<super::script::ScriptTable>()?;
    (!t.is_written()).then(|| t.name.clone())
}

/// Check a planned statement; every violation is reported at `span` (the statement).
/// `file_writes` says whether the session lets statements write files on this machine
/// (`COPY ... TO`, `INSERT INTO` a local file sink).
pub fn check_plan(plan: &LogicalPlan, span: Span, file_writes: bool) -> Vec<Diagnostic> {
    let mut out = plan_violations(plan, span, file_writes);
    tributary_types::codes::fill(&mut out, tributary_types::codes::PLAN_ERROR);
    out
}

/// What `check` says of a plan that would write files on this machine when the session
/// may not: running it needs the permission, checking it does not. Notes, one per
/// refusal a run would meet.
pub fn file_write_notes(plan: &LogicalPlan, span: Span) -> Vec<Diagnostic> {
    let refused = plan_violations(plan, span, false);
    let allowed = plan_violations(plan, span, true);
    refused
        .into_iter()
        .filter(|d| !allowed.iter().any(|a| a.message == d.message))
        .map(|d| {
            d.into_note("running it needs --allow-file-writes")
                .with_code(tributary_types::codes::FORBIDDEN)
        })
        .collect()
}

fn plan_violations(plan: &LogicalPlan, span: Span, file_writes: bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut allowed_lookups: Vec<usize> = Vec::new();
    // The visitor never fails, so the traversal's result carries nothing to report.
    let _ = plan.apply_with_subqueries(|node| {
        match node {
            LogicalPlan::Copy(copy) if !file_writes => out.push(
                Diagnostic::error(format!(
                    "COPY ... TO '{}' would write a file, which this session does not allow",
                    copy.output_url
                ))
                .with_span(span)
                .with_note("a script must not write arbitrary files unless whoever runs it says so")
                .with_help("Pass --allow-file-writes to `tributary run` (embedders: Session::allow_file_writes)."),
            ),
            LogicalPlan::Dml(dml) => {
                if let (WriteOp::Insert(_), Some(t)) = (&dml.op, connection_table(&dml.target)) {
                    match t.connection_type {
                        ConnectionType::Source => out.push(
                            Diagnostic::error(format!("cannot insert into table '{}' because it is a source", t.name))
                                .with_span(span)
                                .with_help("INSERT INTO a sink table; create one with type = 'sink' (or a sink connector)."),
                        ),
                        ConnectionType::Lookup => out.push(
                            Diagnostic::error(format!("cannot insert into table '{}' because it is a lookup table", t.name))
                                .with_span(span)
                                .with_help("Lookup (temporary) tables are only read, by joins."),
                        ),
                        ConnectionType::Sink if !file_writes && writes_local_files(&t) => out.push(
                            Diagnostic::error(format!(
                                "INSERT INTO table '{}' would write files on this machine, which this session does not allow",
                                t.name
                            ))
                            .with_span(span)
                            .with_note("a script must not write arbitrary files unless whoever runs it says so")
                            .with_help("Pass --allow-file-writes to `tributary run`, `repl` or `serve` (embedders: Session::allow_file_writes)."),
                        ),
                        ConnectionType::Sink => {}
                    }
                }
            }
            LogicalPlan::Join(join) => {
                if matches!(join.join_type, JoinType::Inner | JoinType::Left) {
                    lookup_scan_under(&join.right, &mut allowed_lookups);
                }
            }
            LogicalPlan::TableScan(scan) => {
                if let Some(t) = unwritten_script_table(&scan.source) {
                    out.push(
                        Diagnostic::error(format!("memory table '{t}' is read before anything is written to it"))
                            .with_span(span)
                            .with_note("a memory table is written by one INSERT INTO, then read, as in Arroyo")
                            .with_help(format!("INSERT INTO {t} SELECT ... first. For a connection table, say where its data lives: add WITH (connector = '...', ...) to its CREATE TABLE.")),
                    );
                }
                if let Some(t) = connection_table(&scan.source) {
                    match t.connection_type {
                        ConnectionType::Sink => out.push(
                            Diagnostic::error(format!("cannot read from table '{}' because it is a sink", t.name))
                                .with_span(span)
                                .with_help(format!("Read from a source table; write to '{}' with INSERT INTO.", t.name)),
                        ),
                        ConnectionType::Lookup if !allowed_lookups.contains(&(node as *const LogicalPlan as usize)) => out.push(
                            Diagnostic::error(format!("lookup table '{}' can only be used as the right side of an inner or left join", t.name))
                                .with_span(span)
                                .with_help(format!("Join it: ... FROM stream s LEFT JOIN {} l ON s.key = l.key.", t.name)),
                        ),
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    });
    out
}

/// Whether writing `table` creates or changes files on this machine.
fn writes_local_files(table: &ConnectionTable) -> bool {
    tributary_connectors::registry()
        .get(&table.connector)
        .is_some_and(|e| e.connector.writes_local_files(&table.config))
}

/// Mark the lookup scan directly on a join's right side (through an alias or one filter).
fn lookup_scan_under(plan: &LogicalPlan, allowed: &mut Vec<usize>) {
    match plan {
        LogicalPlan::TableScan(_) => allowed.push(plan as *const LogicalPlan as usize),
        LogicalPlan::SubqueryAlias(a) => lookup_scan_under(&a.input, allowed),
        LogicalPlan::Filter(f) => lookup_scan_under(&f.input, allowed),
        LogicalPlan::Projection(p) => lookup_scan_under(&p.input, allowed),
        _ => {}
    }
}
