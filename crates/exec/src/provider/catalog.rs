//! The catalog and schema providers: DataFusion asks them for tables by name, and they
//! answer from the store with one indexed lookup, never a scan.

use super::script::ScriptTables;
use super::table::ConnectionTableProvider;
use crate::windows::implicit_time;
use async_trait::async_trait;
use datafusion::catalog::{CatalogProvider, SchemaProvider, TableProvider};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use tributary_catalog::CatalogStore;
use tributary_types::{DefinitionKind, SourceField};

/// State shared between a session and its providers.
#[derive(Debug)]
pub struct SessionShared {
    /// Where profiles and tables live.
    pub store: Arc<dyn CatalogStore>,
    /// Schemas inferred for sinks by the INSERT being planned, by lowercase table name.
    pub inferred: Mutex<HashMap<String, Vec<SourceField>>>,
    /// The session never reaches another system: queries read only local sources.
    offline: AtomicBool,
    /// Memory tables and named results kept for the whole session (the shell's); a
    /// script run in its own scope has its own ([`SessionShared::script`]).
    session_script: Arc<ScriptTables>,
    /// The session's DataFusion state, which plans views when a query reads them.
    state: OnceLock<Weak<RwLock<SessionState>>>,
    /// The declared functions registered on the session, and the catalog generation
    /// they were read at.
    pub functions: Mutex<tributary_dialect::declared_functions::Registered>,
    /// Connection tables already decoded, for the current catalog generation.
    providers: super::cache::ProviderCache,
    /// The files, variables and addresses statements may reach (everything, unless the
    /// session was confined: a server's).
    access: std::sync::RwLock<tributary_types::access::Access>,
    /// The memory, slots and threads a server gives its queries (none: unbounded).
    resources: std::sync::RwLock<Option<Arc<crate::resources::Resources>>>,
}

impl SessionShared {
    /// Shared state over `store`.
    pub fn new(store: Arc<dyn CatalogStore>) -> Arc<Self> {
        Arc::new(Self {
            store,
            inferred: Mutex::new(HashMap::new()),
            offline: AtomicBool::new(false),
            session_script: Arc::new(ScriptTables::default()),
            state: OnceLock::new(),
            functions: Mutex::new(Default::default()),
            providers: Default::default(),
            access: Default::default(),
            resources: Default::default(),
        })
    }

    /// The memory, slots and threads queries run with, if the session is governed.
    pub fn resources(&self) -> Option<Arc<crate::resources::Resources>> {
        match self.resources.read() {
            Ok(r) => r.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Run queries with `resources` from now on.
    pub fn set_resources(&self, resources: Arc<crate::resources::Resources>) {
        match self.resources.write() {
            Ok(mut r) => *r = Some(resources),
            Err(poisoned) => *poisoned.into_inner() = Some(resources),
        }
    }

    /// The files, variables and addresses statements may reach.
    pub fn access(&self) -> tributary_types::access::Access {
        match self.access.read() {
            Ok(a) => a.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Reach only what `access` allows from now on.
    pub fn set_access(&self, access: tributary_types::access::Access) {
        match self.access.write() {
            Ok(mut a) => *a = access,
            Err(poisoned) => *poisoned.into_inner() = access,
        }
    }

    /// The memory tables and named results in scope.
    pub fn script(&self) -> Arc<ScriptTables> {
        super::script::script_tables(&self.session_script)
    }

    /// Plan views with this DataFusion state (the session's own).
    pub fn set_state(&self, state: Weak<RwLock<SessionState>>) {
        let _ = self.state.set(state);
    }

    /// A copy of the session's DataFusion state, for planning a view.
    pub(crate) fn state(&self) -> Option<SessionState> {
        let state = self.state.get()?.upgrade()?;
        let copy = state.read().clone();
        Some(copy)
    }

    /// Keep queries of this session on this machine.
    pub fn set_offline(&self) {
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
        let store = &self.shared.store;
        let mut names = store.table_names().unwrap_or_default();
        names.extend(
            store
                .definitions(DefinitionKind::View)
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.name),
        );
        names.extend(self.shared.script().names());
        names.sort_by_key(|n| n.to_lowercase());
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let store = &self.shared.store;
        let external = |e| DataFusionError::External(Box::new(e));
        // The generation is read before the table: a change in between makes the entry
        // stale at once rather than wrong.
        let generation = store.generation();
        // A statement that uses event time sees each source's `_timestamp`.
        let timed = |p: ConnectionTableProvider| -> Arc<dyn TableProvider> {
            if implicit_time::visible() {
                Arc::new(p.with_implicit_time())
            } else {
                Arc::new(p)
            }
        };
        if let Some(t) = self.shared.providers.get(name, generation) {
            return Ok(Some(timed(ConnectionTableProvider::from_decoded(
                t,
                self.shared.clone(),
            ))));
        }
        if let Some(mut t) = store.table_by_name(name).map_err(external)? {
            // A sink taking its schema from the INSERT being planned is never cached.
            let awaits = t.awaits_inferred_schema();
            if awaits && let Some(fields) = self.shared.inferred_fields(&t.name) {
                t.schema.fields = fields;
            }
            let provider = ConnectionTableProvider::new(t, self.shared.clone());
            if !awaits {
                self.shared
                    .providers
                    .put(name, generation, provider.decoded());
            }
            return Ok(Some(timed(provider)));
        }
        if let Some(t) = self.shared.script().get(name) {
            return Ok(Some(Arc::new(t)));
        }
        match store
            .definition(DefinitionKind::View, name)
            .map_err(external)?
        {
            Some(view) => super::views::view_provider(&self.shared, &view)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    fn table_exist(&self, name: &str) -> bool {
        let store = &self.shared.store;
        matches!(store.table_by_name(name), Ok(Some(_)))
            || self.shared.script().get(name).is_some()
            || matches!(store.definition(DefinitionKind::View, name), Ok(Some(_)))
    }
}
