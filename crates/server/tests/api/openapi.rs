//! The OpenAPI document against the routes: every served route is documented, and
//! every documented path is served.

use crate::common::app;
use std::collections::BTreeSet;
use tributary_server::{openapi, routes};

#[tokio::test]
async fn the_document_and_the_routes_agree() {
    let doc = serde_json::to_value(openapi()).unwrap();
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let path = path
                .strip_prefix("/v1")
                .unwrap_or_else(|| panic!("{path} is not under /v1"));
            documented.insert((method.to_uppercase(), path.to_string()));
        }
    }
    let served: BTreeSet<(String, String)> = routes()
        .iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(documented, served);
    // Every documented path is served under both prefixes, with the document's method.
    let app = app();
    for (method, path) in &documented {
        for prefix in ["/api/v1", "/v1"] {
            let uri = format!("{prefix}{}", path.replace("{id}", "missing"));
            let body = (method != "GET" && method != "DELETE").then(|| serde_json::json!({}));
            let r = app.call(method, &uri, body).await;
            assert!(!r.text().contains("No route for"), "{method} {uri}");
            assert_ne!(r.status, 405, "{method} {uri}");
        }
    }
    // The document is served.
    let served_doc = app.get("/api/v1/openapi.json").await.json();
    assert_eq!(served_doc, doc);
    for schema in [
        "ConnectionTableView",
        "ConnectionProfilePost",
        "ErrorResp",
        "TestSourceMessage",
    ] {
        assert!(doc["components"]["schemas"][schema].is_object(), "{schema}");
    }
}
