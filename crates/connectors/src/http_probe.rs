//! Connection tests over HTTP, shared by `polling_http` and `sse`: one request to the
//! table's endpoint with its headers (secrets resolved only now, never printed), each
//! failure classified (DNS, refused, timeout, TLS, 401/403, 404, other statuses), then the
//! body read as one message (polling) or as server-sent events (sse).

use crate::http::parse_headers;
use crate::probe::{Probe, Stage, TestCode, human, is_dns_error};
use futures::StreamExt;

/// Send the table's request; the response when it succeeded (2xx).
pub(crate) async fn request(
    probe: &mut Probe<'_>,
    method: &str,
    body: Option<String>,
) -> Option<reqwest::Response> {
    request_allowing(probe, method, body, false).await
}

/// Like [`request`]; with `method_may_be_refused`, a 405 (the endpoint exists but takes
/// another method) counts as found: how a sink's endpoint is probed without posting.
pub(crate) async fn request_allowing(
    probe: &mut Probe<'_>,
    method: &str,
    body: Option<String>,
    method_may_be_refused: bool,
) -> Option<reqwest::Response> {
    let url = probe.table_setting("/endpoint", "endpoint")?;
    let headers = table_headers(probe)?;
    probe.pass(Stage::Resolve, format!("{method} {url}"));
    let client = match reqwest::Client::builder()
        .connect_timeout(probe.timeout)
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            probe.fail(
                Stage::Connect,
                TestCode::TlsFailed,
                format!("no HTTP client: {e}"),
                "This is a bug in Tributary; please report it.",
            );
            return None;
        }
    };
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut request = client.request(method.clone(), &url);
    for (name, value) in &headers {
        request = request.header(name, value);
    }
    if let Some(b) = body {
        request = request.body(b);
    }
    let sent = probe
        .within(
            Stage::Connect,
            &format!("the request to {url}"),
            request.send(),
        )
        .await?;
    let response = match sent {
        Ok(r) => r,
        Err(e) => {
            let text = root_cause(&e);
            let (code, hint) = if is_dns_error(&text) {
                (
                    TestCode::DnsUnresolved,
                    "Check the host name in 'endpoint'.",
                )
            } else if e.is_timeout() {
                (
                    TestCode::Timeout,
                    "Check that the endpoint is reachable from here.",
                )
            } else if text.to_lowercase().contains("certificate")
                || text.to_lowercase().contains("tls")
            {
                (
                    TestCode::TlsFailed,
                    "Check the server's certificate, or use http:// for a plain endpoint.",
                )
            } else {
                (
                    TestCode::ConnectRefused,
                    "Check the host and port in 'endpoint', and that the server is running.",
                )
            };
            probe.fail(
                Stage::Connect,
                code,
                format!("cannot reach {url}: {text}"),
                hint,
            );
            return None;
        }
    };
    probe.pass(Stage::Connect, format!("{url} answered"));
    let status = response.status();
    match status.as_u16() {
        200..=299 => {
            probe.pass(Stage::Authenticate, format!("{status}"));
            probe.pass(Stage::Locate, format!("{url} exists"));
            Some(response)
        }
        405 if method_may_be_refused => {
            probe.pass(
                Stage::Locate,
                format!("{url} exists (it answered {method} with {status})"),
            );
            Some(response)
        }
        _ => {
            status_failure(probe, &url, status);
            None
        }
    }
}

/// The table's `headers`, with `{{ VAR }}` references resolved; `None` (with the failure
/// recorded) when a variable is missing or the text is malformed.
pub(crate) fn table_headers(probe: &mut Probe<'_>) -> Option<Vec<(String, String)>> {
    let Some(raw) = probe
        .table
        .and_then(|t| t.pointer("/headers"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
    else {
        return Some(Vec::new());
    };
    let resolved = probe.resolve(&raw, "headers")?;
    match parse_headers(&resolved) {
        Ok(h) => Some(h),
        Err(e) => {
            probe.fail(
                Stage::Resolve,
                TestCode::BadResponse,
                format!("option 'headers': {e}"),
                "Write headers as 'Name: value,Other-Name: value'.",
            );
            None
        }
    }
}

/// Record why an HTTP status that is not success fails the test: 401/403 are
/// credentials, 404/410 a wrong path, anything else the server's own trouble.
pub(crate) fn status_failure(probe: &mut Probe<'_>, url: &str, status: reqwest::StatusCode) {
    match status.as_u16() {
        401 | 403 => probe.fail(
            Stage::Authenticate,
            TestCode::AuthFailed,
            format!("{url} answered {status}"),
            "Check the credentials in 'headers' (such as an Authorization header).",
        ),
        404 | 410 => probe.fail(
            Stage::Locate,
            TestCode::NotFound,
            format!("{url} answered {status}"),
            "Check the path of 'endpoint'.",
        ),
        _ => probe.fail(
            Stage::Locate,
            TestCode::BadResponse,
            format!("{url} answered {status}"),
            "Check the endpoint and the server's logs.",
        ),
    }
}

/// The whole body as one message.
pub(crate) async fn read_body(probe: &mut Probe<'_>, response: reqwest::Response) {
    if !probe.wants_messages() {
        return;
    }
    match probe
        .within(Stage::Read, "reading the response", response.bytes())
        .await
    {
        Some(Ok(body)) if body.is_empty() => probe.fail(
            Stage::Read,
            TestCode::Empty,
            "the response body is empty",
            "Check that the endpoint returns data for this request.",
        ),
        Some(Ok(body)) => {
            probe.pass(Stage::Read, format!("read a {} byte response", body.len()));
            probe.messages.push(body.to_vec().into());
        }
        Some(Err(e)) => probe.fail(
            Stage::Read,
            TestCode::BadResponse,
            format!("the response broke off: {}", root_cause(&e)),
            "Check the server.",
        ),
        None => {}
    }
}

/// Up to `probe.limit` server-sent events (their `data`), of the types in `events` (all
/// when empty), within the probe's timeout.
pub(crate) async fn read_events(
    probe: &mut Probe<'_>,
    response: reqwest::Response,
    events: &[String],
) {
    if !probe.wants_messages() {
        return;
    }
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let (mut event_type, mut data): (Option<String>, Vec<String>) = (None, Vec::new());
    let deadline = tokio::time::Instant::now() + probe.timeout;
    while probe.messages.len() < probe.limit {
        let chunk = match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) | Ok(None) => break,
            Ok(Some(Err(e))) => {
                probe.fail(
                    Stage::Read,
                    TestCode::BadResponse,
                    format!("the event stream broke off: {}", root_cause(&e)),
                    "Check the server.",
                );
                return;
            }
            Ok(Some(Ok(c))) => c,
        };
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                // An event ends at a blank line.
                let kind = event_type.take().unwrap_or_else(|| "message".into());
                if !data.is_empty()
                    && (events.is_empty() || events.contains(&kind))
                    && probe.messages.len() < probe.limit
                {
                    probe.messages.push(data.join("\n").into_bytes().into());
                }
                data.clear();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
            } else if let Some(v) = line.strip_prefix("event:") {
                event_type = Some(v.trim().to_string());
            }
        }
    }
    let n = probe.messages.len();
    if n == 0 {
        let filter = if events.is_empty() {
            String::new()
        } else {
            format!(" of type {}", events.join(", "))
        };
        probe.fail(
            Stage::Read,
            TestCode::Empty,
            format!("no events{filter} arrived within {}", human(probe.timeout)),
            "The stream may be idle: try again while events are sent, give the test a longer TIMEOUT, or check 'events'.",
        );
    } else {
        probe.pass(
            Stage::Read,
            format!("read {n} event{}", if n == 1 { "" } else { "s" }),
        );
    }
}

/// The innermost cause of a transport error, which is what a user can act on.
fn root_cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}
