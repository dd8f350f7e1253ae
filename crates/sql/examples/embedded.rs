//! Embedding Tributary in a DataFusion application: open a catalog, register it on a
//! `SessionContext`, run DDL, and plan a query.
//!
//! Run it with `cargo run -p tributary-sql --example embedded [CATALOG_DIR]`; without an
//! argument it uses a temporary directory.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;
use std::sync::Arc;
use tributary_catalog::SledStore;
use tributary_sql::{Output, Session, session_config};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = match std::env::args().nth(1) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir().join(format!("tributary-embedded-{}", std::process::id())),
    };
    // 1. Open the catalog (sled, in a directory).
    let store = Arc::new(SledStore::open(&dir)?);

    // 2. A DataFusion context configured for Tributary, with the catalog registered.
    let ctx = SessionContext::new_with_config(session_config());
    let session = Session::with_context(ctx, store);

    // 3. DDL goes through the session, which understands Tributary's dialect.
    session
        .execute(
            "CREATE TABLE IF NOT EXISTS clicks (
                 user_id BIGINT NOT NULL,
                 url TEXT,
                 at TIMESTAMP NOT NULL,
                 WATERMARK FOR at AS at - INTERVAL '2' SECOND
             ) WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092',
                     topic = 'clicks', type = 'source', format = 'json')",
        )
        .await?;

    // 4. Queries plan through DataFusion against the catalog, as DataFrames.
    let df = session
        .sql("SELECT user_id, COUNT(*) AS clicks FROM clicks GROUP BY user_id, TUMBLE(at, INTERVAL '1' MINUTE)")
        .await?;
    println!("{}", df.logical_plan().display_indent());

    for result in session.execute("SHOW TABLES").await? {
        if let Output::Rows { batches, .. } = result.output {
            println!("{}", pretty_format_batches(&batches)?);
        }
    }
    Ok(())
}
