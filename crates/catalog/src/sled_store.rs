//! [`SledStore`]: the embedded catalog in a sled database directory.
//!
//! Layout: tree `profiles` (id -> JSON record), `profile_names` (lowercase name -> id),
//! `tables` and `table_names` likewise, `tables_by_created` (creation time big-endian,
//! table id -> empty: the order of pages), `deps` (profile id, NUL, table id -> empty) and
//! `meta` (`format_version`). Lookups by name are two point reads; nothing is read at
//! open (except once, to build the creation index of a catalog written before it existed).
//! Writes are group-committed (`group_commit`) by the store's committer thread: each
//! batch is checked and turned into key writes on its own (`sled_write`), then the
//! batches of a group go into one sled transaction over all trees and one flush, before
//! their writers learn the outcome. A lock file keeps other processes out; `tributary
//! check` reads a copy made between commits instead ([`SledStore::open_snapshot`]).
//! Every file is owner-only (see `sled_files`).

use crate::error::{CatalogError, Result};
use crate::group_commit::{Committer, PendingWrite, StagedWrite};
use crate::sled_core::{SledCore, storage_error};
use crate::sled_files::{
    Busy, LockWait, commit_lock, copy_catalog, is_lock_conflict, lock_catalog, make_private,
};
use crate::store::{CatalogStore, Change};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, ProfileId, TableId,
};

/// The sled-backed catalog.
#[derive(Debug)]
pub struct SledStore {
    // Fields drop in this order: the committer finishes what it was handed, then the
    // database closes, then the lock that keeps other processes out is released.
    committer: Committer,
    core: Arc<SledCore>,
    // Held for the store's lifetime: the advisory lock that keeps other processes out.
    _lock: File,
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
        let path = path.as_ref();
        Self::open_as(path, wait, path, None)
    }

    /// Open the catalog in `dir`, naming `shown` in the errors of later operations, and
    /// keeping `copy` (a snapshot's directory) alive as long as the store.
    fn open_as(
        dir: &Path,
        wait: LockWait<'_>,
        shown: &Path,
        copy: Option<tempfile::TempDir>,
    ) -> Result<Self> {
        let path = dir.to_path_buf();
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
        let mut core = SledCore::open(path, db, commit)?;
        core.path = shown.to_path_buf();
        let core = Arc::new(core);
        let committer = Committer::start(core.clone()).map_err(|source| CatalogError::Io {
            path: shown.to_path_buf(),
            source,
        })?;
        Ok(Self {
            committer,
            core,
            _lock: lock,
            _copy: copy,
        })
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
        let dir: PathBuf = copy.path().to_path_buf();
        Self::open_as(&dir, LockWait::NONE, path, Some(copy)).map_err(|e| match e {
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
        })
    }

    /// Where the catalog lives.
    pub fn path(&self) -> &Path {
        &self.core.path
    }
}

impl CatalogStore for SledStore {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.core.profile_by_name(name)
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.core.profile(id)
    }

    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        self.core.profiles()
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.core.table_by_name(name)
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.core.table(id)
    }

    fn table_names(&self) -> Result<Vec<String>> {
        self.core.table_names()
    }

    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        self.core.tables()
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.core.dependents(profile)
    }

    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>> {
        self.core.definition(kind, name)
    }

    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        self.core.definitions(kind)
    }

    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        self.core.readers(dependency)
    }

    fn tables_page(
        &self,
        after: Option<&TableId>,
        limit: usize,
    ) -> Result<(Vec<ConnectionTable>, bool)> {
        self.core.tables_page(after, limit)
    }

    fn flush(&self) -> Result<()> {
        self.core.flush_db()
    }

    fn generation(&self) -> u64 {
        self.core.generation()
    }

    fn location(&self) -> String {
        self.core.path.display().to_string()
    }

    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        self.committer.submit(changes).wait()
    }

    fn submit(&self, changes: Vec<Change>) -> PendingWrite {
        self.committer.submit(changes)
    }

    fn submit_staged(&self, changes: Vec<Change>) -> StagedWrite {
        self.committer.submit_staged(changes)
    }
}
