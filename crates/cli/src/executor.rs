//! Where statements run: a session over the local catalog, or a Tributary server
//! (`--server`), whose answers become the same outcomes, so both print alike.

use crate::args::Cli;
use crate::remote::Remote;
use std::ops::ControlFlow;
use tributary_sql::{Mode, Outcome, RowSink, ScriptSummary, Session};

/// A local session or a server.
#[derive(Debug)]
pub enum Executor {
    /// Statements run in this process.
    Local(Box<Session>),
    /// Statements are sent to `POST /sql`.
    Remote(Remote),
}

impl Executor {
    /// What `cli` asks for: the server it names, or the catalog opened for `mode` (a
    /// snapshot under an overlay for `check`).
    pub fn open(cli: &Cli, mode: Mode) -> Result<Self, String> {
        if let Some(url) = &cli.server {
            return Remote::new(url, cli.token.last().cloned()).map(Executor::Remote);
        }
        let store = match mode {
            Mode::Run => crate::store::open_for_statements(cli)?,
            Mode::Check => crate::store::open_overlay(cli)?,
        };
        let mut session = Session::new(store);
        if cli.allow_file_writes {
            session = session.allow_file_writes();
        }
        Ok(Executor::Local(Box::new(session)))
    }

    /// Run (or check) `text`, handing each statement's outcome to `each`, and each
    /// query's rows to `rows` as they arrive (a server's too); `Err` when a server could
    /// not be asked.
    pub async fn run_script_with(
        &self,
        text: &str,
        mode: Mode,
        rows: &dyn RowSink,
        each: impl FnMut(Outcome) -> ControlFlow<()>,
    ) -> Result<ScriptSummary, String> {
        match self {
            Executor::Local(session) => {
                Ok(session.run_script_streaming(text, mode, rows, each).await)
            }
            Executor::Remote(remote) => remote.run_streaming(text, mode, rows, each).await,
        }
    }
}
