//! Windows that are not a value of one row, computed where they are grouped by:
//! [`ExpandWindows`] (an analyzer rule, after [`super::EventTimeWindows`]) rewrites an
//! aggregate that groups by an overlapping `hop` or a `session` so that its input carries
//! each row's window as a column, and the aggregate groups by that column instead:
//!
//! - `hop(time, slide, width)`: the input gains the list of windows holding each row,
//!   unnested, so a row counts once in each of its windows;
//! - `session(time, gap)`: the input gains a window function over the rows of each key
//!   (the aggregate's other grouping expressions) in time order, which closes a session
//!   when the next row is a gap or more after the one before.
//!
//! The aggregate's output keeps its names, so the nodes above it are unchanged.

use super::Kind;
use super::bounds::scalar_nanos;
use super::hop::HopWindows;
use super::session::SessionWindow;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Column, Result};
use datafusion::logical_expr::expr::{ScalarFunction, WindowFunction};
use datafusion::logical_expr::{
    Aggregate, Expr, ExprFunctionExt, LogicalPlan, LogicalPlanBuilder, WindowFunctionDefinition,
};
use datafusion::optimizer::AnalyzerRule;
use std::sync::Arc;
use tributary_dialect::datafusion_diagnostics::to_datafusion;
use tributary_types::Diagnostic;

/// The column that carries each row's window into the aggregate.
const WINDOW_COLUMN: &str = "__tributary_window";

/// The analyzer rule that computes overlapping hop and session windows in GROUP BY.
#[derive(Debug, Default)]
pub struct ExpandWindows;

impl AnalyzerRule for ExpandWindows {
    fn name(&self) -> &str {
        "tributary_expand_windows"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        let expanded = plan.transform_up_with_subqueries(expand_aggregate)?;
        if !expanded.transformed {
            return Ok(expanded.data);
        }
        // The nodes above an expanded aggregate refer to its columns by name, which are
        // unchanged; recomputing their schemas keeps every type exact.
        expanded
            .data
            .transform_up_with_subqueries(|n| n.recompute_schema().map(Transformed::yes))
            .map(|t| t.data)
    }
}

/// A window in GROUP BY that the aggregate's input must compute.
/// `args` are the call's own arguments (time column, then intervals), which the plan shows.
enum Grouped {
    Hop {
        args: Vec<Expr>,
        slide: i64,
        width: i64,
    },
    Session {
        args: Vec<Expr>,
        gap: i64,
    },
}

fn expand_aggregate(node: LogicalPlan) -> Result<Transformed<LogicalPlan>> {
    let LogicalPlan::Aggregate(aggregate) = &node else {
        return Ok(Transformed::no(node));
    };
    let mut found = Vec::new();
    for (i, e) in aggregate.group_expr.iter().enumerate() {
        if let Some(w) = grouped_window(e)? {
            found.push((i, w));
        }
    }
    let Some((index, window)) = found.pop() else {
        return Ok(Transformed::no(node));
    };
    if !found.is_empty() {
        return Err(to_datafusion(
            Diagnostic::error("GROUP BY holds more than one overlapping hop or session window")
                .with_note("each row's window must be one value for the aggregate to group it")
                .with_help("Group by one window, and aggregate the result again for another.")
                .with_code(tributary_types::codes::PLAN_ERROR),
        ));
    }
    let input = Arc::unwrap_or_clone(aggregate.input.clone());
    let keys: Vec<Expr> = aggregate
        .group_expr
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, e)| unaliased(e).clone())
        .collect();
    let windowed = match window {
        Grouped::Hop { args, slide, width } => {
            let udf = Arc::new(HopWindows::udf(slide, width)?);
            let windows = Expr::ScalarFunction(ScalarFunction::new_udf(udf, args));
            let mut columns: Vec<Expr> = input
                .schema()
                .columns()
                .into_iter()
                .map(Expr::Column)
                .collect();
            columns.push(windows.alias(WINDOW_COLUMN));
            LogicalPlanBuilder::from(input)
                .project(columns)?
                .unnest_column(WINDOW_COLUMN)?
                .build()?
        }
        Grouped::Session { args, gap } => {
            let udwf = Arc::new(SessionWindow::udwf(gap)?);
            let time = args[0].clone();
            let session = Expr::from(WindowFunction::new(
                WindowFunctionDefinition::WindowUDF(udwf),
                args,
            ))
            .partition_by(keys)
            .order_by(vec![time.sort(true, false)])
            .build()?
            .alias(WINDOW_COLUMN);
            LogicalPlanBuilder::from(input)
                .window(vec![session])?
                .build()?
        }
    };
    let mut group_expr = aggregate.group_expr.clone();
    let name = group_expr[index].schema_name().to_string();
    group_expr[index] = Expr::Column(Column::from_name(WINDOW_COLUMN)).alias(name);
    let rewritten =
        Aggregate::try_new(Arc::new(windowed), group_expr, aggregate.aggr_expr.clone())?;
    Ok(Transformed::yes(LogicalPlan::Aggregate(rewritten)))
}

fn unaliased(e: &Expr) -> &Expr {
    match e {
        Expr::Alias(a) => unaliased(&a.expr),
        e => e,
    }
}

/// The overlapping hop or session window that `e` groups by, if it is one. Tumbles and
/// hops whose slide is their width are values of one row and stay as they are.
fn grouped_window(e: &Expr) -> Result<Option<Grouped>> {
    let Expr::ScalarFunction(f) = unaliased(e) else {
        return Ok(None);
    };
    let Some(kind) = Kind::from_name(f.func.name()) else {
        return Ok(None);
    };
    if f.args.len() != kind.intervals().len() + 1 {
        return Ok(None);
    }
    let mut nanos = Vec::new();
    for arg in &f.args[1..] {
        let Expr::Literal(value, _) = arg else {
            // Evaluating the call refuses a non-constant interval with its own message.
            return Ok(None);
        };
        nanos.push(scalar_nanos(kind, value)?);
    }
    let args = f.args.clone();
    Ok(match (kind, nanos.as_slice()) {
        (Kind::Hop, [slide, width]) if slide != width => Some(Grouped::Hop {
            args,
            slide: *slide,
            width: *width,
        }),
        (Kind::Session, [gap]) => Some(Grouped::Session { args, gap: *gap }),
        _ => None,
    })
}
