//! Session behaviour that a single `.slt` file cannot show: persistence across reopen,
//! atomicity of failed statements, check mode, lookup rules and secret redaction.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::sync::Arc;
use tributary_catalog::{CatalogStore, Change, OverlayStore, SledStore};
use tributary_sql::{Mode, Output, Session};
use tributary_types::ConnectionType;

const SETUP: &str = "
CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092');
CREATE TABLE orders (id BIGINT, key TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'o', type = 'source', format = 'json');
";

fn names(store: &dyn CatalogStore) -> Vec<String> {
    store.table_names().unwrap()
}

#[tokio::test]
async fn ddl_persists_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let session = Session::new(Arc::new(SledStore::open(dir.path()).unwrap())).offline();
        session.execute(SETUP).await.unwrap();
    }
    let session = Session::new(Arc::new(SledStore::open(dir.path()).unwrap())).offline();
    assert_eq!(names(session.store().as_ref()), vec!["orders"]);
    let results = session
        .execute("EXPLAIN SELECT id FROM orders")
        .await
        .unwrap();
    assert!(matches!(&results[0].output, Output::Rows { .. }));
}

#[tokio::test]
async fn a_failed_statement_changes_nothing_and_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    let session = Session::new(store.clone()).offline();
    session.execute(SETUP).await.unwrap();
    let before_tables = store.tables().unwrap();
    let before_profiles = store.profiles().unwrap();
    let script = "
        ALTER CONNECTION PROFILE k SET (bootstrap_servers = 'not a server list');
        CREATE TABLE after (id BIGINT) WITH (connector = 'stdout', format = 'json');
    ";
    let outcomes = session.run_script(script, Mode::Run).await;
    assert_eq!(outcomes.len(), 1, "the run stops at the failure");
    let err = outcomes[0].as_ref().unwrap_err();
    assert!(
        err.diagnostics[0].message.contains("bootstrap_servers"),
        "{err}"
    );
    assert_eq!(store.tables().unwrap(), before_tables);
    assert_eq!(store.profiles().unwrap(), before_profiles);
    // DROP ... CASCADE of a missing profile and a partly-missing DROP TABLE change nothing.
    assert!(session.execute("DROP TABLE orders, missing").await.is_err());
    assert_eq!(names(store.as_ref()), vec!["orders"]);
}

#[tokio::test]
async fn check_mode_reports_every_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
    Session::new(base.clone())
        .offline()
        .execute(SETUP)
        .await
        .unwrap();
    let overlay: Arc<dyn CatalogStore> = Arc::new(OverlayStore::over(base.clone()));
    let session = Session::new(overlay.clone()).offline();
    let script = "
        CREATE TABLE a (id BIGINT) WITH (connector = 'stdout', format = 'json');
        CREATE TABLE b (id BIGINT) WITH (connector = 'stdout', format = 'jsno');
        INSERT INTO a SELECT id FROM orders;
        SELECT * FROM a;
        DROP TABLE orders;
        DROP CONNECTION PROFILE k;
    ";
    let outcomes = session.run_script(script, Mode::Check).await;
    let failed: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_err())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(failed, vec![1, 3], "{outcomes:#?}");
    // Later statements saw earlier ones (the INSERT planned against 'a'; the profile could be
    // dropped once 'orders' was), yet the base catalog is untouched.
    assert_eq!(names(base.as_ref()), vec!["orders"]);
    assert_eq!(base.profiles().unwrap().len(), 1);
    assert!(names(overlay.as_ref()).contains(&"a".to_string()));
}

#[tokio::test]
async fn lookup_tables_only_on_the_right_of_a_join() {
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let session = Session::new(store.clone()).offline();
    session.execute(SETUP).await.unwrap();
    // A lookup record stored directly, whatever its connector: the plan rules read the
    // record's type, not the connector (the SQL path is covered by connectors/redis.slt).
    let mut lookup = store.table_by_name("orders").unwrap().unwrap();
    lookup.id = tributary_catalog::new_table_id();
    lookup.name = "customers".into();
    lookup.connection_type = ConnectionType::Lookup;
    lookup.temporary = true;
    lookup.schema.primary_keys.insert("key".into());
    store.apply(vec![Change::PutTable(lookup)]).unwrap();

    let err = session
        .execute("SELECT * FROM customers")
        .await
        .unwrap_err();
    assert_eq!(
        err.diagnostics[0].message,
        "lookup table 'customers' can only be used as the right side of an inner or left join"
    );
    session
        .execute("EXPLAIN SELECT o.id, c.key FROM orders o LEFT JOIN customers c ON o.key = c.key")
        .await
        .unwrap();
    let err = session
        .execute("EXPLAIN SELECT o.id FROM customers c JOIN orders o ON o.key = c.key")
        .await
        .unwrap_err();
    assert!(
        err.diagnostics[0]
            .message
            .starts_with("lookup table 'customers'"),
        "{err}"
    );
    let err = session
        .execute("INSERT INTO customers SELECT * FROM orders")
        .await
        .unwrap_err();
    assert_eq!(
        err.diagnostics[0].message,
        "cannot insert into table 'customers' because it is a lookup table"
    );
}

#[tokio::test]
async fn secrets_never_appear_in_output_or_errors() {
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let session = Session::new(store).offline();
    let secret = "hunter2-SECRET";
    session
        .execute(&format!(
            "CREATE CONNECTION PROFILE p WITH (connector = 'kafka', bootstrap_servers = 'b:1', 'auth.type' = 'sasl', 'auth.mechanism' = 'PLAIN', 'auth.protocol' = 'SASL_SSL', 'auth.username' = 'u', 'auth.password' = '{secret}')"
        ))
        .await
        .unwrap();
    let mut printed = String::new();
    for sql in [
        "SHOW CREATE CONNECTION PROFILE p",
        "DESCRIBE CONNECTION PROFILE p",
        "SHOW CONNECTION PROFILES",
    ] {
        for r in session.execute(sql).await.unwrap() {
            if let Output::Rows { batches, .. } = r.output {
                printed.push_str(
                    &datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                        .unwrap()
                        .to_string(),
                );
            }
        }
    }
    assert!(printed.contains("********"), "{printed}");
    assert!(!printed.contains(secret), "{printed}");
    // A failing statement that carries the secret does not echo it.
    let failing = [
        format!(
            "CREATE CONNECTION PROFILE q WITH (connector = 'kafka', bootstrap_servers = 'b:1', 'auth.type' = 'sasl', 'auth.password' = '{secret}')"
        ),
        format!(
            "CREATE CONNECTION PROFILE q WITH (connector = 'kafka', bootstrap_servers = 'b:1', 'auth.password' = '{secret}')"
        ),
        format!(
            "CREATE TABLE t (a TEXT) WITH (connector = 'kafka', connection_profile = 'p', 'auth.password' = '{secret}', topic = 't', type = 'source', format = 'json')"
        ),
        format!(
            "CREATE TABLE t (a TEXT) WITH (connector = 'confluent', bootstrap_servers = 'b:1', key = 'k', secret = '{secret}', secret = '{secret}', topic = 't', type = 'source', format = 'json')"
        ),
    ];
    for sql in failing {
        let err = session.execute(&sql).await.unwrap_err();
        let text = format!("{err} {:?}", err.diagnostics);
        assert!(!text.contains(secret), "{text}");
    }
}

#[tokio::test]
async fn window_functions_plan_in_both_forms() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    session
        .execute("CREATE TABLE o (customer_id BIGINT NOT NULL, amount DOUBLE, event_time TIMESTAMP NOT NULL, WATERMARK FOR event_time) WITH (connector = 'single_file', path = '/tmp/o.json', type = 'source', format = 'json')")
        .await
        .unwrap();
    // Each form keeps the window, over o.event_time, as a grouping key beside customer_id,
    // in the optimised logical plan and in the physical plan. A tumble is a value of each
    // row; an overlapping hop and a session are computed below the aggregate (`expand`),
    // which groups by their column.
    let tumble = ("tumble(o.event_time, ", "tumble(event_time@");
    let hop = ("hop_windows(o.event_time, ", "__tributary_window@");
    let session_window = (
        "session_window(o.event_time, IntervalMonthDayNano(\"IntervalMonthDayNano { months: 0, days: 0, nanoseconds: 300000000000 }\")) PARTITION BY [o.customer_id] ORDER BY [o.event_time ASC NULLS LAST]",
        "__tributary_window@",
    );
    for (sql, (logical_window, physical_window)) in [
        (
            "SELECT customer_id, SUM(amount) FROM o GROUP BY customer_id, TUMBLE(event_time, INTERVAL '1' HOUR)",
            tumble,
        ),
        (
            "SELECT customer_id, SUM(amount) FROM o GROUP BY customer_id, tumble(INTERVAL '1' HOUR)",
            tumble,
        ),
        (
            "SELECT customer_id, COUNT(*) FROM o GROUP BY customer_id, HOP(event_time, INTERVAL '1' MINUTE, INTERVAL '10' MINUTE)",
            hop,
        ),
        (
            "SELECT customer_id, COUNT(*) FROM o GROUP BY customer_id, hop(INTERVAL '1' MINUTE, INTERVAL '10' MINUTE)",
            hop,
        ),
        (
            "SELECT customer_id, COUNT(*) FROM o GROUP BY customer_id, SESSION(event_time, INTERVAL '5' MINUTE)",
            session_window,
        ),
        (
            "SELECT customer_id, COUNT(*) FROM o GROUP BY customer_id, session(INTERVAL '5' MINUTE)",
            session_window,
        ),
    ] {
        let df = session.sql(sql).await.unwrap();
        let plan = df.clone().into_optimized_plan().unwrap();
        let logical = plan.display_indent().to_string();
        let aggregate = logical
            .lines()
            .find(|l| l.trim_start().starts_with("Aggregate:"))
            .unwrap_or_else(|| panic!("{sql}: no aggregate in\n{logical}"));
        assert!(
            aggregate.contains("groupBy=[[o.customer_id, ") && logical.contains(logical_window),
            "{sql}:\n{logical}"
        );
        let physical = df.create_physical_plan().await.unwrap();
        let shown = datafusion::physical_plan::displayable(physical.as_ref())
            .indent(false)
            .to_string();
        let partial = shown
            .lines()
            .find(|l| l.contains("AggregateExec: mode=Partial") || l.contains("mode=Single"))
            .unwrap_or_else(|| panic!("{sql}:\n{shown}"));
        assert!(
            partial.contains("customer_id@0 as customer_id, ") && partial.contains(physical_window),
            "{sql}:\n{shown}"
        );
    }
}

#[tokio::test]
async fn sql_returns_dataframes_with_the_same_checks() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    session
        .sql("CREATE TABLE bh (id BIGINT, v TEXT) WITH (connector = 'blackhole')")
        .await
        .unwrap();
    let rows = session
        .sql("SHOW TABLES")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(rows[0].num_rows(), 1);
    let count = session
        .sql("INSERT INTO bh VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        datafusion::arrow::util::pretty::pretty_format_batches(&count)
            .unwrap()
            .to_string()
            .lines()
            .nth(3)
            .unwrap(),
        "| 2     |"
    );
    let err = session.sql("SELECT * FROM bh").await.unwrap_err();
    assert_eq!(
        err.diagnostics[0].message,
        "cannot read from table 'bh' because it is a sink"
    );
    let err = session.sql("SELECT 1; SELECT 2").await.unwrap_err();
    assert_eq!(
        err.diagnostics[0].message,
        "expected exactly one statement, but found 2"
    );
}

/// Deprecated spellings are accepted with a warning that says what to write instead.
#[tokio::test]
async fn deprecated_spellings_warn() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    let cases = [
        (
            "CREATE TABLE a (id TEXT NOT NULL) WITH (connector = 'filesystem', type = 'sink', path = '/tmp/a', 'rolling_policy.interval' = '5 minutes', format = 'json')",
            "option 'rolling_policy.interval' is an interval written as a string",
        ),
        (
            "CREATE TABLE b (key TEXT NOT NULL) WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 'o', type = 'sink', 'sink.key_field' = 'key', format = 'json')",
            "option 'sink.key_field' is a column name written as a string",
        ),
        (
            "CREATE TABLE c (id TEXT) WITH (connector = 'websocket', endpoint = 'ws://h/x', subscription_message = 'hi', format = 'json')",
            "option 'subscription_message' is deprecated",
        ),
    ];
    for (sql, warning) in cases {
        let results = session
            .execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let warnings: Vec<&str> = results[0]
            .warnings
            .iter()
            .map(|w| w.message.as_str())
            .collect();
        assert!(
            warnings.iter().any(|w| w.starts_with(warning)),
            "{sql}: {warnings:?}"
        );
    }
    // The current spellings do not warn.
    let results = session
        .execute("CREATE TABLE d (id TEXT NOT NULL) WITH (connector = 'filesystem', type = 'sink', path = '/tmp/a', 'rolling_policy.interval' = INTERVAL '5' MINUTE, format = 'json')")
        .await
        .unwrap();
    assert!(results[0].warnings.is_empty(), "{:?}", results[0].warnings);
}

/// A JSON Schema property without a single Arrow type becomes a JSON column, and the
/// statement says why.
#[tokio::test]
async fn json_schema_unions_become_json_columns_with_a_warning() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    let results = session
        .execute(r#"CREATE TABLE t WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 't', type = 'source', format = 'json', 'json.schema' = '{"type": "object", "properties": {"v": {"anyOf": [{"type": "number"}, {"type": "string"}]}}}')"#)
        .await
        .unwrap();
    let warnings: Vec<&str> = results[0]
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        warnings,
        vec!["column 'v' is a union (anyOf of 2 alternatives), stored as JSON"]
    );
    let table = session.store().table_by_name("t").unwrap().unwrap();
    assert_eq!(
        table.schema.fields[0].field_type,
        tributary_types::FieldType::Json
    );
    assert!(matches!(
        table.schema.definition,
        Some(tributary_types::SchemaDefinition::JsonSchema { .. })
    ));
}

/// `SHOW CREATE TABLE` prints a statement that creates the same table again, whatever
/// its column names: reserved words, Tributary's own `WATERMARK`, mixed case, quotes.
#[tokio::test]
async fn show_create_table_recreates_tables_with_reserved_column_names() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    session
        .execute(
            r#"CREATE TABLE t ("watermark" BIGINT, "not" BIGINT, "select" BIGINT,
                "from" STRUCT<"order" BIGINT, "Big" TEXT, "null" BOOLEAN>, "a""b" TEXT,
                ts TIMESTAMP NOT NULL,
                v BIGINT GENERATED ALWAYS AS ("not" + "watermark"),
                WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
               WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 't',
                type = 'source', format = 'json')"#,
        )
        .await
        .unwrap();
    let first = show_create(&session, "t").await;
    assert!(first.contains("\"watermark\" BIGINT"), "{first}");
    assert!(first.contains("\"not\" BIGINT"), "{first}");
    assert!(
        first.contains("STRUCT<\"order\" BIGINT, \"Big\" TEXT, \"null\" BOOLEAN>"),
        "{first}"
    );
    session.execute("DROP TABLE t").await.unwrap();
    session.execute(&first).await.unwrap();
    assert_eq!(show_create(&session, "t").await, first);
}

async fn show_create(session: &Session, table: &str) -> String {
    use datafusion::arrow::array::AsArray;
    let r = session
        .execute(&format!("SHOW CREATE TABLE {table}"))
        .await
        .unwrap();
    let Output::Rows { batches, .. } = &r[0].output else {
        panic!("no rows")
    };
    batches[0].column(0).as_string::<i32>().value(0).to_string()
}
