//! A request's SQL run inside the session's [`Resources`](tributary_exec::resources::Resources):
//! admitted to a slot (or answered 429), bounded by its deadline (or answered 504, its
//! work cancelled) and run on the query threads, so the threads that answer HTTP stay
//! free. A session without resources (an embedder's, the CLI's) runs the work as it is.

use super::error::{ApiError, ApiStatus};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tributary_exec::resources::{Busy, Overrun, Slot};
use tributary_sql::Session;

/// What to do about a request cut off at its deadline.
pub(crate) const DEADLINE_HINT: &str = "Bound the query (LIMIT, SET preview.timeout), or ask for a longer 'deadline' in the request, up to the server's maximum.";

/// A slot for a request that runs SQL or tests a connection, if the session is governed.
pub async fn admit(session: &Session) -> Result<Option<Slot>, ApiError> {
    match session.resources() {
        None => Ok(None),
        Some(r) => r.admit().await.map(Some).map_err(busy),
    }
}

/// The deadline a request asked for, as written ('30 seconds').
pub(crate) fn asked_deadline(text: Option<&str>) -> Result<Option<Duration>, ApiError> {
    let Some(text) = text else { return Ok(None) };
    match tributary_types::parse_interval_micros(text) {
        Ok(us) if us > 0 => Ok(Some(Duration::from_micros(us as u64))),
        Ok(_) => Err(ApiError::body("deadline must be longer than zero")),
        Err(e) => Err(ApiError::body(format!(
            "deadline '{}' is not a duration: {e}",
            tributary_types::limits::shorten(text)
        ))
        .with_hint("Write the deadline as '30 seconds' or '2 minutes'.")),
    }
}

/// The deadline a request runs with, once the server's maximum allows it.
pub(crate) fn deadline(
    session: &Session,
    asked: Option<Duration>,
) -> Result<Option<Duration>, ApiError> {
    match session.resources() {
        None => Ok(asked),
        Some(r) => r.deadline(asked).map(Some).map_err(ApiError::body),
    }
}

/// Run `work` (given the session) inside the session's resources: in a slot, on the
/// query threads, within the deadline asked for (or the server's).
pub(crate) async fn governed<T, Fut>(
    session: &Arc<Session>,
    asked: Option<Duration>,
    work: impl FnOnce(Arc<Session>) -> Fut,
) -> Result<T, ApiError>
where
    T: Send + 'static,
    Fut: Future<Output = T> + Send + 'static,
{
    let Some(resources) = session.resources() else {
        return Ok(work(Arc::clone(session)).await);
    };
    let limit = resources.deadline(asked).map_err(ApiError::body)?;
    let _slot = resources.admit().await.map_err(busy)?;
    resources
        .run(limit, work(Arc::clone(session)))
        .await
        .map_err(overrun)
}

/// 429 for a full server.
pub(crate) fn busy(b: Busy) -> ApiError {
    ApiError::new(
        ApiStatus::TooManyRequests,
        "too_many_queries",
        b.to_string(),
    )
    .with_hint("Try again in a moment, when a running query or test has finished.")
}

/// 504 for a request past its deadline (500 for a crashed one).
pub(crate) fn overrun(o: Overrun) -> ApiError {
    match o {
        Overrun::Deadline(_) => ApiError::new(
            ApiStatus::DeadlineExceeded,
            "deadline_exceeded",
            o.to_string(),
        )
        .with_hint(DEADLINE_HINT),
        Overrun::Crashed => ApiError::internal(o.to_string()),
    }
}
