//! JSON values arrow-json cannot read as they are, rewritten per record before decoding:
//! JSON columns nested in structs and lists (their value becomes its JSON text), nested
//! `unix_millis` timestamps (milliseconds scaled to the column's unit), and decimals in the
//! `bytes` encoding (base64 unscaled big-endian, Debezium's convention) at any depth.
//! Tables without such columns skip this entirely.

use crate::wire::be_i128;
use base64::Engine;
use serde_json::Value;
use tributary_types::{
    DecimalEncoding, FieldType, JsonFormat, SourceField, TimeUnit, TimestampFormat,
};

/// One step of a path into a record.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    /// Every element of an array.
    Items,
}

#[derive(Debug, Clone, PartialEq)]
enum Change {
    /// Replace the value with its JSON text.
    JsonText,
    /// Multiply a millisecond number into the column's unit.
    Scale(i64),
    /// Base64 unscaled bytes → a decimal number string with `scale` digits after the point.
    Base64Decimal(i8),
}

/// The rewrites a table's JSON records need.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rewrites(Vec<(Vec<Step>, Change)>);

impl Rewrites {
    /// What `fields` need under `format`. Top-level JSON columns and top-level `unix_millis`
    /// timestamps are handled by the decoder itself and are not listed.
    pub(crate) fn for_fields(fields: &[&SourceField], format: &JsonFormat) -> Self {
        let mut out = Vec::new();
        for f in fields {
            walk(
                &f.field_type,
                vec![Step::Field(f.name.clone())],
                0,
                format,
                &mut out,
            );
        }
        Rewrites(out)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The record with every rewrite applied.
    pub(crate) fn apply(&self, record: &[u8]) -> Result<Vec<u8>, String> {
        let mut v: Value =
            serde_json::from_slice(record).map_err(|e| format!("it is not JSON: {e}"))?;
        for (path, change) in &self.0 {
            apply(&mut v, path, change, &path_name(path))?;
        }
        serde_json::to_vec(&v).map_err(|e| e.to_string())
    }
}

fn walk(
    t: &FieldType,
    path: Vec<Step>,
    depth: usize,
    format: &JsonFormat,
    out: &mut Vec<(Vec<Step>, Change)>,
) {
    match t {
        FieldType::Json if depth > 0 => out.push((path, Change::JsonText)),
        FieldType::Timestamp { unit }
            if depth > 0 && format.timestamp_format == TimestampFormat::UnixMillis =>
        {
            let mul = match unit {
                TimeUnit::Second | TimeUnit::Millisecond => 1,
                TimeUnit::Microsecond => 1_000,
                TimeUnit::Nanosecond => 1_000_000,
            };
            // Seconds columns read milliseconds too coarsely either way; keep the number.
            if mul > 1 {
                out.push((path, Change::Scale(mul)));
            }
        }
        FieldType::Decimal128 { scale, .. }
            if format.decimal_encoding == DecimalEncoding::Bytes =>
        {
            out.push((path, Change::Base64Decimal(*scale)))
        }
        FieldType::Struct { fields } => {
            for f in fields {
                let mut p = path.clone();
                p.push(Step::Field(f.name.clone()));
                walk(&f.field_type, p, depth + 1, format, out);
            }
        }
        FieldType::List { items } => {
            let mut p = path;
            p.push(Step::Items);
            walk(&items.field_type, p, depth + 1, format, out);
        }
        _ => {}
    }
}

fn path_name(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Field(f) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(f);
            }
            Step::Items => s.push_str("[]"),
        }
    }
    s
}

fn apply(v: &mut Value, path: &[Step], change: &Change, name: &str) -> Result<(), String> {
    match path.split_first() {
        None => change_value(v, change, name),
        Some((Step::Field(f), rest)) => match v.get_mut(f.as_str()) {
            Some(child) => apply(child, rest, change, name),
            None => Ok(()),
        },
        Some((Step::Items, rest)) => match v {
            Value::Array(items) => {
                for item in items {
                    apply(item, rest, change, name)?;
                }
                Ok(())
            }
            _ => Ok(()),
        },
    }
}

fn change_value(v: &mut Value, change: &Change, name: &str) -> Result<(), String> {
    if v.is_null() {
        return Ok(());
    }
    match change {
        Change::JsonText => *v = Value::String(v.to_string()),
        Change::Scale(mul) => {
            if let Some(ms) = v.as_i64() {
                let scaled = ms.checked_mul(*mul).ok_or_else(|| {
                    format!("field '{name}': {ms} ms is out of range for the column's unit")
                })?;
                *v = Value::from(scaled);
            }
        }
        Change::Base64Decimal(scale) => {
            let Value::String(text) = v else {
                return Err(format!(
                    "field '{name}': expected a base64 string (json.decimal_encoding = 'bytes'), found {v}"
                ));
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text.as_bytes())
                .map_err(|e| format!("field '{name}': '{text}' is not base64: {e}"))?;
            let unscaled = be_i128(&bytes).map_err(|e| format!("field '{name}': {e}"))?;
            *v = Value::String(decimal_text(unscaled, *scale));
        }
    }
    Ok(())
}

/// An unscaled value as decimal text: 12345 with scale 2 → "123.45".
pub(crate) fn decimal_text(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        let mut s = unscaled.to_string();
        for _ in 0..(-scale) {
            s.push('0');
        }
        return s;
    }
    let negative = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale - digits.len() + 1))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if negative { "-" } else { "" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_places_the_point() {
        assert_eq!(decimal_text(12345, 2), "123.45");
        assert_eq!(decimal_text(-5, 3), "-0.005");
        assert_eq!(decimal_text(7, 0), "7");
        assert_eq!(decimal_text(7, -2), "700");
    }
}
