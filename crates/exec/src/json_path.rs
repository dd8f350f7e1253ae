//! Arroyo's JSONPath functions over JSON text: `extract_json(json, path)` (every match,
//! as a list of JSON texts), `extract_json_string(json, path)` (the first match, when it
//! is a string) and `get_first_json_object(json, path)` (the first match, as JSON text).
//! Text that is not JSON gives NULL, as in Arroyo; a path that does not parse is an
//! error naming it. Paths follow RFC 9535 (`$.a.b`, `$.items[*].id`, `$..name`).

use datafusion::arrow::array::{Array, ArrayRef, AsArray, ListBuilder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use serde_json::Value;
use serde_json_path::JsonPath;
use std::collections::HashMap;
use std::sync::Arc;

/// What a function returns of the matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    /// Every match as JSON text.
    All,
    /// The first match's string value.
    FirstString,
    /// The first match as JSON text.
    FirstJson,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::All => "extract_json",
            Kind::FirstString => "extract_json_string",
            Kind::FirstJson => "get_first_json_object",
        }
    }
}

/// One of the JSONPath functions.
#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonPathFunction {
    kind: Kind,
    signature: Signature,
}

/// The JSONPath functions to register on a session.
pub fn json_path_functions() -> Vec<ScalarUDF> {
    [Kind::All, Kind::FirstString, Kind::FirstJson]
        .into_iter()
        .map(|kind| {
            ScalarUDF::from(JsonPathFunction {
                kind,
                signature: Signature::string(2, Volatility::Immutable),
            })
        })
        .collect()
}

fn item_field() -> Arc<Field> {
    Arc::new(Field::new("item", DataType::Utf8, true))
}

impl ScalarUDFImpl for JsonPathFunction {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::All => DataType::List(item_field()),
            Kind::FirstString | Kind::FirstJson => DataType::Utf8,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let [json, path] = args.args.as_slice() else {
            return Err(DataFusionError::Plan(format!(
                "{} takes two arguments: the JSON text and a JSONPath",
                self.kind.name()
            )));
        };
        let json = json.to_array(rows)?;
        let path = path.to_array(rows)?;
        let json = cast_utf8(&json)?;
        let path = cast_utf8(&path)?;
        let (json, path) = (json.as_string::<i32>(), path.as_string::<i32>());
        // A path is usually a constant: compile each distinct one once.
        let mut compiled: HashMap<String, JsonPath> = HashMap::new();
        let mut matches_of = |row: usize| -> Result<Option<Vec<Value>>> {
            if json.is_null(row) || path.is_null(row) {
                return Ok(None);
            }
            let p = path.value(row);
            if !compiled.contains_key(p) {
                let parsed = JsonPath::parse(p).map_err(|e| {
                    DataFusionError::Execution(format!(
                        "{}: '{}' is not a JSONPath ({e}); write one such as '$.user.name' or '$.items[*].id'",
                        self.kind.name(),
                        tributary_types::limits::shorten(p)
                    ))
                })?;
                compiled.insert(p.to_string(), parsed);
            }
            let Ok(value) = serde_json::from_str::<Value>(json.value(row)) else {
                return Ok(None);
            };
            Ok(compiled
                .get(p)
                .map(|path| path.query(&value).all().into_iter().cloned().collect()))
        };
        let out: ArrayRef = match self.kind {
            Kind::All => {
                let mut b = ListBuilder::new(StringBuilder::new()).with_field(item_field());
                for row in 0..rows {
                    match matches_of(row)? {
                        Some(values) => {
                            for v in values {
                                b.values().append_value(v.to_string());
                            }
                            b.append(true);
                        }
                        None => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
            Kind::FirstString | Kind::FirstJson => {
                let mut b = StringBuilder::new();
                for row in 0..rows {
                    let first = matches_of(row)?.and_then(|v| v.into_iter().next());
                    match (self.kind, first) {
                        (Kind::FirstString, Some(Value::String(s))) => b.append_value(s),
                        (Kind::FirstJson, Some(v)) => b.append_value(v.to_string()),
                        _ => b.append_null(),
                    }
                }
                Arc::new(b.finish())
            }
        };
        if rows == 1
            && args
                .args
                .iter()
                .all(|a| matches!(a, ColumnarValue::Scalar(_)))
        {
            return Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(&out, 0)?));
        }
        Ok(ColumnarValue::Array(out))
    }
}

/// A string array as `Utf8` (from `LargeUtf8` or `Utf8View`).
fn cast_utf8(a: &ArrayRef) -> Result<ArrayRef> {
    if a.data_type() == &DataType::Utf8 {
        return Ok(Arc::clone(a));
    }
    Ok(datafusion::arrow::compute::cast(a, &DataType::Utf8)?)
}
