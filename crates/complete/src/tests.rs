//! Completion at many cursor positions over a real catalog.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use tributary_catalog::OverlayStore;
use tributary_sql::Session;

/// A catalog with two Kafka profiles, one Redis profile, and tables.
async fn completer() -> (Completer, Session) {
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let session = Session::new(store.clone()).offline();
    session
        .execute(
            "CREATE CONNECTION PROFILE prod WITH (connector = 'kafka', bootstrap_servers = 'k:9092', validate = false);
             CREATE CONNECTION PROFILE staging WITH (connector = 'kafka', bootstrap_servers = 'k:9092', validate = false);
             CREATE CONNECTION PROFILE cache WITH (connector = 'redis', address = 'redis://r:6379', validate = false);
             CREATE TABLE orders (id BIGINT, amount DOUBLE, \"Customer\" TEXT) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'orders', type = 'source', format = 'json');
             CREATE TABLE order_lines (line_id BIGINT, qty INT) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'lines', type = 'source', format = 'json');
             CREATE TABLE \"Audit\" (at TIMESTAMP) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'audit', type = 'source', format = 'json');",
        )
        .await
        .unwrap();
    let live: LiveNames = Arc::new(|profile: &str| {
        (profile == "prod").then(|| vec!["orders".to_string(), "order-lines".to_string()])
    });
    (Completer::new(store).with_live_names(live), session)
}

/// The candidate texts at the end of `text` (or at `|`, which is removed).
fn texts(c: &Completer, text: &str) -> Vec<String> {
    let (text, cursor) = match text.find('|') {
        Some(i) => (text.replacen('|', "", 1), i),
        None => (text.to_string(), text.len()),
    };
    c.complete(&text, cursor)
        .candidates
        .into_iter()
        .map(|c| c.text)
        .collect()
}

fn has(all: &[String], wanted: &[&str]) -> bool {
    wanted.iter().all(|w| all.iter().any(|a| a == w))
}

#[tokio::test]
async fn statement_starts_and_keyword_continuations() {
    let (c, _s) = completer().await;
    let starts = texts(&c, "");
    assert!(
        has(&starts, &["CREATE", "SELECT", "SHOW", "TEST"]),
        "{starts:?}"
    );
    assert_eq!(
        texts(&c, "cr"),
        vec!["create"],
        "typed lower case, offered lower case"
    );
    assert_eq!(
        texts(&c, "SELECT 1; DR"),
        vec!["DROP"],
        "after another statement"
    );
    assert!(has(&texts(&c, "CREATE "), &["TABLE", "CONNECTION PROFILE"]));
    assert_eq!(texts(&c, "SHOW CONNECTION "), vec!["PROFILES"]);
    assert_eq!(texts(&c, "DROP CONNECTION "), vec!["PROFILE"]);
    assert_eq!(texts(&c, "ALTER CONNECTION PROFILE prod "), vec!["SET"]);
    assert!(texts(&c, "CREATE TABLE ").is_empty(), "a new name");
}

#[tokio::test]
async fn names_where_a_name_fits() {
    let (c, s) = completer().await;
    assert_eq!(
        texts(&c, "SELECT * FROM ord"),
        vec!["order_lines", "orders"]
    );
    assert_eq!(texts(&c, "SELECT * FROM \"Au"), vec!["\"Audit\""]);
    assert_eq!(texts(&c, "DROP TABLE orders, order_"), vec!["order_lines"]);
    assert_eq!(texts(&c, "TEST TABLE or"), vec!["order_lines", "orders"]);
    assert_eq!(texts(&c, "INSERT INTO ord"), vec!["order_lines", "orders"]);
    assert_eq!(
        texts(&c, "DROP CONNECTION PROFILE "),
        vec!["cache", "prod", "staging"]
    );
    assert_eq!(texts(&c, "TEST CONNECTION PROFILE st"), vec!["staging"]);
    assert_eq!(texts(&c, "DESCRIBE CONNECTOR ka"), vec!["kafka"]);
    let describe = texts(&c, "DESCRIBE ");
    assert!(
        has(&describe, &["orders", "CONNECTOR", "CONNECTION PROFILE"]),
        "{describe:?}"
    );
    // A table created since is offered: the cache follows the catalog.
    s.execute("CREATE TABLE order_archive (id BIGINT) WITH (connector = 'kafka', connection_profile = 'prod', topic = 'a', type = 'source', format = 'json')")
        .await
        .unwrap();
    assert_eq!(
        texts(&c, "SELECT * FROM order_"),
        vec!["order_archive", "order_lines"]
    );
}

#[tokio::test]
async fn option_keys_of_the_connector_named_so_far() {
    let (c, _s) = completer().await;
    let start = "CREATE TABLE t (id INT) WITH (";
    let any = texts(&c, start);
    assert!(
        has(&any, &["connector", "connection_profile", "format"]),
        "{any:?}"
    );
    let kafka = texts(&c, &format!("{start}connector = 'kafka', "));
    assert!(
        has(
            &kafka,
            &[
                "topic",
                "type",
                "source.offset",
                "bootstrap_servers",
                "format"
            ]
        ),
        "{kafka:?}"
    );
    assert!(!kafka.contains(&"connector".to_string()), "given already");
    // With a profile, the connection settings are the profile's, and its connector
    // counts as named.
    let profiled = texts(&c, &format!("{start}connection_profile = 'prod', "));
    assert!(has(&profiled, &["topic", "source.offset"]), "{profiled:?}");
    assert!(!profiled.contains(&"bootstrap_servers".to_string()));
    // Keys given after the cursor are left out too.
    let between = texts(&c, &format!("{start}connector = 'kafka', |, topic = 'x')"));
    assert!(!between.contains(&"topic".to_string()), "{between:?}");
    // A dotted key being typed completes whole, from its start.
    let text = format!("{start}connector = 'kafka', source.off");
    let done = c.complete(&text, text.len());
    assert_eq!(done.start, text.len() - "source.off".len());
    assert_eq!(done.candidates[0].text, "source.offset");
    assert!(
        done.candidates[0].detail.contains("default"),
        "{:?}",
        done.candidates[0]
    );
    // A format's own options once it is chosen.
    let json = texts(
        &c,
        &format!("{start}connector = 'kafka', format = 'json', json."),
    );
    assert!(
        has(&json, &["json.timestamp_format", "json.unstructured"]),
        "{json:?}"
    );
    // Profiles take the connector's profile options only.
    let profile = texts(
        &c,
        "CREATE CONNECTION PROFILE p WITH (connector = 'kafka', ",
    );
    assert!(
        has(&profile, &["bootstrap_servers", "validate"]),
        "{profile:?}"
    );
    assert!(!profile.contains(&"topic".to_string()));
    let altered = texts(&c, "ALTER CONNECTION PROFILE prod SET (boot");
    assert_eq!(altered, vec!["bootstrap_servers"]);
}

#[tokio::test]
async fn option_values_enums_booleans_profiles_formats_and_live_names() {
    let (c, _s) = completer().await;
    let start = "CREATE TABLE t (id INT) WITH (";
    assert_eq!(
        texts(&c, &format!("{start}connector = 'kaf")),
        vec!["'kafka'"]
    );
    assert_eq!(
        texts(&c, &format!("{start}connector = 'kafka', source.offset = ")),
        vec!["'latest'", "'earliest'", "'group'"]
    );
    assert_eq!(
        texts(&c, &format!("{start}connector = 'kafka', format = 'js")),
        vec!["'json'"]
    );
    assert_eq!(
        texts(
            &c,
            &format!("{start}connector = 'kafka', connection_profile = ")
        ),
        vec!["'prod'", "'staging'"],
        "only the connector's profiles"
    );
    assert_eq!(
        texts(&c, &format!("{start}format = 'json', json.unstructured = ")),
        vec!["true", "false"]
    );
    // The profile's live names after the topic, from what the lookup has.
    assert_eq!(
        texts(&c, &format!("{start}connection_profile = 'prod', topic = ")),
        vec!["'orders'", "'order-lines'"]
    );
    assert!(
        texts(
            &c,
            &format!("{start}connection_profile = 'staging', topic = ")
        )
        .is_empty(),
        "nothing known yet offers nothing"
    );
}

#[tokio::test]
async fn columns_in_queries_watermarks_and_metadata_keys() {
    let (c, _s) = completer().await;
    assert_eq!(
        texts(&c, "SELECT | FROM orders"),
        vec!["id", "amount", "\"Customer\""]
    );
    assert_eq!(
        texts(
            &c,
            "SELECT o.| FROM orders o JOIN order_lines l ON o.id = l.line_id"
        ),
        vec!["id", "amount", "\"Customer\""]
    );
    assert_eq!(
        texts(&c, "SELECT id FROM orders AS o, order_lines l WHERE l.q"),
        vec!["qty"]
    );
    assert_eq!(texts(&c, "SELECT id FROM orders WHERE am"), vec!["amount"]);
    let create =
        "CREATE TABLE t (id BIGINT, at TIMESTAMP, WATERMARK FOR |) WITH (connector = 'kafka')";
    assert_eq!(texts(&c, create), vec!["id", "at"]);
    let metadata = "CREATE TABLE t (id BIGINT, p INT METADATA FROM |) WITH (connector = 'kafka')";
    let keys = texts(&c, metadata);
    assert!(
        has(&keys, &["'partition'", "'offset_id'", "'topic'"]),
        "{keys:?}"
    );
    let mqtt = "CREATE TABLE t (id BIGINT, p TEXT METADATA FROM |) WITH (connector = 'mqtt')";
    assert!(!texts(&c, mqtt).contains(&"'offset_id'".to_string()));
    assert!(has(&texts(&c, "CREATE TABLE t (id BIG"), &["BIGINT"]));
}

#[tokio::test]
async fn hints_give_the_rest_of_the_only_candidate_or_the_option_type() {
    let (c, _s) = completer().await;
    let h = c.hint("SELECT * FROM order_l", 21).unwrap();
    assert_eq!((h.text.as_str(), h.completes), ("ines", true));
    let text = "CREATE TABLE t (id INT) WITH (connector = 'kafka', source.offset = ";
    let h = c.hint(text, text.len()).unwrap();
    assert!(!h.completes);
    assert!(h.text.contains("default latest"), "{}", h.text);
    assert!(h.text.contains("earliest"), "{}", h.text);
    assert_eq!(c.hint("SELECT * FROM ord", 17), None, "two candidates");
    assert_eq!(c.hint("SELECT * FROM ord", 3), None, "not at the end");
}

#[tokio::test]
async fn hostile_text_is_completed_without_panics() {
    let (c, _s) = completer().await;
    let deep = "(".repeat(100_000);
    for text in [
        "'unterminated",
        "\"",
        "/* never closed",
        "WITH (((((",
        ")))) SELECT",
        "CREATE TABLE t (a INT) WITH (connector = 'kafka', = = , , 'x' =",
        "é",
        "SELECT é",
        deep.as_str(),
    ] {
        for cursor in 0..=text.len().min(64) {
            let _ = c.complete(text, cursor);
            let _ = c.hint(text, cursor);
        }
        let _ = c.complete(text, text.len());
    }
}

#[tokio::test]
async fn nothing_is_offered_after_a_value_already_written() {
    let (c, _s) = completer().await;
    for text in [
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', connection_profile = 'prod'",
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', source.offset = 'earliest'",
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', format = json",
        "ALTER CONNECTION PROFILE prod SET (bootstrap_servers = 'k:1'",
    ] {
        assert_eq!(texts(&c, text), Vec::<String>::new(), "{text}");
        assert_eq!(c.hint(text, text.len()), None, "{text}");
    }
    // Before the value is written, it is offered.
    let values = texts(
        &c,
        "CREATE TABLE t (id INT) WITH (connector = 'kafka', source.offset = ",
    );
    assert!(has(&values, &["'earliest'"]), "{values:?}");
}
