//! Reading a connection table for a query: the connector's reader (opened through a
//! probe, as `TEST TABLE` connects), then the table's rows as a [`RowAssembler`] makes
//! them (decoder, METADATA and virtual columns, projection), as a stream of batches that
//! ends with the source, at the pushed-down `LIMIT`, or at the session's preview bounds.
//! Dropping the stream drops the reader, which closes its connections.

use super::catalog::SessionShared;
use super::connect::{Opened, Transfer, connect};
use super::rows::{RowAssembler, RowShape, Rows};
use crate::preview::PreviewOptions;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use std::sync::Arc;
use tokio::time::Instant;
use tributary_connectors::source::SourceReader;
use tributary_types::ConnectionTable;

/// What a scan reads and produces.
#[derive(Debug)]
pub(crate) struct ScanSpec {
    pub table: Arc<ConnectionTable>,
    pub shared: Arc<SessionShared>,
    /// The columns the query reads.
    pub shape: RowShape,
    /// The most rows the query needs (a pushed-down `LIMIT`).
    pub limit: Option<usize>,
}

impl ScanSpec {
    /// The schema of the batches the scan produces.
    pub(crate) fn output_schema(&self) -> Result<SchemaRef> {
        self.shape.output_schema()
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
    rows: RowAssembler,
    emitted: usize,
    cap: Option<usize>,
    deadline: Option<Instant>,
    batch_size: usize,
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
            let rows = RowAssembler::new(
                spec.table.clone(),
                spec.shape.clone(),
                reader.generated_format(),
                false,
                Transfer::Read,
            )?;
            Box::new(Reading {
                spec,
                reader,
                rows,
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
        let Some(Rows { batch, .. }) = reading.rows.rows(&messages)? else {
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

/// Open the table's reader as its connection test connects.
async fn open(spec: &ScanSpec) -> Result<Box<dyn SourceReader>> {
    let limit = spec.limit.unwrap_or(usize::MAX);
    match connect(&spec.shared, &spec.table, Transfer::Read, limit).await? {
        Opened::Reader(r) => Ok(r),
        _ => Err(DataFusionError::Internal("a read opened no reader".into())),
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
