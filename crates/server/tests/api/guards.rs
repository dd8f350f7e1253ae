//! Authentication on every route, and one test per limit: body size, JSON depth,
//! content type, malformed JSON, test duration, concurrent tests.

use crate::common::{TOKEN, app, app_with, hanging_peer};
use axum::body::Body;
use axum::http::Request;
use serde_json::json;
use std::time::Duration;
use tributary_server::routes;

fn concrete(path: &str) -> String {
    format!("/api/v1{}", path.replace("{id}", "missing"))
}

#[tokio::test]
async fn every_route_needs_the_right_token() {
    let app = app();
    for (method, path) in routes() {
        let uri = concrete(path);
        let build = |auth: Option<&str>| {
            let mut r = Request::builder()
                .method(method)
                .uri(&uri)
                .header("content-type", "application/json");
            if let Some(a) = auth {
                r = r.header("authorization", a);
            }
            r.body(Body::from("{}")).unwrap()
        };
        let none = app.send(build(None)).await;
        assert_eq!(none.status, 401, "{method} {uri}");
        assert_eq!(
            none.headers["www-authenticate"],
            "Bearer realm=\"tributary\""
        );
        assert_eq!(none.json()["code"], "unauthorized");
        for wrong in [
            "Bearer not-the-token",
            "Basic cm91dGVyOnRlc3Q=",
            "Bearer",
            &format!("Bearer {TOKEN}x"),
        ] {
            let r = app.send(build(Some(wrong))).await;
            assert_eq!(r.status, 401, "{method} {uri} with {wrong}");
        }
        let wrong = app.send(build(Some("Bearer not-the-token"))).await;
        assert!(
            wrong.headers["www-authenticate"]
                .to_str()
                .unwrap()
                .contains("invalid_token")
        );
        let right = app.send(build(Some(&format!("Bearer {TOKEN}")))).await;
        assert_ne!(right.status, 401, "{method} {uri}: {}", right.text());
        // Served: anything but the unknown-route answer.
        assert!(!right.text().contains("No route for"), "{method} {uri}");
        // The scheme is case-insensitive, as RFC 7235 says.
        let lower = app.send(build(Some(&format!("bearer {TOKEN}")))).await;
        assert_eq!(lower.status, right.status, "{method} {uri}");
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json() {
    let app = app();
    let r = app.get("/api/v1/nope").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["code"], "not_found");
    let r = app
        .call("PUT", "/api/v1/connection_tables", Some(json!({})))
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.json()["code"], "method_not_allowed");
}

#[tokio::test]
async fn a_body_over_the_size_limit_is_413() {
    let app = app_with(|mut c| {
        c.max_body_bytes = 1_024;
        c
    });
    let big = json!({"name": "t", "connector": "impulse", "config": {"pad": "x".repeat(2_000)}});
    let r = app.post("/api/v1/connection_tables", big).await;
    assert_eq!(r.status, 413);
    let e = r.json();
    assert_eq!(e["code"], "payload_too_large");
    assert!(e["error"].as_str().unwrap().contains("1024 bytes"), "{e}");
    // Just under the limit is read.
    let small = json!({"name": "t", "connector": "impulse", "config": {"event_rate": 1}});
    assert_eq!(
        app.post("/api/v1/connection_tables", small).await.status,
        200
    );
}

#[tokio::test]
async fn a_body_nested_too_deep_is_refused_before_parsing() {
    let app = app();
    let deep = format!(
        "{{\"name\": \"t\", \"connector\": \"impulse\", \"config\": {}1{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let req = Request::builder()
        .method("POST")
        .uri("/api/v1/connection_tables")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(deep))
        .unwrap();
    let started = std::time::Instant::now();
    let r = app.send(req).await;
    assert_eq!(r.status, 400);
    let e = r.json();
    assert_eq!(e["code"], "too_deep");
    assert!(
        e["error"].as_str().unwrap().contains("line 1, column"),
        "{e}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_body_that_is_not_json_is_415() {
    let app = app();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut req = Request::builder()
            .method("POST")
            .uri("/api/v1/connection_profiles")
            .header("authorization", format!("Bearer {TOKEN}"));
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let r = app.send(req.body(Body::from("{}")).unwrap()).await;
        assert_eq!(r.status, 415, "{content_type:?}");
        let e = r.json();
        assert_eq!(e["code"], "unsupported_media_type");
        assert!(e["hint"].as_str().unwrap().contains("application/json"));
    }
    // A charset parameter is fine.
    let r = app
        .send(
            Request::builder()
                .method("POST")
                .uri("/api/v1/pipelines/validate_query")
                .header("authorization", format!("Bearer {TOKEN}"))
                .header("content-type", "application/json; charset=utf-8")
                .body(Body::from(r#"{"query": "SELECT 1"}"#))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn malformed_json_says_where_and_what() {
    let app = app();
    let send = |body: &'static str| {
        Request::builder()
            .method("POST")
            .uri("/api/v1/connection_tables")
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap()
    };
    let r = app.send(send("{\"name\": \"t\",\n \"connector\": }")).await;
    assert_eq!(r.status, 400);
    let e = r.json();
    assert_eq!(e["code"], "invalid_json");
    assert!(
        e["error"].as_str().unwrap().contains("line 2 column 15"),
        "{e}"
    );
    // Well-formed, wrong shape: the field is named.
    let r = app
        .send(send(r#"{"name": 5, "connector": "kafka", "config": {}}"#))
        .await;
    let e = r.json();
    assert_eq!(e["code"], "invalid_body");
    assert!(
        e["error"]
            .as_str()
            .unwrap()
            .starts_with("name: invalid type: integer"),
        "{e}"
    );
    let r = app.send(send(r#"{"connector": "kafka"}"#)).await;
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("missing field `name`")
    );
    // A schema with a type Arroyo does not have names the field.
    let r = app
        .post(
            "/api/v1/connection_tables",
            json!({"name": "t", "connector": "kafka", "config": {}, "schema": {"fields": [{"name": "a", "type": "int8"}]}}),
        )
        .await;
    let e = r.json();
    assert!(
        e["error"].as_str().unwrap().starts_with("schema.fields[0]"),
        "{e}"
    );
    // Query strings too.
    let r = app.get("/api/v1/connection_tables?limit=ten").await;
    assert_eq!(r.status, 400);
    assert!(r.json()["error"].as_str().unwrap().contains("limit=ten"));
}

fn hanging_sse_table(port: u16, name: &str) -> serde_json::Value {
    json!({"name": name, "connector": "sse", "config": {"endpoint": format!("http://127.0.0.1:{port}/events")},
           "schema": {"format": {"type": "json"}, "fields": [{"name": "id", "type": "int64"}]}})
}

#[tokio::test]
async fn a_test_stream_is_cut_at_its_time_limit() {
    let port = hanging_peer().await;
    let app = app_with(|mut c| {
        c.max_test_duration = Duration::from_secs(1);
        c
    });
    let started = std::time::Instant::now();
    let r = app
        .post(
            "/api/v1/connection_tables/test",
            hanging_sse_table(port, "slow"),
        )
        .await;
    assert_eq!(r.status, 200);
    let events = r.events();
    let last = events.last().unwrap();
    assert_eq!(
        (last["done"].clone(), last["error"].clone()),
        (json!(true), json!(true))
    );
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("took longer than 1 s and was stopped"),
        "{events:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn concurrent_tests_beyond_the_limit_are_429_until_one_ends() {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let port = hanging_peer().await;
    let app = app_with(|mut c| {
        c.max_concurrent_tests = 1;
        c
    });
    // The first test holds the only place while its stream is open.
    let req = Request::builder()
        .method("POST")
        .uri("/api/v1/connection_tables/test")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .body(Body::from(hanging_sse_table(port, "first").to_string()))
        .unwrap();
    let response = app.router.clone().oneshot(req).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(frame.data_ref().unwrap()).starts_with("data: "));
    let second = app
        .post(
            "/api/v1/connection_tables/test",
            hanging_sse_table(port, "second"),
        )
        .await;
    assert_eq!(second.status, 429);
    assert_eq!(second.json()["code"], "too_many_tests");
    // So are the other calls that connect.
    let infer = app
        .post(
            "/api/v1/connection_tables/schemas/infer",
            json!({"table": hanging_sse_table(port, "third"), "limit": 5}),
        )
        .await;
    assert_eq!(infer.status, 429);
    // The client leaving ends the first test and frees its place.
    drop(body);
    let mut freed = false;
    for _ in 0..50 {
        let r = app
            .post("/api/v1/connection_profiles/test", json!({"name": "r", "connector": "redis", "config": {"address": "redis://127.0.0.1:1"}}))
            .await;
        if r.status == 200 {
            freed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(freed, "the place was not given back");
}
