//! Plan nodes for reading and writing connection tables. Reading runs the connector's
//! reader (`scan`); writing, except to `blackhole`, answers "not supported yet" until
//! sinks land.

use super::scan::{ScanSpec, scan_stream};
use crate::preview::PreviewOptions;
use datafusion::arrow::array::{RecordBatch, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;
use std::fmt;
use std::sync::Arc;
use tributary_connectors::registry;
use tributary_types::{ConnectionTable, Diagnostic};

/// Reads a connection table (see `scan`): one partition, which merges the source's own.
#[derive(Debug)]
pub struct ConnectionScanExec {
    spec: Arc<ScanSpec>,
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
        Ok(Self {
            description: tributary_types::redact_text(&spec.table.description).into_owned(),
            unbounded,
            spec: Arc::new(spec),
            properties: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(schema),
                Partitioning::UnknownPartitioning(1),
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
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "ConnectionScanExec has one partition, not {}",
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
        scan_stream(self.spec.clone(), &preview, config.batch_size())
    }
}

/// Writes a query's rows into a connection table.
#[derive(Debug)]
pub struct ConnectionSinkExec {
    table: String,
    connector: String,
    description: String,
    input: Arc<dyn ExecutionPlan>,
    properties: Arc<PlanProperties>,
}

fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

impl ConnectionSinkExec {
    pub(super) fn new(table: &ConnectionTable, input: Arc<dyn ExecutionPlan>) -> Self {
        Self::from_parts(
            table.name.clone(),
            table.connector.clone(),
            tributary_types::redact_text(&table.description).into_owned(),
            input,
        )
    }

    fn from_parts(
        table: String,
        connector: String,
        description: String,
        input: Arc<dyn ExecutionPlan>,
    ) -> Self {
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            input.properties().boundedness,
        ));
        Self {
            table,
            connector,
            description,
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
            self.table, self.connector, self.description
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
        Ok(Arc::new(Self::from_parts(
            self.table.clone(),
            self.connector.clone(),
            self.description.clone(),
            input,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // The blackhole discards rows, so it needs no encoder: count them and report.
        if self.connector != "blackhole" {
            return Err(crate::errors::to_datafusion(
                Diagnostic::error(format!("writing to table '{}' (connector '{}') is not supported yet", self.table, self.connector))
                    .with_note("statements are validated and planned; writing to connectors arrives with the execution work")
                    .with_help("Use EXPLAIN INSERT INTO ... to see the plan."),
            ));
        }
        let mut input = self.input.execute(partition, context)?;
        let stream = futures::stream::once(async move {
            let mut rows = 0u64;
            while let Some(batch) = input.next().await {
                rows += batch?.num_rows() as u64;
            }
            Ok(RecordBatch::try_new(
                count_schema(),
                vec![Arc::new(UInt64Array::from(vec![rows]))],
            )?)
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            stream.boxed(),
        )))
    }
}
