//! `tributary catalog`: commands on the catalog as a whole. `dump` prints the script that
//! recreates it (the library's `tributary_api::dump`), read from a snapshot, so it runs
//! beside a shell or server holding the catalog; `copy` moves a catalog between stores
//! (the library's `tributary_catalog::copy_catalog`).

use crate::args::{CatalogCommand, Cli};
use crate::output::{Stdout, err_line};
use crate::store::Location;
use std::path::Path;

/// Run a `catalog` command; the exit code.
pub fn run(cli: &Cli, command: &CatalogCommand) -> u8 {
    match command {
        CatalogCommand::Dump => dump(cli),
        CatalogCommand::Copy { from, to } => copy(cli, from, to),
    }
}

fn copy(cli: &Cli, from: &Path, to: &Path) -> u8 {
    if cli.server.is_some() {
        err_line(
            "error: `catalog copy` works on catalogs this machine reaches; leave out --server",
        );
        return 2;
    }
    let fail = |e: String| {
        err_line(&format!("error: {e}"));
        2
    };
    let (from, to) = (Location::parse(from), Location::parse(to));
    let source = match crate::store::read_only(&from, cli) {
        Ok(Some(s)) => s,
        Ok(None) => {
            return fail(format!(
                "there is no catalog at '{}'\n  help: Name an existing catalog directory or a postgres:// URL as FROM.",
                from.shown()
            ));
        }
        Err(e) => return fail(e),
    };
    let target = match crate::store::open_at(&to, cli) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    match tributary_catalog::copy_catalog(source.as_ref(), target.as_ref())
        .and_then(|summary| target.flush().map(|()| summary))
    {
        Ok(summary) => {
            let _ = Stdout::default().write(&format!(
                "copied {summary} from {} to {}\n",
                source.location(),
                target.location()
            ));
            0
        }
        Err(e @ tributary_catalog::CatalogError::NotEmpty { .. }) => fail(format!(
            "{e}\n  help: Copy into a new catalog: an empty directory, or a database (or schema) without a catalog."
        )),
        Err(e) => fail(e.to_string()),
    }
}

fn dump(cli: &Cli) -> u8 {
    if cli.server.is_some() {
        err_line("error: `catalog dump` reads a catalog on this machine; leave out --server");
        return 2;
    }
    let store = match crate::store::open_overlay(cli) {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 2;
        }
    };
    match tributary_api::dump::dump_catalog(store.as_ref()) {
        Ok(dump) => {
            let _ = Stdout::default().write(&dump.script);
            0
        }
        Err(e) => {
            err_line(&format!("error: {e}"));
            2
        }
    }
}
