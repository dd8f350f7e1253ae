//! The accept loop `tributary serve` runs: every connection is bounded in time (headers
//! must arrive within a few seconds, an idle keep-alive connection is closed), and a
//! stop signal ends it gracefully but boundedly: no new connection is accepted, requests
//! in flight get a grace period, and what is still running after it is cancelled.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a connection may take at each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionTimeouts {
    /// A request's headers must arrive within this, from the connection's first byte or
    /// the end of the previous request (so an idle keep-alive connection is closed too).
    pub header_read: Duration,
    /// A request's body must arrive within this.
    pub body_read: Duration,
}

impl Default for ConnectionTimeouts {
    fn default() -> Self {
        Self {
            header_read: Duration::from_secs(5),
            body_read: Duration::from_secs(30),
        }
    }
}

/// How serving ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// Every request in flight finished within the grace period.
    Drained,
    /// Some were still running after the grace period, and were cancelled.
    Cancelled,
}

/// Serve `app` on `listener` until `stop` completes, then let requests in flight finish
/// for at most `grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    timeouts: ConnectionTimeouts,
    stop: impl Future<Output = ()>,
    grace: Duration,
) -> Stopped {
    let graceful = GracefulShutdown::new();
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header_read)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(timeouts.header_read))
        .keep_alive_timeout(timeouts.header_read);
    let mut stop = std::pin::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors, say: wait a moment rather than spin.
                        tracing::warn!(error = %e, "cannot accept a connection");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let service = TowerToHyperService::new(app.clone());
                let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            () = &mut stop => break,
        }
    }
    drop(listener);
    match tokio::time::timeout(grace, graceful.shutdown()).await {
        Ok(()) => Stopped::Drained,
        Err(_) => Stopped::Cancelled,
    }
}
