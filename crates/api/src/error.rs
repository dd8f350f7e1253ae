//! [`ApiError`]: a REST failure as Arroyo's `{"error": "..."}` body, plus Tributary's
//! `code`, `hint`, where the problem is (`path` into the request body, or `line` and
//! `column` in submitted SQL) and every diagnostic found. The HTTP status is named by
//! [`ApiStatus`]; the server maps it.

use serde::{Deserialize, Serialize};
use tributary_types::{Diagnostic, Severity};
use utoipa::ToSchema;

/// The HTTP status class of a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiStatus {
    /// 400: the request is wrong.
    BadRequest,
    /// 401: no or a wrong token.
    Unauthorized,
    /// 403: the server's operator does not allow it (a file, a variable, an address).
    Forbidden,
    /// 404: no such profile or table.
    NotFound,
    /// 405: the route has no such method.
    MethodNotAllowed,
    /// 409: the name is taken, or the object is in use.
    Conflict,
    /// 413: the body is too large.
    PayloadTooLarge,
    /// 415: the body is not JSON.
    UnsupportedMediaType,
    /// 429: too many connection tests at once.
    TooManyRequests,
    /// 500: Tributary failed.
    Internal,
    /// 503: the server is shutting down.
    Unavailable,
    /// 504: the request ran past its deadline and was cancelled.
    DeadlineExceeded,
}

impl ApiStatus {
    /// The numeric HTTP status.
    pub fn code(self) -> u16 {
        match self {
            ApiStatus::BadRequest => 400,
            ApiStatus::Unauthorized => 401,
            ApiStatus::Forbidden => 403,
            ApiStatus::NotFound => 404,
            ApiStatus::MethodNotAllowed => 405,
            ApiStatus::Conflict => 409,
            ApiStatus::PayloadTooLarge => 413,
            ApiStatus::UnsupportedMediaType => 415,
            ApiStatus::TooManyRequests => 429,
            ApiStatus::Internal => 500,
            ApiStatus::Unavailable => 503,
            ApiStatus::DeadlineExceeded => 504,
        }
    }
}

/// One diagnostic, structured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiDiagnostic {
    /// `error`, `warning` or `note`.
    pub severity: String,
    /// What kind of problem it is (`UNKNOWN_OPTION`; the codes are listed in
    /// docs/cli.md), for programs to match on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What is wrong (or worth knowing).
    pub message: String,
    /// Further facts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How to fix it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Where in the request body (a JSON pointer such as `/config` or `/schema/fields/2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line in submitted SQL (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The column in submitted SQL (1-based, in characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// Where the problem ends in submitted SQL (exclusive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u64>,
    /// See `end_line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u64>,
}

impl ApiDiagnostic {
    /// A diagnostic located in SQL the client wrote.
    pub fn in_sql(d: &Diagnostic) -> Self {
        let mut out = Self::plain(d);
        if let Some(span) = d.span.filter(|s| s.is_known()) {
            out.line = Some(span.start.line);
            out.column = Some(span.start.column);
            out.end_line = Some(span.end.line);
            out.end_column = Some(span.end.column);
        }
        out
    }

    /// A diagnostic about a request body: its position in the SQL Tributary wrote for
    /// the body means nothing to the client, so it is replaced by `path`.
    pub fn in_body(d: &Diagnostic, path: Option<String>) -> Self {
        Self {
            path,
            ..Self::plain(d)
        }
    }

    fn plain(d: &Diagnostic) -> Self {
        Self {
            severity: match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Note => "note",
            }
            .into(),
            code: d.code.map(|c| c.as_str().to_string()),
            message: d.message.clone(),
            notes: d.notes.clone(),
            hint: d.help.clone(),
            path: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
        }
    }

    /// The diagnostic back, as the library reports it (the CLI's remote mode renders it
    /// against the script it sent).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut d = match self.severity.as_str() {
            "error" => Diagnostic::error(self.message.clone()),
            "warning" => Diagnostic::warning(self.message.clone()),
            _ => Diagnostic::note(self.message.clone()),
        };
        d.notes = self.notes.clone();
        d.help = self.hint.clone();
        d.code = self
            .code
            .as_deref()
            .and_then(tributary_types::codes::Code::parse);
        if let (Some(line), Some(column)) = (self.line, self.column) {
            let start = tributary_types::Location::new(line, column);
            let end = tributary_types::Location::new(
                self.end_line.unwrap_or(line),
                self.end_column.unwrap_or(column),
            );
            d = d.with_span(tributary_types::Span::new(start, end));
        }
        d
    }

    /// A warning about the request body itself.
    pub fn body_warning(message: String, path: String) -> Self {
        Self {
            severity: "warning".into(),
            code: Some(tributary_types::codes::ADVICE.as_str().into()),
            message,
            notes: vec![],
            hint: None,
            path: Some(path),
            line: None,
            column: None,
            end_line: None,
            end_column: None,
        }
    }
}

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status class.
    pub status: ApiStatus,
    /// A stable machine-readable code (`invalid_body`, `not_found`, `invalid_definition`,
    /// `connection_failed`, ...).
    pub code: &'static str,
    /// The message clients show (Arroyo's `error`).
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// Every diagnostic, the first being the one `message` names.
    pub diagnostics: Vec<ApiDiagnostic>,
}

/// The JSON body of a failure.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorResp {
    /// What went wrong (Arroyo's field; clients show it).
    pub error: String,
    /// A stable machine-readable code.
    pub code: String,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The JSON pointer into the request body the error is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line in submitted SQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The column in submitted SQL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u64>,
    /// Every diagnostic found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<ApiDiagnostic>,
}

impl ApiError {
    /// A failure with a message and no diagnostics.
    pub fn new(status: ApiStatus, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            hint: None,
            diagnostics: vec![],
        }
    }

    /// Add a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A malformed or mistyped request body (400, `invalid_body`).
    pub fn body(message: impl Into<String>) -> Self {
        Self::new(ApiStatus::BadRequest, "invalid_body", message)
    }

    /// `{what} not found` (404).
    pub fn not_found(what: impl Into<String>) -> Self {
        Self::new(
            ApiStatus::NotFound,
            "not_found",
            format!("{} not found", what.into()),
        )
    }

    /// A failure described by diagnostics: the first error names it.
    pub fn from_diagnostics(
        status: ApiStatus,
        code: &'static str,
        diagnostics: Vec<ApiDiagnostic>,
    ) -> Self {
        let first = diagnostics
            .iter()
            .find(|d| d.severity == "error")
            .or(diagnostics.first());
        Self {
            status,
            code,
            message: first
                .map(|d| d.message.clone())
                .unwrap_or_else(|| "the request failed".into()),
            hint: first.and_then(|d| d.hint.clone()),
            diagnostics,
        }
    }

    /// An internal failure; the message says what failed, never how (500, `internal`).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ApiStatus::Internal, "internal", message)
    }

    /// The response body.
    pub fn body_json(&self) -> ErrorResp {
        let first = self
            .diagnostics
            .iter()
            .find(|d| d.severity == "error")
            .or(self.diagnostics.first());
        ErrorResp {
            error: self.message.clone(),
            code: self.code.into(),
            hint: self.hint.clone(),
            path: first.and_then(|d| d.path.clone()),
            line: first.and_then(|d| d.line),
            column: first.and_then(|d| d.column),
            diagnostics: self.diagnostics.clone(),
        }
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ApiError {}
