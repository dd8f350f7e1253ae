//! The request handlers, one file per resource. Each extracts, calls `tributary_api`
//! and encodes; none holds a rule of its own.

pub(crate) mod misc;
pub(crate) mod profiles;
pub(crate) mod tables;

use crate::reply::Failure;
use crate::state::AppState;
use tokio::sync::OwnedSemaphorePermit;
use tributary_api::{ApiError, ApiStatus};
use tributary_sql::resources::Slot;

/// What a connection test holds while it runs: a place among the tests (each holds
/// connections to a system) and a slot among everything that runs SQL.
#[derive(Debug)]
pub(crate) struct TestSlot {
    _test: OwnedSemaphorePermit,
    _slot: Option<Slot>,
}

/// A place among the connection tests and a slot among the requests that run SQL, or 429.
pub(crate) async fn test_slot(state: &AppState) -> Result<TestSlot, Failure> {
    let test = state.tests.clone().try_acquire_owned().map_err(|_| {
        Failure(
            ApiError::new(
                ApiStatus::TooManyRequests,
                "too_many_tests",
                format!(
                    "{} connection tests are already running, the most this server runs at once",
                    state.config.max_concurrent_tests
                ),
            )
            .with_hint("Try again when one has finished."),
        )
    })?;
    let slot = tributary_api::admit(&state.session)
        .await
        .map_err(Failure)?;
    Ok(TestSlot {
        _test: test,
        _slot: slot,
    })
}
