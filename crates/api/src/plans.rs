//! `POST /plan` and `POST /apply`: the catalog SQL files describe, compared with the
//! server's catalog (`tributary plan` over REST), and made its content in one atomic
//! batch (`tributary apply`). The files are checked under the server's confinement and
//! limits.

use super::error::{ApiDiagnostic, ApiError, ApiStatus};
use super::governed::governed;
use crate::plan::{
    ApplyError, ApplyOptions, InvalidFiles, SourceFile, desired_catalog, fingerprint, plan,
    plan_json,
};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tributary_sql::session::Session;
use tributary_types::Diagnostic;
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

/// `POST /apply`: the files of the catalog wanted, and how to apply them.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPost {
    /// The files, in the order their statements run.
    pub files: Vec<PlanFilePost>,
    /// Drop objects in the catalog but not in the files (default: kept).
    #[serde(default)]
    pub prune: bool,
    /// Allow replacements: objects that cannot change in place are dropped and created
    /// again, with new ids (default: refused).
    #[serde(default)]
    pub allow_replace: bool,
    /// The `fingerprint` a `POST /plan` answered: applying is refused (409
    /// `catalog_changed`) if the catalog has changed since that plan.
    #[serde(default)]
    pub fingerprint: Option<String>,
}

/// The plan as `tributary --format json plan` prints it, with the catalog's
/// `fingerprint` (send it to `POST /apply` to apply exactly this plan); 400
/// `invalid_definition` with each invalid statement's diagnostics (`path`
/// `/files/N/sql`, line and column in it), 403 `forbidden` when a file reaches what the
/// server does not allow.
pub async fn plan_files(session: &Arc<Session>, post: &PlanPost) -> Result<Value, ApiError> {
    let files = source_files(&post.files, "plan")?;
    let prune = post.prune;
    governed(session, None, move |session| async move {
        let desired = desired_catalog(Some(&session), &files)
            .await
            .map_err(|invalid| invalid_files(&invalid))?;
        let store = session.store();
        let fingerprint = fingerprint(store.as_ref()).map_err(super::profiles::catalog)?;
        let planned =
            plan(desired.as_ref(), store.as_ref(), prune).map_err(super::profiles::catalog)?;
        let mut answer = plan_json(&planned);
        answer["fingerprint"] = fingerprint.into();
        Ok(answer)
    })
    .await?
}

/// Make the server's catalog hold what the files describe, in one atomic batch
/// (`tributary apply`): the plan carried out, `applied: true` and the catalog's new
/// `fingerprint`. Nothing is applied on any failure: 400 `invalid_definition` or
/// `connection_failed`, 403 `forbidden`, 409 `catalog_changed` (a `fingerprint` that is
/// no longer the catalog's), `replace_not_allowed` or `in_use`.
pub async fn apply_files(session: &Arc<Session>, post: &ApplyPost) -> Result<Value, ApiError> {
    let files = source_files(&post.files, "apply")?;
    let options = ApplyOptions {
        prune: post.prune,
        allow_replace: post.allow_replace,
        planned_against: post.fingerprint.clone(),
    };
    governed(session, None, move |session| async move {
        let applied = crate::plan::apply_files(&session, &files, &options)
            .await
            .map_err(apply_error)?;
        let mut answer = plan_json(&applied.plan);
        answer["applied"] = true.into();
        answer["fingerprint"] = applied.fingerprint.into();
        let notes: Vec<ApiDiagnostic> = applied
            .notes
            .iter()
            .map(|(file, d)| {
                let mut a = ApiDiagnostic::in_sql(d);
                a.path = file.map(|i| format!("/files/{i}/sql"));
                a
            })
            .collect();
        answer["notes"] = serde_json::to_value(notes).unwrap_or_default();
        Ok(answer)
    })
    .await?
}

fn source_files(files: &[PlanFilePost], verb: &str) -> Result<Vec<SourceFile>, ApiError> {
    if files.is_empty() {
        return Err(ApiError::body(format!("'files' is empty: there is nothing to {verb}"))
            .with_hint("Send the catalog's SQL files as {\"files\": [{\"name\": \"catalog.sql\", \"sql\": \"...\"}]}."));
    }
    Ok(files
        .iter()
        .map(|f| SourceFile {
            name: f.name.clone(),
            text: f.sql.clone(),
        })
        .collect())
}

/// Files that do not describe a valid catalog: 400 `invalid_definition`, or 403 for a
/// file the server may not read or a variable it may not resolve, as for the same
/// statement anywhere else; each diagnostic at `/files/N/sql`.
fn invalid_files(invalid: &InvalidFiles) -> ApiError {
    let failures: Vec<(Option<usize>, Vec<Diagnostic>)> = invalid
        .failures
        .iter()
        .map(|(i, d)| (Some(*i), d.clone()))
        .collect();
    located(&failures, |status, _| match status {
        ApiStatus::Forbidden => (ApiStatus::Forbidden, "forbidden"),
        _ => (ApiStatus::BadRequest, "invalid_definition"),
    })
}

/// An error whose diagnostics each point into their file (`/files/N/sql`), its status
/// and code chosen by `status` from what they say.
fn located(
    failures: &[(Option<usize>, Vec<Diagnostic>)],
    status: impl Fn(ApiStatus, &'static str) -> (ApiStatus, &'static str),
) -> ApiError {
    let all: Vec<Diagnostic> = failures.iter().flat_map(|(_, d)| d.clone()).collect();
    let (classified, code) = super::run::classify(&all);
    let (status, code) = status(classified, code);
    let diagnostics = failures
        .iter()
        .flat_map(|(i, diags)| {
            diags.iter().map(move |d| {
                let mut a = ApiDiagnostic::in_sql(d);
                a.path = i.map(|i| format!("/files/{i}/sql"));
                a
            })
        })
        .collect();
    ApiError::from_diagnostics(status, code, diagnostics)
}

fn apply_error(e: ApplyError) -> ApiError {
    match e {
        ApplyError::Invalid(invalid) => invalid_files(&invalid),
        e @ ApplyError::CatalogChanged { .. } => {
            ApiError::new(ApiStatus::Conflict, "catalog_changed", e.to_string()).with_hint(
                "Make the plan again (POST /plan), review it, and apply with its fingerprint.",
            )
        }
        e @ ApplyError::ReplaceNotAllowed { .. } => {
            ApiError::new(ApiStatus::Conflict, "replace_not_allowed", e.to_string())
                .with_hint("Review the plan, then apply with \"allow_replace\": true.")
        }
        ApplyError::Refused { failures, .. } => located(&failures, |status, code| (status, code)),
        ApplyError::Catalog(e) => super::profiles::catalog(e),
    }
}
