//! [`LookupJoinExec`], the physical form of a [`LookupJoin`]: for each batch of the input,
//! the rows of the lookup table whose keys the batch holds, fetched by key. Its planner
//! ([`LookupJoinPlanner`]) and the query planner that installs it
//! ([`TributaryQueryPlanner`]) live here too.

use super::lookup::LookupJoin;
use async_trait::async_trait;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result;
use datafusion::execution::TaskContext;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{JoinType, LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use std::fmt;
use std::sync::Arc;
use tributary_types::Diagnostic;

/// Joins each input row with the lookup table's rows for its key.
#[derive(Debug)]
pub struct LookupJoinExec {
    input: Arc<dyn ExecutionPlan>,
    table: String,
    connector: String,
    /// The keys: an expression over the input, and the lookup column it equals.
    keys: Vec<(Arc<dyn PhysicalExpr>, String)>,
    /// The condition on looked-up rows, as written (shown by EXPLAIN).
    lookup_filter: Option<String>,
    join_type: JoinType,
    properties: Arc<PlanProperties>,
}

impl LookupJoinExec {
    fn new(
        input: Arc<dyn ExecutionPlan>,
        node: &LookupJoin,
        keys: Vec<(Arc<dyn PhysicalExpr>, String)>,
    ) -> Self {
        let schema = Arc::new(node.schema.as_arrow().clone());
        let input_properties = input.properties();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            input_properties.output_partitioning().clone(),
            input_properties.emission_type,
            input_properties.boundedness,
        );
        Self {
            input,
            table: node.table.clone(),
            connector: node.connector.clone(),
            keys,
            lookup_filter: node.lookup_filter.as_ref().map(ToString::to_string),
            join_type: node.join_type,
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for LookupJoinExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|(e, c)| format!("{e} = {c}"))
            .collect();
        write!(
            f,
            "LookupJoinExec: join_type={}, table={}, connector={}, on=[{}]",
            self.join_type,
            self.table,
            self.connector,
            keys.join(", ")
        )?;
        if let Some(lf) = &self.lookup_filter {
            write!(f, ", lookup_filter={lf}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for LookupJoinExec {
    fn name(&self) -> &str {
        "LookupJoinExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        for (e, _) in &self.keys {
            if f(e)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(input) = children.into_iter().next() else {
            return Ok(self);
        };
        Ok(Arc::new(Self {
            input,
            table: self.table.clone(),
            connector: self.connector.clone(),
            keys: self.keys.clone(),
            lookup_filter: self.lookup_filter.clone(),
            join_type: self.join_type,
            properties: self.properties.clone(),
        }))
    }

    fn execute(
        &self,
        _partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        Err(crate::errors::to_datafusion(
            Diagnostic::error(format!(
                "looking rows up in table '{}' (connector '{}') is not supported yet",
                self.table, self.connector
            ))
            .with_note("statements are validated and planned; lookups by key arrive with the execution work")
            .with_help("Use EXPLAIN to see the plan."),
        ))
    }
}

/// Plans [`LookupJoin`] nodes as [`LookupJoinExec`].
#[derive(Debug, Default)]
pub struct LookupJoinPlanner;

#[async_trait]
impl ExtensionPlanner for LookupJoinPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        session: &dyn datafusion::catalog::Session,
        planning_ctx: &PhysicalPlanningContext,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        let Some(lookup) = node.as_any().downcast_ref::<LookupJoin>() else {
            return Ok(None);
        };
        let (Some(logical), Some(input)) = (logical_inputs.first(), physical_inputs.first()) else {
            return Ok(None);
        };
        let keys = lookup
            .on
            .iter()
            .map(|(e, column)| {
                planner
                    .create_physical_expr(e, logical.schema(), session, planning_ctx)
                    .map(|p| (p, column.clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Arc::new(LookupJoinExec::new(
            input.clone(),
            lookup,
            keys,
        ))))
    }
}

/// DataFusion's planner with Tributary's plan nodes added (lookup joins).
#[derive(Debug, Default)]
pub struct TributaryQueryPlanner;

#[async_trait]
impl QueryPlanner for TributaryQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn datafusion::catalog::Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        DefaultPhysicalPlanner::with_extension_planners(vec![Arc::new(LookupJoinPlanner)])
            .create_physical_plan(logical_plan, session)
            .await
    }
}
