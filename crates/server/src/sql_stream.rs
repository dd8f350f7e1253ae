//! `POST /sql` streamed, as the client asks with `Accept`: newline-delimited JSON
//! (`application/x-ndjson`, one event per line) or server-sent events (`text/event-stream`,
//! each event named by its kind). A client that closes the request cancels the script.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream};
use std::convert::Infallible;
use tributary_api::{SqlEvent, SqlStream};

/// How the answer streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Streaming {
    Ndjson,
    Sse,
}

/// What `Accept` asks for: a stream, or (`None`) the whole answer at once.
pub(crate) fn requested(headers: &HeaderMap) -> Option<Streaming> {
    let accept = headers.get(header::ACCEPT)?.to_str().ok()?;
    accept.split(',').find_map(|part| {
        let media = part.split(';').next().unwrap_or("").trim();
        if media.eq_ignore_ascii_case("application/x-ndjson")
            || media.eq_ignore_ascii_case("application/jsonl")
        {
            Some(Streaming::Ndjson)
        } else if media.eq_ignore_ascii_case("text/event-stream") {
            Some(Streaming::Sse)
        } else {
            None
        }
    })
}

/// The streaming answer.
pub(crate) fn response(kind: Streaming, events: SqlStream) -> Response {
    let held = Held { events };
    match kind {
        Streaming::Sse => Sse::new(sse_events(held))
            .keep_alive(KeepAlive::default())
            .into_response(),
        Streaming::Ndjson => {
            let lines = stream::unfold(held, |mut held| async move {
                let event = held.events.next().await?;
                let mut line = encode(&event);
                line.push('\n');
                Some((Ok::<_, Infallible>(line), held))
            });
            let mut r = Body::from_stream(lines).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-ndjson"),
            );
            r
        }
    }
}

/// The script's events (whose task holds the request's slot).
struct Held {
    events: SqlStream,
}

fn sse_events(held: Held) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(held, |mut held| async move {
        let event = held.events.next().await?;
        let name = match &event {
            SqlEvent::Columns { .. } => "columns",
            SqlEvent::Rows { .. } => "rows",
            SqlEvent::Result(_) => "result",
            SqlEvent::Summary { .. } => "summary",
        };
        Some((Ok(Event::default().event(name).data(encode(&event))), held))
    })
}

/// One line of JSON (serde_json escapes newlines inside strings).
fn encode(event: &SqlEvent) -> String {
    serde_json::to_string(event)
        .unwrap_or_else(|_| r#"{"event":"summary","failed":1,"suppressed_diagnostics":0}"#.into())
}
