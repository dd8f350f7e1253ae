//! Running a written statement for a request, and turning what it produced into the
//! request's answer: diagnostics located in the body, a status for the failure, and the
//! warnings a success carries.

use super::error::{ApiDiagnostic, ApiError, ApiStatus};
use tributary_dialect::sql_writer::WrittenStatement;
use tributary_sql::session::{Mode, Session, StatementError, StatementResult};
use tributary_types::Diagnostic;

/// Run `stmt`: its one outcome, failures located in the body.
pub(crate) async fn run_written(
    session: &Session,
    stmt: &WrittenStatement,
) -> Result<StatementResult, ApiError> {
    match session.run_script(&stmt.sql, Mode::Run).await.pop() {
        Some(Ok(r)) => Ok(r),
        Some(Err(e)) => Err(body_error(&e, stmt)),
        None => Err(ApiError::internal("the statement produced no outcome")),
    }
}

/// A statement's failure as the answer to the body it was written for.
pub(crate) fn body_error(e: &StatementError, stmt: &WrittenStatement) -> ApiError {
    let (status, code) = classify(&e.diagnostics);
    let diagnostics = e
        .diagnostics
        .iter()
        .map(|d| ApiDiagnostic::in_body(d, stmt.path_of(d)))
        .collect();
    ApiError::from_diagnostics(status, code, diagnostics)
}

/// The status and code of a failed statement: by the stable codes of its errors (a
/// refusal to reach something, a name taken, an object in use), else from its first
/// error's wording.
pub(crate) fn classify(diags: &[Diagnostic]) -> (ApiStatus, &'static str) {
    use tributary_types::codes;
    let Some(first) = diags.iter().find(|d| d.is_error()) else {
        return (ApiStatus::BadRequest, "invalid_definition");
    };
    let coded = |code| diags.iter().any(|d| d.is_error() && d.code == Some(code));
    let m = first.message.as_str();
    if coded(codes::FORBIDDEN) {
        (ApiStatus::Forbidden, "forbidden")
    } else if coded(codes::IN_USE) {
        (ApiStatus::Conflict, "in_use")
    } else if coded(codes::ALREADY_EXISTS) {
        (ApiStatus::Conflict, "already_exists")
    } else if m.starts_with("the connection test of") {
        (ApiStatus::BadRequest, "connection_failed")
    } else if m.ends_with("already exists") {
        (ApiStatus::Conflict, "already_exists")
    } else if m.contains(" is used by ") || m.starts_with("the change would break table") {
        (ApiStatus::Conflict, "in_use")
    } else if m.starts_with("catalog ") {
        (ApiStatus::Internal, "catalog_error")
    } else {
        (ApiStatus::BadRequest, "invalid_definition")
    }
}

/// The warnings a success answers with: the statement's own, then the body's fields
/// that were ignored or are read-only.
pub(crate) fn warnings(
    result_warnings: &[Diagnostic],
    stmt: &WrittenStatement,
) -> Vec<ApiDiagnostic> {
    let mut out: Vec<ApiDiagnostic> = result_warnings
        .iter()
        .map(|d| ApiDiagnostic::in_body(d, stmt.path_of(d)))
        .collect();
    out.extend(stmt.ignored.iter().map(|p| {
        let mut w = ApiDiagnostic::body_warning(
            format!("'{p}' is not a setting of this connector and was ignored"),
            p.clone(),
        );
        if let Some(near) = stmt.hints.get(p) {
            w.hint = Some(format!("Did you mean '{near}'?"));
        }
        w
    }));
    out.extend(stmt.read_only.iter().map(|p| {
        ApiDiagnostic::body_warning(
            format!("'{p}' is computed by Tributary and was ignored"),
            p.clone(),
        )
    }));
    out
}
