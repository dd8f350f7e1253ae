//! Result sets of text that statements answer with (SHOW, DESCRIBE, TEST): one place
//! builds them, so every cell passes `redact_text`, which hides credentials inside any
//! value (URL userinfo, `password=...` pairs).

use datafusion::arrow::array::{ArrayRef, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use std::sync::Arc;
use tributary_types::redact_text;

/// A batch of text columns, every cell redacted of embedded credentials.
pub fn text_batch(columns: &[&str], rows: Vec<Vec<String>>) -> RecordBatch {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(*c, DataType::Utf8, false))
            .collect::<Vec<_>>(),
    ));
    let arrays: Vec<ArrayRef> = (0..columns.len())
        .map(|i| {
            Arc::new(StringArray::from(
                rows.iter()
                    .map(|r| redact_text(&r[i]).into_owned())
                    .collect::<Vec<_>>(),
            )) as ArrayRef
        })
        .collect();
    // The schema and arrays are built together above, so they always agree.
    RecordBatch::try_new(schema.clone(), arrays).unwrap_or_else(|_| RecordBatch::new_empty(schema))
}
