//! Messages → Arrow `RecordBatch`es for a table's format: json (plain, gzip-compressed,
//! Confluent wire header, unstructured, `unix_millis` timestamps, JSON columns), avro (see
//! `avro_decode`), protobuf (`proto_decode`), parquet files (`parquet_files`), raw_string
//! and raw_bytes, with newline framing and the table's
//! `bad_data` policy.
//!
//! Messages are buffered by [`BatchDecoder::push`] and decoded together by
//! [`BatchDecoder::finish`]: JSON goes through arrow-json's decoder in one pass; only when
//! that pass fails are the records decoded one by one to find the bad ones, so the common
//! case pays nothing for `bad_data = 'drop'`.

use crate::avro_decode::{AvroRows, AvroSchemaLookup};
use crate::debezium::{CHANGE_COLUMN, ChangeKind, row_images};
use crate::json_rewrite::Rewrites;
use crate::parquet_files::ParquetRows;
use crate::proto_decode::ProtoRows;
use arrow_array::builder::{ArrayBuilder, BinaryBuilder, StringBuilder};
use arrow_array::{ArrayRef, RecordBatch, new_null_array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::Arc;
use tributary_types::limits::MAX_INFLATED_MESSAGE_BYTES;
use tributary_types::{
    BadData, ConnectionSchema, FieldType, Format, Framing, JsonCompression, JsonFormat,
    SourceField, TimestampFormat,
};

/// Why decoding stopped (`bad_data = 'fail'`) or could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The table's format or columns cannot be decoded (yet).
    #[error("cannot decode this table: {0}")]
    Unsupported(String),
    /// A record could not be decoded.
    #[error("record {index} could not be decoded: {reason}")]
    BadRecord {
        /// 1-based position among the records pushed since the last `finish`.
        index: usize,
        /// What was wrong (which field, what was expected).
        reason: String,
    },
}

/// What was dropped under `bad_data = 'drop'`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dropped {
    /// How many records were dropped.
    pub count: usize,
    /// The first of them, as a [`DecodeError::BadRecord`].
    pub first: Option<DecodeError>,
}

/// Decodes one table's messages into batches of its physical (non-metadata) columns.
#[derive(Debug)]
pub struct BatchDecoder {
    output: SchemaRef,
    kind: Kind,
    bad_data: BadData,
    max_line: Option<u64>,
    /// Messages are gzip-compressed (JSON files with `json.compression = 'gzip'`).
    gzip: bool,
    records: usize,
    dropped: Dropped,
}

#[derive(Debug)]
enum Kind {
    Json(JsonPlan),
    Unstructured(StringBuilder),
    RawString(StringBuilder),
    RawBytes(BinaryBuilder),
    Avro(AvroRows),
    Protobuf(ProtoRows),
    Parquet(ParquetRows),
}

/// JSON: what arrow-json decodes, what is taken as raw JSON text, and what is cast after.
#[derive(Debug)]
struct JsonPlan {
    confluent_header: bool,
    /// The columns arrow-json decodes (JSON columns left out; millisecond timestamps as
    /// read from the wire).
    decode_schema: SchemaRef,
    /// Top-level JSON columns, taken as the raw text of their property.
    json_columns: Vec<String>,
    /// Values rewritten before decoding (nested JSON, nested unix_millis, base64
    /// decimals); empty for most tables.
    rewrites: Rewrites,
    /// Newline-separated records awaiting `finish`, and where each one is.
    pending: Vec<u8>,
    spans: Vec<(usize, usize)>,
    /// The arrow-json decoder, kept between batches so its buffers are reused; dropped
    /// after an error, since its state is then unknown.
    decoder: Option<arrow_json::reader::Decoder>,
    /// For debezium_json: the change kind of each pending row image.
    debezium: Option<Changelog>,
}

/// The change kinds of pending Debezium row images, and which message each came from.
#[derive(Debug)]
struct Changelog {
    /// The table's columns, without `_change`.
    physical: SchemaRef,
    kinds: Vec<ChangeKind>,
    message_of: Vec<usize>,
    messages: usize,
}

/// Rows arrow-json decodes before it must be flushed; batches larger than this are
/// decoded in parts and concatenated.
const DECODER_ROWS: usize = 16_384;

impl BatchDecoder {
    /// A decoder for a table's schema. Metadata columns are not part of the output; the
    /// source adds them.
    pub fn new(schema: &ConnectionSchema) -> Result<Self, DecodeError> {
        let physical: Vec<&SourceField> = schema.physical_fields().collect();
        let mut fields: Vec<Field> = physical.iter().map(|f| f.to_arrow()).collect();
        // Debezium rows carry their change kind after the table's columns.
        if matches!(&schema.format, Some(Format::Json(j)) if j.debezium) {
            fields.push(Field::new(CHANGE_COLUMN, DataType::Utf8, false));
        }
        let output = Arc::new(Schema::new(fields));
        let max_line = schema
            .framing
            .as_ref()
            .map(|Framing::Newline { max_line_length }| max_line_length.unwrap_or(u64::MAX));
        let kind = match &schema.format {
            Some(Format::Json(j)) if j.unstructured => Kind::Unstructured(StringBuilder::new()),
            Some(Format::Json(j)) => Kind::Json(JsonPlan::new(j, &physical)?),
            Some(Format::RawString {}) => Kind::RawString(StringBuilder::new()),
            Some(Format::RawBytes {}) => Kind::RawBytes(BinaryBuilder::new()),
            Some(Format::Avro(a)) => {
                Kind::Avro(AvroRows::new(a, output.clone()).map_err(DecodeError::Unsupported)?)
            }
            Some(Format::Protobuf(p)) => {
                Kind::Protobuf(ProtoRows::new(p, output.clone()).map_err(DecodeError::Unsupported)?)
            }
            Some(Format::Parquet(_)) => Kind::Parquet(ParquetRows::new(output.clone())),
            None => return Err(DecodeError::Unsupported("the table has no format".into())),
        };
        let gzip = matches!(&schema.format, Some(Format::Json(j)) if j.compression == JsonCompression::Gzip);
        Ok(Self {
            output,
            kind,
            bad_data: schema.bad_data.unwrap_or(BadData::Fail),
            max_line,
            gzip,
            records: 0,
            dropped: Dropped::default(),
        })
    }

    /// Decode only the columns `keep` selects by name; the others come out NULL (and so
    /// nullable in [`BatchDecoder::schema`]). A query skips the columns it does not read
    /// this way: JSON builds no arrays (and no raw JSON text) for them, so a value of the
    /// wrong type there is no longer an error. Debezium and the other formats decode
    /// every column.
    pub fn decoding_only(mut self, keep: impl Fn(&str) -> bool) -> Self {
        if let Kind::Json(plan) = &mut self.kind
            && plan.keep_only(&keep)
        {
            let fields: Vec<Field> = self
                .output
                .fields()
                .iter()
                .map(|f| {
                    let skipped = f.name() != CHANGE_COLUMN && !keep(f.name());
                    f.as_ref().clone().with_nullable(f.is_nullable() || skipped)
                })
                .collect();
            self.output = Arc::new(Schema::new(fields));
        }
        self
    }

    /// The Arrow schema of the batches.
    pub fn schema(&self) -> SchemaRef {
        self.output.clone()
    }

    /// Add one message (several records with newline framing).
    pub fn push(&mut self, message: &[u8]) -> Result<(), DecodeError> {
        if self.gzip {
            let mut plain = Vec::with_capacity(message.len() * 4);
            let inflated = std::io::Read::read_to_end(
                &mut std::io::Read::take(
                    flate2::read::MultiGzDecoder::new(message),
                    MAX_INFLATED_MESSAGE_BYTES + 1,
                ),
                &mut plain,
            );
            if let Err(e) = inflated {
                self.records += 1;
                return self.bad(format!("it is not valid gzip data: {e}"));
            }
            if plain.len() as u64 > MAX_INFLATED_MESSAGE_BYTES {
                self.records += 1;
                return self.bad(format!(
                    "it inflates to more than {MAX_INFLATED_MESSAGE_BYTES} bytes"
                ));
            }
            return self.push_plain(&plain);
        }
        self.push_plain(message)
    }

    fn push_plain(&mut self, message: &[u8]) -> Result<(), DecodeError> {
        match self.max_line {
            None => self.push_record(message),
            Some(max) => {
                for line in message.split(|b| *b == b'\n') {
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    if line.is_empty() {
                        continue;
                    }
                    if line.len() as u64 > max {
                        self.records += 1;
                        self.bad(format!(
                            "the line is {} bytes, longer than framing.newline.max_length ({max})",
                            line.len()
                        ))?;
                        continue;
                    }
                    self.push_record(line)?;
                }
                Ok(())
            }
        }
    }

    fn push_record(&mut self, record: &[u8]) -> Result<(), DecodeError> {
        self.records += 1;
        let problem = match &mut self.kind {
            Kind::Json(plan) => plan.push(record).err(),
            Kind::Unstructured(b) => match serde_json::from_slice::<&RawValue>(record) {
                Ok(v) => {
                    b.append_value(v.get());
                    None
                }
                Err(e) => Some(format!("it is not JSON: {e}")),
            },
            Kind::RawString(b) => match std::str::from_utf8(record) {
                Ok(s) => {
                    b.append_value(s);
                    None
                }
                Err(e) => Some(format!("it is not UTF-8 text: {e}")),
            },
            Kind::RawBytes(b) => {
                b.append_value(record);
                None
            }
            Kind::Avro(rows) => rows.push(record).err(),
            Kind::Protobuf(rows) => rows.push(record).err(),
            Kind::Parquet(rows) => rows.push(record).err(),
        };
        match problem {
            Some(reason) => self.bad(reason),
            None => Ok(()),
        }
    }

    /// Record a bad record at the current position: an error, or a drop.
    fn bad(&mut self, reason: String) -> Result<(), DecodeError> {
        let e = DecodeError::BadRecord {
            index: self.records,
            reason,
        };
        match self.bad_data {
            BadData::Fail => Err(e),
            BadData::Drop => {
                self.dropped.count += 1;
                self.dropped.first.get_or_insert(e);
                Ok(())
            }
        }
    }

    /// Decode what was pushed into one batch (`None` when nothing was).
    pub fn finish(&mut self) -> Result<Option<RecordBatch>, DecodeError> {
        let columns: Vec<ArrayRef> = match &mut self.kind {
            Kind::Unstructured(b) | Kind::RawString(b) => {
                if b.is_empty() {
                    return Ok(None);
                }
                vec![Arc::new(b.finish())]
            }
            Kind::RawBytes(b) => {
                if b.is_empty() {
                    return Ok(None);
                }
                vec![Arc::new(b.finish())]
            }
            Kind::Avro(rows) => {
                self.records = 0;
                return finish_rows(rows.is_empty(), || rows.finish());
            }
            Kind::Protobuf(rows) => {
                self.records = 0;
                return finish_rows(rows.is_empty(), || rows.finish());
            }
            Kind::Parquet(rows) => {
                self.records = 0;
                return finish_rows(rows.is_empty(), || rows.finish());
            }
            Kind::Json(plan) => {
                let bad_data = self.bad_data;
                let mut bad = Vec::new();
                let out = plan.finish(&self.output, bad_data, &mut bad);
                self.records = 0;
                for e in bad {
                    self.dropped.count += 1;
                    self.dropped.first.get_or_insert(e);
                }
                return out;
            }
        };
        self.records = 0;
        RecordBatch::try_new(self.output.clone(), columns)
            .map(Some)
            .map_err(|e| DecodeError::Unsupported(e.to_string()))
    }

    /// Look writer schemas of registry-framed Avro messages up here (the schema registry)
    /// rather than reading only the table's own schema.
    pub fn with_avro_schema_lookup(mut self, lookup: Arc<dyn AvroSchemaLookup>) -> Self {
        if let Kind::Avro(rows) = &mut self.kind {
            rows.set_lookup(lookup);
        }
        self
    }

    /// For registry-framed Avro: the writer schema id `message` was written with, when the
    /// decoder does not know that schema yet. An async caller fetches it from the registry
    /// and hands it over with [`Self::add_avro_writer_schema`] before pushing the message.
    pub fn unknown_avro_writer(&self, message: &[u8]) -> Option<u32> {
        match &self.kind {
            Kind::Avro(rows) => rows.unknown_writer(message),
            _ => None,
        }
    }

    /// Install the Avro writer schema registered under `id` (its resolution into the
    /// table's columns is compiled now; an incompatible schema is an error here).
    pub fn add_avro_writer_schema(&mut self, id: u32, schema: &str) -> Result<(), DecodeError> {
        match &mut self.kind {
            Kind::Avro(rows) => rows
                .add_writer(id, schema)
                .map_err(DecodeError::Unsupported),
            _ => Err(DecodeError::Unsupported(
                "writer schemas apply to Avro tables only".into(),
            )),
        }
    }

    /// What `bad_data = 'drop'` dropped so far.
    pub fn dropped(&self) -> &Dropped {
        &self.dropped
    }
}

/// A direct decoder's batch, or `None` when nothing was decoded.
fn finish_rows(
    empty: bool,
    finish: impl FnOnce() -> Result<RecordBatch, String>,
) -> Result<Option<RecordBatch>, DecodeError> {
    if empty {
        return Ok(None);
    }
    finish().map(Some).map_err(DecodeError::Unsupported)
}

impl JsonPlan {
    fn new(format: &JsonFormat, physical: &[&SourceField]) -> Result<Self, DecodeError> {
        let mut decode_fields: Vec<Field> = Vec::new();
        let mut json_columns = Vec::new();
        for f in physical {
            match &f.field_type {
                FieldType::Json => json_columns.push(f.name.clone()),
                FieldType::Timestamp { .. }
                    if format.timestamp_format == TimestampFormat::UnixMillis =>
                {
                    decode_fields.push(Field::new(
                        &f.name,
                        DataType::Timestamp(arrow_schema::TimeUnit::Millisecond, None),
                        !f.required,
                    ));
                }
                _ => decode_fields.push(f.to_arrow()),
            }
        }
        let debezium = format.debezium.then(|| Changelog {
            physical: Arc::new(Schema::new(
                physical.iter().map(|f| f.to_arrow()).collect::<Vec<_>>(),
            )),
            kinds: Vec::new(),
            message_of: Vec::new(),
            messages: 0,
        });
        Ok(Self {
            debezium,
            rewrites: Rewrites::for_fields(physical, format),
            confluent_header: format.confluent_schema_registry,
            decode_schema: Arc::new(Schema::new(decode_fields)),
            json_columns,
            pending: Vec::new(),
            spans: Vec::new(),
            decoder: None,
        })
    }

    /// Decode only the columns `keep` selects (see [`BatchDecoder::decoding_only`]);
    /// whether it does (Debezium decodes all).
    fn keep_only(&mut self, keep: &dyn Fn(&str) -> bool) -> bool {
        if self.debezium.is_some() {
            return false;
        }
        let fields: Vec<Field> = self
            .decode_schema
            .fields()
            .iter()
            .filter(|f| keep(f.name()))
            .map(|f| f.as_ref().clone())
            .collect();
        self.decode_schema = Arc::new(Schema::new(fields));
        self.json_columns.retain(|name| keep(name));
        self.decoder = None;
        true
    }

    fn push(&mut self, record: &[u8]) -> Result<(), String> {
        let body = if self.confluent_header {
            match record {
                [0, _, _, _, _, rest @ ..] => rest,
                _ => {
                    return Err(
                        "it does not start with the Confluent wire-format header (a 0 byte and a 4-byte schema id)"
                            .into(),
                    );
                }
            }
        } else {
            record
        };
        let Some(log) = &mut self.debezium else {
            return self.push_image(body);
        };
        log.messages += 1;
        let message = log.messages;
        let images = row_images(body)?;
        let mark = (self.pending.len(), self.spans.len());
        for (kind, image) in images {
            if let Err(e) = self.push_image(image) {
                // All of the message or none of it.
                self.pending.truncate(mark.0);
                self.spans.truncate(mark.1);
                if let Some(log) = &mut self.debezium {
                    log.kinds.truncate(mark.1);
                    log.message_of.truncate(mark.1);
                }
                return Err(e);
            }
            if let Some(log) = &mut self.debezium {
                log.kinds.push(kind);
                log.message_of.push(message);
            }
        }
        Ok(())
    }

    /// One JSON object to decode.
    fn push_image(&mut self, body: &[u8]) -> Result<(), String> {
        let start = self.pending.len();
        if self.rewrites.is_empty() {
            self.pending.extend_from_slice(body);
        } else {
            let rewritten = self.rewrites.apply(body)?;
            self.pending.extend_from_slice(&rewritten);
        }
        self.spans.push((start, self.pending.len()));
        self.pending.push(b'\n');
        Ok(())
    }

    fn finish(
        &mut self,
        output: &SchemaRef,
        bad_data: BadData,
        dropped: &mut Vec<DecodeError>,
    ) -> Result<Option<RecordBatch>, DecodeError> {
        if self.spans.is_empty() {
            return Ok(None);
        }
        // The buffers are handed back emptied, so a long-lived decoder reuses their memory.
        let mut pending = std::mem::take(&mut self.pending);
        let mut spans = std::mem::take(&mut self.spans);
        let out = match self.debezium.as_ref().map(|l| l.physical.clone()) {
            None => self.finish_pending(&pending, &spans, output, bad_data, dropped),
            Some(physical) => {
                let mut bad = Vec::new();
                let rows = self.finish_pending(&pending, &spans, &physical, bad_data, &mut bad);
                self.with_changes(rows, output, bad, dropped)
            }
        };
        pending.clear();
        spans.clear();
        self.pending = pending;
        self.spans = spans;
        out
    }

    fn finish_pending(
        &mut self,
        pending: &[u8],
        spans: &[(usize, usize)],
        output: &SchemaRef,
        bad_data: BadData,
        dropped: &mut Vec<DecodeError>,
    ) -> Result<Option<RecordBatch>, DecodeError> {
        let records: Vec<&[u8]> = spans.iter().map(|(s, e)| &pending[*s..*e]).collect();
        let batch = match self.decode_batch(pending, records.len()) {
            Ok(batch) => self.assemble(output, batch, &records),
            // Find the bad records one by one, then decode the good ones together.
            Err(_) => {
                let mut good: Vec<&[u8]> = Vec::new();
                let mut joined = Vec::new();
                for (i, r) in records.iter().enumerate() {
                    match self.decode_all(&[*r, b"\n"].concat(), 1) {
                        Ok(_) => {
                            joined.extend_from_slice(r);
                            joined.push(b'\n');
                            good.push(r);
                        }
                        Err(reason) => {
                            let e = DecodeError::BadRecord {
                                index: i + 1,
                                reason,
                            };
                            match bad_data {
                                BadData::Fail => return Err(e),
                                BadData::Drop => dropped.push(e),
                            }
                        }
                    }
                }
                if good.is_empty() {
                    return Ok(None);
                }
                let batch = self
                    .decode_all(&joined, good.len())
                    .map_err(DecodeError::Unsupported)?;
                self.assemble(output, batch, &good)
            }
        };
        batch.map(Some)
    }

    /// Debezium rows with their `_change` column; dropped row images are reported by the
    /// message they came from.
    fn with_changes(
        &mut self,
        rows: Result<Option<RecordBatch>, DecodeError>,
        output: &SchemaRef,
        bad: Vec<DecodeError>,
        dropped: &mut Vec<DecodeError>,
    ) -> Result<Option<RecordBatch>, DecodeError> {
        let Some(log) = &mut self.debezium else {
            return rows;
        };
        let kinds = std::mem::take(&mut log.kinds);
        let message_of = std::mem::take(&mut log.message_of);
        log.messages = 0;
        let of = |i: usize| message_of.get(i.wrapping_sub(1)).copied().unwrap_or(i);
        // A message is kept or dropped whole: an update never loses half its images.
        let mut bad_images = std::collections::HashSet::new();
        let mut bad_messages = std::collections::BTreeSet::new();
        for e in bad {
            if let DecodeError::BadRecord { index, reason } = e {
                bad_images.insert(index);
                if bad_messages.insert(of(index)) {
                    dropped.push(DecodeError::BadRecord {
                        index: of(index),
                        reason,
                    });
                }
            }
        }
        let batch = match rows {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(DecodeError::BadRecord { index, reason }) => {
                return Err(DecodeError::BadRecord {
                    index: of(index),
                    reason,
                });
            }
            Err(e) => return Err(e),
        };
        // The decoded rows are the images that decoded, in order.
        let decoded: Vec<usize> = (1..=kinds.len())
            .filter(|i| !bad_images.contains(i))
            .collect();
        let keep: arrow_array::BooleanArray = decoded
            .iter()
            .map(|i| Some(!bad_messages.contains(&of(*i))))
            .collect();
        let batch = arrow_select::filter::filter_record_batch(&batch, &keep)
            .map_err(|e| DecodeError::Unsupported(e.to_string()))?;
        if batch.num_rows() == 0 {
            return Ok(None);
        }
        let changes: arrow_array::StringArray = decoded
            .iter()
            .filter(|i| !bad_messages.contains(&of(**i)))
            .map(|i| kinds.get(i - 1).map(|k| k.as_str()))
            .collect();
        let mut columns = batch.columns().to_vec();
        columns.push(Arc::new(changes));
        RecordBatch::try_new(output.clone(), columns)
            .map(Some)
            .map_err(|e| DecodeError::Unsupported(e.to_string()))
    }

    /// Decode newline-separated records with the long-lived decoder.
    fn decode_batch(&mut self, bytes: &[u8], rows: usize) -> Result<RecordBatch, String> {
        let result = self.decode_with_kept(bytes, rows);
        if result.is_err() {
            self.decoder = None;
        }
        result
    }

    fn decode_with_kept(&mut self, bytes: &[u8], rows: usize) -> Result<RecordBatch, String> {
        let schema = self.decode_schema.clone();
        let decoder = match &mut self.decoder {
            Some(d) => d,
            None => self.decoder.insert(
                arrow_json::ReaderBuilder::new(schema.clone())
                    .with_batch_size(DECODER_ROWS)
                    .build_decoder()
                    .map_err(|e| e.to_string())?,
            ),
        };
        let mut parts = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let n = decoder.decode(&bytes[at..]).map_err(|e| e.to_string())?;
            at += n;
            if n == 0 || (at < bytes.len() && decoder.len() >= DECODER_ROWS) {
                // Full: flush and go on.
                match decoder.flush().map_err(|e| e.to_string())? {
                    Some(b) => parts.push(b),
                    None if n == 0 => break,
                    None => {}
                }
            }
        }
        if let Some(b) = decoder.flush().map_err(|e| e.to_string())? {
            parts.push(b);
        }
        let batch = match parts.len() {
            0 => RecordBatch::new_empty(schema),
            1 => parts.remove(0),
            _ => {
                arrow_select::concat::concat_batches(&schema, &parts).map_err(|e| e.to_string())?
            }
        };
        if batch.num_rows() != rows {
            return Err(format!(
                "expected {rows} JSON object(s) but found {}",
                batch.num_rows()
            ));
        }
        Ok(batch)
    }

    /// Decode newline-separated records with a fresh arrow-json decoder.
    fn decode_all(&self, bytes: &[u8], rows: usize) -> Result<RecordBatch, String> {
        let mut decoder = arrow_json::ReaderBuilder::new(self.decode_schema.clone())
            .with_batch_size(rows.max(1))
            .build_decoder()
            .map_err(|e| e.to_string())?;
        let mut at = 0;
        while at < bytes.len() {
            let n = decoder.decode(&bytes[at..]).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            at += n;
        }
        let batch = decoder
            .flush()
            .map_err(|e| e.to_string())?
            .unwrap_or_else(|| RecordBatch::new_empty(self.decode_schema.clone()));
        if batch.num_rows() != rows {
            return Err(format!(
                "expected {rows} JSON object(s) but found {}",
                batch.num_rows()
            ));
        }
        Ok(batch)
    }

    /// The output columns: decoded ones (cast where the wire unit differs), and JSON
    /// columns taken as raw text.
    fn assemble(
        &self,
        output: &SchemaRef,
        decoded: RecordBatch,
        records: &[&[u8]],
    ) -> Result<RecordBatch, DecodeError> {
        let raw = self.raw_json_columns(records)?;
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(output.fields().len());
        for field in output.fields() {
            let column = match decoded.column_by_name(field.name()) {
                Some(c) if c.data_type() == field.data_type() => c.clone(),
                Some(c) => arrow_cast::cast(c, field.data_type())
                    .map_err(|e| DecodeError::Unsupported(e.to_string()))?,
                None => match raw.get(field.name().as_str()) {
                    Some(c) => c.clone(),
                    None => new_null_array(field.data_type(), decoded.num_rows()),
                },
            };
            columns.push(column);
        }
        RecordBatch::try_new(output.clone(), columns)
            .map_err(|e| DecodeError::Unsupported(e.to_string()))
    }

    fn raw_json_columns(&self, records: &[&[u8]]) -> Result<HashMap<&str, ArrayRef>, DecodeError> {
        let mut out = HashMap::new();
        if self.json_columns.is_empty() {
            return Ok(out);
        }
        let mut builders: Vec<StringBuilder> = self
            .json_columns
            .iter()
            .map(|_| StringBuilder::new())
            .collect();
        for (i, r) in records.iter().enumerate() {
            let object: HashMap<&str, &RawValue> =
                serde_json::from_slice(r).map_err(|e| DecodeError::BadRecord {
                    index: i + 1,
                    reason: format!("it is not a JSON object: {e}"),
                })?;
            for (name, b) in self.json_columns.iter().zip(&mut builders) {
                match object.get(name.as_str()).map(|v| v.get()) {
                    Some("null") | None => b.append_null(),
                    Some(text) => b.append_value(text),
                }
            }
        }
        for (name, mut b) in self.json_columns.iter().zip(builders) {
            out.insert(name.as_str(), Arc::new(b.finish()) as ArrayRef);
        }
        Ok(out)
    }
}
