//! One INSERT's rows through an open sink writer: each batch encoded and written, the
//! writer woken on its ticks while no rows arrive, then finished; on any failure (of the
//! input, the encoding or a write) the writer abandons what it has not committed.

use datafusion::arrow::array::RecordBatch;
use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::SendableRecordBatchStream;
use futures::StreamExt;
use tributary_connectors::sink::{OutMessage, SinkWriter, WriteFailure};

/// Write every batch of `input` through `writer` (`encode` turning a batch into
/// messages, `failed` a writer's failure into the statement's error) and finish; the
/// number of rows written. A failure abandons the writer before it is returned. A
/// cancellation (the future dropped) abandons nothing: the writer's drop keeps what it
/// wrote.
pub(crate) async fn write_rows(
    writer: &mut dyn SinkWriter,
    mut input: SendableRecordBatchStream,
    encode: impl Fn(&RecordBatch) -> Result<Vec<OutMessage>>,
    failed: impl Fn(WriteFailure) -> DataFusionError,
) -> Result<u64> {
    let mut ticks = writer.tick_every().map(tokio::time::interval);
    let mut rows = 0u64;
    let written = async {
        loop {
            // A writer that closes files on time is woken while no rows arrive.
            let next = tokio::select! {
                next = input.next() => next,
                () = tick(ticks.as_mut()) => {
                    writer.tick().await.map_err(&failed)?;
                    continue;
                }
            };
            let Some(batch) = next else { break };
            let batch = batch?;
            if batch.num_rows() == 0 {
                continue;
            }
            writer.write(encode(&batch)?).await.map_err(&failed)?;
            rows += batch.num_rows() as u64;
        }
        writer.finish().await.map_err(&failed)
    }
    .await;
    if let Err(e) = written {
        writer.abandon();
        return Err(e);
    }
    Ok(rows)
}

/// Resolves at the next tick; never without a ticker.
async fn tick(ticks: Option<&mut tokio::time::Interval>) {
    match ticks {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
    use std::sync::{Arc, Mutex};

    /// What a writer was asked to do, in order.
    #[derive(Debug, Default)]
    struct Recording(Arc<Mutex<Vec<String>>>);

    #[async_trait::async_trait]
    impl SinkWriter for Recording {
        async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("write {}", messages.len()));
            Ok(())
        }

        async fn finish(&mut self) -> Result<(), WriteFailure> {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push("finish".into());
            Ok(())
        }

        fn abandon(&mut self) {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push("abandon".into());
        }
    }

    /// Batches of two rows; the third fails, as a division by zero would.
    fn input(fail_third: bool) -> SendableRecordBatchStream {
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let batch = |n: i64| {
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(vec![n, n]))])
                .map_err(DataFusionError::from)
        };
        let third = if fail_third {
            Err(DataFusionError::ArrowError(
                Box::new(datafusion::arrow::error::ArrowError::DivideByZero),
                None,
            ))
        } else {
            batch(3)
        };
        let items = vec![batch(1), batch(2), third];
        Box::pin(RecordBatchStreamAdapter::new(
            schema.clone(),
            futures::stream::iter(items),
        ))
    }

    async fn run(fail_third: bool) -> (Result<u64>, Vec<String>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut writer = Recording(log.clone());
        let result = write_rows(
            &mut writer,
            input(fail_third),
            |b| Ok(vec![OutMessage::default(); b.num_rows()]),
            |e| DataFusionError::External(e.message.into()),
        )
        .await;
        let said = log.lock().unwrap_or_else(|p| p.into_inner()).clone();
        (result, said)
    }

    #[tokio::test]
    async fn a_failure_after_writes_abandons_them_and_success_finishes() {
        let (result, said) = run(true).await;
        assert!(result.is_err());
        assert_eq!(said, ["write 2", "write 2", "abandon"]);
        let (result, said) = run(false).await;
        assert_eq!(result.ok(), Some(6));
        assert_eq!(said, ["write 2", "write 2", "write 2", "finish"]);
    }
}
