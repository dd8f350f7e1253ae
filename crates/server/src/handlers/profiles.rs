//! `/connection_profiles`.

use super::test_slot;
use crate::json::ApiJson;
use crate::reply::{Answer, empty, json};
use crate::state::AppState;
use axum::extract::{Path, State};
use tributary_api::{
    ConnectionAutocompleteResp, ConnectionProfileCollection, ConnectionProfilePatch,
    ConnectionProfilePost, ConnectionProfileView, ErrorResp, TestSourceMessage,
};

/// Every profile, most recently changed first.
#[utoipa::path(get, path = "/v1/connection_profiles", tag = "connection_profiles",
    responses((status = 200, body = ConnectionProfileCollection)))]
pub(crate) async fn list(State(state): State<AppState>) -> Answer {
    Ok(json(&tributary_api::list_profiles(&state.session)?))
}

/// Create a profile (`CREATE CONNECTION PROFILE`); its connection is tested first
/// unless the body says `validate: false`.
#[utoipa::path(post, path = "/v1/connection_profiles", tag = "connection_profiles",
    request_body = ConnectionProfilePost,
    responses((status = 200, body = ConnectionProfileView), (status = 400, body = ErrorResp),
        (status = 403, body = ErrorResp), (status = 409, body = ErrorResp),
        (status = 429, body = ErrorResp)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ConnectionProfilePost>,
) -> Answer {
    let _slot = match post.validate {
        Some(false) => None,
        _ => Some(test_slot(&state).await?),
    };
    Ok(json(
        &tributary_api::create_profile(&state.session, &post).await?,
    ))
}

/// Test a profile's connection without storing it: one JSON message, or with
/// `Accept: text/event-stream` each stage's event as it ends, then the verdict.
#[utoipa::path(post, path = "/v1/connection_profiles/test", tag = "connection_profiles",
    request_body = ConnectionProfilePost,
    responses((status = 200, body = TestSourceMessage), (status = 400, body = ErrorResp),
        (status = 429, body = ErrorResp)))]
pub(crate) async fn test(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    ApiJson(post): ApiJson<ConnectionProfilePost>,
) -> Answer {
    let slot = test_slot(&state).await?;
    let streamed = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"));
    if streamed {
        let (first, stream) = tributary_api::test_profile_stream(
            state.session.clone(),
            &post,
            state.config.max_test_duration,
        )
        .await?;
        return Ok(crate::sse::events(first, stream, slot));
    }
    let answer = json(&tributary_api::test_profile(&state.session, &post).await?);
    drop(slot);
    Ok(answer)
}

/// One profile, by id or name.
#[utoipa::path(get, path = "/v1/connection_profiles/{id}", tag = "connection_profiles",
    params(("id" = String, Path, description = "The profile's id (cp_...) or name")),
    responses((status = 200, body = ConnectionProfileView), (status = 404, body = ErrorResp)))]
pub(crate) async fn get(State(state): State<AppState>, Path(id): Path<String>) -> Answer {
    Ok(json(&tributary_api::get_profile(&state.session, &id)?))
}

/// Change a profile's settings (`ALTER CONNECTION PROFILE ... SET`; `null` removes a
/// setting); refused if a table using the profile would break.
#[utoipa::path(patch, path = "/v1/connection_profiles/{id}", tag = "connection_profiles",
    params(("id" = String, Path, description = "The profile's id (cp_...) or name")),
    request_body = ConnectionProfilePatch,
    responses((status = 200, body = ConnectionProfileView), (status = 400, body = ErrorResp),
        (status = 403, body = ErrorResp), (status = 404, body = ErrorResp),
        (status = 409, body = ErrorResp), (status = 429, body = ErrorResp)))]
pub(crate) async fn patch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<ConnectionProfilePatch>,
) -> Answer {
    Ok(json(
        &tributary_api::patch_profile(&state.session, &id, &patch).await?,
    ))
}

/// Delete a profile (`DROP CONNECTION PROFILE`); refused while tables use it.
#[utoipa::path(delete, path = "/v1/connection_profiles/{id}", tag = "connection_profiles",
    params(("id" = String, Path, description = "The profile's id (cp_...) or name")),
    responses((status = 200, description = "Deleted (empty body)"), (status = 404, body = ErrorResp),
        (status = 409, body = ErrorResp)))]
pub(crate) async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> Answer {
    tributary_api::delete_profile(&state.session, &id).await?;
    Ok(empty())
}

/// Names a table of the profile can use (Kafka topics, ...), by table field.
#[utoipa::path(get, path = "/v1/connection_profiles/{id}/autocomplete", tag = "connection_profiles",
    params(("id" = String, Path, description = "The profile's id (cp_...) or name")),
    responses((status = 200, body = ConnectionAutocompleteResp), (status = 400, body = ErrorResp),
        (status = 404, body = ErrorResp), (status = 429, body = ErrorResp)))]
pub(crate) async fn autocomplete(State(state): State<AppState>, Path(id): Path<String>) -> Answer {
    let _slot = test_slot(&state).await?;
    Ok(json(
        &tributary_api::autocomplete(&state.session, &id).await?,
    ))
}
