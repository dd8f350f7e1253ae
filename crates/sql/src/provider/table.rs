//! [`ConnectionTableProvider`]: a connection table as DataFusion sees it: physical,
//! metadata and virtual columns with their Arrow types.

use super::exec::{ConnectionScanExec, ConnectionSinkExec};
use crate::ddl::all_arrow_fields;
use crate::windows::EVENT_TIME_METADATA;
use async_trait::async_trait;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::Result;
use datafusion::logical_expr::Expr;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;
use tributary_types::{ConnectionTable, ConnectionType};

/// One connection table.
#[derive(Debug)]
pub struct ConnectionTableProvider {
    table: ConnectionTable,
    schema: SchemaRef,
}

impl ConnectionTableProvider {
    /// The provider for a stored table.
    pub fn new(table: ConnectionTable) -> Self {
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
            table,
            schema: Arc::new(schema),
        }
    }

    /// The stored table.
    pub fn table(&self) -> &ConnectionTable {
        &self.table
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
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        Ok(Arc::new(ConnectionScanExec::new(
            &self.table,
            schema,
            limit,
        )))
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        _op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ConnectionSinkExec::new(&self.table, input)))
    }
}
