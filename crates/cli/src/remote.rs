//! The client of a Tributary server's `POST /sql`: the script goes over, each statement's
//! result comes back and is rebuilt as the outcome a local session would have produced
//! (rows as Arrow batches, diagnostics with their spans), so the CLI prints it the same.
//! A `run` asks for the streamed answer (newline-delimited JSON events), so a query's
//! rows reach the printer as they arrive, and dropping the request stops the query on
//! the server.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use std::ops::ControlFlow;
use std::sync::Arc;
use tributary_api::{SqlEvent, SqlResponse, SqlStatementResult};
use tributary_sql::{
    IDLE_TICK, Mode, Outcome, Output, RowSink, ScriptSummary, StatementError, StatementResult,
};
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

    /// `GET /api/v1{path}`, answered with JSON within [`LOOKUP_TIMEOUT`].
    pub async fn get_json(&self, path: &str) -> Result<serde_json::Value, String> {
        let mut request = self
            .client
            .get(format!("{}/api/v1{path}", self.base))
            .timeout(tributary_complete::LOOKUP_TIMEOUT);
        if let Some(t) = &self.token {
            request = request.bearer_auth(t);
        }
        let response = request.send().await.map_err(|e| reqwest_reason(&e))?;
        if !response.status().is_success() {
            return Err(format!("the server answered {}", response.status()));
        }
        let bytes = response.bytes().await.map_err(|e| e.to_string())?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    }

    /// `POST /api/v1{path}` with a JSON `body`: the status and the JSON answer (an error
    /// status included, whose body says why); `Err` when the server cannot be asked.
    pub async fn post_json(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<(u16, serde_json::Value), String> {
        let response = self.send_post(path, body, None).await?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("cannot read the server's answer: {e}"))?;
        let value = serde_json::from_slice(&bytes).map_err(|_| {
            format!(
                "the server at {} answered {status} with something other than JSON",
                self.base
            )
        })?;
        Ok((status, value))
    }

    /// `POST /api/v1{path}` with a JSON `body` (and `Accept: accept`), the token
    /// attached; the response, whatever its status.
    async fn send_post(
        &self,
        path: &str,
        body: &serde_json::Value,
        accept: Option<&str>,
    ) -> Result<reqwest::Response, String> {
        let mut request = self
            .client
            .post(format!("{}/api/v1{path}", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body).map_err(|e| e.to_string())?);
        if let Some(a) = accept {
            request = request.header(reqwest::header::ACCEPT, a);
        }
        if let Some(t) = &self.token {
            request = request.bearer_auth(t);
        }
        request.send().await.map_err(|e| {
            format!(
                "cannot reach the server at {}: {}",
                self.base,
                reqwest_reason(&e)
            )
        })
    }

    /// Send `text` as a `POST /sql` asking for `accept`; the response when the server
    /// took it.
    async fn post(
        &self,
        text: &str,
        mode: Mode,
        accept: &str,
    ) -> Result<reqwest::Response, String> {
        let mode = match mode {
            Mode::Run => "run",
            Mode::Check => "check",
        };
        let body = serde_json::json!({ "sql": text, "mode": mode });
        let response = self.send_post("/sql", &body, Some(accept)).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("cannot read the server's answer: {e}"))?;
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
        Err(format!(
            "the server at {} answered {status}: {said}",
            self.base
        ))
    }

    /// Run `text` on the server, handing each query's rows to `rows` as they arrive and
    /// each statement's outcome to `each` (`Break` stops: the request is dropped, which
    /// stops the server's query); the summary.
    pub async fn run_streaming(
        &self,
        text: &str,
        mode: Mode,
        rows: &dyn RowSink,
        mut each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> Result<ScriptSummary, String> {
        if mode == Mode::Check {
            // A check answers at once, whole.
            let (outcomes, mut summary) = self.run(text, mode).await?;
            summary.statements = 0;
            for outcome in outcomes {
                summary.statements += 1;
                if each(outcome).is_break() {
                    break;
                }
            }
            return Ok(summary);
        }
        let response = self.post(text, mode, "application/x-ndjson").await?;
        let mut lines = EventLines::new(response);
        let mut summary = ScriptSummary::default();
        let mut current: Option<(Span, SchemaRef)> = None;
        loop {
            let event = match tokio::time::timeout(IDLE_TICK, lines.next()).await {
                Err(_) => {
                    if rows.idle().await.is_break() {
                        return Ok(summary);
                    }
                    continue;
                }
                Ok(Ok(Some(event))) => event,
                Ok(Ok(None)) => {
                    return Err(format!(
                        "the server at {} ended its answer before the script's summary",
                        self.base
                    ));
                }
                Ok(Err(e)) => return Err(e),
            };
            match event {
                SqlEvent::Columns {
                    line,
                    column,
                    arrow_schema,
                    ..
                } => {
                    let schema: Schema = arrow_schema
                        .ok_or("the server's rows have no Arrow schema")
                        .and_then(|s| {
                            serde_json::from_value(s)
                                .map_err(|_| "the server's Arrow schema is not one")
                        })?;
                    let schema = Arc::new(schema);
                    let at = Location::new(line, column);
                    if rows.begin(Span::new(at, at), &schema).await.is_break() {
                        return Ok(summary);
                    }
                    current = Some((Span::new(at, at), schema));
                }
                SqlEvent::Rows { rows: values } => {
                    let Some((_, schema)) = &current else {
                        return Err("the server sent rows before their columns".into());
                    };
                    let (_, batches) = rebuild_with(schema.clone(), values)?;
                    for batch in batches {
                        if rows.batch(batch).await.is_break() {
                            return Ok(summary);
                        }
                    }
                }
                SqlEvent::Result(r) => {
                    summary.statements += 1;
                    let outcome = match (r.row_count, current.take()) {
                        (Some(count), Some((_, schema))) if !r.error => {
                            streamed_outcome(r, schema, count)
                        }
                        _ => outcome_of(r),
                    };
                    if each(outcome).is_break() {
                        return Ok(summary);
                    }
                }
                SqlEvent::Summary {
                    failed,
                    suppressed_diagnostics,
                } => {
                    summary.failed = failed;
                    summary.suppressed_diagnostics = suppressed_diagnostics;
                    return Ok(summary);
                }
            }
        }
    }

    /// Send `text`; each statement's outcome, and the summary.
    pub async fn run(
        &self,
        text: &str,
        mode: Mode,
    ) -> Result<(Vec<Outcome>, ScriptSummary), String> {
        let response = self.post(text, mode, "application/json").await?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| format!("cannot read the server's answer: {e}"))?;
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

/// A streamed query's result: its rows went to the printer, `count` of them.
fn streamed_outcome(r: SqlStatementResult, schema: SchemaRef, count: u64) -> Outcome {
    let span = Span::new(
        Location::new(r.line, r.column),
        Location::new(r.end_line, r.end_column),
    );
    // The server notes a query it stopped; its other diagnostics are warnings.
    let stopped = r
        .diagnostics
        .iter()
        .any(|d| d.message.starts_with("the query was stopped after"));
    Ok(StatementResult {
        span,
        output: Output::Streamed {
            schema,
            rows: count,
            stopped,
        },
        warnings: r.diagnostics.iter().map(|d| d.to_diagnostic()).collect(),
    })
}

/// The events of a streamed answer, one JSON object per line.
struct EventLines {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

/// The longest event line accepted (a batch of wide rows stays far below it).
const MAX_EVENT_LINE: usize = 256 << 20;

impl EventLines {
    fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event; `None` when the answer ended.
    async fn next(&mut self) -> Result<Option<SqlEvent>, String> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return serde_json::from_slice(&line)
                    .map(Some)
                    .map_err(|e| format!("the server sent an event that is not one: {e}"));
            }
            if self.buffer.len() > MAX_EVENT_LINE {
                return Err("the server sent an event line longer than 256 MiB".into());
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.extend_from_slice(&chunk),
                Ok(None) => return Ok(None),
                Err(e) => return Err(format!("cannot read the server's answer: {e}")),
            }
        }
    }
}

/// Rows as JSON arrays back into Arrow, by the result's schema.
fn rebuild(
    schema: Option<serde_json::Value>,
    rows: Vec<Vec<serde_json::Value>>,
) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
    let schema: Schema = serde_json::from_value(schema.ok_or("the result has no schema")?)
        .map_err(|e| e.to_string())?;
    rebuild_with(Arc::new(schema), rows)
}

/// Rows as JSON arrays back into Arrow batches of `schema`.
fn rebuild_with(
    schema: SchemaRef,
    rows: Vec<Vec<serde_json::Value>>,
) -> Result<(SchemaRef, Vec<RecordBatch>), String> {
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
