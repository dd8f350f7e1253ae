//! `tributary arroyo push` to an API shaped as Arroyo's: its tables have no generated
//! columns or watermark, so a table pushed with them arrives incomplete, and push says so
//! table by table (and never `unchanged` about it), while a table it holds whole is
//! created and then unchanged.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tributary_api::arroyo_sync::{PushOptions, SyncOutcome, push};
use tributary_catalog::{CatalogStore, OverlayStore};
use tributary_sql::Session;

/// What the fake API holds: profiles and tables as Arroyo shows them.
#[derive(Default)]
struct Held {
    profiles: Vec<Value>,
    tables: Vec<Value>,
}

type Shared = Arc<Mutex<Held>>;

async fn list_profiles(State(h): State<Shared>) -> Json<Value> {
    Json(json!({"data": h.lock().unwrap().profiles, "hasMore": false}))
}

async fn create_profile(State(h): State<Shared>, Json(body): Json<Value>) -> Json<Value> {
    let mut held = h.lock().unwrap();
    let made = json!({
        "id": format!("cp_{}", held.profiles.len()),
        "name": body["name"],
        "connector": body["connector"],
        "config": body["config"],
        "description": "",
    });
    held.profiles.push(made.clone());
    Json(made)
}

async fn list_tables(State(h): State<Shared>) -> Json<Value> {
    Json(json!({"data": h.lock().unwrap().tables, "hasMore": false}))
}

/// Arroyo's table shape: name, connector, profile, config and schema; nothing else of
/// the body is kept.
async fn create_table(State(h): State<Shared>, Json(body): Json<Value>) -> Json<Value> {
    let mut held = h.lock().unwrap();
    let profile = body["connection_profile_id"]
        .as_str()
        .and_then(|id| held.profiles.iter().find(|p| p["id"] == id).cloned());
    let made = json!({
        "id": format!("ct_{}", held.tables.len()),
        "name": body["name"],
        "connector": body["connector"],
        "connectionProfile": profile,
        "config": body["config"],
        "schema": body["schema"],
        "tableType": "source",
        "consumers": 0,
        "created_at": 0,
    });
    held.tables.push(made.clone());
    Json(made)
}

async fn arroyo_shaped_api() -> (String, Shared) {
    let held: Shared = Arc::default();
    let app = Router::new()
        .route(
            "/api/v1/connection_profiles",
            get(list_profiles).post(create_profile),
        )
        .route(
            "/api/v1/connection_tables",
            get(list_tables).post(create_table),
        )
        .with_state(held.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, held)
}

#[tokio::test]
async fn a_table_arroyo_cannot_hold_whole_is_pushed_incomplete_never_unchanged() {
    let store: Arc<dyn CatalogStore> = Arc::new(OverlayStore::in_memory());
    let s = Session::new(store.clone()).offline();
    s.execute(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false); \
         CREATE TABLE plain (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'p', type = 'source', format = 'json'); \
         CREATE TABLE clicks (page TEXT, ts TIMESTAMP NOT NULL, page_len BIGINT GENERATED ALWAYS AS (length(page)), \
           WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) \
         WITH (connector = 'kafka', connection_profile = 'k', topic = 'c', type = 'source', format = 'json')",
    )
    .await
    .unwrap();
    let (url, held) = arroyo_shaped_api().await;
    let options = PushOptions::default();

    let report = push(store.as_ref(), &url, &options).await.unwrap();
    let outcome = |name: &str| {
        report
            .items
            .iter()
            .find(|i| i.name == name)
            .unwrap_or_else(|| panic!("no {name} in {report:?}"))
            .clone()
    };
    assert!(matches!(
        outcome("plain").outcome,
        SyncOutcome::Created { .. }
    ));
    let clicks = outcome("clicks");
    let SyncOutcome::Incomplete { lost, .. } = &clicks.outcome else {
        panic!("{clicks}");
    };
    assert_eq!(lost, &vec!["generated columns", "watermark"]);
    assert!(
        clicks.to_string().contains(
            "created without its generated columns, watermark, which the target cannot hold"
        ),
        "{clicks}"
    );
    assert!(
        clicks
            .notes
            .iter()
            .any(|n| n.contains("declare them in the pipeline's query")),
        "{clicks}"
    );
    assert!(!report.in_sync());
    assert!(
        report.summary().contains("1 incomplete"),
        "{}",
        report.summary()
    );
    assert_eq!(held.lock().unwrap().tables.len(), 2);

    // Pushed again, the table there still lacks them: it differs, never "unchanged".
    let report = push(store.as_ref(), &url, &options).await.unwrap();
    let again = report.items.iter().find(|i| i.name == "clicks").unwrap();
    assert!(
        matches!(&again.outcome, SyncOutcome::Differs { parts } if parts == &vec!["generated columns", "watermark"]),
        "{again}"
    );
    let plain = report.items.iter().find(|i| i.name == "plain").unwrap();
    assert!(
        matches!(plain.outcome, SyncOutcome::Unchanged { .. }),
        "{plain}"
    );
    assert!(!report.in_sync());
}
