//! Avro messages → rows, straight from the wire into Arrow buffers (no intermediate Avro
//! or JSON values): Confluent-framed datums (writer schema looked up by id, plans cached
//! per id), bare datums, and object container files (null and deflate codecs).

use crate::avro_plan::{MAX_DEPTH, Op, Shape, ShapeId, Shapes, plan};
use crate::columns::{ColumnBuilder, RowsBuilder};
use crate::failure::Failure;
use crate::wire::{Cursor, be_i128};
use apache_avro::Schema;
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, SchemaRef};
use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::sync::Arc;
use tributary_types::AvroFormat;

/// Where writer schemas for registry-framed messages come from (the schema registry).
pub trait AvroSchemaLookup: Send + Sync + fmt::Debug {
    /// The Avro schema text registered under `id`.
    fn avro_schema(&self, id: u32) -> Result<String, String>;
}

/// A compiled writer schema and how it lands in the table's columns.
#[derive(Debug)]
struct Plan {
    shapes: Shapes,
    top: Top,
}

#[derive(Debug)]
enum Top {
    /// The record's fields into the table's columns.
    Record(Op),
    /// The whole datum as JSON text into the single `value` column.
    Whole(ShapeId),
}

impl Plan {
    fn new(writer: &Schema, output: &SchemaRef, unstructured: bool) -> Result<Self, String> {
        let (shapes, root) = Shapes::compile(writer)?;
        let top = if unstructured {
            Top::Whole(root)
        } else {
            if !matches!(shapes.get(root), Shape::Record(_)) {
                return Err("the writer schema's top level is not a record".into());
            }
            let row = Field::new("row", DataType::Struct(output.fields().clone()), false);
            Top::Record(plan(&shapes, root, &row)?)
        };
        Ok(Self { shapes, top })
    }
}

/// How messages are framed.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    /// A 0 byte, a 4-byte schema id, then a datum.
    Registry,
    /// A bare datum written with the table's schema.
    Datum,
    /// An object container file with its own schema.
    Container,
}

/// The Avro part of a [`crate::BatchDecoder`].
#[derive(Debug)]
pub(crate) struct AvroRows {
    framing: Framing,
    unstructured: bool,
    output: SchemaRef,
    rows: RowsBuilder,
    /// The table's own schema, for bare datums and its own registry id.
    reader: Option<Arc<Plan>>,
    table_schema_id: Option<u32>,
    by_id: HashMap<u32, Arc<Plan>>,
    by_text: HashMap<String, Arc<Plan>>,
    lookup: Option<Arc<dyn AvroSchemaLookup>>,
}

impl AvroRows {
    pub(crate) fn new(format: &AvroFormat, output: SchemaRef) -> Result<Self, String> {
        let framing = if format.confluent_schema_registry {
            Framing::Registry
        } else if format.raw_datums {
            Framing::Datum
        } else {
            Framing::Container
        };
        let reader = match &format.reader_schema {
            Some(text) => {
                let schema = crate::parse_avro_schema(text).map_err(|e| e.to_string())?;
                Some(Arc::new(Plan::new(
                    &schema,
                    &output,
                    format.into_unstructured_json,
                )?))
            }
            None if framing == Framing::Datum => {
                return Err("bare Avro datums need the table's Avro schema ('avro.schema')".into());
            }
            None => None,
        };
        Ok(Self {
            framing,
            unstructured: format.into_unstructured_json,
            rows: RowsBuilder::new(output.clone()).map_err(|e| e.0)?,
            output,
            reader,
            table_schema_id: format.schema_id,
            by_id: HashMap::new(),
            by_text: HashMap::new(),
            lookup: None,
        })
    }

    pub(crate) fn set_lookup(&mut self, lookup: Arc<dyn AvroSchemaLookup>) {
        self.lookup = Some(lookup);
    }

    /// Decode one message into rows; on failure nothing of it is kept.
    pub(crate) fn push(&mut self, message: &[u8]) -> Result<(), String> {
        let start = self.rows.len();
        let result = match self.framing {
            Framing::Registry => self.push_registry(message),
            Framing::Datum => match self.reader.clone() {
                Some(p) => self.datum(&p, message),
                None => Err("the table has no Avro schema".into()),
            },
            Framing::Container => self.push_container(message),
        };
        if result.is_err() {
            self.rows.truncate(start);
        }
        result
    }

    fn push_registry(&mut self, message: &[u8]) -> Result<(), String> {
        let (id, body) = match message {
            [0, a, b, c, d, rest @ ..] => (u32::from_be_bytes([*a, *b, *c, *d]), rest),
            [m, ..] => {
                return Err(format!(
                    "it does not start with the Confluent wire-format header: the first byte is {m}, not 0"
                ));
            }
            [] => return Err("it is empty".into()),
        };
        let plan = self.plan_for_id(id)?;
        self.datum(&plan, body)
    }

    /// The writer schema id of a registry-framed message, when no plan exists for it yet
    /// and no lookup would find one: the caller fetches it and calls [`Self::add_writer`].
    pub(crate) fn unknown_writer(&self, message: &[u8]) -> Option<u32> {
        if self.framing != Framing::Registry || self.lookup.is_some() {
            return None;
        }
        let [0, a, b, c, d, ..] = message else {
            return None;
        };
        let id = u32::from_be_bytes([*a, *b, *c, *d]);
        let own = self.reader.is_some() && self.table_schema_id.is_none_or(|t| t == id);
        (!own && !self.by_id.contains_key(&id)).then_some(id)
    }

    /// Install the writer schema registered under `id`.
    pub(crate) fn add_writer(&mut self, id: u32, schema_text: &str) -> Result<(), String> {
        let schema = crate::parse_avro_schema(schema_text)
            .map_err(|e| format!("writer schema {id}: {e}"))?;
        let plan = Plan::new(&schema, &self.output, self.unstructured)
            .map_err(|e| format!("writer schema {id}: {e}"))?;
        self.by_id.insert(id, Arc::new(plan));
        Ok(())
    }

    fn plan_for_id(&mut self, id: u32) -> Result<Arc<Plan>, String> {
        if let Some(p) = self.by_id.get(&id) {
            return Ok(p.clone());
        }
        let plan = match (&self.lookup, &self.reader) {
            (Some(lookup), _) => {
                let text = lookup
                    .avro_schema(id)
                    .map_err(|e| format!("writer schema {id}: {e}"))?;
                let schema = crate::parse_avro_schema(&text)
                    .map_err(|e| format!("writer schema {id}: {e}"))?;
                Arc::new(
                    Plan::new(&schema, &self.output, self.unstructured)
                        .map_err(|e| format!("writer schema {id}: {e}"))?,
                )
            }
            (None, Some(reader)) if self.table_schema_id.is_none_or(|t| t == id) => reader.clone(),
            (None, _) => {
                return Err(match self.table_schema_id {
                    Some(t) => format!(
                        "it was written with schema id {id}, but the table's schema is id {t}; reading other writer schemas needs the schema registry"
                    ),
                    None => format!(
                        "it was written with schema id {id}, and the table has no Avro schema to read it with"
                    ),
                });
            }
        };
        self.by_id.insert(id, plan.clone());
        Ok(plan)
    }

    /// One datum, which must use every byte.
    fn datum(&mut self, plan: &Plan, bytes: &[u8]) -> Result<(), String> {
        let mut cur = Cursor::new(bytes);
        self.row(plan, &mut cur)?;
        if cur.remaining() > 0 {
            return Err(format!(
                "{} bytes are left over after the record; it was probably written with a different schema",
                cur.remaining()
            ));
        }
        Ok(())
    }

    fn row(&mut self, plan: &Plan, cur: &mut Cursor<'_>) -> Result<(), String> {
        let root = self.rows.root();
        let result = match &plan.top {
            Top::Record(op) => read(&plan.shapes, op, cur, root, 0),
            Top::Whole(shape) => match root.children().first_mut() {
                Some(value) => {
                    let r = read(&plan.shapes, &Op::Json(*shape), cur, value, 0);
                    root.end_struct();
                    r
                }
                None => Err(Failure::new("the table has no value column")),
            },
        };
        result.map_err(|f| f.to_string())
    }

    fn push_container(&mut self, message: &[u8]) -> Result<(), String> {
        let mut cur = Cursor::new(message);
        if cur.take(4).ok() != Some(b"Obj\x01".as_slice()) {
            return Err(
                "it is not an Avro object container file (no 'Obj' header); set avro.raw_datums = true for bare datums, or avro.confluent_schema_registry = true for registry-framed messages"
                    .into(),
            );
        }
        let mut schema_text = None;
        let mut codec = "null".to_string();
        loop {
            let count = cur.block_count(false)?;
            if count == 0 {
                break;
            }
            for _ in 0..count {
                let key = String::from_utf8_lossy(cur.bytes()?).into_owned();
                let value = cur.bytes()?;
                match key.as_str() {
                    "avro.schema" => {
                        schema_text = Some(String::from_utf8_lossy(value).into_owned())
                    }
                    "avro.codec" => codec = String::from_utf8_lossy(value).into_owned(),
                    _ => {}
                }
            }
        }
        let sync = cur.take(16)?;
        let text = schema_text.ok_or("the container file has no avro.schema")?;
        let plan = match self.by_text.get(&text) {
            Some(p) => p.clone(),
            None => {
                let schema = crate::parse_avro_schema(&text)
                    .map_err(|e| format!("the container's schema: {e}"))?;
                let p = Arc::new(Plan::new(&schema, &self.output, self.unstructured)?);
                self.by_text.insert(text, p.clone());
                p
            }
        };
        while cur.remaining() > 0 {
            let count = cur.long()?;
            let size = usize::try_from(cur.long()?).map_err(|_| "a negative block size")?;
            let data = cur.take(size)?;
            if cur.take(16)? != sync {
                return Err("a block's sync marker does not match the header's".into());
            }
            let inflated;
            let data = match codec.as_str() {
                "null" => data,
                "deflate" => {
                    let mut out = Vec::new();
                    flate2::read::DeflateDecoder::new(data)
                        .take(MAX_BLOCK_BYTES)
                        .read_to_end(&mut out)
                        .map_err(|e| format!("a deflate block does not inflate: {e}"))?;
                    inflated = out;
                    &inflated
                }
                other => {
                    return Err(format!(
                        "the container uses the '{other}' codec; only null and deflate are supported"
                    ));
                }
            };
            let mut block = Cursor::new(data);
            for _ in 0..count {
                self.row(&plan, &mut block)?;
            }
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.rows.len() == 0
    }

    pub(crate) fn finish(&mut self) -> Result<RecordBatch, String> {
        self.rows.finish().map_err(|e| e.to_string())
    }
}

/// The largest inflated container block accepted.
const MAX_BLOCK_BYTES: u64 = 256 << 20;

/// Read one writer value with `op` into `col`.
fn read(
    shapes: &Shapes,
    op: &Op,
    cur: &mut Cursor<'_>,
    col: &mut ColumnBuilder,
    depth: usize,
) -> Result<(), Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::new("values are nested too deeply"));
    }
    match op {
        Op::Null => col.push_null(),
        Op::Bool => col.push_bool(cur.boolean()?)?,
        Op::Int { long, mul, div } => {
            let v = if *long {
                cur.long()?
            } else {
                i64::from(cur.int()?)
            };
            let v = v
                .checked_mul(*mul)
                .ok_or_else(|| format!("{v} overflows when converted to the column's unit"))?
                / div;
            col.push_int(v)?
        }
        Op::Float => col.push_float(f64::from(cur.float()?))?,
        Op::Double => col.push_float(cur.double()?)?,
        Op::Bytes => col.push_bytes(cur.bytes()?)?,
        Op::Fixed(n) => col.push_bytes(cur.take(*n)?)?,
        Op::UuidFixed => col.push_bytes(uuid_text(cur.take(16)?).as_bytes())?,
        Op::Decimal { fixed, mul } => {
            let bytes = match fixed {
                Some(n) => cur.take(*n)?,
                None => cur.bytes()?,
            };
            let v = be_i128(bytes)?
                .checked_mul(*mul)
                .ok_or("a decimal overflows when rescaled to the column's scale")?;
            col.push_i128(v)?
        }
        Op::Enum(symbols) => {
            let i = cur.int()?;
            let symbol = usize::try_from(i)
                .ok()
                .and_then(|i| symbols.get(i))
                .ok_or_else(|| {
                    format!("enum index {i} is not one of the {} symbols", symbols.len())
                })?;
            col.push_bytes(symbol.as_bytes())?
        }
        Op::Union(branches) => {
            let i = cur.long()?;
            let branch = usize::try_from(i)
                .ok()
                .and_then(|i| branches.get(i))
                .ok_or_else(|| {
                    format!(
                        "union branch {i} does not exist (the union has {})",
                        branches.len()
                    )
                })?;
            read(shapes, branch, cur, col, depth + 1)?
        }
        Op::Fail(why) => return Err(Failure::new(why.clone())),
        Op::Skip(shape) => skip(shapes, *shape, cur, depth + 1)?,
        Op::Json(shape) => {
            let shape = *shape;
            // A union whose null branch is set is a SQL null, not the text "null".
            if let Shape::Union(branches) = shapes.get(shape) {
                let i = cur.long()?;
                let b = usize::try_from(i)
                    .ok()
                    .and_then(|i| branches.get(i))
                    .copied()
                    .ok_or_else(|| format!("union branch {i} does not exist"))?;
                return read(shapes, &Op::Json(b), cur, col, depth + 1);
            }
            if matches!(shapes.get(shape), Shape::Null) {
                col.push_null();
                return Ok(());
            }
            let mut out = String::new();
            json(shapes, shape, cur, &mut out, depth + 1)?;
            col.push_bytes(out.as_bytes())?
        }
        Op::Record { fields, missing } => {
            for (name, target, op) in fields {
                match target {
                    Some(i) => match col.children().get_mut(*i) {
                        Some(child) => {
                            read(shapes, op, cur, child, depth + 1).map_err(|f| f.at(name))?
                        }
                        None => return Err(Failure::new("a column the plan expected is missing")),
                    },
                    None => read(shapes, op, cur, col, depth + 1).map_err(|f| f.at(name))?,
                }
            }
            for i in missing {
                if let Some(child) = col.children().get_mut(*i) {
                    child.push_null();
                }
            }
            col.end_struct();
        }
        Op::Array(item, zero_sized) => {
            let child = col
                .list_child()
                .ok_or("an array cannot be stored in a non-list column")?;
            loop {
                let n = cur.block_count(*zero_sized)?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    read(shapes, item, cur, child, depth + 1)?;
                }
            }
            col.end_list()?
        }
        Op::Map(value, zero_sized) => {
            let (keys, values) = col
                .map_children()
                .ok_or("a map cannot be stored in a non-map column")?;
            loop {
                let n = cur.block_count(*zero_sized)?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    keys.push_bytes(cur.bytes()?)?;
                    read(shapes, value, cur, values, depth + 1)?;
                }
            }
            col.end_list()?
        }
    }
    Ok(())
}

/// Read past one value.
fn skip(shapes: &Shapes, id: ShapeId, cur: &mut Cursor<'_>, depth: usize) -> Result<(), Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::new("values are nested too deeply"));
    }
    match shapes.get(id) {
        Shape::Null | Shape::Pending => {}
        Shape::Bool => {
            cur.take(1)?;
        }
        Shape::Int(_) | Shape::Long(_) | Shape::Enum(_) => {
            cur.long()?;
        }
        Shape::Float => {
            cur.take(4)?;
        }
        Shape::Double => {
            cur.take(8)?;
        }
        Shape::Bytes(_) | Shape::String(_) => {
            cur.bytes()?;
        }
        Shape::Fixed(n, _) => {
            cur.take(*n)?;
        }
        Shape::Array(item) => loop {
            let n = cur.block_count(shapes.zero_sized(*item))?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                skip(shapes, *item, cur, depth + 1)?;
            }
        },
        Shape::Map(value) => loop {
            let n = cur.block_count(shapes.zero_sized(*value))?;
            if n == 0 {
                break;
            }
            for _ in 0..n {
                cur.bytes()?;
                skip(shapes, *value, cur, depth + 1)?;
            }
        },
        Shape::Union(branches) => {
            let b = branch(branches, cur)?;
            skip(shapes, b, cur, depth + 1)?;
        }
        Shape::Record(fields) => {
            for (_, f) in fields {
                skip(shapes, *f, cur, depth + 1)?;
            }
        }
    }
    Ok(())
}

fn branch(branches: &[ShapeId], cur: &mut Cursor<'_>) -> Result<ShapeId, Failure> {
    let i = cur.long()?;
    usize::try_from(i)
        .ok()
        .and_then(|i| branches.get(i))
        .copied()
        .ok_or_else(|| Failure::new(format!("union branch {i} does not exist")))
}

/// Render one value as JSON: records and maps as objects, arrays as arrays, union values
/// bare, bytes and fixed as strings of code points 0–255 (Avro's JSON convention).
fn json(
    shapes: &Shapes,
    id: ShapeId,
    cur: &mut Cursor<'_>,
    out: &mut String,
    depth: usize,
) -> Result<(), Failure> {
    use std::fmt::Write;
    if depth > MAX_DEPTH {
        return Err(Failure::new("values are nested too deeply"));
    }
    match shapes.get(id) {
        Shape::Null | Shape::Pending => out.push_str("null"),
        Shape::Bool => out.push_str(if cur.boolean()? { "true" } else { "false" }),
        Shape::Int(_) | Shape::Long(_) => {
            let _ = write!(out, "{}", cur.long()?);
        }
        Shape::Float => number(out, f64::from(cur.float()?)),
        Shape::Double => number(out, cur.double()?),
        Shape::String(_) => {
            let s = std::str::from_utf8(cur.bytes()?)
                .map_err(|_| Failure::new("a string that is not valid UTF-8"))?;
            string(out, s);
        }
        Shape::Bytes(_) => {
            let b = cur.bytes()?;
            string(out, &b.iter().map(|b| char::from(*b)).collect::<String>());
        }
        Shape::Fixed(n, _) => {
            let b = cur.take(*n)?;
            string(out, &b.iter().map(|b| char::from(*b)).collect::<String>());
        }
        Shape::Enum(symbols) => {
            let i = cur.int()?;
            let s = usize::try_from(i)
                .ok()
                .and_then(|i| symbols.get(i))
                .ok_or_else(|| format!("enum index {i} is not one of the symbols"))?;
            string(out, s);
        }
        Shape::Array(item) => {
            out.push('[');
            let mut first = true;
            loop {
                let n = cur.block_count(shapes.zero_sized(*item))?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    if !std::mem::take(&mut first) {
                        out.push(',');
                    }
                    json(shapes, *item, cur, out, depth + 1)?;
                }
            }
            out.push(']');
        }
        Shape::Map(value) => {
            out.push('{');
            let mut first = true;
            loop {
                let n = cur.block_count(shapes.zero_sized(*value))?;
                if n == 0 {
                    break;
                }
                for _ in 0..n {
                    if !std::mem::take(&mut first) {
                        out.push(',');
                    }
                    let key = std::str::from_utf8(cur.bytes()?)
                        .map_err(|_| Failure::new("a map key that is not valid UTF-8"))?;
                    string(out, key);
                    out.push(':');
                    json(shapes, *value, cur, out, depth + 1)?;
                }
            }
            out.push('}');
        }
        Shape::Union(branches) => {
            let b = branch(branches, cur)?;
            json(shapes, b, cur, out, depth + 1)?;
        }
        Shape::Record(fields) => {
            out.push('{');
            for (i, (name, f)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(out, name);
                out.push(':');
                json(shapes, *f, cur, out, depth + 1).map_err(|e| e.at(name))?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn string(out: &mut String, s: &str) {
    // serde_json's escaping; writing a &str to a String cannot fail.
    if let Ok(quoted) = serde_json::to_string(s) {
        out.push_str(&quoted);
    }
}

fn number(out: &mut String, v: f64) {
    match serde_json::Number::from_f64(v) {
        Some(n) => out.push_str(&n.to_string()),
        // NaN and infinities have no JSON spelling.
        None => out.push_str("null"),
    }
}

/// A 16-byte uuid in its hyphenated text form.
fn uuid_text(b: &[u8]) -> String {
    let hex: String = b.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
