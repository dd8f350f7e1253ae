//! `tributary catalog`: commands on the catalog as a whole. `dump` prints the script that
//! recreates it (the library's `tributary_sql::dump`), read from a snapshot, so it runs
//! beside a shell or server holding the catalog.

use crate::args::{CatalogCommand, Cli};
use crate::output::{Stdout, err_line};

/// Run a `catalog` command; the exit code.
pub fn run(cli: &Cli, command: &CatalogCommand) -> u8 {
    match command {
        CatalogCommand::Dump => dump(cli),
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
    match tributary_sql::dump::dump_catalog(store.as_ref()) {
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
