//! [`OverlayStore`]: uncommitted changes layered over another store. `tributary check`
//! applies a script's DDL here, so later statements see earlier ones while nothing is
//! written; with an empty base it is also an in-memory catalog.

use crate::definition_rules::{self, DefinitionState};
use crate::error::{CatalogError, Result};
use crate::store::{CatalogStore, Change, ObjectKind, name_key};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, Namespace,
    ProfileId, TableId,
};

/// An overlay entry: a new version, or a deletion.
type Slot<T> = Option<T>;

/// Changed objects by id, with name indexes of the live ones, so every lookup is a hash
/// probe here plus at most one indexed lookup below.
#[derive(Debug, Default)]
struct Layer {
    profiles: HashMap<String, Slot<ConnectionProfile>>,
    tables: HashMap<String, Slot<ConnectionTable>>,
    profile_names: HashMap<String, String>,
    table_names: HashMap<String, String>,
    /// Views and declared functions by key (`Definition::key`).
    definitions: HashMap<String, Slot<Definition>>,
}

impl Layer {
    fn put_profile(&mut self, p: ConnectionProfile) {
        let id = p.id.to_string();
        if let Some(Some(old)) = self.profiles.get(&id) {
            let key = name_key(&old.name);
            if self
                .profile_names
                .get(&key)
                .is_some_and(|owner| *owner == id)
            {
                self.profile_names.remove(&key);
            }
        }
        self.profile_names.insert(name_key(&p.name), id.clone());
        self.profiles.insert(id, Some(p));
    }

    fn delete_profile(&mut self, id: &str) {
        // The name may already belong to the object that replaces this one in the same
        // batch (absorbed in any order): only this object's own entry goes.
        if let Some(Some(old)) = self.profiles.get(id) {
            let key = name_key(&old.name);
            if self
                .profile_names
                .get(&key)
                .is_some_and(|owner| owner == id)
            {
                self.profile_names.remove(&key);
            }
        }
        self.profiles.insert(id.to_string(), None);
    }

    fn put_table(&mut self, t: ConnectionTable) {
        let id = t.id.to_string();
        if let Some(Some(old)) = self.tables.get(&id) {
            let key = name_key(&old.name);
            if self.table_names.get(&key).is_some_and(|owner| *owner == id) {
                self.table_names.remove(&key);
            }
        }
        self.table_names.insert(name_key(&t.name), id.clone());
        self.tables.insert(id, Some(t));
    }

    fn delete_table(&mut self, id: &str) {
        // As for profiles: a replacement of the same name may be in already.
        if let Some(Some(old)) = self.tables.get(id) {
            let key = name_key(&old.name);
            if self.table_names.get(&key).is_some_and(|owner| owner == id) {
                self.table_names.remove(&key);
            }
        }
        self.tables.insert(id.to_string(), None);
    }

    /// Take over `other`'s changes, which were made on top of this layer.
    fn absorb(&mut self, other: Layer) {
        self.definitions.extend(other.definitions);
        for (id, slot) in other.profiles {
            match slot {
                Some(p) => self.put_profile(p),
                None => self.delete_profile(&id),
            }
        }
        for (id, slot) in other.tables {
            match slot {
                Some(t) => self.put_table(t),
                None => self.delete_table(&id),
            }
        }
    }
}

/// The point lookups a layer needs from what is below it.
trait Lookup {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>>;
    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>>;
    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>>;
    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>>;
    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>>;
    fn definition_at(&self, key: &str) -> Result<Option<Definition>>;
    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>>;
}

/// A store seen through [`Lookup`].
struct Store<'a>(&'a dyn CatalogStore);

impl Lookup for Store<'_> {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.0.profile_by_name(name)
    }
    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.0.profile(id)
    }
    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.0.table_by_name(name)
    }
    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.0.table(id)
    }
    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.0.dependents(profile)
    }
    fn definition_at(&self, key: &str) -> Result<Option<Definition>> {
        let (kind, name) = split_key(key);
        self.0.definition(kind, name)
    }
    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        let (kind, name) = split_key(dependency_key);
        let dependency = Dependency {
            namespace: kind.namespace(),
            name: name.to_string(),
        };
        Ok(self
            .0
            .readers(&dependency)?
            .iter()
            .map(Definition::key)
            .collect())
    }
}

/// A definition key's kind and lowercase name (`r:` keys are views, `f:` functions).
fn split_key(key: &str) -> (DefinitionKind, &str) {
    match key.strip_prefix(Namespace::Function.prefix()) {
        Some(name) => (DefinitionKind::Function, name),
        None => (
            DefinitionKind::View,
            key.strip_prefix(Namespace::Relation.prefix())
                .unwrap_or(key),
        ),
    }
}

/// A layer seen over what is below it (a store, or another view).
struct View<'a> {
    layer: &'a Layer,
    base: Option<&'a dyn Lookup>,
}

impl Lookup for View<'_> {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        if let Some(id) = self.layer.profile_names.get(&name_key(name)) {
            return Ok(self.layer.profiles.get(id).cloned().flatten());
        }
        match self
            .base
            .map(|b| b.profile_by_name(name))
            .transpose()?
            .flatten()
        {
            // Deleted or renamed here.
            Some(p) if self.layer.profiles.contains_key(p.id.as_str()) => Ok(None),
            other => Ok(other),
        }
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        match self.layer.profiles.get(id.as_str()) {
            Some(slot) => Ok(slot.clone()),
            None => Ok(self.base.map(|b| b.profile(id)).transpose()?.flatten()),
        }
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        if let Some(id) = self.layer.table_names.get(&name_key(name)) {
            return Ok(self.layer.tables.get(id).cloned().flatten());
        }
        match self
            .base
            .map(|b| b.table_by_name(name))
            .transpose()?
            .flatten()
        {
            Some(t) if self.layer.tables.contains_key(t.id.as_str()) => Ok(None),
            other => Ok(other),
        }
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        match self.layer.tables.get(id.as_str()) {
            Some(slot) => Ok(slot.clone()),
            None => Ok(self.base.map(|b| b.table(id)).transpose()?.flatten()),
        }
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        let below = match self.base {
            Some(b) => b.dependents(profile)?,
            None => Vec::new(),
        };
        // Tables changed here count by their new version.
        let mut out: Vec<TableId> = below
            .into_iter()
            .filter(|tid| match self.layer.tables.get(tid.as_str()) {
                Some(slot) => slot
                    .as_ref()
                    .is_some_and(|t| t.profile.as_ref() == Some(profile)),
                None => true,
            })
            .collect();
        for t in self.layer.tables.values().flatten() {
            if t.profile.as_ref() == Some(profile) && !out.contains(&t.id) {
                out.push(t.id.clone());
            }
        }
        Ok(out)
    }

    fn definition_at(&self, key: &str) -> Result<Option<Definition>> {
        match self.layer.definitions.get(key) {
            Some(slot) => Ok(slot.clone()),
            None => Ok(self
                .base
                .map(|b| b.definition_at(key))
                .transpose()?
                .flatten()),
        }
    }

    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        let below = match self.base {
            Some(b) => b.reader_keys(dependency_key)?,
            None => Vec::new(),
        };
        // Definitions changed here count by their new version.
        let reads = |d: &Definition| d.reads.iter().any(|r| r.key() == dependency_key);
        let mut out: Vec<String> = below
            .into_iter()
            .filter(|k| match self.layer.definitions.get(k) {
                Some(slot) => slot.as_ref().is_some_and(reads),
                None => true,
            })
            .collect();
        for (k, d) in &self.layer.definitions {
            if d.as_ref().is_some_and(reads) && !out.contains(k) {
                out.push(k.clone());
            }
        }
        Ok(out)
    }
}

impl DefinitionState for View<'_> {
    fn table_name(&self, id: &TableId) -> Result<Option<String>> {
        Ok(Lookup::table(self, id)?.map(|t| t.name))
    }
    fn table_named(&self, name: &str) -> Result<Option<TableId>> {
        Ok(Lookup::table_by_name(self, name)?.map(|t| t.id))
    }
    fn definition_at(&self, key: &str) -> Result<Option<Definition>> {
        Lookup::definition_at(self, key)
    }
    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        Lookup::reader_keys(self, dependency_key)
    }
}

/// An id the layer holds that does not parse back (ids only enter it parsed).
fn not_an_id(id: &str) -> CatalogError {
    CatalogError::Storage(format!(
        "internal error: '{id}' in the overlay is not an id"
    ))
}

/// Changes kept in memory over a base store.
#[derive(Debug)]
pub struct OverlayStore {
    base: Option<Arc<dyn CatalogStore>>,
    layer: RwLock<Layer>,
    generation: std::sync::atomic::AtomicU64,
}

impl OverlayStore {
    /// An overlay over `base`.
    pub fn over(base: Arc<dyn CatalogStore>) -> Self {
        Self {
            base: Some(base),
            layer: RwLock::new(Layer::default()),
            generation: Default::default(),
        }
    }

    /// An empty in-memory catalog.
    pub fn in_memory() -> Self {
        Self {
            base: None,
            layer: RwLock::new(Layer::default()),
            generation: Default::default(),
        }
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, Layer>> {
        self.layer
            .read()
            .map_err(|_| CatalogError::Storage("a previous write panicked".into()))
    }

    fn write(&self) -> Result<RwLockWriteGuard<'_, Layer>> {
        self.layer
            .write()
            .map_err(|_| CatalogError::Storage("a previous write panicked".into()))
    }

    fn store(&self) -> Option<Store<'_>> {
        self.base.as_deref().map(Store)
    }

    /// Run a lookup on the current layer over the base.
    fn with_view<T>(&self, f: impl FnOnce(&View<'_>) -> Result<T>) -> Result<T> {
        let layer = self.read()?;
        let store = self.store();
        f(&View {
            layer: &layer,
            base: store.as_ref().map(|s| s as &dyn Lookup),
        })
    }

    /// Whether nothing has been applied over the base (or since it was emptied).
    pub(crate) fn is_empty(&self) -> bool {
        self.read()
            .is_ok_and(|l| l.profiles.is_empty() && l.tables.is_empty() && l.definitions.is_empty())
    }

    /// The layer as one batch for the base: what it deletes that the base holds, then
    /// every object it puts, in the order a batch needs (deletions first, so a name
    /// freed by one is free for another; profiles before the tables that use them).
    /// An object both created and dropped in the layer is in neither.
    pub(crate) fn net_changes(&self) -> Result<Vec<Change>> {
        let layer = self.read()?;
        let base = self.store();
        let in_base = |f: &dyn Fn(&Store<'_>) -> Result<bool>| match &base {
            Some(b) => f(b),
            None => Ok(false),
        };
        let mut changes = Vec::new();
        // Definitions first among deletions: they may read a table being dropped.
        let mut keys: Vec<&String> = layer.definitions.keys().collect();
        keys.sort();
        for key in &keys {
            if layer.definitions[*key].is_none()
                && let Some(b) = &base
                && let Some(old) = b.definition_at(key)?
            {
                changes.push(Change::DeleteDefinition(old.kind(), old.name));
            }
        }
        for (id, slot) in &layer.tables {
            let tid = TableId::parse(id).ok_or_else(|| not_an_id(id))?;
            if slot.is_none() && in_base(&|b| Ok(b.table(&tid)?.is_some()))? {
                changes.push(Change::DeleteTable(tid));
            }
        }
        for (id, slot) in &layer.profiles {
            let pid = ProfileId::parse(id).ok_or_else(|| not_an_id(id))?;
            if slot.is_none() && in_base(&|b| Ok(b.profile(&pid)?.is_some()))? {
                changes.push(Change::DeleteProfile(pid));
            }
        }
        changes.extend(
            layer
                .profiles
                .values()
                .flatten()
                .map(|p| Change::PutProfile(p.clone())),
        );
        changes.extend(
            layer
                .tables
                .values()
                .flatten()
                .map(|t| Change::PutTable(t.clone())),
        );
        for key in keys {
            if let Some(definition) = &layer.definitions[key] {
                let replace = in_base(&|b| Ok(b.definition_at(key)?.is_some()))?;
                changes.push(Change::PutDefinition {
                    definition: definition.clone(),
                    replace,
                });
            }
        }
        Ok(changes)
    }

    fn merged_profiles(&self) -> Result<Vec<ConnectionProfile>> {
        let layer = self.read()?;
        let mut out: BTreeMap<String, ConnectionProfile> = BTreeMap::new();
        if let Some(base) = &self.base {
            for p in base.profiles()? {
                out.insert(p.id.to_string(), p);
            }
        }
        for (id, slot) in &layer.profiles {
            match slot {
                Some(p) => out.insert(id.clone(), p.clone()),
                None => out.remove(id),
            };
        }
        let mut v: Vec<ConnectionProfile> = out.into_values().collect();
        v.sort_by_key(|p| p.name.to_lowercase());
        Ok(v)
    }

    fn merged_tables(&self) -> Result<Vec<ConnectionTable>> {
        let layer = self.read()?;
        let mut out: BTreeMap<String, ConnectionTable> = BTreeMap::new();
        if let Some(base) = &self.base {
            for t in base.tables()? {
                out.insert(t.id.to_string(), t);
            }
        }
        for (id, slot) in &layer.tables {
            match slot {
                Some(t) => out.insert(id.clone(), t.clone()),
                None => out.remove(id),
            };
        }
        let mut v: Vec<ConnectionTable> = out.into_values().collect();
        v.sort_by_key(|t| t.name.to_lowercase());
        Ok(v)
    }
}

impl CatalogStore for OverlayStore {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.with_view(|v| v.profile_by_name(name))
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.with_view(|v| v.profile(id))
    }

    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        self.merged_profiles()
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.with_view(|v| v.table_by_name(name))
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.with_view(|v| v.table(id))
    }

    fn table_names(&self) -> Result<Vec<String>> {
        Ok(self.merged_tables()?.into_iter().map(|t| t.name).collect())
    }

    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        self.merged_tables()
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.with_view(|v| v.dependents(profile))
    }

    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>> {
        let key = Dependency {
            namespace: kind.namespace(),
            name: name.to_string(),
        }
        .key();
        self.with_view(|v| Lookup::definition_at(v, &key))
    }

    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        let layer = self.read()?;
        let mut out: BTreeMap<String, Definition> = BTreeMap::new();
        if let Some(base) = &self.base {
            for d in base.definitions(kind)? {
                out.insert(d.key(), d);
            }
        }
        for (key, slot) in &layer.definitions {
            match slot {
                Some(d) if d.kind() == kind => out.insert(key.clone(), d.clone()),
                _ => out.remove(key),
            };
        }
        Ok(out.into_values().collect())
    }

    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        self.with_view(|v| {
            let mut out = Vec::new();
            for key in Lookup::reader_keys(v, &dependency.key())? {
                if let Some(d) = Lookup::definition_at(v, &key)? {
                    out.push(d);
                }
            }
            out.sort_by_key(|d| d.name.to_lowercase());
            Ok(out)
        })
    }

    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        let mut layer = self.write()?;
        // The batch goes into its own layer first, checked with point lookups against
        // the layers below, so a failing batch changes nothing.
        let mut pending = Layer::default();
        {
            let store = self.store();
            let current = View {
                layer: &layer,
                base: store.as_ref().map(|s| s as &dyn Lookup),
            };
            definition_rules::check(&current, &changes)?;
            for change in &changes {
                let view = View {
                    layer: &pending,
                    base: Some(&current),
                };
                match change {
                    Change::PutProfile(p) => {
                        if let Some(other) = view.profile_by_name(&p.name)?
                            && other.id != p.id
                        {
                            return Err(CatalogError::AlreadyExists {
                                kind: ObjectKind::Profile,
                                name: p.name.clone(),
                            });
                        }
                        pending.put_profile(p.clone());
                    }
                    Change::PutTable(t) => {
                        if let Some(other) = view.table_by_name(&t.name)?
                            && other.id != t.id
                        {
                            return Err(CatalogError::AlreadyExists {
                                kind: ObjectKind::Table,
                                name: t.name.clone(),
                            });
                        }
                        if let Some(p) = &t.profile
                            && view.profile(p)?.is_none()
                        {
                            return Err(CatalogError::NotFound {
                                kind: ObjectKind::Profile,
                                name: p.to_string(),
                            });
                        }
                        pending.put_table(t.clone());
                    }
                    Change::DeleteProfile(id) => {
                        if view.profile(id)?.is_none() {
                            return Err(CatalogError::NotFound {
                                kind: ObjectKind::Profile,
                                name: id.to_string(),
                            });
                        }
                        pending.delete_profile(id.as_str());
                    }
                    Change::DeleteTable(id) => {
                        if view.table(id)?.is_none() {
                            return Err(CatalogError::NotFound {
                                kind: ObjectKind::Table,
                                name: id.to_string(),
                            });
                        }
                        pending.delete_table(id.as_str());
                    }
                    Change::PutDefinition { definition, .. } => {
                        pending
                            .definitions
                            .insert(definition.key(), Some(definition.clone()));
                    }
                    Change::DeleteDefinition(kind, name) => {
                        let key = Dependency {
                            namespace: kind.namespace(),
                            name: name.clone(),
                        }
                        .key();
                        pending.definitions.insert(key, None);
                    }
                }
            }
            // No table may still use a profile the batch deletes.
            let after = View {
                layer: &pending,
                base: Some(&current),
            };
            for change in &changes {
                let Change::DeleteProfile(p) = change else {
                    continue;
                };
                let mut users: Vec<String> = Vec::new();
                for tid in after.dependents(p)? {
                    if let Some(t) = after.table(&tid)? {
                        users.push(t.name);
                    }
                }
                if !users.is_empty() {
                    users.sort();
                    let name = current
                        .profile(p)?
                        .map(|x| x.name)
                        .unwrap_or_else(|| p.to_string());
                    return Err(CatalogError::ProfileInUse {
                        profile: name,
                        tables: users,
                    });
                }
            }
        }
        layer.absorb(pending);
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn refresh(&self) -> Result<()> {
        self.base.as_ref().map_or(Ok(()), |b| b.refresh())
    }

    fn location(&self) -> String {
        match &self.base {
            Some(b) => format!("{} (changes kept in memory)", b.location()),
            None => "an in-memory catalog".into(),
        }
    }

    fn generation(&self) -> u64 {
        // Changes below the overlay count too.
        let below = self.base.as_ref().map_or(0, |b| b.generation());
        self.generation
            .load(std::sync::atomic::Ordering::SeqCst)
            .wrapping_add(below)
    }
}
