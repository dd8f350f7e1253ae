//! Window functions `tumble`, `hop` and `session`, in both Flink's form with the time
//! column first (`TUMBLE(event_time, INTERVAL '1' HOUR)`) and Arroyo's form without it
//! (`tumble(INTERVAL '1' HOUR)`). They plan to a `window` struct of `start` and `end`
//! timestamps, which `bounds` computes for each row. A hop whose slide is not its
//! width and a session are not values of one row: [`ExpandWindows`] computes them in
//! GROUP BY (`hop`, `session`).
//!
//! Arroyo's form windows the input's event time: [`EventTimeWindows`] (an analyzer rule)
//! turns it into Flink's form with the input's event-time column, which connection
//! tables mark on their schema ([`EVENT_TIME_METADATA`]). Left alone, a call with only
//! constant arguments is a constant, which DataFusion drops from GROUP BY.

mod bounds;
mod event_time;
mod expand;
mod hop;
pub mod implicit_time;
mod session;

pub use event_time::{EVENT_TIME_METADATA, EventTimeWindows};
pub use expand::ExpandWindows;
pub use implicit_time::TIMESTAMP_COLUMN;

use datafusion::arrow::datatypes::{DataType, Field, Fields, TimeUnit};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};

/// The three window kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Tumble,
    Hop,
    Session,
}

impl Kind {
    /// The kind a function name (any case) denotes.
    fn from_name(name: &str) -> Option<Self> {
        [Kind::Tumble, Kind::Hop, Kind::Session]
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name))
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Tumble => "tumble",
            Kind::Hop => "hop",
            Kind::Session => "session",
        }
    }

    /// The interval arguments after the optional time column.
    fn intervals(self) -> &'static [&'static str] {
        match self {
            Kind::Tumble => &["width"],
            Kind::Hop => &["slide", "width"],
            Kind::Session => &["gap"],
        }
    }
}

/// A window function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct WindowFunction {
    kind: Kind,
    signature: Signature,
}

/// The type every window function returns.
pub fn window_type() -> DataType {
    let ts = DataType::Timestamp(TimeUnit::Nanosecond, None);
    DataType::Struct(Fields::from(vec![
        Field::new("start", ts.clone(), false),
        Field::new("end", ts, false),
    ]))
}

impl ScalarUDFImpl for WindowFunction {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        let intervals = self.kind.intervals();
        let usage = format!(
            "{name}({list}) or {name}(time_column, {list})",
            name = self.kind.name(),
            list = intervals
                .iter()
                .map(|i| format!("{i} INTERVAL"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let rest = if args.len() == intervals.len() + 1 {
            if !matches!(args[0], DataType::Timestamp(_, _)) {
                return Err(DataFusionError::Plan(format!(
                    "the first argument of {} must be a TIMESTAMP column, but it is {}; use {usage}",
                    self.kind.name(),
                    args[0]
                )));
            }
            &args[1..]
        } else if args.len() == intervals.len() {
            args
        } else {
            return Err(DataFusionError::Plan(format!(
                "{} takes {} or {} arguments; use {usage}",
                self.kind.name(),
                intervals.len(),
                intervals.len() + 1
            )));
        };
        for (name, ty) in intervals.iter().zip(rest) {
            // A string is an interval's text, as Arroyo accepts it (checked when read).
            let text = matches!(
                ty,
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
            if !text && !matches!(ty, DataType::Interval(_) | DataType::Duration(_)) {
                return Err(DataFusionError::Plan(format!(
                    "the {name} of {} must be an INTERVAL, but it is {ty}; use {usage}",
                    self.kind.name()
                )));
            }
        }
        Ok(window_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        bounds::evaluate(self.kind, &args.args, args.number_rows)
    }
}

/// A `hop` call's slide and width in nanoseconds, when it is one and both are constants
/// (in either form, as intervals or their text).
pub(crate) fn hop_slide_width(e: &datafusion::logical_expr::Expr) -> Option<(i64, i64)> {
    use datafusion::logical_expr::Expr;
    let Expr::ScalarFunction(f) = e else {
        return None;
    };
    if Kind::from_name(f.func.name()) != Some(Kind::Hop) || f.args.len() < 2 {
        return None;
    }
    let nanos = |e: &Expr| match e {
        Expr::Literal(v, _) => bounds::scalar_nanos(Kind::Hop, v).ok(),
        _ => None,
    };
    let n = f.args.len();
    Some((nanos(&f.args[n - 2])?, nanos(&f.args[n - 1])?))
}

/// Arroyo's `row_time()`: the row's event time.
pub(crate) const ROW_TIME: &str = "row_time";

/// The type `row_time()` returns.
pub(crate) fn row_time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, None)
}

/// `row_time()`, which [`EventTimeWindows`] turns into the input's event-time column.
#[derive(Debug, PartialEq, Eq, Hash)]
struct RowTime {
    signature: Signature,
}

impl ScalarUDFImpl for RowTime {
    fn name(&self) -> &str {
        ROW_TIME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(row_time_type())
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        // Analysis replaces every call that has an input; one that has none has no row.
        Err(DataFusionError::Plan(
            "row_time() is the event time of a row, so it needs a table to read (FROM ...)".into(),
        ))
    }
}

/// The window functions to register on a session.
pub fn window_functions() -> Vec<ScalarUDF> {
    [Kind::Tumble, Kind::Hop, Kind::Session]
        .into_iter()
        .map(|kind| {
            // Any arity: `return_type` checks it with a message that shows both forms.
            let signature = Signature::new(TypeSignature::VariadicAny, Volatility::Immutable);
            ScalarUDF::from(WindowFunction { kind, signature })
        })
        .chain(std::iter::once(ScalarUDF::from(RowTime {
            signature: Signature::nullary(Volatility::Volatile),
        })))
        .collect()
}
