//! Views as DataFusion tables: a stored view is planned from its query text when a query
//! reads it, with the session's state, and inlined into the reading query's plan.

use super::catalog::SessionShared;
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
    let plan = state.create_logical_plan(query).await.map_err(|e| {
        DataFusionError::Plan(format!(
            "view '{}' no longer plans: {}; fix it with CREATE OR REPLACE VIEW",
            view.name,
            crate::errors::datafusion_message(&e)
        ))
    })?;
    let plan = named_columns(plan, columns)?;
    Ok(Arc::new(ViewTable::new(plan, Some(query.clone()))))
}

/// `plan` with its columns renamed to `names` (all of them, in order), or as it is when
/// no names are given.
pub(crate) fn named_columns(plan: LogicalPlan, names: &[String]) -> Result<LogicalPlan> {
    if names.is_empty() {
        return Ok(plan);
    }
    let fields = plan.schema().fields().len();
    if fields != names.len() {
        return Err(DataFusionError::Plan(format!(
            "the view names {} columns, but its query has {fields}",
            names.len()
        )));
    }
    let exprs: Vec<Expr> = (0..fields)
        .map(|i| Expr::Column(Column::from(plan.schema().qualified_field(i))).alias(&names[i]))
        .collect();
    LogicalPlanBuilder::from(plan).project(exprs)?.build()
}
