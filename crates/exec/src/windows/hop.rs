//! Hop windows whose slide is not their width: every window that holds a row, as a list that
//! [`super::expand`] unnests before the aggregate, so the row counts once in each.
//! Windows start at multiples of the slide since the epoch (as Flink and Arroyo align
//! them), so a row at `t` is in each window `[s, s + width)` with `s ≤ t < s + width`.

use super::Kind;
use super::bounds::{plan, time_nanos, window_array};
use datafusion::arrow::array::{Array, ArrayRef, ListArray};
use datafusion::arrow::buffer::OffsetBuffer;
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::error::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::sync::Arc;

/// The most windows one row may fall in (width / slide). Each row is copied once per
/// window, so this bounds how much a hop multiplies its input.
pub(super) const MAX_WINDOWS_PER_ROW: i64 = 1_000;

/// `hop_windows(time, slide, width)`: the list of windows holding each row. The slide and
/// width are fixed when the function is made; the arguments show them in plans.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct HopWindows {
    slide: i64,
    width: i64,
    signature: Signature,
}

impl HopWindows {
    /// The function for one hop; `width / slide` must be at most [`MAX_WINDOWS_PER_ROW`].
    pub(super) fn udf(slide: i64, width: i64) -> Result<ScalarUDF> {
        if slide <= 0 || width <= 0 {
            return Err(plan(
                "the slide and width of a hop window must be positive".into(),
            ));
        }
        let per_row = width / slide + i64::from(width % slide != 0);
        if per_row > MAX_WINDOWS_PER_ROW {
            return Err(plan(format!(
                "a hop whose width is {per_row} times its slide puts each row in {per_row} \
                 windows, more than the {MAX_WINDOWS_PER_ROW} allowed; use a longer slide"
            )));
        }
        Ok(ScalarUDF::from(HopWindows {
            slide,
            width,
            signature: Signature::any(3, Volatility::Immutable),
        }))
    }

    /// The windows holding `t`, earliest first.
    fn windows_of(&self, t: i64, starts: &mut Vec<i64>, ends: &mut Vec<i64>) {
        let last = t - t.rem_euclid(self.slide);
        let mut first = last;
        while let Some(earlier) = first.checked_sub(self.slide) {
            if earlier.saturating_add(self.width) <= t {
                break;
            }
            first = earlier;
        }
        let mut start = first;
        while start <= last {
            // A slide longer than the width leaves gaps that hold no window.
            if start.saturating_add(self.width) > t {
                starts.push(start);
                ends.push(start.saturating_add(self.width));
            }
            start += self.slide;
        }
    }
}

fn list_type() -> DataType {
    DataType::List(Arc::new(Field::new_list_field(super::window_type(), true)))
}

impl ScalarUDFImpl for HopWindows {
    fn name(&self) -> &str {
        "hop_windows"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(list_type())
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [time, _slide, _width] = args.args.as_slice() else {
            return Err(plan(
                "hop_windows takes the time column, the slide and the width".into(),
            ));
        };
        let times = time_nanos(Kind::Hop, &time.to_array(args.number_rows)?)?;
        let mut starts = Vec::with_capacity(times.len());
        let mut ends = Vec::with_capacity(times.len());
        let mut offsets = Vec::with_capacity(times.len() + 1);
        offsets.push(0i32);
        for row in 0..times.len() {
            // A row without a time is in no window.
            if times.is_valid(row) {
                self.windows_of(times.value(row), &mut starts, &mut ends);
            }
            let len = i32::try_from(starts.len()).map_err(|_| {
                plan("a batch holds too many hop windows; use a longer slide".into())
            })?;
            offsets.push(len);
        }
        let windows: ArrayRef = Arc::new(window_array(starts, ends, None)?);
        let field = Arc::new(Field::new_list_field(super::window_type(), true));
        let lists = ListArray::try_new(field, OffsetBuffer::new(offsets.into()), windows, None)?;
        Ok(ColumnarValue::Array(Arc::new(lists)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    fn windows(slide: i64, width: i64, t: i64) -> Vec<(i64, i64)> {
        let hop = HopWindows {
            slide,
            width,
            signature: Signature::any(3, Volatility::Immutable),
        };
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        hop.windows_of(t, &mut starts, &mut ends);
        starts.into_iter().zip(ends).collect()
    }

    #[test]
    fn a_row_is_in_every_window_that_spans_it() {
        assert_eq!(
            windows(5 * S, 10 * S, 12 * S),
            [(5 * S, 15 * S), (10 * S, 20 * S)]
        );
        // On a boundary the row starts a window and ends none.
        assert_eq!(
            windows(5 * S, 10 * S, 10 * S),
            [(5 * S, 15 * S), (10 * S, 20 * S)]
        );
        // A width that is not a multiple of the slide.
        assert_eq!(
            windows(3 * S, 7 * S, 9 * S),
            [(3 * S, 10 * S), (6 * S, 13 * S), (9 * S, 16 * S)]
        );
        assert_eq!(windows(5 * S, 10 * S, -S), [(-10 * S, 0), (-5 * S, 5 * S)]);
        // A slide longer than the width: rows in the gaps are in no window.
        assert_eq!(windows(10 * S, 4 * S, 12 * S), [(10 * S, 14 * S)]);
        assert_eq!(windows(10 * S, 4 * S, 15 * S), []);
    }

    #[test]
    fn too_many_windows_per_row_are_refused() {
        let e = HopWindows::udf(1, 10_000).unwrap_err();
        assert!(e.to_string().contains("use a longer slide"), "{e}");
        assert!(HopWindows::udf(1, 1_000).is_ok());
    }
}
