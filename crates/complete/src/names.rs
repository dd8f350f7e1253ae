//! Where completion finds catalog names: a catalog store of this process, or a
//! [`NameSnapshot`] that a client fills from a server's REST API in the background.
//! Either answers at once; a snapshot not yet filled simply has no names.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tributary_catalog::CatalogStore;

/// Catalog names for completion.
pub trait NameSource: Send + Sync {
    /// A number that changes whenever the names do (cached names are kept until then).
    fn generation(&self) -> u64;
    /// Table names.
    fn table_names(&self) -> Vec<String>;
    /// Profile names, each with its connector.
    fn profiles(&self) -> Vec<(String, String)>;
    /// The columns of table `name` (any case), each with its SQL type; none when there is
    /// no such table.
    fn columns(&self, name: &str) -> Vec<(String, String)>;
}

/// The names in a catalog store.
pub struct StoreNames(pub Arc<dyn CatalogStore>);

impl std::fmt::Debug for StoreNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StoreNames").finish_non_exhaustive()
    }
}

impl NameSource for StoreNames {
    fn generation(&self) -> u64 {
        self.0.generation()
    }

    fn table_names(&self) -> Vec<String> {
        // Views are read like tables, so they complete where tables do.
        let mut names = self.0.table_names().unwrap_or_default();
        names.extend(
            self.0
                .definitions(tributary_types::DefinitionKind::View)
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.name),
        );
        names
    }

    fn profiles(&self) -> Vec<(String, String)> {
        self.0
            .profiles()
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.name, p.connector))
            .collect()
    }

    fn columns(&self, name: &str) -> Vec<(String, String)> {
        match self.0.table_by_name(name) {
            Ok(Some(t)) => t
                .schema
                .fields
                .iter()
                .map(|f| (f.name.clone(), f.field_type.sql_name()))
                .chain(
                    t.virtual_columns
                        .iter()
                        .map(|v| (v.name.clone(), v.field_type.sql_name())),
                )
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// One table's name and columns, as a snapshot holds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotTable {
    /// The table's name.
    pub name: String,
    /// Its columns with their SQL types.
    pub columns: Vec<(String, String)>,
}

/// Names fetched from elsewhere (a server), replaced whole each time they are fetched.
#[derive(Debug, Default)]
pub struct NameSnapshot {
    generation: AtomicU64,
    names: Mutex<SnapshotNames>,
}

#[derive(Debug, Default)]
struct SnapshotNames {
    tables: Vec<SnapshotTable>,
    profiles: Vec<(String, String)>,
}

impl NameSnapshot {
    /// An empty snapshot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the names; completion sees them from its next keystroke.
    pub fn replace(&self, tables: Vec<SnapshotTable>, profiles: Vec<(String, String)>) {
        let mut names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        if names.tables == tables && names.profiles == profiles {
            return;
        }
        *names = SnapshotNames { tables, profiles };
        self.generation.fetch_add(1, Ordering::Release);
    }
}

impl NameSource for NameSnapshot {
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn table_names(&self) -> Vec<String> {
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names.tables.iter().map(|t| t.name.clone()).collect()
    }

    fn profiles(&self) -> Vec<(String, String)> {
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names.profiles.clone()
    }

    fn columns(&self, name: &str) -> Vec<(String, String)> {
        let names = self.names.lock().unwrap_or_else(|p| p.into_inner());
        names
            .tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(name))
            .map(|t| t.columns.clone())
            .unwrap_or_default()
    }
}
