//! The client of a Tributary server's `POST /sql`: the script goes over, each statement's
//! result comes back and is rebuilt as the outcome a local session would have produced
//! (rows as Arrow batches, diagnostics with their spans), so the CLI prints it the same.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use std::sync::Arc;
use tributary_sql::api::{SqlResponse, SqlStatementResult};
use tributary_sql::{Mode, Outcome, Output, ScriptSummary, StatementError, StatementResult};
use tributary_types::{Diagnostic, Location, Span};

/// A server to send statements to.
pub struct Remote {
    client: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Remote")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// A client of the server at `url`, authenticating with `token`.
    pub fn new(url: &str, token: Option<String>) -> Result<Self, String> {
        let parsed = url::Url::parse(url)
            .map_err(|e| format!("--server '{url}' is not a URL: {e} (write http://HOST:PORT)"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!(
                "--server '{url}' must be an http:// or https:// URL"
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|e| format!("cannot start the HTTP client: {e}"))?;
        Ok(Self {
            client,
            base: url.trim_end_matches('/').to_string(),
            token: token.filter(|t| !t.is_empty()),
        })
    }

    /// Send `text`; each statement's outcome, and the summary.
    pub async fn run(
        &self,
        text: &str,
        mode: Mode,
    ) -> Result<(Vec<Outcome>, ScriptSummary), String> {
        let mode = match mode {
            Mode::Run => "run",
            Mode::Check => "check",
        };
        let mut request = self
            .client
            .post(format!("{}/api/v1/sql", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(
                serde_json::to_vec(&serde_json::json!({ "sql": text, "mode": mode }))
                    .map_err(|e| e.to_string())?,
            );
        if let Some(t) = &self.token {
            request = request.bearer_auth(t);
        }
        let response = request.send().await.map_err(|e| {
            format!(
                "cannot reach the server at {}: {}",
                self.base,
                reqwest_reason(&e)
            )
        })?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("cannot read the server's answer: {e}"))?;
        if !status.is_success() {
            let said = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| {
                    let error = v.get("error")?.as_str()?.to_string();
                    let hint = v
                        .get("hint")
                        .and_then(|h| h.as_str())
                        .map(|h| format!("\n  help: {h}"));
                    Some(format!("{error}{}", hint.unwrap_or_default()))
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).chars().take(200).collect());
            return Err(format!(
                "the server at {} answered {status}: {said}",
                self.base
            ));
        }
        let answer: SqlResponse = serde_json::from_slice(&bytes)
            .map_err(|e| format!("the server's answer is not what `POST /sql` returns: {e}"))?;
        let summary = ScriptSummary {
            statements: answer.results.len(),
            failed: answer.failed,
            suppressed_diagnostics: answer.suppressed_diagnostics,
        };
        let outcomes = answer.results.into_iter().map(outcome_of).collect();
        Ok((outcomes, summary))
    }
}

fn reqwest_reason(e: &reqwest::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason = s.to_string();
        source = s.source();
    }
    reason
}

/// A result as the outcome a local session would have given.
fn outcome_of(r: SqlStatementResult) -> Outcome {
    let span = Span::new(
        Location::new(r.line, r.column),
        Location::new(r.end_line, r.end_column),
    );
    let mut diagnostics: Vec<Diagnostic> =
        r.diagnostics.iter().map(|d| d.to_diagnostic()).collect();
    if r.error {
        return Err(StatementError { span, diagnostics });
    }
    let output = if r.tag == "SELECT" {
        match rebuild(r.arrow_schema, r.rows) {
            Ok((schema, batches)) => Output::Rows { schema, batches },
            Err(e) => {
                diagnostics.push(
                    Diagnostic::error(format!("the server's rows cannot be read back: {e}"))
                        .with_span(span),
                );
                return Err(StatementError { span, diagnostics });
            }
        }
    } else {
        Output::Done(r.tag)
    };
    Ok(StatementResult {
        span,
        output,
        warnings: diagnostics,
    })
}

/// Rows as JSON arrays back into Arrow, by the result's schema.
fn rebuild(
    schema: Option<serde_json::Value>,
    rows: Vec<Vec<serde_json::Value>>,
) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
    let schema: Schema = serde_json::from_value(schema.ok_or("the result has no schema")?)
        .map_err(|e| e.to_string())?;
    let schema = Arc::new(schema);
    if rows.is_empty() {
        return Ok((schema, vec![]));
    }
    // Positional names, as the server wrote them, so repeated names cannot collide.
    let positional = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| Field::new(format!("c{i}"), f.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let mut lines = Vec::new();
    for row in rows {
        let object: serde_json::Map<String, serde_json::Value> = row
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("c{i}"), v))
            .collect();
        serde_json::to_writer(&mut lines, &object).map_err(|e| e.to_string())?;
        lines.push(b'\n');
    }
    let reader = datafusion::arrow::json::ReaderBuilder::new(positional)
        .build(std::io::Cursor::new(lines))
        .map_err(|e| e.to_string())?;
    let mut batches = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        batches.push(
            RecordBatch::try_new(schema.clone(), batch.columns().to_vec())
                .map_err(|e| e.to_string())?,
        );
    }
    Ok((schema, batches))
}
