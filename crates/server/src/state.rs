//! What every handler shares: the session, the configuration and the limits' state.

use crate::auth::Auth;
use crate::cache::PageCache;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tributary_sql::Session;
use tributary_types::limits::{MAX_CONCURRENT_TESTS, MAX_REQUEST_BYTES, MAX_TEST_SECONDS};

/// A server's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// How requests are authenticated.
    pub auth: Auth,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Connection tests (and completions, inference, tested creates) run at once.
    pub max_concurrent_tests: usize,
    /// The longest a connection test may stream.
    pub max_test_duration: Duration,
}

impl ServerConfig {
    /// The defaults of `tributary_types::limits`, with `auth`.
    pub fn new(auth: Auth) -> Self {
        Self {
            auth,
            max_body_bytes: MAX_REQUEST_BYTES,
            max_concurrent_tests: MAX_CONCURRENT_TESTS,
            max_test_duration: Duration::from_secs(MAX_TEST_SECONDS),
        }
    }
}

/// The handlers' state.
#[derive(Clone)]
pub(crate) struct AppState {
    pub session: Arc<Session>,
    pub config: Arc<ServerConfig>,
    pub tests: Arc<Semaphore>,
    pub cache: Arc<PageCache>,
    /// `GET /connectors`, rendered once.
    pub connectors: bytes::Bytes,
}
