//! Rows into messages for a sink: each row encoded with the table's format
//! (`RowEncoder`), with its key (and field) taken from the writer's key (and field)
//! columns when it names them.
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
    field: Option<String>,
}

impl<'a> MessageEncoder<'a> {
    pub(crate) fn new(
        table: &'a ConnectionTable,
        key: Option<&str>,
        field: Option<&str>,
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
            })
            .collect())
    }

    /// A named column's values as text (NULLs stay NULL); `None` when none is named.
    fn texts(&self, batch: &RecordBatch, column: Option<&str>) -> Result<Option<StringArray>> {
        match column {
            Some(c) => self.text_column(batch, c).map(Some),
            None => Ok(None),
        }
    }

    fn text_column(&self, batch: &RecordBatch, column: &str) -> Result<StringArray> {
        let Ok(index) = batch.schema().index_of(column) else {
            return Err(Transfer::Write.failure(
                self.table,
                format!(
                    "the column '{column}' the sink keys rows by is not among the rows written"
                ),
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
