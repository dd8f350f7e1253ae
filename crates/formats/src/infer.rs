//! Columns inferred from sample JSON messages: the union of every message's shape, with
//! types widened where messages disagree, nullability from absence or `null`, and RFC 3339
//! strings recognised as timestamps.

use serde_json::{Map, Value};
use tributary_types::{FieldType, SourceField, TimeUnit};

/// Why samples could not be inferred from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InferError {
    /// No samples were given.
    #[error("no sample messages to infer a schema from")]
    NoSamples,
    /// A sample is not JSON.
    #[error("sample {index} is not valid JSON: {message}")]
    NotJson {
        /// 1-based position of the sample.
        index: usize,
        /// What the parser said.
        message: String,
    },
    /// A sample is JSON but not an object.
    #[error("sample {index} is a JSON {found}, not an object; only objects have columns")]
    NotObject {
        /// 1-based position of the sample.
        index: usize,
        /// What it is.
        found: &'static str,
    },
}

/// The shape seen so far for one value position.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Only `null` seen.
    Null,
    Bool,
    Int,
    Float,
    Timestamp,
    String,
    /// An object: its properties in first-seen order, and how many objects were seen.
    Object(Vec<(String, Slot)>, usize),
    /// An array: the shape of its items (`None` while only empty arrays were seen).
    Array(Option<Box<Slot>>),
    /// Values that no single column type holds.
    Mixed,
}

/// A shape and whether `null` (or absence) was seen there.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    shape: Shape,
    nullable: bool,
    /// How many objects carried this property (for absence).
    seen: usize,
}

/// Infer columns from sample messages, each one JSON object.
pub fn infer_fields<S: AsRef<[u8]>>(samples: &[S]) -> Result<Vec<SourceField>, InferError> {
    if samples.is_empty() {
        return Err(InferError::NoSamples);
    }
    let mut root = Slot {
        shape: Shape::Object(Vec::new(), 0),
        nullable: false,
        seen: 0,
    };
    for (i, sample) in samples.iter().enumerate() {
        let value: Value =
            serde_json::from_slice(sample.as_ref()).map_err(|e| InferError::NotJson {
                index: i + 1,
                message: e.to_string(),
            })?;
        if !value.is_object() {
            return Err(InferError::NotObject {
                index: i + 1,
                found: kind(&value),
            });
        }
        absorb(&mut root, &value);
    }
    let Shape::Object(props, count) = root.shape else {
        return Ok(Vec::new());
    };
    Ok(fields(&props, count))
}

fn absorb(slot: &mut Slot, value: &Value) {
    slot.seen += 1;
    let incoming = match value {
        Value::Null => {
            slot.nullable = true;
            return;
        }
        Value::Bool(_) => Shape::Bool,
        Value::Number(n) if n.is_i64() || n.is_u64() => Shape::Int,
        Value::Number(_) => Shape::Float,
        Value::String(s) if is_rfc3339(s) => Shape::Timestamp,
        Value::String(_) => Shape::String,
        Value::Object(map) => {
            absorb_object(slot, map);
            return;
        }
        Value::Array(items) => {
            absorb_array(slot, items);
            return;
        }
    };
    slot.shape = widen(std::mem::replace(&mut slot.shape, Shape::Null), incoming);
}

fn absorb_object(slot: &mut Slot, map: &Map<String, Value>) {
    match &mut slot.shape {
        Shape::Null => slot.shape = Shape::Object(Vec::new(), 0),
        Shape::Object(..) => {}
        _ => {
            slot.shape = Shape::Mixed;
            return;
        }
    }
    let Shape::Object(props, count) = &mut slot.shape else {
        return;
    };
    *count += 1;
    for (k, v) in map {
        let idx = match props.iter().position(|(name, _)| name == k) {
            Some(i) => i,
            None => {
                props.push((
                    k.clone(),
                    Slot {
                        shape: Shape::Null,
                        nullable: false,
                        seen: 0,
                    },
                ));
                props.len() - 1
            }
        };
        absorb(&mut props[idx].1, v);
    }
}

fn absorb_array(slot: &mut Slot, items: &[Value]) {
    match &slot.shape {
        Shape::Null => slot.shape = Shape::Array(None),
        Shape::Array(_) => {}
        _ => {
            slot.shape = Shape::Mixed;
            return;
        }
    }
    let Shape::Array(item) = &mut slot.shape else {
        return;
    };
    for v in items {
        let item = item.get_or_insert_with(|| {
            Box::new(Slot {
                shape: Shape::Null,
                nullable: false,
                seen: 0,
            })
        });
        absorb(item, v);
    }
}

/// The narrowest shape holding both: integers widen to floats, timestamps that are not all
/// timestamps to strings; anything else disagreeing is mixed.
fn widen(old: Shape, new: Shape) -> Shape {
    match (old, new) {
        (Shape::Null, n) => n,
        (o, n) if o == n => o,
        (Shape::Int, Shape::Float) | (Shape::Float, Shape::Int) => Shape::Float,
        (Shape::Timestamp, Shape::String) | (Shape::String, Shape::Timestamp) => Shape::String,
        _ => Shape::Mixed,
    }
}

fn fields(props: &[(String, Slot)], objects: usize) -> Vec<SourceField> {
    props
        .iter()
        .map(|(name, slot)| {
            let mut f = SourceField::new(name.clone(), field_type(&slot.shape));
            // Required when present and non-null in every object seen.
            f.required = !slot.nullable && slot.seen == objects && slot.shape != Shape::Null;
            f
        })
        .collect()
}

fn field_type(shape: &Shape) -> FieldType {
    match shape {
        Shape::Bool => FieldType::Bool,
        Shape::Int => FieldType::Int64,
        Shape::Float => FieldType::Float64,
        Shape::Timestamp => FieldType::Timestamp {
            unit: TimeUnit::Nanosecond,
        },
        Shape::String => FieldType::String,
        Shape::Object(props, count) if !props.is_empty() => FieldType::Struct {
            fields: fields(props, *count),
        },
        Shape::Array(Some(item)) if item.shape != Shape::Mixed && item.shape != Shape::Null => {
            let mut f = SourceField::new("item", field_type(&item.shape));
            f.required = !item.nullable;
            FieldType::List { items: Box::new(f) }
        }
        // Only nulls, empty objects or arrays, or disagreeing values: keep the JSON.
        _ => FieldType::Json,
    }
}

/// `2026-11-29T10:00:00Z`, `2026-11-29T10:00:00.123+01:00`, or with a space for `T`.
fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_recognition() {
        assert!(is_rfc3339("2026-11-29T10:00:00Z"));
        assert!(is_rfc3339("2026-11-29 10:00:00.123456+01:00"));
        assert!(!is_rfc3339("2026-11-29"));
        assert!(!is_rfc3339("2026-11-29T10:00:00"));
        assert!(!is_rfc3339("2026-11-29T10:00:00.Z"));
        assert!(!is_rfc3339("yesterday at noon, roughly"));
    }
}
