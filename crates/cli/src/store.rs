//! Opening the catalog the command line names: a sled directory, or a PostgreSQL
//! database given as a `postgres://` URL.

use crate::args::Cli;
use crate::output::err_line;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_catalog::{
    CatalogStore, LockWait, OverlayStore, PostgresStore, SledStore, is_postgres_url,
};

/// Where a catalog lives.
#[derive(Debug, Clone)]
pub enum Location {
    /// An embedded catalog in this directory.
    Dir(PathBuf),
    /// A PostgreSQL database (the URL may hold a password: never print it).
    Postgres(String),
}

impl Location {
    /// What `--catalog` or `TRIBUTARY_CATALOG` (or an argument) names.
    pub fn parse(given: &Path) -> Self {
        match given.to_str() {
            Some(text) if is_postgres_url(text) => Self::Postgres(text.to_string()),
            _ => Self::Dir(given.to_path_buf()),
        }
    }

    /// The location as messages show it (never a password).
    pub fn shown(&self) -> String {
        match self {
            Self::Dir(path) => path.display().to_string(),
            Self::Postgres(url) => tributary_catalog::postgres_url_shown(url),
        }
    }

    /// Open the catalog for writing, waiting for another process as `wait` says (a
    /// directory only: a PostgreSQL catalog is shared).
    pub fn open(
        &self,
        wait: LockWait<'_>,
    ) -> Result<Arc<dyn CatalogStore>, tributary_catalog::CatalogError> {
        Ok(match self {
            Self::Dir(path) => Arc::new(SledStore::open_waiting(path, wait)?),
            Self::Postgres(url) => Arc::new(PostgresStore::open(url)?),
        })
    }
}

/// The catalog: `--catalog`, `TRIBUTARY_CATALOG`, or the data directory.
pub fn catalog_location(cli: &Cli) -> Result<Location, String> {
    if let Some(p) = &cli.catalog {
        return Ok(Location::parse(p));
    }
    dirs::data_dir()
        .map(|d| Location::Dir(d.join("tributary").join("catalog")))
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
    open_at(&catalog_location(cli)?, cli)
}

/// The catalog for running statements. A catalog directory, which this process alone
/// holds, stages a script's consecutive catalog statements into batches
/// ([`StagingStore`](tributary_catalog::StagingStore)); PostgreSQL, which other
/// processes share, is written statement by statement.
pub fn open_for_statements(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let location = catalog_location(cli)?;
    let store = open_at(&location, cli)?;
    match location {
        Location::Dir(_) => tributary_catalog::StagingStore::over(store)
            .map(|s| Arc::new(s) as Arc<dyn CatalogStore>)
            .map_err(|e| format!("error: cannot start a thread for the catalog: {e}")),
        Location::Postgres(_) => Ok(store),
    }
}

/// The catalog as it is now, under an in-memory overlay (nothing is written, and the
/// catalog is not locked: a copy is read, so a REPL may hold it meanwhile; a
/// PostgreSQL catalog is read in place). A catalog directory that does not exist yet
/// reads as empty and is not created.
pub fn open_overlay(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let base = read_only(&catalog_location(cli)?, cli)?;
    Ok(Arc::new(match base {
        Some(base) => OverlayStore::over(base),
        None => OverlayStore::in_memory(),
    }))
}

/// The catalog at `location` for reading, as [`open_overlay`] reads it (writes to it
/// are lost), created or upgraded nowhere; `None` where there is no catalog yet.
pub fn read_only(location: &Location, cli: &Cli) -> Result<Option<Arc<dyn CatalogStore>>, String> {
    match location {
        Location::Postgres(url) => {
            let store = PostgresStore::open_existing(url).map_err(|e| describe(e, cli))?;
            Ok(store.map(|s| Arc::new(s) as Arc<dyn CatalogStore>))
        }
        Location::Dir(path) if !path.join("db").exists() => Ok(None),
        Location::Dir(path) => {
            let store = SledStore::open_snapshot(path, wait(cli)).map_err(|e| describe(e, cli))?;
            Ok(Some(Arc::new(store)))
        }
    }
}

/// Open the catalog at `location` for writing, as [`open`] does.
pub fn open_at(location: &Location, cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    location.open(wait(cli)).map_err(|e| describe(e, cli))
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
        e @ tributary_catalog::CatalogError::Unreachable { .. } => format!(
            "{e}\n  help: Check that the database runs and that the URL's host, port, user and database are right."
        ),
        e @ tributary_catalog::CatalogError::OlderSchema { .. } => {
            format!("{e}\n  help: Open it once with `tributary run` or `serve`, which upgrades it.")
        }
        e @ tributary_catalog::CatalogError::NewerSchema { .. } => {
            format!("{e}\n  help: Use a newer Tributary to open this catalog.")
        }
        other => other.to_string(),
    }
}
