//! `/connection_tables`.

use super::test_slot;
use crate::json::{ApiJson, ApiQuery};
use crate::reply::{Answer, empty, json, json_bytes};
use crate::state::AppState;
use axum::extract::{OriginalUri, Path, State};
use bytes::Bytes;
use serde_json::Value;
use tributary_api::{
    ConnectionTableCollection, ConnectionTablePatch, ConnectionTablePost, ConnectionTableView,
    ErrorResp, InferredSchema, PaginationQueryParams, SchemaInferPost,
};

/// A cached answer for this request at the catalog's current generation, or a fresh
/// one, kept.
fn cached(
    state: &AppState,
    uri: &axum::http::Uri,
    render: impl FnOnce() -> Result<Vec<u8>, crate::reply::Failure>,
) -> Answer {
    let key = uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    // The generation is read before the catalog: a change in between only makes the
    // entry stale sooner.
    let generation = state.session.store().generation();
    if let Some(b) = state.cache.get(&key, generation) {
        return Ok(json_bytes(b));
    }
    let body = Bytes::from(render()?);
    state.cache.put(key, generation, body.clone());
    Ok(json_bytes(body))
}

fn encode<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, crate::reply::Failure> {
    serde_json::to_vec(v).map_err(|e| {
        tributary_api::ApiError::internal(format!("cannot encode the answer: {e}")).into()
    })
}

/// One page of tables, newest first.
#[utoipa::path(get, path = "/v1/connection_tables", tag = "connection_tables",
    params(PaginationQueryParams),
    responses((status = 200, body = ConnectionTableCollection), (status = 400, body = ErrorResp)))]
pub(crate) async fn list(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    ApiQuery(params): ApiQuery<PaginationQueryParams>,
) -> Answer {
    cached(&state, &uri, || {
        encode(&tributary_api::list_tables(&state.session, &params)?)
    })
}

/// Create a table from Arroyo's body, through `CREATE TABLE`.
#[utoipa::path(post, path = "/v1/connection_tables", tag = "connection_tables",
    request_body = ConnectionTablePost,
    responses((status = 200, body = ConnectionTableView), (status = 400, body = ErrorResp),
        (status = 403, body = ErrorResp), (status = 409, body = ErrorResp)))]
pub(crate) async fn create(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ConnectionTablePost>,
) -> Answer {
    let tests = post.validate.as_ref().is_some_and(|v| {
        !matches!(v, Value::Bool(false) | Value::Null) && v.as_str() != Some("false")
    });
    let _slot = if tests {
        Some(test_slot(&state).await?)
    } else {
        None
    };
    Ok(json(
        &tributary_api::create_table(&state.session, &post).await?,
    ))
}

/// Test a table body's connection, streaming each stage as a server-sent event
/// (`data: {"error", "done", "message"}`), the last with `done: true`.
#[utoipa::path(post, path = "/v1/connection_tables/test", tag = "connection_tables",
    request_body = ConnectionTablePost,
    responses((status = 200, description = "text/event-stream of TestSourceMessage", content_type = "text/event-stream", body = tributary_api::TestSourceMessage),
        (status = 400, body = ErrorResp), (status = 403, body = ErrorResp),
        (status = 429, body = ErrorResp)))]
pub(crate) async fn test(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ConnectionTablePost>,
) -> Answer {
    let slot = test_slot(&state).await?;
    let (first, stream) =
        tributary_api::test_table(state.session.clone(), &post, state.config.max_test_duration)
            .await?;
    Ok(crate::sse::events(first, stream, slot))
}

/// Expand a schema body's document into columns and check its rules.
#[utoipa::path(post, path = "/v1/connection_tables/schemas/test", tag = "connection_tables",
    request_body(content = Object, description = "A ConnectionSchema"),
    responses((status = 200, description = "The expanded schema", body = Object),
        (status = 400, body = ErrorResp)))]
pub(crate) async fn test_schema(ApiJson(body): ApiJson<Value>) -> Answer {
    Ok(json(&tributary_api::test_schema(&body)?))
}

/// Infer columns from messages sampled with a table body's settings.
#[utoipa::path(post, path = "/v1/connection_tables/schemas/infer", tag = "connection_tables",
    request_body = SchemaInferPost,
    responses((status = 200, body = InferredSchema), (status = 400, body = ErrorResp),
        (status = 403, body = ErrorResp), (status = 429, body = ErrorResp)))]
pub(crate) async fn infer_schema(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<SchemaInferPost>,
) -> Answer {
    let _slot = test_slot(&state).await?;
    Ok(json(
        &tributary_api::infer_schema(&state.session, &post).await?,
    ))
}

/// One table, by id or name.
#[utoipa::path(get, path = "/v1/connection_tables/{id}", tag = "connection_tables",
    params(("id" = String, Path, description = "The table's id (ct_...) or name")),
    responses((status = 200, body = ConnectionTableView), (status = 404, body = ErrorResp)))]
pub(crate) async fn get(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    Path(id): Path<String>,
) -> Answer {
    cached(&state, &uri, || {
        encode(&tributary_api::get_table(&state.session, &id)?)
    })
}

/// Change a table (a new name, profile, settings or schema); the whole definition is
/// validated again, as a new table would be, and keeps its id.
#[utoipa::path(patch, path = "/v1/connection_tables/{id}", tag = "connection_tables",
    params(("id" = String, Path, description = "The table's id (ct_...) or name")),
    request_body = ConnectionTablePatch,
    responses((status = 200, body = ConnectionTableView), (status = 400, body = ErrorResp),
        (status = 403, body = ErrorResp), (status = 404, body = ErrorResp),
        (status = 409, body = ErrorResp)))]
pub(crate) async fn patch(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(patch): ApiJson<ConnectionTablePatch>,
) -> Answer {
    Ok(json(
        &tributary_api::patch_table(&state.session, &id, &patch).await?,
    ))
}

/// Delete a table (`DROP TABLE`).
#[utoipa::path(delete, path = "/v1/connection_tables/{id}", tag = "connection_tables",
    params(("id" = String, Path, description = "The table's id (ct_...) or name")),
    responses((status = 200, description = "Deleted (empty body)"), (status = 404, body = ErrorResp),
        (status = 409, body = ErrorResp)))]
pub(crate) async fn delete(State(state): State<AppState>, Path(id): Path<String>) -> Answer {
    tributary_api::delete_table(&state.session, &id).await?;
    Ok(empty())
}

/// The table's `CREATE TABLE` statement (`SHOW CREATE TABLE`), secrets redacted.
#[utoipa::path(get, path = "/v1/connection_tables/{id}/create_sql", tag = "connection_tables",
    params(("id" = String, Path, description = "The table's id (ct_...) or name")),
    responses((status = 200, body = CreateSql), (status = 404, body = ErrorResp)))]
pub(crate) async fn create_sql(State(state): State<AppState>, Path(id): Path<String>) -> Answer {
    Ok(json(&CreateSql {
        sql: tributary_api::create_sql(&state.session, &id)?,
    }))
}

/// The `CREATE TABLE` statement a table body stands for, without running it (secrets
/// redacted). Beyond Arroyo.
#[utoipa::path(post, path = "/v1/connection_tables/sql", tag = "connection_tables",
    request_body = ConnectionTablePost,
    responses((status = 200, body = CreateSql), (status = 400, body = ErrorResp)))]
pub(crate) async fn body_sql(
    State(state): State<AppState>,
    ApiJson(post): ApiJson<ConnectionTablePost>,
) -> Answer {
    Ok(json(&CreateSql {
        sql: tributary_api::table_body_sql(&state.session, &post).await?,
    }))
}

/// `GET /connection_tables/{id}/create_sql`'s answer.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(crate) struct CreateSql {
    /// The statement.
    pub sql: String,
}
