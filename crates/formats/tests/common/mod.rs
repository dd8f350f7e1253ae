//! Helpers shared by the format tests.

use arrow_array::RecordBatch;
use arrow_cast::display::{ArrayFormatter, FormatOptions};

/// Each cell of row `i`, as `name=value` in Arrow's display form (`NULL` for nulls).
pub fn row(batch: &RecordBatch, i: usize) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| {
            let cell = ArrayFormatter::try_new(c.as_ref(), &options)
                .map(|fmt| fmt.value(i).to_string())
                .unwrap_or_else(|e| format!("<{e}>"));
            format!("{}={cell}", f.name())
        })
        .collect()
}
