//! Answers: JSON bodies, the empty 200 Arroyo gives for deletions, and failures as
//! `{"error": ..., "code": ..., ...}` with their HTTP status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use tributary_api::ApiError;

/// A failed request.
#[derive(Debug)]
pub(crate) struct Failure(pub ApiError);

impl From<ApiError> for Failure {
    fn from(e: ApiError) -> Self {
        Failure(e)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status.code()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::error!(code = self.0.code, error = %self.0.message, "request failed");
        }
        let mut r = json(&self.0.body_json());
        *r.status_mut() = status;
        r
    }
}

/// `value` as a JSON answer.
pub(crate) fn json<T: Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => json_bytes(Bytes::from(bytes)),
        Err(e) => {
            tracing::error!(error = %e, "cannot encode an answer");
            let mut r = (
                StatusCode::INTERNAL_SERVER_ERROR,
                r#"{"error":"the answer cannot be encoded","code":"internal"}"#,
            )
                .into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            r
        }
    }
}

/// Already-encoded JSON.
pub(crate) fn json_bytes(bytes: Bytes) -> Response {
    let mut r = bytes.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// 200 with an empty body (`Content-Length: 0`), as Arroyo answers deletions.
pub(crate) fn empty() -> Response {
    StatusCode::OK.into_response()
}

/// What handlers return.
pub(crate) type Answer = Result<Response, Failure>;
