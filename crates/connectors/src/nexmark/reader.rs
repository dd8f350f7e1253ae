//! The Nexmark generator for queries: persons, auctions and bids in the benchmark's
//! proportions (1 : 3 : 46 in every 50 events), each event one JSON message with the
//! other two structs NULL. Values are drawn from a generator seeded by the event's
//! number, so the same table yields the same events; bids and auctions refer to recent
//! persons and auctions as the benchmark's do. Event time advances by `1 / event_rate`
//! seconds per event from the moment the query starts (1 ms when unpaced). Paced at
//! `event_rate` events per second (0: as fast as the query reads); with `runtime`, it
//! stops after that many seconds.

use crate::probe::SampledMessage;
use crate::source::{ReadFailure, SourceReader, now_nanos};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tributary_types::{Format, JsonFormat};

const PERSON_PROPORTION: u64 = 1;
const AUCTION_PROPORTION: u64 = 3;
const TOTAL_PROPORTION: u64 = 50;
/// Ids start here, as in the benchmark.
const FIRST_ID: u64 = 1000;
/// Bids and auctions refer to one of the last this-many persons or auctions.
const RECENT: u64 = 100;

const FIRST_NAMES: &[&str] = &[
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter",
];
const LAST_NAMES: &[&str] = &[
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris",
];
const CITIES: &[&str] = &[
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
];
const STATES: &[&str] = &["AZ", "CA", "ID", "OR", "WA", "WY"];
const CHANNELS: &[&str] = &["Google", "Facebook", "Baidu", "Apple"];

/// SplitMix64: small, fast and good enough to draw benchmark values from.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len() as u64) as usize]
    }
    fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| (b'a' + self.below(26) as u8) as char)
            .collect()
    }
}

/// Event `n`, at `time` (nanoseconds since the epoch), as the table's JSON row.
pub(crate) fn event(n: u64, time: i64) -> Value {
    let mut d = Draw(n);
    let epoch = n / TOTAL_PROPORTION;
    let offset = n % TOTAL_PROPORTION;
    // Persons and auctions made so far, this event included.
    let persons = epoch * PERSON_PROPORTION + (offset + 1).min(PERSON_PROPORTION);
    let auctions = epoch * AUCTION_PROPORTION
        + (offset + 1)
            .saturating_sub(PERSON_PROPORTION)
            .min(AUCTION_PROPORTION);
    let recent = |d: &mut Draw, made: u64| {
        FIRST_ID + made.saturating_sub(1 + d.below(RECENT.min(made.max(1))))
    };
    if offset < PERSON_PROPORTION {
        let name = format!("{} {}", d.pick(FIRST_NAMES), d.pick(LAST_NAMES));
        let email = format!("{}@{}.com", d.word(7), d.word(5));
        let card = (0..4)
            .map(|_| format!("{:04}", d.below(10_000)))
            .collect::<Vec<_>>()
            .join(" ");
        json!({"person": {
            "id": FIRST_ID + persons - 1, "name": name, "email_address": email,
            "credit_card": card, "city": d.pick(CITIES), "state": d.pick(STATES),
            "datetime": time, "extra": ""
        }, "auction": null, "bid": null})
    } else if offset < PERSON_PROPORTION + AUCTION_PROPORTION {
        let initial = 1 + d.below(1_000);
        json!({"person": null, "auction": {
            "id": FIRST_ID + auctions - 1, "description": d.word(12), "item_name": d.word(8),
            "initial_bid": initial, "reserve": initial + d.below(1_000),
            "datetime": time, "expires": time + (1 + d.below(60)) as i64 * 1_000_000_000,
            "seller": recent(&mut d, persons), "category": 10 + d.below(5), "extra": ""
        }, "bid": null})
    } else {
        let auction = recent(&mut d, auctions);
        json!({"person": null, "auction": null, "bid": {
            "auction": auction, "bidder": recent(&mut d, persons), "price": 1 + d.below(100_000),
            "channel": d.pick(CHANNELS),
            "url": format!("https://www.nexmark.com/{}/item.htm?query=1", d.word(5)),
            "datetime": time, "extra": ""
        }})
    }
}

/// A generator of Nexmark events.
#[derive(Debug)]
pub(crate) struct NexmarkReader {
    rate: Option<f64>,
    runtime: Option<Duration>,
    next: u64,
    started: Instant,
    /// Event time of event 0, in nanoseconds since the epoch.
    base: i64,
    /// Event time between events, in nanoseconds.
    step: i64,
}

impl NexmarkReader {
    pub(crate) fn new(table: &Value) -> Self {
        let rate = table
            .get("event_rate")
            .and_then(Value::as_f64)
            .filter(|r| r.is_finite() && *r > 0.0);
        let runtime = table
            .get("runtime")
            .and_then(Value::as_f64)
            .filter(|r| r.is_finite() && *r >= 0.0)
            .map(Duration::from_secs_f64);
        let base = now_nanos();
        Self {
            rate,
            runtime,
            next: 0,
            started: Instant::now(),
            base,
            step: rate.map_or(1_000_000, |r| (1e9 / r).max(1.0) as i64),
        }
    }
}

#[async_trait::async_trait]
impl SourceReader for NexmarkReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        if self.runtime.is_some_and(|r| self.started.elapsed() >= r) {
            return Ok(None);
        }
        let mut n = max.max(1) as u64;
        if let Some(r) = self.rate {
            let at = Duration::from_secs_f64(self.next as f64 / r);
            if let Some(wait) = at.checked_sub(self.started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            let due = (self.started.elapsed().as_secs_f64() * r) as u64 + 1;
            n = n.min(due.saturating_sub(self.next).max(1));
        }
        let batch = (self.next..self.next + n)
            .map(|i| {
                let time = self.base + i as i64 * self.step;
                SampledMessage::from(event(i, time).to_string().into_bytes()).at(time)
            })
            .collect();
        self.next += n;
        Ok(Some(batch))
    }

    fn generated_format(&self) -> Option<Format> {
        Some(Format::Json(JsonFormat::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_come_in_the_benchmarks_proportions_and_refer_to_earlier_ones() {
        let events: Vec<Value> = (0..500).map(|n| event(n, 0)).collect();
        let count = |kind: &str| events.iter().filter(|e| !e[kind].is_null()).count();
        assert_eq!(
            (count("person"), count("auction"), count("bid")),
            (10, 30, 460)
        );
        let max_person = events
            .iter()
            .filter_map(|e| e["person"]["id"].as_u64())
            .max();
        assert_eq!(max_person, Some(FIRST_ID + 9));
        for e in &events {
            if let Some(b) = e["bid"].as_object() {
                let bidder = b["bidder"].as_u64().expect("bidder");
                assert!((FIRST_ID..=FIRST_ID + 9).contains(&bidder), "{e}");
            }
        }
        // The same number gives the same event.
        assert_eq!(event(123, 7), event(123, 7));
    }
}
