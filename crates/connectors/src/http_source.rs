//! HTTP sources for queries, and the webhook sink. `sse`: the event stream of one GET, each event of a wanted
//! type a message, until the server closes it. `polling_http`: the table's request sent
//! every `poll_interval_ms`, each response body a message (with `emit_behavior =
//! 'changed'`, only a body that differs from the one before). The first request goes
//! through the table's probe, so a failure to connect carries the test's stages and codes.

use crate::http_probe::{HttpTarget, SseParser, root_cause};
use crate::probe::SampledMessage;
use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use crate::source::{ReadFailure, SourceReader};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::collections::VecDeque;
use std::time::Duration;

/// An event stream being read.
pub(crate) struct SseReader {
    stream: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    parser: SseParser,
    pending: VecDeque<Vec<u8>>,
}

impl std::fmt::Debug for SseReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseReader")
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl SseReader {
    pub(crate) fn new(response: reqwest::Response, types: Vec<String>) -> Self {
        Self {
            stream: response.bytes_stream().boxed(),
            parser: SseParser::new(types),
            pending: VecDeque::new(),
        }
    }
}

fn broke_off(what: &str, detail: String) -> ReadFailure {
    ReadFailure::new(
        format!("the {what} broke off: {detail}"),
        "Check the server; TEST TABLE shows each stage.",
    )
}

#[async_trait::async_trait]
impl SourceReader for SseReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        while self.pending.is_empty() {
            match self.stream.next().await {
                // The server ended the stream: so does the source.
                None => return Ok(None),
                Some(Err(e)) => return Err(broke_off("event stream", root_cause(&e))),
                Some(Ok(chunk)) => {
                    let done = self
                        .parser
                        .push(&chunk)
                        .map_err(|e| broke_off("event stream", e))?;
                    self.pending.extend(done);
                }
            }
        }
        let n = max.max(1).min(self.pending.len());
        Ok(Some(
            self.pending.drain(..n).map(SampledMessage::from).collect(),
        ))
    }
}

/// A request sent at an interval.
#[derive(Debug)]
pub(crate) struct PollingReader {
    target: HttpTarget,
    interval: Duration,
    only_changed: bool,
    /// The first response, read by the probe that opened the reader.
    first: Option<Vec<u8>>,
    last: Option<Vec<u8>>,
    next_at: tokio::time::Instant,
}

impl PollingReader {
    pub(crate) fn new(
        target: HttpTarget,
        first: Vec<u8>,
        interval: Duration,
        only_changed: bool,
    ) -> Self {
        Self {
            target,
            interval,
            only_changed,
            first: Some(first),
            last: None,
            next_at: tokio::time::Instant::now() + interval,
        }
    }

    /// The next response body, sent when the interval has passed.
    async fn poll(&mut self) -> Result<Vec<u8>, ReadFailure> {
        if let Some(first) = self.first.take() {
            return Ok(first);
        }
        tokio::time::sleep_until(self.next_at).await;
        self.next_at = tokio::time::Instant::now() + self.interval;
        let response = self
            .target
            .request()
            .send()
            .await
            .map_err(|e| broke_off("poll", root_cause(&e)))?;
        let status = response.status();
        if !status.is_success() {
            return Err(ReadFailure::new(
                format!("{} answered {status}", self.target.url),
                "Check the endpoint and the server's logs.",
            ));
        }
        Ok(response
            .bytes()
            .await
            .map_err(|e| broke_off("poll", root_cause(&e)))?
            .to_vec())
    }
}

#[async_trait::async_trait]
impl SourceReader for PollingReader {
    async fn next_batch(
        &mut self,
        _max: usize,
    ) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        loop {
            let body = self.poll().await?;
            if self.only_changed && self.last.as_ref() == Some(&body) {
                continue;
            }
            self.last = Some(body.clone());
            if !body.is_empty() {
                return Ok(Some(vec![SampledMessage::from(body)]));
            }
        }
    }
}

/// How many webhook requests are in flight at once.
const WEBHOOK_CONCURRENCY: usize = 8;

/// Posts each row to an endpoint.
#[derive(Debug)]
pub(crate) struct WebhookWriter {
    target: HttpTarget,
}

impl WebhookWriter {
    pub(crate) fn new(target: HttpTarget) -> Self {
        Self { target }
    }
}

#[async_trait::async_trait]
impl SinkWriter for WebhookWriter {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let target = &self.target;
        let mut posts = futures::stream::iter(messages)
            .map(|m| async move { target.request_with(m.payload).send().await })
            .buffered(WEBHOOK_CONCURRENCY);
        while let Some(sent) = posts.next().await {
            let response = sent.map_err(|e| broke_off("request", root_cause(&e)))?;
            let status = response.status();
            if !status.is_success() {
                return Err(WriteFailure::new(
                    format!("the endpoint answered {status}"),
                    "Check the endpoint, its credentials in 'headers', and the server's logs.",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::http_probe::SseParser;

    #[test]
    fn events_are_parsed_across_any_chunking_and_filtered_by_type() {
        let text = "event: tick\ndata: {\"a\": 1}\n\n: comment\ndata: x\ndata: y\n\nevent: other\ndata: no\n\ndata: é\r\n\r\n";
        let all: Vec<Vec<u8>> = {
            let mut p = SseParser::new(vec![]);
            text.as_bytes()
                .chunks(3)
                .flat_map(|c| p.push(c).expect("parse"))
                .collect()
        };
        let as_text: Vec<String> = all
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        assert_eq!(as_text, ["{\"a\": 1}", "x\ny", "no", "é"]);
        let mut ticks = SseParser::new(vec!["tick".into()]);
        assert_eq!(ticks.push(text.as_bytes()).expect("parse").len(), 1);
    }
}
