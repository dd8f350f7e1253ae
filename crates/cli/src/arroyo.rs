//! `tributary arroyo push|pull`: the library's `tributary_api::arroyo_sync`, with its
//! report printed one object per line. Exit status 0 when both sides agree on every
//! object synced, 1 when one was refused or differs, 2 when the sync could not run.

use crate::args::{ArroyoCommand, Cli};
use crate::output::{Stdout, err_line};
use tributary_api::arroyo_sync::{PushOptions, SyncReport, pull, push};
use tributary_sql::Session;

/// Run an `arroyo` command; the exit code.
pub async fn run(cli: &Cli, command: &ArroyoCommand) -> u8 {
    if cli.server.is_some() {
        err_line("error: `arroyo` works on a catalog this machine opens; leave out --server");
        return 2;
    }
    let token = cli.token.first().map(String::as_str);
    let outcome = match command {
        ArroyoCommand::Push {
            url,
            replace,
            tables,
        } => {
            // Read from a snapshot: a running shell or server may hold the catalog.
            let store = match crate::store::open_overlay(cli) {
                Ok(s) => s,
                Err(e) => return fail(&e),
            };
            let options = PushOptions {
                tables: tables.clone(),
                replace: *replace,
                token: token.map(str::to_string),
            };
            push(store.as_ref(), url, &options)
                .await
                .map(|r| ("pushed to", r))
        }
        ArroyoCommand::Pull { url } => {
            let store = match crate::store::open(cli) {
                Ok(s) => s,
                Err(e) => return fail(&e),
            };
            let session = Session::new(store);
            pull(&session, url, token).await.map(|r| ("pulled from", r))
        }
    };
    match outcome {
        Ok((verb, report)) => print(verb, &report),
        Err(e) => fail(&e.to_string()),
    }
}

fn print(verb: &str, report: &SyncReport) -> u8 {
    let mut out = Stdout::default();
    for item in &report.items {
        out.line(&item.to_string());
    }
    out.line(&format!("{verb} {}: {}", report.remote, report.summary()));
    if report.in_sync() { 0 } else { 1 }
}

fn fail(e: &str) -> u8 {
    err_line(&format!("error: {e}"));
    2
}
