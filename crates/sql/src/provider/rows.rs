//! [`RowAssembler`]: raw messages made into rows of a connection table: the table's
//! `BatchDecoder`, then its METADATA columns, its virtual columns and a projection. A
//! scan assembles what its reader reads; a lookup join, the values its keys fetch.

use super::connect::Transfer;
use crate::sample_rows::{reason, with_metadata};
use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;
use tributary_connectors::probe::SampledMessage;
use tributary_formats::BatchDecoder;
use tributary_types::{ConnectionTable, Format};

/// The table's columns a query reads, and how to compute them.
#[derive(Debug, Clone)]
pub(crate) struct RowShape {
    /// Every column of the table, in its order (physical, metadata, virtual).
    pub full_schema: SchemaRef,
    /// The columns the query reads, as indexes into `full_schema`.
    pub projection: Option<Vec<usize>>,
    /// Each virtual column's place in `full_schema` and its expression, planned against
    /// the physical and metadata columns.
    pub virtuals: Vec<(usize, Arc<dyn PhysicalExpr>)>,
}

impl RowShape {
    /// The schema of the rows produced.
    pub(crate) fn output_schema(&self) -> Result<SchemaRef> {
        Ok(match &self.projection {
            Some(p) => Arc::new(self.full_schema.project(p)?),
            None => self.full_schema.clone(),
        })
    }
}

/// Assembled rows, and for each the index of the message it came from (when asked for).
pub(crate) struct Rows {
    pub batch: RecordBatch,
    pub sources: Vec<usize>,
}

/// Decodes messages into rows of one table.
pub(crate) struct RowAssembler {
    table: Arc<ConnectionTable>,
    shape: RowShape,
    decoder: BatchDecoder,
    /// Decode message by message, to know each row's message (for its metadata, or for
    /// the caller).
    per_message: bool,
    transfer: Transfer,
}

impl RowAssembler {
    /// An assembler of `table`'s rows in `shape`. `generated` is the format of messages a
    /// reader makes itself (generators), which replaces the table's. `track_sources`
    /// asks for each row's message index.
    pub(crate) fn new(
        table: Arc<ConnectionTable>,
        shape: RowShape,
        generated: Option<Format>,
        track_sources: bool,
        transfer: Transfer,
    ) -> Result<Self> {
        let mut schema = table.schema.clone();
        if let Some(format) = generated {
            schema.format = Some(format);
        }
        let decoder = BatchDecoder::new(&schema).map_err(|e| {
            transfer.failure(
                &table,
                format!("its format cannot be decoded: {e}"),
                "Check the table's format options.",
            )
        })?;
        let per_message =
            track_sources || table.schema.fields.iter().any(|f| f.metadata_key.is_some());
        Ok(Self {
            table,
            shape,
            decoder,
            per_message,
            transfer,
        })
    }

    /// The messages as rows; `None` when none made a row (all dropped as bad data, or
    /// framing left them incomplete). `sources` is empty unless it was asked for.
    pub(crate) fn rows(&mut self, messages: &[SampledMessage]) -> Result<Option<Rows>> {
        let (table, transfer) = (&self.table, self.transfer);
        let bad = |e: tributary_formats::DecodeError| {
            transfer.failure(
                table,
                format!("a message does not decode: {}", reason(&e)),
                "Check the table's format and columns, or set bad_data = 'drop' to skip such messages.",
            )
        };
        let (physical, sources) = if self.per_message {
            let mut batches = Vec::new();
            let mut sources = Vec::new();
            for (i, m) in messages.iter().enumerate() {
                self.decoder.push(&m.payload).map_err(bad)?;
                if let Some(b) = self.decoder.finish().map_err(bad)? {
                    sources.extend(std::iter::repeat_n(i, b.num_rows()));
                    batches.push(b);
                }
            }
            if batches.is_empty() {
                return Ok(None);
            }
            let b = datafusion::arrow::compute::concat_batches(&self.decoder.schema(), &batches)?;
            (b, sources)
        } else {
            for m in messages {
                self.decoder.push(&m.payload).map_err(bad)?;
            }
            match self.decoder.finish().map_err(bad)? {
                Some(b) => (b, Vec::new()),
                None => return Ok(None),
            }
        };
        let stored = with_metadata(&self.table, &physical, messages, &sources)
            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        Ok(Some(Rows {
            batch: self.assemble(&stored)?,
            sources,
        }))
    }

    /// The stored columns plus the virtual ones, in the table's order, then projected.
    fn assemble(&self, stored: &RecordBatch) -> Result<RecordBatch> {
        let shape = &self.shape;
        let rows = stored.num_rows();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(shape.full_schema.fields().len());
        let mut next_stored = 0;
        for i in 0..shape.full_schema.fields().len() {
            match shape.virtuals.iter().find(|(at, _)| *at == i) {
                Some((_, expr)) => columns.push(expr.evaluate(stored)?.into_array(rows)?),
                None => {
                    columns.push(stored.column(next_stored).clone());
                    next_stored += 1;
                }
            }
        }
        let full = RecordBatch::try_new(shape.full_schema.clone(), columns)?;
        match &shape.projection {
            Some(p) => Ok(full.project(p)?),
            None => Ok(full),
        }
    }
}
