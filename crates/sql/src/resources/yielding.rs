//! Yield points between every operator of a governed query. DataFusion yields to the
//! runtime as its sources produce batches, but an operator that makes many batches from
//! one (a cross join) can run for seconds in one poll, and a deadline or a cancelled
//! request cannot stop what never yields. Wrapping each operator's output in DataFusion's
//! `CooperativeExec` spends the task's budget on every batch, so the task yields at least
//! every few hundred batches wherever in the plan they are made.

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::coop::CooperativeExec;
use std::sync::Arc;

/// `plan` with every operator's output cooperative.
pub(crate) fn yielding_everywhere(plan: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    let wrapped = plan.clone().transform_up(|node| {
        if node.downcast_ref::<CooperativeExec>().is_some() || node.children().is_empty() {
            // Sources are made cooperative by DataFusion's own rule.
            return Ok(Transformed::no(node));
        }
        Ok(Transformed::yes(
            Arc::new(CooperativeExec::new(node)) as Arc<dyn ExecutionPlan>
        ))
    });
    match wrapped {
        Ok(t) => t.data,
        Err(_) => plan,
    }
}
