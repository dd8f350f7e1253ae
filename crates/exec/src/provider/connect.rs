//! Opening a connector's reader, writer or lookup for a query, through a probe as its connection
//! test would: an offline session refuses connectors that leave the machine, and a failure
//! names the stage and its stable code (`cannot read table 't': connect failed
//! [CONNECT_REFUSED]: ...`), redacted like every diagnostic.

use super::catalog::SessionShared;
use crate::connection_probe::{DEFAULT_TIMEOUT, connection_of, env_var, whole_files};
use datafusion::error::{DataFusionError, Result};
use tributary_connectors::lookup::LookupReader;
use tributary_connectors::probe::{Outcome, Probe, Split, TestCode};
use tributary_connectors::registry;
use tributary_connectors::sink::SinkWriter;
use tributary_connectors::source::SourceReader;
use tributary_types::{ConnectionTable, Diagnostic, redact_text};

/// Which way a query moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transfer {
    Read,
    Write,
    /// Rows fetched by key for a lookup join.
    Lookup,
}

impl Transfer {
    fn verb(self) -> &'static str {
        match self {
            Transfer::Read => "read",
            Transfer::Write => "write",
            Transfer::Lookup => "look up rows in",
        }
    }

    /// `cannot read table 't': ...`, with a hint.
    pub(crate) fn failure(
        self,
        table: &ConnectionTable,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> DataFusionError {
        // Connectors never put a secret in their words, but a client library's error text
        // may hold an address with credentials: redact as every diagnostic is.
        let hint = redact_text(&hint.into()).into_owned();
        let message = redact_text(&message.into()).into_owned();
        let d = Diagnostic::error(format!(
            "cannot {} table '{}': {message}",
            self.verb(),
            table.name
        ));
        tributary_dialect::datafusion_diagnostics::to_datafusion(if hint.is_empty() {
            d
        } else {
            d.with_help(hint)
        })
    }
}

/// A reader, a writer or a lookup, as opened.
pub(crate) enum Opened {
    Reader(Box<dyn SourceReader>),
    Writer(Box<dyn SinkWriter>),
    Lookup(Box<dyn LookupReader>),
}

/// Open `table`'s reader, writer or lookup (`Connector::open_source` / `open_sink` /
/// `open_lookup`) on a probe;
/// `limit` is the most messages the query will read, `split` the share of the source's
/// partitions a reader takes.
pub(crate) async fn connect(
    shared: &SessionShared,
    table: &ConnectionTable,
    transfer: Transfer,
    limit: usize,
    split: Split,
) -> Result<Opened> {
    let Some(entry) = registry().get(&table.connector) else {
        return Err(transfer.failure(
            table,
            format!("connector '{}' is not known to this build", table.connector),
            "Recreate the table with a connector from SHOW CONNECTORS.",
        ));
    };
    let connector = entry.connector;
    if shared.is_offline() && !connector.stays_local(&table.config) {
        let doing = match transfer {
            Transfer::Read => "reading",
            Transfer::Write => "writing",
            Transfer::Lookup => "looking rows up in",
        };
        return Err(tributary_dialect::datafusion_diagnostics::to_datafusion(
            Diagnostic::error(format!(
                "{doing} table '{}' (connector '{}') needs the network, and this session is offline",
                table.name, table.connector
            ))
            .with_help("Run the query in a session that may connect (tributary run or repl).")
            .with_code(tributary_types::codes::UNSUPPORTED),
        ));
    }
    let connection = connection_of(shared.store.as_ref(), table);
    let env: &(dyn Fn(&str) -> Option<String> + Send + Sync) = &env_var;
    let access = shared.access();
    let mut probe = Probe::new(&connection, DEFAULT_TIMEOUT, env, &access).with_table(
        &table.config,
        table.connection_type,
        limit,
    );
    probe.whole_files = whole_files(table);
    probe.query = true;
    probe.split = split;
    probe.format = table.schema.format.clone();
    let opened = match transfer {
        Transfer::Read => connector.open_source(&mut probe).await.map(Opened::Reader),
        Transfer::Write => connector.open_sink(&mut probe).await.map(Opened::Writer),
        Transfer::Lookup => connector.open_lookup(&mut probe).await.map(Opened::Lookup),
    };
    if let Some(opened) = opened {
        return Ok(opened);
    }
    let failed = probe.events().iter().find(|e| e.outcome == Outcome::Failed);
    let (message, hint) = match failed {
        Some(e) => (
            format!(
                "{} failed [{}]: {}",
                e.stage,
                e.code.unwrap_or(TestCode::BadResponse),
                e.message
            ),
            e.hint.clone().unwrap_or_default(),
        ),
        None => (
            format!("the connector could not {} it", transfer.verb()),
            "Run TEST TABLE to see each stage of the connection.".into(),
        ),
    };
    Err(transfer.failure(table, message, hint))
}
