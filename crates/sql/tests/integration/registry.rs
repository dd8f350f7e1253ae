//! CREATE TABLE reading its schema from a Confluent Schema Registry, against the fake
//! registry on 127.0.0.1: Avro, Protobuf (with an import reference) and JSON subjects,
//! pinned versions and ids, what DESCRIBE and SHOW CREATE TABLE record, and every failure
//! as a diagnostic that names the URL and the subject and stores nothing.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use datafusion::arrow::array::AsArray;
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_registry::testing::FakeRegistry;
use tributary_registry::{Reference, SchemaType};
use tributary_sql::{Output, Session, StatementResult};
use tributary_types::{Format, Severity};

const V1: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}}]}"#;
const V2: &str = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},{"name":"note","type":["null","string"],"default":null}]}"#;

async fn session_with(registry: &FakeRegistry, extra: &str) -> Session {
    let session = Session::new(Arc::new(OverlayStore::in_memory()));
    session
        .execute(&format!(
            "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false, 'schema_registry.endpoint' = '{}'{extra})",
            registry.endpoint()
        ))
        .await
        .unwrap();
    session
}

/// The columns DESCRIBE lists, as `name TYPE`, without the hidden event time every
/// source has (the schema's columns are what these tests are about).
fn describe_rows(r: &StatementResult) -> Vec<String> {
    let Output::Rows { batches, .. } = &r.output else {
        panic!("no rows")
    };
    let b = &batches[0];
    let origin = b.column(5).as_string::<i32>();
    (0..b.num_rows())
        .filter(|i| origin.value(*i) != "event time")
        .map(|i| {
            format!(
                "{} {}",
                b.column(0).as_string::<i32>().value(i),
                b.column(1).as_string::<i32>().value(i)
            )
        })
        .collect()
}

fn text(r: &StatementResult) -> String {
    let Output::Rows { batches, .. } = &r.output else {
        panic!("no rows")
    };
    batches[0].column(0).as_string::<i32>().value(0).to_string()
}

#[tokio::test]
async fn avro_subjects_give_the_columns_and_the_table_records_where_from() {
    let registry = FakeRegistry::start().await.unwrap();
    registry.add("orders-value", SchemaType::Avro, V1, vec![]);
    let (id2, _) = registry.add("orders-value", SchemaType::Avro, V2, vec![]);
    let session = session_with(&registry, "").await;
    session
        .execute("CREATE TABLE orders WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE orders").await.unwrap();
    assert_eq!(
        describe_rows(&r[0]),
        ["id BIGINT", "amount DECIMAL(10, 2)", "note TEXT"]
    );
    let note = &r[0].warnings[0];
    assert_eq!(note.severity, Severity::Note);
    assert_eq!(
        note.message,
        format!(
            "the columns come from the schema registry: subject 'orders-value', version 2, schema id {id2}"
        )
    );
    let show = session.execute("SHOW CREATE TABLE orders").await.unwrap();
    assert!(
        text(&show[0]).contains(&format!("'schema_registry.id' = '{id2}'")),
        "{}",
        text(&show[0])
    );
    let t = session.store().table_by_name("orders").unwrap().unwrap();
    let Some(Format::Avro(a)) = &t.schema.format else {
        panic!("not avro")
    };
    assert_eq!(a.schema_id, Some(id2));
    assert_eq!(a.reader_schema.as_deref(), Some(V2));
    // The SHOW CREATE output recreates the same table, pinned to that schema id, even
    // after the subject moves on.
    registry.add(
        "orders-value",
        SchemaType::Avro,
        r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}"#,
        vec![],
    );
    let again = text(&show[0]).replace("TABLE orders", "TABLE orders_again");
    session.execute(&again).await.unwrap();
    let r = session.execute("DESCRIBE orders_again").await.unwrap();
    assert_eq!(describe_rows(&r[0]).len(), 3);
}

#[tokio::test]
async fn pinned_versions_ids_and_subjects() {
    let registry = FakeRegistry::start().await.unwrap();
    let (id1, _) = registry.add("custom", SchemaType::Avro, V1, vec![]);
    registry.add("custom", SchemaType::Avro, V2, vec![]);
    let session = session_with(&registry, "").await;
    session
        .execute("CREATE TABLE a WITH (connector = 'kafka', connection_profile = 'k', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true, 'value.subject' = 'custom', 'schema_registry.version' = 1)")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE a").await.unwrap();
    assert_eq!(describe_rows(&r[0]).len(), 2);
    session
        .execute(&format!("CREATE TABLE b WITH (connector = 'kafka', connection_profile = 'k', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true, 'schema_registry.id' = {id1})"))
        .await
        .unwrap();
    let r = session.execute("DESCRIBE b").await.unwrap();
    assert_eq!(
        r[0].warnings[0].message,
        format!("the columns come from the schema registry: schema id {id1}")
    );
}

#[tokio::test]
async fn protobuf_subjects_compile_with_their_references() {
    let registry = FakeRegistry::start().await.unwrap();
    registry.add(
        "money",
        SchemaType::Protobuf,
        "syntax = \"proto3\"; package m; message Money { int64 cents = 1; string currency = 2; }",
        vec![],
    );
    registry.add(
        "payments-value",
        SchemaType::Protobuf,
        "syntax = \"proto3\"; package p; import \"money.proto\"; import \"google/protobuf/timestamp.proto\"; message Payment { string id = 1; m.Money total = 2; google.protobuf.Timestamp at = 3; } message Other { int32 x = 1; }",
        vec![Reference {
            name: "money.proto".into(),
            subject: "money".into(),
            version: 1,
        }],
    );
    let session = session_with(&registry, "").await;
    session
        .execute("CREATE TABLE payments WITH (connector = 'kafka', connection_profile = 'k', topic = 'payments', type = 'source', format = 'protobuf', 'protobuf.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE payments").await.unwrap();
    assert_eq!(
        describe_rows(&r[0]),
        [
            "id TEXT",
            "total STRUCT<cents BIGINT NOT NULL, currency TEXT NOT NULL>",
            "at TIMESTAMP(9)"
        ]
    );
    // A named message other than the first.
    session
        .execute("CREATE TABLE other WITH (connector = 'kafka', connection_profile = 'k', topic = 'payments', type = 'source', format = 'protobuf', 'protobuf.confluent_schema_registry' = true, 'protobuf.message' = 'p.Other')")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE other").await.unwrap();
    assert_eq!(describe_rows(&r[0]), ["x INT"]);
}

#[tokio::test]
async fn json_subjects_give_columns_when_none_are_declared() {
    let registry = FakeRegistry::start().await.unwrap();
    registry.add(
        "events-value",
        SchemaType::Json,
        r#"{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}}}"#,
        vec![],
    );
    let session = session_with(&registry, "").await;
    session
        .execute("CREATE TABLE events WITH (connector = 'kafka', connection_profile = 'k', topic = 'events', type = 'source', format = 'json', 'json.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE events").await.unwrap();
    assert_eq!(describe_rows(&r[0]), ["id BIGINT", "tags TEXT[]"]);
    // A schema referring to another subject's document.
    registry.add(
        "geo",
        SchemaType::Json,
        r##"{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}}}"##,
        vec![],
    );
    registry.add(
        "visits-value",
        SchemaType::Json,
        r##"{"type":"object","properties":{"at":{"$ref":"geo.json"}}}"##,
        vec![Reference {
            name: "geo.json".into(),
            subject: "geo".into(),
            version: 1,
        }],
    );
    session
        .execute("CREATE TABLE visits WITH (connector = 'kafka', connection_profile = 'k', topic = 'visits', type = 'source', format = 'json', 'json.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let r = session.execute("DESCRIBE visits").await.unwrap();
    assert_eq!(describe_rows(&r[0]), ["at STRUCT<lat DOUBLE, lon DOUBLE>"]);
}

async fn error_of(session: &Session, sql: &str) -> String {
    let e = session.execute(sql).await.unwrap_err();
    e.diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}{}",
                d.message,
                d.help
                    .as_ref()
                    .map(|h| format!(" | {h}"))
                    .unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn failures_name_the_url_and_subject_and_store_nothing() {
    let registry = FakeRegistry::start().await.unwrap();
    registry.add(
        "proto-value",
        SchemaType::Protobuf,
        "syntax = \"proto3\"; message P { int32 x = 1; }",
        vec![],
    );
    let session = session_with(&registry, "").await;
    let create = |topic: &str, format: &str, extra: &str| {
        format!(
            "CREATE TABLE t WITH (connector = 'kafka', connection_profile = 'k', topic = '{topic}', type = 'source', format = '{format}', '{format}.confluent_schema_registry' = true{extra})"
        )
    };
    assert_eq!(
        error_of(&session, &create("missing", "avro", "")).await,
        format!(
            "subject 'missing-value' was not found in the schema registry ({}/subjects/missing-value/versions/latest answered 404: Subject 'missing-value' not found. (error code 40401)) | Check that subject 'missing-value' exists (the default is '<topic>-value'; set 'value.subject' otherwise), or give the schema in the statement.",
            registry.endpoint()
        )
    );
    assert_eq!(
        error_of(&session, &create("proto", "avro", "")).await,
        "format 'avro' reads AVRO schemas, but the registry holds a PROTOBUF schema for subject 'proto-value' | Use the format that matches the registered schema, or point 'value.subject' at a AVRO subject."
    );
    assert!(
        error_of(
            &session,
            &create(
                "proto",
                "avro",
                ", 'schema_registry.version' = 1, 'schema_registry.id' = 1"
            )
        )
        .await
        .starts_with(
            "at most one of 'schema_registry.version' and 'schema_registry.id' may be set"
        )
    );
    assert!(
        error_of(&session, &create("proto", "avro", ", 'schema_registry.version' = 'first'"))
            .await
            .starts_with("invalid value 'first' for option 'schema_registry.version': expected a positive version")
    );
    assert_eq!(
        error_of(&session, "CREATE TABLE t (id INT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'x', type = 'source', format = 'json', 'schema_registry.version' = 2)").await,
        "option 'schema_registry.version' needs a registry-framed format | Set '<format>.confluent_schema_registry' = true (avro, json or protobuf), or remove the option."
    );
    // A profile without a registry.
    session
        .execute("CREATE CONNECTION PROFILE plain WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false)")
        .await
        .unwrap();
    assert_eq!(
        error_of(&session, "CREATE TABLE t WITH (connector = 'kafka', connection_profile = 'plain', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)").await,
        "option 'avro.confluent_schema_registry' needs a schema registry, but connection profile 'plain' configures none | Set 'schema_registry.endpoint' on the connection profile, or give the schema in the statement."
    );
    // Nothing answers.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    session
        .execute(&format!("CREATE CONNECTION PROFILE dead WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false, 'schema_registry.endpoint' = 'http://127.0.0.1:{port}')"))
        .await
        .unwrap();
    let e = error_of(&session, "CREATE TABLE t WITH (connector = 'kafka', connection_profile = 'dead', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)").await;
    assert!(
        e.starts_with(&format!("could not connect to the schema registry at http://127.0.0.1:{port}/subjects/x-value/versions/latest: ")),
        "{e}"
    );
    assert!(session.store().table_by_name("t").unwrap().is_none());
}

#[tokio::test]
async fn credentials_come_from_the_environment_and_are_never_printed() {
    // The secret is an environment variable every process has (setting one would need
    // unsafe code); the registry expects its value.
    let secret = std::env::var("PATH").unwrap();
    let registry = FakeRegistry::start().await.unwrap();
    registry.require_credentials("svc", &secret);
    registry.add("x-value", SchemaType::Avro, V1, vec![]);
    let session = session_with(
        &registry,
        ", 'schema_registry.api_key' = 'svc', 'schema_registry.api_secret' = '{{ PATH }}'",
    )
    .await;
    session
        .execute("CREATE TABLE ok WITH (connector = 'kafka', connection_profile = 'k', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)")
        .await
        .unwrap();
    session
        .execute(&format!(
            "CREATE CONNECTION PROFILE wrong WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false, 'schema_registry.endpoint' = '{}', 'schema_registry.api_key' = 'svc', 'schema_registry.api_secret' = 'not-the-pa55')",
            registry.endpoint()
        ))
        .await
        .unwrap();
    let e = error_of(&session, "CREATE TABLE t WITH (connector = 'kafka', connection_profile = 'wrong', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)").await;
    assert!(
        e.contains("refused the credentials (401: Unauthorized"),
        "{e}"
    );
    assert!(!e.contains("not-the-pa55") && !e.contains(&secret), "{e}");
    session
        .execute(&format!(
            "CREATE CONNECTION PROFILE unset WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false, 'schema_registry.endpoint' = '{}', 'schema_registry.api_key' = 'svc', 'schema_registry.api_secret' = '{{{{ TRIBUTARY_TEST_SR_UNSET }}}}')",
            registry.endpoint()
        ))
        .await
        .unwrap();
    let e = error_of(&session, "CREATE TABLE t WITH (connector = 'kafka', connection_profile = 'unset', topic = 'x', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true)").await;
    assert!(e.contains("TRIBUTARY_TEST_SR_UNSET"), "{e}");
}

#[tokio::test]
async fn avro_sinks_register_their_schema_and_check_mode_does_not() {
    let registry = FakeRegistry::start().await.unwrap();
    let session = session_with(&registry, "").await;
    // `check` validates without registering.
    let outcomes = session
        .run_script(
            "CREATE TABLE out_checked (id BIGINT NOT NULL, name TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'out', type = 'sink', format = 'avro', 'avro.confluent_schema_registry' = true)",
            tributary_sql::Mode::Check,
        )
        .await;
    let result = outcomes[0].as_ref().unwrap();
    assert_eq!(result.warnings[0].severity, Severity::Note);
    assert_eq!(registry.requests(), 0);
    session
        .execute("CREATE TABLE out (id BIGINT NOT NULL, name TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'out', type = 'sink', format = 'avro', 'avro.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let t = session.store().table_by_name("out").unwrap().unwrap();
    let Some(Format::Avro(a)) = &t.schema.format else {
        panic!("not avro")
    };
    let id = a.schema_id.unwrap();
    let client = tributary_registry::RegistryClient::new(
        &registry.endpoint(),
        None,
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let registered = client
        .subject_version("out-value", tributary_registry::Version::Latest)
        .await
        .unwrap();
    assert_eq!(registered.id, id);
    assert_eq!(Some(registered.schema.as_str()), a.reader_schema.as_deref());
    // Its messages carry that id.
    let encoder =
        tributary_formats::RowEncoder::new(t.schema.format.as_ref().unwrap(), None).unwrap();
    use datafusion::arrow::array::{Int64Array, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let batch = datafusion::arrow::record_batch::RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ])),
        vec![
            Arc::new(Int64Array::from(vec![7])),
            Arc::new(StringArray::from(vec![Some("x")])),
        ],
    )
    .unwrap();
    let messages = encoder.encode(&batch).unwrap();
    assert_eq!(
        &messages[0][..5],
        &[&[0u8][..], &id.to_be_bytes()[..]].concat()[..]
    );
}

#[tokio::test]
async fn json_sinks_register_a_json_schema_and_pinned_ids_need_no_registry() {
    let registry = FakeRegistry::start().await.unwrap();
    let session = session_with(&registry, "").await;
    session
        .execute("CREATE TABLE jout (id BIGINT NOT NULL, tags TEXT[]) WITH (connector = 'kafka', connection_profile = 'k', topic = 'jout', type = 'sink', format = 'json', 'json.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let client = tributary_registry::RegistryClient::new(
        &registry.endpoint(),
        None,
        std::time::Duration::from_secs(5),
    )
    .unwrap();
    let got = client
        .subject_version("jout-value", tributary_registry::Version::Latest)
        .await
        .unwrap();
    assert_eq!(got.schema_type, SchemaType::Json);
    // The registered JSON Schema describes the sink's columns.
    let columns = tributary_formats::fields_from_json_schema(&got.schema)
        .unwrap()
        .fields;
    assert_eq!(columns.len(), 2);
    let t = session.store().table_by_name("jout").unwrap().unwrap();
    assert!(matches!(&t.schema.format, Some(Format::Json(j)) if j.schema_id == Some(got.id)));
    // A pinned id is used as given, without asking the registry.
    let before = registry.requests();
    session
        .execute("CREATE CONNECTION PROFILE offline WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false)")
        .await
        .unwrap();
    session
        .execute("CREATE TABLE pinned (id BIGINT NOT NULL) WITH (connector = 'kafka', connection_profile = 'offline', topic = 'p', type = 'sink', format = 'protobuf', 'protobuf.confluent_schema_registry' = true, 'protobuf.schema_file' = '../../fixtures/protobuf/orders.proto', 'protobuf.message' = 'shop.v1.Order', 'schema_registry.id' = 41)")
        .await
        .unwrap();
    assert_eq!(registry.requests(), before);
    let t = session.store().table_by_name("pinned").unwrap().unwrap();
    assert!(matches!(&t.schema.format, Some(Format::Protobuf(p)) if p.schema_id == Some(41)));
    // Without a pin, a protobuf sink cannot register a descriptor set.
    assert_eq!(
        error_of(&session, "CREATE TABLE np (id BIGINT NOT NULL) WITH (connector = 'kafka', connection_profile = 'k', topic = 'p', type = 'sink', format = 'protobuf', 'protobuf.confluent_schema_registry' = true, 'protobuf.schema_file' = '../../fixtures/protobuf/orders.proto', 'protobuf.message' = 'shop.v1.Order')").await,
        "a protobuf sink writing registry-framed messages needs the id of its registered schema | Register the .proto with the schema registry and give its id with 'schema_registry.id'."
    );
}
