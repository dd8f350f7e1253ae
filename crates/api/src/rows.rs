//! Arrow record batches as JSON for REST answers: objects by column name (sample rows),
//! or arrays in column order (`POST /sql`, where names may repeat).

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema};
use serde_json::Value;
use std::sync::Arc;

/// Each row as a JSON object keyed by column name.
pub(crate) fn rows_as_objects(batches: &[RecordBatch]) -> Result<Vec<Value>, String> {
    let mut buf = Vec::new();
    {
        let mut w = datafusion::arrow::json::ArrayWriter::new(&mut buf);
        for b in batches {
            w.write(b).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
    }
    if buf.is_empty() {
        return Ok(vec![]);
    }
    match serde_json::from_slice(&buf) {
        Ok(Value::Array(rows)) => Ok(rows),
        Ok(_) => Ok(vec![]),
        Err(e) => Err(e.to_string()),
    }
}

/// Each row as a JSON array in column order (NULL as `null`), at most `limit` rows;
/// whether rows were left out.
pub(crate) fn rows_as_arrays(
    batches: &[RecordBatch],
    limit: usize,
) -> Result<(Vec<Vec<Value>>, bool), String> {
    let mut rows = Vec::new();
    let mut truncated = false;
    for batch in batches {
        if rows.len() >= limit {
            truncated |= batch.num_rows() > 0;
            continue;
        }
        let take = (limit - rows.len()).min(batch.num_rows());
        truncated |= take < batch.num_rows();
        let batch = batch.slice(0, take);
        // Positional names, so repeated column names cannot collide.
        let fields: Vec<Field> = batch
            .schema()
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| f.as_ref().clone().with_name(format!("c{i}")))
            .collect();
        let renamed = RecordBatch::try_new(Arc::new(Schema::new(fields)), batch.columns().to_vec())
            .map_err(|e| e.to_string())?;
        let width = renamed.num_columns();
        for object in rows_as_objects(&[renamed])? {
            let mut row = vec![Value::Null; width];
            if let Value::Object(map) = object {
                for (k, v) in map {
                    if let Some(i) = k.strip_prefix('c').and_then(|n| n.parse::<usize>().ok())
                        && i < width
                    {
                        row[i] = v;
                    }
                }
            }
            rows.push(row);
        }
    }
    Ok((rows, truncated))
}
