//! What every handler shares: the session, the configuration and the limits' state.

use crate::auth::Auth;
use crate::cache::PageCache;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tributary_sql::Session;
use tributary_sql::resources::QueryLimits;
use tributary_types::access::{Access, Confinement};
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
    /// How long a connection may take to send its headers and body.
    pub timeouts: crate::serve::ConnectionTimeouts,
    /// The memory, slots, deadlines and threads every request that runs SQL gets.
    pub limits: QueryLimits,
    /// The files, variables and addresses statements may reach: by default no local
    /// file, only `TRIBUTARY_VAR_*` variables, and no link-local address.
    pub access: Access,
}

impl ServerConfig {
    /// The defaults of `tributary_types::limits`, with `auth`.
    pub fn new(auth: Auth) -> Self {
        Self {
            auth,
            max_body_bytes: MAX_REQUEST_BYTES,
            max_concurrent_tests: MAX_CONCURRENT_TESTS,
            max_test_duration: Duration::from_secs(MAX_TEST_SECONDS),
            timeouts: Default::default(),
            limits: QueryLimits::for_this_machine(),
            access: Access::confined(&Confinement::default())
                .unwrap_or_else(|_| Access::unrestricted()),
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
