//! Results that stream: a caller hands [`Session::run_script_streaming`] a [`RowSink`],
//! and each query's rows reach it batch by batch as they arrive, instead of being
//! gathered into the statement's [`Output`](super::Output). A query over an endless source
//! may then run without a bound: it streams until the sink stops it (its reader went
//! away) or the caller drops the future (Ctrl-C, a closed request). Aggregates, sorts and
//! joins that would read an endless source to its end are refused as before.

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use std::ops::ControlFlow;
use tributary_types::Span;

/// Receives the rows of each query of a script as they arrive.
#[async_trait::async_trait]
pub trait RowSink: Send + Sync {
    /// The rows of the statement at `span` begin; they have `schema`. Called once per
    /// query, before any batch (also when the query has no rows).
    async fn begin(&self, span: Span, schema: &SchemaRef) -> ControlFlow<()>;

    /// One batch of rows, as it arrived. `Break` stops the query: its reader has gone.
    async fn batch(&self, batch: RecordBatch) -> ControlFlow<()>;

    /// No batch came for [`IDLE_TICK`]: a sink holding rows back may show them now.
    async fn idle(&self) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

/// How long a query waits for its next batch before telling the sink it is idle.
pub const IDLE_TICK: std::time::Duration = std::time::Duration::from_millis(500);

/// How a query's result is delivered.
#[derive(Clone, Copy)]
pub(crate) enum Delivery<'a> {
    /// Gathered into the statement's output.
    Gathered,
    /// Handed to a sink as it arrives.
    Streamed(&'a dyn RowSink),
}
