//! The column model of connection tables: [`SourceField`] and its [`FieldType`], with their
//! SQL spellings and Arrow equivalents.

use arrow_schema::{DataType, Field, Fields, TimeUnit as ArrowTimeUnit};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Arrow field metadata key naming an extension type.
const EXTENSION_NAME_KEY: &str = "ARROW:extension:name";
/// The canonical Arrow extension name for JSON text columns.
const JSON_EXTENSION: &str = "arrow.json";
/// The name of a map's entries struct, as Arrow's own map builder spells it.
const MAP_ENTRIES: &str = "entries";
/// The names of a map's key and value fields.
pub const MAP_KEY: &str = "keys";
/// See [`MAP_KEY`].
pub const MAP_VALUE: &str = "values";

/// Precision of a timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeUnit {
    /// Seconds, `TIMESTAMP(0)`.
    #[serde(alias = "s")]
    Second,
    /// Milliseconds, `TIMESTAMP(3)`.
    #[default]
    #[serde(alias = "ms")]
    Millisecond,
    /// Microseconds, `TIMESTAMP(6)`.
    #[serde(alias = "us", alias = "µs")]
    Microsecond,
    /// Nanoseconds, `TIMESTAMP(9)` and plain `TIMESTAMP`.
    #[serde(alias = "ns")]
    Nanosecond,
}

impl TimeUnit {
    /// The SQL precision digit: 0, 3, 6 or 9.
    pub fn precision(self) -> u8 {
        match self {
            TimeUnit::Second => 0,
            TimeUnit::Millisecond => 3,
            TimeUnit::Microsecond => 6,
            TimeUnit::Nanosecond => 9,
        }
    }

    /// The unit for a SQL precision, if it is one of 0, 3, 6, 9.
    pub fn from_precision(p: u64) -> Option<Self> {
        match p {
            0 => Some(TimeUnit::Second),
            3 => Some(TimeUnit::Millisecond),
            6 => Some(TimeUnit::Microsecond),
            9 => Some(TimeUnit::Nanosecond),
            _ => None,
        }
    }

    fn to_arrow(self) -> ArrowTimeUnit {
        match self {
            TimeUnit::Second => ArrowTimeUnit::Second,
            TimeUnit::Millisecond => ArrowTimeUnit::Millisecond,
            TimeUnit::Microsecond => ArrowTimeUnit::Microsecond,
            TimeUnit::Nanosecond => ArrowTimeUnit::Nanosecond,
        }
    }

    fn from_arrow(u: &ArrowTimeUnit) -> Self {
        match u {
            ArrowTimeUnit::Second => TimeUnit::Second,
            ArrowTimeUnit::Millisecond => TimeUnit::Millisecond,
            ArrowTimeUnit::Microsecond => TimeUnit::Microsecond,
            ArrowTimeUnit::Nanosecond => TimeUnit::Nanosecond,
        }
    }
}

/// The type of a connection-table column (Arroyo's `FieldType`, tagged by `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldType {
    /// `INT`, Int32.
    Int32,
    /// `BIGINT`, Int64.
    Int64,
    /// `INT UNSIGNED`, UInt32.
    Uint32,
    /// `BIGINT UNSIGNED`, UInt64.
    Uint64,
    /// `FLOAT`, Float32.
    #[serde(alias = "f32")]
    Float32,
    /// `DOUBLE`, Float64.
    #[serde(alias = "f64")]
    Float64,
    /// `DECIMAL(p, s)`, Decimal128.
    Decimal128 {
        /// Total digits, 1..=38.
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// `BOOLEAN`.
    Bool,
    /// `TEXT`, Utf8.
    #[serde(alias = "utf8")]
    String,
    /// `BYTEA`, Binary.
    #[serde(alias = "binary")]
    Bytes,
    /// `TIMESTAMP(p)`, a timestamp without time zone.
    Timestamp {
        /// The precision.
        #[serde(default)]
        unit: TimeUnit,
    },
    /// `DATE`, Date32: days since the epoch.
    Date,
    /// `TIME(p)`: a time of day without a date (Time32 for 0 and 3, Time64 for 6 and 9).
    Time {
        /// The precision.
        #[serde(default)]
        unit: TimeUnit,
    },
    /// `JSON`: text carrying a JSON document.
    Json,
    /// `STRUCT<..>`.
    Struct {
        /// The nested fields.
        fields: Vec<SourceField>,
    },
    /// `T[]`.
    List {
        /// The item type.
        items: Box<SourceField>,
    },
    /// `MAP(K, V)`: an Arrow map of non-null keys to values.
    Map {
        /// The key type (always required).
        key: Box<SourceField>,
        /// The value type.
        value: Box<SourceField>,
    },
}

impl FieldType {
    /// Whether every value of `self` converts to `to` exactly (a widening, as PostgreSQL
    /// applies one implicitly on assignment): INT into BIGINT, DOUBLE or a wide enough
    /// DECIMAL, FLOAT into DOUBLE, unsigned into wider or signed wider, a DECIMAL into one
    /// with at least as many digits on each side of the point.
    pub fn widens_to(&self, to: &FieldType) -> bool {
        use FieldType as F;
        // Integer digits a DECIMAL(p, s) holds.
        let int_digits = |p: u8, s: i8| i32::from(p) - i32::from(s);
        match (self, to) {
            (a, b) if a == b => true,
            (F::Int32, F::Int64 | F::Float64) => true,
            (F::Uint32, F::Uint64 | F::Int64 | F::Float64) => true,
            (F::Float32, F::Float64) => true,
            (F::Int32 | F::Uint32, F::Decimal128 { precision, scale }) => {
                int_digits(*precision, *scale) >= 10
            }
            (F::Int64, F::Decimal128 { precision, scale }) => int_digits(*precision, *scale) >= 19,
            (F::Uint64, F::Decimal128 { precision, scale }) => int_digits(*precision, *scale) >= 20,
            (
                F::Decimal128 {
                    precision: p,
                    scale: s,
                },
                F::Decimal128 {
                    precision: p2,
                    scale: s2,
                },
            ) => s2 >= s && int_digits(*p2, *s2) >= int_digits(*p, *s),
            _ => false,
        }
    }

    /// The SQL spelling of this type, as `DESCRIBE` and `SHOW CREATE TABLE` print it.
    pub fn sql_name(&self) -> String {
        match self {
            FieldType::Int32 => "INT".into(),
            FieldType::Int64 => "BIGINT".into(),
            FieldType::Uint32 => "INT UNSIGNED".into(),
            FieldType::Uint64 => "BIGINT UNSIGNED".into(),
            FieldType::Float32 => "FLOAT".into(),
            FieldType::Float64 => "DOUBLE".into(),
            FieldType::Decimal128 { precision, scale } => format!("DECIMAL({precision}, {scale})"),
            FieldType::Bool => "BOOLEAN".into(),
            FieldType::String => "TEXT".into(),
            FieldType::Bytes => "BYTEA".into(),
            FieldType::Timestamp { unit } => format!("TIMESTAMP({})", unit.precision()),
            FieldType::Date => "DATE".into(),
            FieldType::Time { unit } => format!("TIME({})", unit.precision()),
            FieldType::Json => "JSON".into(),
            FieldType::Struct { fields } => {
                let inner: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        let nn = if f.required { " NOT NULL" } else { "" };
                        format!("{} {}{nn}", quote_ident(&f.name), f.field_type.sql_name())
                    })
                    .collect();
                format!("STRUCT<{}>", inner.join(", "))
            }
            FieldType::List { items } => format!("{}[]", items.field_type.sql_name()),
            FieldType::Map { key, value } => format!(
                "MAP({}, {})",
                key.field_type.sql_name(),
                value.field_type.sql_name()
            ),
        }
    }

    /// The Arrow type.
    pub fn to_arrow(&self) -> DataType {
        match self {
            FieldType::Int32 => DataType::Int32,
            FieldType::Int64 => DataType::Int64,
            FieldType::Uint32 => DataType::UInt32,
            FieldType::Uint64 => DataType::UInt64,
            FieldType::Float32 => DataType::Float32,
            FieldType::Float64 => DataType::Float64,
            FieldType::Decimal128 { precision, scale } => DataType::Decimal128(*precision, *scale),
            FieldType::Bool => DataType::Boolean,
            FieldType::String | FieldType::Json => DataType::Utf8,
            FieldType::Bytes => DataType::Binary,
            FieldType::Timestamp { unit } => DataType::Timestamp(unit.to_arrow(), None),
            FieldType::Date => DataType::Date32,
            FieldType::Time { unit } => match unit {
                TimeUnit::Second | TimeUnit::Millisecond => DataType::Time32(unit.to_arrow()),
                TimeUnit::Microsecond | TimeUnit::Nanosecond => DataType::Time64(unit.to_arrow()),
            },
            FieldType::Struct { fields } => {
                DataType::Struct(fields.iter().map(SourceField::to_arrow).collect::<Fields>())
            }
            FieldType::List { items } => DataType::List(Arc::new(items.to_arrow())),
            FieldType::Map { key, value } => {
                let entries = Field::new(
                    MAP_ENTRIES,
                    DataType::Struct(Fields::from(vec![
                        key.to_arrow().with_nullable(false),
                        value.to_arrow(),
                    ])),
                    false,
                );
                DataType::Map(Arc::new(entries), false)
            }
        }
    }

    /// The field type for an Arrow field, or `None` when the Arrow type cannot be stored in a
    /// connection table (Int8, Date32, Interval, ...).
    pub fn from_arrow(field: &Field) -> Option<FieldType> {
        if field.metadata().get(EXTENSION_NAME_KEY).map(String::as_str) == Some(JSON_EXTENSION) {
            return Some(FieldType::Json);
        }
        Some(match field.data_type() {
            DataType::Int32 => FieldType::Int32,
            DataType::Int64 => FieldType::Int64,
            DataType::UInt32 => FieldType::Uint32,
            DataType::UInt64 => FieldType::Uint64,
            DataType::Float32 => FieldType::Float32,
            DataType::Float64 => FieldType::Float64,
            DataType::Decimal128(p, s) => FieldType::Decimal128 {
                precision: *p,
                scale: *s,
            },
            DataType::Boolean => FieldType::Bool,
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => FieldType::String,
            DataType::Binary | DataType::LargeBinary | DataType::BinaryView => FieldType::Bytes,
            DataType::Timestamp(unit, None) => FieldType::Timestamp {
                unit: TimeUnit::from_arrow(unit),
            },
            DataType::Struct(fields) => FieldType::Struct {
                fields: fields
                    .iter()
                    .map(|f| SourceField::from_arrow(f))
                    .collect::<Option<_>>()?,
            },
            DataType::List(item) | DataType::LargeList(item) => FieldType::List {
                items: Box::new(SourceField::from_arrow(item)?),
            },
            DataType::Date32 => FieldType::Date,
            DataType::Time32(unit) | DataType::Time64(unit) => FieldType::Time {
                unit: TimeUnit::from_arrow(unit),
            },
            DataType::Map(entries, _) => {
                let DataType::Struct(kv) = entries.data_type() else {
                    return None;
                };
                let [key, value] = kv.iter().collect::<Vec<_>>()[..] else {
                    return None;
                };
                FieldType::Map {
                    key: Box::new(SourceField::from_arrow(key)?),
                    value: Box::new(SourceField::from_arrow(value)?),
                }
            }
            _ => return None,
        })
    }

    /// A map from `key` to `value` values, with Arrow's standard field names.
    pub fn map(key: FieldType, value: FieldType) -> FieldType {
        FieldType::Map {
            key: Box::new(SourceField::required(MAP_KEY, key)),
            value: Box::new(SourceField::new(MAP_VALUE, value)),
        }
    }

    /// A list of nullable `item`s.
    pub fn list(item: FieldType) -> FieldType {
        FieldType::List {
            items: Box::new(SourceField::new("item", item)),
        }
    }

    /// Whether this is a timestamp (of any precision).
    pub fn is_timestamp(&self) -> bool {
        matches!(self, FieldType::Timestamp { .. })
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.sql_name())
    }
}

/// One column of a connection table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceField {
    /// The column name, as written (case preserved).
    pub name: String,
    /// Its type.
    #[serde(flatten)]
    pub field_type: FieldType,
    /// `NOT NULL`: the inverse of nullable.
    #[serde(default)]
    pub required: bool,
    /// For `METADATA FROM 'key'` columns, the connector's metadata key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata_key: Option<String>,
}

impl SourceField {
    /// A nullable field.
    pub fn new(name: impl Into<String>, field_type: FieldType) -> Self {
        Self {
            name: name.into(),
            field_type,
            required: false,
            metadata_key: None,
        }
    }

    /// A `NOT NULL` field.
    pub fn required(name: impl Into<String>, field_type: FieldType) -> Self {
        Self {
            required: true,
            ..Self::new(name, field_type)
        }
    }

    /// The Arrow field (JSON columns carry the `arrow.json` extension name).
    pub fn to_arrow(&self) -> Field {
        let field = Field::new(&self.name, self.field_type.to_arrow(), !self.required);
        if self.field_type == FieldType::Json {
            field.with_metadata(HashMap::from([(
                EXTENSION_NAME_KEY.to_string(),
                JSON_EXTENSION.to_string(),
            )]))
        } else {
            field
        }
    }

    /// The field for an Arrow field, `None` when its type cannot be stored.
    pub fn from_arrow(field: &Field) -> Option<SourceField> {
        Some(SourceField {
            name: field.name().clone(),
            field_type: FieldType::from_arrow(field)?,
            required: !field.is_nullable(),
            metadata_key: None,
        })
    }
}

/// Words written quoted even when plain: SQL's reserved words, which a parser may read as
/// syntax where a name stands (`NOT`, `NULL`, `SELECT`, ...), and the words that start a
/// table element in Tributary's `CREATE TABLE` (`WATERMARK`, `PRIMARY`, `CONSTRAINT`).
/// Sorted, for binary search.
#[rustfmt::skip]
const RESERVED_WORDS: &[&str] = &[
    "all", "and", "any", "array", "as", "asc", "between", "both", "by", "case", "cast",
    "check", "collate", "column", "constraint", "create", "cross", "current_date",
    "current_time", "current_timestamp", "default", "desc", "distinct", "else", "end",
    "except", "exists", "false", "fetch", "for", "foreign", "from", "full", "generated",
    "group", "having", "in", "inner", "intersect", "interval", "is", "join", "leading",
    "left", "like", "limit", "natural", "not", "null", "offset", "on", "or", "order",
    "outer", "primary", "references", "right", "row", "select", "some", "struct", "table",
    "then", "to", "trailing", "true", "union", "unique", "using", "values", "watermark",
    "when", "where", "window", "with",
];

/// Quote an identifier for SQL output unless it is a plain lowercase word that is not
/// reserved, so the text parses back to the same name.
pub fn quote_ident(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && RESERVED_WORDS.binary_search(&name).is_err();
    if plain {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted_unless_plain_and_unreserved() {
        assert!(
            RESERVED_WORDS.windows(2).all(|w| w[0] < w[1]),
            "keep the list sorted"
        );
        assert_eq!(quote_ident("amount_2"), "amount_2");
        assert_eq!(quote_ident("timestamp"), "timestamp");
        assert_eq!(quote_ident("watermark"), "\"watermark\"");
        assert_eq!(quote_ident("not"), "\"not\"");
        assert_eq!(quote_ident("Big"), "\"Big\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_ident(""), "\"\"");
    }

    #[test]
    fn widenings_are_lossless_only() {
        let dec = |precision, scale| FieldType::Decimal128 { precision, scale };
        for (from, to) in [
            (FieldType::Int32, FieldType::Int64),
            (FieldType::Int32, FieldType::Float64),
            (FieldType::Uint32, FieldType::Int64),
            (FieldType::Float32, FieldType::Float64),
            (FieldType::Int64, dec(20, 1)),
            (dec(10, 2), dec(12, 3)),
        ] {
            assert!(from.widens_to(&to), "{from} -> {to}");
        }
        for (from, to) in [
            (FieldType::Int64, FieldType::Int32),
            (FieldType::Int64, FieldType::Float64),
            (FieldType::Float64, FieldType::Float32),
            (FieldType::Int32, FieldType::Uint32),
            (FieldType::Int64, dec(18, 0)),
            (dec(10, 2), dec(10, 3)),
            (FieldType::Int32, FieldType::String),
        ] {
            assert!(!from.widens_to(&to), "{from} -> {to}");
        }
    }

    #[test]
    fn serde_matches_arroyo_shape() {
        let mut f = SourceField::new(
            "ts",
            FieldType::Timestamp {
                unit: TimeUnit::Millisecond,
            },
        );
        f.metadata_key = Some("kafka_ts".into());
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(
            json,
            r#"{"name":"ts","type":"timestamp","unit":"millisecond","required":false,"metadata_key":"kafka_ts"}"#
        );
        let back: SourceField = serde_json::from_str(&json).unwrap();
        assert_eq!(back, f);
        let alias: SourceField =
            serde_json::from_str(r#"{"name":"x","type":"timestamp","unit":"us"}"#).unwrap();
        assert_eq!(
            alias.field_type,
            FieldType::Timestamp {
                unit: TimeUnit::Microsecond
            }
        );
    }

    #[test]
    fn nested_sql_names() {
        let t = FieldType::Struct {
            fields: vec![
                SourceField::required("a", FieldType::Int32),
                SourceField::new(
                    "B",
                    FieldType::List {
                        items: Box::new(SourceField::new("item", FieldType::String)),
                    },
                ),
            ],
        };
        assert_eq!(t.sql_name(), "STRUCT<a INT NOT NULL, \"B\" TEXT[]>");
    }

    #[test]
    fn arrow_round_trip_keeps_json_and_nullability() {
        let fields = vec![
            SourceField::required("id", FieldType::Int64),
            SourceField::new("doc", FieldType::Json),
            SourceField::new(
                "amount",
                FieldType::Decimal128 {
                    precision: 10,
                    scale: 2,
                },
            ),
        ];
        for f in fields {
            assert_eq!(SourceField::from_arrow(&f.to_arrow()).unwrap(), f);
        }
        assert!(FieldType::from_arrow(&Field::new("x", DataType::Int8, true)).is_none());
    }
}
