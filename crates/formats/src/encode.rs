//! Arrow `RecordBatch`es → one message per row, for sinks: json (RFC 3339 or `unix_millis`
//! timestamps, JSON columns embedded as JSON, decimal encodings, optional Confluent wire
//! header; Debezium change events for debezium_json), avro (see
//! `avro_encode`), protobuf (`proto_encode`), raw_string and raw_bytes.

use crate::avro_encode::{AvroWriter, container_file};
use crate::debezium::{CHANGE_COLUMN, envelopes};
use crate::parquet_files::write_file;
use crate::proto_encode::ProtoWriter;
use crate::proto_schema::{find_message, parse_descriptor_set};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StringArray, StructArray};
use arrow_json::writer::{Encoder, EncoderFactory, EncoderOptions, NullableEncoder, make_encoder};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, TimeUnit};
use serde_json::value::RawValue;
use std::sync::Arc;
use tributary_types::{
    AvroFormat, DecimalEncoding, Format, JsonFormat, ParquetFormat, ProtobufFormat, TimestampFormat,
};

/// Why a batch could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The format cannot be written (yet), or the batch does not fit it.
    #[error("cannot encode rows: {0}")]
    Unsupported(String),
}

/// Encodes rows in a table's format.
#[derive(Debug)]
pub struct RowEncoder {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Json {
        options: EncoderOptions,
        /// Rows are wrapped in Debezium change events.
        debezium: bool,
        /// The Confluent wire header (magic byte and schema id), when registered.
        header: Option<[u8; 5]>,
    },
    RawString,
    RawBytes,
    Avro {
        writer: AvroWriter,
        framing: AvroFraming,
    },
    Parquet(ParquetFormat),
    Protobuf {
        writer: ProtoWriter,
        /// Bytes written before each message (the Confluent header and indexes).
        prefix: Vec<u8>,
        length_delimited: bool,
    },
}

#[derive(Debug)]
enum AvroFraming {
    /// The Confluent header, then the datum.
    Registry([u8; 5]),
    /// The datum alone.
    Datum,
    /// A one-record object container file, carrying its schema.
    Container(String),
}

impl RowEncoder {
    /// An encoder for `format`. `schema_id` is the registry id written in the Confluent
    /// header when the format asks for it.
    pub fn new(format: &Format, schema_id: Option<u32>) -> Result<Self, EncodeError> {
        let kind = match format {
            Format::Json(j) => json_kind(j, schema_id)?,
            Format::RawString {} => Kind::RawString,
            Format::RawBytes {} => Kind::RawBytes,
            Format::Avro(a) => avro_kind(a, schema_id)?,
            Format::Protobuf(p) => protobuf_kind(p, schema_id)?,
            Format::Parquet(p) => Kind::Parquet(p.clone()),
        };
        Ok(Self { kind })
    }

    /// One message per row of `batch`; for parquet, one file holding the whole batch.
    pub fn encode(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, EncodeError> {
        let err = |e: ArrowError| EncodeError::Unsupported(e.to_string());
        match &self.kind {
            Kind::RawString => Ok(value_column(batch, &DataType::Utf8)?
                .as_string::<i32>()
                .iter()
                .map(|v| v.unwrap_or_default().as_bytes().to_vec())
                .collect()),
            Kind::RawBytes => Ok(value_column(batch, &DataType::Binary)?
                .as_binary::<i32>()
                .iter()
                .map(|v| v.unwrap_or_default().to_vec())
                .collect()),
            Kind::Parquet(format) => {
                if batch.num_rows() == 0 {
                    return Ok(Vec::new());
                }
                Ok(vec![
                    write_file(format, batch).map_err(EncodeError::Unsupported)?,
                ])
            }
            Kind::Protobuf {
                writer,
                prefix,
                length_delimited,
            } => {
                let messages = writer.messages(batch).map_err(EncodeError::Unsupported)?;
                Ok(messages
                    .into_iter()
                    .map(|m| {
                        let mut out = prefix.clone();
                        if *length_delimited {
                            let mut n = m.len() as u64;
                            while n >= 0x80 {
                                out.push((n as u8) | 0x80);
                                n >>= 7;
                            }
                            out.push(n as u8);
                        }
                        out.extend_from_slice(&m);
                        out
                    })
                    .collect())
            }
            Kind::Avro { writer, framing } => {
                let datums = writer.datums(batch).map_err(EncodeError::Unsupported)?;
                Ok(match framing {
                    AvroFraming::Datum => datums,
                    AvroFraming::Registry(h) => datums
                        .into_iter()
                        .map(|d| [h.as_slice(), &d].concat())
                        .collect(),
                    AvroFraming::Container(schema) => {
                        datums.iter().map(|d| container_file(schema, d)).collect()
                    }
                })
            }
            Kind::Json {
                options,
                debezium,
                header,
            } => {
                let (rows, kinds) = if *debezium {
                    split_changes(batch).map_err(EncodeError::Unsupported)?
                } else {
                    (batch.clone(), None)
                };
                let mut out = json_rows(&rows, options).map_err(err)?;
                if *debezium {
                    let kinds: Option<Vec<&str>> = kinds
                        .as_ref()
                        .map(|k| (0..k.len()).map(|i| k.value(i)).collect());
                    out = envelopes(out, kinds).map_err(EncodeError::Unsupported)?;
                }
                if let Some(h) = header {
                    for m in &mut out {
                        m.splice(0..0, h.iter().copied());
                    }
                }
                Ok(out)
            }
        }
    }
}

/// Each row as a JSON object.
fn json_rows(batch: &RecordBatch, options: &EncoderOptions) -> Result<Vec<Vec<u8>>, ArrowError> {
    let rows = StructArray::from(batch.clone());
    let field: FieldRef = Arc::new(Field::new(
        "row",
        DataType::Struct(rows.fields().clone()),
        false,
    ));
    let mut encoder = make_encoder(&field, &rows, options)?;
    let mut out = Vec::with_capacity(rows.len());
    for i in 0..rows.len() {
        let mut message = Vec::with_capacity(128);
        encoder.encode(i, &mut message);
        out.push(message);
    }
    Ok(out)
}

/// The rows without their `_change` column, and its values (when the batch has one).
fn split_changes(batch: &RecordBatch) -> Result<(RecordBatch, Option<StringArray>), String> {
    let Ok(i) = batch.schema().index_of(CHANGE_COLUMN) else {
        return Ok((batch.clone(), None));
    };
    let kinds = batch
        .column(i)
        .as_string_opt::<i32>()
        .cloned()
        .ok_or("the _change column must be text")?;
    let mut rows = batch.clone();
    rows.remove_column(i);
    Ok((rows, Some(kinds)))
}

fn avro_kind(a: &AvroFormat, schema_id: Option<u32>) -> Result<Kind, EncodeError> {
    if a.into_unstructured_json {
        return Err(EncodeError::Unsupported(
            "unstructured Avro is read-only; sinks write records with the table's columns".into(),
        ));
    }
    let Some(schema) = &a.reader_schema else {
        return Err(EncodeError::Unsupported(
            "the table has no Avro schema to write with".into(),
        ));
    };
    let writer = AvroWriter::new(schema).map_err(EncodeError::Unsupported)?;
    let framing = if a.confluent_schema_registry {
        AvroFraming::Registry(confluent_header(schema_id.or(a.schema_id))?)
    } else if a.raw_datums {
        AvroFraming::Datum
    } else {
        AvroFraming::Container(schema.clone())
    };
    Ok(Kind::Avro { writer, framing })
}

fn protobuf_kind(p: &ProtobufFormat, schema_id: Option<u32>) -> Result<Kind, EncodeError> {
    let unsupported = |e: String| EncodeError::Unsupported(e);
    if p.into_unstructured_json {
        return Err(unsupported(
            "unstructured Protobuf is read-only; sinks write messages from the table's columns"
                .into(),
        ));
    }
    let descriptor = p
        .compiled_schema
        .as_ref()
        .ok_or_else(|| unsupported("the table has no compiled Protobuf descriptor set".into()))?;
    let name = p
        .message_name
        .as_deref()
        .ok_or_else(|| unsupported("the table names no Protobuf message".into()))?;
    let pool = parse_descriptor_set(descriptor).map_err(|e| unsupported(e.to_string()))?;
    let message = find_message(&pool, name).map_err(|e| unsupported(e.to_string()))?;
    let writer = ProtoWriter::new(message);
    let prefix = if p.confluent_schema_registry {
        let mut prefix = confluent_header(schema_id)?.to_vec();
        prefix.extend(writer.confluent_indexes());
        prefix
    } else {
        Vec::new()
    };
    Ok(Kind::Protobuf {
        writer,
        prefix,
        length_delimited: p.length_delimited,
    })
}

/// The Confluent wire-format header for a registered schema id.
fn confluent_header(id: Option<u32>) -> Result<[u8; 5], EncodeError> {
    match id {
        Some(id) => {
            let b = id.to_be_bytes();
            Ok([0, b[0], b[1], b[2], b[3]])
        }
        None => Err(EncodeError::Unsupported(
            "the Confluent wire format needs a schema id; none was registered".into(),
        )),
    }
}

fn json_kind(j: &JsonFormat, schema_id: Option<u32>) -> Result<Kind, EncodeError> {
    if j.unstructured {
        return Err(EncodeError::Unsupported(
            "unstructured JSON sinks write the 'value' column; use raw_string for that".into(),
        ));
    }
    let header = if j.confluent_schema_registry {
        Some(confluent_header(schema_id.or(j.schema_id))?)
    } else {
        None
    };
    let options = EncoderOptions::default()
        .with_timestamp_format("%Y-%m-%dT%H:%M:%S%.fZ".into())
        .with_encoder_factory(Arc::new(JsonColumns {
            unix_millis: j.timestamp_format == TimestampFormat::UnixMillis,
            decimals: j.decimal_encoding,
        }));
    Ok(Kind::Json {
        options,
        debezium: j.debezium,
        header,
    })
}

/// The one `value` column of the raw formats.
fn value_column<'a>(batch: &'a RecordBatch, t: &DataType) -> Result<&'a ArrayRef, EncodeError> {
    match batch.column_by_name("value") {
        Some(c) if c.data_type() == t => Ok(c),
        _ => Err(EncodeError::Unsupported(format!(
            "the rows need a column 'value' of type {t}"
        ))),
    }
}

/// Where Tributary's JSON differs from arrow-json's, at any depth: JSON columns (the
/// `arrow.json` extension) are written as the JSON they hold, not as a quoted string (text
/// that is not JSON is written as a string); `unix_millis` timestamps as millisecond
/// numbers; decimals as strings or base64 bytes when the format says so.
#[derive(Debug)]
struct JsonColumns {
    unix_millis: bool,
    decimals: DecimalEncoding,
}

impl EncoderFactory for JsonColumns {
    fn make_default_encoder<'a>(
        &self,
        field: &'a FieldRef,
        array: &'a dyn Array,
        _options: &'a EncoderOptions,
    ) -> Result<Option<NullableEncoder<'a>>, ArrowError> {
        let is_json = field
            .metadata()
            .get("ARROW:extension:name")
            .is_some_and(|n| n == "arrow.json");
        let nulls = array.nulls().cloned();
        Ok(match array.data_type() {
            DataType::Utf8 if is_json => array
                .as_string_opt::<i32>()
                .map(|s| NullableEncoder::new(Box::new(RawJson(s)), nulls)),
            // arrow-json does not consult the factory for list items, so lists of JSON are
            // written here.
            DataType::List(item)
                if item
                    .metadata()
                    .get("ARROW:extension:name")
                    .is_some_and(|n| n == "arrow.json") =>
            {
                array
                    .as_list_opt::<i32>()
                    .map(|l| NullableEncoder::new(Box::new(JsonList(l)), nulls))
            }
            DataType::Timestamp(_, _) if self.unix_millis => {
                let ms =
                    arrow_cast::cast(array, &DataType::Timestamp(TimeUnit::Millisecond, None))?;
                let ms = arrow_cast::cast(&ms, &DataType::Int64)?;
                let values: Vec<i64> = ms
                    .as_primitive_opt::<arrow_array::types::Int64Type>()
                    .map(|a| a.values().to_vec())
                    .unwrap_or_default();
                Some(NullableEncoder::new(Box::new(Millis(values)), nulls))
            }
            DataType::Decimal128(_, scale) if self.decimals != DecimalEncoding::Number => array
                .as_primitive_opt::<arrow_array::types::Decimal128Type>()
                .map(|d| {
                    NullableEncoder::new(
                        Box::new(Decimals {
                            array: d,
                            scale: *scale,
                            bytes: self.decimals == DecimalEncoding::Bytes,
                        }),
                        nulls,
                    )
                }),
            _ => None,
        })
    }
}

/// A list of JSON values, each written as the JSON it holds.
struct JsonList<'a>(&'a arrow_array::ListArray);

impl Encoder for JsonList<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        out.push(b'[');
        let items = self.0.value(idx);
        if let Some(strings) = items.as_string_opt::<i32>() {
            for i in 0..strings.len() {
                if i > 0 {
                    out.push(b',');
                }
                if strings.is_null(i) {
                    out.extend_from_slice(b"null");
                } else {
                    RawJson(strings).encode(i, out);
                }
            }
        }
        out.push(b']');
    }
}

/// Timestamps as millisecond numbers.
struct Millis(Vec<i64>);

impl Encoder for Millis {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(
            self.0
                .get(idx)
                .copied()
                .unwrap_or_default()
                .to_string()
                .as_bytes(),
        );
    }
}

/// Decimals as `"123.45"`, or as base64 of their unscaled big-endian bytes.
struct Decimals<'a> {
    array: &'a arrow_array::Decimal128Array,
    scale: i8,
    bytes: bool,
}

impl Encoder for Decimals<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        use base64::Engine;
        let v = self.array.value(idx);
        let text = if self.bytes {
            base64::engine::general_purpose::STANDARD.encode(crate::avro_encode::minimal_be(v))
        } else {
            crate::json_rewrite::decimal_text(v, self.scale)
        };
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
    }
}

struct RawJson<'a>(&'a StringArray);

impl Encoder for RawJson<'_> {
    fn encode(&mut self, idx: usize, out: &mut Vec<u8>) {
        let text = self.0.value(idx);
        if serde_json::from_str::<&RawValue>(text).is_ok() {
            out.extend_from_slice(text.as_bytes());
        } else {
            // serde_json escapes a string infallibly into a Vec.
            let quoted = serde_json::to_string(text).unwrap_or_default();
            out.extend_from_slice(quoted.as_bytes());
        }
    }
}
