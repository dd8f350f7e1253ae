//! Health, the connector catalog, Arroyo's pipeline-side endpoints (empty: Tributary runs
//! no pipelines), query validation, `POST /sql` and the OpenAPI document.

use crate::json::{ApiJson, ApiQuery};
use crate::reply::{Answer, json, json_bytes};
use crate::state::AppState;
use axum::extract::State;
use axum::http::HeaderMap;
use tributary_api::{
    ApplyPost, ConnectorCollection, EmptyCollection, EmptyPage, ErrorResp, GlobalUdfCollection,
    PaginationQueryParams, PlanPost, QueryValidationResult, SqlPost, SqlResponse,
    ValidateQueryPost,
};

/// Whether the server is up.
#[utoipa::path(get, path = "/v1/ping", tag = "system",
    responses((status = 200, description = "Always \"Pong\"", body = String)))]
pub(crate) async fn ping() -> Answer {
    Ok(json(&"Pong"))
}

/// The functions declared with `CREATE FUNCTION`, as Arroyo's global UDFs.
#[utoipa::path(get, path = "/v1/udfs", tag = "udfs",
    responses((status = 200, body = GlobalUdfCollection)))]
pub(crate) async fn udfs(State(state): State<AppState>) -> Answer {
    Ok(json(&tributary_api::list_udfs(&state.session)?))
}

/// Jobs: none (Tributary runs no pipelines).
#[utoipa::path(get, path = "/v1/jobs", tag = "pipelines",
    responses((status = 200, body = EmptyCollection)))]
pub(crate) async fn jobs() -> Answer {
    Ok(json(&EmptyCollection { data: vec![] }))
}

/// Pipelines: none (Tributary runs no pipelines).
#[utoipa::path(get, path = "/v1/pipelines", tag = "pipelines",
    params(PaginationQueryParams),
    responses((status = 200, body = EmptyPage), (status = 400, body = ErrorResp)))]
pub(crate) async fn pipelines(ApiQuery(params): ApiQuery<PaginationQueryParams>) -> Answer {
    // Accepted for Arroyo's clients; there is nothing to page through.
    let _ = params;
    Ok(json(&EmptyPage {
        data: vec![],
        has_more: false,
    }))
}

/// Every connector, with its table and profile JSON Schemas as text.
#[utoipa::path(get, path = "/v1/connectors", tag = "connectors",
    responses((status = 200, body = ConnectorCollection)))]
pub(crate) async fn connectors(State(state): State<AppState>) -> Answer {
    Ok(json_bytes(state.connectors.clone()))
}

/// Check statements against the catalog, as `tributary check` does (nothing stored,
/// nothing connected); a `graph` in the answer means the query is valid.
#[utoipa::path(post, path = "/v1/pipelines/validate_query", tag = "pipelines",
    request_body = ValidateQueryPost,
    responses((status = 200, body = QueryValidationResult), (status = 400, body = ErrorResp)))]
pub(crate) async fn validate_query(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ValidateQueryPost>,
) -> Answer {
    Ok(json(
        &tributary_api::validate_query(&state.session, &post).await?,
    ))
}

/// What would make the catalog match SQL files (`tributary plan`): each object to
/// create, change, replace or drop, option by option; secrets compared, never shown.
/// Nothing is stored.
#[utoipa::path(post, path = "/v1/plan", tag = "sql",
    request_body = PlanPost,
    responses((status = 200, description = "The plan: changes and summary", body = Object),
        (status = 400, body = ErrorResp), (status = 403, body = ErrorResp),
        (status = 429, body = ErrorResp)))]
pub(crate) async fn plan(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<PlanPost>,
) -> Answer {
    Ok(json(
        &tributary_api::plan_files(&state.session, &post).await?,
    ))
}

/// Make the catalog hold what SQL files describe, in one atomic batch (`tributary
/// apply`): the plan carried out, `applied: true` and the catalog's new `fingerprint`.
/// On any failure nothing is applied. With a `fingerprint` from `POST /plan`, applying
/// is refused if the catalog has changed since that plan.
#[utoipa::path(post, path = "/v1/apply", tag = "sql",
    request_body = ApplyPost,
    responses((status = 200, description = "The plan carried out: changes, summary, applied, fingerprint, notes", body = Object),
        (status = 400, body = ErrorResp), (status = 403, body = ErrorResp),
        (status = 409, body = ErrorResp), (status = 429, body = ErrorResp)))]
pub(crate) async fn apply(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ApplyPost>,
) -> Answer {
    Ok(json(
        &tributary_api::apply_files(&state.session, &post).await?,
    ))
}

/// Run (or check) SQL statements, as `tributary run -c` (or `check`) does. With `Accept:
/// application/x-ndjson` (or `text/event-stream`) the answer streams: each query's rows
/// as they arrive, as `SqlEvent`s, and closing the request cancels the script.
#[utoipa::path(post, path = "/v1/sql", tag = "sql",
    request_body = SqlPost,
    responses((status = 200, description = "Each statement's result; failures are in the results. Streamed: one SqlEvent per line (NDJSON) or per server-sent event", body = SqlResponse),
        (status = 400, body = ErrorResp)))]
pub(crate) async fn sql(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(post): ApiJson<SqlPost>,
) -> Answer {
    if let Some(kind) = crate::sql_stream::requested(&headers) {
        // The stream holds its slot among the requests that run SQL until it ends.
        let events = tributary_api::stream_sql(state.session.clone(), post).await?;
        return Ok(crate::sql_stream::response(kind, events));
    }
    Ok(json(&tributary_api::run_sql(&state.session, &post).await?))
}

/// This API's OpenAPI 3.1 document.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "system",
    responses((status = 200, description = "The OpenAPI document", body = Object)))]
pub(crate) async fn openapi_json() -> Answer {
    Ok(json(&crate::openapi::openapi()))
}
