//! `POST /sql` streamed: events in the script's order (NDJSON and SSE), rows as they
//! arrive, and a closed request that cancels its query and closes the source's
//! connection.

use crate::common::{TOKEN, app};
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

fn streamed_request(accept: &str, sql: &str) -> Request<Body> {
    Request::builder()
        .method("POST")
        .uri("/api/v1/sql")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .header("accept", accept)
        .body(Body::from(json!({ "sql": sql }).to_string()))
        .unwrap()
}

#[tokio::test]
async fn ndjson_streams_each_statement_in_order_with_the_rows_between() {
    let app = app();
    let script = "CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '0', message_count = '5');\n\
                  SELECT counter FROM ticks;\nSELEC 1";
    let r = app
        .send(streamed_request("application/x-ndjson", script))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "application/x-ndjson");
    let events: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds[0], "result", "{events:?}");
    assert_eq!(events[0]["tag"], "CREATE TABLE");
    assert_eq!(kinds[1], "columns");
    assert_eq!(events[1]["line"], 2);
    assert_eq!(events[1]["columns"][0]["name"], "counter");
    let streamed: Vec<i64> = events
        .iter()
        .filter(|e| e["event"] == "rows")
        .flat_map(|e| e["rows"].as_array().unwrap().clone())
        .map(|row| row[0].as_i64().unwrap())
        .collect();
    assert_eq!(streamed, [0, 1, 2, 3, 4]);
    let results: Vec<&Value> = events.iter().filter(|e| e["event"] == "result").collect();
    assert_eq!(results.len(), 3, "{events:?}");
    assert_eq!(results[1]["tag"], "SELECT");
    assert_eq!(results[1]["row_count"], 5);
    assert_eq!(results[1]["rows"], json!([]), "rows came as events");
    assert_eq!(results[2]["error"], true);
    assert_eq!(events.last().unwrap()["event"], "summary");
    assert_eq!(events.last().unwrap()["failed"], 1);
}

#[tokio::test]
async fn sse_names_each_event() {
    let app = app();
    let r = app
        .send(streamed_request("text/event-stream", "SELECT 1 AS one"))
        .await;
    assert_eq!(r.status, 200);
    let text = r.text();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names, ["columns", "rows", "result", "summary"], "{text}");
    assert_eq!(r.events()[1]["rows"], json!([[1]]));
}

#[tokio::test]
async fn an_endless_source_streams_without_a_bound_and_a_closed_request_closes_its_connection() {
    // An SSE peer that sends an event every 20 ms and counts its open connections.
    let open = Arc::new(AtomicUsize::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let counter = open.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let open = counter.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                open.fetch_add(1, Ordering::SeqCst);
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n";
                let mut alive = socket.write_all(head.as_bytes()).await.is_ok();
                let mut n = 0u64;
                while alive {
                    let event = format!("data: {{\"n\": {n}}}\n\n");
                    alive = socket.write_all(event.as_bytes()).await.is_ok()
                        && socket.flush().await.is_ok();
                    n += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                open.fetch_sub(1, Ordering::SeqCst);
            });
        }
    });
    let app = app();
    app.sql(&format!(
        "CREATE TABLE feed (n BIGINT) WITH (connector = 'sse', endpoint = 'http://127.0.0.1:{port}/events', format = 'json')"
    ))
    .await;

    // Gathered, the query could never end: refused.
    let whole = app
        .post("/api/v1/sql", json!({"sql": "SELECT n FROM feed"}))
        .await
        .json();
    assert_eq!(whole["results"][0]["error"], true, "{whole}");

    // Streamed, rows arrive while the source runs.
    let response = app
        .router
        .clone()
        .oneshot(streamed_request(
            "application/x-ndjson",
            "SELECT n FROM feed",
        ))
        .await
        .unwrap();
    let mut body = response.into_body();
    let mut text = String::new();
    let mut rows = 0;
    while rows < 3 {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("rows within 10 s")
            .expect("the stream goes on")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
            rows = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["event"] == "rows")
                .map(|e| e["rows"].as_array().unwrap().len())
                .sum::<usize>();
        }
    }
    assert_eq!(
        open.load(Ordering::SeqCst),
        1,
        "the query holds one connection"
    );
    // The client goes away: the query stops and its connection closes.
    drop(body);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while open.load(Ordering::SeqCst) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the source's connection is still open 5 s after the request closed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_streamed_query_holds_a_slot_among_the_requests_that_run_sql() {
    let app = crate::common::app_with(|mut c| {
        c.limits.slots = 1;
        c.limits.max_waiting = 1;
        c.limits.max_wait = Duration::from_millis(500);
        c
    });
    app.sql("CREATE TABLE endless WITH (connector = 'impulse', event_rate = '100')")
        .await;
    let first = app
        .router
        .clone()
        .oneshot(streamed_request(
            "application/x-ndjson",
            "SELECT counter FROM endless",
        ))
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let second = app
        .send(streamed_request("application/x-ndjson", "SELECT 1"))
        .await;
    assert_eq!(second.status, 429);
    assert_eq!(second.json()["code"], "too_many_queries");
    // The place is given back when the client leaves.
    drop(first);
    let third = app
        .send(streamed_request("application/x-ndjson", "SELECT 1 AS one"))
        .await;
    assert_eq!(third.status, 200, "{}", third.text());
}
