//! Rows into messages for a sink: each row encoded with the table's format
//! (`RowEncoder`), with its key taken from the writer's key column when it names one.
//! A table without a format (blackhole) gets empty messages, one per row.

use super::connect::Transfer;
use datafusion::arrow::array::{Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::error::Result;
use tributary_connectors::sink::OutMessage;
use tributary_formats::RowEncoder;
use tributary_types::ConnectionTable;

/// A table's encoder.
#[derive(Debug)]
pub(crate) struct MessageEncoder<'a> {
    table: &'a ConnectionTable,
    rows: Option<RowEncoder>,
    key: Option<String>,
}

impl<'a> MessageEncoder<'a> {
    pub(crate) fn new(table: &'a ConnectionTable, key: Option<&str>) -> Result<Self> {
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
        })
    }

    /// One message per row of `batch`.
    pub(crate) fn encode(&self, batch: &RecordBatch) -> Result<Vec<OutMessage>> {
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
        let keys = match &self.key {
            Some(column) => Some(self.keys(batch, column)?),
            None => None,
        };
        Ok(payloads
            .into_iter()
            .enumerate()
            .map(|(i, payload)| OutMessage {
                payload,
                key: keys
                    .as_ref()
                    .and_then(|k| (!k.is_null(i)).then(|| k.value(i).as_bytes().to_vec())),
            })
            .collect())
    }

    /// The key column's values as text (NULL keys stay NULL).
    fn keys(&self, batch: &RecordBatch, column: &str) -> Result<StringArray> {
        let Ok(index) = batch.schema().index_of(column) else {
            return Err(Transfer::Write.failure(
                self.table,
                format!("the key column '{column}' is not among the rows written"),
                "Name one of the table's columns as its key field.",
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
