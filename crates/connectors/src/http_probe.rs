//! Connection tests over HTTP, shared by `polling_http` and `sse`: one request to the
//! table's endpoint with its headers (secrets resolved only now, never printed), each
//! failure classified (DNS, refused, timeout, TLS, 401/403, 404, other statuses), then the
//! body read as one message (polling) or as server-sent events (sse).

use crate::http::parse_headers;
use crate::probe::{Probe, SampledMessage, Stage, TestCode, human, is_dns_error};
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
    let target = HttpTarget::of(probe, method, body).await?;
    send(probe, &target, method_may_be_refused).await
}

/// Send `target`'s request once, classifying what goes wrong by stage; the response when
/// it answered with success (or refused only the method, when that is allowed).
pub(crate) async fn send(
    probe: &mut Probe<'_>,
    target: &HttpTarget,
    method_may_be_refused: bool,
) -> Option<reqwest::Response> {
    let url = target.url.clone();
    let method = target.method.clone();
    let request = target.request();
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
/// An HTTP request a table makes, built once from its settings (`{{ VAR }}` references
/// resolved) and sent as often as needed: a test sends it once, a polling source at
/// every interval.
#[derive(Debug, Clone)]
pub(crate) struct HttpTarget {
    client: reqwest::Client,
    pub url: String,
    pub method: reqwest::Method,
    headers: Vec<(String, String)>,
    body: Option<String>,
}

impl HttpTarget {
    /// The table's request (`endpoint`, `headers`); `None` when a setting cannot be
    /// resolved or no client can be made (the probe says why).
    pub(crate) async fn of(
        probe: &mut Probe<'_>,
        method: &str,
        body: Option<String>,
    ) -> Option<Self> {
        let url = probe.table_setting("/endpoint", "endpoint")?;
        let headers = table_headers(probe)?;
        let mut builder = reqwest::Client::builder().connect_timeout(probe.timeout);
        if !probe.access().is_unrestricted() {
            // A confined session connects only to the address it checked: the client is
            // pinned to it (no second lookup can land elsewhere) and follows no
            // redirect, which could name any host.
            let (host, port) = match reqwest::Url::parse(&url) {
                Ok(u) => (
                    u.host_str().unwrap_or_default().to_string(),
                    u.port_or_known_default().unwrap_or(80),
                ),
                Err(e) => {
                    probe.fail(
                        Stage::Resolve,
                        TestCode::NotFound,
                        format!("option 'endpoint': '{url}' is not a URL: {e}"),
                        "Write the endpoint as http://host:port/path.",
                    );
                    return None;
                }
            };
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let addr = probe
                .police("endpoint", &crate::probe::host_port(bare, port))
                .await?;
            builder = builder
                .resolve(bare, addr)
                .redirect(reqwest::redirect::Policy::none());
        }
        probe.pass(Stage::Resolve, format!("{method} {url}"));
        let client = match builder.build() {
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
        Some(Self {
            client,
            url,
            method: reqwest::Method::from_bytes(method.as_bytes()).unwrap_or(reqwest::Method::GET),
            headers,
            body,
        })
    }

    /// The request with `body` instead of the table's (a webhook's row).
    pub(crate) fn request_with(&self, body: Vec<u8>) -> reqwest::RequestBuilder {
        let mut request = self.client.request(self.method.clone(), &self.url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        request.body(body)
    }

    /// The request, ready to send.
    pub(crate) fn request(&self) -> reqwest::RequestBuilder {
        let mut request = self.client.request(self.method.clone(), &self.url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some(b) = &self.body {
            request = request.body(b.clone());
        }
        request
    }
}

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
    let mut parser = SseParser::new(events.to_vec());
    let deadline = tokio::time::Instant::now() + probe.timeout;
    while probe.messages.len() < probe.limit {
        let chunk =
            match tokio::time::timeout_at(probe.sample_deadline(deadline), stream.next()).await {
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
        match parser.push(&chunk) {
            Ok(done) => {
                let room = probe.limit - probe.messages.len();
                probe
                    .messages
                    .extend(done.into_iter().take(room).map(SampledMessage::from));
            }
            Err(e) => {
                probe.fail(Stage::Read, TestCode::BadResponse, e, "Check the server.");
                return;
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

/// The longest event line kept while it is incomplete: a stream without newlines is an
/// error rather than a growing buffer.
const MAX_EVENT_LINE: usize = 16 * 1024 * 1024;

/// Server-sent events out of the bytes of a stream, in any chunking: each complete event
/// of a wanted type (all types when `types` is empty) becomes its `data` lines joined.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    types: Vec<String>,
    buffer: Vec<u8>,
    event_type: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    pub(crate) fn new(types: Vec<String>) -> Self {
        Self {
            types,
            ..Self::default()
        }
    }

    /// The events `chunk` completes.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        self.buffer.extend_from_slice(chunk);
        let mut done = Vec::new();
        let mut start = 0;
        while let Some(end) = self.buffer[start..].iter().position(|b| *b == b'\n') {
            let raw = &self.buffer[start..start + end];
            start += end + 1;
            let line = String::from_utf8_lossy(raw);
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                // An event ends at a blank line.
                let kind = self.event_type.take().unwrap_or_else(|| "message".into());
                if !self.data.is_empty() && (self.types.is_empty() || self.types.contains(&kind)) {
                    done.push(self.data.join("\n").into_bytes());
                }
                self.data.clear();
            } else if let Some(v) = line.strip_prefix("data:") {
                self.data.push(v.strip_prefix(' ').unwrap_or(v).to_string());
            } else if let Some(v) = line.strip_prefix("event:") {
                self.event_type = Some(v.trim().to_string());
            }
        }
        self.buffer.drain(..start);
        if self.buffer.len() > MAX_EVENT_LINE {
            return Err(format!(
                "an event line is longer than {} MiB",
                MAX_EVENT_LINE >> 20
            ));
        }
        Ok(done)
    }
}

/// The innermost cause of a transport error, which is what a user can act on.
pub(crate) fn root_cause(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    source.to_string()
}
