//! Protobuf message → table columns, from a compiled `FileDescriptorSet` (no `protoc` at
//! run time). Scalars keep their width and signedness, bytes become BYTEA, enums TEXT (the
//! value's name), messages STRUCT, repeated fields lists, map fields Arrow maps, and the
//! well-known types their natural columns: Timestamp → TIMESTAMP(9), Duration → BIGINT
//! nanoseconds, wrappers → a nullable scalar, Struct/Value/ListValue → JSON.
//!
//! Nullability follows presence: a field is nullable when the wire can say "absent"
//! (message fields, `optional`, oneof members, wrappers); plain proto3 scalars always have
//! a value (the default when not sent) and are NOT NULL, as are repeated and map fields
//! (empty when not sent).

use crate::expanded::{Budget, Exceeded, ExpandedSchema};
use prost::Message as _;
use prost_reflect::{Cardinality, DescriptorPool, FieldDescriptor, Kind, MessageDescriptor};
use tributary_types::limits::{MAX_EXPANDED_FIELDS, MAX_SCHEMA_DEPTH};
use tributary_types::{FieldType, SourceField, TimeUnit};

/// Why a descriptor set or message could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtoSchemaError {
    /// The bytes are not a `FileDescriptorSet`.
    #[error("the descriptor set is invalid: {0}")]
    InvalidDescriptor(String),
    /// The message is not in the set.
    #[error("message '{name}' is not in the descriptor set; {available}")]
    MessageNotFound {
        /// The name asked for.
        name: String,
        /// The messages that are there, as a sentence.
        available: String,
    },
    /// A message that contains itself.
    #[error("message '{name}' at {path} contains itself; recursive messages cannot be columns")]
    Recursive {
        /// The message's full name.
        name: String,
        /// Where the recursion closes.
        path: String,
    },
    /// The message expands to too many fields.
    #[error(
        "the message expands to more than {MAX_EXPANDED_FIELDS} fields (nested fields included, each message type counted where it is used)"
    )]
    TooLarge,
    /// Messages nested too deeply.
    #[error("{path} is nested more than {MAX_SCHEMA_DEPTH} levels deep")]
    TooDeep {
        /// Where the limit was crossed.
        path: String,
    },
}

/// The messages being expanded (outermost first, to catch recursion) and the budget.
struct Walk {
    open: Vec<String>,
    budget: Budget,
}

impl Walk {
    fn exceeded(e: Exceeded, path: &str) -> ProtoSchemaError {
        match e {
            Exceeded::Fields => ProtoSchemaError::TooLarge,
            Exceeded::Depth => ProtoSchemaError::TooDeep {
                path: path.to_string(),
            },
        }
    }
}

/// Decode a `FileDescriptorSet`.
pub fn parse_descriptor_set(bytes: &[u8]) -> Result<DescriptorPool, ProtoSchemaError> {
    let invalid = |e: String| ProtoSchemaError::InvalidDescriptor(e);
    let set = prost_reflect::prost_types::FileDescriptorSet::decode(bytes)
        .map_err(|e| invalid(e.to_string()))?;
    // prost-reflect 0.16 panics (an index past its file list) while reporting a file
    // of an unknown syntax, found by fuzzing: refuse those before it sees them.
    for file in &set.file {
        if let Some(syntax) = file.syntax.as_deref()
            && !matches!(syntax, "proto2" | "proto3")
        {
            return Err(invalid(format!(
                "file '{}' has syntax '{}'; proto2 and proto3 files can be read",
                tributary_types::limits::shorten(file.name()),
                tributary_types::limits::shorten(syntax)
            )));
        }
    }
    let pool = DescriptorPool::from_file_descriptor_set(set).map_err(|e| invalid(e.to_string()))?;
    // Its map-entry accessors expect fields 1 (key) and 2 (value) and panic otherwise;
    // a descriptor set without them is refused here, once, for every reader.
    for m in pool.all_messages() {
        if m.is_map_entry() && (m.get_field(1).is_none() || m.get_field(2).is_none()) {
            return Err(invalid(format!(
                "map entry message '{}' lacks its key (1) or value (2) field",
                m.full_name()
            )));
        }
    }
    Ok(pool)
}

/// The message named `name` (fully qualified, `pkg.Msg`; a leading `.` is accepted).
pub fn find_message(
    pool: &DescriptorPool,
    name: &str,
) -> Result<MessageDescriptor, ProtoSchemaError> {
    let name = name.strip_prefix('.').unwrap_or(name);
    pool.get_message_by_name(name).ok_or_else(|| {
        let mut names: Vec<String> = pool
            .all_messages()
            .filter(|m| !m.is_map_entry() && !m.full_name().starts_with("google.protobuf."))
            .map(|m| m.full_name().to_string())
            .collect();
        names.sort();
        let available = if names.is_empty() {
            "it defines no messages".to_string()
        } else {
            let close = tributary_types::closest(name, names.iter().map(String::as_str));
            let listed = names
                .iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(", ");
            match close {
                Some(c) => format!("did you mean '{c}'? It defines {listed}"),
                None => format!("it defines {listed}"),
            }
        };
        ProtoSchemaError::MessageNotFound {
            name: name.to_string(),
            available,
        }
    })
}

/// Expand a message into columns.
pub fn fields_from_protobuf(
    descriptor_set: &[u8],
    message: &str,
) -> Result<ExpandedSchema, ProtoSchemaError> {
    let pool = parse_descriptor_set(descriptor_set)?;
    let message = find_message(&pool, message)?;
    fields_of_message(&message)
}

/// Expand a message descriptor into columns.
pub fn fields_of_message(message: &MessageDescriptor) -> Result<ExpandedSchema, ProtoSchemaError> {
    let mut walk = Walk {
        open: vec![message.full_name().to_string()],
        budget: Budget::default(),
    };
    let fields = message
        .fields()
        .map(|f| field(&f, f.name(), &mut walk))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ExpandedSchema {
        fields,
        notes: Vec::new(),
    })
}

/// A message's index path within its file, which Confluent's framing uses to name it:
/// `[2]` for the third top-level message, `[0, 1]` for the second nested in the first.
pub(crate) fn message_index_path(m: &MessageDescriptor) -> Vec<i64> {
    let mut path = Vec::new();
    let mut current = m.clone();
    while let Some(parent) = current.parent_message() {
        path.push(
            parent
                .child_messages()
                .position(|c| c.full_name() == current.full_name())
                .unwrap_or(0) as i64,
        );
        current = parent;
    }
    path.push(
        current
            .parent_file()
            .messages()
            .position(|c| c.full_name() == current.full_name())
            .unwrap_or(0) as i64,
    );
    path.reverse();
    path
}

/// What a well-known message type becomes, if it is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WellKnown {
    /// `google.protobuf.Timestamp`: seconds and nanos → TIMESTAMP(9).
    Timestamp,
    /// `google.protobuf.Duration`: seconds and nanos → BIGINT nanoseconds.
    Duration,
    /// A wrapper (`Int64Value`, ...): its `value` field, nullable.
    Wrapper,
    /// `Struct`, `Value`, `ListValue`: JSON.
    Json,
}

pub(crate) fn well_known(m: &MessageDescriptor) -> Option<WellKnown> {
    Some(match m.full_name() {
        "google.protobuf.Timestamp" => WellKnown::Timestamp,
        "google.protobuf.Duration" => WellKnown::Duration,
        "google.protobuf.DoubleValue"
        | "google.protobuf.FloatValue"
        | "google.protobuf.Int64Value"
        | "google.protobuf.UInt64Value"
        | "google.protobuf.Int32Value"
        | "google.protobuf.UInt32Value"
        | "google.protobuf.BoolValue"
        | "google.protobuf.StringValue"
        | "google.protobuf.BytesValue" => WellKnown::Wrapper,
        "google.protobuf.Struct" | "google.protobuf.Value" | "google.protobuf.ListValue" => {
            WellKnown::Json
        }
        _ => return None,
    })
}

fn field(
    f: &FieldDescriptor,
    path: &str,
    walk: &mut Walk,
) -> Result<SourceField, ProtoSchemaError> {
    walk.budget.field().map_err(|e| Walk::exceeded(e, path))?;
    if f.is_map() {
        let Kind::Message(entry) = f.kind() else {
            return Ok(SourceField::required(f.name(), FieldType::Json));
        };
        let key = entry.map_entry_key_field();
        let value = entry.map_entry_value_field();
        let key_type = kind_type(&key, &format!("{path}.key"), walk)?;
        let value_type = kind_type(&value, &format!("{path}.value"), walk)?;
        return Ok(SourceField::required(
            f.name(),
            FieldType::Map {
                key: Box::new(SourceField::required("keys", key_type)),
                value: Box::new(SourceField::required("values", value_type)),
            },
        ));
    }
    let t = kind_type(f, path, walk)?;
    if f.is_list() {
        return Ok(SourceField::required(
            f.name(),
            FieldType::List {
                items: Box::new(SourceField::required("item", t)),
            },
        ));
    }
    let nullable = f.supports_presence() && f.cardinality() != Cardinality::Required;
    Ok(if nullable {
        SourceField::new(f.name(), t)
    } else {
        SourceField::required(f.name(), t)
    })
}

/// The column type of one value of `f` (an element, for repeated fields).
fn kind_type(
    f: &FieldDescriptor,
    path: &str,
    walk: &mut Walk,
) -> Result<FieldType, ProtoSchemaError> {
    Ok(match f.kind() {
        Kind::Double => FieldType::Float64,
        Kind::Float => FieldType::Float32,
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => FieldType::Int32,
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => FieldType::Int64,
        Kind::Uint32 | Kind::Fixed32 => FieldType::Uint32,
        Kind::Uint64 | Kind::Fixed64 => FieldType::Uint64,
        Kind::Bool => FieldType::Bool,
        Kind::String | Kind::Enum(_) => FieldType::String,
        Kind::Bytes => FieldType::Bytes,
        Kind::Message(m) => match well_known(&m) {
            Some(WellKnown::Timestamp) => FieldType::Timestamp {
                unit: TimeUnit::Nanosecond,
            },
            Some(WellKnown::Duration) => FieldType::Int64,
            Some(WellKnown::Json) => FieldType::Json,
            Some(WellKnown::Wrapper) => match m.get_field(1) {
                Some(inner) => kind_type(&inner, path, walk)?,
                None => FieldType::Json,
            },
            None => {
                if walk.open.iter().any(|o| o == m.full_name()) {
                    return Err(ProtoSchemaError::Recursive {
                        name: m.full_name().to_string(),
                        path: path.to_string(),
                    });
                }
                Budget::depth(walk.open.len()).map_err(|e| Walk::exceeded(e, path))?;
                walk.open.push(m.full_name().to_string());
                let fields = m
                    .fields()
                    .map(|c| field(&c, &format!("{path}.{}", c.name()), walk))
                    .collect::<Result<Vec<_>, _>>();
                walk.open.pop();
                FieldType::Struct { fields: fields? }
            }
        },
    })
}
