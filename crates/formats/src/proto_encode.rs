//! Rows → Protobuf messages, for sinks: each row written as the table's message, straight
//! from the Arrow arrays (repeated scalars packed, maps as entry messages, well-known
//! types from their natural columns), plain, length-delimited or behind the Confluent
//! header.

use crate::avro_encode::{float_at, integer_at};
use crate::avro_plan::{Meaning, is_json};
use crate::proto_schema::{WellKnown, message_index_path, well_known};
use arrow_array::cast::AsArray;
use arrow_array::types::UInt64Type;
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, TimeUnit};
use prost::Message;
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};

/// Writes rows as one message type.
#[derive(Debug)]
pub(crate) struct ProtoWriter {
    message: MessageDescriptor,
}

impl ProtoWriter {
    pub(crate) fn new(message: MessageDescriptor) -> Self {
        Self { message }
    }

    /// The Confluent message-index prefix naming this message in its file (`[0]` is the
    /// single byte 0).
    pub(crate) fn confluent_indexes(&self) -> Vec<u8> {
        let path = message_index_path(&self.message);
        let mut out = Vec::new();
        if path == [0] {
            out.push(0);
            return out;
        }
        zigzag(path.len() as i64, &mut out);
        for i in path {
            zigzag(i, &mut out);
        }
        out
    }

    /// Each row of `batch` as one encoded message.
    pub(crate) fn messages(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        let rows = StructArray::from(batch.clone());
        (0..rows.len())
            .map(|row| {
                let mut out = Vec::new();
                encode_message(&self.message, &rows, row, &mut out)
                    .map_err(|e| format!("row {}: {e}", row + 1))?;
                Ok(out)
            })
            .collect()
    }
}

fn encode_message(
    desc: &MessageDescriptor,
    row_struct: &StructArray,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    for f in desc.fields() {
        let Some(i) = row_struct
            .fields()
            .iter()
            .position(|c| c.name() == f.name())
        else {
            continue;
        };
        let col = row_struct.column(i);
        if col.is_null(row) {
            continue;
        }
        let json = is_json(&row_struct.fields()[i]);
        encode_field(&f, col, json, row, out).map_err(|e| format!("field '{}': {e}", f.name()))?;
    }
    Ok(())
}

fn encode_field(
    f: &FieldDescriptor,
    col: &ArrayRef,
    json: bool,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let number = f.number();
    if f.is_map() {
        let Kind::Message(entry) = f.kind() else {
            return Err("a map field without an entry type".into());
        };
        let map = col.as_map_opt().ok_or("a map field needs a MAP column")?;
        let entries = map.value(row);
        let (key_field, value_field) = (entry.map_entry_key_field(), entry.map_entry_value_field());
        for i in 0..entries.len() {
            let mut e = Vec::new();
            value_with_tag(&key_field, entries.column(0), false, i, &mut e)?;
            if !entries.column(1).is_null(i) {
                value_with_tag(&value_field, entries.column(1), false, i, &mut e)?;
            }
            tag(number, 2, out);
            varint(e.len() as u64, out);
            out.extend_from_slice(&e);
        }
        return Ok(());
    }
    if f.is_list() {
        let list = col
            .as_list_opt::<i32>()
            .ok_or("a repeated field needs a list column")?;
        let items = list.value(row);
        let packed = !matches!(f.kind(), Kind::String | Kind::Bytes | Kind::Message(_));
        if packed {
            let mut body = Vec::new();
            for i in 0..items.len() {
                if items.is_null(i) {
                    return Err("a null item in a repeated field".into());
                }
                value(f, &items, false, i, &mut body)?;
            }
            if !body.is_empty() {
                tag(number, 2, out);
                varint(body.len() as u64, out);
                out.extend_from_slice(&body);
            }
        } else {
            for i in 0..items.len() {
                if items.is_null(i) {
                    return Err("a null item in a repeated field".into());
                }
                value_with_tag(f, &items, false, i, out)?;
            }
        }
        return Ok(());
    }
    value_with_tag(f, col, json, row, out)
}

fn value_with_tag(
    f: &FieldDescriptor,
    col: &ArrayRef,
    json: bool,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let wire = match f.kind() {
        Kind::Double | Kind::Fixed64 | Kind::Sfixed64 => 1,
        Kind::Float | Kind::Fixed32 | Kind::Sfixed32 => 5,
        Kind::String | Kind::Bytes | Kind::Message(_) => 2,
        _ => 0,
    };
    tag(f.number(), wire, out);
    value(f, col, json, row, out)
}

/// One value of `f` without its tag (length-prefixed where the wire type needs it).
fn value(
    f: &FieldDescriptor,
    col: &ArrayRef,
    json: bool,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let int = || integer_at(col, row, &Meaning::Plain);
    match f.kind() {
        Kind::Double => out.extend_from_slice(&float_at(col, row)?.to_le_bytes()),
        Kind::Float => out.extend_from_slice(&(float_at(col, row)? as f32).to_le_bytes()),
        Kind::Int32 | Kind::Int64 => varint(int()? as u64, out),
        Kind::Uint32 => varint(int()? as u64, out),
        Kind::Uint64 => varint(unsigned(col, row)?, out),
        Kind::Sint32 | Kind::Sint64 => zigzag(int()?, out),
        Kind::Bool => varint(
            u64::from(
                col.as_boolean_opt()
                    .ok_or("a bool field needs a BOOLEAN column")?
                    .value(row),
            ),
            out,
        ),
        Kind::Fixed32 | Kind::Sfixed32 => out.extend_from_slice(&(int()? as u32).to_le_bytes()),
        Kind::Fixed64 => out.extend_from_slice(&unsigned(col, row)?.to_le_bytes()),
        Kind::Sfixed64 => out.extend_from_slice(&int()?.to_le_bytes()),
        Kind::String | Kind::Bytes => {
            let b: &[u8] = match col.data_type() {
                DataType::Utf8 => col.as_string::<i32>().value(row).as_bytes(),
                DataType::Binary => col.as_binary::<i32>().value(row),
                other => return Err(format!("a {other} column cannot be written as a string")),
            };
            varint(b.len() as u64, out);
            out.extend_from_slice(b);
        }
        Kind::Enum(e) => {
            let name = col
                .as_string_opt::<i32>()
                .ok_or("an enum field needs a TEXT column")?
                .value(row);
            let n = match e.get_value_by_name(name) {
                Some(v) => v.number(),
                None => name
                    .parse::<i32>()
                    .map_err(|_| format!("'{name}' is not a value of enum '{}'", e.full_name()))?,
            };
            varint(i64::from(n) as u64, out);
        }
        Kind::Message(m) => {
            let mut body = Vec::new();
            match well_known(&m) {
                Some(WellKnown::Timestamp) => {
                    let ns = integer_at(col, row, &Meaning::Timestamp(TimeUnit::Nanosecond))?;
                    seconds_nanos(ns, &mut body);
                }
                Some(WellKnown::Duration) => seconds_nanos(int()?, &mut body),
                Some(WellKnown::Wrapper) => {
                    let inner = m.get_field(1).ok_or("a wrapper without a value field")?;
                    value_with_tag(&inner, col, false, row, &mut body)?;
                }
                Some(WellKnown::Json) => json_message(&m, col, row, &mut body)?,
                None if json || col.data_type() == &DataType::Utf8 => {
                    json_message(&m, col, row, &mut body)?
                }
                None => {
                    let s = col
                        .as_struct_opt()
                        .ok_or("a message field needs a STRUCT column")?;
                    encode_message(&m, s, row, &mut body)?;
                }
            }
            varint(body.len() as u64, out);
            out.extend_from_slice(&body);
        }
    }
    Ok(())
}

fn unsigned(col: &ArrayRef, row: usize) -> Result<u64, String> {
    match col.data_type() {
        DataType::UInt64 => Ok(col.as_primitive::<UInt64Type>().value(row)),
        _ => u64::try_from(integer_at(col, row, &Meaning::Plain)?)
            .map_err(|_| "a negative value for an unsigned field".to_string()),
    }
}

/// A JSON column's text as the message it encodes (proto3 JSON mapping).
fn json_message(
    m: &MessageDescriptor,
    col: &ArrayRef,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let text = col
        .as_string_opt::<i32>()
        .ok_or("a JSON message field needs a TEXT or JSON column")?
        .value(row);
    let mut de = serde_json::Deserializer::from_str(text);
    let msg = DynamicMessage::deserialize(m.clone(), &mut de)
        .map_err(|e| format!("the JSON does not fit message '{}': {e}", m.full_name()))?;
    msg.encode(out).map_err(|e| e.to_string())
}

fn seconds_nanos(ns: i64, out: &mut Vec<u8>) {
    let (seconds, nanos) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
    if seconds != 0 {
        tag(1, 0, out);
        varint(seconds as u64, out);
    }
    if nanos != 0 {
        tag(2, 0, out);
        varint(nanos as u64, out);
    }
}

fn tag(number: u32, wire: u8, out: &mut Vec<u8>) {
    varint((u64::from(number) << 3) | u64::from(wire), out);
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64, out: &mut Vec<u8>) {
    varint(((v << 1) ^ (v >> 63)) as u64, out);
}
