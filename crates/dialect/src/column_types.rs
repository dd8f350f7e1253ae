//! SQL column types -> connection-table field types, with a diagnostic for every type a
//! connection table cannot hold.

use datafusion::sql::sqlparser::ast::{ArrayElemTypeDef, DataType, ExactNumberInfo, TimezoneInfo};
use tributary_types::limits::{MAX_SCHEMA_DEPTH, shorten};
use tributary_types::{Diagnostic, FieldType, SourceField, Span, TimeUnit};

/// The field type of column `column` declared as `dt`.
pub fn field_type(column: &str, dt: &DataType, span: Span) -> Result<FieldType, Diagnostic> {
    nested_type(column, dt, span, 0)
}

/// `field_type` at nesting `depth`, refusing types nested past the schema depth limit (the
/// parser's limit on brackets already keeps declarations far below it).
fn nested_type(
    column: &str,
    dt: &DataType,
    span: Span,
    depth: usize,
) -> Result<FieldType, Diagnostic> {
    use DataType as D;
    if depth > MAX_SCHEMA_DEPTH {
        return Err(Diagnostic::error(format!(
            "column '{}' has a type nested more than {MAX_SCHEMA_DEPTH} levels deep",
            shorten(column)
        ))
        .with_span(span)
        .with_help("Flatten the type, or store the deepest part as JSON.")
        .with_code(tributary_types::codes::INVALID_SCHEMA));
    }
    let field_type =
        |column: &str, dt: &DataType, span: Span| nested_type(column, dt, span, depth + 1);
    let unusable = |instead: &str| {
        Diagnostic::error(format!("column '{column}' has type '{dt}', which cannot be used in a connection table"))
            .with_span(span)
            .with_note("connection tables hold INT, BIGINT, their UNSIGNED forms, FLOAT, DOUBLE, DECIMAL, BOOLEAN, TEXT, BYTEA, TIMESTAMP, DATE, TIME, JSON, STRUCT<..>, arrays and MAP(K, V)")
            .with_help(format!("Use {instead} instead."))
            .with_code(tributary_types::codes::INVALID_SCHEMA)
    };
    Ok(match dt {
        D::Boolean | D::Bool => FieldType::Bool,
        D::Int(_) | D::Integer(_) | D::Int4(_) | D::Int32 => FieldType::Int32,
        D::BigInt(_) | D::Int8(_) | D::Int64 => FieldType::Int64,
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) | D::UInt32 => {
            FieldType::Uint32
        }
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt | D::UInt64 => FieldType::Uint64,
        D::Float(ExactNumberInfo::None) | D::Real | D::Float4 | D::Float32 => FieldType::Float32,
        D::Float(ExactNumberInfo::Precision(p)) if *p <= 24 => FieldType::Float32,
        D::Float(_) | D::Double(_) | D::DoublePrecision | D::Float8 | D::Float64 => {
            FieldType::Float64
        }
        D::Char(_)
        | D::Character(_)
        | D::Varchar(_)
        | D::CharVarying(_)
        | D::CharacterVarying(_)
        | D::Text
        | D::String(_) => FieldType::String,
        D::Bytea | D::Binary(_) | D::Varbinary(_) | D::Blob(_) | D::Bytes(_) => FieldType::Bytes,
        D::JSON | D::JSONB => FieldType::Json,
        D::Timestamp(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone)
        | D::Datetime(p)
        | D::TimestampNtz(p) => {
            let unit = match p {
                None => TimeUnit::Nanosecond,
                Some(p) => TimeUnit::from_precision(*p).ok_or_else(|| {
                    Diagnostic::error(format!("column '{column}' has timestamp precision {p}, but only 0, 3, 6 and 9 are supported"))
                        .with_span(span)
                        .with_help("Use TIMESTAMP(3) for milliseconds, TIMESTAMP(6) for microseconds or TIMESTAMP(9) for nanoseconds.")
                        .with_code(tributary_types::codes::INVALID_SCHEMA)
                })?,
            };
            FieldType::Timestamp { unit }
        }
        D::Timestamp(_, _) => {
            return Err(unusable("TIMESTAMP (without time zone; values are UTC)"));
        }
        D::Numeric(info) | D::Decimal(info) | D::Dec(info) => {
            let (precision, scale) = match info {
                ExactNumberInfo::None => (38, 10),
                ExactNumberInfo::Precision(p) => (*p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
            };
            if precision == 0 || precision > 38 || scale < 0 || scale as u64 > precision {
                return Err(Diagnostic::error(format!(
                    "column '{column}' has an invalid DECIMAL({precision}, {scale})"
                ))
                .with_span(span)
                .with_help("Precision must be 1 to 38 and scale 0 to the precision.")
                .with_code(tributary_types::codes::INVALID_SCHEMA));
            }
            FieldType::Decimal128 {
                precision: precision as u8,
                scale: scale as i8,
            }
        }
        D::Array(
            ArrayElemTypeDef::SquareBracket(inner, _)
            | ArrayElemTypeDef::AngleBracket(inner)
            | ArrayElemTypeDef::Parenthesis(inner),
        ) => FieldType::List {
            items: Box::new(SourceField::new("item", field_type(column, inner, span)?)),
        },
        D::Struct(fields, _) => {
            let mut out = Vec::with_capacity(fields.len());
            for f in fields {
                let Some(name) = &f.field_name else {
                    return Err(Diagnostic::error(format!(
                        "column '{column}' has a STRUCT field without a name"
                    ))
                    .with_span(span)
                    .with_help("Name every field: STRUCT<a INT, b TEXT>.")
                    .with_code(tributary_types::codes::INVALID_SCHEMA));
                };
                let name = if name.quote_style.is_some() {
                    name.value.clone()
                } else {
                    name.value.to_lowercase()
                };
                out.push(SourceField::new(
                    name.clone(),
                    field_type(&format!("{column}.{name}"), &f.field_type, span)?,
                ));
            }
            FieldType::Struct { fields: out }
        }
        D::TinyInt(_) | D::SmallInt(_) | D::Int2(_) | D::Int16 => return Err(unusable("INT")),
        D::TinyIntUnsigned(_)
        | D::SmallIntUnsigned(_)
        | D::Int2Unsigned(_)
        | D::UTinyInt
        | D::USmallInt
        | D::UInt8
        | D::UInt16 => {
            return Err(unusable("INT UNSIGNED"));
        }
        D::Date | D::Date32 => FieldType::Date,
        D::Time(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
            let unit = match p {
                None => TimeUnit::Microsecond,
                Some(p) => TimeUnit::from_precision(*p).ok_or_else(|| {
                    Diagnostic::error(format!("column '{column}' has time precision {p}, but only 0, 3, 6 and 9 are supported"))
                        .with_span(span)
                        .with_help("Use TIME(3) for milliseconds, TIME(6) for microseconds or TIME(9) for nanoseconds.")
                        .with_code(tributary_types::codes::INVALID_SCHEMA)
                })?,
            };
            FieldType::Time { unit }
        }
        D::Time(_, _) => return Err(unusable("TIME (without time zone)")),
        D::Interval { .. } => {
            return Err(unusable(
                "BIGINT (a duration in milliseconds or microseconds)",
            ));
        }
        D::Map(key, value) => {
            let key_type = field_type(&format!("{column}.key"), key, span)?;
            if matches!(
                key_type,
                FieldType::Json
                    | FieldType::Struct { .. }
                    | FieldType::List { .. }
                    | FieldType::Map { .. }
            ) {
                return Err(Diagnostic::error(format!(
                    "column '{column}' has map key type {key_type}, but map keys must be scalars"
                ))
                .with_span(span)
                .with_help("Use a scalar key such as MAP(TEXT, INT).")
                .with_code(tributary_types::codes::INVALID_SCHEMA));
            }
            FieldType::map(
                key_type,
                field_type(&format!("{column}.value"), value, span)?,
            )
        }
        D::Uuid => return Err(unusable("TEXT")),
        other => {
            return Err(Diagnostic::error(format!("unsupported SQL type '{other}' for column '{column}'"))
                .with_span(span)
                .with_help("Use one of INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), BOOLEAN, TEXT, BYTEA, TIMESTAMP, DATE, TIME, JSON, STRUCT<..>, T[] or MAP(K, V).")
                .with_code(tributary_types::codes::INVALID_SCHEMA));
        }
    })
}
