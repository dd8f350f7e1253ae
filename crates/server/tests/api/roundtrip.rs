//! What the API serves, it accepts: a table read with `GET` and posted back under another
//! name is the same table (its config, schema, virtual columns, watermark, profile and
//! role), and the `CREATE` statement it shows makes the same table once more, for tables
//! of every connector that stores tables here: sources, sinks and lookups, formats,
//! metadata and virtual columns, interval options.

use crate::common::app;
use serde_json::{Value, json};

const PROFILES: &str = "
CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);
CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://localhost:6379', validate = false);
CREATE CONNECTION PROFILE m WITH (connector = 'mqtt', url = 'tcp://localhost:1883', validate = false);
CREATE CONNECTION PROFILE n WITH (connector = 'nats', servers = 'localhost:4222', validate = false);
CREATE CONNECTION PROFILE q WITH (connector = 'rabbitmq', host = 'localhost', validate = false);
";

/// One table of each kind; each is read back and posted again.
const TABLES: &[&str] = &[
    "CREATE TABLE nex WITH (connector = 'nexmark', event_rate = 10)",
    "CREATE TABLE imp WITH (connector = 'impulse', event_rate = 10, message_count = 5)",
    "CREATE TABLE orders (id BIGINT NOT NULL, amount DOUBLE, at TIMESTAMP NOT NULL, part INT METADATA FROM 'partition', doubled DOUBLE GENERATED ALWAYS AS (amount * 2), WATERMARK FOR at AS at - INTERVAL '5' SECOND) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json', 'source.offset' = 'earliest')",
    "CREATE TABLE out_k (id BIGINT, note TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'out', type = 'sink', format = 'json', 'sink.commit_mode' = 'exactly_once')",
    "CREATE TABLE raw_k (value TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'raw', type = 'source', format = 'raw_string')",
    "CREATE TABLE mq_in (v BIGINT, t TEXT METADATA FROM 'topic') WITH (connector = 'mqtt', connection_profile = 'm', topic = 'a/+', type = 'source', format = 'json')",
    "CREATE TABLE mq_out (v BIGINT) WITH (connector = 'mqtt', connection_profile = 'm', topic = 'a/b', type = 'sink', format = 'json', 'sink.retain' = true)",
    "CREATE TABLE nt (v BIGINT) WITH (connector = 'nats', connection_profile = 'n', subject = 's', type = 'source', format = 'json')",
    "CREATE TABLE rq (v BIGINT) WITH (connector = 'rabbitmq', connection_profile = 'q', stream = 'st', type = 'source', 'source.offset' = 'first', format = 'json')",
    "CREATE TEMPORARY TABLE users (k TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT) WITH (connector = 'redis', connection_profile = 'r', format = 'json', 'lookup.cache.max_bytes' = 1000000, 'lookup.cache.ttl' = INTERVAL '1' MINUTE)",
    "CREATE TABLE cache_out (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'r', type = 'sink', target = 'string', 'target.key_prefix' = 'c:', 'target.key_column' = 'id', format = 'json')",
    "CREATE TABLE poll (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://localhost:9/x', poll_interval_ms = 500, format = 'json')",
    "CREATE TABLE events (a TEXT) WITH (connector = 'sse', endpoint = 'http://localhost:9/e', events = 'tick', format = 'json')",
    "CREATE TABLE feed (a TEXT) WITH (connector = 'websocket', endpoint = 'ws://localhost:9/f', format = 'json')",
    "CREATE TABLE hook (a TEXT) WITH (connector = 'webhook', endpoint = 'http://localhost:9/h', format = 'json')",
    "CREATE TABLE sink_bh (a TEXT) WITH (connector = 'blackhole')",
];

/// The parts of a table's answer that make it what it is.
fn essence(t: &Value) -> Value {
    json!({
        "connector": t["connector"],
        "table_type": t["table_type"],
        "config": t["config"],
        "schema": t["schema"],
        "virtual_columns": t["virtual_columns"],
        "watermark": t["watermark"],
        "profile": t["connection_profile"]["name"],
    })
}

#[tokio::test]
async fn every_table_read_with_get_posts_back_as_the_same_table() {
    let a = app();
    a.sql(PROFILES).await;
    let mut failures = Vec::new();
    for sql in TABLES {
        a.sql(sql).await;
        let name = sql
            .split_whitespace()
            .skip_while(|w| *w != "TABLE")
            .nth(1)
            .unwrap()
            .trim_end_matches('(');
        let got = a.get(&format!("/api/v1/connection_tables/{name}")).await;
        assert_eq!(got.status, 200, "{}", got.text());
        let t = got.json();
        let copy = format!("{name}_copy");
        let body = json!({
            "name": copy,
            "connector": t["connector"],
            "connection_profile_id": t["connection_profile"]["id"],
            "config": t["config"],
            "schema": t["schema"],
            "virtual_columns": t["virtual_columns"],
            "watermark": t["watermark"],
        });
        let posted = a.post("/api/v1/connection_tables", body.clone()).await;
        if posted.status != 200 {
            failures.push(format!(
                "{name}: POST of {body} answered {}: {}",
                posted.status,
                posted.text()
            ));
            continue;
        }
        let again = a
            .get(&format!("/api/v1/connection_tables/{copy}"))
            .await
            .json();
        if essence(&again) != essence(&t) {
            failures.push(format!(
                "{name}: read back differently:\n{}\n---\n{}",
                essence(&t),
                essence(&again)
            ));
        }
        // Its statement, run again, makes the same table once more.
        let statement = again["create_sql"].as_str().unwrap().replacen(
            &format!("TABLE {copy} "),
            &format!("TABLE {name}_again "),
            1,
        );
        a.sql(&statement).await;
        let third = a
            .get(&format!("/api/v1/connection_tables/{name}_again"))
            .await
            .json();
        if essence(&third) != essence(&t) {
            failures.push(format!(
                "{name}: its CREATE statement makes another table:\n{}\n---\n{}",
                essence(&t),
                essence(&third)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
