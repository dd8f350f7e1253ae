//! Opening the catalog the command line names.

use crate::args::Cli;
use std::path::PathBuf;
use std::sync::Arc;
use tributary_catalog::{CatalogStore, OverlayStore, SledStore};

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

/// Open the catalog for writing.
pub fn open(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let path = catalog_path(cli)?;
    SledStore::open(&path)
        .map(|s| Arc::new(s) as Arc<dyn CatalogStore>)
        .map_err(describe)
}

/// Open the catalog under an in-memory overlay (nothing is written). A catalog that does
/// not exist yet reads as empty and is not created.
pub fn open_overlay(cli: &Cli) -> Result<Arc<dyn CatalogStore>, String> {
    let path = catalog_path(cli)?;
    if !path.exists() {
        return Ok(Arc::new(OverlayStore::in_memory()));
    }
    let base = SledStore::open(&path).map_err(describe)?;
    Ok(Arc::new(OverlayStore::over(Arc::new(base))))
}

fn describe(e: tributary_catalog::CatalogError) -> String {
    match e {
        tributary_catalog::CatalogError::InUse { .. } => {
            format!(
                "{e}\n  help: Close the other Tributary process, or pass --catalog with another path."
            )
        }
        other => other.to_string(),
    }
}
