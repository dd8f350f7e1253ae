//! Arroyo's window form, `tumble(INTERVAL '1' HOUR)`, planned over the input's event time
//! (a source's WATERMARK FOR column, else its hidden `_timestamp`):
//! [`EventTimeWindows`] rewrites each such call into Flink's form with the event-time
//! column of the node's input, named as before so the plan's references still hold.

use super::Kind;
use crate::errors::to_datafusion;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::optimizer::AnalyzerRule;
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
                none: "Select _timestamp in the subquery or view the query reads (SELECT * passes it on), or read a source table directly."
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
                "Select _timestamp in the subquery or view it reads (SELECT * passes it on), or name the time column: {name}(time_column, {intervals})."
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
    let marked: Vec<Column> = input
        .iter()
        .filter(|(_, f)| f.metadata().contains_key(EVENT_TIME_METADATA))
        .map(|(q, f)| Column::new(q.cloned(), f.name()))
        .collect();
    let what = needs.what;
    match marked.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(to_datafusion(
            Diagnostic::error(format!("{what}, but the input has no event-time column"))
                .with_note("a source's rows carry their event time as the hidden column _timestamp (its WATERMARK FOR column when it declares one); memory tables and queries that select other columns have none")
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
