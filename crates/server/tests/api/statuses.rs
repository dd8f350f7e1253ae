//! Every status docs/rest.md promises, answered: one table of requests, each with the
//! status and error code it must get. The documentation's routes and statuses are read
//! from the file itself, so a documented route or status without a case here fails, and
//! every status a route answers must also be declared by the OpenAPI document for it.

use crate::common::{TOKEN, app, json_peer};
use axum::body::Body;
use axum::http::Request;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use tributary_server::openapi;

/// One request and what it must answer.
struct Case {
    method: &'static str,
    /// The route as documented (`/connection_tables/{id}`).
    route: &'static str,
    /// The path requested, under `/api/v1`.
    path: String,
    body: Body_,
    status: u16,
    code: Option<&'static str>,
}

/// What a case sends.
enum Body_ {
    None,
    Json(Value),
    /// Bytes as given, with a content type (or none).
    Raw(Vec<u8>, Option<&'static str>),
    /// No `Authorization` header.
    NoToken,
}

fn case(
    method: &'static str,
    route: &'static str,
    status: u16,
    code: Option<&'static str>,
) -> Case {
    Case {
        method,
        route,
        path: route.to_string(),
        body: Body_::None,
        status,
        code,
    }
}

impl Case {
    fn at(mut self, path: &str) -> Self {
        self.path = path.to_string();
        self
    }
    fn json(mut self, body: Value) -> Self {
        self.body = Body_::Json(body);
        self
    }
    fn raw(mut self, bytes: Vec<u8>, content_type: Option<&'static str>) -> Self {
        self.body = Body_::Raw(bytes, content_type);
        self
    }
    fn no_token(mut self) -> Self {
        self.body = Body_::NoToken;
        self
    }
}

/// Statuses every route may answer, documented once in the error table rather than per
/// route, and not repeated in the OpenAPI document's per-operation responses.
const CROSS_CUTTING: &[u16] = &[401, 405, 413, 415];

/// Documented statuses the table below does not provoke, and where they are tested.
const ELSEWHERE: &[(u16, &str, &str)] = &[
    (
        400,
        "body_timeout",
        "boundary.rs: a body that does not arrive in time",
    ),
    (
        429,
        "too_many_tests",
        "guards.rs: connection tests past the eighth",
    ),
    (
        429,
        "too_many_queries",
        "streaming.rs: every query slot taken",
    ),
    (500, "catalog_error", "below: a catalog table dropped"),
    (
        503,
        "catalog_unavailable",
        "below: every catalog table dropped",
    ),
    (
        504,
        "deadline_exceeded",
        "boundary.rs: heavy queries past their deadline",
    ),
    // No request can provoke it: it reports Tributary's own defect (a query task that
    // panicked, an answer that cannot be encoded, a record gone just after its write).
    (500, "internal", "untestable from outside by design"),
];

fn table_body(name: &str) -> Value {
    json!({"name": name, "connector": "impulse", "config": {"event_rate": 10}})
}

fn cases(peer: u16) -> Vec<Case> {
    let kafka = |name: &str| {
        json!({"name": name, "connector": "kafka", "connection_profile_id": "k",
        "config": {"topic": "t", "type": {"offset": "latest"}}, "schema": {"format": {"type": "json"},
        "fields": [{"name": "id", "type": "int64", "required": false}]}})
    };
    let polled = json!({"name": "polled", "connector": "polling_http",
        "config": {"endpoint": format!("http://127.0.0.1:{peer}/events")}, "schema": {"format": {"type": "json"}}});
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    vec![
        case("GET", "/ping", 200, None),
        case("GET", "/connectors", 200, None),
        case("GET", "/openapi.json", 200, None),
        // Cross-cutting: the token, the method, the body's type, size and shape.
        case("GET", "/connection_profiles", 401, Some("unauthorized")).no_token(),
        case("DELETE", "/ping", 405, Some("method_not_allowed")),
        case("GET", "/nowhere", 404, Some("not_found")),
        case("POST", "/connection_profiles", 415, Some("unsupported_media_type"))
            .raw(b"{}".to_vec(), None),
        case("POST", "/connection_profiles", 413, Some("payload_too_large"))
            .raw(vec![b' '; 17 << 20], Some("application/json")),
        case("POST", "/connection_profiles", 400, Some("invalid_json"))
            .raw(b"{\"name\": ".to_vec(), Some("application/json")),
        case("POST", "/connection_profiles", 400, Some("too_deep"))
            .raw(deep.into_bytes(), Some("application/json")),
        // Profiles.
        case("POST", "/connection_profiles/test", 200, None)
            .json(json!({"name": "x", "connector": "redis", "config": {"address": "redis://127.0.0.1:1"}})),
        case("POST", "/connection_profiles/test", 400, Some("invalid_body")).json(json!({})),
        case("POST", "/connection_profiles", 200, None).json(
            json!({"name": "cache", "connector": "redis", "config": {"address": "redis://127.0.0.1:6379"}}),
        ),
        case("POST", "/connection_profiles", 400, Some("connection_failed")).json(
            json!({"name": "gone", "connector": "redis", "config": {"address": "redis://127.0.0.1:1"}}),
        ),
        case("POST", "/connection_profiles", 400, Some("invalid_definition")).json(
            json!({"name": "bad", "connector": "kafka", "validate": false, "config": {"bootstrap_servers": "h:1", "auth.type": "sometimes"}}),
        ),
        case("POST", "/connection_profiles", 400, Some("invalid_body"))
            .json(json!({"connector": "kafka"})),
        case("POST", "/connection_profiles", 409, Some("already_exists")).json(
            json!({"name": "K", "connector": "kafka", "validate": false, "config": {"bootstrap_servers": "h:1"}}),
        ),
        case("POST", "/connection_profiles", 403, Some("forbidden")).json(
            json!({"name": "env", "connector": "redis", "config": {"address": "redis://{{ HOME }}:6379"}}),
        ),
        case("GET", "/connection_profiles", 200, None),
        case("GET", "/connection_profiles/{id}", 200, None).at("/connection_profiles/k"),
        case("GET", "/connection_profiles/{id}", 404, Some("not_found"))
            .at("/connection_profiles/missing"),
        case("PATCH", "/connection_profiles/{id}", 200, None)
            .at("/connection_profiles/k")
            .json(json!({"config": {"bootstrap_servers": "127.0.0.1:3"}, "validate": false})),
        case("PATCH", "/connection_profiles/{id}", 400, Some("connection_failed"))
            .at("/connection_profiles/cache")
            .json(json!({"config": {"address": "redis://127.0.0.1:1"}})),
        case("PATCH", "/connection_profiles/{id}", 400, Some("invalid_definition"))
            .at("/connection_profiles/k")
            .json(json!({"config": {"auth.type": "sometimes"}, "validate": false})),
        case("PATCH", "/connection_profiles/{id}", 404, Some("not_found"))
            .at("/connection_profiles/missing")
            .json(json!({"config": {}})),
        case("PATCH", "/connection_profiles/{id}", 409, Some("in_use"))
            .at("/connection_profiles/reg")
            .json(json!({"config": {"schema_registry.endpoint": null}, "validate": false})),
        case("GET", "/connection_profiles/{id}/autocomplete", 200, None)
            .at("/connection_profiles/cache/autocomplete"),
        case("GET", "/connection_profiles/{id}/autocomplete", 400, Some("connection_failed"))
            .at("/connection_profiles/k/autocomplete"),
        case("GET", "/connection_profiles/{id}/autocomplete", 404, Some("not_found"))
            .at("/connection_profiles/missing/autocomplete"),
        case("DELETE", "/connection_profiles/{id}", 409, Some("in_use")).at("/connection_profiles/k"),
        case("DELETE", "/connection_profiles/{id}", 404, Some("not_found"))
            .at("/connection_profiles/missing"),
        case("DELETE", "/connection_profiles/{id}", 200, None).at("/connection_profiles/cache"),
        // Tables.
        case("GET", "/connection_tables", 200, None).at("/connection_tables?limit=5"),
        case("GET", "/connection_tables", 400, Some("invalid_body")).at("/connection_tables?limit=0"),
        case("POST", "/connection_tables", 200, None).json(table_body("ticks2")),
        case("POST", "/connection_tables", 409, Some("already_exists")).json(table_body("TICKS")),
        case("POST", "/connection_tables", 400, Some("invalid_definition"))
            .json(json!({"name": "bad", "connector": "impulse", "config": {"event_rat": 10}})),
        case("POST", "/connection_tables", 400, Some("invalid_body")).json(json!({"name": "x"})),
        case("POST", "/connection_tables", 403, Some("forbidden")).json(json!({"name": "f",
            "connector": "single_file", "config": {"path": "/etc/passwd", "type": "source"},
            "schema": {"format": {"type": "json"}}})),
        // As Arroyo: a profile id that names nothing is a bad body, not a missing route.
        case("POST", "/connection_tables", 400, Some("invalid_body")).json(
            json!({"name": "nk", "connector": "kafka", "connection_profile_id": "missing", "config": {"topic": "t"}}),
        ),
        case("POST", "/connection_tables/test", 200, None).json(table_body("probe")),
        case("POST", "/connection_tables/test", 400, Some("invalid_definition"))
            .json(json!({"name": "bad", "connector": "impulse", "config": {"event_rat": 10}})),
        case("POST", "/connection_tables/schemas/test", 200, None)
            .json(json!({"format": {"type": "json"}, "fields": [{"name": "a", "type": "int64"}]})),
        case("POST", "/connection_tables/schemas/test", 400, Some("invalid_schema")).json(
            json!({"format": {"type": "json"}, "fields": [], "definition": {"type": "json_schema", "schema": "{"}}),
        ),
        case("POST", "/connection_tables/sql", 200, None).json(kafka("orders2")),
        case("POST", "/connection_tables/sql", 400, Some("invalid_definition"))
            .json(json!({"name": "bad", "connector": "impulse", "config": {"event_rat": 10}})),
        case("POST", "/connection_tables/schemas/infer", 200, None)
            .json(json!({"table": polled, "limit": 2})),
        case("POST", "/connection_tables/schemas/infer", 400, Some("invalid_body"))
            .json(polled_flat(peer)),
        case("POST", "/connection_tables/schemas/infer", 400, Some("invalid_definition")).json(
            json!({"table": {"name": "i", "connector": "impulse", "config": {}, "schema": {"format": {"type": "avro"}}}}),
        ),
        case("GET", "/connection_tables/{id}", 200, None).at("/connection_tables/ticks"),
        case("GET", "/connection_tables/{id}", 404, Some("not_found")).at("/connection_tables/missing"),
        case("GET", "/connection_tables/{id}/create_sql", 200, None)
            .at("/connection_tables/ticks/create_sql"),
        case("GET", "/connection_tables/{id}/create_sql", 404, Some("not_found"))
            .at("/connection_tables/missing/create_sql"),
        case("PATCH", "/connection_tables/{id}", 200, None)
            .at("/connection_tables/ticks2")
            .json(json!({"config": {"event_rate": 20}})),
        case("PATCH", "/connection_tables/{id}", 400, Some("invalid_body"))
            .at("/connection_tables/ticks2")
            .json(json!({"colour": "red"})),
        case("PATCH", "/connection_tables/{id}", 400, Some("invalid_definition"))
            .at("/connection_tables/ticks2")
            .json(json!({"config": {"event_rate": "fast"}})),
        case("PATCH", "/connection_tables/{id}", 404, Some("not_found"))
            .at("/connection_tables/missing")
            .json(json!({"config": {}})),
        case("PATCH", "/connection_tables/{id}", 409, Some("already_exists"))
            .at("/connection_tables/ticks2")
            .json(json!({"name": "ticks"})),
        case("DELETE", "/connection_tables/{id}", 409, Some("in_use")).at("/connection_tables/ticks"),
        case("DELETE", "/connection_tables/{id}", 404, Some("not_found"))
            .at("/connection_tables/missing"),
        case("DELETE", "/connection_tables/{id}", 200, None).at("/connection_tables/ticks2"),
        // Queries.
        case("POST", "/pipelines/validate_query", 200, None)
            .json(json!({"query": "SELECT counter FROM ticks"})),
        case("POST", "/pipelines/validate_query", 400, Some("invalid_body")).json(json!({})),
        case("POST", "/sql", 200, None).json(json!({"sql": "SELECT 1"})),
        case("POST", "/sql", 400, Some("invalid_body")).json(json!({"sql": "SELECT 1", "mode": "dry"})),
        case("POST", "/plan", 200, None).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');"}]})),
        case("POST", "/plan", 400, Some("invalid_definition")).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE ticks WITH (connector = 'impulse', event_rat = '10');"}]})),
        case("POST", "/plan", 400, Some("invalid_body")).json(json!({"files": []})),
        // Planned files are confined as any statement is: no file outside the allowed.
        case("POST", "/plan", 403, Some("forbidden")).json(json!({"files": [{"name": "f.sql",
            "sql": "CREATE TABLE f (a TEXT) WITH (connector = 'single_file', path = '/etc/passwd', type = 'source', format = 'json');"}]})),
        case("GET", "/pipelines", 200, None),
        case("GET", "/jobs", 200, None),
        case("GET", "/udfs", 200, None),
        // Apply last: it changes the catalog the cases above read.
        case("POST", "/apply", 400, Some("invalid_definition")).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE applied WITH (connector = 'impulse', event_rat = '1');"}]})),
        case("POST", "/apply", 400, Some("invalid_body")).json(json!({"files": [], "prune": true})),
        case("POST", "/apply", 403, Some("forbidden")).json(json!({"files": [{"name": "f.sql",
            "sql": "CREATE TABLE f (a TEXT) WITH (connector = 'single_file', path = '/etc/passwd', type = 'source', format = 'json');"}]})),
        // A new profile is tested as CREATE tests it: nothing listens on port 1.
        case("POST", "/apply", 400, Some("connection_failed")).json(json!({"files": [{"name": "p.sql",
            "sql": "CREATE CONNECTION PROFILE dead WITH (connector = 'redis', address = 'redis://127.0.0.1:1');"}]})),
        case("POST", "/apply", 409, Some("catalog_changed")).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE applied WITH (connector = 'impulse', event_rate = '1');"}],
            "fingerprint": "0000000000000000"})),
        case("POST", "/apply", 200, None).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE applied WITH (connector = 'impulse', event_rate = '1');"}]})),
        case("POST", "/apply", 409, Some("replace_not_allowed")).json(json!({"files": [{"name": "c.sql",
            "sql": "CREATE TABLE applied WITH (connector = 'nexmark', event_rate = '1');"}]})),
    ]
}

/// The infer body with the table's fields at the top level, as it used to be taken.
fn polled_flat(peer: u16) -> Value {
    json!({"name": "polled", "connector": "polling_http",
        "config": {"endpoint": format!("http://127.0.0.1:{peer}/events")}, "limit": 2})
}

/// docs/rest.md's routes (`GET /connection_tables/{id}`) and, for each, the statuses its
/// row names (200 always).
fn documented() -> BTreeMap<(String, String), BTreeSet<u16>> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/rest.md"))
        .unwrap();
    let mut routes = BTreeMap::new();
    for line in text.lines() {
        let is_route_row = line.starts_with("| `") && line.contains(" /");
        let is_heading = line.starts_with("### `");
        if !is_route_row && !is_heading {
            continue;
        }
        let first_cell = if is_heading {
            line.to_string()
        } else {
            line.split(" | ").next().unwrap_or("").to_string()
        };
        // "Arroyo answers 400" describes Arroyo, not this server.
        let ours = line.replace("Arroyo answers ", "Arroyo answers #");
        let statuses: BTreeSet<u16> = if is_route_row {
            ours.split(" | ")
                .skip(1)
                .flat_map(|cell| cell.split(|c: char| !c.is_ascii_digit() && c != '#'))
                .filter_map(|n| n.parse::<u16>().ok())
                .filter(|n| (200..600).contains(n))
                .chain([200])
                .collect()
        } else {
            [200].into()
        };
        for quoted in first_cell.split('`').skip(1).step_by(2) {
            let Some((method, path)) = quoted.split_once(' ') else {
                continue;
            };
            if !["GET", "POST", "PATCH", "DELETE", "PUT"].contains(&method) {
                continue;
            }
            let path = path.split('?').next().unwrap_or(path);
            routes.insert((method.to_string(), path.to_string()), statuses.clone());
        }
    }
    routes
}

/// The statuses the OpenAPI document declares for each operation.
fn declared() -> BTreeMap<(String, String), BTreeSet<u16>> {
    let doc = serde_json::to_value(openapi()).unwrap();
    let mut out = BTreeMap::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let path = path.strip_prefix("/v1").unwrap_or(path);
        for (method, op) in item.as_object().unwrap() {
            let statuses = op["responses"]
                .as_object()
                .unwrap()
                .keys()
                .filter_map(|s| s.parse().ok())
                .collect();
            out.insert((method.to_uppercase(), path.to_string()), statuses);
        }
    }
    out
}

async fn setup(app: &crate::common::App) {
    app.sql(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', validate = false);
         CREATE CONNECTION PROFILE reg WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:1', 'schema_registry.endpoint' = 'http://127.0.0.1:2', validate = false);
         CREATE TABLE orders (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');
         CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');
         CREATE VIEW counted AS SELECT count(*) AS n FROM ticks;",
    )
    .await;
    // A sink whose writer schema the registry holds: the registry cannot be removed.
    tributary_sql::Session::new(app.session.store().clone())
        .offline()
        .execute("CREATE TABLE events (id BIGINT) WITH (connector = 'kafka', connection_profile = 'reg', topic = 'e', type = 'sink', format = 'json', 'json.confluent_schema_registry' = true)")
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_status_is_what_the_server_answers() {
    let app = app();
    setup(&app).await;
    let peer = json_peer(r#"{"id": 1, "kind": "click"}"#).await;
    let cases = cases(peer);
    let declared = declared();
    let mut answered: BTreeMap<(String, String), BTreeSet<u16>> = BTreeMap::new();
    let mut codes: BTreeSet<(u16, String)> = BTreeSet::new();
    let mut wrong = Vec::new();
    for c in &cases {
        let mut req = Request::builder()
            .method(c.method)
            .uri(format!("/api/v1{}", c.path));
        if !matches!(c.body, Body_::NoToken) {
            req = req.header("authorization", format!("Bearer {TOKEN}"));
        }
        let body = match &c.body {
            Body_::None | Body_::NoToken => Body::empty(),
            Body_::Json(v) => {
                req = req.header("content-type", "application/json");
                Body::from(serde_json::to_vec(v).unwrap())
            }
            Body_::Raw(bytes, content_type) => {
                if let Some(t) = content_type {
                    req = req.header("content-type", *t);
                }
                Body::from(bytes.clone())
            }
        };
        let r = app.send(req.body(body).unwrap()).await;
        let code = serde_json::from_slice::<Value>(&r.bytes)
            .ok()
            .and_then(|v| v["code"].as_str().map(str::to_string));
        if r.status.as_u16() != c.status || (c.code.is_some() && code.as_deref() != c.code) {
            let text = r.text();
            wrong.push(format!(
                "{} {}: expected {} {:?}, got {} {:?}: {}",
                c.method,
                c.path,
                c.status,
                c.code,
                r.status,
                code,
                &text[..text.len().min(300)]
            ));
            continue;
        }
        if let Some(code) = c.code {
            codes.insert((c.status, code.to_string()));
        }
        answered
            .entry((c.method.to_string(), c.route.to_string()))
            .or_default()
            .insert(c.status);
        // Each status a route answers is declared for it, except the cross-cutting ones.
        if !CROSS_CUTTING.contains(&c.status) && c.route != "/nowhere" {
            let key = (c.method.to_string(), c.route.to_string());
            let ok = declared.get(&key).is_some_and(|s| s.contains(&c.status));
            if !ok {
                wrong.push(format!(
                    "{} {} answers {} but the OpenAPI document declares {:?}",
                    c.method,
                    c.route,
                    c.status,
                    declared.get(&key)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // Every documented route, and every status its row names, has a case that got it.
    let mut missing = Vec::new();
    for ((method, route), statuses) in documented() {
        let got = answered.get(&(method.clone(), route.clone()));
        for s in statuses {
            if !got.is_some_and(|g| g.contains(&s)) {
                missing.push(format!(
                    "{method} {route}: documented {s}, no case answered it"
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
    assert!(answered.len() >= 20, "{answered:?}");

    // Every status and code of the error table is answered here or by the named test.
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/rest.md"))
        .unwrap();
    let mut table = Vec::new();
    for line in docs.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() == 5
            && let Ok(status) = cells[1].parse::<u16>()
        {
            for code in cells[2].split('`').skip(1).step_by(2) {
                table.push((status, code.to_string()));
            }
        }
    }
    assert!(table.len() >= 18, "{table:?}");
    for (status, code) in table {
        let elsewhere = ELSEWHERE.iter().any(|(s, c, _)| *s == status && *c == code);
        assert!(
            codes.contains(&(status, code.clone())) || elsewhere,
            "the error table documents {status} `{code}`, which no case answered"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_catalog_answers_5xx_and_the_server_carries_on() {
    let pg = tributary_catalog::testing::PgSchema::new();
    let store = std::sync::Arc::new(tributary_catalog::PostgresStore::open(&pg.url).unwrap());
    let app = crate::common::app_over(store);
    app.sql("CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10')")
        .await;
    let profile = json!({"name": "k", "connector": "kafka", "validate": false, "config": {"bootstrap_servers": "h:1"}});
    // One of the catalog's tables vanishes (a botched restore): writing to it fails.
    pg.execute("DROP TABLE tributary_profiles CASCADE");
    let r = app
        .post("/api/v1/connection_profiles", profile.clone())
        .await;
    assert_eq!(r.status, 500, "{}", r.text());
    assert_eq!(r.json()["code"], "catalog_error", "{}", r.text());
    assert_eq!(app.get("/api/v1/ping").await.status, 200);
    // All of them: the catalog cannot even be read.
    pg.execute(
        "DO $$ DECLARE r record; BEGIN FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() LOOP EXECUTE 'DROP TABLE ' || quote_ident(r.tablename) || ' CASCADE'; END LOOP; END $$",
    );
    let r = app.post("/api/v1/connection_profiles", profile).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["code"], "catalog_unavailable", "{}", r.text());
    // Every request then says so at once, rather than serving a stale catalog.
    let ping = app.get("/api/v1/ping").await;
    assert_eq!(ping.status, 503);
    assert_eq!(ping.json()["code"], "catalog_unavailable");
}
