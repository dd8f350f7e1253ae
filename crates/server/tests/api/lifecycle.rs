//! Profiles and tables through their lives: created over REST or SQL alike, paged,
//! patched (validated whole), deleted in order; secrets never in an answer.

use crate::common::app;
use serde_json::{Value, json};

#[tokio::test]
async fn rest_and_sql_make_the_same_records() {
    let app = app();
    app.sql("CREATE TABLE from_sql WITH (connector = 'impulse', event_rate = 5)")
        .await;
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "from_rest", "connector": "impulse", "config": {"event_rate": 5}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let a = app.get("/api/v1/connection_tables/from_sql").await.json();
    let b = app.get("/api/v1/connection_tables/from_rest").await.json();
    for key in ["connector", "table_type", "config", "schema", "description"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    let shown = app
        .post("/api/v1/sql", json!({"sql": "SHOW TABLES"}))
        .await
        .json();
    let names: Vec<&str> = shown["results"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert_eq!(names, ["from_rest", "from_sql"]);
}

#[tokio::test]
async fn tables_page_newest_first_with_has_more() {
    let app = app();
    for i in 0..25 {
        let r = app
            .post("/api/v1/connection_tables", json!({"name": format!("t{i:02}"), "connector": "impulse", "config": {"event_rate": 1}}))
            .await;
        assert_eq!(r.status, 200);
    }
    let mut names = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &after {
            Some(id) => format!("/api/v1/connection_tables?limit=10&starting_after={id}"),
            None => "/api/v1/connection_tables?limit=10".into(),
        };
        let page = app.get(&path).await.json();
        pages += 1;
        let data = page["data"].as_array().unwrap();
        names.extend(data.iter().map(|t| t["name"].as_str().unwrap().to_string()));
        after = data.last().map(|t| t["id"].as_str().unwrap().to_string());
        if page["hasMore"] == false {
            break;
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).rev().map(|i| format!("t{i:02}")).collect();
    assert_eq!(names, expected);
    // The default page is Arroyo's 10.
    assert_eq!(
        app.get("/api/v1/connection_tables").await.json()["data"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    for bad in [
        "limit=0",
        "limit=-1",
        "limit=1001",
        "starting_after=ct_gone123456",
        "starting_after=orders",
    ] {
        let r = app.get(&format!("/api/v1/connection_tables?{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
    }
    // A cached page follows changes.
    let before = app.get("/api/v1/connection_tables?limit=1").await.json();
    app.sql("CREATE TABLE newest WITH (connector = 'impulse', event_rate = 1)")
        .await;
    let after = app.get("/api/v1/connection_tables?limit=1").await.json();
    assert_ne!(before["data"][0]["name"], after["data"][0]["name"]);
    assert_eq!(after["data"][0]["name"], "newest");
}

#[tokio::test]
async fn patching_a_table_validates_it_whole_and_keeps_its_id() {
    let app = app();
    app.sql("CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', validate = false)").await;
    app.sql("CREATE TABLE orders (id BIGINT NOT NULL, ts TIMESTAMP(3) NOT NULL, doubled BIGINT GENERATED ALWAYS AS (id * 2), WATERMARK FOR ts) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json')").await;
    let before = app.get("/api/v1/connection_tables/orders").await.json();
    let id = before["id"].as_str().unwrap().to_string();
    let r = app
        .call("PATCH", &format!("/api/v1/connection_tables/{id}"), Some(json!({"name": "orders_v2", "config": {"source.offset": "earliest", "topic": "orders2"}})))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let after = r.json();
    assert_eq!(after["id"], json!(id));
    assert_eq!(after["created_at"], before["created_at"]);
    assert_eq!(after["name"], "orders_v2");
    assert_eq!(after["config"]["topic"], "orders2");
    assert_eq!(after["config"]["type"]["offset"], "earliest");
    let sql = after["create_sql"].as_str().unwrap();
    assert!(
        sql.contains("\"doubled\" BIGINT GENERATED ALWAYS AS (id * 2)")
            || sql.contains("doubled BIGINT GENERATED ALWAYS AS (id * 2)"),
        "{sql}"
    );
    assert!(sql.contains("WATERMARK FOR ts"), "{sql}");
    assert_eq!(
        app.get("/api/v1/connection_tables/orders").await.status,
        404
    );
    // An invalid change is refused and changes nothing.
    let r = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_tables/{id}"),
            Some(json!({"config": {"source.offset": "sometimes"}})),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["error"].as_str().unwrap().contains("sometimes"),
        "{}",
        r.text()
    );
    assert_eq!(
        app.get(&format!("/api/v1/connection_tables/{id}"))
            .await
            .json()["config"]["type"]["offset"],
        "earliest"
    );
    // Removing an option with null; replacing the schema (the virtual column stays).
    let r = app
        .call("PATCH", &format!("/api/v1/connection_tables/{id}"), Some(json!({
            "config": {"source.offset": null},
            "schema": {"format": {"type": "json"}, "fields": [{"name": "id", "type": "int64", "required": true}, {"name": "ts", "type": "timestamp", "unit": "millisecond", "required": true}, {"name": "note", "type": "string"}]}
        })))
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let t = r.json();
    // The option is gone from the statement, so its default applies again.
    assert_eq!(t["config"]["type"]["offset"], "latest", "{t}");
    assert!(
        !t["create_sql"].as_str().unwrap().contains("source.offset"),
        "{t}"
    );
    let names: Vec<&str> = t["schema"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["id", "ts", "note"]);
    assert!(t["create_sql"].as_str().unwrap().contains("doubled"));
    // Unknown fields of a PATCH are refused, not ignored.
    let r = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_tables/{id}"),
            Some(json!({"connector": "nats"})),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn patching_a_profile_cannot_break_its_tables() {
    let app = app();
    app.sql("CREATE CONNECTION PROFILE reg WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', 'schema_registry.endpoint' = 'http://127.0.0.1:2', validate = false)").await;
    // Offline: the sink's schema is not registered (there is no registry to reach).
    tributary_sql::Session::new(app.session.store().clone())
        .offline()
        .execute("CREATE TABLE events (id BIGINT) WITH (connector = 'kafka', connection_profile = 'reg', topic = 'e', type = 'sink', format = 'json', 'json.confluent_schema_registry' = true)")
        .await
        .unwrap();
    let p = app.get("/api/v1/connection_profiles/reg").await.json();
    let id = p["id"].as_str().unwrap();
    // A compatible change is stored, and every other setting kept.
    let r = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_profiles/{id}"),
            Some(json!({"config": {"bootstrapServers": "127.0.0.1:3"}, "validate": false})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let changed = r.json();
    assert_eq!(changed["config"]["bootstrapServers"], "127.0.0.1:3");
    // The answer names the profile's tables, as a GET does, and so does a table's view.
    assert_eq!(changed["tables"], json!(["events"]), "{changed}");
    let table = app.get("/api/v1/connection_tables/events").await.json();
    assert_eq!(
        table["connection_profile"]["tables"],
        json!(["events"]),
        "{table}"
    );
    assert_eq!(
        changed["config"]["schemaRegistryEnum"]["endpoint"],
        "http://127.0.0.1:2"
    );
    // Removing the registry would break the table: refused, naming it.
    let r = app
        .call(
            "PATCH",
            &format!("/api/v1/connection_profiles/{id}"),
            Some(json!({"config": {"schema_registry.endpoint": null}, "validate": false})),
        )
        .await;
    assert_eq!(r.status, 409, "{}", r.text());
    let e = r.json();
    assert_eq!(e["code"], "in_use");
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .starts_with("the change would break table 'events'"),
        "{e}"
    );
    assert_eq!(
        app.get("/api/v1/connection_profiles/reg").await.json()["config"]["schemaRegistryEnum"]["endpoint"],
        "http://127.0.0.1:2"
    );
    // Deleting in the wrong order is refused and names the table; the right order works.
    let r = app
        .call("DELETE", &format!("/api/v1/connection_profiles/{id}"), None)
        .await;
    assert_eq!(r.status, 409);
    assert!(r.json()["error"].as_str().unwrap().contains("events"));
    assert_eq!(
        app.call("DELETE", "/api/v1/connection_tables/events", None)
            .await
            .status,
        200
    );
    assert_eq!(
        app.call("DELETE", &format!("/api/v1/connection_profiles/{id}"), None)
            .await
            .status,
        200
    );
    assert_eq!(
        app.get("/api/v1/connection_profiles").await.json(),
        json!({"data": []})
    );
}

#[tokio::test]
async fn a_changed_profile_is_tested_as_a_new_one_is_unless_validate_is_false() {
    let app = app();
    // Redis runs on this machine (.ci/run starts it): the profile is tested on create.
    let r = app
        .post(
            "/api/v1/connection_profiles",
            json!({"name": "cache", "connector": "redis", "config": {"address": "redis://127.0.0.1:6379"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["last_test"]["result"], "passed", "{}", r.text());
    let patch = |config: Value| async {
        app.call("PATCH", "/api/v1/connection_profiles/cache", Some(config))
            .await
    };
    // An unreachable address fails its test, as the same CREATE does, and changes nothing.
    let refused = patch(json!({"config": {"address": "redis://127.0.0.1:1"}})).await;
    assert_eq!(refused.status, 400, "{}", refused.text());
    let e = refused.json();
    assert_eq!(e["code"], "connection_failed", "{e}");
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .contains("connection profile 'cache'"),
        "{e}"
    );
    let kept = app.get("/api/v1/connection_profiles/cache").await.json();
    assert_eq!(
        kept["config"]["connection"]["address"], "redis://127.0.0.1:6379",
        "{kept}"
    );
    assert_eq!(kept["last_test"]["result"], "passed", "{kept}");
    // `validate: false` stores it untested: the old test no longer describes it.
    let untested =
        patch(json!({"config": {"address": "redis://127.0.0.1:1"}, "validate": false})).await;
    assert_eq!(untested.status, 200, "{}", untested.text());
    let v = untested.json();
    assert_eq!(
        v["config"]["connection"]["address"], "redis://127.0.0.1:1",
        "{v}"
    );
    assert_eq!(v["last_test"], Value::Null, "{v}");
    assert!(
        v["warnings"].to_string().contains("validate = false"),
        "{v}"
    );
    // A reachable address is tested and its result kept.
    let tested = patch(json!({"config": {"address": "redis://127.0.0.1:6379"}})).await;
    assert_eq!(tested.status, 200, "{}", tested.text());
    assert_eq!(
        tested.json()["last_test"]["result"],
        "passed",
        "{}",
        tested.text()
    );

    // ALTER in SQL does the same, over the same path.
    let refused = app
        .post(
            "/api/v1/sql",
            json!({"sql": "ALTER CONNECTION PROFILE cache SET (address = 'redis://127.0.0.1:1')"}),
        )
        .await;
    assert!(
        refused.text().contains("connection profile 'cache'")
            && refused.text().contains("validate = false"),
        "{}",
        refused.text()
    );
    let kept = app.get("/api/v1/connection_profiles/cache").await.json();
    assert_eq!(
        kept["config"]["connection"]["address"], "redis://127.0.0.1:6379",
        "{kept}"
    );
    app.sql(
        "ALTER CONNECTION PROFILE cache SET (address = 'redis://127.0.0.1:1', validate = false)",
    )
    .await;
    let v = app.get("/api/v1/connection_profiles/cache").await.json();
    assert_eq!(
        v["config"]["connection"]["address"], "redis://127.0.0.1:1",
        "{v}"
    );
    // `validate` was about that statement: the next ALTER tests again.
    let refused = app
        .post(
            "/api/v1/sql",
            json!({"sql": "ALTER CONNECTION PROFILE cache SET (username = 'reader')"}),
        )
        .await;
    assert!(
        refused.text().contains("validate = false"),
        "{}",
        refused.text()
    );
}

#[tokio::test]
async fn names_are_unique_over_rest_too() {
    let app = app();
    let body = json!({"name": "dup", "connector": "impulse", "config": {"event_rate": 1}});
    assert_eq!(
        app.post("/api/v1/connection_tables", body.clone())
            .await
            .status,
        200
    );
    let r = app.post("/api/v1/connection_tables", body).await;
    assert_eq!(r.status, 409);
    assert_eq!(r.json()["code"], "already_exists");
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": " ", "connector": "impulse", "config": {}}),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn deleting_a_table_a_view_reads_is_a_conflict() {
    let app = app();
    let made = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "read_by_view", "connector": "impulse", "config": {"event_rate": 1}}),
        )
        .await
        .json();
    let r = app
        .post(
            "/api/v1/sql",
            json!({"sql": "CREATE VIEW reader AS SELECT counter FROM read_by_view"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let id = made["id"].as_str().unwrap();
    let r = app
        .call("DELETE", &format!("/api/v1/connection_tables/{id}"), None)
        .await;
    assert_eq!(r.status, 409, "{}", r.text());
    let e = r.json();
    assert_eq!(e["code"], "in_use", "{e}");
    assert!(e["error"].as_str().unwrap().contains("reader"), "{e}");
    // The table is still there.
    let r = app
        .call("GET", &format!("/api/v1/connection_tables/{id}"), None)
        .await;
    assert_eq!(r.status, 200);
}

/// Every string in a JSON value.
fn texts(v: &Value, out: &mut String) {
    out.push_str(&v.to_string());
}

#[tokio::test]
async fn no_answer_holds_a_secret() {
    let app = app();
    let secret = "hunter2-very-secret";
    let profile = json!({"name": "sec", "connector": "kafka", "validate": false, "config": {
        "bootstrap_servers": "127.0.0.1:1", "auth.type": "sasl", "auth.protocol": "SASL_SSL",
        "auth.mechanism": "PLAIN", "auth.username": "svc", "auth.password": secret,
        "schema_registry.endpoint": format!("https://reg-user:{secret}@registry:8081"),
        "schema_registry.api_key": "{{ REG_KEY }}", "schema_registry.api_secret": "{{ REG_SECRET }}"}});
    let mut seen = String::new();
    let created = app
        .post("/api/v1/connection_profiles", profile.clone())
        .await;
    assert_eq!(created.status, 200, "{}", created.text());
    let p = created.json();
    // References are shown as written; secrets are not.
    assert_eq!(
        p["config"]["schemaRegistryEnum"]["apiSecret"],
        "{{ REG_SECRET }}"
    );
    assert_eq!(p["config"]["authentication"]["password"], "********");
    texts(&p, &mut seen);
    // Errors quoting the body: a duplicate, a misspelled key carrying the secret.
    texts(
        &app.post("/api/v1/connection_profiles", profile)
            .await
            .json(),
        &mut seen,
    );
    let misspelled = json!({"name": "sec2", "connector": "kafka", "validate": false, "config": {
        "bootstrap_servers": "127.0.0.1:1", "auth.pasword": secret}});
    texts(
        &app.post("/api/v1/connection_profiles", misspelled)
            .await
            .json(),
        &mut seen,
    );
    let test = json!({"name": "sec3", "connector": "redis", "config": {"address": format!("redis://u:{secret}@127.0.0.1:1")}});
    texts(
        &app.post("/api/v1/connection_profiles/test", test)
            .await
            .json(),
        &mut seen,
    );
    app.post(
        "/api/v1/connection_tables",
        json!({"name": "st", "connector": "kafka", "connection_profile_id": "sec",
        "config": {"topic": "t", "type": "sink", "client_configs": {"sasl.password": secret}},
        "schema": {"format": {"type": "json"}, "fields": [{"name": "a", "type": "int64"}]}}),
    )
    .await;
    // The statement a body stands for (the console shows it before creating), a
    // connector without profiles holding the secret inline, and a profile's test streamed.
    let preview = app
        .post(
            "/api/v1/connection_tables/sql",
            json!({"name": "poll", "connector": "polling_http",
            "config": {"endpoint": format!("https://api.example.com/x?token={secret}"),
                       "headers": format!("Authorization: Bearer {secret}")},
            "schema": {"format": {"type": "json"}, "fields": [{"name": "a", "type": "int64"}]}}),
        )
        .await;
    assert_eq!(preview.status, 200, "{}", preview.text());
    assert!(
        preview.text().contains("CREATE TABLE"),
        "{}",
        preview.text()
    );
    seen.push_str(&preview.text());
    let streamed_test = app
        .send(
            axum::http::Request::builder()
                .method("POST")
                .uri("/api/v1/connection_profiles/test")
                .header("authorization", format!("Bearer {}", crate::common::TOKEN))
                .header("content-type", "application/json")
                .header("accept", "text/event-stream")
                .body(axum::body::Body::from(
                    json!({"name": "sec4", "connector": "redis", "config": {"address": format!("redis://u:{secret}@127.0.0.1:1")}})
                        .to_string(),
                ))
                .unwrap(),
        )
        .await;
    assert!(
        streamed_test.text().contains("data:"),
        "{}",
        streamed_test.text()
    );
    seen.push_str(&streamed_test.text());
    for path in [
        "/api/v1/connection_profiles",
        "/api/v1/connection_profiles/sec",
        "/api/v1/connection_tables",
        "/api/v1/connection_tables/st",
        "/api/v1/connection_tables/st/create_sql",
    ] {
        let r = app.get(path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        seen.push_str(&r.text());
    }
    let sql = app
        .post("/api/v1/sql", json!({"sql": format!("SHOW CREATE CONNECTION PROFILE sec; DESCRIBE CONNECTION PROFILE sec; CREATE CONNECTION PROFILE x WITH (connector = 'kafka', bootstrap_servers = 'a:1', 'auth.type' = 'sasl', 'auth.password' = '{secret}', bogus = 1)")}))
        .await;
    seen.push_str(&sql.text());
    // The same script streamed: each statement's result (SHOW and DESCRIBE carry their
    // rows in it) and diagnostics as events.
    let streamed = app
        .send(
            axum::http::Request::builder()
                .method("POST")
                .uri("/api/v1/sql")
                .header("authorization", format!("Bearer {}", crate::common::TOKEN))
                .header("content-type", "application/json")
                .header("accept", "application/x-ndjson")
                .body(axum::body::Body::from(
                    json!({"sql": format!("SHOW CREATE CONNECTION PROFILE sec; DESCRIBE CONNECTION PROFILE sec; CREATE CONNECTION PROFILE x WITH (connector = 'kafka', bootstrap_servers = 'a:1', 'auth.type' = 'sasl', 'auth.password' = '{secret}', bogus = 1)")})
                        .to_string(),
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(
        streamed.text().matches("\"event\":\"result\"").count(),
        3,
        "{}",
        streamed.text()
    );
    seen.push_str(&streamed.text());
    assert!(seen.contains("********"));
    assert!(!seen.contains(secret), "a secret leaked: {seen}");
    assert!(!seen.contains("reg-user:"), "URL userinfo leaked");
}

#[tokio::test]
async fn sql_runs_statements_and_reports_where_they_fail() {
    let app = app();
    let r = app
        .post("/api/v1/sql", json!({"sql": "CREATE TABLE a WITH (connector = 'impulse', event_rate = 1);\nSELECT 1 + 1 AS two;\nSELEC 3;\nSHOW TABLES"}))
        .await
        .json();
    let results = r["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "run stops at the first failure: {r}");
    assert_eq!(results[0]["tag"], "CREATE TABLE");
    assert_eq!(
        results[1]["columns"][0],
        json!({"name": "two", "type": "BIGINT", "nullable": false})
    );
    assert_eq!(results[1]["rows"], json!([[2]]));
    assert_eq!(results[2]["error"], true);
    assert_eq!(
        (
            results[2]["line"].clone(),
            results[2]["diagnostics"][0]["line"].clone()
        ),
        (json!(3), json!(3))
    );
    assert_eq!(r["failed"], 1);
    // check: every failure, nothing stored.
    let c = app
        .post("/api/v1/sql", json!({"sql": "CREATE TABLE b WITH (connector = 'impulse', event_rate = 1); SELEC 1; SELECT * FROM nope", "mode": "check"}))
        .await
        .json();
    assert_eq!(c["failed"], 2, "{c}");
    assert_eq!(app.get("/api/v1/connection_tables/b").await.status, 404);
    let bad = app
        .post("/api/v1/sql", json!({"sql": "SELECT 1", "mode": "maybe"}))
        .await;
    assert_eq!(bad.status, 400);
}

#[tokio::test]
async fn views_and_memory_tables_over_sql() {
    let app = app();
    let script = "CREATE TABLE n WITH (connector = 'impulse', event_rate = 1000, message_count = 3);\n\
        CREATE VIEW doubled AS SELECT counter * 2 AS d FROM n;\n\
        SELECT d FROM doubled ORDER BY d;\n\
        CREATE TABLE scratch (x BIGINT);\n\
        INSERT INTO scratch SELECT d FROM doubled;\n\
        SELECT sum(x) AS total FROM scratch";
    let r = app.post("/api/v1/sql", json!({"sql": script})).await.json();
    assert_eq!(r["failed"], 0, "{r}");
    let results = r["results"].as_array().unwrap();
    assert_eq!(results[1]["tag"], "CREATE VIEW");
    assert_eq!(results[2]["rows"], json!([[0], [2], [4]]));
    assert_eq!(results[5]["rows"], json!([[6]]));
    // The view is in the catalog for the next request; the memory table ended with its
    // script.
    let r = app
        .post(
            "/api/v1/sql",
            json!({"sql": "SHOW VIEWS; SELECT * FROM scratch"}),
        )
        .await
        .json();
    let results = r["results"].as_array().unwrap();
    assert_eq!(results[0]["rows"][0][0], "doubled", "{r}");
    assert_eq!(results[1]["error"], true, "{r}");
    // The table a view reads is kept until CASCADE.
    let r = app
        .post("/api/v1/sql", json!({"sql": "DROP TABLE n"}))
        .await
        .json();
    assert_eq!(r["results"][0]["diagnostics"][0]["code"], "IN_USE", "{r}");
    assert_eq!(app.get("/api/v1/connection_tables").await.status, 200);
    let r = app
        .post(
            "/api/v1/sql",
            json!({"sql": "DROP TABLE n CASCADE; SHOW VIEWS"}),
        )
        .await
        .json();
    assert_eq!(r["failed"], 0, "{r}");
    assert_eq!(r["results"][1]["rows"], json!([]), "{r}");
}

#[tokio::test]
async fn plan_over_rest_compares_files_with_the_servers_catalog() {
    let app = app();
    app.sql("CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://h:6379', password = 'hunter2-plan-rest', validate = false);
             CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');")
        .await;
    let files = json!({"files": [
        {"name": "profiles.sql", "sql": "CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://h:6379', password = 'rotated-plan-rest', validate = false);"},
        {"name": "tables.sql", "sql": "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '20');\nCREATE VIEW v AS SELECT counter FROM ticks;"}
    ]});
    let r = app.post("/api/v1/plan", files).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        !r.text().contains("hunter2") && !r.text().contains("rotated"),
        "{}",
        r.text()
    );
    let plan = r.json();
    assert_eq!(
        plan["summary"],
        json!({"create": 1, "change": 2, "replace": 0, "drop": 0, "keep": 0})
    );
    let ticks = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "ticks")
        .unwrap();
    assert_eq!(
        ticks["details"],
        json!([{"what": "option 'event_rate'", "before": "10", "after": "20"}])
    );
    // Nothing was stored.
    assert_eq!(
        app.get("/api/v1/connection_tables/ticks").await.json()["config"]["event_rate"],
        10.0
    );
    // An invalid file: which one, where in it.
    let r = app
        .post(
            "/api/v1/plan",
            json!({"files": [{"name": "a.sql", "sql": "SELECT 1;"}, {"name": "b.sql", "sql": "\nCREATE VIEW w AS SELECT * FROM nowhere;"}]}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text());
    let e = r.json();
    assert_eq!(e["code"], "invalid_definition");
    assert_eq!(e["diagnostics"][0]["path"], "/files/1/sql", "{e}");
    assert_eq!(e["diagnostics"][0]["line"], 2, "{e}");
}
