//! Views as DataFusion tables: a stored view is planned from its query text when a query
//! reads it, with the session's state, and inlined into the reading query's plan.

use super::catalog::SessionShared;
use crate::windows::implicit_time;
use datafusion::catalog::TableProvider;
use datafusion::common::Column;
use datafusion::datasource::ViewTable;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder};
use std::sync::Arc;
use tributary_types::{Definition, DefinitionBody};

/// The table a query reading `view` sees.
pub(crate) async fn view_provider(
    shared: &SessionShared,
    view: &Definition,
) -> Result<Arc<dyn TableProvider>> {
    let DefinitionBody::View { query, columns, .. } = &view.body else {
        return Err(DataFusionError::Internal(format!(
            "'{}' is not a view",
            view.name
        )));
    };
    let state = shared.state().ok_or_else(|| {
        DataFusionError::Plan(format!(
            "view '{}' cannot be planned: its session has ended",
            view.name
        ))
    })?;
    let planning = implicit_time::plan_statement(query, state.create_logical_plan(query));
    let plan = planning.await.map_err(|e| {
        DataFusionError::Plan(format!(
            "view '{}' no longer plans: {}; fix it with CREATE OR REPLACE VIEW",
            view.name,
            tributary_dialect::datafusion_diagnostics::datafusion_message(&e)
        ))
    })?;
    let plan = named_columns(plan, columns)?;
    Ok(Arc::new(ViewTable::new(plan, Some(query.clone()))))
}

/// `plan` with its columns renamed to `names` (all of them, in order), or as it is when
/// no names are given.
pub fn named_columns(plan: LogicalPlan, names: &[String]) -> Result<LogicalPlan> {
    if names.is_empty() {
        return Ok(plan);
    }
    // `_timestamp`, carried for a reading statement that uses event time, is not one of
    // the columns the view names: it keeps its name.
    let schema = plan.schema();
    let carried: Vec<bool> = schema
        .fields()
        .iter()
        .map(|f| implicit_time::is_carried_time(f))
        .collect();
    let named = carried.iter().filter(|c| !**c).count();
    if named != names.len() {
        return Err(DataFusionError::Plan(format!(
            "the view names {} columns, but its query has {named}",
            names.len(),
        )));
    }
    let mut names = names.iter();
    let exprs: Vec<Expr> = (0..schema.fields().len())
        .map(|i| {
            let column = Expr::Column(Column::from(schema.qualified_field(i)));
            if carried[i] {
                return column;
            }
            match names.next() {
                Some(name) => column.alias(name),
                None => column,
            }
        })
        .collect();
    LogicalPlanBuilder::from(plan).project(exprs)?.build()
}
