//! The OpenAPI 3.1 document, generated from the handlers' annotations and the request
//! and response types of `tributary_api`.

use crate::handlers::{misc, profiles, tables};
use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Tributary",
        description = "Connection profiles and connection tables for streaming connectors, compatible with Arroyo's REST API. Every request needs 'Authorization: Bearer <token>' unless the server runs with --no-auth.",
    ),
    servers((url = "/api", description = "Also served under /v1 without the /api prefix")),
    paths(
        misc::ping, misc::udfs, misc::jobs, misc::pipelines, misc::validate_query,
        misc::connectors, misc::sql, misc::plan, misc::apply, misc::openapi_json,
        profiles::list, profiles::create, profiles::test, profiles::get, profiles::patch,
        profiles::delete, profiles::autocomplete,
        tables::list, tables::create, tables::test, tables::test_schema, tables::infer_schema,
        tables::get, tables::patch, tables::delete, tables::create_sql, tables::body_sql,
    ),
    components(schemas(tributary_api::ApiDiagnostic, tributary_api::SqlEvent)),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
)]
struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}
