//! Arroyo's window form, `tumble(INTERVAL '1' HOUR)`, planned over the input's event time
//! (a source's WATERMARK FOR column, else its hidden `_timestamp`):
//! [`EventTimeWindows`] rewrites each such call into Flink's form with the event-time
//! column of the node's input, named as before so the plan's references still hold.

use super::Kind;
use super::implicit_time;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, LogicalPlan, Projection, SubqueryAlias};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;
use tributary_dialect::datafusion_diagnostics::to_datafusion;
use tributary_types::Diagnostic;

/// Field metadata on a connection table's event-time column (its WATERMARK FOR column,
/// or `event_time_field`, else the hidden `_timestamp`).
pub const EVENT_TIME_METADATA: &str = "tributary.event_time";

/// The analyzer rule that gives Arroyo-form windows their event-time column.
#[derive(Debug, Default)]
pub struct EventTimeWindows;

impl AnalyzerRule for EventTimeWindows {
    fn name(&self) -> &str {
        "tributary_event_time_windows"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        plan.transform_up_with_subqueries(rewrite_node)
            .map(|t| t.data)
    }
}

/// Rewrite the Arroyo-form windows in one node's expressions.
fn rewrite_node(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    if !node.expressions().iter().any(has_arroyo_window) {
        return Ok(Transformed::no(node));
    }
    // A subquery or view that selected other columns left its source's `_timestamp`
    // behind: Arroyo carries it through every projection, so bring it up to here.
    let node = if node.inputs().iter().any(|i| has_event_time(i.schema())) {
        node
    } else {
        let inputs: Vec<LogicalPlan> = node
            .inputs()
            .into_iter()
            .map(|i| carry_time(i.clone(), 0).unwrap_or_else(|| i.clone()))
            .collect();
        let exprs = node.expressions();
        node.with_new_exprs(exprs, inputs)?
    };
    let mut input = DFSchema::empty();
    for i in node.inputs() {
        input.merge(i.schema());
    }
    // Output names must not change: the nodes above refer to these columns by name.
    let keeps_names = matches!(node, LogicalPlan::Projection(_) | LogicalPlan::Aggregate(_));
    let rewritten = node.map_expressions(|e| {
        let name = e.schema_name().to_string();
        let t = e.transform_up(|e| rewrite_call(e, &input))?;
        Ok(
            if t.transformed && keeps_names && !matches!(t.data, Expr::Alias(_)) {
                t.update_data(|e| e.alias(name))
            } else {
                t
            },
        )
    })?;
    rewritten.map_data(|plan| plan.recompute_schema())
}

fn has_arroyo_window(e: &Expr) -> bool {
    e.exists(|e| Ok(arroyo_form(e).is_some() || is_row_time(e)))
        .unwrap_or(false)
}

/// `row_time()`: the row's event time.
fn is_row_time(e: &Expr) -> bool {
    matches!(e, Expr::ScalarFunction(f) if f.func.name() == super::ROW_TIME && f.args.is_empty())
}

/// The window kind of an Arroyo-form call (intervals only, no time column).
fn arroyo_form(e: &Expr) -> Option<Kind> {
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    let kind = Kind::from_name(f.func.name())?;
    (f.args.len() == kind.intervals().len()).then_some(kind)
}

fn rewrite_call(e: Expr, input: &DFSchema) -> Result<Transformed<Expr>> {
    if is_row_time(&e) {
        let time = event_time_column(
            input,
            Needs {
                what: "row_time() is the event time of its row".into(),
                none: "Call row_time() where a source's rows are read (below any aggregate or join), or select the time as a column there."
                    .into(),
                several: "Call row_time() where one table's rows are read (in a subquery over it)."
                    .into(),
            },
        )?;
        return Ok(Transformed::yes(Expr::Cast(
            datafusion::logical_expr::expr::Cast::new(
                Box::new(Expr::Column(time)),
                super::row_time_type(),
            ),
        )));
    }
    let Some(kind) = arroyo_form(&e) else {
        return Ok(Transformed::no(e));
    };
    let Expr::ScalarFunction(f) = e else {
        return Ok(Transformed::no(e));
    };
    let name = kind.name();
    let intervals = kind
        .intervals()
        .iter()
        .map(|i| format!("{i} INTERVAL"))
        .collect::<Vec<_>>()
        .join(", ");
    let time = event_time_column(
        input,
        Needs {
            what: format!("{name}({intervals}) windows the event time of its input"),
            none: format!(
                "Window the rows below any aggregate or join, where a source's rows are read, or name the time column: {name}(time_column, {intervals})."
            ),
            several: format!("Name the time column: {name}(time_column, {intervals})."),
        },
    )?;
    let mut args = Vec::with_capacity(f.args.len() + 1);
    args.push(Expr::Column(time));
    args.extend(f.args);
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(f.func, args),
    )))
}

/// Whether `schema` has an event-time column (marked, or a carried `_timestamp`).
fn has_event_time(schema: &DFSchema) -> bool {
    schema.fields().iter().any(|f| {
        f.metadata().contains_key(EVENT_TIME_METADATA) || implicit_time::is_carried_time(f)
    })
}

/// The deepest a projection chain is followed to find `_timestamp`; views nest far less.
const MAX_CARRY: usize = 64;

/// `plan` passing on the `_timestamp` of the source under it through the projections,
/// filters, aliases, sorts and limits between them, as Arroyo carries it; `None` where
/// there is none to carry (an aggregate, a join, rows from no source).
fn carry_time(plan: LogicalPlan, depth: usize) -> Option<LogicalPlan> {
    if has_event_time(plan.schema()) {
        return Some(plan);
    }
    if depth > MAX_CARRY {
        return None;
    }
    let carried = |p: &LogicalPlan| -> Option<Column> {
        p.schema()
            .iter()
            .find(|(_, f)| implicit_time::is_carried_time(f))
            .map(|(q, f)| Column::new(q.cloned(), f.name()))
    };
    match plan {
        LogicalPlan::Projection(projection) => {
            let input = carry_time(projection.input.as_ref().clone(), depth + 1)?;
            let time = carried(&input)?;
            // A projection that already shows a column of that name keeps its own.
            if projection
                .schema
                .fields()
                .iter()
                .any(|f| f.name() == implicit_time::TIMESTAMP_COLUMN)
            {
                return None;
            }
            let mut exprs = projection.expr.clone();
            exprs.push(Expr::Column(time));
            Projection::try_new(exprs, Arc::new(input))
                .ok()
                .map(LogicalPlan::Projection)
        }
        LogicalPlan::SubqueryAlias(alias) => {
            let input = carry_time(alias.input.as_ref().clone(), depth + 1)?;
            SubqueryAlias::try_new(Arc::new(input), alias.alias.clone())
                .ok()
                .map(LogicalPlan::SubqueryAlias)
        }
        plan @ (LogicalPlan::Filter(_) | LogicalPlan::Sort(_) | LogicalPlan::Limit(_)) => {
            let input = carry_time((*plan.inputs().first()?).clone(), depth + 1)?;
            let exprs = plan.expressions();
            plan.with_new_exprs(exprs, vec![input]).ok()
        }
        _ => None,
    }
}

/// What a call needing the event-time column says when there is not exactly one.
struct Needs {
    /// Why it needs it: `tumble(width INTERVAL) windows the event time of its input`.
    what: String,
    /// The help when there is none.
    none: String,
    /// The help when there are several.
    several: String,
}

/// The one event-time column among `input`'s fields.
fn event_time_column(input: &DFSchema, needs: Needs) -> Result<Column> {
    let columns = |keep: &dyn Fn(&datafusion::arrow::datatypes::Field) -> bool| -> Vec<Column> {
        input
            .iter()
            .filter(|(_, f)| keep(f))
            .map(|(q, f)| Column::new(q.cloned(), f.name()))
            .collect()
    };
    let mut marked = columns(&|f| f.metadata().contains_key(EVENT_TIME_METADATA));
    if marked.is_empty() {
        // The WATERMARK column was left behind, but its value came along as `_timestamp`.
        marked = columns(&|f| implicit_time::is_carried_time(f));
    }
    let what = needs.what;
    match marked.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(to_datafusion(
            Diagnostic::error(format!("{what}, but the input has no event-time column"))
                .with_note("a source's rows carry their event time as the hidden column _timestamp (its WATERMARK FOR column when it declares one), through projections and filters; rows from no source, an aggregate's and a join's have none")
                .with_help(needs.none)
                .with_code(tributary_types::codes::PLAN_ERROR),
        )),
        several => Err(to_datafusion(
            Diagnostic::error(format!(
                "{what}, but the input has {} event-time columns: {}",
                several.len(),
                several
                    .iter()
                    .map(|c| format!("'{}'", c.flat_name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .with_help(needs.several)
            .with_code(tributary_types::codes::PLAN_ERROR),
        )),
    }
}
