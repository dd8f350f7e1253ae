//! `POST /plan`: the catalog SQL files describe, compared with the server's catalog
//! (`tributary plan` over REST). The files are checked under the server's confinement
//! and limits; nothing is stored.

use super::error::{ApiDiagnostic, ApiError, ApiStatus};
use super::governed::governed;
use crate::plan::{SourceFile, desired_catalog, plan, plan_json};
use crate::session::Session;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use utoipa::ToSchema;

/// `POST /plan`: the files of the catalog wanted.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanPost {
    /// The files, in the order their statements run.
    pub files: Vec<PlanFilePost>,
    /// List objects in the catalog but not in the files as dropped (default: kept).
    #[serde(default)]
    pub prune: bool,
}

/// One file of a [`PlanPost`].
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanFilePost {
    /// Its name, for the answer's diagnostics.
    pub name: String,
    /// Its SQL.
    pub sql: String,
}

/// The plan as `tributary --format json plan` prints it; 400 `invalid_definition` with
/// each invalid statement's diagnostics (`path` `/files/N/sql`, line and column in it),
/// 403 `forbidden` when a file reaches what the server does not allow.
pub async fn plan_files(session: &Arc<Session>, post: &PlanPost) -> Result<Value, ApiError> {
    if post.files.is_empty() {
        return Err(ApiError::body("'files' is empty: there is nothing to plan")
            .with_hint("Send the catalog's SQL files as {\"files\": [{\"name\": \"catalog.sql\", \"sql\": \"...\"}]}."));
    }
    let post = post.clone();
    governed(session, None, move |session| async move {
        let files: Vec<SourceFile> = post
            .files
            .iter()
            .map(|f| SourceFile {
                name: f.name.clone(),
                text: f.sql.clone(),
            })
            .collect();
        let desired = match desired_catalog(Some(&session), &files).await {
            Ok(d) => d,
            Err(invalid) => {
                // A file the server may not read, a variable it may not resolve: 403, as
                // for the same statement anywhere else; any other refusal is the files'.
                let all: Vec<_> = invalid
                    .failures
                    .iter()
                    .flat_map(|(_, d)| d.clone())
                    .collect();
                let (status, code) = match super::run::classify(&all) {
                    (ApiStatus::Forbidden, code) => (ApiStatus::Forbidden, code),
                    _ => (ApiStatus::BadRequest, "invalid_definition"),
                };
                let diagnostics = invalid
                    .failures
                    .iter()
                    .flat_map(|(i, diags)| {
                        diags.iter().map(move |d| {
                            let mut a = ApiDiagnostic::in_sql(d);
                            a.path = Some(format!("/files/{i}/sql"));
                            a
                        })
                    })
                    .collect();
                return Err(ApiError::from_diagnostics(status, code, diagnostics));
            }
        };
        let planned = plan(desired.as_ref(), session.store().as_ref(), post.prune)
            .map_err(super::profiles::catalog)?;
        Ok(plan_json(&planned))
    })
    .await?
}
