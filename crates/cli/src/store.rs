//! Opening the catalog the command line names.

use crate::args::Cli;
use crate::output::err_line;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_catalog::{CatalogStore, LockWait, OverlayStore, SledStore};

/// The catalog directory: `--catalog`, `TRIBUTARY_CATALOG`, or the data directory.
pub fn catalog_path(cli: &Cli) -> Result<PathBuf, String> {
    if let Some(p) = &cli.catalog {
        return Ok(p.clone());
    }
    dirs::data_dir()
        .map(|d| d.join("tributary").join("catalog"))
        .ok_or_else(|| {
            "cannot find a data directory for the default catalog; pass --catalog PATH".to_string()
        })
}

fn wait(cli: &Cli) -> LockWait<'static> {
    static SAY: fn(&Path) = |path| {
        err_line(&format!(
            "waiting for catalog '{}', which another process is using …",
            path.display()
        ))
    };
    LockWait {
        timeout: cli.lock_timeout,
        on_wait: &SAY,
    }
}

/// Open the catalog for writing, waiting up to `--lock-timeout` for another process.
pub fn open(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let path = catalog_path(cli)?;
    SledStore::open_waiting(&path, wait(cli))
        .map(|s| Arc::new(s) as Arc<dyn CatalogStore>)
        .map_err(|e| describe(e, cli))
}

/// The catalog as it is now, under an in-memory overlay (nothing is written, and the
/// catalog is not locked: a copy is read, so a REPL may hold it meanwhile). A catalog
/// that does not exist yet reads as empty and is not created.
pub fn open_overlay(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let path = catalog_path(cli)?;
    if !path.join("db").exists() {
        return Ok(Arc::new(OverlayStore::in_memory()));
    }
    let base = SledStore::open_snapshot(&path, wait(cli)).map_err(|e| describe(e, cli))?;
    Ok(Arc::new(OverlayStore::over(Arc::new(base))))
}

fn describe(e: tributary_catalog::CatalogError, cli: &Cli) -> String {
    match e {
        tributary_catalog::CatalogError::InUse {
            server: Some(ref url),
            ..
        } => format!(
            "{e}\n  help: Send the statements to the server with `tributary --server {url} run ...` (or `repl`), or stop the server first."
        ),
        tributary_catalog::CatalogError::InUse { .. } => format!(
            "{e} (waited {:?})\n  help: Close the other Tributary process, wait longer with --lock-timeout, or pass --catalog with another path.",
            cli.lock_timeout
        ),
        other => other.to_string(),
    }
}
