//! Reading a connection table for a query: the connector's reader (opened through a
//! probe, as `TEST TABLE` connects), then the table's rows as a [`RowAssembler`] makes
//! them (decoder, METADATA and virtual columns, projection), as a stream of batches that
//! ends with the source, at the pushed-down `LIMIT`, or at the session's preview bounds.
//! Dropping the stream drops the reader, which closes its connections.
//!
//! A source split by partition (Kafka partitions, a directory's files) is read in
//! several streams, one per scan partition, each with a reader of its share of the
//! source's partitions; the streams draw on one [`Budget`], so a `LIMIT` or
//! `preview.max_rows` bounds their rows together.

use super::catalog::SessionShared;
use super::connect::{Opened, Transfer, connect};
use super::rows::{RowAssembler, RowShape, Rows};
use crate::preview_bounds::PreviewOptions;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::SendableRecordBatchStream;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Notify;
use tokio::time::Instant;
use tributary_connectors::probe::Split;
use tributary_connectors::source::SourceReader;
use tributary_types::ConnectionTable;

/// What a scan reads and produces.
#[derive(Debug)]
pub(crate) struct ScanSpec {
    pub table: Arc<ConnectionTable>,
    pub shared: Arc<SessionShared>,
    /// How many streams read the source (each a share of its partitions).
    pub partitions: usize,
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

/// The rows a scan's streams may still produce together: the smaller of its pushed-down
/// `LIMIT` and `preview.max_rows`. When it is spent, every stream ends, including those
/// waiting for messages that may never come.
#[derive(Debug)]
pub(crate) struct Budget {
    left: AtomicUsize,
    spent: Notify,
}

impl Budget {
    /// The budget of a scan of `spec` under `preview`; `None` when nothing bounds it.
    pub(crate) fn of(spec: &ScanSpec, preview: &PreviewOptions) -> Option<Arc<Budget>> {
        let cap = match (spec.limit, preview.max_rows) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        cap.map(|c| {
            Arc::new(Budget {
                left: AtomicUsize::new(c),
                spent: Notify::new(),
            })
        })
    }

    fn left(&self) -> usize {
        self.left.load(Ordering::Acquire)
    }

    /// Take up to `n` rows from the budget; how many were granted.
    fn take(&self, n: usize) -> usize {
        let granted = match self
            .left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                Some(left - left.min(n))
            }) {
            Ok(left) | Err(left) => left.min(n),
        };
        if self.left() == 0 {
            self.spent.notify_waiters();
        }
        granted
    }

    /// Resolves once the budget is spent.
    async fn until_spent(&self) {
        loop {
            let notified = self.spent.notified();
            tokio::pin!(notified);
            // Registered before the check, so a notification between the two is kept.
            notified.as_mut().enable();
            if self.left() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Resolves when `budget` is spent; never without one.
async fn until_spent(budget: Option<&Budget>) {
    match budget {
        Some(b) => b.until_spent().await,
        None => std::future::pending().await,
    }
}

/// Resolves at `deadline`; never without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Stream `partition` of a scan, under the session's preview bounds and the scan's
/// shared `budget`; `batch_size` messages are read at a time.
pub(crate) fn scan_stream(
    spec: Arc<ScanSpec>,
    partition: usize,
    budget: Option<Arc<Budget>>,
    preview: &PreviewOptions,
    batch_size: usize,
) -> Result<SendableRecordBatchStream> {
    let schema = spec.output_schema()?;
    let timeout = preview.timeout.map(|t| t.0);
    let split = Split {
        index: partition,
        count: spec.partitions,
    };
    let state = State::Opening {
        spec,
        split,
        budget,
        timeout,
        batch_size: batch_size.max(1),
    };
    let stream = futures::stream::try_unfold(state, step);
    Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
}

enum State {
    Opening {
        spec: Arc<ScanSpec>,
        split: Split,
        budget: Option<Arc<Budget>>,
        timeout: Option<std::time::Duration>,
        batch_size: usize,
    },
    Reading(Box<Reading>),
    /// The last rows went out.
    Ended,
}

struct Reading {
    spec: Arc<ScanSpec>,
    reader: Box<dyn SourceReader>,
    rows: RowAssembler,
    budget: Option<Arc<Budget>>,
    deadline: Option<Instant>,
    batch_size: usize,
}

async fn step(state: State) -> Result<Option<(RecordBatch, State)>> {
    let mut reading = match state {
        State::Opening {
            spec,
            split,
            budget,
            timeout,
            batch_size,
        } => {
            let deadline = timeout.map(|t| Instant::now() + t);
            if budget.as_ref().is_some_and(|b| b.left() == 0) {
                return Ok(None);
            }
            let reader = open(&spec, split).await?;
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
                budget,
                deadline,
                batch_size,
            })
        }
        State::Reading(r) => r,
        State::Ended => return Ok(None),
    };
    loop {
        let want = match &reading.budget {
            Some(b) if b.left() == 0 => return end(reading),
            Some(b) => reading.batch_size.min(b.left()),
            None => reading.batch_size,
        };
        let (budget, deadline) = (reading.budget.clone(), reading.deadline);
        let read = tokio::select! {
            read = reading.reader.next_batch(want) => read,
            // Another stream of the scan spent the budget, or the preview's time is up:
            // the source ends here.
            () = until_spent(budget.as_deref()) => return end(reading),
            () = until(deadline) => return end(reading),
        };
        let messages = match read {
            Ok(Some(m)) => m,
            Ok(None) => return end(reading),
            Err(e) => return Err(failure(&reading.spec.table, e.message, e.hint)),
        };
        if reading.rows.accumulates() {
            // A table of changes makes its rows at the end: the bound counts changes.
            reading.rows.rows(&messages)?;
            if let Some(b) = &reading.budget {
                b.take(messages.len());
            }
            continue;
        }
        let Some(Rows { batch, .. }) = reading.rows.rows(&messages)? else {
            continue;
        };
        // Every row was late or dropped: the source goes on (an empty batch is no end).
        if batch.num_rows() == 0 {
            continue;
        }
        let batch = match &reading.budget {
            Some(b) => {
                let granted = b.take(batch.num_rows());
                if granted == 0 {
                    return Ok(None);
                }
                batch.slice(0, granted)
            }
            None => batch,
        };
        if batch.num_rows() > 0 {
            return Ok(Some((batch, State::Reading(reading))));
        }
    }
}

/// The read is over: a table of changes hands out the rows they leave live (whole,
/// whatever the budget), any other ends here.
fn end(mut reading: Box<Reading>) -> Result<Option<(RecordBatch, State)>> {
    match reading.rows.take_changed_rows()? {
        Some(batch) if batch.num_rows() > 0 => Ok(Some((batch, State::Ended))),
        _ => Ok(None),
    }
}

/// The most messages the reader may stop at: the pushed-down `LIMIT` when every message
/// makes at least one row; none when rows can be dropped after they are read (late rows
/// behind the watermark, bad data dropped, a table of changes), where a reader that
/// stopped at `LIMIT` messages would give fewer rows than a batch read. The scan's
/// budget, which counts rows, ends the read then.
fn reader_limit(spec: &ScanSpec) -> usize {
    let drops_rows = spec.shape.lateness.is_some()
        || spec.table.schema.bad_data == Some(tributary_types::BadData::Drop)
        || spec.table.is_updating();
    match spec.limit {
        Some(limit) if !drops_rows => limit,
        _ => usize::MAX,
    }
}

/// Open the table's reader as its connection test connects.
async fn open(spec: &ScanSpec, split: Split) -> Result<Box<dyn SourceReader>> {
    let limit = reader_limit(spec);
    match connect(&spec.shared, &spec.table, Transfer::Read, limit, split).await? {
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
