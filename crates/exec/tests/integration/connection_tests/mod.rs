//! TEST CONNECTION PROFILE, TEST TABLE and validating CREATE statements against real
//! systems on this machine, one module per connector family: each failure mode has its
//! stage and code checked. A missing service fails the tests; it does not skip them.
//! The peers other test modules share (the Kafka mock cluster, an HTTP server, RabbitMQ
//! streams, the WebSocket server) are re-exported here.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod files;
mod guarded;
mod http;
mod kafka;
mod mqtt;
mod nats;
mod progress;
mod rabbitmq;
mod redis;
mod websocket;

pub(crate) use kafka::mock_cluster;
pub(crate) use rabbitmq::{rabbitmq_api, rabbitmq_stream};
pub(crate) use websocket::{WEBSOCKET_SUBSCRIPTION, websocket_server};

use axum::Router;
use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::{Output, Session, StatementResult};
use tributary_types::Severity;

/// A session over an in-memory catalog.
fn session() -> Session {
    Session::new(Arc::new(OverlayStore::in_memory()))
}

/// The error of a statement that must fail, as "message | help".
async fn error_of(session: &Session, sql: &str) -> String {
    let e = session.execute(sql).await.unwrap_err();
    let d = &e.diagnostics[0];
    format!("{} | {}", d.message, d.help.clone().unwrap_or_default())
}

/// Rows of a result as space-joined cells.
fn rows(r: &StatementResult) -> Vec<String> {
    let Output::Rows { batches, .. } = &r.output else {
        panic!("no rows")
    };
    let b = &batches[0];
    (0..b.num_rows())
        .map(|i| {
            (0..b.num_columns())
                .map(|c| {
                    datafusion::arrow::util::display::ArrayFormatter::try_new(
                        b.column(c).as_ref(),
                        &Default::default(),
                    )
                    .unwrap()
                    .value(i)
                    .to_string()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A sampled table's result carries a warning for a message that did not decode.
fn assert_a_message_was_undecodable(r: &StatementResult) {
    assert!(
        r.warnings
            .iter()
            .any(|w| w.severity == Severity::Warning && w.message.contains("could not be decoded")),
        "{:?}",
        r.warnings
    );
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Serve `app` on a free port of 127.0.0.1 until the test process ends; its base URL.
pub(crate) async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}
