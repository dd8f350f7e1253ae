//! [`LookupJoinExec`], the physical form of a [`LookupJoin`]: for each batch of the input,
//! the rows of the lookup table whose keys the batch holds, fetched by key (the work is
//! `lookup_stream`'s). Its planner ([`LookupJoinPlanner`]) and the query planner that
//! installs it ([`TributaryQueryPlanner`]) live here too.

use super::connect::Transfer;
use super::lookup::LookupJoin;
use super::lookup_cache::{CacheSettings, LookupCache};
use super::lookup_stream::{JoinSpec, Joining, LookupMetrics};
use super::rows::{RowAssembler, RowShape};
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::DFSchema;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};
use std::fmt;
use std::sync::{Arc, Mutex};

/// Joins each input row with the lookup table's rows for its key.
pub struct LookupJoinExec {
    input: Arc<dyn ExecutionPlan>,
    spec: Arc<JoinSpec>,
    /// The lookup table's columns the join reads.
    shape: RowShape,
    /// The keys as EXPLAIN shows them: an expression over the input, and its column.
    key_names: Vec<String>,
    /// The condition on looked-up rows, as written.
    lookup_filter: Option<String>,
    metrics: ExecutionPlanMetricsSet,
    properties: Arc<PlanProperties>,
}

impl fmt::Debug for LookupJoinExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LookupJoinExec")
            .field("table", &self.spec.table.name)
            .field("keys", &self.key_names)
            .finish_non_exhaustive()
    }
}

impl LookupJoinExec {
    fn new(
        input: Arc<dyn ExecutionPlan>,
        spec: JoinSpec,
        shape: RowShape,
        node: &LookupJoin,
    ) -> Self {
        let properties = Self::properties_over(&input, &spec.schema);
        let key_names = spec
            .keys
            .iter()
            .zip(&node.on)
            .map(|(e, (_, column))| format!("{e} = {column}"))
            .collect();
        Self {
            input,
            spec: Arc::new(spec),
            shape,
            key_names,
            lookup_filter: node.lookup_filter.as_ref().map(ToString::to_string),
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
        }
    }

    /// The input's partitioning and boundedness: each input partition is joined on its own.
    fn properties_over(input: &Arc<dyn ExecutionPlan>, schema: &SchemaRef) -> Arc<PlanProperties> {
        let input_properties = input.properties();
        Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            input_properties.output_partitioning().clone(),
            input_properties.emission_type,
            input_properties.boundedness,
        ))
    }
}

impl DisplayAs for LookupJoinExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LookupJoinExec: join_type={}, table={}, connector={}, on=[{}]",
            self.spec.join_type,
            self.spec.table.name,
            self.spec.table.connector,
            self.key_names.join(", ")
        )?;
        if let Some(lf) = &self.lookup_filter {
            write!(f, ", lookup_filter={lf}")?;
        }
        if let Some(cache) = &self.spec.cache
            && let Ok(cache) = cache.lock()
        {
            let settings = cache.settings();
            write!(f, ", cache=[max_bytes={}", settings.max_bytes)?;
            if let Some(ttl) = settings.ttl {
                write!(f, ", ttl={ttl:?}")?;
            }
            f.write_str("]")?;
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
        for e in &self.spec.keys {
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
        // The optimizer repartitions the input: the join has its partitions.
        let properties = Self::properties_over(&input, &self.spec.schema);
        Ok(Arc::new(Self {
            input,
            spec: self.spec.clone(),
            shape: self.shape.clone(),
            key_names: self.key_names.clone(),
            lookup_filter: self.lookup_filter.clone(),
            metrics: ExecutionPlanMetricsSet::new(),
            properties,
        }))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let rows = RowAssembler::new(
            self.spec.table.clone(),
            self.shape.clone(),
            None,
            true,
            Transfer::Lookup,
        )?;
        let counter =
            |name: &'static str| MetricBuilder::new(&self.metrics).counter(name, partition);
        let joining = Joining {
            spec: self.spec.clone(),
            input,
            rows,
            reader: None,
            metrics: LookupMetrics {
                keys_fetched: counter("keys_fetched"),
                cache_hits: counter("cache_hits"),
                output_rows: MetricBuilder::new(&self.metrics).output_rows(partition),
            },
        };
        let stream = futures::stream::try_unfold(joining, Joining::next);
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.spec.schema.clone(),
            stream,
        )))
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
        let physical = |e: &Expr, schema: &DFSchema| {
            planner.create_physical_expr(e, schema, session, planning_ctx)
        };
        let keys = lookup
            .on
            .iter()
            .map(|(e, _)| physical(e, logical.schema()))
            .collect::<Result<Vec<_>>>()?;
        let provider = &lookup.source.0;
        let full_schema = provider.schema();
        let projection = lookup
            .columns
            .iter()
            .map(|c| full_schema.index_of(c))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let shape = RowShape {
            full_schema: full_schema.clone(),
            projection: Some(projection),
            virtuals: provider.virtual_exprs(session)?,
            // Lookups have no event time.
            lateness: None,
            implicit_time: None,
        };
        let lookup_schema = shape.output_schema()?;
        let lookup_filter = match &lookup.lookup_filter {
            Some(f) => {
                let schema = match &lookup.qualifier {
                    Some(q) => DFSchema::try_from_qualified_schema(q.clone(), &lookup_schema)?,
                    None => DFSchema::try_from(lookup_schema.as_ref().clone())?,
                };
                Some(physical(f, &schema)?)
            }
            None => None,
        };
        let filter = match &lookup.filter {
            Some(f) => Some(physical(f, &lookup.schema)?),
            None => None,
        };
        let outputs = lookup
            .outputs
            .iter()
            .map(|c| {
                lookup.columns.iter().position(|r| r == c).ok_or_else(|| {
                    DataFusionError::Internal(format!("lookup column '{c}' is not read"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let table = Arc::new(provider.table().clone());
        let spec = JoinSpec {
            cache: CacheSettings::of(&table).map(|s| Arc::new(Mutex::new(LookupCache::new(s)))),
            table,
            shared: provider.shared().clone(),
            schema: Arc::new(lookup.schema.as_arrow().clone()),
            keys,
            lookup_filter,
            outputs,
            filter,
            join_type: lookup.join_type,
        };
        Ok(Some(Arc::new(LookupJoinExec::new(
            input.clone(),
            spec,
            shape,
            lookup,
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
