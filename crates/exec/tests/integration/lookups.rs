//! Lookup joins against a real Redis: rows fetched by key, inner and left joins, filters
//! on the looked-up rows, the cache (counted by EXPLAIN ANALYZE), and the refusals.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use crate::reading::{error, table};
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::Session;

/// Keys under a prefix of this test's own, set and deleted by it.
struct RedisKeys {
    prefix: String,
    conn: redis::aio::MultiplexedConnection,
    keys: Vec<String>,
}

impl RedisKeys {
    async fn new(test: &str) -> Self {
        let client = redis::Client::open("redis://127.0.0.1:6379").unwrap();
        Self {
            prefix: format!("tributary:lookup:{test}:{}:", std::process::id()),
            conn: client.get_multiplexed_async_connection().await.unwrap(),
            keys: Vec::new(),
        }
    }

    async fn set(&mut self, key: &str, value: &str) {
        let key = format!("{}{key}", self.prefix);
        let _: () = redis::cmd("SET")
            .arg(&key)
            .arg(value)
            .query_async(&mut self.conn)
            .await
            .unwrap();
        self.keys.push(key);
    }

    async fn delete(mut self) {
        let _: () = redis::cmd("DEL")
            .arg(&self.keys)
            .query_async(&mut self.conn)
            .await
            .unwrap();
    }
}

async fn users_session(cache: &str) -> Session {
    let s = Session::new(Arc::new(OverlayStore::in_memory()));
    s.execute(&format!(
        "CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://127.0.0.1:6379', validate = false); \
         CREATE TEMPORARY TABLE users (k TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT, tier INT) \
         WITH (connector = 'redis', connection_profile = 'r', format = 'json'{cache})"
    ))
    .await
    .unwrap();
    s
}

const ORDERS: &str =
    "(VALUES (1, 'u1'), (2, 'u2'), (3, 'u9'), (4, 'u1'), (5, NULL)) AS o(id, user_id)";

#[tokio::test]
async fn inner_and_left_joins_fetch_each_key_and_decode_its_row() {
    let mut keys = RedisKeys::new("joins").await;
    keys.set("u1", r#"{"name":"ann","tier":3}"#).await;
    keys.set("u2", r#"{"name":"bob","tier":1}"#).await;
    let p = keys.prefix.clone();
    let s = users_session("").await;

    let inner = table(
        &s,
        &format!(
            "SELECT o.id, u.k, u.name, u.tier FROM {ORDERS} \
             JOIN users u ON concat('{p}', o.user_id) = u.k ORDER BY o.id"
        ),
    )
    .await;
    let lines: Vec<&str> = inner.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(lines.len(), 4, "a header and three matched rows:\n{inner}");
    assert!(
        lines[1].contains(&format!("| 1  | {p}u1 | ann  | 3    |")),
        "{inner}"
    );
    assert!(
        lines[2].contains("| 2  |") && lines[2].contains("| bob  | 1    |"),
        "{inner}"
    );
    assert!(
        lines[3].contains("| 4  |") && lines[3].contains("| ann  |"),
        "{inner}"
    );

    // A left join keeps the unknown key and the NULL key, with NULL columns.
    let left = table(
        &s,
        &format!(
            "SELECT o.id, u.name FROM {ORDERS} \
             LEFT JOIN users u ON concat('{p}', o.user_id) = u.k ORDER BY o.id"
        ),
    )
    .await;
    for row in [
        "| 1  | ann  |",
        "| 2  | bob  |",
        "| 3  |      |",
        "| 4  | ann  |",
        "| 5  |      |",
    ] {
        assert!(left.contains(row), "{row} in\n{left}");
    }

    // A condition on the looked-up rows: a left join keeps the row, without them.
    let filtered = table(
        &s,
        &format!(
            "SELECT o.id, u.name FROM {ORDERS} \
             LEFT JOIN users u ON concat('{p}', o.user_id) = u.k AND u.tier > 2 ORDER BY o.id"
        ),
    )
    .await;
    assert!(filtered.contains("| 1  | ann  |"), "{filtered}");
    assert!(
        filtered.contains("| 2  |      |"),
        "bob's tier is 1:\n{filtered}"
    );
    // ... and an inner join drops it; a condition across both sides is applied per row.
    let across = table(
        &s,
        &format!(
            "SELECT o.id, u.name FROM {ORDERS} \
             JOIN users u ON concat('{p}', o.user_id) = u.k AND o.id + u.tier > 4 ORDER BY o.id"
        ),
    )
    .await;
    assert!(!across.contains("| 1  |"), "1 + 3 is not over 4:\n{across}");
    assert!(!across.contains("| 2  |"), "{across}");
    assert!(across.contains("| 4  | ann  |"), "{across}");
    keys.delete().await;
}

/// The EXPLAIN ANALYZE counters of the lookup: (keys fetched, cache hits).
async fn lookup_counters(s: &Session, sql: &str) -> (u64, u64) {
    let plan = table(s, &format!("EXPLAIN ANALYZE {sql}")).await;
    let counter = |name: &str| {
        let at = plan
            .find(&format!("{name}="))
            .unwrap_or_else(|| panic!("{name} in\n{plan}"));
        let digits: String = plan[at + name.len() + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse::<u64>().unwrap()
    };
    (counter("keys_fetched"), counter("cache_hits"))
}

#[tokio::test]
async fn the_cache_fetches_each_key_once_and_without_it_every_batch_fetches() {
    let mut keys = RedisKeys::new("cache").await;
    for u in ["u0", "u1", "u2"] {
        keys.set(u, &format!(r#"{{"name":"{u}","tier":1}}"#)).await;
    }
    let p = keys.prefix.clone();
    // 12 ticks in batches of 2, keyed u0, u1, u2, u0, ...: 6 batches, 12 distinct keys
    // across them, 3 distinct keys overall. One partition, so that the counts are exact
    // (partitions share the cache, but two may fetch a key at the same moment).
    let query = format!(
        "SELECT count(u.name) AS n FROM ticks t \
         JOIN users u ON concat('{p}u', CAST(t.counter % 3 AS TEXT)) = u.k"
    );
    let setup = "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '0', message_count = '12'); \
                 SET datafusion.execution.batch_size = 2; \
                 SET datafusion.execution.target_partitions = 1";

    let cached = users_session(
        ", 'lookup.cache.max_bytes' = 100000, 'lookup.cache.ttl' = INTERVAL '1' MINUTE",
    )
    .await;
    cached.execute(setup).await.unwrap();
    let counted = table(&cached, &query).await;
    assert!(counted.contains("| 12 |"), "{counted}");
    assert_eq!(lookup_counters(&cached, &query).await, (3, 9));

    let uncached = users_session("").await;
    uncached.execute(setup).await.unwrap();
    let counted = table(&uncached, &query).await;
    assert!(counted.contains("| 12 |"), "{counted}");
    assert_eq!(lookup_counters(&uncached, &query).await, (12, 0));

    // With the machine's partitions, every partition of the input is joined.
    let parallel = users_session("").await;
    parallel
        .execute(
            "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '0', message_count = '12'); \
             SET datafusion.execution.batch_size = 2; \
             SET datafusion.execution.target_partitions = 4",
        )
        .await
        .unwrap();
    let counted = table(&parallel, &query).await;
    assert!(counted.contains("| 12 |"), "{counted}");
    keys.delete().await;
}

#[tokio::test]
async fn lookup_failures_name_the_table_and_what_to_check() {
    let mut keys = RedisKeys::new("failures").await;
    keys.set("bad", "not json").await;
    let p = keys.prefix.clone();
    let s = users_session("").await;
    let bad = error(
        &s,
        &format!(
            "SELECT u.name FROM (VALUES ('bad')) AS o(k) JOIN users u ON concat('{p}', o.k) = u.k"
        ),
    )
    .await;
    assert!(
        bad.contains("cannot look up rows in table 'users': a message does not decode"),
        "{bad}"
    );

    // Joined on a column that is not the key: refused at planning, naming the key.
    let not_key = error(
        &s,
        "SELECT u.name FROM (VALUES ('x')) AS o(k) JOIN users u ON o.k = u.name",
    )
    .await;
    assert!(
        not_key.contains(
            "lookup table 'users' must be joined on its key: 'name' is not its PRIMARY KEY column"
        ),
        "{not_key}"
    );
    assert!(not_key.contains("ON stream_column = users.k"), "{not_key}");

    // An unreachable server: the connection stage and its code, once rows need a lookup.
    s.execute(
        "CREATE CONNECTION PROFILE nowhere WITH (connector = 'redis', address = 'redis://127.0.0.1:1', validate = false); \
         CREATE TEMPORARY TABLE far (k TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT) \
         WITH (connector = 'redis', connection_profile = 'nowhere', format = 'json')",
    )
    .await
    .unwrap();
    let refused = error(
        &s,
        "SELECT f.name FROM (VALUES ('a')) AS o(k) JOIN far f ON o.k = f.k",
    )
    .await;
    assert!(
        refused.contains("cannot look up rows in table 'far': connect failed [CONNECT_REFUSED]"),
        "{refused}"
    );
    // No key to look up, no connection: an empty input joins to nothing without one.
    let none = table(
        &s,
        "SELECT f.name FROM (VALUES ('a')) AS o(k) JOIN far f ON o.k = f.k WHERE o.k = 'b'",
    )
    .await;
    assert!(!none.contains("| a"), "{none}");
    keys.delete().await;
}
