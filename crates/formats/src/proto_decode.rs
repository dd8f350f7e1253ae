//! Protobuf messages → rows, read from the wire straight into Arrow buffers with a plan
//! compiled once from the message descriptor and the table's columns. Handles every
//! scalar encoding (varint, zig-zag, fixed), packed and unpacked repeated fields, maps,
//! oneofs, nested messages (merged when sent more than once, as the spec says), unknown
//! fields (skipped), defaults for absent proto3 scalars, and the well-known types.
//! Framing: plain, length-delimited, or the Confluent header with message indexes.

use crate::columns::{ColumnBuilder, RowsBuilder};
use crate::failure::Failure;
use crate::proto_schema::{
    WellKnown, find_message, message_index_path, parse_descriptor_set, well_known,
};
use crate::wire::Cursor;
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Fields, SchemaRef, TimeUnit};
use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor};
use std::collections::HashMap;
use tributary_types::ProtobufFormat;

/// How deeply messages may nest before input is refused.
const MAX_DEPTH: usize = 100;

/// The Protobuf part of a [`crate::BatchDecoder`].
#[derive(Debug)]
pub(crate) struct ProtoRows {
    framing: Framing,
    top: Top,
    /// The message's index path in its file, which registry framing must name.
    index_path: Vec<i64>,
    rows: RowsBuilder,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    Plain,
    LengthDelimited,
    Registry,
}

#[derive(Debug)]
enum Top {
    Columns(MessagePlan),
    /// The whole message as JSON into the single `value` column.
    Whole(MessageDescriptor),
}

impl ProtoRows {
    pub(crate) fn new(format: &ProtobufFormat, output: SchemaRef) -> Result<Self, String> {
        let descriptor = format
            .compiled_schema
            .as_ref()
            .ok_or("the table has no compiled Protobuf descriptor set")?;
        let name = format
            .message_name
            .as_deref()
            .ok_or("the table names no Protobuf message")?;
        let pool = parse_descriptor_set(descriptor).map_err(|e| e.to_string())?;
        let message = find_message(&pool, name).map_err(|e| e.to_string())?;
        let top = if format.into_unstructured_json {
            Top::Whole(message.clone())
        } else {
            Top::Columns(MessagePlan::new(&message, output.fields())?)
        };
        let framing = if format.confluent_schema_registry {
            Framing::Registry
        } else if format.length_delimited {
            Framing::LengthDelimited
        } else {
            Framing::Plain
        };
        Ok(Self {
            framing,
            top,
            index_path: message_index_path(&message),
            rows: RowsBuilder::new(output).map_err(|e| e.0)?,
        })
    }

    /// Decode one message (several, length-delimited) into rows; on failure nothing of it
    /// is kept.
    pub(crate) fn push(&mut self, payload: &[u8]) -> Result<(), String> {
        let start = self.rows.len();
        let result = self.push_framed(payload);
        if result.is_err() {
            self.rows.truncate(start);
        }
        result
    }

    fn push_framed(&mut self, payload: &[u8]) -> Result<(), String> {
        match self.framing {
            Framing::Plain => self.row(payload),
            Framing::LengthDelimited => {
                let mut w = Cursor::new(payload);
                while !w.done() {
                    let len = w.varint()?;
                    let body = w.take(
                        usize::try_from(len)
                            .map_err(|_| "a message length does not fit in memory")?,
                    )?;
                    self.row(body)?;
                }
                Ok(())
            }
            Framing::Registry => {
                let body = match payload {
                    [0, _, _, _, _, rest @ ..] => rest,
                    [m, ..] => {
                        return Err(format!(
                            "it does not start with the Confluent wire-format header: the first byte is {m}, not 0"
                        ));
                    }
                    [] => return Err("it is empty".into()),
                };
                let mut w = Cursor::new(body);
                let count = w.long()?;
                let indexes = if count == 0 {
                    vec![0]
                } else {
                    let count = usize::try_from(count)
                        .ok()
                        .filter(|c| *c <= w.remaining())
                        .ok_or("the message-index list of the Confluent header is invalid")?;
                    (0..count)
                        .map(|_| w.long())
                        .collect::<Result<Vec<_>, _>>()?
                };
                if indexes != self.index_path {
                    return Err(format!(
                        "the Confluent header names message index {indexes:?} of the schema, but the table reads the message at {:?}",
                        self.index_path
                    ));
                }
                self.row(w.rest())
            }
        }
    }

    fn row(&mut self, bytes: &[u8]) -> Result<(), String> {
        let root = self.rows.root();
        match &self.top {
            Top::Columns(plan) => {
                decode_message(plan, &[bytes], root, 0).map_err(|f| f.to_string())
            }
            Top::Whole(desc) => {
                let json = message_json(desc, &[bytes])?;
                match root.children().first_mut() {
                    Some(value) => value.push_bytes(json.as_bytes()).map_err(|e| e.0)?,
                    None => return Err("the table has no value column".into()),
                }
                root.end_struct();
                Ok(())
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.len() == 0
    }

    pub(crate) fn finish(&mut self) -> Result<RecordBatch, String> {
        self.rows.finish().map_err(|e| e.to_string())
    }
}

/// How one message's fields land in a struct's columns.
#[derive(Debug)]
struct MessagePlan {
    /// Column index by field number.
    by_number: HashMap<u32, usize>,
    /// One per column, in column order.
    columns: Vec<ColumnPlan>,
}

#[derive(Debug)]
struct ColumnPlan {
    name: String,
    /// Absent means null (presence), rather than the default.
    nullable: bool,
    /// The value an absent proto3 scalar has; `None` for columns the message lacks.
    default: Option<Default>,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    /// A column the message does not have: always null.
    Missing,
    Single(ValuePlan),
    List(ValuePlan),
    Map(ValuePlan, ValuePlan),
}

#[derive(Debug)]
enum ValuePlan {
    Scalar(Scalar),
    Enum(HashMap<i32, String>),
    Message(Box<MessagePlan>),
    /// Seconds and nanos, divided into the column's unit.
    Timestamp {
        div: i64,
    },
    Duration,
    Wrapper(Scalar, Default),
    Json(MessageDescriptor),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Scalar {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
}

/// The value of an absent field.
#[derive(Debug, Clone)]
enum Default {
    Int(i64),
    Uint(u64),
    Float(f64),
    Bool(bool),
    Bytes(Vec<u8>),
    /// Messages: a struct of their own defaults.
    Message,
    /// Repeated and map fields: empty.
    Empty,
}

impl MessagePlan {
    fn new(message: &MessageDescriptor, columns: &Fields) -> Result<Self, String> {
        let mut by_number = HashMap::new();
        let mut plans = Vec::with_capacity(columns.len());
        for (i, column) in columns.iter().enumerate() {
            let Some(f) = message.get_field_by_name(column.name()) else {
                if !column.is_nullable() {
                    return Err(format!(
                        "column '{}' is NOT NULL, but message '{}' has no field of that name",
                        column.name(),
                        message.full_name()
                    ));
                }
                plans.push(ColumnPlan {
                    name: column.name().clone(),
                    nullable: true,
                    default: None,
                    shape: Shape::Missing,
                });
                continue;
            };
            by_number.insert(f.number(), i);
            let plan = column_plan(&f, column).map_err(|e| format!("field '{}': {e}", f.name()))?;
            plans.push(plan);
        }
        Ok(Self {
            by_number,
            columns: plans,
        })
    }
}

fn column_plan(f: &FieldDescriptor, column: &Field) -> Result<ColumnPlan, String> {
    let target = column.data_type();
    let (shape, default) = if f.is_map() {
        let (DataType::Map(entries, _), Kind::Message(entry)) = (target, f.kind()) else {
            return Err(format!("a map cannot be read into {target}"));
        };
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(format!("a map cannot be read into {target}"));
        };
        let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
            return Err(format!("a map cannot be read into {target}"));
        };
        let key = value_plan(&entry.map_entry_key_field(), k.data_type())?;
        let value = value_plan(&entry.map_entry_value_field(), v.data_type())?;
        (Shape::Map(key, value), Default::Empty)
    } else if f.is_list() {
        let DataType::List(item) = target else {
            return Err(format!("a repeated field cannot be read into {target}"));
        };
        (
            Shape::List(value_plan(f, item.data_type())?),
            Default::Empty,
        )
    } else {
        (Shape::Single(value_plan(f, target)?), default_of(f))
    };
    Ok(ColumnPlan {
        name: column.name().clone(),
        nullable: f.supports_presence() && f.cardinality() != prost_reflect::Cardinality::Required,
        default: Some(default),
        shape,
    })
}

fn default_of(f: &FieldDescriptor) -> Default {
    use prost_reflect::Value as V;
    match f.default_value() {
        V::Bool(b) => Default::Bool(b),
        V::I32(v) => Default::Int(i64::from(v)),
        V::I64(v) => Default::Int(v),
        V::U32(v) => Default::Uint(u64::from(v)),
        V::U64(v) => Default::Uint(v),
        V::F32(v) => Default::Float(f64::from(v)),
        V::F64(v) => Default::Float(v),
        V::String(s) => Default::Bytes(s.into_bytes()),
        V::Bytes(b) => Default::Bytes(b.to_vec()),
        V::EnumNumber(n) => match f.kind() {
            Kind::Enum(e) => Default::Bytes(
                e.get_value(n)
                    .map(|v| v.name().to_string())
                    .unwrap_or_else(|| n.to_string())
                    .into_bytes(),
            ),
            _ => Default::Int(i64::from(n)),
        },
        V::Message(_) | V::List(_) | V::Map(_) => Default::Message,
    }
}

fn value_plan(f: &FieldDescriptor, target: &DataType) -> Result<ValuePlan, String> {
    let scalar = |s| Ok(ValuePlan::Scalar(s));
    match f.kind() {
        Kind::Double => scalar(Scalar::Double),
        Kind::Float => scalar(Scalar::Float),
        Kind::Int32 => scalar(Scalar::Int32),
        Kind::Int64 => scalar(Scalar::Int64),
        Kind::Uint32 => scalar(Scalar::Uint32),
        Kind::Uint64 => scalar(Scalar::Uint64),
        Kind::Sint32 => scalar(Scalar::Sint32),
        Kind::Sint64 => scalar(Scalar::Sint64),
        Kind::Fixed32 => scalar(Scalar::Fixed32),
        Kind::Fixed64 => scalar(Scalar::Fixed64),
        Kind::Sfixed32 => scalar(Scalar::Sfixed32),
        Kind::Sfixed64 => scalar(Scalar::Sfixed64),
        Kind::Bool => scalar(Scalar::Bool),
        Kind::String => scalar(Scalar::String),
        Kind::Bytes => scalar(Scalar::Bytes),
        Kind::Enum(e) => Ok(ValuePlan::Enum(
            e.values()
                .map(|v| (v.number(), v.name().to_string()))
                .collect(),
        )),
        Kind::Message(m) => match (well_known(&m), target) {
            (Some(WellKnown::Timestamp), DataType::Timestamp(unit, _)) => {
                Ok(ValuePlan::Timestamp {
                    div: match unit {
                        TimeUnit::Second => 1_000_000_000,
                        TimeUnit::Millisecond => 1_000_000,
                        TimeUnit::Microsecond => 1_000,
                        TimeUnit::Nanosecond => 1,
                    },
                })
            }
            (Some(WellKnown::Duration), _) => Ok(ValuePlan::Duration),
            (Some(WellKnown::Json), _) => Ok(ValuePlan::Json(m)),
            (Some(WellKnown::Wrapper), _) => {
                let inner = m.get_field(1).ok_or("a wrapper without a value field")?;
                match value_plan(&inner, target)? {
                    ValuePlan::Scalar(s) => Ok(ValuePlan::Wrapper(s, default_of(&inner))),
                    _ => Err("a wrapper of a non-scalar".into()),
                }
            }
            (_, DataType::Struct(columns)) => {
                Ok(ValuePlan::Message(Box::new(MessagePlan::new(&m, columns)?)))
            }
            (_, DataType::Utf8) => Ok(ValuePlan::Json(m)),
            (_, other) => Err(format!(
                "message '{}' cannot be read into {other}",
                m.full_name()
            )),
        },
    }
}

/// One occurrence of a field on the wire.
#[derive(Debug, Clone, Copy)]
enum Occ<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

impl Occ<'_> {
    fn wire_type(&self) -> &'static str {
        match self {
            Occ::Varint(_) => "varint",
            Occ::Fixed64(_) => "64-bit",
            Occ::Len(_) => "length-delimited",
            Occ::Fixed32(_) => "32-bit",
        }
    }
}

/// The next field's number and value.
fn next_field<'a>(w: &mut Cursor<'a>) -> Result<(u32, Occ<'a>), Failure> {
    let key = w.varint()?;
    let number = u32::try_from(key >> 3)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("field number {} is not valid", key >> 3))?;
    let occ = match key & 7 {
        0 => Occ::Varint(w.varint()?),
        1 => Occ::Fixed64(w.fixed64()?),
        2 => {
            let len = usize::try_from(w.varint()?).map_err(|_| "a length out of range")?;
            Occ::Len(w.take(len)?)
        }
        5 => Occ::Fixed32(w.fixed32()?),
        3 | 4 => return Err("groups (wire types 3 and 4) are not supported".into()),
        t => return Err(format!("wire type {t} does not exist").into()),
    };
    Ok((number, occ))
}

/// Decode a message (the concatenation of `parts`, which is how repeated occurrences of a
/// singular message field merge) into the struct `col`.
fn decode_message(
    plan: &MessagePlan,
    parts: &[&[u8]],
    col: &mut ColumnBuilder,
    depth: usize,
) -> Result<(), Failure> {
    if depth > MAX_DEPTH {
        return Err("messages are nested too deeply".into());
    }
    let mut seen: Vec<(usize, Occ<'_>)> = Vec::new();
    for part in parts {
        let mut w = Cursor::new(part);
        while !w.done() {
            let (number, occ) = next_field(&mut w)?;
            if let Some(i) = plan.by_number.get(&number) {
                seen.push((*i, occ));
            }
        }
    }
    let children = col.children();
    for (i, column) in plan.columns.iter().enumerate() {
        let Some(child) = children.get_mut(i) else {
            return Err("a column the plan expected is missing".into());
        };
        fill_column(column, &seen, i, child, depth).map_err(|f| f.at(&column.name))?;
    }
    col.end_struct();
    Ok(())
}

fn fill_column(
    column: &ColumnPlan,
    seen: &[(usize, Occ<'_>)],
    i: usize,
    child: &mut ColumnBuilder,
    depth: usize,
) -> Result<(), Failure> {
    let occurrences = || seen.iter().filter(move |(c, _)| *c == i).map(|(_, o)| *o);
    match &column.shape {
        Shape::Missing => child.push_null(),
        Shape::Single(ValuePlan::Message(sub)) => {
            let parts = len_parts(occurrences())?;
            if parts.is_empty() {
                child.push_null();
            } else {
                decode_message(sub, &parts, child, depth + 1)?;
            }
        }
        Shape::Single(
            v @ (ValuePlan::Timestamp { .. }
            | ValuePlan::Duration
            | ValuePlan::Wrapper(..)
            | ValuePlan::Json(_)),
        ) => {
            let parts = len_parts(occurrences())?;
            if parts.is_empty() {
                child.push_null();
            } else {
                well_known_value(v, &parts, child)?;
            }
        }
        Shape::Single(v) => match occurrences().next_back() {
            Some(o) => scalar_value(v, o, child)?,
            None if column.nullable => child.push_null(),
            None => push_default(column.default.as_ref(), child)?,
        },
        Shape::List(v) => {
            let item = child.list_child().ok_or("a list column without items")?;
            for o in occurrences() {
                match (v, o) {
                    (ValuePlan::Message(sub), Occ::Len(b)) => {
                        decode_message(sub, &[b], item, depth + 1)?
                    }
                    (
                        ValuePlan::Timestamp { .. }
                        | ValuePlan::Duration
                        | ValuePlan::Wrapper(..)
                        | ValuePlan::Json(_),
                        Occ::Len(b),
                    ) => well_known_value(v, &[b], item)?,
                    (ValuePlan::Scalar(s), Occ::Len(b)) if s.packable() => {
                        let mut w = Cursor::new(b);
                        while !w.done() {
                            let o = match s.wire() {
                                0 => Occ::Varint(w.varint()?),
                                1 => Occ::Fixed64(w.fixed64()?),
                                _ => Occ::Fixed32(w.fixed32()?),
                            };
                            scalar_value(v, o, item)?;
                        }
                    }
                    (ValuePlan::Enum(_), Occ::Len(b)) => {
                        let mut w = Cursor::new(b);
                        while !w.done() {
                            scalar_value(v, Occ::Varint(w.varint()?), item)?;
                        }
                    }
                    _ => scalar_value(v, o, item)?,
                }
            }
            child.end_list()?;
        }
        Shape::Map(key, value) => {
            let (keys, values) = child.map_children().ok_or("a map column without entries")?;
            for o in occurrences() {
                let Occ::Len(entry) = o else {
                    return Err(format!("a map entry sent as {}", o.wire_type()).into());
                };
                map_entry(key, value, entry, keys, values, depth)?;
            }
            child.end_list()?;
        }
    }
    Ok(())
}

fn len_parts<'a>(occ: impl Iterator<Item = Occ<'a>>) -> Result<Vec<&'a [u8]>, Failure> {
    occ.map(|o| match o {
        Occ::Len(b) => Ok(b),
        other => Err(Failure::from(format!(
            "a message sent as {}",
            other.wire_type()
        ))),
    })
    .collect()
}

fn map_entry(
    key: &ValuePlan,
    value: &ValuePlan,
    entry: &[u8],
    keys: &mut ColumnBuilder,
    values: &mut ColumnBuilder,
    depth: usize,
) -> Result<(), Failure> {
    let mut k = None;
    let mut v = None;
    let mut w = Cursor::new(entry);
    while !w.done() {
        let (tag, occ) = next_field(&mut w)?;
        match tag {
            1 => k = Some(occ),
            2 => v = Some(occ),
            _ => {}
        }
    }
    match k {
        Some(o) => scalar_value(key, o, keys).map_err(|f| f.at("key"))?,
        None => push_default(Some(&key.zero()), keys)?,
    }
    match (value, v) {
        (ValuePlan::Message(sub), o) => {
            let parts = len_parts(o.into_iter())?;
            decode_message(sub, &parts, values, depth + 1).map_err(|f| f.at("value"))?
        }
        (
            ValuePlan::Timestamp { .. }
            | ValuePlan::Duration
            | ValuePlan::Wrapper(..)
            | ValuePlan::Json(_),
            Some(Occ::Len(b)),
        ) => well_known_value(value, &[b], values)?,
        (_, Some(o)) => scalar_value(value, o, values).map_err(|f| f.at("value"))?,
        (_, None) => push_default(Some(&value.zero()), values)?,
    }
    Ok(())
}

impl Scalar {
    /// The `.proto` spelling.
    fn name(self) -> &'static str {
        match self {
            Scalar::Double => "double",
            Scalar::Float => "float",
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::Uint32 => "uint32",
            Scalar::Uint64 => "uint64",
            Scalar::Sint32 => "sint32",
            Scalar::Sint64 => "sint64",
            Scalar::Fixed32 => "fixed32",
            Scalar::Fixed64 => "fixed64",
            Scalar::Sfixed32 => "sfixed32",
            Scalar::Sfixed64 => "sfixed64",
            Scalar::Bool => "bool",
            Scalar::String => "string",
            Scalar::Bytes => "bytes",
        }
    }

    /// Whether repeated values of this type may be packed.
    fn packable(self) -> bool {
        !matches!(self, Scalar::String | Scalar::Bytes)
    }

    /// The wire type of one value: 0 varint, 1 64-bit, 5 32-bit, 2 length-delimited.
    fn wire(self) -> u8 {
        match self {
            Scalar::Double | Scalar::Fixed64 | Scalar::Sfixed64 => 1,
            Scalar::Float | Scalar::Fixed32 | Scalar::Sfixed32 => 5,
            Scalar::String | Scalar::Bytes => 2,
            _ => 0,
        }
    }
}

impl ValuePlan {
    /// The proto3 zero value, for absent map keys and values.
    fn zero(&self) -> Default {
        match self {
            ValuePlan::Scalar(Scalar::Double | Scalar::Float) => Default::Float(0.0),
            ValuePlan::Scalar(Scalar::Bool) => Default::Bool(false),
            ValuePlan::Scalar(Scalar::String | Scalar::Bytes) => Default::Bytes(Vec::new()),
            ValuePlan::Scalar(Scalar::Uint64 | Scalar::Fixed64) => Default::Uint(0),
            ValuePlan::Scalar(_) => Default::Int(0),
            ValuePlan::Enum(values) => Default::Bytes(
                values
                    .get(&0)
                    .cloned()
                    .unwrap_or_else(|| "0".into())
                    .into_bytes(),
            ),
            _ => Default::Message,
        }
    }
}

fn scalar_value(v: &ValuePlan, o: Occ<'_>, col: &mut ColumnBuilder) -> Result<(), Failure> {
    let wrong = |s: &str| -> Failure {
        format!("a value of type {s} was sent as {}", o.wire_type()).into()
    };
    match (v, o) {
        (ValuePlan::Enum(values), Occ::Varint(n)) => {
            let n = n as i64 as i32;
            match values.get(&n) {
                Some(name) => col.push_bytes(name.as_bytes())?,
                // Unknown numbers (a newer writer) keep their number.
                None => col.push_bytes(n.to_string().as_bytes())?,
            }
        }
        (ValuePlan::Enum(_), _) => return Err(wrong("enum")),
        (ValuePlan::Scalar(s), o) => match (s, o) {
            (Scalar::Int32, Occ::Varint(n)) => col.push_int(i64::from(n as i64 as i32))?,
            (Scalar::Int64, Occ::Varint(n)) => col.push_int(n as i64)?,
            (Scalar::Uint32, Occ::Varint(n)) => col.push_int(i64::from(n as u32))?,
            (Scalar::Uint64, Occ::Varint(n)) => col.push_uint(n)?,
            (Scalar::Sint32, Occ::Varint(n)) => {
                let n = n as u32;
                col.push_int(i64::from((n >> 1) as i32 ^ -((n & 1) as i32)))?
            }
            (Scalar::Sint64, Occ::Varint(n)) => {
                col.push_int((n >> 1) as i64 ^ -((n & 1) as i64))?
            }
            (Scalar::Bool, Occ::Varint(n)) => col.push_bool(n != 0)?,
            (Scalar::Fixed32, Occ::Fixed32(n)) => col.push_int(i64::from(n))?,
            (Scalar::Sfixed32, Occ::Fixed32(n)) => col.push_int(i64::from(n as i32))?,
            (Scalar::Float, Occ::Fixed32(n)) => col.push_float(f64::from(f32::from_bits(n)))?,
            (Scalar::Fixed64, Occ::Fixed64(n)) => col.push_uint(n)?,
            (Scalar::Sfixed64, Occ::Fixed64(n)) => col.push_int(n as i64)?,
            (Scalar::Double, Occ::Fixed64(n)) => col.push_float(f64::from_bits(n))?,
            (Scalar::String | Scalar::Bytes, Occ::Len(b)) => col.push_bytes(b)?,
            (s, _) => return Err(wrong(s.name())),
        },
        _ => return Err("a message value where a scalar was expected".into()),
    }
    Ok(())
}

fn push_default(d: Option<&Default>, col: &mut ColumnBuilder) -> Result<(), Failure> {
    match d {
        None => col.push_null(),
        Some(Default::Int(v)) => col.push_int(*v)?,
        Some(Default::Uint(v)) => col.push_uint(*v)?,
        Some(Default::Float(v)) => col.push_float(*v)?,
        Some(Default::Bool(v)) => col.push_bool(*v)?,
        Some(Default::Bytes(v)) => col.push_bytes(v)?,
        Some(Default::Message | Default::Empty) => col.push_null(),
    }
    Ok(())
}

/// Timestamp, Duration, wrappers and JSON-like messages.
fn well_known_value(
    v: &ValuePlan,
    parts: &[&[u8]],
    col: &mut ColumnBuilder,
) -> Result<(), Failure> {
    match v {
        ValuePlan::Timestamp { div } => {
            let (seconds, nanos) = seconds_nanos(parts)?;
            let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
            let v = i64::try_from(total.div_euclid(i128::from(*div)))
                .map_err(|_| "a timestamp out of the column's range")?;
            col.push_int(v)?
        }
        ValuePlan::Duration => {
            let (seconds, nanos) = seconds_nanos(parts)?;
            let v = seconds
                .checked_mul(1_000_000_000)
                .and_then(|s| s.checked_add(i64::from(nanos)))
                .ok_or("a duration longer than BIGINT nanoseconds can hold")?;
            col.push_int(v)?
        }
        ValuePlan::Wrapper(s, default) => {
            let mut last = None;
            for part in parts {
                let mut w = Cursor::new(part);
                while !w.done() {
                    let (tag, occ) = next_field(&mut w)?;
                    if tag == 1 {
                        last = Some(occ);
                    }
                }
            }
            match last {
                Some(o) => scalar_value(&ValuePlan::Scalar(*s), o, col)?,
                None => push_default(Some(default), col)?,
            }
        }
        ValuePlan::Json(desc) => {
            let json = message_json(desc, parts)?;
            col.push_bytes(json.as_bytes())?
        }
        _ => return Err("not a well-known type".into()),
    }
    Ok(())
}

fn seconds_nanos(parts: &[&[u8]]) -> Result<(i64, i32), Failure> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    for part in parts {
        let mut w = Cursor::new(part);
        while !w.done() {
            match next_field(&mut w)? {
                (1, Occ::Varint(v)) => seconds = v as i64,
                (2, Occ::Varint(v)) => nanos = v as i64 as i32,
                _ => {}
            }
        }
    }
    Ok((seconds, nanos))
}

/// A message as proto3 JSON (Struct, Value and ListValue as plain JSON).
fn message_json(desc: &MessageDescriptor, parts: &[&[u8]]) -> Result<String, String> {
    let bytes = parts.concat();
    let msg = DynamicMessage::decode(desc.clone(), bytes.as_slice()).map_err(|e| e.to_string())?;
    serde_json::to_string(&msg).map_err(|e| e.to_string())
}
