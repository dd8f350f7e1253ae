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
        .with_writer(RedactedLine::stderr)
        .with_target(false);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(false).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// One log line on its way out (to standard error): collected, then written redacted (a
/// formatter writes a line in pieces, and a secret may straddle two).
struct RedactedLine<W: std::io::Write> {
    line: Vec<u8>,
    out: W,
}

impl RedactedLine<std::io::Stderr> {
    fn stderr() -> Self {
        Self {
            line: Vec::new(),
            out: std::io::stderr(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for RedactedLine<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<W: std::io::Write> Drop for RedactedLine<W> {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.line);
        let line = tributary_types::redact_text(&text);
        let _ = self.out.write_all(line.as_bytes());
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A buffer every line goes to.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn no_line_carries_a_known_secret_or_a_credential_whoever_logs_it() {
        tributary_types::remember_secret("Logged-Secret-Value");
        let lines = Lines::default();
        let sink = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || RedactedLine {
                line: Vec::new(),
                out: sink.clone(),
            })
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::debug!(target: "some_library", params = ?["Logged-Secret-Value"], "executing");
            tracing::trace!("connecting to redis://bob:pw-in-url@h:6379");
        });
        let text = String::from_utf8_lossy(&lines.0.lock().unwrap_or_else(|p| p.into_inner()))
            .into_owned();
        assert!(text.contains("executing"), "{text}");
        assert!(!text.contains("Logged-Secret-Value"), "{text}");
        assert!(text.contains("redis://********@h:6379"), "{text}");
    }
}
