//! HTTP and SSE tables against servers the tests start on 127.0.0.1, each failure
//! classified.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use super::*;
use axum::response::IntoResponse;
use axum::routing::get;

#[tokio::test]
async fn http_tables_are_requested_and_classified() {
    let app = Router::new()
        .route("/orders", get(|| async { r#"{"id": 5, "name": "x"}"# }))
        .route(
            "/private",
            get(|headers: axum::http::HeaderMap| async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer good") {
                    (axum::http::StatusCode::OK, r#"{"id": 1}"#).into_response()
                } else {
                    axum::http::StatusCode::UNAUTHORIZED.into_response()
                }
            }),
        )
        .route(
            "/events",
            get(|| async {
                (
                    [("content-type", "text/event-stream")],
                    "event: order\ndata: {\"id\": 1}\n\nevent: ping\ndata: {}\n\nevent: order\ndata: {\"id\": 2}\n\n",
                )
            }),
        )
        .route("/hook", axum::routing::post(|| async { "ok" }))
        .route(
            "/idle",
            get(|| async {
                let stream = futures::stream::pending::<Result<String, std::io::Error>>();
                ([("content-type", "text/event-stream")], axum::body::Body::from_stream(stream))
            }),
        );
    let base = serve(app).await;
    let s = session();
    let create = |name: &str, connector: &str, path: &str, extra: &str| {
        format!(
            "CREATE TABLE {name} (id BIGINT, name TEXT) WITH (connector = '{connector}', endpoint = '{base}{path}', format = 'json'{extra})"
        )
    };
    s.execute(&create("polled", "polling_http", "/orders", ""))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE polled").await.unwrap();
    assert_eq!(rows(&t[0]), ["5 x"]);
    s.execute(&create(
        "denied",
        "polling_http",
        "/private",
        ", headers = 'Authorization: Bearer bad'",
    ))
    .await
    .unwrap();
    let e = error_of(&s, "TEST TABLE denied").await;
    assert!(
        e.contains("failed at stage 'authenticate' [AUTH_FAILED]") && !e.contains("Bearer bad"),
        "{e}"
    );
    s.execute(&create(
        "allowed",
        "polling_http",
        "/private",
        ", headers = 'Authorization: Bearer good'",
    ))
    .await
    .unwrap();
    assert_eq!(
        rows(&s.execute("TEST TABLE allowed").await.unwrap()[0]),
        ["1 "]
    );
    s.execute(&create("missing", "polling_http", "/nope", ""))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE missing").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Server-sent events of the chosen type.
    s.execute(&create("sse", "sse", "/events", ", events = 'order'"))
        .await
        .unwrap();
    assert_eq!(
        rows(&s.execute("TEST TABLE sse").await.unwrap()[0]),
        ["1 ", "2 "]
    );
    // An idle stream: nothing arrives, and the message says why that may be.
    s.execute(&create("idle", "sse", "/idle", ""))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE idle TIMEOUT '300 milliseconds'").await;
    assert!(
        e.contains("failed at stage 'read' [EMPTY]: no events arrived within 300 ms")
            && e.contains("The stream may be idle"),
        "{e}"
    );
    // A webhook sink is reached without posting: its endpoint takes POST only, so the
    // OPTIONS probe is answered 405, which proves it exists.
    s.execute(&format!("CREATE TABLE hook (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/hook', format = 'json')"))
        .await
        .unwrap();
    let t = s.execute("TEST TABLE hook").await.unwrap();
    let r = rows(&t[0]);
    assert!(r.iter().any(|l| l.starts_with("locate passed  ") && l.contains("it answered OPTIONS with 405")), "{r:?}");
    assert!(
        r.iter()
            .any(|l| l.starts_with("write passed  the endpoint is reachable; nothing was posted")),
        "{r:?}"
    );
    s.execute(&format!("CREATE TABLE lost_hook (id BIGINT) WITH (connector = 'webhook', endpoint = '{base}/no-hook', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE lost_hook").await;
    assert!(e.contains("failed at stage 'locate' [NOT_FOUND]"), "{e}");
    // Nothing listening.
    let port = closed_port();
    s.execute(&format!("CREATE TABLE down (id BIGINT) WITH (connector = 'polling_http', endpoint = 'http://127.0.0.1:{port}/x', format = 'json')"))
        .await
        .unwrap();
    let e = error_of(&s, "TEST TABLE down").await;
    assert!(
        e.contains("failed at stage 'connect' [CONNECT_REFUSED]"),
        "{e}"
    );
    // validate = 'sample' tests before storing: a failing table is not created.
    let e = error_of(
        &s,
        &create("v_bad", "polling_http", "/nope", ", validate = 'sample'"),
    )
    .await;
    assert!(e.contains("[NOT_FOUND]"), "{e}");
    assert!(s.store().table_by_name("v_bad").unwrap().is_none());
    let ok = s
        .execute(&create(
            "v_ok",
            "polling_http",
            "/orders",
            ", validate = 'sample'",
        ))
        .await
        .unwrap();
    assert!(
        ok[0]
            .warnings
            .iter()
            .any(|w| w.message.starts_with("read: read a")),
        "{:?}",
        ok[0].warnings
    );
    assert!(s.store().table_by_name("v_ok").unwrap().is_some());
    assert!(
        error_of(
            &s,
            &create("v_odd", "polling_http", "/orders", ", validate = 'always'")
        )
        .await
        .starts_with("invalid value 'always' for option 'validate'")
    );
    let first = rows(&s.execute("TEST TABLE v_ok").await.unwrap()[0]);
    assert_eq!(first, ["5 x"]);
}
