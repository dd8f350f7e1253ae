//! The deepest statements the parser's limits let through, on the smallest stacks an
//! embedder gives: a Tokio worker has 2 MiB. Planning grows its own stack; what runs on
//! the caller's (execution, rendering) fits. A failure here aborts the whole binary.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::sync::Arc;
use tributary_catalog::OverlayStore;
use tributary_sql::{Mode, Session};

/// Run `f` on a thread with a 2 MiB stack and a current-thread runtime.
fn on_small_stack(f: impl FnOnce(&tokio::runtime::Runtime) + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            f(&rt);
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn statements_at_the_depth_limits_run_on_a_two_megabyte_stack() {
    on_small_stack(|rt| {
        rt.block_on(async {
            let session = Session::new(Arc::new(OverlayStore::in_memory())).offline();
            let sum = vec!["a"; 250].join(" + ");
            session
                .execute(&format!(
                    "CREATE TABLE t (a BIGINT, b BIGINT GENERATED ALWAYS AS ({sum})) WITH (connector = 'kafka', bootstrap_servers = 'b:1', topic = 't', type = 'source', format = 'json')"
                ))
                .await
                .unwrap();
            let query = format!("SELECT {sum} AS s FROM (VALUES (CAST(2 AS BIGINT))) AS v(a)");
            let checked = session.run_script(&query, Mode::Check).await;
            assert!(checked[0].is_ok(), "{:?}", checked[0].as_ref().err());
            let ran = session.execute(&query).await.unwrap();
            let tributary_sql::Output::Rows { batches, .. } = &ran[0].output else {
                panic!("no rows")
            };
            let s = batches[0]
                .column(0)
                .as_any()
                .downcast_ref::<datafusion::arrow::array::Int64Array>()
                .unwrap()
                .value(0);
            assert_eq!(s, 500);
            let explained = session.execute(&format!("EXPLAIN {query}")).await.unwrap();
            assert!(matches!(explained[0].output, tributary_sql::Output::Rows { .. }));
        })
    });
}
