//! Rows → Avro, for sinks: the writer schema a table's columns imply (when the user gave
//! none), and an encoder that writes each row as a datum straight from the Arrow arrays —
//! bare, behind the Confluent header, or as a one-record object container file.

use crate::avro_plan::{Meaning, Shape, ShapeId, Shapes, describe, is_json, per_second};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::{DataType, TimeUnit};
use serde_json::{Value, json};
use tributary_types::{FieldType, SourceField};

/// The Avro schema (as JSON text) a sink with these columns writes: a record named
/// `name`, nullable columns as `["null", T]` unions defaulting to null.
pub fn avro_schema_for_fields(name: &str, fields: &[SourceField]) -> Result<String, String> {
    let mut records = 0usize;
    let schema = record_schema(&sanitize(name), fields, &mut records)?;
    serde_json::to_string(&schema).map_err(|e| e.to_string())
}

fn record_schema(name: &str, fields: &[SourceField], records: &mut usize) -> Result<Value, String> {
    *records += 1;
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let ty = avro_type(
            &format!("{name}_{}", sanitize(&f.name)),
            &f.field_type,
            records,
        )
        .map_err(|e| format!("column '{}': {e}", f.name))?;
        out.push(if f.required {
            json!({"name": sanitize(&f.name), "type": ty})
        } else {
            json!({"name": sanitize(&f.name), "type": ["null", ty], "default": null})
        });
    }
    Ok(json!({"type": "record", "name": name, "fields": out}))
}

fn avro_type(name: &str, t: &FieldType, records: &mut usize) -> Result<Value, String> {
    use tributary_types::TimeUnit as U;
    Ok(match t {
        FieldType::Bool => json!("boolean"),
        FieldType::Int32 => json!("int"),
        FieldType::Int64 | FieldType::Uint32 | FieldType::Uint64 => json!("long"),
        FieldType::Float32 => json!("float"),
        FieldType::Float64 => json!("double"),
        FieldType::Decimal128 { precision, scale } => json!({
            "type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale
        }),
        FieldType::String | FieldType::Json => json!("string"),
        FieldType::Bytes => json!("bytes"),
        FieldType::Date => json!({"type": "int", "logicalType": "date"}),
        FieldType::Time { unit } => match unit {
            U::Second | U::Millisecond => json!({"type": "int", "logicalType": "time-millis"}),
            U::Microsecond | U::Nanosecond => {
                json!({"type": "long", "logicalType": "time-micros"})
            }
        },
        FieldType::Timestamp { unit } => match unit {
            U::Second | U::Millisecond => {
                json!({"type": "long", "logicalType": "timestamp-millis"})
            }
            U::Microsecond => json!({"type": "long", "logicalType": "timestamp-micros"}),
            U::Nanosecond => json!({"type": "long", "logicalType": "timestamp-nanos"}),
        },
        FieldType::Struct { fields } => record_schema(name, fields, records)?,
        FieldType::List { items } => {
            let item = avro_type(name, &items.field_type, records)?;
            let item = if items.required {
                item
            } else {
                json!(["null", item])
            };
            json!({"type": "array", "items": item})
        }
        FieldType::Map { key, value } => {
            if key.field_type != FieldType::String {
                return Err(format!(
                    "Avro maps have string keys, but the keys are {}",
                    key.field_type
                ));
            }
            let v = avro_type(name, &value.field_type, records)?;
            let v = if value.required {
                v
            } else {
                json!(["null", v])
            };
            json!({"type": "map", "values": v})
        }
    })
}

/// An Avro name for a column: letters, digits and `_`, not starting with a digit.
pub(crate) fn sanitize(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// Writes rows as Avro datums of one writer schema.
#[derive(Debug)]
pub(crate) struct AvroWriter {
    shapes: Shapes,
    root: ShapeId,
}

impl AvroWriter {
    pub(crate) fn new(schema_text: &str) -> Result<Self, String> {
        let schema = crate::parse_avro_schema(schema_text).map_err(|e| e.to_string())?;
        let (shapes, root) = Shapes::compile(&schema)?;
        if !matches!(shapes.get(root), Shape::Record(_)) {
            return Err("the Avro schema's top level is not a record".into());
        }
        Ok(Self { shapes, root })
    }

    /// Each row of `batch` as one datum.
    pub(crate) fn datums(&self, batch: &RecordBatch) -> Result<Vec<Vec<u8>>, String> {
        let rows = StructArray::from(batch.clone());
        let rows: ArrayRef = std::sync::Arc::new(rows);
        (0..batch.num_rows())
            .map(|row| {
                let mut out = Vec::new();
                self.value(self.root, &rows, row, &mut out)
                    .map_err(|e| format!("row {}: {e}", row + 1))?;
                Ok(out)
            })
            .collect()
    }

    fn value(
        &self,
        id: ShapeId,
        col: &ArrayRef,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        self.cell(id, col, false, row, out)
    }

    /// One cell; `json` marks a JSON column, whose text is parsed and written as the
    /// Avro type (unless that is a string, which takes the text itself).
    fn cell(
        &self,
        id: ShapeId,
        col: &ArrayRef,
        json: bool,
        row: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), String> {
        let shape = self.shapes.get(id);
        if json && !col.is_null(row) && !matches!(shape, Shape::String(_)) {
            let text = col
                .as_string_opt::<i32>()
                .ok_or("a JSON column that is not text")?
                .value(row);
            let value: Value = serde_json::from_str(text)
                .map_err(|e| format!("the JSON column holds invalid JSON: {e}"))?;
            return self.json_value(id, &value, out);
        }
        if let Shape::Union(branches) = shape {
            let null = branches
                .iter()
                .position(|b| matches!(self.shapes.get(*b), Shape::Null));
            if col.is_null(row) {
                let i = null.ok_or("a null value for a union without a null branch")?;
                long(i as i64, out);
                return Ok(());
            }
            // The first non-null branch that takes this column's values.
            let mut last_error = String::from("the union has no non-null branch");
            for (i, b) in branches.iter().enumerate() {
                if Some(i) == null {
                    continue;
                }
                let mut attempt = Vec::new();
                long(i as i64, &mut attempt);
                match self.cell(*b, col, json, row, &mut attempt) {
                    Ok(()) => {
                        out.extend_from_slice(&attempt);
                        return Ok(());
                    }
                    Err(e) => last_error = e,
                }
            }
            return Err(last_error);
        }
        if col.is_null(row) && !matches!(shape, Shape::Null) {
            return Err("a null value for a field whose Avro type is not nullable".into());
        }
        match (shape, col.data_type()) {
            (Shape::Null, _) => {}
            (Shape::Bool, DataType::Boolean) => out.push(u8::from(col.as_boolean().value(row))),
            (Shape::Int(m) | Shape::Long(m), _) => long(integer_at(col, row, m)?, out),
            (Shape::Float, _) => out.extend_from_slice(&(float_at(col, row)? as f32).to_le_bytes()),
            (Shape::Double, _) => out.extend_from_slice(&float_at(col, row)?.to_le_bytes()),
            (Shape::Bytes(Meaning::Decimal { scale }), DataType::Decimal128(_, s)) => {
                let v = rescale(col.as_primitive::<Decimal128Type>().value(row), *s, *scale)?;
                let bytes = minimal_be(v);
                long(bytes.len() as i64, out);
                out.extend_from_slice(&bytes);
            }
            (Shape::Fixed(n, Meaning::Decimal { scale }), DataType::Decimal128(_, s)) => {
                let v = rescale(col.as_primitive::<Decimal128Type>().value(row), *s, *scale)?;
                let full = v.to_be_bytes();
                if *n < 16 && minimal_be(v).len() > *n {
                    return Err(format!("decimal {v} does not fit in fixed({n})"));
                }
                let sign = if v < 0 { 0xff } else { 0 };
                for _ in 16..*n {
                    out.push(sign);
                }
                out.extend_from_slice(&full[16usize.saturating_sub(*n)..]);
            }
            (Shape::Bytes(_) | Shape::String(_), DataType::Utf8) => {
                bytes(col.as_string::<i32>().value(row).as_bytes(), out)
            }
            (Shape::Bytes(_) | Shape::String(_), DataType::Binary) => {
                bytes(col.as_binary::<i32>().value(row), out)
            }
            (Shape::Fixed(n, _), DataType::Binary) => {
                let v = col.as_binary::<i32>().value(row);
                if v.len() != *n {
                    return Err(format!("{} bytes for a fixed({n})", v.len()));
                }
                out.extend_from_slice(v);
            }
            (Shape::Enum(symbols), DataType::Utf8) => {
                let v = col.as_string::<i32>().value(row);
                let i = symbols
                    .iter()
                    .position(|s| s == v)
                    .ok_or_else(|| format!("'{v}' is not one of the enum's symbols"))?;
                long(i as i64, out);
            }
            (Shape::Record(fields), DataType::Struct(_)) => {
                let s = col.as_struct();
                for (name, f) in fields {
                    let child = s
                        .fields()
                        .iter()
                        .position(|c| c.name() == name || sanitize(c.name()) == *name)
                        .map(|i| (s.column(i).clone(), is_json(&s.fields()[i])));
                    match child {
                        Some((c, json)) => self
                            .cell(*f, &c, json, row, out)
                            .map_err(|e| format!("field '{name}': {e}"))?,
                        // A writer field the rows lack: null, when the type allows.
                        None => match self.shapes.get(*f) {
                            Shape::Union(branches) => {
                                let i = branches
                                    .iter()
                                    .position(|b| matches!(self.shapes.get(*b), Shape::Null))
                                    .ok_or_else(|| {
                                        format!("field '{name}' has no column to take it from")
                                    })?;
                                long(i as i64, out);
                            }
                            Shape::Null => {}
                            _ => {
                                return Err(format!(
                                    "field '{name}' has no column to take it from"
                                ));
                            }
                        },
                    }
                }
            }
            (Shape::Array(item), DataType::List(_)) => {
                let list = col.as_list::<i32>();
                let values = list.value(row);
                if !values.is_empty() {
                    long(values.len() as i64, out);
                    for i in 0..values.len() {
                        self.value(*item, &values, i, out)?;
                    }
                }
                long(0, out);
            }
            (Shape::Map(value), DataType::Map(_, _)) => {
                let map = col.as_map();
                let entries = map.value(row);
                if entries.len() > 0 {
                    long(entries.len() as i64, out);
                    let keys = entries.column(0);
                    let values = entries.column(1);
                    for i in 0..entries.len() {
                        match keys.as_string_opt::<i32>() {
                            Some(k) => bytes(k.value(i).as_bytes(), out),
                            None => return Err("map keys must be text".into()),
                        }
                        self.value(*value, values, i, out)?;
                    }
                }
                long(0, out);
            }
            (_, dt) => {
                return Err(format!(
                    "a {dt} column cannot be written as Avro {}",
                    describe(&self.shapes, id)
                ));
            }
        }
        Ok(())
    }
}

impl AvroWriter {
    /// A JSON value written as the Avro type `id` describes; unions take the first branch
    /// the value fits.
    fn json_value(&self, id: ShapeId, v: &Value, out: &mut Vec<u8>) -> Result<(), String> {
        let mismatch = || {
            format!(
                "JSON {v} cannot be written as Avro {}",
                describe(&self.shapes, id)
            )
        };
        match (self.shapes.get(id), v) {
            (Shape::Union(branches), _) => {
                for (i, b) in branches.iter().enumerate() {
                    let mut attempt = Vec::new();
                    long(i as i64, &mut attempt);
                    if self.json_value(*b, v, &mut attempt).is_ok() {
                        out.extend_from_slice(&attempt);
                        return Ok(());
                    }
                }
                return Err(mismatch());
            }
            (Shape::Null, Value::Null) => {}
            (Shape::Bool, Value::Bool(b)) => out.push(u8::from(*b)),
            (Shape::Int(_), Value::Number(n)) => {
                let n = n
                    .as_i64()
                    .filter(|n| i32::try_from(*n).is_ok())
                    .ok_or_else(mismatch)?;
                long(n, out)
            }
            (Shape::Long(_), Value::Number(n)) => long(n.as_i64().ok_or_else(mismatch)?, out),
            (Shape::Float, Value::Number(n)) => {
                out.extend_from_slice(&(n.as_f64().ok_or_else(mismatch)? as f32).to_le_bytes())
            }
            (Shape::Double, Value::Number(n)) => {
                out.extend_from_slice(&n.as_f64().ok_or_else(mismatch)?.to_le_bytes())
            }
            (Shape::String(_) | Shape::Bytes(_), Value::String(s)) => bytes(s.as_bytes(), out),
            (Shape::Enum(symbols), Value::String(s)) => {
                let i = symbols.iter().position(|x| x == s).ok_or_else(mismatch)?;
                long(i as i64, out)
            }
            (Shape::Array(item), Value::Array(items)) => {
                if !items.is_empty() {
                    long(items.len() as i64, out);
                    for x in items {
                        self.json_value(*item, x, out)?;
                    }
                }
                long(0, out);
            }
            (Shape::Map(value), Value::Object(entries)) => {
                if !entries.is_empty() {
                    long(entries.len() as i64, out);
                    for (k, x) in entries {
                        bytes(k.as_bytes(), out);
                        self.json_value(*value, x, out)?;
                    }
                }
                long(0, out);
            }
            (Shape::Record(fields), Value::Object(entries)) => {
                for (name, f) in fields {
                    self.json_value(*f, entries.get(name).unwrap_or(&Value::Null), out)?;
                }
            }
            _ => return Err(mismatch()),
        }
        Ok(())
    }
}

/// An integer-like column value, converted to the writer's unit when it is a time.
pub(crate) fn integer_at(col: &ArrayRef, row: usize, m: &Meaning) -> Result<i64, String> {
    use DataType as D;
    let (v, unit): (i64, Option<TimeUnit>) = match col.data_type() {
        D::Int32 => (i64::from(col.as_primitive::<Int32Type>().value(row)), None),
        D::Int64 => (col.as_primitive::<Int64Type>().value(row), None),
        D::UInt32 => (i64::from(col.as_primitive::<UInt32Type>().value(row)), None),
        D::UInt64 => (
            i64::try_from(col.as_primitive::<UInt64Type>().value(row))
                .map_err(|_| "an unsigned value above the largest Avro long")?,
            None,
        ),
        D::Date32 => (i64::from(col.as_primitive::<Date32Type>().value(row)), None),
        D::Time32(TimeUnit::Second) => (
            i64::from(col.as_primitive::<Time32SecondType>().value(row)),
            Some(TimeUnit::Second),
        ),
        D::Time32(_) => (
            i64::from(col.as_primitive::<Time32MillisecondType>().value(row)),
            Some(TimeUnit::Millisecond),
        ),
        D::Time64(TimeUnit::Microsecond) => (
            col.as_primitive::<Time64MicrosecondType>().value(row),
            Some(TimeUnit::Microsecond),
        ),
        D::Time64(_) => (
            col.as_primitive::<Time64NanosecondType>().value(row),
            Some(TimeUnit::Nanosecond),
        ),
        D::Timestamp(TimeUnit::Second, _) => (
            col.as_primitive::<TimestampSecondType>().value(row),
            Some(TimeUnit::Second),
        ),
        D::Timestamp(TimeUnit::Millisecond, _) => (
            col.as_primitive::<TimestampMillisecondType>().value(row),
            Some(TimeUnit::Millisecond),
        ),
        D::Timestamp(TimeUnit::Microsecond, _) => (
            col.as_primitive::<TimestampMicrosecondType>().value(row),
            Some(TimeUnit::Microsecond),
        ),
        D::Timestamp(TimeUnit::Nanosecond, _) => (
            col.as_primitive::<TimestampNanosecondType>().value(row),
            Some(TimeUnit::Nanosecond),
        ),
        other => {
            return Err(format!(
                "a {other} column cannot be written as an Avro int or long"
            ));
        }
    };
    let target = match m {
        Meaning::Time(u) | Meaning::Timestamp(u) => Some(*u),
        _ => None,
    };
    Ok(match (unit, target) {
        (Some(from), Some(to)) => convert(v, from, to)?,
        _ => v,
    })
}

fn convert(v: i64, from: TimeUnit, to: TimeUnit) -> Result<i64, String> {
    let (f, t) = (per_second(from), per_second(to));
    if t >= f {
        v.checked_mul(t / f)
            .ok_or_else(|| format!("{v} overflows when converted to the writer's unit"))
    } else {
        Ok(v.div_euclid(f / t))
    }
}

/// A numeric column value as a double.
pub(crate) fn float_at(col: &ArrayRef, row: usize) -> Result<f64, String> {
    Ok(match col.data_type() {
        DataType::Float32 => f64::from(col.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => col.as_primitive::<Float64Type>().value(row),
        DataType::Int32 => f64::from(col.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => col.as_primitive::<Int64Type>().value(row) as f64,
        other => {
            return Err(format!(
                "a {other} column cannot be written as an Avro float or double"
            ));
        }
    })
}

fn rescale(v: i128, from: i8, to: i8) -> Result<i128, String> {
    if from == to {
        return Ok(v);
    }
    if to < from {
        return Err(format!(
            "the column has scale {from}, more than the writer's decimal scale {to}"
        ));
    }
    v.checked_mul(10i128.pow((to - from) as u32))
        .ok_or_else(|| "a decimal overflows when rescaled".to_string())
}

/// The shortest two's-complement big-endian bytes of `v`.
pub(crate) fn minimal_be(v: i128) -> Vec<u8> {
    let full = v.to_be_bytes();
    let sign = if v < 0 { 0xff } else { 0 };
    let mut start = 0;
    while start < 15 && full[start] == sign && (full[start + 1] & 0x80 == sign & 0x80) {
        start += 1;
    }
    full[start..].to_vec()
}

fn long(v: i64, out: &mut Vec<u8>) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn bytes(v: &[u8], out: &mut Vec<u8>) {
    long(v.len() as i64, out);
    out.extend_from_slice(v);
}

/// A one-record object container file holding `datum`.
pub(crate) fn container_file(schema_text: &str, datum: &[u8]) -> Vec<u8> {
    // A fixed sync marker: files are single-block, so it need not be random.
    const SYNC: [u8; 16] = *b"tributary-sync!!";
    let mut out = b"Obj\x01".to_vec();
    long(2, &mut out);
    bytes(b"avro.schema", &mut out);
    bytes(schema_text.as_bytes(), &mut out);
    bytes(b"avro.codec", &mut out);
    bytes(b"null", &mut out);
    long(0, &mut out);
    out.extend_from_slice(&SYNC);
    long(1, &mut out);
    long(datum.len() as i64, &mut out);
    out.extend_from_slice(datum);
    out.extend_from_slice(&SYNC);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_big_endian() {
        assert_eq!(minimal_be(0), vec![0]);
        assert_eq!(minimal_be(127), vec![0x7f]);
        assert_eq!(minimal_be(128), vec![0x00, 0x80]);
        assert_eq!(minimal_be(-1), vec![0xff]);
        assert_eq!(minimal_be(-129), vec![0xff, 0x7f]);
        for v in [
            0i128,
            1,
            -1,
            255,
            -256,
            i128::MAX,
            i128::MIN,
            12345678901234567890,
        ] {
            assert_eq!(crate::wire::be_i128(&minimal_be(v)), Ok(v));
        }
    }

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize("order id"), "order_id");
        assert_eq!(sanitize("1st"), "_1st");
        assert_eq!(sanitize(""), "_");
    }
}
