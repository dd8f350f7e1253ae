//! Impulse rows for queries: `counter` from 0 and `subtask_index` 0, as JSON messages,
//! paced at `event_rate` rows per second (0: as fast as the query reads), ending after
//! `message_count` rows when it is set. Each row's event time is the start plus
//! `event_time_interval` nanoseconds per row, or the wall clock when it is not set, as
//! Arroyo's impulse gives it.

use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader, now_nanos};
use serde_json::Value;
use std::time::{Duration, Instant};
use tributary_types::{Format, JsonFormat};

/// A generator of impulse rows.
#[derive(Debug)]
pub(crate) struct ImpulseReader {
    /// Rows per second; `None` when unpaced.
    rate: Option<f64>,
    /// Rows left to emit; `None` when unbounded.
    left: Option<u64>,
    next: u64,
    started: Instant,
    /// Event time between rows, in nanoseconds; `None`: each row's is the wall clock.
    interval: Option<i64>,
    /// The wall clock at the start, in nanoseconds since the epoch.
    start_time: i64,
}

impl ImpulseReader {
    /// The reader a table's config asks for.
    pub(crate) fn new(table: &Value) -> Self {
        let rate = table
            .get("event_rate")
            .and_then(Value::as_f64)
            .filter(|r| r.is_finite() && *r > 0.0);
        Self {
            rate,
            left: table.get("message_count").and_then(Value::as_u64),
            next: 0,
            started: Instant::now(),
            interval: table.get("event_time_interval").and_then(Value::as_i64),
            start_time: now_nanos(),
        }
    }

    /// Row `i`'s event time.
    fn event_time(&self, i: u64) -> i64 {
        match self.interval {
            Some(step) => {
                let offset = i64::try_from(i).unwrap_or(i64::MAX).saturating_mul(step);
                self.start_time.saturating_add(offset)
            }
            None => now_nanos(),
        }
    }

    /// How many rows are due by now (unpaced: all of them).
    fn due(&self) -> u64 {
        match self.rate {
            None => u64::MAX,
            // Row i is due i / rate seconds after the start; row 0 at once.
            Some(r) => (self.started.elapsed().as_secs_f64() * r) as u64 + 1,
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for ImpulseReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        if self.left == Some(0) {
            return Ok(None);
        }
        let mut due = self.due().saturating_sub(self.next);
        if due == 0 {
            if let Some(r) = self.rate {
                let at = Duration::from_secs_f64(self.next as f64 / r);
                tokio::time::sleep(at.saturating_sub(self.started.elapsed())).await;
            }
            due = self.due().saturating_sub(self.next).max(1);
        }
        let n = due
            .min(max.max(1) as u64)
            .min(self.left.unwrap_or(u64::MAX));
        let batch = (self.next..self.next + n)
            .map(|i| {
                SampledMessage::from(format!(r#"{{"counter":{i},"subtask_index":0}}"#).into_bytes())
                    .at(self.event_time(i))
            })
            .collect();
        self.next += n;
        if let Some(left) = &mut self.left {
            *left -= n;
        }
        Ok(Some(batch))
    }

    fn generated_format(&self) -> Option<Format> {
        Some(Format::Json(JsonFormat::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn counters(r: &mut ImpulseReader, max: usize) -> Option<Vec<String>> {
        r.next_batch(max).await.expect("read").map(|b| {
            b.into_iter()
                .map(|m| String::from_utf8(m.payload).expect("utf-8"))
                .collect()
        })
    }

    #[tokio::test]
    async fn a_counted_impulse_ends_after_its_rows() {
        let mut r = ImpulseReader::new(&json!({"event_rate": 0, "message_count": 3}));
        assert_eq!(
            counters(&mut r, 2).await,
            Some(vec![
                r#"{"counter":0,"subtask_index":0}"#.to_string(),
                r#"{"counter":1,"subtask_index":0}"#.to_string()
            ])
        );
        assert_eq!(
            counters(&mut r, 2).await,
            Some(vec![r#"{"counter":2,"subtask_index":0}"#.to_string()])
        );
        assert_eq!(counters(&mut r, 2).await, None);
    }

    #[tokio::test]
    async fn a_paced_impulse_emits_at_its_rate() {
        // 200 rows/s: 20 rows take about 95 ms (row 0 is due at once).
        let mut r = ImpulseReader::new(&json!({"event_rate": 200}));
        let started = Instant::now();
        let mut got = 0;
        while got < 20 {
            got += counters(&mut r, 100).await.expect("unbounded").len();
        }
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(90), "{took:?} for 20 rows");
        assert!(took < Duration::from_millis(1500), "{took:?} for 20 rows");
    }

    #[tokio::test]
    async fn rows_are_timed_by_the_interval_from_the_start_or_by_the_wall_clock() {
        let mut r = ImpulseReader::new(
            &json!({"event_rate": 0, "message_count": 3, "event_time_interval": 1_000_000_000i64}),
        );
        let start = r.start_time;
        let times: Vec<Option<i64>> = r
            .next_batch(3)
            .await
            .expect("read")
            .expect("rows")
            .iter()
            .map(|m| m.event_time)
            .collect();
        let second = 1_000_000_000;
        assert_eq!(
            times,
            vec![Some(start), Some(start + second), Some(start + 2 * second)]
        );

        let before = now_nanos();
        let mut r = ImpulseReader::new(&json!({"event_rate": 0, "message_count": 2}));
        let batch = r.next_batch(2).await.expect("read").expect("rows");
        let after = now_nanos();
        for m in batch {
            let t = m.event_time.expect("every row has a time");
            assert!(
                (before..=after).contains(&t),
                "{t} not in {before}..={after}"
            );
        }
    }
}
