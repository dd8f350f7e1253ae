//! [`RowAssembler`]: raw messages made into rows of a connection table: the table's
//! `BatchDecoder`, then its METADATA columns, its virtual columns and a projection. A
//! scan assembles what its reader reads; a lookup join, the values its keys fetch.

use super::changelog::Changelog;
use super::connect::Transfer;
use crate::sample_rows::{reason, with_metadata};
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, TimestampNanosecondArray,
};
use datafusion::arrow::compute::{cast, filter, filter_record_batch};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_expr::PhysicalExpr;
use std::sync::Arc;
use tributary_connectors::probe::SampledMessage;
use tributary_connectors::source::now_nanos;
use tributary_formats::{BatchDecoder, CHANGE_COLUMN};
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
    /// The table's event time and watermark, when it declares them: rows behind the
    /// watermark are late and dropped.
    pub lateness: Option<Lateness>,
    /// Where the hidden `_timestamp` column is and what fills it, when the query sees it.
    pub implicit_time: Option<ImplicitTime>,
}

/// The hidden `_timestamp` column of a scan: its place in `full_schema`, and its source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ImplicitTime {
    pub at: usize,
    /// The declared event-time column's place in `full_schema`, whose values it takes;
    /// `None`: each record's own time, or the time it was read.
    pub declared: Option<usize>,
}

/// `WATERMARK FOR time AS expr`: the event-time column's place in `full_schema`, and the
/// watermark expression over the full row (the column itself when no `AS` is given).
#[derive(Debug, Clone)]
pub(crate) struct Lateness {
    pub time: usize,
    pub watermark: Arc<dyn PhysicalExpr>,
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
    /// `shape.full_schema` with the columns left undecoded made nullable, since they come
    /// out NULL before the projection drops them.
    working_schema: SchemaRef,
    decoder: BatchDecoder,
    /// Decode message by message, to know each row's message (for its metadata, or for
    /// the caller).
    per_message: bool,
    transfer: Transfer,
    /// The watermark so far (the largest the rows read have made it), in the time
    /// column's unit.
    watermark: Option<i64>,
    /// For a table of changes (Debezium) read by a scan: the rows they leave live, which
    /// come out when the read ends ([`RowAssembler::take_changed_rows`]).
    changelog: Option<Changelog>,
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
        // Every declared column is decoded, whatever the query projects: a message is bad
        // data (failed or dropped, as `bad_data` says) by its whole row, so `count(*)`
        // counts the rows that `SELECT *` shows.
        let working_schema = shape.full_schema.clone();
        // A record's own time is known by its message.
        let message_times = shape.implicit_time.is_some_and(|t| t.declared.is_none());
        let per_message = track_sources
            || message_times
            || table.schema.fields.iter().any(|f| f.metadata_key.is_some());
        let changelog = match transfer {
            Transfer::Read => Changelog::of(&table, &shape.full_schema)?,
            Transfer::Write | Transfer::Lookup => None,
        };
        Ok(Self {
            table,
            shape,
            working_schema,
            decoder,
            per_message,
            transfer,
            watermark: None,
            changelog,
        })
    }

    /// Whether rows come out only when the read ends (a table of changes), so messages
    /// read make no rows until then.
    pub(crate) fn accumulates(&self) -> bool {
        self.changelog.is_some()
    }

    /// The rows a table of changes leaves live, projected, once; `None` for other tables.
    pub(crate) fn take_changed_rows(&mut self) -> Result<Option<RecordBatch>> {
        let Some(log) = self.changelog.take() else {
            return Ok(None);
        };
        match log.into_rows()? {
            Some(full) => Ok(Some(self.project(full)?)),
            None => Ok(None),
        }
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
        let (physical, changes) = split_changes(physical)?;
        let stored = with_metadata(&self.table, &physical, messages, &sources)
            .map_err(|e| DataFusionError::Execution(e.to_string()))?;
        let times = self.record_times(messages, &sources);
        let (full, changes) = self.full_rows(&stored, times, changes)?;
        if let (Some(log), Some(changes)) = (&mut self.changelog, changes) {
            log.apply(full, &changes)?;
            return Ok(None);
        }
        Ok(Some(Rows {
            batch: self.project(full)?,
            sources,
        }))
    }

    fn project(&self, full: RecordBatch) -> Result<RecordBatch> {
        match &self.shape.projection {
            Some(p) => Ok(full.project(p)?),
            None => Ok(full),
        }
    }

    /// Each row's own time, when the query sees `_timestamp` and the table declares no
    /// event time: its message's, or the time the messages were read (now).
    fn record_times(&self, messages: &[SampledMessage], sources: &[usize]) -> Option<ArrayRef> {
        let time = self.shape.implicit_time?;
        if time.declared.is_some() {
            return None;
        }
        let read_at = now_nanos();
        let times: TimestampNanosecondArray = sources
            .iter()
            .map(|i| {
                Some(
                    messages
                        .get(*i)
                        .and_then(|m| m.event_time)
                        .unwrap_or(read_at),
                )
            })
            .collect();
        Some(Arc::new(times))
    }

    /// The stored columns plus the virtual ones and `_timestamp` (`times`, when the rows
    /// bring their own), in the table's order, without late rows (and the change kinds
    /// of the rows kept).
    fn full_rows(
        &mut self,
        stored: &RecordBatch,
        times: Option<ArrayRef>,
        mut changes: Option<StringArray>,
    ) -> Result<(RecordBatch, Option<StringArray>)> {
        let shape = &self.shape;
        let rows = stored.num_rows();
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(shape.full_schema.fields().len());
        let mut next_stored = 0;
        let time_at = shape.implicit_time.map(|t| t.at);
        for i in 0..self.working_schema.fields().len() {
            if Some(i) == time_at {
                // Filled below, once every column it may copy is in place.
                columns.push(datafusion::arrow::array::new_null_array(
                    self.working_schema.field(i).data_type(),
                    rows,
                ));
                continue;
            }
            match shape.virtuals.iter().find(|(at, _)| *at == i) {
                Some((_, expr)) => columns.push(expr.evaluate(stored)?.into_array(rows)?),
                None => {
                    columns.push(stored.column(next_stored).clone());
                    next_stored += 1;
                }
            }
        }
        if let Some(time) = shape.implicit_time {
            columns[time.at] = match (time.declared, times) {
                (Some(declared), _) => cast(
                    &columns[declared],
                    self.working_schema.field(time.at).data_type(),
                )?,
                (None, Some(times)) => times,
                (None, None) => {
                    return Err(DataFusionError::Internal(
                        "the rows' own times were not read".into(),
                    ));
                }
            };
        }
        let mut full = RecordBatch::try_new(self.working_schema.clone(), columns)?;
        if let Some(lateness) = &shape.lateness {
            let (on_time, watermark) = on_time(&full, lateness, self.watermark)?;
            self.watermark = watermark;
            if on_time.false_count() > 0 {
                full = filter_record_batch(&full, &on_time)?;
                if let Some(c) = &changes {
                    let kept = filter(c, &on_time)?;
                    changes = kept.as_any().downcast_ref::<StringArray>().cloned();
                }
            }
        }
        Ok((full, changes))
    }
}

/// The decoded rows without their `_change` column, and its values (a Debezium table's).
fn split_changes(physical: RecordBatch) -> Result<(RecordBatch, Option<StringArray>)> {
    let Ok(at) = physical.schema().index_of(CHANGE_COLUMN) else {
        return Ok((physical, None));
    };
    let changes = physical
        .column(at)
        .as_any()
        .downcast_ref::<StringArray>()
        .cloned();
    let keep: Vec<usize> = (0..physical.num_columns()).filter(|i| *i != at).collect();
    Ok((physical.project(&keep)?, changes))
}

/// Which rows are on time, in arrival order: a row is late when its event time is behind
/// the watermark the rows before it made (the largest watermark value so far), as a
/// streaming engine that advances the watermark with every record would judge it. A row
/// without an event time is kept. Also the watermark after the batch.
fn on_time(
    full: &RecordBatch,
    lateness: &Lateness,
    mut watermark: Option<i64>,
) -> Result<(BooleanArray, Option<i64>)> {
    let rows = full.num_rows();
    let as_i64 = |a: ArrayRef| -> Result<Int64Array> {
        let a = cast(&a, &DataType::Int64)?;
        a.as_any()
            .downcast_ref::<Int64Array>()
            .cloned()
            .ok_or_else(|| DataFusionError::Internal("an event time is not a timestamp".into()))
    };
    let times = as_i64(full.column(lateness.time).clone())?;
    let marks = as_i64(lateness.watermark.evaluate(full)?.into_array(rows)?)?;
    let mut keep = Vec::with_capacity(rows);
    for row in 0..rows {
        let late = times.is_valid(row) && watermark.is_some_and(|w| times.value(row) < w);
        keep.push(!late);
        if !late && marks.is_valid(row) {
            let m = marks.value(row);
            watermark = Some(watermark.map_or(m, |w| w.max(m)));
        }
    }
    Ok((BooleanArray::from(keep), watermark))
}
