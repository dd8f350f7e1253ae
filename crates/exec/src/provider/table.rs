//! [`ConnectionTableProvider`]: a connection table as DataFusion sees it: physical,
//! metadata and virtual columns with their Arrow types.

use super::catalog::SessionShared;
use super::exec::{ConnectionScanExec, ConnectionSinkExec};
use super::rows::{ImplicitTime, Lateness, RowShape};
use super::scan::ScanSpec;
use crate::windows::EVENT_TIME_METADATA;
use crate::windows::implicit_time::{TIMESTAMP_COLUMN, is_implicit, timestamp_field};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Column, DFSchema};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;
use tributary_connectors::registry;
use tributary_dialect::ddl::all_arrow_fields;
use tributary_types::{ConnectionTable, ConnectionType};

/// A connection table's record and its Arrow schema.
#[derive(Debug, Clone)]
pub(crate) struct DecodedTable {
    table: Arc<ConnectionTable>,
    schema: SchemaRef,
}

/// One connection table.
#[derive(Debug)]
pub struct ConnectionTableProvider {
    table: Arc<ConnectionTable>,
    schema: SchemaRef,
    shared: Arc<SessionShared>,
}

impl ConnectionTableProvider {
    /// The provider for a stored table of the session whose state is `shared`.
    pub fn new(table: ConnectionTable, shared: Arc<SessionShared>) -> Self {
        let mut schema = all_arrow_fields(&table.schema.fields, &table.virtual_columns);
        // The event-time column is marked, so that Arroyo's `tumble(INTERVAL ..)` windows it.
        if let Some(time) = &table.event_time_field {
            let fields: Vec<Field> = schema
                .fields()
                .iter()
                .map(|f| {
                    let f = f.as_ref().clone();
                    if f.name() == time {
                        let mut metadata = f.metadata().clone();
                        metadata.insert(EVENT_TIME_METADATA.into(), "true".into());
                        f.with_metadata(metadata)
                    } else {
                        f
                    }
                })
                .collect();
            schema = Schema::new_with_metadata(fields, schema.metadata().clone());
        }
        Self {
            table: Arc::new(table),
            schema: Arc::new(schema),
            shared,
        }
    }

    /// Its record and schema, decoded once: what the session's provider cache keeps
    /// (not the provider, which holds the session the cache belongs to).
    pub(crate) fn decoded(&self) -> DecodedTable {
        DecodedTable {
            table: self.table.clone(),
            schema: self.schema.clone(),
        }
    }

    /// The provider with the hidden `_timestamp` column, for a statement that uses event
    /// time: a source's rows carry it (a table with a column of that name keeps its own).
    /// It is the table's event time when the table declares none.
    pub(crate) fn with_implicit_time(mut self) -> Self {
        let table = &self.table;
        if table.connection_type != ConnectionType::Source
            || self.schema.index_of(TIMESTAMP_COLUMN).is_ok()
        {
            return self;
        }
        let mut time = timestamp_field();
        if table.event_time_field.is_none() {
            let mut metadata = time.metadata().clone();
            metadata.insert(EVENT_TIME_METADATA.into(), "true".into());
            time = time.with_metadata(metadata);
        }
        let mut fields: Vec<Field> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(time);
        self.schema = Arc::new(Schema::new_with_metadata(
            fields,
            self.schema.metadata().clone(),
        ));
        self
    }

    /// Where `_timestamp` is in the schema and what fills it, when the schema has it.
    fn implicit_time(&self) -> Result<Option<ImplicitTime>> {
        let Some((at, field)) = self.schema.column_with_name(TIMESTAMP_COLUMN) else {
            return Ok(None);
        };
        if !is_implicit(field) {
            return Ok(None);
        }
        let declared = match &self.table.event_time_field {
            Some(column) => Some(self.schema.index_of(column)?),
            None => None,
        };
        Ok(Some(ImplicitTime { at, declared }))
    }

    /// The provider of a table decoded before.
    pub(crate) fn from_decoded(decoded: DecodedTable, shared: Arc<SessionShared>) -> Self {
        Self {
            table: decoded.table,
            schema: decoded.schema,
            shared,
        }
    }

    /// Plan each virtual column's expression against the stored (physical and metadata)
    /// columns: its place in the table's schema and the physical expression.
    pub(crate) fn virtual_exprs(
        &self,
        state: &dyn Session,
    ) -> Result<Vec<(usize, Arc<dyn PhysicalExpr>)>> {
        if self.table.virtual_columns.is_empty() {
            return Ok(vec![]);
        }
        let Some(state) = state.as_any().downcast_ref::<SessionState>() else {
            return Err(DataFusionError::Plan(
                "virtual columns need a Tributary session to be computed".into(),
            ));
        };
        let stored = DFSchema::try_from(all_arrow_fields(&self.table.schema.fields, &[]))?;
        let mut out = Vec::with_capacity(self.table.virtual_columns.len());
        for v in &self.table.virtual_columns {
            let at = self.schema.index_of(&v.name)?;
            let logical = state.create_logical_expr(&v.expression, &stored)?;
            out.push((at, state.create_physical_expr(logical, &stored)?));
        }
        Ok(out)
    }

    /// The table's event-time column and its watermark expression, planned against all
    /// its columns, when it declares a watermark.
    fn lateness(&self, state: &dyn Session) -> Result<Option<Lateness>> {
        let Some(watermark) = &self.table.watermark else {
            return Ok(None);
        };
        let time = self.schema.index_of(&watermark.column)?;
        let full = DFSchema::try_from(self.schema.as_ref().clone())?;
        let logical = match &watermark.expression {
            Some(text) => {
                let Some(state) = state.as_any().downcast_ref::<SessionState>() else {
                    return Err(DataFusionError::Plan(
                        "a watermark needs a Tributary session to be computed".into(),
                    ));
                };
                state.create_logical_expr(text, &full)?
            }
            None => Expr::Column(Column::from_name(watermark.column.clone())),
        };
        let watermark = state.create_physical_expr(logical, &full)?;
        Ok(Some(Lateness { time, watermark }))
    }

    /// The stored table.
    pub fn table(&self) -> &ConnectionTable {
        &self.table
    }

    /// The state of the session it belongs to.
    pub(crate) fn shared(&self) -> &Arc<SessionShared> {
        &self.shared
    }
}

#[async_trait]
impl TableProvider for ConnectionTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        match self.table.connection_type {
            ConnectionType::Lookup => TableType::Temporary,
            _ => TableType::Base,
        }
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // A source split by partition (Kafka partitions, files) is read in one stream per target partition,
        // each taking its share of the source's partitions. A table of changes is read in
        // one, so that one changelog applies every change in the order they arrive.
        let updating = self.table.is_updating();
        let splits = !updating
            && registry()
                .get(&self.table.connector)
                .is_some_and(|e| e.connector.splits(&self.table.config));
        let partitions = if splits {
            state.config().target_partitions().max(1)
        } else {
            1
        };
        // A table of changes is read to its end before its rows are known: a LIMIT
        // applies to those rows, not to the changes read.
        let limit = if updating { None } else { limit };
        let spec = ScanSpec {
            table: self.table.clone(),
            shared: self.shared.clone(),
            partitions,
            shape: RowShape {
                full_schema: self.schema.clone(),
                projection: projection.cloned(),
                virtuals: self.virtual_exprs(state)?,
                lateness: self.lateness(state)?,
                implicit_time: self.implicit_time()?,
            },
            limit,
        };
        Ok(Arc::new(ConnectionScanExec::new(spec)?))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        _op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ConnectionSinkExec::new(
            self.table.clone(),
            self.shared.clone(),
            input,
        )))
    }
}
