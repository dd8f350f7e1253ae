//! Records and stores shared by the catalog's test binaries.

#![allow(clippy::unwrap_used, dead_code)] // Helpers panic on failure; not every binary uses each.

use serde_json::json;
use std::sync::Arc;
pub use tributary_catalog::testing::PgSchema;
use tributary_catalog::{
    CatalogStore, LockWait, OverlayStore, PostgresStore, SledStore, new_profile_id, new_table_id,
};
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionTable, ConnectionType, Definition,
    DefinitionBody, Dependency, ProfileId,
};

pub fn profile(name: &str) -> ConnectionProfile {
    ConnectionProfile {
        format_version: CURRENT_FORMAT_VERSION,
        id: new_profile_id(),
        name: name.into(),
        connector: "kafka".into(),
        config: json!({"bootstrapServers": "localhost:9092", "authentication": {}}),
        options: vec![],
        description: String::new(),
        created_at: 1,
        updated_at: 1,
        last_test: None,
    }
}

pub fn table(name: &str, profile: Option<&ProfileId>) -> ConnectionTable {
    ConnectionTable {
        profile: profile.cloned(),
        config: json!({"topic": name, "type": {"offset": "latest"}}),
        created_at: 1,
        updated_at: 1,
        ..ConnectionTable::new(new_table_id(), name, "kafka", ConnectionType::Source)
    }
}

/// A view reading `reads`.
pub fn view(name: &str, reads: &[Dependency]) -> Definition {
    Definition::new(
        name.into(),
        DefinitionBody::View {
            query: "SELECT 1".into(),
            columns: vec![],
            depth: 1,
        },
        reads.to_vec(),
        1,
    )
}

/// Open a catalog a store of this process has just closed. sled's threads may hold its
/// own lock a moment after the store is dropped, so wait for it as the CLI does.
pub fn reopen(path: &std::path::Path) -> SledStore {
    let wait = LockWait {
        timeout: std::time::Duration::from_secs(10),
        on_wait: &|_| {},
    };
    SledStore::open_waiting(path, wait).unwrap()
}

/// What keeps a test's catalog alive: its directory, or its database schema.
pub enum Home {
    Dir(tempfile::TempDir),
    Pg(PgSchema),
    Memory,
}

/// Every store the catalog contract holds for: sled, PostgreSQL, and overlays.
pub fn stores() -> Vec<(Box<dyn CatalogStore>, Home)> {
    let dir = tempfile::tempdir().unwrap();
    let sled = SledStore::open(dir.path()).unwrap();
    let base_dir = tempfile::tempdir().unwrap();
    let base: Arc<dyn CatalogStore> = Arc::new(SledStore::open(base_dir.path()).unwrap());
    let schema = PgSchema::new();
    let pg = PostgresStore::open(&schema.url).unwrap();
    vec![
        (Box::new(sled), Home::Dir(dir)),
        (Box::new(pg), Home::Pg(schema)),
        (Box::new(OverlayStore::in_memory()), Home::Memory),
        // An overlay over a store, over another overlay: every rule holds through layers.
        (
            Box::new(OverlayStore::over(Arc::new(OverlayStore::over(base)))),
            Home::Dir(base_dir),
        ),
    ]
}
