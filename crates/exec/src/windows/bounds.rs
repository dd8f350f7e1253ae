//! Evaluating window functions on rows: each row's window as a `{start, end}` struct.
//! A tumbling window of width `w` holding time `t` starts at `t` rounded down to a
//! multiple of `w` since the epoch (as Flink and Arroyo align them) and ends `w` later;
//! a hop whose slide equals its width is the same window. A hop with overlapping windows
//! puts a row in several windows and a session window depends on the rows around it:
//! neither is a value of one row. In GROUP BY, [`super::expand`] computes them; anywhere
//! else they are refused with what to write instead.

use super::{Kind, window_type};
use datafusion::arrow::array::{
    Array, ArrayRef, Int64Array, StructArray, TimestampNanosecondArray,
};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Fields, TimeUnit};
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::ColumnarValue;
use std::sync::Arc;

const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Each row's window: `args` are the time column, then the intervals.
pub(super) fn evaluate(kind: Kind, args: &[ColumnarValue], rows: usize) -> Result<ColumnarValue> {
    let Some((time, intervals)) = args.split_first() else {
        return Err(plan(format!(
            "{} needs its time column here; write {}(time_column, ...)",
            kind.name(),
            kind.name()
        )));
    };
    let nanos: Vec<i64> = intervals
        .iter()
        .map(|i| interval_nanos(kind, i))
        .collect::<Result<_>>()?;
    let width = match (kind, nanos.as_slice()) {
        (Kind::Tumble, [width]) => *width,
        (Kind::Hop, [slide, width]) if slide == width => *width,
        (Kind::Hop, [slide, width]) => {
            return Err(plan(format!(
                "hop windows whose slide ({slide} ns) is not their width ({width} ns) put a \
                 row in several windows or none, so a hop is not a value of one row; \
                 use it in GROUP BY, where each row counts in each of its windows"
            )));
        }
        (Kind::Session, _) => {
            return Err(plan(
                "session windows depend on the rows around each row, so a session is not a \
                 value of one row; use it in GROUP BY, where the rows of a key that are closer \
                 than the gap form one session"
                    .into(),
            ));
        }
        _ => {
            return Err(plan(format!(
                "{} has the wrong number of intervals",
                kind.name()
            )));
        }
    };
    if width <= 0 {
        return Err(plan(format!(
            "the width of a {} window must be positive",
            kind.name()
        )));
    }
    let times = time_nanos(kind, &time.to_array(rows)?)?;
    let mut starts = Vec::with_capacity(times.len());
    let mut ends = Vec::with_capacity(times.len());
    for row in 0..times.len() {
        let t = times.value(row);
        let start = t - t.rem_euclid(width);
        starts.push(start);
        ends.push(start.saturating_add(width));
    }
    let windows = window_array(starts, ends, times.nulls().cloned())?;
    Ok(ColumnarValue::Array(Arc::new(windows)))
}

/// A time column as nanoseconds since the epoch.
pub(super) fn time_nanos(kind: Kind, times: &ArrayRef) -> Result<Int64Array> {
    let times = cast(times, &DataType::Timestamp(TimeUnit::Nanosecond, None))?;
    let times = cast(&times, &DataType::Int64)?;
    match times.as_any().downcast_ref::<Int64Array>() {
        Some(t) => Ok(t.clone()),
        None => Err(plan(format!(
            "the time column of {} is not a timestamp",
            kind.name()
        ))),
    }
}

/// Windows as the `{start, end}` structs of [`window_type`], NULL where `nulls` says.
pub(super) fn window_array(
    starts: Vec<i64>,
    ends: Vec<i64>,
    nulls: Option<NullBuffer>,
) -> Result<StructArray> {
    let DataType::Struct(fields) = window_type() else {
        return Err(DataFusionError::Internal(
            "the window type is a struct".into(),
        ));
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampNanosecondArray::from(starts)),
        Arc::new(TimestampNanosecondArray::from(ends)),
    ];
    Ok(StructArray::try_new(
        Fields::clone(&fields),
        columns,
        nulls,
    )?)
}

/// An interval argument in nanoseconds; months have no fixed length and are refused.
fn interval_nanos(kind: Kind, value: &ColumnarValue) -> Result<i64> {
    let ColumnarValue::Scalar(scalar) = value else {
        return Err(plan(format!(
            "the intervals of {} must be constants, such as INTERVAL '1' MINUTE",
            kind.name()
        )));
    };
    scalar_nanos(kind, scalar)
}

/// A constant interval in nanoseconds, refusing months and years.
pub(super) fn scalar_nanos(kind: Kind, scalar: &ScalarValue) -> Result<i64> {
    let nanos = match scalar {
        ScalarValue::IntervalMonthDayNano(Some(v)) if v.months == 0 => {
            i64::from(v.days) * NANOS_PER_DAY + v.nanoseconds
        }
        ScalarValue::IntervalDayTime(Some(v)) => {
            i64::from(v.days) * NANOS_PER_DAY + i64::from(v.milliseconds) * 1_000_000
        }
        ScalarValue::DurationNanosecond(Some(n)) => *n,
        ScalarValue::DurationMicrosecond(Some(n)) => n * 1_000,
        ScalarValue::DurationMillisecond(Some(n)) => n * 1_000_000,
        ScalarValue::DurationSecond(Some(n)) => n * 1_000_000_000,
        // Arroyo accepts an interval's text: `hop(interval '5 seconds', '1 minute')`.
        ScalarValue::Utf8(Some(text))
        | ScalarValue::LargeUtf8(Some(text))
        | ScalarValue::Utf8View(Some(text)) => {
            let interval =
                DataType::Interval(datafusion::arrow::datatypes::IntervalUnit::MonthDayNano);
            let parsed = ScalarValue::Utf8(Some(text.clone()))
                .cast_to(&interval)
                .ok()
                .filter(|v| matches!(v, ScalarValue::IntervalMonthDayNano(Some(_))))
                .ok_or_else(|| {
                    plan(format!(
                        "'{}' is not an interval; write one such as '1 minute' or INTERVAL '1' MINUTE",
                        tributary_types::limits::shorten(text)
                    ))
                })?;
            return scalar_nanos(kind, &parsed);
        }
        ScalarValue::IntervalYearMonth(_) | ScalarValue::IntervalMonthDayNano(Some(_)) => {
            return Err(plan(format!(
                "{} windows cannot be months or years long (their length varies); use days",
                kind.name()
            )));
        }
        other => {
            return Err(plan(format!(
                "the intervals of {} must be non-NULL INTERVALs, not {other}",
                kind.name()
            )));
        }
    };
    Ok(nanos)
}

pub(super) fn plan(message: String) -> DataFusionError {
    DataFusionError::Plan(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::IntervalMonthDayNano;

    fn seconds(n: i64) -> ColumnarValue {
        ColumnarValue::Scalar(ScalarValue::IntervalMonthDayNano(Some(
            IntervalMonthDayNano::new(0, 0, n * 1_000_000_000),
        )))
    }

    fn windows_of(
        kind: Kind,
        times: Vec<i64>,
        intervals: Vec<ColumnarValue>,
    ) -> Result<Vec<(i64, i64)>> {
        let n = times.len();
        let mut args = vec![ColumnarValue::Array(Arc::new(
            TimestampNanosecondArray::from(times),
        ))];
        args.extend(intervals);
        let ColumnarValue::Array(a) = evaluate(kind, &args, n)? else {
            panic!("an array");
        };
        let s = a.as_any().downcast_ref::<StructArray>().unwrap();
        let starts = s
            .column(0)
            .as_any()
            .downcast_ref::<TimestampNanosecondArray>()
            .unwrap();
        let ends = s
            .column(1)
            .as_any()
            .downcast_ref::<TimestampNanosecondArray>()
            .unwrap();
        Ok((0..n).map(|i| (starts.value(i), ends.value(i))).collect())
    }

    const S: i64 = 1_000_000_000;

    #[test]
    fn tumbling_windows_align_to_the_epoch_including_before_it() {
        let got = windows_of(
            Kind::Tumble,
            vec![0, 9 * S, 10 * S, 25 * S, -S],
            vec![seconds(10)],
        )
        .unwrap();
        assert_eq!(
            got,
            [
                (0, 10 * S),
                (0, 10 * S),
                (10 * S, 20 * S),
                (20 * S, 30 * S),
                (-10 * S, 0)
            ]
        );
    }

    #[test]
    fn a_hop_whose_slide_is_its_width_is_a_tumble_and_overlaps_are_refused() {
        let got = windows_of(Kind::Hop, vec![15 * S], vec![seconds(10), seconds(10)]).unwrap();
        assert_eq!(got, [(10 * S, 20 * S)]);
        let e = windows_of(Kind::Hop, vec![15 * S], vec![seconds(5), seconds(10)]).unwrap_err();
        assert!(e.to_string().contains("use it in GROUP BY"), "{e}");
        let e = windows_of(Kind::Session, vec![15 * S], vec![seconds(5)]).unwrap_err();
        assert!(
            e.to_string()
                .contains("session windows depend on the rows around"),
            "{e}"
        );
    }

    #[test]
    fn months_and_non_positive_widths_are_refused() {
        let month = ColumnarValue::Scalar(ScalarValue::IntervalMonthDayNano(Some(
            IntervalMonthDayNano::new(1, 0, 0),
        )));
        let e = windows_of(Kind::Tumble, vec![0], vec![month]).unwrap_err();
        assert!(e.to_string().contains("cannot be months"), "{e}");
        let e = windows_of(Kind::Tumble, vec![0], vec![seconds(0)]).unwrap_err();
        assert!(e.to_string().contains("must be positive"), "{e}");
    }
}
