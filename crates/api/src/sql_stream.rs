//! `POST /sql`, streamed: each query's rows are sent as they arrive, as [`SqlEvent`]s
//! (its columns, batches of rows, its result with the row count), then the script's
//! summary. A query over an endless source streams until the client leaves: dropping the
//! [`SqlStream`] stops the script's task, which closes the query's connections.

use super::bodies::SqlPost;
use super::error::ApiError;
use super::queries::{checking_session, sql_columns, sql_mode, statement_result};
use super::rows::rows_as_arrays;
use super::views::{SqlEvent, SqlStatementResult};
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tributary_sql::session::{Mode, RowSink, Session};
use tributary_types::Span;

/// Events waiting for the client before the query waits for it: the client's pace
/// bounds the server's memory.
const EVENTS_IN_FLIGHT: usize = 16;

/// A running script's events; the last is the summary. Dropping it cancels the script.
#[derive(Debug)]
pub struct SqlStream {
    events: mpsc::Receiver<SqlEvent>,
    task: tokio::task::JoinHandle<()>,
}

impl SqlStream {
    /// The next event; `None` after the summary.
    pub async fn next(&mut self) -> Option<SqlEvent> {
        self.events.recv().await
    }
}

impl Drop for SqlStream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start running (or checking) `post`'s script on `session`, streaming its events.
/// A governed session's request takes a slot (held until the stream ends), runs on the
/// query threads and ends at its deadline with a failed result saying so.
pub async fn stream_sql(session: Arc<Session>, post: SqlPost) -> Result<SqlStream, ApiError> {
    let mode = sql_mode(&post)?;
    let asked = super::governed::asked_deadline(post.deadline.as_deref())?;
    let deadline = super::governed::deadline(&session, asked)?;
    let slot = super::governed::admit(&session).await?;
    let resources = session.resources();
    let (tx, rx) = mpsc::channel(EVENTS_IN_FLIGHT);
    let work = async move {
        let _slot = slot;
        let finished = match deadline {
            None => {
                stream_script(&session, &post, mode, &tx).await;
                true
            }
            Some(d) => tokio::time::timeout(d, stream_script(&session, &post, mode, &tx))
                .await
                .is_ok(),
        };
        if !finished {
            let overrun =
                tributary_exec::resources::Overrun::Deadline(deadline.unwrap_or_default());
            let failure = Err(tributary_sql::session::StatementError {
                span: Span::default(),
                diagnostics: vec![
                    tributary_types::Diagnostic::error(overrun.to_string())
                        .with_help(super::governed::DEADLINE_HINT)
                        .with_code(tributary_types::codes::RESOURCES_EXHAUSTED),
                ],
            });
            let _ = tx.send(SqlEvent::Result(statement_result(failure))).await;
            let _ = tx
                .send(SqlEvent::Summary {
                    failed: 1,
                    suppressed_diagnostics: 0,
                })
                .await;
        }
    };
    let task = match resources {
        Some(r) => r.spawn(work),
        None => tokio::spawn(work),
    };
    Ok(SqlStream { events: rx, task })
}

/// Run the script, sending its events to `tx`; returns when it has ended or the client
/// has gone.
async fn stream_script(
    session: &Arc<Session>,
    post: &SqlPost,
    mode: Mode,
    tx: &mpsc::Sender<SqlEvent>,
) {
    {
        let checking;
        let session: &Session = if mode == Mode::Check {
            checking = checking_session(session);
            &checking
        } else {
            session
        };
        let sink = EventSink {
            tx: tx.clone(),
            pending: Mutex::new(Vec::new()),
        };
        // The script's callback cannot await: each statement's result waits in
        // `pending` and is sent before the next event, so events keep the script's order.
        let run = session.run_script_streaming(&post.sql, mode, &sink, |outcome| {
            sink.hold(statement_result(outcome));
            ControlFlow::Continue(())
        });
        let summary = tokio::select! {
            s = run => s,
            // The client left: stop at once, even while a source is silent.
            () = tx.closed() => return,
        };
        if sink.flush().await.is_break() {
            return;
        }
        let _ = tx
            .send(SqlEvent::Summary {
                failed: summary.failed,
                suppressed_diagnostics: summary.suppressed_diagnostics,
            })
            .await;
    }
}

/// Sends a query's rows as events, after the results of the statements before it.
struct EventSink {
    tx: mpsc::Sender<SqlEvent>,
    pending: Mutex<Vec<SqlStatementResult>>,
}

#[async_trait::async_trait]
impl RowSink for EventSink {
    async fn begin(&self, span: Span, schema: &SchemaRef) -> ControlFlow<()> {
        self.flush().await?;
        self.send(SqlEvent::Columns {
            line: span.start.line,
            column: span.start.column,
            columns: sql_columns(schema),
            arrow_schema: serde_json::to_value(schema.as_ref()).ok(),
        })
        .await
    }

    async fn batch(&self, batch: RecordBatch) -> ControlFlow<()> {
        match rows_as_arrays(&[batch], usize::MAX) {
            Ok((rows, _)) => self.send(SqlEvent::Rows { rows }).await,
            // A value JSON cannot carry: stop, and the statement's result says so.
            Err(_) => ControlFlow::Break(()),
        }
    }
}

impl EventSink {
    fn hold(&self, result: SqlStatementResult) {
        if let Ok(mut p) = self.pending.lock() {
            p.push(result);
        }
    }

    /// Send the results held so far.
    async fn flush(&self) -> ControlFlow<()> {
        let held = match self.pending.lock() {
            Ok(mut p) => std::mem::take(&mut *p),
            Err(_) => Vec::new(),
        };
        for r in held {
            self.send(SqlEvent::Result(r)).await?;
        }
        ControlFlow::Continue(())
    }

    async fn send(&self, event: SqlEvent) -> ControlFlow<()> {
        match self.tx.send(event).await {
            Ok(()) => ControlFlow::Continue(()),
            Err(_) => ControlFlow::Break(()),
        }
    }
}
