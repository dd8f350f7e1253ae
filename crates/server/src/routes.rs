//! The route table: every endpoint, mounted under `/api/v1` (Arroyo's URLs) and `/v1`
//! (the seed's), behind request logging, bearer authentication and a catalog catch-up. The table is data, so
//! a test can check it against the OpenAPI document both ways.

use crate::auth::require_token;
use crate::cache::PageCache;
use crate::handlers::{misc, profiles, tables};
use crate::logging::log_request;
use crate::reply::Failure;
use crate::state::{AppState, ServerConfig};
use axum::Router;
use axum::http::Method;
use axum::routing::{MethodRouter, on};
use std::sync::Arc;
use tokio::sync::Semaphore;
use tributary_api::ApiError;
use tributary_sql::Session;

/// A route: method, path under `/v1`, handler.
type Route = (Method, &'static str, fn() -> MethodRouter<AppState>);

macro_rules! route {
    ($method:ident, $path:literal, $handler:path) => {
        (Method::$method, $path, || {
            on(axum::routing::MethodFilter::$method, $handler)
        })
    };
}

/// Every route, as (method, path under `/v1`): the route table without its handlers.
pub fn routes() -> Vec<(&'static str, &'static str)> {
    table()
        .into_iter()
        .map(|(method, path, _)| (method_name(&method), path))
        .collect()
}

/// A method's name with a static lifetime (the table uses only these).
fn method_name(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::PUT => "PUT",
        _ => "OTHER",
    }
}

fn table() -> Vec<Route> {
    vec![
        route!(GET, "/ping", misc::ping),
        route!(GET, "/udfs", misc::udfs),
        route!(GET, "/jobs", misc::jobs),
        route!(GET, "/pipelines", misc::pipelines),
        route!(POST, "/pipelines/validate_query", misc::validate_query),
        route!(GET, "/connectors", misc::connectors),
        route!(GET, "/connection_profiles", profiles::list),
        route!(POST, "/connection_profiles", profiles::create),
        route!(POST, "/connection_profiles/test", profiles::test),
        route!(GET, "/connection_profiles/{id}", profiles::get),
        route!(PATCH, "/connection_profiles/{id}", profiles::patch),
        route!(DELETE, "/connection_profiles/{id}", profiles::delete),
        route!(
            GET,
            "/connection_profiles/{id}/autocomplete",
            profiles::autocomplete
        ),
        route!(GET, "/connection_tables", tables::list),
        route!(POST, "/connection_tables", tables::create),
        route!(POST, "/connection_tables/test", tables::test),
        route!(POST, "/connection_tables/sql", tables::body_sql),
        route!(POST, "/connection_tables/schemas/test", tables::test_schema),
        route!(
            POST,
            "/connection_tables/schemas/infer",
            tables::infer_schema
        ),
        route!(GET, "/connection_tables/{id}", tables::get),
        route!(PATCH, "/connection_tables/{id}", tables::patch),
        route!(DELETE, "/connection_tables/{id}", tables::delete),
        route!(
            GET,
            "/connection_tables/{id}/create_sql",
            tables::create_sql
        ),
        route!(POST, "/sql", misc::sql),
        route!(POST, "/plan", misc::plan),
        route!(POST, "/apply", misc::apply),
        route!(GET, "/openapi.json", misc::openapi_json),
    ]
}

/// The application: every route under `/api/v1` and `/v1`, for `session`.
pub fn router(session: Arc<Session>, config: ServerConfig) -> Router {
    let connectors = serde_json::to_vec(&tributary_api::connectors())
        .map(bytes::Bytes::from)
        .unwrap_or_default();
    // The session reaches only what the operator allows, and runs every query inside
    // the server's limits.
    session.set_access(config.access.clone());
    match tributary_sql::resources::Resources::new(config.limits.clone()) {
        Ok(r) => session.govern(Arc::new(r)),
        Err(e) => {
            tracing::error!(error = %e, "cannot start the query threads; queries run unbounded")
        }
    }
    let state = AppState {
        session,
        tests: Arc::new(Semaphore::new(config.max_concurrent_tests)),
        config: Arc::new(config),
        cache: Arc::new(PageCache::default()),
        connectors,
    };
    let mut v1: Router<AppState> = Router::new();
    for (_, path, handler) in table() {
        v1 = v1.route(path, handler());
    }
    let v1 = v1
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed);
    let api = Router::new()
        .nest("/api/v1", v1.clone())
        .nest("/v1", v1)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            catch_up,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ));
    // The console's files need no token: the page asks for one, for the API.
    Router::new()
        .merge(crate::console::routes())
        .merge(api)
        .layer(axum::middleware::from_fn(log_request))
        .with_state(state)
}

/// Before each authenticated request: learn of the catalog changes other processes have
/// acknowledged (a shared PostgreSQL catalog), so no cached page or plan predates them.
async fn catch_up(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    match state.session.store().refresh() {
        Ok(()) => next.run(req).await,
        Err(e) => Failure(
            ApiError::new(
                tributary_api::ApiStatus::Unavailable,
                "catalog_unavailable",
                e.to_string(),
            )
            .with_hint("The catalog's database cannot be read; try again once it is back."),
        )
        .into_response(),
    }
}

async fn not_found(uri: axum::http::Uri) -> Failure {
    Failure(
        ApiError::not_found(format!(
            "No route for '{}'",
            tributary_types::limits::shorten(uri.path())
        ))
        .with_hint("The API lives under /api/v1 (or /v1); /api/v1/openapi.json lists it."),
    )
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> Failure {
    Failure(ApiError::new(
        tributary_api::ApiStatus::MethodNotAllowed,
        "method_not_allowed",
        format!(
            "{method} is not allowed on '{}'",
            tributary_types::limits::shorten(uri.path())
        ),
    ))
}
