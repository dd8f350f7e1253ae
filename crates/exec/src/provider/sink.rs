//! Rows into messages for a sink: each row encoded with the table's format
//! (`RowEncoder`), with its key (and field) taken from the writer's key (and field)
//! columns when it names them.
//! A table without a format (blackhole) gets empty messages, one per row. For a sink
//! that partitions (filesystem), each directory's rows are encoded together (a parquet
//! file holds one directory's rows) and their messages name the directory.

use super::connect::Transfer;
use crate::windows::EVENT_TIME_METADATA;
use datafusion::arrow::array::{Array, Int64Array, RecordBatch, StringArray, UInt32Array};
use datafusion::arrow::compute::{cast, take_record_batch};
use datafusion::arrow::datatypes::{DataType, TimeUnit};
use datafusion::error::{DataFusionError, Result};
use std::collections::HashMap;
use tributary_connectors::file_layout::PartitionSpec;
use tributary_connectors::sink::OutMessage;
use tributary_formats::RowEncoder;
use tributary_types::ConnectionTable;

/// A table's encoder.
#[derive(Debug)]
pub(crate) struct MessageEncoder<'a> {
    table: &'a ConnectionTable,
    rows: Option<RowEncoder>,
    key: Option<String>,
    field: Option<String>,
    partitioning: Option<PartitionSpec>,
}

impl<'a> MessageEncoder<'a> {
    pub(crate) fn new(
        table: &'a ConnectionTable,
        key: Option<&str>,
        field: Option<&str>,
        partitioning: Option<PartitionSpec>,
    ) -> Result<Self> {
        let rows = match &table.schema.format {
            Some(format) => Some(RowEncoder::new(format, None).map_err(|e| {
                Transfer::Write.failure(table, e.to_string(), "Check the table's format options.")
            })?),
            None => None,
        };
        Ok(Self {
            table,
            rows,
            key: key.map(str::to_string),
            field: field.map(str::to_string),
            partitioning,
        })
    }

    /// One message per row of `batch` (for whole-file formats, per batch), grouped by
    /// directory when the sink partitions.
    pub(crate) fn encode(&self, batch: &RecordBatch) -> Result<Vec<OutMessage>> {
        let Some(spec) = &self.partitioning else {
            return self.encode_rows(batch);
        };
        // Rows that carry their source's event time are placed by it, others by now.
        let now = spec.time_directory_now();
        let event_times = match &spec.time_pattern {
            Some(_) => event_nanos(batch)?,
            None => None,
        };
        let columns = spec
            .fields
            .iter()
            .map(|f| self.text_column(batch, f, "partitions rows by"))
            .collect::<Result<Vec<_>>>()?;
        // Each directory's rows, in the order directories first appear.
        let mut directories: Vec<(String, Vec<u32>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for row in 0..batch.num_rows() {
            let values: Vec<Option<&str>> = columns
                .iter()
                .map(|c| (!c.is_null(row)).then(|| c.value(row)))
                .collect();
            let time = match &event_times {
                Some(t) if t.is_valid(row) => spec.time_directory_at(t.value(row)),
                _ => now.clone(),
            };
            let directory = spec.directory(&time, &values);
            let at = *index.entry(directory.clone()).or_insert_with(|| {
                directories.push((directory, Vec::new()));
                directories.len() - 1
            });
            let row = u32::try_from(row).map_err(|_| {
                DataFusionError::Execution("a batch of more than 4 billion rows".into())
            })?;
            directories[at].1.push(row);
        }
        let mut out = Vec::with_capacity(batch.num_rows());
        for (directory, rows) in directories {
            let part = take_record_batch(batch, &UInt32Array::from(rows))?;
            let mut messages = self.encode_rows(&part)?;
            for m in &mut messages {
                m.partition = Some(directory.clone());
            }
            out.extend(messages);
        }
        Ok(out)
    }

    /// The messages of `batch`'s rows, with their keys and fields.
    fn encode_rows(&self, batch: &RecordBatch) -> Result<Vec<OutMessage>> {
        let payloads = match &self.rows {
            Some(encoder) => encoder.encode(batch).map_err(|e| {
                Transfer::Write.failure(
                    self.table,
                    e.to_string(),
                    "Check the table's format and columns.",
                )
            })?,
            None => vec![Vec::new(); batch.num_rows()],
        };
        let keys = self.texts(batch, self.key.as_deref())?;
        let fields = self.texts(batch, self.field.as_deref())?;
        let at = |column: &Option<StringArray>, i: usize| {
            column
                .as_ref()
                .and_then(|c| (!c.is_null(i)).then(|| c.value(i).as_bytes().to_vec()))
        };
        Ok(payloads
            .into_iter()
            .enumerate()
            .map(|(i, payload)| OutMessage {
                payload,
                key: at(&keys, i),
                field: at(&fields, i),
                partition: None,
            })
            .collect())
    }

    /// A named column's values as text (NULLs stay NULL); `None` when none is named.
    fn texts(&self, batch: &RecordBatch, column: Option<&str>) -> Result<Option<StringArray>> {
        match column {
            Some(c) => self.text_column(batch, c, "keys rows by").map(Some),
            None => Ok(None),
        }
    }

    /// A column's values as text; `purpose` says what the sink does with it.
    fn text_column(&self, batch: &RecordBatch, column: &str, purpose: &str) -> Result<StringArray> {
        let Ok(index) = batch.schema().index_of(column) else {
            return Err(Transfer::Write.failure(
                self.table,
                format!("the column '{column}' the sink {purpose} is not among the rows written"),
                "Name one of the table's columns.",
            ));
        };
        let text = cast(batch.column(index), &DataType::Utf8)?;
        Ok(text
            .as_any()
            .downcast_ref::<StringArray>()
            .cloned()
            .unwrap_or_else(|| StringArray::from(vec![None::<&str>; batch.num_rows()])))
    }
}

/// The event times of `batch`'s rows in nanoseconds, when a column carries its source's
/// event time (see [`EVENT_TIME_METADATA`]).
fn event_nanos(batch: &RecordBatch) -> Result<Option<Int64Array>> {
    let schema = batch.schema();
    let Some(at) = schema
        .fields()
        .iter()
        .position(|f| f.metadata().contains_key(EVENT_TIME_METADATA))
    else {
        return Ok(None);
    };
    if !matches!(schema.field(at).data_type(), DataType::Timestamp(_, _)) {
        return Ok(None);
    }
    let nanos = cast(
        batch.column(at),
        &DataType::Timestamp(TimeUnit::Nanosecond, None),
    )?;
    let nanos = cast(&nanos, &DataType::Int64)?;
    Ok(nanos.as_any().downcast_ref::<Int64Array>().cloned())
}
