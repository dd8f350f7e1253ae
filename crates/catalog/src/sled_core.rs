//! [`SledCore`]: the sled database of one catalog, its trees and its reads. The store
//! ([`SledStore`](crate::SledStore)) and its committer thread share it; writes are in
//! `sled_write`.

use crate::error::{CatalogError, Result};
use crate::sled_write::created_key;
use crate::store::{Change, ObjectKind, name_key};
use serde::de::DeserializeOwned;
use sled::Tree;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionTable, Definition, DefinitionKind,
    Dependency, ProfileId, TableId,
};

const FORMAT_KEY: &[u8] = b"format_version";

/// One catalog's sled database and trees.
#[derive(Debug)]
pub(crate) struct SledCore {
    /// The catalog directory errors name.
    pub(crate) path: PathBuf,
    pub(crate) db: sled::Db,
    pub(crate) profiles: Tree,
    pub(crate) profile_names: Tree,
    pub(crate) tables: Tree,
    pub(crate) table_names: Tree,
    pub(crate) tables_by_created: Tree,
    pub(crate) deps: Tree,
    /// Views and declared functions by key (`Definition::key`).
    pub(crate) definitions: Tree,
    /// `dependency key NUL reader key`: what each definition reads, indexed by the read.
    pub(crate) readers: Tree,
    pub(crate) generation: AtomicU64,
    /// Locked around each commit, so snapshot copies fall between commits.
    pub(crate) commit: File,
}

impl SledCore {
    /// Open the trees of `db` (catalog directory `path`), checking its format and
    /// building indexes that an older catalog lacks.
    pub(crate) fn open(path: PathBuf, db: sled::Db, commit: File) -> Result<Self> {
        let tree = |name: &str| db.open_tree(name).map_err(|e| storage_error(&path, e));
        let core = Self {
            profiles: tree("profiles")?,
            profile_names: tree("profile_names")?,
            tables: tree("tables")?,
            table_names: tree("table_names")?,
            tables_by_created: tree("tables_by_created")?,
            deps: tree("deps")?,
            definitions: tree("definitions")?,
            readers: tree("readers")?,
            generation: AtomicU64::new(0),
            commit,
            db,
            path,
        };
        core.check_format()?;
        core.index_creation_times()?;
        Ok(core)
    }

    /// Build `tables_by_created` for a catalog written before it existed (once: an empty
    /// index beside stored tables).
    fn index_creation_times(&self) -> Result<()> {
        if !self.tables_by_created.is_empty() || self.tables.is_empty() {
            return Ok(());
        }
        let all: Vec<ConnectionTable> = self.all(&self.tables, "table")?;
        for t in &all {
            self.tables_by_created
                .insert(created_key(t.created_at, &t.id), &[] as &[u8])
                .map_err(|e| storage_error(&self.path, e))?;
        }
        self.db.flush().map_err(|e| storage_error(&self.path, e))?;
        Ok(())
    }

    fn check_format(&self) -> Result<()> {
        match self
            .db
            .get(FORMAT_KEY)
            .map_err(|e| storage_error(&self.path, e))?
        {
            None => {
                self.db
                    .insert(FORMAT_KEY, CURRENT_FORMAT_VERSION.to_string().as_bytes())
                    .map_err(|e| storage_error(&self.path, e))?;
                self.db.flush().map_err(|e| storage_error(&self.path, e))?;
                Ok(())
            }
            Some(v) => {
                let found: u32 = std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| {
                        self.corrupt("the format version marker is unreadable".into())
                    })?;
                if found > CURRENT_FORMAT_VERSION {
                    return Err(CatalogError::NewerFormat {
                        path: self.path.clone(),
                        found,
                        supported: CURRENT_FORMAT_VERSION,
                    });
                }
                Ok(())
            }
        }
    }

    fn corrupt(&self, detail: String) -> CatalogError {
        CatalogError::Corrupt {
            path: self.path.clone(),
            detail,
        }
    }

    fn decode<T: DeserializeOwned + Versioned>(
        &self,
        what: &str,
        key: &[u8],
        bytes: &[u8],
    ) -> Result<T> {
        let newer = |found| CatalogError::NewerFormat {
            path: self.path.clone(),
            found,
            supported: CURRENT_FORMAT_VERSION,
        };
        match serde_json::from_slice::<T>(bytes) {
            Ok(record) if record.format_version() > CURRENT_FORMAT_VERSION => {
                Err(newer(record.format_version()))
            }
            Ok(record) => Ok(record),
            Err(e) => {
                // A newer record may not fit this build's shape: say so rather than "corrupt".
                #[derive(serde::Deserialize)]
                struct Version {
                    format_version: u32,
                }
                match serde_json::from_slice::<Version>(bytes) {
                    Ok(v) if v.format_version > CURRENT_FORMAT_VERSION => {
                        Err(newer(v.format_version))
                    }
                    _ => Err(self.corrupt(format!(
                        "{what} '{}' cannot be read: {e}",
                        String::from_utf8_lossy(key)
                    ))),
                }
            }
        }
    }

    fn get<T: DeserializeOwned + Versioned>(
        &self,
        tree: &Tree,
        what: &str,
        id: &str,
    ) -> Result<Option<T>> {
        match tree
            .get(id.as_bytes())
            .map_err(|e| storage_error(&self.path, e))?
        {
            Some(bytes) => self.decode(what, id.as_bytes(), &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Whether a record is stored under `id`, without decoding it.
    fn exists(&self, tree: &Tree, id: &str) -> Result<bool> {
        tree.contains_key(id.as_bytes())
            .map_err(|e| storage_error(&self.path, e))
    }

    fn id_by_name(&self, index: &Tree, name: &str) -> Result<Option<String>> {
        Ok(index
            .get(name_key(name).as_bytes())
            .map_err(|e| storage_error(&self.path, e))?
            .map(|v| split_index_value(&v).0))
    }

    fn all<T: DeserializeOwned + Versioned>(&self, tree: &Tree, what: &str) -> Result<Vec<T>> {
        tree.iter()
            .map(|kv| {
                let (k, v) = kv.map_err(|e| storage_error(&self.path, e))?;
                self.decode(what, &k, &v)
            })
            .collect()
    }

    /// Check a batch against the current state; returns the dependency edges to add and
    /// remove.
    pub(crate) fn plan(&self, changes: &[Change]) -> Result<DependencyEdits> {
        let mut deleted_tables: BTreeSet<String> = BTreeSet::new();
        let mut deleted_profiles: BTreeSet<String> = BTreeSet::new();
        let mut put_profiles: HashMap<String, &ConnectionProfile> = HashMap::new();
        let mut put_tables: HashMap<String, &ConnectionTable> = HashMap::new();
        let (mut add, mut remove) = (Vec::new(), Vec::new());
        let mut batch_names: HashMap<(bool, String), String> = HashMap::new();
        for change in changes {
            let named = match change {
                Change::PutProfile(p) => Some((true, &p.name, p.id.as_str(), ObjectKind::Profile)),
                Change::PutTable(t) => Some((false, &t.name, t.id.as_str(), ObjectKind::Table)),
                _ => None,
            };
            if let Some((is_profile, name, id, kind)) = named
                && let Some(other) =
                    batch_names.insert((is_profile, name_key(name)), id.to_string())
                && other != id
            {
                return Err(CatalogError::AlreadyExists {
                    kind,
                    name: name.clone(),
                });
            }
            match change {
                Change::PutProfile(p) => {
                    if let Some(existing) = self.id_by_name(&self.profile_names, &p.name)?
                        && existing != p.id.as_str()
                        && !deleted_profiles.contains(&existing)
                    {
                        return Err(CatalogError::AlreadyExists {
                            kind: ObjectKind::Profile,
                            name: p.name.clone(),
                        });
                    }
                    put_profiles.insert(p.id.to_string(), p);
                }
                Change::PutTable(t) => {
                    if let Some(existing) = self.id_by_name(&self.table_names, &t.name)?
                        && existing != t.id.as_str()
                        && !deleted_tables.contains(&existing)
                    {
                        return Err(CatalogError::AlreadyExists {
                            kind: ObjectKind::Table,
                            name: t.name.clone(),
                        });
                    }
                    if let Some(old) = self.table(&t.id)?
                        && let Some(p) = &old.profile
                    {
                        remove.push(dep_key(p, &t.id));
                    }
                    if let Some(p) = &t.profile {
                        let known = put_profiles.contains_key(p.as_str())
                            || (self.exists(&self.profiles, p.as_str())?
                                && !deleted_profiles.contains(p.as_str()));
                        if !known {
                            return Err(CatalogError::NotFound {
                                kind: ObjectKind::Profile,
                                name: p.to_string(),
                            });
                        }
                        add.push(dep_key(p, &t.id));
                    }
                    put_tables.insert(t.id.to_string(), t);
                }
                Change::DeleteTable(id) => {
                    let Some(old) = self.table(id)? else {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Table,
                            name: id.to_string(),
                        });
                    };
                    if let Some(p) = &old.profile {
                        remove.push(dep_key(p, id));
                    }
                    deleted_tables.insert(id.to_string());
                }
                Change::PutDefinition { .. } | Change::DeleteDefinition(..) => {}
                Change::DeleteProfile(id) => {
                    if !self.exists(&self.profiles, id.as_str())? {
                        return Err(CatalogError::NotFound {
                            kind: ObjectKind::Profile,
                            name: id.to_string(),
                        });
                    }
                    deleted_profiles.insert(id.to_string());
                }
            }
        }
        for pid in &deleted_profiles {
            let profile_id = ProfileId::parse(pid)
                .ok_or_else(|| self.corrupt(format!("bad profile id '{pid}'")))?;
            let mut users: Vec<String> = Vec::new();
            for tid in self.dependents(&profile_id)? {
                let gone = deleted_tables.contains(tid.as_str())
                    || put_tables
                        .get(tid.as_str())
                        .is_some_and(|t| t.profile.as_ref() != Some(&profile_id));
                if !gone && let Some(t) = self.table(&tid)? {
                    users.push(t.name);
                }
            }
            users.extend(
                put_tables
                    .values()
                    .filter(|t| t.profile.as_ref() == Some(&profile_id))
                    .map(|t| t.name.clone()),
            );
            if !users.is_empty() {
                let name = self
                    .profile(&profile_id)?
                    .map(|p| p.name)
                    .unwrap_or_else(|| pid.clone());
                users.sort();
                return Err(CatalogError::ProfileInUse {
                    profile: name,
                    tables: users,
                });
            }
        }
        Ok((add, remove))
    }
}

/// Reads, for the store and for checking batches.
impl SledCore {
    pub(crate) fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        match self.id_by_name(&self.profile_names, name)? {
            Some(id) => self.get(&self.profiles, "connection profile", &id),
            None => Ok(None),
        }
    }

    pub(crate) fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.get(&self.profiles, "connection profile", id.as_str())
    }

    pub(crate) fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        let mut all: Vec<ConnectionProfile> = self.all(&self.profiles, "connection profile")?;
        all.sort_by_key(|p| p.name.to_lowercase());
        Ok(all)
    }

    pub(crate) fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        match self.id_by_name(&self.table_names, name)? {
            Some(id) => self.get(&self.tables, "table", &id),
            None => Ok(None),
        }
    }

    pub(crate) fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.get(&self.tables, "table", id.as_str())
    }

    pub(crate) fn table_names(&self) -> Result<Vec<String>> {
        // The index is ordered by lowercase name and its values carry the display name, so
        // this reads no table record.
        self.table_names
            .iter()
            .values()
            .map(|v| {
                v.map(|v| split_index_value(&v).1)
                    .map_err(|e| storage_error(&self.path, e))
            })
            .collect()
    }

    pub(crate) fn tables(&self) -> Result<Vec<ConnectionTable>> {
        let mut all: Vec<ConnectionTable> = self.all(&self.tables, "table")?;
        all.sort_by_key(|t| t.name.to_lowercase());
        Ok(all)
    }

    pub(crate) fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        let mut prefix = profile.as_str().as_bytes().to_vec();
        prefix.push(0);
        self.deps
            .scan_prefix(&prefix)
            .keys()
            .map(|k| {
                let k = k.map_err(|e| storage_error(&self.path, e))?;
                let id = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
                TableId::parse(&id).ok_or_else(|| {
                    self.corrupt(format!("dependency record names a bad table id '{id}'"))
                })
            })
            .collect()
    }

    pub(crate) fn definition(
        &self,
        kind: DefinitionKind,
        name: &str,
    ) -> Result<Option<Definition>> {
        let key = Dependency {
            namespace: kind.namespace(),
            name: name.to_string(),
        }
        .key();
        self.get(&self.definitions, "definition", &key)
    }

    pub(crate) fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        let prefix = kind.namespace().prefix();
        self.definitions
            .scan_prefix(prefix.as_bytes())
            .map(|kv| {
                let (k, v) = kv.map_err(|e| storage_error(&self.path, e))?;
                self.decode("definition", &k, &v)
            })
            .collect()
    }

    pub(crate) fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        let mut out = Vec::new();
        for key in crate::definition_rules::DefinitionState::reader_keys(self, &dependency.key())? {
            if let Some(d) = self.get(&self.definitions, "definition", &key)? {
                out.push(d);
            }
        }
        out.sort_by_key(|d: &Definition| d.name.to_lowercase());
        Ok(out)
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Make everything written so far durable.
    pub(crate) fn flush_db(&self) -> Result<()> {
        self.db
            .flush()
            .map(|_| ())
            .map_err(|e| storage_error(&self.path, e))
    }

    pub(crate) fn tables_page(
        &self,
        after: Option<&TableId>,
        limit: usize,
    ) -> Result<(Vec<ConnectionTable>, bool)> {
        let upper = match after {
            None => None,
            Some(id) => match self.table(id)? {
                Some(t) => Some(created_key(t.created_at, &t.id)),
                None => {
                    return Err(CatalogError::NotFound {
                        kind: ObjectKind::Table,
                        name: id.to_string(),
                    });
                }
            },
        };
        let keys = match upper {
            Some(k) => self.tables_by_created.range(..k),
            None => self.tables_by_created.iter(),
        };
        let mut page = Vec::with_capacity(limit.min(1_000));
        let mut more = false;
        for key in keys.keys().rev() {
            let key = key.map_err(|e| storage_error(&self.path, e))?;
            if page.len() == limit {
                more = true;
                break;
            }
            let id = String::from_utf8_lossy(&key[8..]).into_owned();
            match self.get::<ConnectionTable>(&self.tables, "table", &id)? {
                Some(t) => page.push(t),
                None => {
                    return Err(
                        self.corrupt(format!("the creation index names a missing table '{id}'"))
                    );
                }
            }
        }
        Ok((page, more))
    }
}

impl crate::definition_rules::DefinitionState for SledCore {
    fn table_name(&self, id: &TableId) -> Result<Option<String>> {
        Ok(self.table(id)?.map(|t| t.name))
    }

    fn table_named(&self, name: &str) -> Result<Option<TableId>> {
        Ok(self
            .id_by_name(&self.table_names, name)?
            .and_then(|id| TableId::parse(&id)))
    }

    fn definition_at(&self, key: &str) -> Result<Option<Definition>> {
        self.get(&self.definitions, "definition", key)
    }

    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        let prefix = reader_index_key(dependency_key, "");
        self.readers
            .scan_prefix(&prefix)
            .keys()
            .map(|k| {
                let k = k.map_err(|e| storage_error(&self.path, e))?;
                Ok(String::from_utf8_lossy(&k[prefix.len()..]).into_owned())
            })
            .collect()
    }
}

/// The reader-index key: the key read, NUL, the reader's key.
pub(crate) fn reader_index_key(dependency_key: &str, reader_key: &str) -> Vec<u8> {
    let mut k = dependency_key.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(reader_key.as_bytes());
    k
}

/// Records that carry a format version.
trait Versioned {
    fn format_version(&self) -> u32;
}

impl Versioned for ConnectionProfile {
    fn format_version(&self) -> u32 {
        self.format_version
    }
}

impl Versioned for Definition {
    fn format_version(&self) -> u32 {
        self.format_version
    }
}

impl Versioned for ConnectionTable {
    fn format_version(&self) -> u32 {
        self.format_version
    }
}

/// Name-index values are `id NUL display-name`.
pub(crate) fn index_value(id: &str, name: &str) -> Vec<u8> {
    let mut v = id.as_bytes().to_vec();
    v.push(0);
    v.extend_from_slice(name.as_bytes());
    v
}

fn split_index_value(v: &[u8]) -> (String, String) {
    let text = String::from_utf8_lossy(v);
    match text.split_once('\0') {
        Some((id, name)) => (id.to_string(), name.to_string()),
        None => (text.to_string(), String::new()),
    }
}

/// Dependency keys to add and to remove.
pub(crate) type DependencyEdits = (Vec<Vec<u8>>, Vec<Vec<u8>>);

fn dep_key(profile: &ProfileId, table: &TableId) -> Vec<u8> {
    let mut k = profile.as_str().as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(table.as_str().as_bytes());
    k
}

pub(crate) fn storage_error(path: &Path, e: sled::Error) -> CatalogError {
    match e {
        sled::Error::Io(source) => CatalogError::Io {
            path: path.to_path_buf(),
            source,
        },
        sled::Error::Corruption { .. } => CatalogError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        other => CatalogError::Storage(other.to_string()),
    }
}

pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| CatalogError::Storage(format!("cannot encode a record: {e}")))
}
