//! A connection test as server-sent events: each event one `data:` line of one-line
//! JSON (`{"error", "done", "message", ...}`), the last with `done: true`. The test's
//! place among the concurrent tests is held until the stream ends or the client leaves
//! (which cancels the test).

use crate::handlers::TestSlot;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, Stream};
use std::convert::Infallible;
use tributary_api::{TestSourceMessage, TestStream};

/// The streaming answer, starting with `first`.
pub(crate) fn events(first: TestSourceMessage, rest: TestStream, slot: TestSlot) -> Response {
    Sse::new(stream_of(first, rest, slot))
        .keep_alive(KeepAlive::default())
        .into_response()
}

struct Progress {
    first: Option<TestSourceMessage>,
    rest: TestStream,
    ended: bool,
    _slot: TestSlot,
}

fn stream_of(
    first: TestSourceMessage,
    rest: TestStream,
    slot: TestSlot,
) -> impl Stream<Item = Result<Event, Infallible>> {
    let start = Progress {
        first: Some(first),
        rest,
        ended: false,
        _slot: slot,
    };
    stream::unfold(start, |mut p| async move {
        if p.ended {
            return None;
        }
        let next = match p.first.take() {
            Some(m) => Some(m),
            None => p.rest.next().await,
        };
        let message = match next {
            Some(m) => m,
            // The test's task ended without its verdict (it panicked): say so.
            None => TestSourceMessage::fail("the connection test stopped unexpectedly"),
        };
        p.ended = message.done;
        Some((Ok(event(&message)), p))
    })
}

fn event(m: &TestSourceMessage) -> Event {
    // serde_json writes one line: newlines inside strings are escaped.
    let data = serde_json::to_string(m).unwrap_or_else(|_| {
        r#"{"error":true,"done":true,"message":"the event cannot be encoded"}"#.into()
    });
    Event::default().data(data)
}
