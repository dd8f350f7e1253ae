//! Avro schema resolution, compiled: a writer schema and a table's columns become a plan
//! (an [`Op`] tree) that reads a datum straight into the column buffers. Writer fields the
//! table lacks are skipped, table columns the writer lacks are null, numbers are promoted
//! as Avro's resolution rules allow (int → long → float → double, string ↔ bytes), and time
//! units are converted. Mismatches are found here, once per writer schema, not per record.

use apache_avro::Schema;
use apache_avro::schema::{Name, ResolvedSchema, UuidSchema};
use arrow_schema::{DataType, Field, TimeUnit};
use std::collections::HashMap;

/// How deeply values may nest (recursive writer types); deeper input is refused rather
/// than allowed to exhaust the stack.
pub(crate) const MAX_DEPTH: usize = 128;

/// An index into [`Shapes`].
pub(crate) type ShapeId = usize;

/// A writer schema as wire encodings, with named types resolved into an arena so that
/// recursive types (which can still be skipped or rendered as JSON) are finite.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    pub(crate) nodes: Vec<Shape>,
}

/// How one writer type is encoded, and what it means.
#[derive(Debug, Clone)]
pub(crate) enum Shape {
    Null,
    Bool,
    Int(Meaning),
    Long(Meaning),
    Float,
    Double,
    Bytes(Meaning),
    String(Meaning),
    Fixed(usize, Meaning),
    Enum(Vec<String>),
    Array(ShapeId),
    Map(ShapeId),
    Union(Vec<ShapeId>),
    Record(Vec<(String, ShapeId)>),
    /// A placeholder while a named type is being compiled.
    Pending,
}

/// The logical type carried by a primitive encoding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Meaning {
    Plain,
    Decimal { scale: i8 },
    Uuid,
    Date,
    Time(TimeUnit),
    Timestamp(TimeUnit),
}

impl Shapes {
    /// Compile `schema` (with its named types) and return the root's id.
    pub(crate) fn compile(schema: &Schema) -> Result<(Shapes, ShapeId), String> {
        let resolved = ResolvedSchema::try_from(schema).map_err(|e| e.to_string())?;
        let mut c = Compiler {
            names: resolved.get_names(),
            named: HashMap::new(),
            shapes: Shapes::default(),
        };
        let root = c.shape(schema)?;
        Ok((c.shapes, root))
    }

    pub(crate) fn get(&self, id: ShapeId) -> &Shape {
        &self.nodes[id]
    }

    /// Whether a value of this shape takes no bytes.
    pub(crate) fn zero_sized(&self, id: ShapeId) -> bool {
        self.zero_sized_within(id, 0)
    }

    fn zero_sized_within(&self, id: ShapeId, depth: usize) -> bool {
        // A record that contains itself directly can never be written; treat it as sized.
        if depth > MAX_DEPTH {
            return false;
        }
        match self.get(id) {
            Shape::Null | Shape::Pending => true,
            Shape::Fixed(0, _) => true,
            Shape::Record(fields) => fields
                .iter()
                .all(|(_, f)| self.zero_sized_within(*f, depth + 1)),
            _ => false,
        }
    }
}

struct Compiler<'a, 's> {
    names: &'a HashMap<Name, &'s Schema>,
    named: HashMap<Name, ShapeId>,
    shapes: Shapes,
}

impl Compiler<'_, '_> {
    fn push(&mut self, s: Shape) -> ShapeId {
        self.shapes.nodes.push(s);
        self.shapes.nodes.len() - 1
    }

    fn shape(&mut self, schema: &Schema) -> Result<ShapeId, String> {
        use Meaning as M;
        let named = |n: &Name| n.clone();
        Ok(match schema {
            Schema::Ref { name } => {
                if let Some(id) = self.named.get(name) {
                    return Ok(*id);
                }
                let target = self
                    .names
                    .get(name)
                    .copied()
                    .ok_or_else(|| format!("type '{}' is not defined", name.fullname(None)))?;
                return self.shape(target);
            }
            Schema::Record(r) => {
                if let Some(id) = self.named.get(&r.name) {
                    return Ok(*id);
                }
                let id = self.push(Shape::Pending);
                self.named.insert(named(&r.name), id);
                let mut fields = Vec::with_capacity(r.fields.len());
                for f in &r.fields {
                    fields.push((f.name.clone(), self.shape(&f.schema)?));
                }
                self.shapes.nodes[id] = Shape::Record(fields);
                return Ok(id);
            }
            Schema::Enum(e) => {
                let id = self.push(Shape::Enum(e.symbols.clone()));
                self.named.insert(named(&e.name), id);
                return Ok(id);
            }
            Schema::Fixed(f) => {
                let id = self.push(Shape::Fixed(f.size, M::Plain));
                self.named.insert(named(&f.name), id);
                return Ok(id);
            }
            Schema::Null => self.push(Shape::Null),
            Schema::Boolean => self.push(Shape::Bool),
            Schema::Int => self.push(Shape::Int(M::Plain)),
            Schema::Long => self.push(Shape::Long(M::Plain)),
            Schema::Float => self.push(Shape::Float),
            Schema::Double => self.push(Shape::Double),
            Schema::Bytes | Schema::BigDecimal => self.push(Shape::Bytes(M::Plain)),
            Schema::String => self.push(Shape::String(M::Plain)),
            Schema::Array(a) => {
                let items = self.shape(&a.items)?;
                self.push(Shape::Array(items))
            }
            Schema::Map(m) => {
                let values = self.shape(&m.types)?;
                self.push(Shape::Map(values))
            }
            Schema::Union(u) => {
                let mut branches = Vec::with_capacity(u.variants().len());
                for v in u.variants() {
                    branches.push(self.shape(v)?);
                }
                self.push(Shape::Union(branches))
            }
            Schema::Decimal(d) => {
                let meaning = M::Decimal {
                    scale: i8::try_from(d.scale).map_err(|_| "a decimal scale above 127")?,
                };
                match &d.inner {
                    apache_avro::schema::InnerDecimalSchema::Bytes => {
                        self.push(Shape::Bytes(meaning))
                    }
                    apache_avro::schema::InnerDecimalSchema::Fixed(f) => {
                        self.push(Shape::Fixed(f.size, meaning))
                    }
                }
            }
            Schema::Uuid(u) => match u {
                UuidSchema::String => self.push(Shape::String(M::Uuid)),
                UuidSchema::Bytes => self.push(Shape::Bytes(M::Uuid)),
                UuidSchema::Fixed(f) => self.push(Shape::Fixed(f.size, M::Uuid)),
            },
            Schema::Date => self.push(Shape::Int(M::Date)),
            Schema::TimeMillis => self.push(Shape::Int(M::Time(TimeUnit::Millisecond))),
            Schema::TimeMicros => self.push(Shape::Long(M::Time(TimeUnit::Microsecond))),
            Schema::TimestampMillis | Schema::LocalTimestampMillis => {
                self.push(Shape::Long(M::Timestamp(TimeUnit::Millisecond)))
            }
            Schema::TimestampMicros | Schema::LocalTimestampMicros => {
                self.push(Shape::Long(M::Timestamp(TimeUnit::Microsecond)))
            }
            Schema::TimestampNanos | Schema::LocalTimestampNanos => {
                self.push(Shape::Long(M::Timestamp(TimeUnit::Nanosecond)))
            }
            Schema::Duration(f) => self.push(Shape::Fixed(f.size, M::Plain)),
        })
    }
}

/// What to do with one writer value.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// Read past it.
    Skip(ShapeId),
    /// Render it as JSON text into a TEXT column.
    Json(ShapeId),
    /// Writer null: a null in the column.
    Null,
    Bool,
    /// Int or long, stored as an integer (or float), multiplied by `mul` and divided by
    /// `div` (time-unit conversion; both 1 when none).
    Int {
        long: bool,
        mul: i64,
        div: i64,
    },
    Float,
    Double,
    /// Length-prefixed bytes or string into a TEXT or BYTEA column.
    Bytes,
    Fixed(usize),
    /// A 16-byte uuid rendered as text.
    UuidFixed,
    /// Decimal bytes (fixed size when `Some`) into a DECIMAL column, rescaled by `mul`.
    Decimal {
        fixed: Option<usize>,
        mul: i128,
    },
    Enum(Vec<String>),
    Union(Vec<Op>),
    /// A record into a struct: per writer field, the column it feeds (or none); then the
    /// columns the writer lacks, filled with nulls.
    Record {
        fields: Vec<(String, Option<usize>, Op)>,
        missing: Vec<usize>,
    },
    Array(Box<Op>, bool),
    Map(Box<Op>, bool),
    /// A writer branch this column cannot hold: an error if it occurs.
    Fail(String),
}

/// Plan reading a writer `shape` into a column of `field`'s type.
pub(crate) fn plan(shapes: &Shapes, shape: ShapeId, field: &Field) -> Result<Op, String> {
    let target = field.data_type();
    if is_json(field) {
        return Ok(Op::Json(shape));
    }
    use DataType as D;
    use Meaning as M;
    let mismatch = || {
        format!(
            "the writer's {} cannot be read into {}",
            describe(shapes, shape),
            target
        )
    };
    Ok(match (shapes.get(shape), target) {
        (Shape::Union(branches), _) => {
            let mut ops = Vec::with_capacity(branches.len());
            for b in branches {
                ops.push(match shapes.get(*b) {
                    Shape::Null if field.is_nullable() => Op::Null,
                    Shape::Null => {
                        Op::Fail(format!("a null, but column '{}' is NOT NULL", field.name()))
                    }
                    _ => plan(shapes, *b, field).unwrap_or_else(Op::Fail),
                });
            }
            if ops.iter().all(|o| matches!(o, Op::Fail(_))) {
                return Err(mismatch());
            }
            Op::Union(ops)
        }
        (Shape::Null, _) if field.is_nullable() => Op::Null,
        (Shape::Bool, D::Boolean) => Op::Bool,
        (Shape::Int(m), _) | (Shape::Long(m), _) => {
            let long = matches!(shapes.get(shape), Shape::Long(_));
            let (mul, div) = match (m, target) {
                (M::Plain, D::Int32) if !long => (1, 1),
                (M::Plain, D::Int64 | D::UInt32 | D::UInt64 | D::Float32 | D::Float64) => (1, 1),
                (M::Date, D::Date32) => (1, 1),
                (M::Time(w), D::Time32(t) | D::Time64(t)) => unit_factor(*w, *t),
                (M::Timestamp(w), D::Timestamp(t, _)) => unit_factor(*w, *t),
                (M::Plain, D::Timestamp(_, _)) if long => (1, 1),
                _ => return Err(mismatch()),
            };
            Op::Int { long, mul, div }
        }
        (Shape::Float, D::Float32 | D::Float64) => Op::Float,
        (Shape::Double, D::Float64) => Op::Double,
        (Shape::Bytes(M::Decimal { scale }), D::Decimal128(_, s))
        | (Shape::Fixed(_, M::Decimal { scale }), D::Decimal128(_, s)) => {
            let fixed = match shapes.get(shape) {
                Shape::Fixed(n, _) => Some(*n),
                _ => None,
            };
            if s < scale {
                return Err(format!(
                    "the writer's decimal has scale {scale}, more than the column's {s}; digits would be lost"
                ));
            }
            Op::Decimal {
                fixed,
                mul: 10i128.pow((s - scale) as u32),
            }
        }
        (Shape::Fixed(16, M::Uuid), D::Utf8) => Op::UuidFixed,
        (Shape::Bytes(_) | Shape::String(_), D::Utf8 | D::Binary) => Op::Bytes,
        (Shape::Fixed(n, _), D::Binary) => Op::Fixed(*n),
        (Shape::Enum(symbols), D::Utf8) => Op::Enum(symbols.clone()),
        (Shape::Record(fields), D::Struct(columns)) => {
            let mut ops = Vec::with_capacity(fields.len());
            let mut seen = vec![false; columns.len()];
            for (name, f) in fields {
                match columns.iter().position(|c| c.name() == name) {
                    Some(i) => {
                        seen[i] = true;
                        let op = plan(shapes, *f, &columns[i])
                            .map_err(|e| format!("field '{name}': {e}"))?;
                        ops.push((name.clone(), Some(i), op));
                    }
                    None => ops.push((name.clone(), None, Op::Skip(*f))),
                }
            }
            let mut missing = Vec::new();
            for (i, c) in columns.iter().enumerate() {
                if !seen[i] {
                    if !c.is_nullable() {
                        return Err(format!(
                            "column '{}' is NOT NULL, but the writer's record has no field of that name",
                            c.name()
                        ));
                    }
                    missing.push(i);
                }
            }
            Op::Record {
                fields: ops,
                missing,
            }
        }
        (Shape::Array(items), D::List(item)) => Op::Array(
            Box::new(plan(shapes, *items, item).map_err(|e| format!("items: {e}"))?),
            shapes.zero_sized(*items),
        ),
        (Shape::Map(values), D::Map(entries, _)) => {
            let D::Struct(kv) = entries.data_type() else {
                return Err(mismatch());
            };
            let (Some(key), Some(value)) = (kv.first(), kv.get(1)) else {
                return Err(mismatch());
            };
            if key.data_type() != &D::Utf8 {
                return Err(format!(
                    "Avro map keys are strings, but the column's keys are {}",
                    key.data_type()
                ));
            }
            Op::Map(
                Box::new(plan(shapes, *values, value).map_err(|e| format!("values: {e}"))?),
                shapes.zero_sized(*values),
            )
        }
        _ => return Err(mismatch()),
    })
}

/// Whether a field is a JSON column (TEXT carrying the JSON extension name).
pub(crate) fn is_json(field: &Field) -> bool {
    field
        .metadata()
        .get("ARROW:extension:name")
        .is_some_and(|n| n == "arrow.json")
}

/// Ticks per second of a time unit.
pub(crate) fn per_second(u: TimeUnit) -> i64 {
    match u {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// The multiplier and divisor from one time unit to another.
fn unit_factor(from: TimeUnit, to: TimeUnit) -> (i64, i64) {
    let (f, t) = (per_second(from), per_second(to));
    if t >= f { (t / f, 1) } else { (1, f / t) }
}

/// A writer type for messages.
pub(crate) fn describe(shapes: &Shapes, id: ShapeId) -> String {
    match shapes.get(id) {
        Shape::Null => "null".into(),
        Shape::Bool => "boolean".into(),
        Shape::Int(m) => with_meaning("int", m),
        Shape::Long(m) => with_meaning("long", m),
        Shape::Float => "float".into(),
        Shape::Double => "double".into(),
        Shape::Bytes(m) => with_meaning("bytes", m),
        Shape::String(m) => with_meaning("string", m),
        Shape::Fixed(n, m) => with_meaning(&format!("fixed({n})"), m),
        Shape::Enum(_) => "enum".into(),
        Shape::Array(_) => "array".into(),
        Shape::Map(_) => "map".into(),
        Shape::Union(b) => format!(
            "union of {}",
            b.iter()
                .map(|b| describe(shapes, *b))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Shape::Record(_) => "record".into(),
        Shape::Pending => "record".into(),
    }
}

fn with_meaning(base: &str, m: &Meaning) -> String {
    match m {
        Meaning::Plain => base.to_string(),
        Meaning::Decimal { scale } => format!("decimal (scale {scale})"),
        Meaning::Uuid => "uuid".into(),
        Meaning::Date => "date".into(),
        Meaning::Time(u) => format!("time ({u:?})").to_lowercase(),
        Meaning::Timestamp(u) => format!("timestamp ({u:?})").to_lowercase(),
    }
}
