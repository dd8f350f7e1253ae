//! Request bodies and query strings, bounded and explained: a body must say it is JSON
//! (415 otherwise), fit the size limit (413), nest at most `MAX_JSON_DEPTH` deep, parse
//! (400 with the line and column) and fit the request's type (400 naming the field).

use crate::reply::Failure;
use crate::state::AppState;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use tributary_api::{ApiError, ApiStatus};
use tributary_types::limits::MAX_JSON_DEPTH;

/// A JSON request body of type `T`.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub T);

impl<T: DeserializeOwned + Send> FromRequest<AppState> for ApiJson<T> {
    type Rejection = Failure;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Failure> {
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if essence != "application/json" && !essence.ends_with("+json") {
            let said = if content_type.is_empty() {
                "no content type".to_string()
            } else {
                format!(
                    "content type '{}'",
                    tributary_types::limits::shorten(content_type)
                )
            };
            return Err(Failure(
                ApiError::new(
                    ApiStatus::UnsupportedMediaType,
                    "unsupported_media_type",
                    format!("the request body must be JSON, but it has {said}"),
                )
                .with_hint("Send the header 'Content-Type: application/json'."),
            ));
        }
        let limit = state.config.max_body_bytes;
        let within = state.config.timeouts.body_read;
        let read = tokio::time::timeout(within, axum::body::to_bytes(req.into_body(), limit));
        let Ok(read) = read.await else {
            return Err(Failure(
                ApiError::new(
                    ApiStatus::BadRequest,
                    "body_timeout",
                    format!(
                        "the request body did not arrive within {} s",
                        within.as_secs_f64()
                    ),
                )
                .with_hint("Send the whole body at once."),
            ));
        };
        let bytes = read.map_err(|_| {
            Failure(
                ApiError::new(
                    ApiStatus::PayloadTooLarge,
                    "payload_too_large",
                    format!("the request body is larger than the limit of {limit} bytes"),
                )
                .with_hint("Send a smaller body; a large schema belongs in a schema registry."),
            )
        })?;
        parse(&bytes).map(ApiJson).map_err(Failure)
    }
}

/// Parse a body, checking its depth first.
pub(crate) fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if let Some(at) = too_deep(bytes) {
        let (line, column) = position(bytes, at);
        return Err(ApiError::new(
            ApiStatus::BadRequest,
            "too_deep",
            format!(
                "the request body nests arrays and objects more than {MAX_JSON_DEPTH} deep (line {line}, column {column})"
            ),
        )
        .with_hint("Flatten the body; no valid request nests this deep."));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| body_error(&e))?;
    de.end().map_err(|e| {
        ApiError::new(
            ApiStatus::BadRequest,
            "invalid_json",
            format!("the request body is not valid JSON: {e}"),
        )
    })?;
    Ok(value)
}

fn body_error(e: &serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let inner = e.inner();
    let path = e.path().to_string();
    match inner.classify() {
        serde_json::error::Category::Data => {
            let at = if path == "." {
                String::new()
            } else {
                format!("{path}: ")
            };
            ApiError::body(format!("{at}{inner}"))
                .with_hint("Compare the body with the request's shape in /api/v1/openapi.json.")
        }
        _ => ApiError::new(
            ApiStatus::BadRequest,
            "invalid_json",
            format!("the request body is not valid JSON: {inner}"),
        ),
    }
}

/// The offset at which nesting first passes the limit, if it does.
fn too_deep(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(i);
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn position(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at.min(bytes.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|b| **b != b'\n').count() + 1;
    (line, column)
}

/// Query parameters of type `T`.
#[derive(Debug)]
pub(crate) struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = Failure;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Failure> {
        let query = parts.uri.query().unwrap_or("");
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| ApiQuery(q.0))
            .map_err(|e| {
                Failure(
                    ApiError::body(format!(
                        "invalid query string '{}': {}",
                        tributary_types::limits::shorten(query),
                        std::error::Error::source(&e)
                            .map(ToString::to_string)
                            .unwrap_or_else(|| e.to_string())
                    ))
                    .with_hint("limit is a positive integer; starting_after is a table id."),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        n: u32,
    }

    #[test]
    fn depth_is_counted_outside_strings_only() {
        let deep = format!(
            "{}{}",
            "[".repeat(MAX_JSON_DEPTH + 1),
            "]".repeat(MAX_JSON_DEPTH + 1)
        );
        assert!(too_deep(deep.as_bytes()).is_some());
        let quoted = format!("\"{}\"", "[".repeat(10_000));
        assert!(too_deep(quoted.as_bytes()).is_none());
        let escaped = format!("\"\\\"{}\"", "[".repeat(10_000));
        assert!(too_deep(escaped.as_bytes()).is_none());
    }

    #[test]
    fn errors_say_where() {
        let e = parse::<Body>(b"{\"name\": \"a\",\n \"n\": \"x\"}").unwrap_err();
        assert_eq!(e.code, "invalid_body");
        assert!(e.message.starts_with("n: invalid type"), "{}", e.message);
        let e = parse::<Body>(b"{\"name\": ").unwrap_err();
        assert_eq!(e.code, "invalid_json");
        assert!(e.message.contains("line 1"), "{}", e.message);
        let e = parse::<Body>(b"{\"name\": \"a\", \"n\": 1} trailing").unwrap_err();
        assert_eq!(e.code, "invalid_json");
    }
}
