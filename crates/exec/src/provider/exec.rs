//! Plan nodes for reading and writing connection tables. Reading runs the connector's
//! reader (`scan`); writing, except to `blackhole`, answers "not supported yet" until
//! sinks land.

use super::catalog::SessionShared;
use super::connect::{Opened, Transfer, connect};
use super::scan::{Budget, ScanSpec, scan_stream};
use super::sink::MessageEncoder;
use crate::preview_bounds::PreviewOptions;
use datafusion::arrow::array::{RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::Distribution;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use std::fmt;
use std::sync::{Arc, OnceLock};
use tributary_connectors::probe::Split;
use tributary_connectors::registry;
use tributary_types::ConnectionTable;

/// Reads a connection table (see `scan`): one partition, or for a source split by
/// partition (Kafka) one per target partition, each reading a share of the source's.
#[derive(Debug)]
pub struct ConnectionScanExec {
    spec: Arc<ScanSpec>,
    /// The rows the partitions may still produce together, made when the first one
    /// starts (a plan is executed once: each statement plans anew).
    budget: OnceLock<Option<Arc<Budget>>>,
    description: String,
    /// The source does not end on its own.
    unbounded: bool,
    properties: Arc<PlanProperties>,
}

impl ConnectionScanExec {
    pub(super) fn new(spec: ScanSpec) -> Result<Self> {
        let schema = spec.output_schema()?;
        let unbounded = match registry().get(&spec.table.connector) {
            Some(entry) => !entry.connector.bounded(&spec.table.config),
            None => true,
        };
        let partitions = spec.partitions.max(1);
        Ok(Self {
            description: tributary_types::redact_text(&spec.table.description).into_owned(),
            unbounded,
            spec: Arc::new(spec),
            budget: OnceLock::new(),
            properties: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(schema),
                Partitioning::UnknownPartitioning(partitions),
                EmissionType::Incremental,
                // DataFusion's operators run over a finite input: the scan ends at its
                // source's end, its LIMIT or the session's preview bounds, and queries
                // that would never end are refused before they start (`bounds`).
                Boundedness::Bounded,
            )),
        })
    }

    /// The table read.
    pub(crate) fn table_name(&self) -> &str {
        &self.spec.table.name
    }

    /// The table's connector.
    pub(crate) fn connector(&self) -> &str {
        &self.spec.table.connector
    }

    /// Whether the source never ends on its own.
    pub(crate) fn unbounded(&self) -> bool {
        self.unbounded
    }

    /// Whether the table holds changes (Debezium), whose rows are known only when the
    /// read ends.
    pub(crate) fn changelog(&self) -> bool {
        self.spec.table.is_updating()
    }

    /// The most rows the scan reads, when a LIMIT was pushed into it.
    pub(crate) fn limit(&self) -> Option<usize> {
        self.spec.limit
    }
}

impl DisplayAs for ConnectionScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ConnectionScanExec: table={}, connector={}, source={}",
            self.spec.table.name, self.spec.table.connector, self.description
        )?;
        if self.spec.partitions > 1 {
            write!(f, ", partitions={}", self.spec.partitions)?;
        }
        if let Some(l) = self.spec.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ConnectionScanExec {
    fn name(&self) -> &str {
        "ConnectionScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition >= self.spec.partitions.max(1) {
            return Err(DataFusionError::Internal(format!(
                "ConnectionScanExec has {} partition(s), not {}",
                self.spec.partitions,
                partition + 1
            )));
        }
        let config = context.session_config();
        let preview = config
            .options()
            .extensions
            .get::<PreviewOptions>()
            .cloned()
            .unwrap_or_default();
        let budget = self
            .budget
            .get_or_init(|| Budget::of(&self.spec, &preview))
            .clone();
        scan_stream(
            self.spec.clone(),
            partition,
            budget,
            &preview,
            config.batch_size(),
        )
    }
}

/// Writes a query's rows into a connection table (see `sink`), and answers the number of
/// rows written.
#[derive(Debug)]
pub struct ConnectionSinkExec {
    table: Arc<ConnectionTable>,
    shared: Arc<SessionShared>,
    description: String,
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

impl ConnectionSinkExec {
    pub(super) fn new(
        table: Arc<ConnectionTable>,
        shared: Arc<SessionShared>,
        input: Arc<dyn ExecutionPlan>,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            input.properties().boundedness,
        ));
        Self {
            description: tributary_types::redact_text(&table.description).into_owned(),
            table,
            shared,
            input,
            properties,
        }
    }
}

impl DisplayAs for ConnectionSinkExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ConnectionSinkExec: table={}, connector={}, sink={}",
            self.table.name, self.table.connector, self.description
        )
    }
}

impl ExecutionPlan for ConnectionSinkExec {
    fn name(&self) -> &str {
        "ConnectionSinkExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        // One writer takes every row: the planner merges the input's partitions.
        vec![Distribution::SinglePartition]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let input = children.into_iter().next().ok_or_else(|| {
            DataFusionError::Internal("ConnectionSinkExec needs one input".into())
        })?;
        Ok(Arc::new(Self::new(
            self.table.clone(),
            self.shared.clone(),
            input,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let written = write_all(self.table.clone(), self.shared.clone(), input);
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            futures::stream::once(written).boxed(),
        )))
    }
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

/// Open the table's writer, write every input batch, finish, and count the rows.
async fn write_all(
    table: Arc<ConnectionTable>,
    shared: Arc<SessionShared>,
    input: SendableRecordBatchStream,
) -> Result<RecordBatch> {
    let mut writer =
        match connect(&shared, &table, Transfer::Write, usize::MAX, Split::WHOLE).await? {
            Opened::Writer(w) => w,
            _ => {
                return Err(DataFusionError::Internal("a write opened no writer".into()));
            }
        };
    let encoder = MessageEncoder::new(
        &table,
        writer.key_column(),
        writer.field_column(),
        writer.partitioning().cloned(),
    )?;
    let rows = super::writing::write_rows(
        writer.as_mut(),
        input,
        |batch| encoder.encode(batch),
        |e| Transfer::Write.failure(&table, e.message, e.hint),
    )
    .await?;
    Ok(RecordBatch::try_new(
        count_schema(),
        vec![Arc::new(UInt64Array::from(vec![rows]))],
    )?)
}
