//! [`ColumnBuilder`]: growable Arrow column buffers that the Avro and Protobuf decoders
//! append to directly (no intermediate values), and that can be truncated back to a row
//! count so a record that fails half-way leaves nothing behind.

use arrow_array::{ArrayRef, MapArray, RecordBatch, StructArray, make_array};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, SchemaRef};
use std::sync::Arc;

/// A value did not fit the column it was meant for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ColumnError(pub String);

/// One column's buffers, of any type a connection table holds.
#[derive(Debug)]
pub(crate) enum ColumnBuilder {
    /// Booleans.
    Bool { values: Vec<bool>, valid: Vec<bool> },
    /// Fixed-width numbers, dates, times, timestamps and decimals.
    Prim {
        data_type: DataType,
        values: Prim,
        valid: Vec<bool>,
    },
    /// Utf8 (`utf8`) or Binary.
    Bytes {
        utf8: bool,
        offsets: Vec<i32>,
        data: Vec<u8>,
        valid: Vec<bool>,
    },
    /// A struct.
    Struct {
        fields: Fields,
        children: Vec<ColumnBuilder>,
        valid: Vec<bool>,
    },
    /// A list.
    List {
        item: FieldRef,
        offsets: Vec<i32>,
        child: Box<ColumnBuilder>,
        valid: Vec<bool>,
    },
    /// A map: entries of keys and values.
    Map {
        entries: FieldRef,
        offsets: Vec<i32>,
        keys: Box<ColumnBuilder>,
        values: Box<ColumnBuilder>,
        valid: Vec<bool>,
    },
}

/// The value buffer of a fixed-width column.
#[derive(Debug)]
pub(crate) enum Prim {
    I32(Vec<i32>),
    I64(Vec<i64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    I128(Vec<i128>),
}

impl ColumnBuilder {
    /// Empty buffers for a column of `data_type`, or why that type cannot be built.
    pub(crate) fn new(data_type: &DataType) -> Result<Self, ColumnError> {
        use DataType as D;
        let prim = |values| ColumnBuilder::Prim {
            data_type: data_type.clone(),
            values,
            valid: Vec::new(),
        };
        Ok(match data_type {
            D::Boolean => ColumnBuilder::Bool {
                values: Vec::new(),
                valid: Vec::new(),
            },
            D::Int32 | D::Date32 | D::Time32(_) => prim(Prim::I32(Vec::new())),
            D::Int64 | D::Time64(_) | D::Timestamp(_, _) => prim(Prim::I64(Vec::new())),
            D::UInt32 => prim(Prim::U32(Vec::new())),
            D::UInt64 => prim(Prim::U64(Vec::new())),
            D::Float32 => prim(Prim::F32(Vec::new())),
            D::Float64 => prim(Prim::F64(Vec::new())),
            D::Decimal128(_, _) => prim(Prim::I128(Vec::new())),
            D::Utf8 | D::Binary => ColumnBuilder::Bytes {
                utf8: *data_type == D::Utf8,
                offsets: vec![0],
                data: Vec::new(),
                valid: Vec::new(),
            },
            D::Struct(fields) => ColumnBuilder::Struct {
                fields: fields.clone(),
                children: fields
                    .iter()
                    .map(|f| ColumnBuilder::new(f.data_type()))
                    .collect::<Result<_, _>>()?,
                valid: Vec::new(),
            },
            D::List(item) => ColumnBuilder::List {
                item: item.clone(),
                offsets: vec![0],
                child: Box::new(ColumnBuilder::new(item.data_type())?),
                valid: Vec::new(),
            },
            D::Map(entries, _) => {
                let D::Struct(kv) = entries.data_type() else {
                    return Err(ColumnError(format!(
                        "map entries of type {}",
                        entries.data_type()
                    )));
                };
                let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                    return Err(ColumnError("a map without key and value fields".into()));
                };
                ColumnBuilder::Map {
                    entries: entries.clone(),
                    offsets: vec![0],
                    keys: Box::new(ColumnBuilder::new(k.data_type())?),
                    values: Box::new(ColumnBuilder::new(v.data_type())?),
                    valid: Vec::new(),
                }
            }
            other => return Err(ColumnError(format!("columns of type {other}"))),
        })
    }

    /// Rows so far.
    pub(crate) fn len(&self) -> usize {
        self.valid().len()
    }

    fn valid(&self) -> &Vec<bool> {
        match self {
            ColumnBuilder::Bool { valid, .. }
            | ColumnBuilder::Prim { valid, .. }
            | ColumnBuilder::Bytes { valid, .. }
            | ColumnBuilder::Struct { valid, .. }
            | ColumnBuilder::List { valid, .. }
            | ColumnBuilder::Map { valid, .. } => valid,
        }
    }

    /// Append a null (children of a null struct get nulls too, masked by the parent).
    pub(crate) fn push_null(&mut self) {
        match self {
            ColumnBuilder::Bool { values, valid } => {
                values.push(false);
                valid.push(false);
            }
            ColumnBuilder::Prim { values, valid, .. } => {
                values.push_default();
                valid.push(false);
            }
            ColumnBuilder::Bytes { offsets, valid, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                valid.push(false);
            }
            ColumnBuilder::Struct {
                children, valid, ..
            } => {
                for c in children {
                    c.push_null();
                }
                valid.push(false);
            }
            ColumnBuilder::List { offsets, valid, .. }
            | ColumnBuilder::Map { offsets, valid, .. } => {
                offsets.push(offsets.last().copied().unwrap_or(0));
                valid.push(false);
            }
        }
    }

    /// Drop rows from `len` on.
    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            ColumnBuilder::Bool { values, valid } => {
                values.truncate(len);
                valid.truncate(len);
            }
            ColumnBuilder::Prim { values, valid, .. } => {
                values.truncate(len);
                valid.truncate(len);
            }
            ColumnBuilder::Bytes {
                offsets,
                data,
                valid,
                ..
            } => {
                offsets.truncate(len + 1);
                data.truncate(offsets.last().copied().unwrap_or(0) as usize);
                valid.truncate(len);
            }
            ColumnBuilder::Struct {
                children, valid, ..
            } => {
                for c in children {
                    c.truncate(len);
                }
                valid.truncate(len);
            }
            ColumnBuilder::List {
                offsets,
                child,
                valid,
                ..
            } => {
                offsets.truncate(len + 1);
                child.truncate(offsets.last().copied().unwrap_or(0) as usize);
                valid.truncate(len);
            }
            ColumnBuilder::Map {
                offsets,
                keys,
                values,
                valid,
                ..
            } => {
                offsets.truncate(len + 1);
                let end = offsets.last().copied().unwrap_or(0) as usize;
                keys.truncate(end);
                values.truncate(end);
                valid.truncate(len);
            }
        }
    }

    /// Append a boolean.
    pub(crate) fn push_bool(&mut self, v: bool) -> Result<(), ColumnError> {
        match self {
            ColumnBuilder::Bool { values, valid } => {
                values.push(v);
                valid.push(true);
                Ok(())
            }
            other => Err(other.mismatch("a boolean")),
        }
    }

    /// Append an integer to any integer, float or decimal column (decimals take it as the
    /// unscaled value), checking its range.
    pub(crate) fn push_int(&mut self, v: i64) -> Result<(), ColumnError> {
        let out_of_range = |ty: &str| ColumnError(format!("{v} is out of range for {ty}"));
        match self {
            ColumnBuilder::Prim { values, valid, .. } => {
                match values {
                    Prim::I32(b) => b.push(i32::try_from(v).map_err(|_| out_of_range("INT"))?),
                    Prim::I64(b) => b.push(v),
                    Prim::U32(b) => {
                        b.push(u32::try_from(v).map_err(|_| out_of_range("INT UNSIGNED"))?)
                    }
                    Prim::U64(b) => {
                        b.push(u64::try_from(v).map_err(|_| out_of_range("BIGINT UNSIGNED"))?)
                    }
                    Prim::F32(b) => b.push(v as f32),
                    Prim::F64(b) => b.push(v as f64),
                    Prim::I128(b) => b.push(i128::from(v)),
                }
                valid.push(true);
                Ok(())
            }
            other => Err(other.mismatch("an integer")),
        }
    }

    /// Append an unsigned integer (Protobuf's uint64 and fixed64).
    pub(crate) fn push_uint(&mut self, v: u64) -> Result<(), ColumnError> {
        match self {
            ColumnBuilder::Prim {
                values: Prim::U64(b),
                valid,
                ..
            } => {
                b.push(v);
                valid.push(true);
                Ok(())
            }
            other => match i64::try_from(v) {
                Ok(v) => other.push_int(v),
                Err(_) => Err(ColumnError(format!("{v} is out of range for BIGINT"))),
            },
        }
    }

    /// Append a float to a FLOAT or DOUBLE column.
    pub(crate) fn push_float(&mut self, v: f64) -> Result<(), ColumnError> {
        match self {
            ColumnBuilder::Prim { values, valid, .. } => {
                match values {
                    Prim::F32(b) => b.push(v as f32),
                    Prim::F64(b) => b.push(v),
                    _ => return Err(ColumnError(format!("a float ({v}) for an integer column"))),
                }
                valid.push(true);
                Ok(())
            }
            other => Err(other.mismatch("a float")),
        }
    }

    /// Append a 128-bit unscaled decimal.
    pub(crate) fn push_i128(&mut self, v: i128) -> Result<(), ColumnError> {
        match self {
            ColumnBuilder::Prim {
                values: Prim::I128(b),
                valid,
                ..
            } => {
                b.push(v);
                valid.push(true);
                Ok(())
            }
            other => Err(other.mismatch("a decimal")),
        }
    }

    /// Append bytes to a BYTEA column, or text to a TEXT column (checked to be UTF-8).
    pub(crate) fn push_bytes(&mut self, v: &[u8]) -> Result<(), ColumnError> {
        match self {
            ColumnBuilder::Bytes {
                utf8,
                offsets,
                data,
                valid,
            } => {
                if *utf8 && std::str::from_utf8(v).is_err() {
                    return Err(ColumnError("a string that is not valid UTF-8".into()));
                }
                let end = i32::try_from(data.len() + v.len())
                    .map_err(|_| ColumnError("more than 2 GiB of text in one batch".into()))?;
                data.extend_from_slice(v);
                offsets.push(end);
                valid.push(true);
                Ok(())
            }
            other => Err(other.mismatch("a string")),
        }
    }

    /// A struct's child buffers.
    pub(crate) fn children(&mut self) -> &mut [ColumnBuilder] {
        match self {
            ColumnBuilder::Struct { children, .. } => children,
            _ => &mut [],
        }
    }

    /// Close a struct row whose children have been appended.
    pub(crate) fn end_struct(&mut self) {
        if let ColumnBuilder::Struct { valid, .. } = self {
            valid.push(true);
        }
    }

    /// A list's item buffers, or a map's keys and values.
    pub(crate) fn list_child(&mut self) -> Option<&mut ColumnBuilder> {
        match self {
            ColumnBuilder::List { child, .. } => Some(child),
            _ => None,
        }
    }

    /// A map's key and value buffers.
    pub(crate) fn map_children(&mut self) -> Option<(&mut ColumnBuilder, &mut ColumnBuilder)> {
        match self {
            ColumnBuilder::Map { keys, values, .. } => Some((keys, values)),
            _ => None,
        }
    }

    /// Close a list or map row whose items have been appended.
    pub(crate) fn end_list(&mut self) -> Result<(), ColumnError> {
        let (offsets, valid, len) = match self {
            ColumnBuilder::List {
                offsets,
                child,
                valid,
                ..
            } => (offsets, valid, child.len()),
            ColumnBuilder::Map {
                offsets,
                keys,
                valid,
                ..
            } => (offsets, valid, keys.len()),
            other => return Err(other.mismatch("a list")),
        };
        offsets
            .push(i32::try_from(len).map_err(|_| ColumnError("more than 2^31 list items".into()))?);
        valid.push(true);
        Ok(())
    }

    fn mismatch(&self, what: &str) -> ColumnError {
        let ty = match self {
            ColumnBuilder::Bool { .. } => "BOOLEAN".to_string(),
            ColumnBuilder::Prim { data_type, .. } => data_type.to_string(),
            ColumnBuilder::Bytes { utf8: true, .. } => "TEXT".into(),
            ColumnBuilder::Bytes { .. } => "BYTEA".into(),
            ColumnBuilder::Struct { .. } => "STRUCT".into(),
            ColumnBuilder::List { .. } => "a list".into(),
            ColumnBuilder::Map { .. } => "MAP".into(),
        };
        ColumnError(format!("{what} cannot be stored in a {ty} column"))
    }

    /// The column so far, leaving the builder empty.
    pub(crate) fn finish(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match self {
            ColumnBuilder::Bool { values, valid } => {
                let values = std::mem::take(values);
                let nulls = nulls(std::mem::take(valid));
                Arc::new(arrow_array::BooleanArray::new(values.into(), nulls))
            }
            ColumnBuilder::Prim {
                data_type,
                values,
                valid,
            } => {
                let len = valid.len();
                let nulls = nulls(std::mem::take(valid));
                let buffer = values.take_buffer();
                make_array(
                    ArrayData::builder(data_type.clone())
                        .len(len)
                        .add_buffer(buffer)
                        .nulls(nulls)
                        .build()?,
                )
            }
            ColumnBuilder::Bytes {
                utf8,
                offsets,
                data,
                valid,
            } => {
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let data = Buffer::from_vec(std::mem::take(data));
                let nulls = nulls(std::mem::take(valid));
                if *utf8 {
                    Arc::new(arrow_array::StringArray::try_new(offsets, data, nulls)?)
                } else {
                    Arc::new(arrow_array::BinaryArray::try_new(offsets, data, nulls)?)
                }
            }
            ColumnBuilder::Struct {
                fields,
                children,
                valid,
            } => {
                let arrays = children
                    .iter_mut()
                    .map(ColumnBuilder::finish)
                    .collect::<Result<Vec<_>, _>>()?;
                let len = valid.len();
                let nulls = nulls(std::mem::take(valid));
                Arc::new(StructArray::try_new_with_length(
                    fields.clone(),
                    arrays,
                    nulls,
                    len,
                )?)
            }
            ColumnBuilder::List {
                item,
                offsets,
                child,
                valid,
            } => {
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let values = child.finish()?;
                let nulls = nulls(std::mem::take(valid));
                Arc::new(arrow_array::ListArray::try_new(
                    item.clone(),
                    offsets,
                    values,
                    nulls,
                )?)
            }
            ColumnBuilder::Map {
                entries,
                offsets,
                keys,
                values,
                valid,
            } => {
                let offsets =
                    OffsetBuffer::new(ScalarBuffer::from(std::mem::replace(offsets, vec![0])));
                let DataType::Struct(kv) = entries.data_type() else {
                    return Err(ArrowError::SchemaError(
                        "map entries are not a struct".into(),
                    ));
                };
                let entries_array =
                    StructArray::try_new(kv.clone(), vec![keys.finish()?, values.finish()?], None)?;
                let nulls = nulls(std::mem::take(valid));
                Arc::new(MapArray::try_new(
                    entries.clone(),
                    offsets,
                    entries_array,
                    nulls,
                    false,
                )?)
            }
        })
    }
}

impl Prim {
    fn push_default(&mut self) {
        match self {
            Prim::I32(b) => b.push(0),
            Prim::I64(b) => b.push(0),
            Prim::U32(b) => b.push(0),
            Prim::U64(b) => b.push(0),
            Prim::F32(b) => b.push(0.0),
            Prim::F64(b) => b.push(0.0),
            Prim::I128(b) => b.push(0),
        }
    }

    fn truncate(&mut self, len: usize) {
        match self {
            Prim::I32(b) => b.truncate(len),
            Prim::I64(b) => b.truncate(len),
            Prim::U32(b) => b.truncate(len),
            Prim::U64(b) => b.truncate(len),
            Prim::F32(b) => b.truncate(len),
            Prim::F64(b) => b.truncate(len),
            Prim::I128(b) => b.truncate(len),
        }
    }

    fn take_buffer(&mut self) -> Buffer {
        match self {
            Prim::I32(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::I64(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::U32(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::U64(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::F32(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::F64(b) => Buffer::from_vec(std::mem::take(b)),
            Prim::I128(b) => Buffer::from_vec(std::mem::take(b)),
        }
    }
}

/// A null buffer when any row is null.
fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

/// The rows of a table: one struct builder whose children are the columns.
#[derive(Debug)]
pub(crate) struct RowsBuilder {
    schema: SchemaRef,
    root: ColumnBuilder,
}

impl RowsBuilder {
    /// Buffers for `schema`'s columns.
    pub(crate) fn new(schema: SchemaRef) -> Result<Self, ColumnError> {
        let root = ColumnBuilder::new(&DataType::Struct(schema.fields().clone()))?;
        Ok(Self { schema, root })
    }

    /// Rows so far.
    pub(crate) fn len(&self) -> usize {
        self.root.len()
    }

    /// The row buffers, to append one row's columns to; close it with [`Self::end_row`].
    pub(crate) fn root(&mut self) -> &mut ColumnBuilder {
        &mut self.root
    }

    /// Drop a half-appended row (and any after `len`).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.root.truncate(len);
    }

    /// The rows so far as a batch, leaving the builder empty.
    pub(crate) fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let rows = self.root.len();
        let array = self.root.finish()?;
        let columns = match array.as_any().downcast_ref::<StructArray>() {
            Some(s) => s.columns().to_vec(),
            None => return Err(ArrowError::SchemaError("rows are not a struct".into())),
        };
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), columns, &options)
    }
}
