//! Tributary's REST API server: Arroyo's routes and shapes over the same library the CLI
//! uses. This crate routes, authenticates, bounds and encodes; every rule about profiles
//! and tables lives in `tributary_sql` (its `api` module and `Session`).
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use std::sync::Arc;
//! use tributary_catalog::OverlayStore;
//! use tributary_server::{Auth, ServerConfig, router};
//! use tributary_sql::Session;
//!
//! let session = Arc::new(Session::new(Arc::new(OverlayStore::in_memory())));
//! let config = ServerConfig::new(Auth::tokens(["s3cret"]));
//! let app = router(session, config);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! axum::serve(listener, app).await
//! # }
//! ```

mod auth;
mod cache;
mod console;
mod handlers;
mod json;
mod logging;
mod openapi;
mod reply;
mod routes;
mod serve;
mod sql_stream;
mod sse;
mod state;

pub use auth::{Auth, AuthError};
pub use console::shipped_bytes;
pub use logging::{LogFormat, init_logging};
pub use openapi::openapi;
pub use routes::{router, routes};
pub use serve::{ConnectionTimeouts, Stopped, serve};
pub use state::ServerConfig;
