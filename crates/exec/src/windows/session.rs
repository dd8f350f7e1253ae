//! Session windows: a window function over each key's rows in event-time order, which
//! [`super::expand`] places before the aggregate. Rows closer than the gap to the one
//! before them share a session, which runs from its first row's time to its last row's
//! time plus the gap (as in Flink and Arroyo).

use super::Kind;
use super::bounds::{plan, time_nanos, window_array};
use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::buffer::NullBuffer;
use datafusion::arrow::datatypes::{Field, FieldRef};
use datafusion::error::Result;
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{
    PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use std::sync::Arc;

/// `session_window(time, gap) OVER (PARTITION BY keys ORDER BY time)`. The gap is fixed
/// when the function is made; the argument shows it in plans.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(super) struct SessionWindow {
    gap: i64,
    signature: Signature,
}

impl SessionWindow {
    /// The window function for sessions that end `gap` nanoseconds after their last row.
    pub(super) fn udwf(gap: i64) -> Result<WindowUDF> {
        if gap <= 0 {
            return Err(plan("the gap of a session window must be positive".into()));
        }
        Ok(WindowUDF::from(SessionWindow {
            gap,
            signature: Signature::any(2, Volatility::Immutable),
        }))
    }
}

impl WindowUDFImpl for SessionWindow {
    fn name(&self) -> &str {
        "session_window"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn partition_evaluator(
        &self,
        _args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        Ok(Box::new(Sessions { gap: self.gap }))
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(
            args.name(),
            super::window_type(),
            true,
        )))
    }
}

/// Assigns the sessions of one partition, whose rows arrive sorted by time.
#[derive(Debug)]
struct Sessions {
    gap: i64,
}

impl PartitionEvaluator for Sessions {
    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        let [times, _gap] = values else {
            return Err(plan(
                "session_window takes the time column and the gap".into(),
            ));
        };
        let times = time_nanos(Kind::Session, times)?;
        let mut starts = vec![0; num_rows];
        let mut ends = vec![0; num_rows];
        let mut row = 0;
        while row < num_rows {
            if times.is_null(row) {
                row += 1;
                continue;
            }
            // The session holding `row` runs while each next row is within the gap of the
            // one before it.
            let first = row;
            let mut last = times.value(row);
            let mut next = row + 1;
            while next < num_rows && times.is_valid(next) {
                let t = times.value(next);
                if t.saturating_sub(last) >= self.gap {
                    break;
                }
                last = last.max(t);
                next += 1;
            }
            let (start, end) = (times.value(first), last.saturating_add(self.gap));
            starts[first..next].fill(start);
            ends[first..next].fill(end);
            row = next;
        }
        let nulls = times
            .nulls()
            .cloned()
            .map(|n| NullBuffer::new(n.into_inner()));
        Ok(Arc::new(window_array(starts, ends, nulls)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{StructArray, TimestampNanosecondArray};

    const S: i64 = 1_000_000_000;

    fn sessions(gap: i64, times: Vec<Option<i64>>) -> Vec<Option<(i64, i64)>> {
        let n = times.len();
        let times: ArrayRef = Arc::new(TimestampNanosecondArray::from(times));
        let gaps: ArrayRef = Arc::new(TimestampNanosecondArray::from(vec![gap; n]));
        let got = Sessions { gap }.evaluate_all(&[times, gaps], n).unwrap();
        let s = got.as_any().downcast_ref::<StructArray>().unwrap();
        let col = |i: usize| {
            s.column(i)
                .as_any()
                .downcast_ref::<TimestampNanosecondArray>()
                .unwrap()
                .clone()
        };
        let (starts, ends) = (col(0), col(1));
        (0..n)
            .map(|i| s.is_valid(i).then(|| (starts.value(i), ends.value(i))))
            .collect()
    }

    #[test]
    fn rows_within_the_gap_share_a_session_that_ends_a_gap_after_the_last() {
        let got = sessions(
            10 * S,
            vec![
                Some(0),
                Some(5 * S),
                Some(14 * S),
                Some(24 * S),
                Some(40 * S),
                None,
            ],
        );
        assert_eq!(
            got,
            [
                Some((0, 24 * S)),
                Some((0, 24 * S)),
                Some((0, 24 * S)),
                // Exactly a gap after the row before: a new session.
                Some((24 * S, 34 * S)),
                Some((40 * S, 50 * S)),
                None,
            ]
        );
    }

    #[test]
    fn a_non_positive_gap_is_refused() {
        let e = SessionWindow::udwf(0).unwrap_err();
        assert!(e.to_string().contains("must be positive"), "{e}");
    }
}
