//! [`SledCore`]: the sled database of one catalog, its trees and its reads. The store
//! ([`SledStore`](crate::SledStore)) and its committer thread share it; writes are in
//! `sled_write`.

use crate::error::{CatalogError, Result};
use crate::records::{Versioned, decode_record};
use crate::sled_write::created_key;
use crate::store::{ObjectKind, name_key};
use serde::de::DeserializeOwned;
use sled::Tree;
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
    /// Locked around each commit, until it is flushed, so snapshot copies fall between
    /// commits.
    pub(crate) commit: File,
    /// How many written groups hold `commit` (the committer writes the next group while
    /// the flusher flushes the last): locked at the first, unlocked after the last.
    pub(crate) commit_holds: std::sync::Mutex<usize>,
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
            commit_holds: std::sync::Mutex::new(0),
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
        decode_record(&self.path, what, &String::from_utf8_lossy(key), bytes)
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

impl crate::record_rules::RecordState for SledCore {
    fn profile_id_named(&self, name: &str) -> Result<Option<String>> {
        self.id_by_name(&self.profile_names, name)
    }

    fn table_id_named(&self, name: &str) -> Result<Option<String>> {
        self.id_by_name(&self.table_names, name)
    }

    fn profile_exists(&self, id: &str) -> Result<bool> {
        self.exists(&self.profiles, id)
    }

    fn profile_record(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.profile(id)
    }

    fn table_record(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.table(id)
    }

    fn tables_using(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.dependents(profile)
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

pub(crate) fn dep_key(profile: &ProfileId, table: &TableId) -> Vec<u8> {
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
