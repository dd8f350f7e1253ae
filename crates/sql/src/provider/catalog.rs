//! The catalog and schema providers: DataFusion asks them for tables by name, and they
//! answer from the store with one indexed lookup, never a scan.

use super::table::ConnectionTableProvider;
use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tributary_catalog::CatalogStore;
use tributary_types::SourceField;

/// State shared between a session and its providers.
#[derive(Debug)]
pub struct SessionShared {
    /// Where profiles and tables live.
    pub store: Arc<dyn CatalogStore>,
    /// Schemas inferred for sinks by the INSERT being planned, by lowercase table name.
    pub(crate) inferred: Mutex<HashMap<String, Vec<SourceField>>>,
    /// The session never reaches another system: queries read only local sources.
    offline: AtomicBool,
}

impl SessionShared {
    /// Shared state over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Arc<Self> {
        Arc::new(Self {
            store,
            inferred: Mutex::new(HashMap::new()),
            offline: AtomicBool::new(false),
        })
    }

    /// Keep queries of this session on this machine.
    pub(crate) fn set_offline(&self) {
        self.offline.store(true, Ordering::SeqCst);
    }

    /// Whether queries of this session may only read local sources.
    pub(crate) fn is_offline(&self) -> bool {
        self.offline.load(Ordering::SeqCst)
    }

    fn inferred_fields(&self, name: &str) -> Option<Vec<SourceField>> {
        self.inferred
            .lock()
            .ok()?
            .get(&name.to_lowercase())
            .cloned()
    }
}

/// The `tributary` catalog, with one schema, `public`.
#[derive(Debug)]
pub struct TributaryCatalogProvider {
    schema: Arc<TributarySchemaProvider>,
}

impl TributaryCatalogProvider {
    /// The catalog over `shared`.
    pub fn new(shared: Arc<SessionShared>) -> Self {
        Self {
            schema: Arc::new(TributarySchemaProvider { shared }),
        }
    }
}

impl CatalogProvider for TributaryCatalogProvider {
    fn schema_names(&self) -> Vec<String> {
        vec![crate::SCHEMA_NAME.to_string()]
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        name.eq_ignore_ascii_case(crate::SCHEMA_NAME)
            .then(|| self.schema.clone() as Arc<dyn SchemaProvider>)
    }
}

/// The `public` schema: every connection table of the store.
#[derive(Debug)]
pub struct TributarySchemaProvider {
    shared: Arc<SessionShared>,
}

#[async_trait]
impl SchemaProvider for TributarySchemaProvider {
    fn table_names(&self) -> Vec<String> {
        self.shared.store.table_names().unwrap_or_default()
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let table = self
            .shared
            .store
            .table_by_name(name)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(table.map(|mut t| {
            if t.awaits_inferred_schema()
                && let Some(fields) = self.shared.inferred_fields(&t.name)
            {
                t.schema.fields = fields;
            }
            Arc::new(ConnectionTableProvider::new(t, self.shared.clone())) as Arc<dyn TableProvider>
        }))
    }

    fn table_exist(&self, name: &str) -> bool {
        matches!(self.shared.store.table_by_name(name), Ok(Some(_)))
    }
}
