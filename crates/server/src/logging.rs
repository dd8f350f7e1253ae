//! Structured logs through `tracing`: one line per request (method, path, status,
//! latency) and the server's own events. Paths are logged without their query strings,
//! and bodies never; and every line, whichever library wrote it and at whatever level,
//! passes the one redaction path before it reaches standard error, so no secret reaches
//! a log.

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
        .with_writer(RedactedLine::default)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(false).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// One log line on its way to standard error: collected, then written redacted (a
/// formatter writes a line in pieces, and a secret may straddle two).
#[derive(Default)]
struct RedactedLine(Vec<u8>);

impl std::io::Write for RedactedLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactedLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.0);
        let line = tributary_types::redact_text(&text);
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
    }
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
