//! No output surface prints a secret: every connector's secret options, credentials inside
//! values (URL userinfo, `client_configs` entries, tokens in query strings), through SHOW,
//! DESCRIBE, EXPLAIN, connection tests, and every diagnostic and note, rendered with the
//! source lines they quote.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::sync::Arc;
use tributary_catalog::{CatalogStore, OverlayStore};
use tributary_sql::render::SourceText;
use tributary_sql::{Mode, Output, Session};

/// The secret every statement below sets.
const S: &str = "Sup3r-S3cret-Value";

/// Statements setting secrets, by connector: (connector, PROFILE or TABLE, body).
const COVERED: &[(&str, &str, &str)] = &[
    (
        "kafka",
        "PROFILE",
        "p_kafka WITH (connector = 'kafka', bootstrap_servers = 'b:1', 'auth.type' = 'sasl', 'auth.mechanism' = 'PLAIN', 'auth.protocol' = 'SASL_SSL', 'auth.username' = 'u', 'auth.password' = '{S}', 'schema_registry.endpoint' = 'http://u:{S}@r:8081', 'schema_registry.api_key' = 'k', 'schema_registry.api_secret' = '{S}')",
    ),
    (
        "kafka",
        "TABLE",
        "t_kafka (a TEXT) WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 't', type = 'source', format = 'json', client_configs = 'sasl.password={S},ssl.key.password={S},acks=all')",
    ),
    (
        "confluent",
        "PROFILE",
        "p_confluent WITH (connector = 'confluent', bootstrap_servers = 'b:1', key = 'k', secret = '{S}', 'schema_registry.endpoint' = 'https://r', 'schema_registry.api_key' = 'k', 'schema_registry.api_secret' = '{S}')",
    ),
    (
        "mqtt",
        "PROFILE",
        "p_mqtt WITH (connector = 'mqtt', url = 'mqtts://h:8883', username = 'u', password = '{S}', 'tls.cert' = '/c.pem', 'tls.key' = '{S}')",
    ),
    (
        "mqtt",
        "PROFILE",
        "p_mqtt_url WITH (connector = 'mqtt', url = 'mqtt://u:{S}@127.0.0.1:1')",
    ),
    (
        "nats",
        "PROFILE",
        "p_nats WITH (connector = 'nats', servers = 'nats://h:4222', 'auth.type' = 'credentials', 'auth.username' = 'u', 'auth.password' = '{S}')",
    ),
    (
        "nats",
        "PROFILE",
        "p_nats_jwt WITH (connector = 'nats', servers = 'nats://h:4222', 'auth.type' = 'jwt', 'auth.jwt' = '{S}', 'auth.nkey_seed' = '{S}')",
    ),
    (
        "rabbitmq",
        "PROFILE",
        "p_rabbitmq WITH (connector = 'rabbitmq', password = '{S}')",
    ),
    (
        "redis",
        "PROFILE",
        "p_redis WITH (connector = 'redis', address = 'redis://h:6379', password = '{S}')",
    ),
    (
        "redis",
        "PROFILE",
        "p_redis_url WITH (connector = 'redis', address = 'redis://u:{S}@127.0.0.1:1')",
    ),
    (
        "iceberg",
        "PROFILE",
        "p_iceberg WITH (connector = 'iceberg', 'catalog.rest.url' = 'http://h:8181', 'catalog.rest.token' = '{S}')",
    ),
    (
        "polling_http",
        "TABLE",
        "t_polling (a TEXT) WITH (connector = 'polling_http', endpoint = 'http://u:{S}@h/x?token={S}', headers = 'Authorization: Bearer {S}', format = 'json')",
    ),
    (
        "sse",
        "TABLE",
        "t_sse (a TEXT) WITH (connector = 'sse', endpoint = 'http://h/x', headers = 'Authorization: Bearer {S}', format = 'json')",
    ),
    (
        "webhook",
        "TABLE",
        "t_webhook (a TEXT) WITH (connector = 'webhook', endpoint = 'http://h/x', headers = 'Authorization: Bearer {S}', format = 'json')",
    ),
    (
        "websocket",
        "TABLE",
        "t_websocket (a TEXT) WITH (connector = 'websocket', endpoint = 'ws://h/x', headers = 'Authorization: Bearer {S}', subscription_messages.0 = '{\"token\": \"{S}\"}', format = 'json')",
    ),
    (
        "filesystem",
        "TABLE",
        "t_filesystem (a TEXT) WITH (connector = 'filesystem', type = 'sink', path = 's3://b/p', 'storage.aws_secret_access_key' = '{S}', 'storage.aws_endpoint' = 'http://u:{S}@minio:9000', format = 'json')",
    ),
    (
        "delta",
        "TABLE",
        "t_delta (a TEXT) WITH (connector = 'delta', path = 's3://b/p', 'storage.aws_secret_access_key' = '{S}', format = 'parquet')",
    ),
];

/// Every row a statement prints, as a table.
async fn printed(session: &Session, sql: &str) -> String {
    let mut out = String::new();
    for r in session.execute(sql).await.unwrap() {
        if let Output::Rows { batches, .. } = r.output {
            out.push_str(
                &datafusion::arrow::util::pretty::pretty_format_batches(&batches)
                    .unwrap()
                    .to_string(),
            );
        }
    }
    out
}

/// Every diagnostic a script produced, rendered as the CLI shows it (with the quoted
/// source lines) and as the structs a library caller gets.
async fn diagnostics(session: &Session, sql: &str, mode: Mode) -> String {
    let source = SourceText::new("script.sql", sql);
    let mut out = String::new();
    for outcome in session.run_script(sql, mode).await {
        let diags = match &outcome {
            Ok(r) => &r.warnings,
            Err(e) => &e.diagnostics,
        };
        for d in diags {
            out.push_str(&source.render(d));
            out.push_str(&format!("\n{d:?}\n"));
        }
    }
    out
}

/// The CREATE statement of a case, profiles stored untested (their hosts do not exist).
fn create(kind: &str, body: &str) -> String {
    let body = body.replace("{S}", S);
    if kind == "PROFILE" {
        let i = body.rfind(')').unwrap();
        format!(
            "CREATE CONNECTION PROFILE {}, validate = false{}",
            &body[..i],
            &body[i..]
        )
    } else {
        format!("CREATE TABLE {body}")
    }
}

#[tokio::test]
async fn no_connector_prints_a_secret() {
    // A connector that gains a secret must be added above.
    for entry in tributary_connectors::registry().iter() {
        let id = entry.connector.id();
        let has_secret = tributary_connectors::describe::option_docs(entry)
            .iter()
            .any(|d| d.sensitive);
        assert!(
            !has_secret || COVERED.iter().any(|(c, _, _)| *c == id),
            "connector '{id}' has secret options but no statement in this test"
        );
    }
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let session = Session::new(store.clone()).offline();
    let mut out = String::new();
    for (_, kind, body) in COVERED {
        let create = create(kind, body);
        // Created (with the notes it prints, such as "not tested"), then shown.
        out.push_str(&diagnostics(&session, &create, Mode::Run).await);
        let name = body.split_whitespace().next().unwrap();
        let shows = if *kind == "PROFILE" {
            vec![
                format!("SHOW CREATE CONNECTION PROFILE {name}"),
                format!("DESCRIBE CONNECTION PROFILE {name}"),
            ]
        } else {
            let is_sink = store
                .table_by_name(name)
                .unwrap()
                .is_some_and(|t| t.connection_type == tributary_types::ConnectionType::Sink);
            vec![
                format!("SHOW CREATE TABLE {name}"),
                format!("DESCRIBE {name}"),
                if is_sink {
                    format!("EXPLAIN INSERT INTO {name} SELECT 'x' AS a")
                } else {
                    format!("EXPLAIN SELECT * FROM {name}")
                },
            ]
        };
        for sql in shows {
            out.push_str(&printed(&session, &sql).await);
        }
        // The same statement again (already exists), with a misspelled option, with a
        // syntax error after the secrets, and checked: every diagnostic, rendered.
        out.push_str(&diagnostics(&session, &create, Mode::Run).await);
        let misspelled = create.replacen("WITH (", "WITH (formt = 'json', ", 1);
        out.push_str(&diagnostics(&session, &misspelled, Mode::Run).await);
        let broken = format!("{}, ,)", &create[..create.len() - 1]);
        out.push_str(&diagnostics(&session, &broken, Mode::Run).await);
        out.push_str(&diagnostics(&session, &create, Mode::Check).await);
    }
    out.push_str(&printed(&session, "SHOW CONNECTION PROFILES").await);
    out.push_str(&printed(&session, "SHOW TABLES").await);
    assert!(out.contains("********"), "{out}");
    assert!(!out.contains(S), "a secret was printed:\n{out}");
    // Every quoted source line is a window of at most 120 characters (plus the gutter).
    let quoted = |l: &&str| {
        l.trim_start()
            .split_once(" | ")
            .is_some_and(|(n, _)| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
    };
    for line in out.lines().filter(quoted) {
        assert!(line.chars().count() <= 130, "{line}");
    }

    // Connection tests report URLs without their credentials, in rows and in errors.
    let online = Session::new(store);
    let mut tested = String::new();
    for profile in ["p_redis_url", "p_mqtt_url"] {
        let sql = format!("TEST CONNECTION PROFILE {profile} TIMEOUT '3 seconds'");
        tested.push_str(&diagnostics(&online, &sql, Mode::Run).await);
    }
    assert!(tested.contains("CONNECT_REFUSED"), "{tested}");
    assert!(!tested.contains(S), "a secret was printed:\n{tested}");

    // Queries that read and write through those profiles fail at the stage a test would
    // name, and say so without the credentials.
    let moved = format!(
        "{}; {}; {}; {}",
        "CREATE TABLE q_rabbit (v TEXT) WITH (connector = 'rabbitmq', connection_profile = 'p_rabbitmq', stream = 's', type = 'sink', format = 'json')",
        "CREATE TABLE q_mqtt (v TEXT) WITH (connector = 'mqtt', connection_profile = 'p_mqtt_url', type = 'source', topic = 't', format = 'json')",
        "CREATE TABLE q_redis (v TEXT) WITH (connector = 'redis', connection_profile = 'p_redis_url', type = 'sink', target = 'string', 'target.key_prefix' = 'k:', format = 'json')",
        "CREATE TEMPORARY TABLE q_lookup (k TEXT METADATA FROM 'key' PRIMARY KEY, v TEXT) WITH (connector = 'redis', connection_profile = 'p_redis_url', format = 'json')"
    );
    online.execute(&moved).await.unwrap();
    let mut queried = String::new();
    for sql in [
        "SELECT v FROM q_mqtt LIMIT 1",
        "INSERT INTO q_redis VALUES ('x')",
        // The machine's RabbitMQ refuses the profile's password.
        "INSERT INTO q_rabbit VALUES ('x')",
        "SELECT l.v FROM (VALUES ('a')) AS o(k) JOIN q_lookup l ON o.k = l.k",
    ] {
        queried.push_str(&diagnostics(&online, sql, Mode::Run).await);
    }
    assert!(
        queried.contains("cannot read table 'q_mqtt'")
            && queried.contains("cannot write table 'q_redis'")
            && queried.contains("cannot look up rows in table 'q_lookup'")
            && queried.contains("cannot write table 'q_rabbit'")
            && queried.contains("AUTH_FAILED")
            && queried.contains("CONNECT_REFUSED"),
        "{queried}"
    );
    assert!(!queried.contains(S), "a secret was printed:\n{queried}");
}

#[tokio::test]
async fn show_create_output_given_back_is_refused_not_stored_as_the_password() {
    let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
    session
        .execute(&format!("CREATE CONNECTION PROFILE p WITH (connector = 'redis', address = 'redis://u:{S}@h:6379', password = '{S}')"))
        .await
        .unwrap();
    let shown = printed(&session, "SHOW CREATE CONNECTION PROFILE p").await;
    let statement: String = shown
        .lines()
        .filter(|l| l.starts_with("| "))
        .skip(1)
        .map(|l| l.trim_matches(|c| c == '|' || c == ' ').to_string())
        .collect::<Vec<_>>()
        .join("\n")
        .replace("PROFILE p", "PROFILE p2");
    assert!(statement.contains("'********'"), "{statement}");
    let err = session.execute(&statement).await.unwrap_err();
    let messages: Vec<&str> = err.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.contains(&"option 'password' holds '********', the placeholder Tributary prints in place of a secret"),
        "{messages:?}"
    );
    assert!(
        messages.contains(&"option 'address' holds '********', the placeholder Tributary prints in place of a secret"),
        "{messages:?}"
    );
    assert!(err.diagnostics[0].help.as_deref().unwrap().contains("{{"));
    assert!(session.store().profile_by_name("p2").unwrap().is_none());
}
