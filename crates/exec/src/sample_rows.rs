//! Sampled messages as rows, what `TEST TABLE` shows: each message decoded with the table's
//! format (the same `BatchDecoder` sources use), beside the values of its METADATA
//! columns taken from the message (topic, partition, offset, key, ...), in the table's
//! column order. A message that does not decode is a failure naming it.

use datafusion::arrow::array::{
    ArrayRef, BinaryBuilder, Int32Builder, Int64Builder, RecordBatch, StringBuilder,
};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use std::sync::Arc;
use tributary_connectors::probe::{MetadataValue, SampledMessage};
use tributary_formats::BatchDecoder;
use tributary_types::{ConnectionTable, FieldType, SourceField};

/// The decoded sample rows, and why each message that did not decode failed.
#[derive(Debug)]
pub struct Decoded {
    pub batch: Option<RecordBatch>,
    pub failures: Vec<(usize, String)>,
}

/// Decode each message with the table's format and schema, one by one, so every failure
/// names its message; then add the metadata columns.
pub fn decode(table: &ConnectionTable, messages: &[SampledMessage]) -> Result<Decoded, String> {
    let mut schema = table.schema.clone();
    schema.bad_data = None;
    let mut decoder = BatchDecoder::new(&schema).map_err(|e| e.to_string())?;
    let mut batches = Vec::new();
    // For each decoded row, the message it came from (framing can make several rows).
    let mut sources: Vec<usize> = Vec::new();
    let mut failures = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let pushed = decoder.push(&m.payload).and_then(|()| decoder.finish());
        match pushed {
            Ok(Some(b)) => {
                sources.extend(std::iter::repeat_n(i, b.num_rows()));
                batches.push(b);
            }
            Ok(None) => {}
            Err(e) => failures.push((i + 1, reason(&e))),
        }
    }
    if batches.is_empty() {
        return Ok(Decoded {
            batch: None,
            failures,
        });
    }
    let physical = datafusion::arrow::compute::concat_batches(&decoder.schema(), &batches)
        .map_err(|e| e.to_string())?;
    let batch = with_metadata(table, &physical, messages, &sources)?;
    Ok(Decoded {
        batch: Some(batch),
        failures,
    })
}

/// The decoded physical columns and the metadata columns, in the table's field order.
pub(crate) fn with_metadata(
    table: &ConnectionTable,
    physical: &RecordBatch,
    messages: &[SampledMessage],
    sources: &[usize],
) -> Result<RecordBatch, String> {
    if table.schema.fields.iter().all(|f| f.metadata_key.is_none()) {
        return Ok(physical.clone());
    }
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for f in &table.schema.fields {
        match &f.metadata_key {
            None => {
                let Some(i) = physical.schema().index_of(&f.name).ok() else {
                    continue;
                };
                fields.push(physical.schema().field(i).clone());
                columns.push(physical.column(i).clone());
            }
            Some(key) => {
                fields.push(f.to_arrow());
                columns.push(metadata_column(f, key, messages, sources));
            }
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    RecordBatch::try_new(schema, columns).map_err(|e| e.to_string())
}

/// One metadata column: each row's message's value for `key`, NULL where it has none or
/// its type is not the column's.
fn metadata_column(
    field: &SourceField,
    key: &str,
    messages: &[SampledMessage],
    sources: &[usize],
) -> ArrayRef {
    let value = |row: usize| {
        messages[sources[row]]
            .metadata
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    };
    let rows = sources.len();
    match field.field_type {
        FieldType::Int32 => {
            let mut b = Int32Builder::with_capacity(rows);
            for row in 0..rows {
                b.append_option(match value(row) {
                    Some(MetadataValue::Int(v)) => Some(*v),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        FieldType::Int64 => {
            let mut b = Int64Builder::with_capacity(rows);
            for row in 0..rows {
                b.append_option(match value(row) {
                    Some(MetadataValue::BigInt(v)) => Some(*v),
                    Some(MetadataValue::Int(v)) => Some(i64::from(*v)),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        FieldType::Bytes => {
            let mut b = BinaryBuilder::with_capacity(rows, 0);
            for row in 0..rows {
                b.append_option(match value(row) {
                    Some(MetadataValue::Bytes(v)) => Some(v.as_slice()),
                    Some(MetadataValue::Text(v)) => Some(v.as_bytes()),
                    _ => None,
                });
            }
            Arc::new(b.finish())
        }
        // TEXT, and any type a metadata key is not declared as (refused at CREATE).
        _ => {
            let mut b = StringBuilder::with_capacity(rows, 0);
            for row in 0..rows {
                b.append_option(match value(row) {
                    Some(MetadataValue::Text(v)) => Some(v.to_string()),
                    Some(MetadataValue::Int(v)) => Some(v.to_string()),
                    Some(MetadataValue::BigInt(v)) => Some(v.to_string()),
                    Some(MetadataValue::Bytes(v)) => Some(String::from_utf8_lossy(v).into_owned()),
                    None => None,
                });
            }
            Arc::new(b.finish())
        }
    }
}

pub(crate) fn reason(e: &tributary_formats::DecodeError) -> String {
    match e {
        tributary_formats::DecodeError::BadRecord { reason, .. } => reason.clone(),
        other => other.to_string(),
    }
}
