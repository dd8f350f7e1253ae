//! Reading a connection table for a query: the connector's reader (opened through a
//! probe, as `TEST TABLE` connects), then the table's `BatchDecoder`, then its METADATA
//! columns, its virtual columns and the query's projection, as a stream of batches that
//! ends with the source, at the pushed-down `LIMIT`, or at the session's preview bounds.
//! Dropping the stream drops the reader, which closes its connections.

use super::catalog::SessionShared;
use super::connect::{Opened, Transfer, connect};
use crate::preview::PreviewOptions;
use crate::sample_rows::{reason, with_metadata};
use datafusion::arrow::array::{ArrayRef, RecordBatch};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use std::sync::Arc;
use tokio::time::Instant;
use tributary_connectors::probe::SampledMessage;
use tributary_connectors::source::SourceReader;
use tributary_formats::BatchDecoder;
use tributary_types::ConnectionTable;

/// What a scan reads and produces.
#[derive(Debug)]
pub(crate) struct ScanSpec {
    pub table: ConnectionTable,
    pub shared: Arc<SessionShared>,
    /// Every column of the table, in its order (physical, metadata, virtual).
    pub full_schema: SchemaRef,
    /// The columns the query reads, as indexes into `full_schema`.
    pub projection: Option<Vec<usize>>,
    /// Each virtual column's place in `full_schema` and its expression, planned against
    /// the physical and metadata columns.
    pub virtuals: Vec<(usize, Arc<dyn PhysicalExpr>)>,
    /// The most rows the query needs (a pushed-down `LIMIT`).
    pub limit: Option<usize>,
}

impl ScanSpec {
    /// The schema of the batches the scan produces.
    pub(crate) fn output_schema(&self) -> Result<SchemaRef> {
        Ok(match &self.projection {
            Some(p) => Arc::new(self.full_schema.project(p)?),
            None => self.full_schema.clone(),
        })
    }
}

/// The stream of a scan, under the session's preview bounds; `batch_size` messages are
/// read at a time.
pub(crate) fn scan_stream(
    spec: Arc<ScanSpec>,
    preview: &PreviewOptions,
    batch_size: usize,
) -> Result<SendableRecordBatchStream> {
    let schema = spec.output_schema()?;
    let cap = match (spec.limit, preview.max_rows) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let timeout = preview.timeout.map(|t| t.0);
    let state = State::Opening {
        spec,
        cap,
        timeout,
        batch_size: batch_size.max(1),
    };
    let stream = futures::stream::try_unfold(state, step);
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
}

enum State {
    Opening {
        spec: Arc<ScanSpec>,
        cap: Option<usize>,
        timeout: Option<std::time::Duration>,
        batch_size: usize,
    },
    Reading(Box<Reading>),
}

struct Reading {
    spec: Arc<ScanSpec>,
    reader: Box<dyn SourceReader>,
    decoder: BatchDecoder,
    emitted: usize,
    cap: Option<usize>,
    deadline: Option<Instant>,
    batch_size: usize,
    has_metadata: bool,
}

async fn step(state: State) -> Result<Option<(RecordBatch, State)>> {
    let mut reading = match state {
        State::Opening {
            spec,
            cap,
            timeout,
            batch_size,
        } => {
            let deadline = timeout.map(|t| Instant::now() + t);
            if cap == Some(0) {
                return Ok(None);
            }
            let reader = open(&spec).await?;
            let mut schema = spec.table.schema.clone();
            if let Some(format) = reader.generated_format() {
                schema.format = Some(format);
            }
            let decoder = BatchDecoder::new(&schema).map_err(|e| {
                failure(
                    &spec.table,
                    format!("its format cannot be decoded: {e}"),
                    "Check the table's format options.",
                )
            })?;
            Box::new(Reading {
                has_metadata: spec
                    .table
                    .schema
                    .fields
                    .iter()
                    .any(|f| f.metadata_key.is_some()),
                spec,
                reader,
                decoder,
                emitted: 0,
                cap,
                deadline,
                batch_size,
            })
        }
        State::Reading(r) => r,
    };
    loop {
        let want = match reading.cap {
            Some(cap) if reading.emitted >= cap => return Ok(None),
            Some(cap) => reading.batch_size.min(cap - reading.emitted),
            None => reading.batch_size,
        };
        let next = reading.reader.next_batch(want);
        let read = match reading.deadline {
            Some(d) => match tokio::time::timeout_at(d, next).await {
                Ok(read) => read,
                // The preview's time is up: the source ends here.
                Err(_) => return Ok(None),
            },
            None => next.await,
        };
        let messages = match read {
            Ok(Some(m)) => m,
            Ok(None) => return Ok(None),
            Err(e) => return Err(failure(&reading.spec.table, e.message, e.hint)),
        };
        let Some(batch) = reading.decode(&messages)? else {
            continue;
        };
        let batch = match reading.cap {
            Some(cap) if reading.emitted + batch.num_rows() > cap => {
                batch.slice(0, cap - reading.emitted)
            }
            _ => batch,
        };
        reading.emitted += batch.num_rows();
        if batch.num_rows() > 0 {
            return Ok(Some((batch, State::Reading(reading))));
        }
    }
}

impl Reading {
    /// The messages as rows of the query's columns; `None` when none made a row (all
    /// dropped as bad data, or framing left them incomplete).
    fn decode(&mut self, messages: &[SampledMessage]) -> Result<Option<RecordBatch>> {
        let table = &self.spec.table;
        let bad = |e: tributary_formats::DecodeError| {
            failure(
                table,
                format!("a message does not decode: {}", reason(&e)),
                "Check the table's format and columns, or set bad_data = 'drop' to skip such messages.",
            )
        };
        let (physical, sources) = if self.has_metadata {
            // Each message's rows must be known to give them its metadata.
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
        let stored = with_metadata(table, &physical, messages, &sources)
            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        self.assemble(&stored).map(Some)
    }

    /// The stored columns plus the virtual ones, in the table's order, then projected.
    fn assemble(&self, stored: &RecordBatch) -> Result<RecordBatch> {
        let spec = &self.spec;
        let rows = stored.num_rows();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(spec.full_schema.fields().len());
        let mut next_stored = 0;
        for i in 0..spec.full_schema.fields().len() {
            match spec.virtuals.iter().find(|(at, _)| *at == i) {
                Some((_, expr)) => columns.push(expr.evaluate(stored)?.into_array(rows)?),
                None => {
                    columns.push(stored.column(next_stored).clone());
                    next_stored += 1;
                }
            }
        }
        let full = RecordBatch::try_new(spec.full_schema.clone(), columns)?;
        match &spec.projection {
            Some(p) => Ok(full.project(p)?),
            None => Ok(full),
        }
    }
}

/// Open the table's reader as its connection test connects.
async fn open(spec: &ScanSpec) -> Result<Box<dyn SourceReader>> {
    let limit = spec.limit.unwrap_or(usize::MAX);
    match connect(&spec.shared, &spec.table, Transfer::Read, limit).await? {
        Opened::Reader(r) => Ok(r),
        Opened::Writer(_) => Err(DataFusionError::Internal("a read opened a writer".into())),
    }
}

/// `cannot read table 't': ...`, with a hint.
fn failure(
    table: &ConnectionTable,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> DataFusionError {
    Transfer::Read.failure(table, message, hint)
}
