//! Structured logs through `tracing`: one line per request (method, path, status,
//! latency) and the server's own events. Paths are logged without their query strings,
//! and bodies never, so no secret reaches a log.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable text.
    Text,
    /// One JSON object per line.
    Json,
}

/// Send `tracing` events to standard error, filtered by `RUST_LOG` (default `info`).
/// Calling it twice keeps the first setup.
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(false).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// The middleware writing each request's line.
pub(crate) async fn log_request(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16();
    let latency_us = started.elapsed().as_micros() as u64;
    tracing::info!(
        target: "tributary::request",
        method = %method,
        path = %tributary_types::limits::shorten(&path),
        status,
        latency_ms = latency_us as f64 / 1000.0,
        "request"
    );
    response
}
