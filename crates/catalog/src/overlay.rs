//! [`OverlayStore`]: uncommitted changes layered over another store. `tributary check`
//! applies a script's DDL here, so later statements see earlier ones while nothing is
//! written; with an empty base it is also an in-memory catalog.

use crate::error::{CatalogError, Result};
use crate::store::{CatalogStore, Change, ObjectKind, name_key};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use tributary_types::{ConnectionProfile, ConnectionTable, ProfileId, TableId};

/// An overlay entry: a new version, or a deletion.
type Slot<T> = Option<T>;

#[derive(Debug, Default)]
struct Layer {
    profiles: BTreeMap<String, Slot<ConnectionProfile>>,
    tables: BTreeMap<String, Slot<ConnectionTable>>,
}

/// Changes kept in memory over a base store.
#[derive(Debug)]
pub struct OverlayStore {
    base: Option<Arc<dyn CatalogStore>>,
    layer: RwLock<Layer>,
}

impl OverlayStore {
    /// An overlay over `base`.
    pub fn over(base: Arc<dyn CatalogStore>) -> Self {
        Self {
            base: Some(base),
            layer: RwLock::new(Layer::default()),
        }
    }

    /// An empty in-memory catalog.
    pub fn in_memory() -> Self {
        Self {
            base: None,
            layer: RwLock::new(Layer::default()),
        }
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, Layer>> {
        self.layer
            .read()
            .map_err(|_| CatalogError::Storage("a previous write panicked".into()))
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
        let key = name_key(name);
        {
            let layer = self.read()?;
            if let Some(p) = layer
                .profiles
                .values()
                .flatten()
                .find(|p| name_key(&p.name) == key)
            {
                return Ok(Some(p.clone()));
            }
        }
        let Some(base) = &self.base else {
            return Ok(None);
        };
        match base.profile_by_name(name)? {
            // Hidden when deleted or renamed in the overlay.
            Some(p) if self.read()?.profiles.contains_key(p.id.as_str()) => Ok(None),
            other => Ok(other),
        }
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        if let Some(slot) = self.read()?.profiles.get(id.as_str()) {
            return Ok(slot.clone());
        }
        match &self.base {
            Some(base) => base.profile(id),
            None => Ok(None),
        }
    }

    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        self.merged_profiles()
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        let key = name_key(name);
        {
            let layer = self.read()?;
            if let Some(t) = layer
                .tables
                .values()
                .flatten()
                .find(|t| name_key(&t.name) == key)
            {
                return Ok(Some(t.clone()));
            }
        }
        let Some(base) = &self.base else {
            return Ok(None);
        };
        match base.table_by_name(name)? {
            Some(t) if self.read()?.tables.contains_key(t.id.as_str()) => Ok(None),
            other => Ok(other),
        }
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        if let Some(slot) = self.read()?.tables.get(id.as_str()) {
            return Ok(slot.clone());
        }
        match &self.base {
            Some(base) => base.table(id),
            None => Ok(None),
        }
    }

    fn table_names(&self) -> Result<Vec<String>> {
        Ok(self.merged_tables()?.into_iter().map(|t| t.name).collect())
    }

    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        self.merged_tables()
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        Ok(self
            .merged_tables()?
            .into_iter()
            .filter(|t| t.profile.as_ref() == Some(profile))
            .map(|t| t.id)
            .collect())
    }

    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        // Validate against the merged view first, so a failing batch changes nothing.
        let mut profiles: BTreeMap<String, ConnectionProfile> = self
            .merged_profiles()?
            .into_iter()
            .map(|p| (p.id.to_string(), p))
            .collect();
        let mut tables: BTreeMap<String, ConnectionTable> = self
            .merged_tables()?
            .into_iter()
            .map(|t| (t.id.to_string(), t))
            .collect();
        for change in &changes {
            match change {
                Change::PutProfile(p) => {
                    if profiles
                        .values()
                        .any(|o| o.id != p.id && name_key(&o.name) == name_key(&p.name))
                    {
                        return Err(CatalogError::AlreadyExists {
                            kind: ObjectKind::Profile,
                            name: p.name.clone(),
                        });
                    }
                    profiles.insert(p.id.to_string(), p.clone());
                }
                Change::PutTable(t) => {
                    if tables
                        .values()
                        .any(|o| o.id != t.id && name_key(&o.name) == name_key(&t.name))
                    {
                        return Err(CatalogError::AlreadyExists {
                            kind: ObjectKind::Table,
                            name: t.name.clone(),
                        });
                    }
                    if let Some(p) = &t.profile
                        && !profiles.contains_key(p.as_str())
                    {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Profile,
                            name: p.to_string(),
                        });
                    }
                    tables.insert(t.id.to_string(), t.clone());
                }
                Change::DeleteProfile(id) => {
                    if profiles.remove(id.as_str()).is_none() {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Profile,
                            name: id.to_string(),
                        });
                    }
                }
                Change::DeleteTable(id) => {
                    if tables.remove(id.as_str()).is_none() {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Table,
                            name: id.to_string(),
                        });
                    }
                }
            }
        }
        for p in changes.iter().filter_map(|c| {
            if let Change::DeleteProfile(id) = c {
                Some(id)
            } else {
                None
            }
        }) {
            let mut users: Vec<String> = tables
                .values()
                .filter(|t| t.profile.as_ref() == Some(p))
                .map(|t| t.name.clone())
                .collect();
            if !users.is_empty() {
                users.sort();
                let name = self
                    .profile(p)?
                    .map(|x| x.name)
                    .unwrap_or_else(|| p.to_string());
                return Err(CatalogError::ProfileInUse {
                    profile: name,
                    tables: users,
                });
            }
        }
        let mut layer = self
            .layer
            .write()
            .map_err(|_| CatalogError::Storage("a previous write panicked".into()))?;
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    layer.profiles.insert(p.id.to_string(), Some(p));
                }
                Change::PutTable(t) => {
                    layer.tables.insert(t.id.to_string(), Some(t));
                }
                Change::DeleteProfile(id) => {
                    layer.profiles.insert(id.to_string(), None);
                }
                Change::DeleteTable(id) => {
                    layer.tables.insert(id.to_string(), None);
                }
            }
        }
        Ok(())
    }
}
