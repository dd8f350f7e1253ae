//! Arroyo's clients, call by call: the bodies its web console and OpenAPI client send,
//! and every response field they read, as Arroyo's public sources define them
//! (<https://github.com/ArroyoSystems/arroyo>: the console's calls in
//! `webui/src/lib/data_fetching.ts` and its connection wizard under
//! `webui/src/routes/connections/`; the API's types in `crates/arroyo-rpc/src/api_types/`).

use crate::common::app;
use serde_json::{Value, json};

/// librdkafka's mock cluster with one message in `console_events`.
async fn mock_kafka()
-> rdkafka::mocking::MockCluster<'static, rdkafka::producer::DefaultProducerContext> {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    let mock = rdkafka::mocking::MockCluster::new(1).unwrap();
    mock.create_topic("console_events", 1, 1).unwrap();
    let producer: FutureProducer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", mock.bootstrap_servers())
        .create()
        .unwrap();
    producer
        .send(
            FutureRecord::to("console_events")
                .payload(r#"{"id": 1, "kind": "signup", "at": "2026-11-30T12:00:00Z"}"#)
                .key("1"),
            std::time::Duration::from_secs(5),
        )
        .await
        .map_err(|(e, _)| e)
        .unwrap();
    mock
}

const EVENTS_SCHEMA: &str = r#"{"type": "object", "properties": {"id": {"type": "integer"}, "kind": {"type": "string"}, "at": {"type": "string", "format": "date-time"}}, "required": ["id"]}"#;

#[tokio::test]
async fn the_pages_every_console_page_polls() {
    let app = app();
    let ping = app.get("/api/v1/ping").await;
    assert_eq!((ping.status.as_u16(), ping.json()), (200, json!("Pong")));
    for path in ["/api/v1/udfs", "/api/v1/jobs"] {
        assert_eq!(app.get(path).await.json(), json!({"data": []}), "{path}");
    }
    assert_eq!(
        app.get("/api/v1/pipelines?limit=100").await.json(),
        json!({"data": [], "hasMore": false})
    );
    // The seed's prefix serves the same.
    assert_eq!(app.get("/v1/ping").await.json(), json!("Pong"));
}

#[tokio::test]
async fn declared_functions_are_listed_as_arroyos_global_udfs() {
    let app = app();
    let made = app
        .post(
            "/api/v1/sql",
            json!({"sql": "CREATE FUNCTION double_it(x BIGINT) RETURNS BIGINT"}),
        )
        .await;
    assert_eq!(made.status, 200, "{}", made.json());
    let udfs = app.get("/api/v1/udfs").await.json();
    let data = udfs["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{udfs}");
    let f = &data[0];
    assert_eq!(f["name"], "double_it", "{udfs}");
    assert_eq!(f["id"], "double_it", "{udfs}");
    assert_eq!(f["prefix"], "", "{udfs}");
    assert!(
        f["definition"].as_str().is_some_and(
            |d| d.starts_with("CREATE FUNCTION \"double_it\"(") && d.contains("RETURNS")
        ),
        "{udfs}"
    );
    assert!(f["created_at"].as_i64().is_some_and(|t| t > 0), "{udfs}");
    // Dropped, it is gone.
    app.post("/api/v1/sql", json!({"sql": "DROP FUNCTION double_it"}))
        .await;
    assert_eq!(app.get("/api/v1/udfs").await.json(), json!({"data": []}));
}

#[tokio::test]
async fn connectors_carry_what_the_wizard_reads() {
    let app = app();
    let r = app.get("/api/v1/connectors").await;
    assert_eq!(r.status, 200);
    let data = r.json()["data"].as_array().unwrap().clone();
    assert_eq!(data.len(), 20);
    for c in &data {
        for key in ["id", "name", "description", "icon", "table_config"] {
            assert!(c[key].is_string(), "{key} of {c}");
        }
        for key in [
            "source",
            "sink",
            "hidden",
            "custom_schemas",
            "testing",
            "enabled",
        ] {
            assert!(c[key].is_boolean(), "{key} of {}", c["id"]);
        }
        // Schemas travel as JSON text, which the console parses.
        let table: Value = serde_json::from_str(c["table_config"].as_str().unwrap()).unwrap();
        assert!(table.is_object());
        match &c["connection_config"] {
            Value::Null => {}
            Value::String(s) => assert!(serde_json::from_str::<Value>(s).unwrap().is_object()),
            other => panic!("connection_config {other}"),
        }
        assert!(c["icon"].as_str().unwrap().starts_with("<svg"));
    }
    let kafka = data.iter().find(|c| c["id"] == "kafka").unwrap();
    assert!(kafka["connection_config"].is_string() && kafka["custom_schemas"] == true);
    let impulse = data.iter().find(|c| c["id"] == "impulse").unwrap();
    assert!(impulse["connection_config"].is_null() && impulse["custom_schemas"] == false);
}

#[tokio::test]
async fn the_console_creates_a_kafka_profile_and_table() {
    let app = app();
    let mock = mock_kafka().await;
    // The form's name and `__meta` ride inside config, as the console sends them.
    let profile = json!({"name": "p", "connector": "kafka", "config": {
        "__meta": {"authentication": {"type": "None"}, "schemaRegistryEnum": {"type": "None"}},
        "authentication": {}, "schemaRegistryEnum": {}, "name": "p",
        "bootstrapServers": mock.bootstrap_servers()}});
    let tested = app
        .post("/api/v1/connection_profiles/test", profile.clone())
        .await;
    assert_eq!(tested.status, 200, "{}", tested.text());
    let t = tested.json();
    assert_eq!(
        (t["error"].clone(), t["done"].clone()),
        (json!(false), json!(true)),
        "{t}"
    );
    assert!(t["message"].is_string());
    let created = app.post("/api/v1/connection_profiles", profile).await;
    assert_eq!(created.status, 200, "{}", created.text());
    let p = created.json();
    let id = p["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("cp_"), "{p}");
    assert_eq!(
        (p["name"].as_str(), p["connector"].as_str()),
        (Some("p"), Some("kafka"))
    );
    assert!(p["description"].is_string() && p["config"].is_object());
    let ignored: Vec<&str> = p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["path"].as_str())
        .collect();
    assert!(
        ignored.contains(&"/config/__meta") && ignored.contains(&"/config/name"),
        "{p}"
    );
    // The wizard lists profiles by connector.
    let listed = app.get("/api/v1/connection_profiles").await.json();
    let first = &listed["data"][0];
    for key in ["id", "name", "connector", "description", "config"] {
        assert!(!first[key].is_null(), "{key}");
    }
    // Autocomplete fills the topic field.
    let values = app
        .get(&format!("/api/v1/connection_profiles/{id}/autocomplete"))
        .await
        .json();
    assert!(
        values["values"]["topic"]
            .as_array()
            .unwrap()
            .contains(&json!("console_events")),
        "{values}"
    );
    // The schema step: fields empty, the server derives them from the definition.
    let schema = json!({"format": {"type": "json"}, "fields": [],
        "definition": {"schema": EVENTS_SCHEMA, "type": "json_schema"}});
    let checked = app
        .post("/api/v1/connection_tables/schemas/test", schema.clone())
        .await;
    assert_eq!(checked.status, 200, "{}", checked.text());
    let expanded = checked.json();
    let names: Vec<&str> = expanded["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["id", "kind", "at"]);
    // Test and create the table with the console's body.
    let table = json!({"name": "console_events", "connector": "kafka", "connection_profile_id": id,
        "config": {"type": {"offset": "earliest", "read_mode": "read_uncommitted"}, "topic": "console_events"},
        "schema": schema});
    let test = app
        .post("/api/v1/connection_tables/test", table.clone())
        .await;
    assert_eq!(test.status, 200, "{}", test.text());
    assert_eq!(
        test.headers["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    // Only `data:` lines (and `:` comments), one-line JSON each; the last is done.
    for line in test.text().lines().filter(|l| !l.is_empty()) {
        assert!(
            line.starts_with("data: ") || line.starts_with(':'),
            "{line}"
        );
    }
    let events = test.events();
    let last = events.last().unwrap();
    assert_eq!(last["done"], true, "{events:?}");
    assert_eq!(last["error"], false, "{events:?}");
    // The sampled message, decoded with the table's schema.
    assert_eq!(last["rows"][0]["kind"], "signup", "{last}");
    for e in &events {
        assert!(e["error"].is_boolean() && e["done"].is_boolean() && e["message"].is_string());
    }
    let created = app.post("/api/v1/connection_tables", table).await;
    assert_eq!(created.status, 200, "{}", created.text());
    let t = created.json();
    assert!(t["id"].as_str().unwrap().starts_with("ct_"));
    assert!(
        t["created_at"].is_i64(),
        "created_at must be an integer: {t}"
    );
    assert_eq!(t["table_type"], "source");
    assert_eq!(t["schema"]["format"]["type"], "json");
    assert_eq!(t["consumers"], 0);
    assert_eq!(t["connection_profile"]["id"], json!(id));
    assert_eq!(t["config"]["topic"], "console_events");
    // The pipeline editor reads names, types and sql_names of the fields.
    let listed = app.get("/api/v1/connection_tables?limit=200").await.json();
    assert_eq!(listed["hasMore"], false);
    let fields = listed["data"][0]["schema"]["fields"]
        .as_array()
        .unwrap()
        .clone();
    let at = fields.iter().find(|f| f["name"] == "at").unwrap();
    assert_eq!(
        (at["type"].as_str(), at["sql_name"].as_str()),
        (Some("timestamp"), Some("TIMESTAMP(9)"))
    );
    // Deleting answers 200 with an empty body.
    let tid = t["id"].as_str().unwrap();
    let deleted = app
        .call("DELETE", &format!("/api/v1/connection_tables/{tid}"), None)
        .await;
    assert_eq!(deleted.status, 200);
    assert!(deleted.bytes.is_empty());
    assert_eq!(deleted.headers["content-length"], "0");
}

#[tokio::test]
async fn the_seed_request_works_as_written() {
    let app = app();
    app.sql("CREATE CONNECTION PROFILE prod WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', validate = false)").await;
    let id = app.get("/v1/connection_profiles/prod").await.json()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let seed = json!({
        "name": "orders",
        "connector": "kafka",
        "connection_profile_id": id,
        "config": {"topic": "orders", "type": "source", "source.offset": "latest"},
        "schema": {
            "format": {"json": {}},
            "definition": {"jsonSchema": {"schema": "{\"type\": \"object\", \"properties\": {\"order_id\": {\"type\": \"integer\"}, \"amount\": {\"type\": \"number\"}}, \"required\": [\"order_id\"]}"}},
            "fields": []
        }
    });
    let r = app.post("/v1/connection_tables", seed).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.json();
    assert_eq!(t["schema"]["fields"][0]["name"], "order_id");
    assert_eq!(t["schema"]["fields"][0]["required"], true);
    assert_eq!(t["config"]["type"]["offset"], "latest");
    assert!(t.get("warnings").is_none(), "{t}");
}

#[tokio::test]
async fn the_console_creates_an_impulse_table_without_a_schema_key() {
    let app = app();
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "console_impulse_1", "connector": "impulse", "connection_profile_id": null,
                   "config": {"event_rate": 10, "message_count": 1000}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.json();
    assert!(t["connection_profile"].is_null());
    // A built-in schema: no format.
    assert!(t["schema"]["format"].is_null(), "{t}");
    assert_eq!(t["schema"]["fields"][0]["name"], "counter");
}

#[tokio::test]
async fn errors_keep_arroyos_error_field_and_add_where() {
    let app = app();
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "t", "connector": "impulse", "config": {"event_rate": "fast"}}),
        )
        .await;
    assert_eq!(r.status, 400);
    let e = r.json();
    assert!(e["error"].as_str().unwrap().contains("event_rate"), "{e}");
    assert_eq!(e["code"], "invalid_definition");
    assert_eq!(e["path"], "/config/event_rate");
    assert!(e["hint"].is_string(), "{e}");
    // A nested field is named by its own path.
    app.sql("CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', validate = false)").await;
    let table = |config: Value| {
        json!({"name": "t", "connector": "kafka", "connection_profile_id": "k", "config": config,
               "schema": {"format": {"type": "json"}, "fields": [{"name": "id", "type": "string", "required": true}]}})
    };
    let r = app
        .post(
            "/api/v1/connection_tables",
            table(json!({"topic": "x", "type": {"offset": "sometimes"}})),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["path"], "/config/type/offset", "{}", r.text());
    // A key no option has is ignored with a warning, and a near miss says what was meant.
    let r = app
        .post(
            "/api/v1/connection_tables",
            table(json!({"topic": "x", "type": "source", "topik": "y", "__meta": {"step": 2}})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let w = r.json()["warnings"].clone();
    let topik = w
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["path"] == "/config/topik")
        .unwrap();
    assert_eq!(topik["hint"], "Did you mean 'topic'?", "{w}");
    let meta = w
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["path"] == "/config/__meta")
        .unwrap();
    assert!(meta.get("hint").is_none(), "{w}");
    app.call("DELETE", "/api/v1/connection_tables/t", None)
        .await;
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "t", "connector": "kafkaa", "config": {}}),
        )
        .await;
    let e = r.json();
    assert!(e["error"].as_str().unwrap().contains("kafkaa"), "{e}");
    assert_eq!(e["path"], "/connector");
    let r = app
        .post("/api/v1/connection_tables", json!({"name": "t", "connector": "kafka", "connection_profile_id": "cp_nope12345", "config": {}}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"],
        "No connection profile with id 'cp_nope12345'"
    );
    let r = app.get("/api/v1/connection_tables/ct_missing").await;
    assert_eq!(
        (r.status.as_u16(), r.json()["error"].clone()),
        (404, json!("Connection table not found"))
    );
    let r = app
        .call("DELETE", "/api/v1/connection_profiles/cp_missing", None)
        .await;
    assert_eq!(
        (r.status.as_u16(), r.json()["error"].clone()),
        (404, json!("Connection profile not found"))
    );
}

#[tokio::test]
async fn validate_query_answers_in_arroyos_shape() {
    let app = app();
    app.sql("CREATE TABLE ticks WITH (connector = 'impulse', event_rate = 10)")
        .await;
    let ok = app
        .post(
            "/api/v1/pipelines/validate_query",
            json!({"query": "SELECT counter FROM ticks WHERE counter > 5", "udfs": []}),
        )
        .await
        .json();
    assert_eq!(ok["errors"], json!([]));
    let nodes = ok["graph"]["nodes"].as_array().unwrap();
    assert!(
        nodes
            .iter()
            .any(|n| n["description"].as_str().unwrap().contains("ticks")),
        "{ok}"
    );
    assert!(!ok["graph"]["edges"].as_array().unwrap().is_empty());
    let bad = app
        .post(
            "/api/v1/pipelines/validate_query",
            json!({"query": "SELECT countr FROM ticks"}),
        )
        .await
        .json();
    assert!(bad["graph"].is_null());
    let e = &bad["errors"][0];
    assert!(e["message"].as_str().unwrap().contains("countr"), "{bad}");
    assert_eq!(e["span"]["start"]["line"], 1, "{bad}");
    // DDL in the query is checked, not stored.
    let ddl = app
        .post("/api/v1/pipelines/validate_query", json!({"query": "CREATE TABLE t2 WITH (connector = 'impulse', event_rate = 1);\nSELECT * FROM t2"}))
        .await
        .json();
    assert_eq!(ddl["errors"], json!([]), "{ddl}");
    assert_eq!(app.get("/api/v1/connection_tables/t2").await.status, 404);
    // An Arroyo pipeline script: a memory table written once, then read; its graph is
    // the last query's.
    let script = "CREATE TABLE m (c BIGINT);\nINSERT INTO m SELECT counter FROM ticks;\nSELECT c FROM m WHERE c > 1";
    let piped = app
        .post("/api/v1/pipelines/validate_query", json!({"query": script}))
        .await
        .json();
    assert_eq!(piped["errors"], json!([]), "{piped}");
    assert!(
        piped["graph"]["nodes"]
            .as_array()
            .is_some_and(|n| !n.is_empty()),
        "{piped}"
    );
    // Arroyo's streaming rules: an updating aggregate cannot feed a window function.
    let refused = app
        .post("/api/v1/pipelines/validate_query", json!({"query": "SELECT rank() OVER (ORDER BY n) FROM (SELECT counter % 2 AS k, count(*) AS n FROM ticks GROUP BY k)"}))
        .await
        .json();
    let message = refused["errors"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("updating input"), "{refused}");
    // Arroyo's first tutorial, as its console sends it: windows over Nexmark's own event
    // time, without a WATERMARK.
    let tutorial = "CREATE TABLE nexmark WITH (connector = 'nexmark', event_rate = '10');
        SELECT count(*) AS count, bid.auction AS auction,
               hop(interval '2 seconds', interval '60 seconds') AS window
        FROM nexmark WHERE bid IS NOT NULL GROUP BY 2, window;";
    let planned = app
        .post(
            "/api/v1/pipelines/validate_query",
            json!({"query": tutorial}),
        )
        .await
        .json();
    assert_eq!(planned["errors"], json!([]), "{planned}");
    assert!(
        planned["graph"]["nodes"]
            .as_array()
            .is_some_and(|n| !n.is_empty()),
        "{planned}"
    );
}
