//! [`SledStore`]: the embedded catalog in a sled database directory.
//!
//! Layout: tree `profiles` (id -> JSON record), `profile_names` (lowercase name -> id),
//! `tables` and `table_names` likewise, `tables_by_created` (creation time big-endian,
//! table id -> empty: the order of pages), `deps` (profile id, NUL, table id -> empty) and
//! `meta` (`format_version`). Lookups by name are two point reads; nothing is read at
//! open (except once, to build the creation index of a catalog written before it existed).
//! Writes are group-committed (`group_commit`): each batch is checked and turned into
//! key writes on its own, then the batches of a group go into one sled transaction over
//! all trees and one flush, before their `apply` calls return. A lock file keeps other
//! processes out; `tributary check` reads a copy made between commits instead
//! ([`SledStore::open_snapshot`]). Every file is owner-only (see `sled_files`).

use crate::error::{CatalogError, Result};
use crate::group_commit::{CommitQueue, GroupStorage};
use crate::sled_files::{
    Busy, LockWait, commit_lock, copy_catalog, is_lock_conflict, lock_catalog, make_private,
};
use crate::store::{CatalogStore, Change, ObjectKind, name_key};
use fs2::FileExt;
use serde::de::DeserializeOwned;
use sled::transaction::TransactionError;
use sled::{Transactional, Tree};
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use tributary_types::{
    CURRENT_FORMAT_VERSION, ConnectionProfile, ConnectionTable, ProfileId, TableId,
};

const FORMAT_KEY: &[u8] = b"format_version";

/// The sled-backed catalog.
#[derive(Debug)]
pub struct SledStore {
    path: PathBuf,
    db: sled::Db,
    profiles: Tree,
    profile_names: Tree,
    tables: Tree,
    table_names: Tree,
    tables_by_created: Tree,
    deps: Tree,
    queue: CommitQueue,
    generation: std::sync::atomic::AtomicU64,
    // Held for the store's lifetime: the advisory lock that keeps other processes out.
    _lock: File,
    // Locked around each commit, so snapshot copies fall between commits.
    commit: File,
    // A snapshot's private copy, removed when the store is dropped.
    _copy: Option<tempfile::TempDir>,
}

impl SledStore {
    /// Open (creating if needed) the catalog in directory `path`, failing at once with
    /// [`CatalogError::InUse`] when another process holds it.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_waiting(path, LockWait::NONE)
    }

    /// Open (creating if needed) the catalog in directory `path`; when another process
    /// holds it, wait as `wait` says before failing with [`CatalogError::InUse`].
    pub fn open_waiting(path: impl AsRef<Path>, wait: LockWait<'_>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let lock = lock_catalog(&path, wait)?;
        // The previous owner's sled threads can hold sled's own lock on its log a moment
        // after our lock came free: that too is "in use", waited for, never an I/O error.
        let db = wait.retry(&path, || {
            match sled::Config::new()
                .path(path.join("db"))
                .cache_capacity(64 * 1024 * 1024)
                .open()
            {
                Ok(db) => Busy::Done(Ok(db)),
                Err(sled::Error::Io(e)) if is_lock_conflict(&e) => Busy::Taken,
                Err(e) => Busy::Done(Err(storage_error(&path, e))),
            }
        })?;
        let commit = commit_lock(&path)?;
        make_private(&path).map_err(|source| CatalogError::Io {
            path: path.clone(),
            source,
        })?;
        let tree = |name: &str| db.open_tree(name).map_err(|e| storage_error(&path, e));
        let store = Self {
            profiles: tree("profiles")?,
            profile_names: tree("profile_names")?,
            tables: tree("tables")?,
            table_names: tree("table_names")?,
            tables_by_created: tree("tables_by_created")?,
            deps: tree("deps")?,
            queue: CommitQueue::default(),
            generation: Default::default(),
            _lock: lock,
            commit,
            _copy: None,
            db,
            path,
        };
        store.check_format()?;
        store.index_creation_times()?;
        Ok(store)
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

    /// A read-only view of the catalog at `path` as of now, without its lock: a private
    /// copy made between two commits of whichever process holds the catalog (that wait
    /// is bounded by `wait`). Writes go to the copy and are lost with it; `tributary
    /// check` layers an overlay on top.
    pub fn open_snapshot(path: impl AsRef<Path>, wait: LockWait<'_>) -> Result<Self> {
        let path = path.as_ref();
        let copy = tempfile::Builder::new()
            .prefix("tributary-check-")
            .tempdir()
            .map_err(|source| CatalogError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        copy_catalog(path, copy.path(), wait)?;
        let mut store = Self::open(copy.path()).map_err(|e| match e {
            // Errors name the catalog the user gave, not the copy.
            CatalogError::Corrupt { detail, .. } => CatalogError::Corrupt {
                path: path.to_path_buf(),
                detail,
            },
            CatalogError::NewerFormat {
                found, supported, ..
            } => CatalogError::NewerFormat {
                path: path.to_path_buf(),
                found,
                supported,
            },
            other => other,
        })?;
        store.path = path.to_path_buf();
        store._copy = Some(copy);
        Ok(store)
    }

    /// Where the catalog lives.
    pub fn path(&self) -> &Path {
        &self.path
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
    fn plan(&self, changes: &[Change]) -> Result<DependencyEdits> {
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

/// Records that carry a format version.
trait Versioned {
    fn format_version(&self) -> u32;
}

impl Versioned for ConnectionProfile {
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
fn index_value(id: &str, name: &str) -> Vec<u8> {
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
type DependencyEdits = (Vec<Vec<u8>>, Vec<Vec<u8>>);

fn dep_key(profile: &ProfileId, table: &TableId) -> Vec<u8> {
    let mut k = profile.as_str().as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(table.as_str().as_bytes());
    k
}

fn storage_error(path: &Path, e: sled::Error) -> CatalogError {
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

fn encode<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value)
        .map_err(|e| CatalogError::Storage(format!("cannot encode a record: {e}")))
}

impl CatalogStore for SledStore {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        match self.id_by_name(&self.profile_names, name)? {
            Some(id) => self.get(&self.profiles, "connection profile", &id),
            None => Ok(None),
        }
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.get(&self.profiles, "connection profile", id.as_str())
    }

    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        let mut all: Vec<ConnectionProfile> = self.all(&self.profiles, "connection profile")?;
        all.sort_by_key(|p| p.name.to_lowercase());
        Ok(all)
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        match self.id_by_name(&self.table_names, name)? {
            Some(id) => self.get(&self.tables, "table", &id),
            None => Ok(None),
        }
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.get(&self.tables, "table", id.as_str())
    }

    fn table_names(&self) -> Result<Vec<String>> {
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

    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        let mut all: Vec<ConnectionTable> = self.all(&self.tables, "table")?;
        all.sort_by_key(|t| t.name.to_lowercase());
        Ok(all)
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
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

    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        self.queue.submit(self, changes)
    }

    fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn flush(&self) -> Result<()> {
        self.db
            .flush()
            .map(|_| ())
            .map_err(|e| storage_error(&self.path, e))
    }

    fn tables_page(
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

/// The trees a batch writes; a slot's number is its tree's place in the transaction of
/// `GroupStorage::write` (see `SledStore::slot_trees`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    Profiles,
    ProfileNames,
    Tables,
    TableNames,
    Deps,
    Created,
}

/// One key a checked batch writes.
#[derive(Debug)]
pub(crate) enum KeyWrite {
    Insert(Slot, Vec<u8>, Vec<u8>),
    Remove(Slot, Vec<u8>),
}

impl SledStore {
    /// The trees in [`Slot`] order.
    fn slot_trees(&self) -> [&Tree; 6] {
        [
            &self.profiles,
            &self.profile_names,
            &self.tables,
            &self.table_names,
            &self.deps,
            &self.tables_by_created,
        ]
    }

    /// Check one batch against the committed state and turn it into key writes, in the
    /// order they must happen (stale index entries go before new ones, so a rename to
    /// the same name in another case keeps its index entry).
    fn prepare(&self, changes: &[Change]) -> Result<Vec<KeyWrite>> {
        use KeyWrite::{Insert, Remove};
        let (add, remove) = self.plan(changes)?;
        let mut writes = Vec::with_capacity(changes.len() * 4 + add.len() + remove.len());
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    if let Some(old) = self.profile(&p.id)? {
                        writes.push(Remove(Slot::ProfileNames, name_key(&old.name).into()));
                    }
                }
                Change::PutTable(t) => {
                    if let Some(old) = self.table(&t.id)? {
                        writes.push(Remove(Slot::TableNames, name_key(&old.name).into()));
                        writes.push(Remove(Slot::Created, created_key(old.created_at, &old.id)));
                    }
                }
                Change::DeleteProfile(id) => {
                    if let Some(old) = self.profile(id)? {
                        writes.push(Remove(Slot::ProfileNames, name_key(&old.name).into()));
                    }
                }
                Change::DeleteTable(id) => {
                    if let Some(old) = self.table(id)? {
                        writes.push(Remove(Slot::TableNames, name_key(&old.name).into()));
                        writes.push(Remove(Slot::Created, created_key(old.created_at, &old.id)));
                    }
                }
            }
        }
        writes.extend(remove.into_iter().map(|k| Remove(Slot::Deps, k)));
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    writes.push(Insert(Slot::Profiles, p.id.as_str().into(), encode(p)?));
                    writes.push(Insert(
                        Slot::ProfileNames,
                        name_key(&p.name).into(),
                        index_value(p.id.as_str(), &p.name),
                    ));
                }
                Change::PutTable(t) => {
                    writes.push(Insert(Slot::Tables, t.id.as_str().into(), encode(t)?));
                    writes.push(Insert(
                        Slot::Created,
                        created_key(t.created_at, &t.id),
                        Vec::new(),
                    ));
                    writes.push(Insert(
                        Slot::TableNames,
                        name_key(&t.name).into(),
                        index_value(t.id.as_str(), &t.name),
                    ));
                }
                Change::DeleteProfile(id) => {
                    writes.push(Remove(Slot::Profiles, id.as_str().into()));
                }
                Change::DeleteTable(id) => writes.push(Remove(Slot::Tables, id.as_str().into())),
            }
        }
        writes.extend(add.into_iter().map(|k| Insert(Slot::Deps, k, Vec::new())));
        Ok(writes)
    }
}

impl GroupStorage for SledStore {
    type Checked = Vec<KeyWrite>;

    fn check(&self, changes: &[Change]) -> Result<Vec<KeyWrite>> {
        self.prepare(changes)
    }

    /// Write a group of checked batches (whose keys are disjoint) in one transaction.
    fn write(&self, group: Vec<Vec<KeyWrite>>) -> Result<()> {
        let trees = self.slot_trees();
        let result: std::result::Result<(), TransactionError<()>> = trees[..].transaction(|t| {
            for write in group.iter().flatten() {
                match write {
                    KeyWrite::Insert(slot, key, value) => {
                        t[*slot as usize].insert(key.as_slice(), value.as_slice())?;
                    }
                    KeyWrite::Remove(slot, key) => {
                        t[*slot as usize].remove(key.as_slice())?;
                    }
                }
            }
            Ok(())
        });
        match result {
            Ok(()) => Ok(()),
            Err(TransactionError::Abort(())) => Err(CatalogError::Storage(
                "internal error: transaction aborted".into(),
            )),
            Err(TransactionError::Storage(e)) => Err(storage_error(&self.path, e)),
        }?;
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    fn flush(&self) -> Result<()> {
        CatalogStore::flush(self)
    }

    fn hold(&self) -> Result<()> {
        self.commit
            .lock_exclusive()
            .map_err(|source| CatalogError::Io {
                path: self.path.clone(),
                source,
            })
    }

    fn release(&self) {
        // An unlock that fails leaves the lock to be dropped with the file; snapshot
        // copies wait until then.
        let _ = FileExt::unlock(&self.commit);
    }
}

/// The `tables_by_created` key of a table: its creation time (big-endian, so keys sort
/// by time) and its id.
fn created_key(created_at: i64, id: &TableId) -> Vec<u8> {
    // Times before 1970 do not occur; clamp rather than wrap.
    let mut key = (created_at.max(0) as u64).to_be_bytes().to_vec();
    key.extend_from_slice(id.as_str().as_bytes());
    key
}
