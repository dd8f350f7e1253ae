//! The request handlers, one file per resource. Each extracts, calls `tributary_sql::api`
//! and encodes; none holds a rule of its own.

pub(crate) mod misc;
pub(crate) mod profiles;
pub(crate) mod tables;

use crate::reply::Failure;
use crate::state::AppState;
use tokio::sync::OwnedSemaphorePermit;
use tributary_sql::api::{ApiError, ApiStatus};

/// A place among the connection tests and streamed queries running at once (each holds
/// connections to a system), or 429.
pub(crate) fn test_slot(state: &AppState) -> Result<OwnedSemaphorePermit, Failure> {
    state.tests.clone().try_acquire_owned().map_err(|_| {
        Failure(
            ApiError::new(
                ApiStatus::TooManyRequests,
                "too_many_tests",
                format!(
                    "{} connection tests or streamed queries are already running, the most this server runs at once",
                    state.config.max_concurrent_tests
                ),
            )
            .with_hint("Try again when one has finished."),
        )
    })
}
