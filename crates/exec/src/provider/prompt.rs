//! Rows over live sources reach the client as they pass. A live source (one that waits
//! for its messages) hands each batch on as soon as the reader has it, but DataFusion's
//! operators gather rows into full batches (`datafusion.execution.batch_size`, 8192)
//! before passing them on: a filter's coalescer, a round-robin repartition, a join's
//! output. Over a slow stream they would hold the rows that pass until thousands have
//! come or the preview ends, and a `WHERE .. LIMIT 2` would never answer. Over a plan that
//! reads a live source this rule lets every batch through as it comes:
//! - a filter passes each filtered batch on whole (no coalescing),
//! - a round-robin repartition (parallelism for its own sake) is removed,
//! - a join runs with batches of one row as its target, so whatever it makes is passed
//!   on at once, while its inputs keep the session's batch size.
//!
//! Bounded plans (files, memory tables) are left as DataFusion plans them.

use super::exec::ConnectionScanExec;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::config::ConfigOptions;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::joins::{HashJoinExec, NestedLoopJoinExec};
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use std::fmt;
use std::sync::Arc;

/// The physical optimizer rule; runs after DataFusion's own.
#[derive(Debug, Default)]
pub struct PromptRows;

impl PhysicalOptimizerRule for PromptRows {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !reads_live_source(&plan)? {
            return Ok(plan);
        }
        let batch_size = usize::from(config.execution.batch_size);
        plan.transform_up(|node| prompt(node, batch_size))
            .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "prompt_rows"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Whether `plan` reads a source that waits for its messages.
fn reads_live_source(plan: &Arc<dyn ExecutionPlan>) -> Result<bool> {
    let mut live = false;
    plan.apply(|node| {
        if node
            .downcast_ref::<ConnectionScanExec>()
            .is_some_and(ConnectionScanExec::unbounded)
        {
            live = true;
            return Ok(TreeNodeRecursion::Stop);
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(live)
}

/// `node` rewritten to pass its rows on as they come.
fn prompt(
    node: Arc<dyn ExecutionPlan>,
    batch_size: usize,
) -> Result<Transformed<Arc<dyn ExecutionPlan>>> {
    if let Some(filter) = node.downcast_ref::<FilterExec>() {
        if filter.batch_size() == 1 {
            return Ok(Transformed::no(node));
        }
        // A target of one row: every batch bypasses the coalescer whole.
        return Ok(Transformed::yes(Arc::new(filter.with_batch_size(1)?)));
    }
    if let Some(repartition) = node.downcast_ref::<RepartitionExec>()
        && matches!(repartition.partitioning(), Partitioning::RoundRobinBatch(_))
        && !repartition.preserve_order()
    {
        return Ok(Transformed::yes(repartition.input().clone()));
    }
    if node.downcast_ref::<HashJoinExec>().is_some()
        || node.downcast_ref::<NestedLoopJoinExec>().is_some()
    {
        let inputs = node
            .children()
            .into_iter()
            .map(|c| Arc::new(WithBatchSize::new(c.clone(), batch_size)) as _)
            .collect();
        let join = datafusion::physical_plan::replace_children_if_necessary(node, inputs)?;
        return Ok(Transformed::new(
            Arc::new(WithBatchSize::new(join, 1)),
            true,
            TreeNodeRecursion::Continue,
        ));
    }
    Ok(Transformed::no(node))
}

/// Runs its input with `batch_size` as the session's batch size.
#[derive(Debug)]
struct WithBatchSize {
    input: Arc<dyn ExecutionPlan>,
    batch_size: usize,
}

impl WithBatchSize {
    fn new(input: Arc<dyn ExecutionPlan>, batch_size: usize) -> Self {
        Self { input, batch_size }
    }
}

impl DisplayAs for WithBatchSize {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "WithBatchSize: {}", self.batch_size)
    }
}

impl ExecutionPlan for WithBatchSize {
    fn name(&self) -> &str {
        "WithBatchSize"
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match children.pop() {
            Some(input) if children.is_empty() => Ok(Arc::new(Self::new(input, self.batch_size))),
            _ => datafusion::common::internal_err!("WithBatchSize takes one input"),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let config = context
            .session_config()
            .clone()
            .with_batch_size(self.batch_size);
        let context = TaskContext::new(
            context.task_id(),
            context.session_id(),
            config,
            context.scalar_functions().clone(),
            context.higher_order_functions().clone(),
            context.aggregate_functions().clone(),
            context.window_functions().clone(),
            context.runtime_env(),
        );
        self.input.execute(partition, Arc::new(context))
    }
}
