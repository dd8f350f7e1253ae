//! Writes to a sled catalog: each batch checked and turned into key writes, then a
//! group of batches written in one transaction over all trees (the committer thread's
//! [`GroupStorage`]).

use crate::error::{CatalogError, Result};
use crate::group_commit::{GroupStorage, Written};
use crate::records::encode;
use crate::sled_core::{SledCore, dep_key, index_value, reader_index_key, storage_error};
use crate::store::{Change, name_key};
use fs2::FileExt;
use sled::Transactional;
use sled::Tree;
use sled::transaction::TransactionError;
use tributary_types::TableId;

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
    Definitions,
    Readers,
}

/// One key a checked batch writes.
#[derive(Debug)]
pub(crate) enum KeyWrite {
    Insert(Slot, Vec<u8>, Vec<u8>),
    Remove(Slot, Vec<u8>),
}

impl SledCore {
    /// The trees in [`Slot`] order.
    fn slot_trees(&self) -> [&Tree; 8] {
        [
            &self.profiles,
            &self.profile_names,
            &self.tables,
            &self.table_names,
            &self.deps,
            &self.tables_by_created,
            &self.definitions,
            &self.readers,
        ]
    }

    /// Check one batch against the committed state and turn it into key writes, in the
    /// order they must happen (stale index entries go before new ones, so a rename to
    /// the same name in another case keeps its index entry).
    fn prepare(&self, changes: &[Change]) -> Result<Vec<KeyWrite>> {
        use KeyWrite::{Insert, Remove};
        let deps = crate::record_rules::check(self, changes)?;
        let readers = crate::definition_rules::check(self, changes)?;
        let mut writes = Vec::with_capacity(changes.len() * 4 + deps.add.len() + deps.remove.len());
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
                Change::PutDefinition { .. } | Change::DeleteDefinition(..) => {}
            }
        }
        writes.extend(
            deps.remove
                .iter()
                .map(|(p, t)| Remove(Slot::Deps, dep_key(p, t))),
        );
        writes.extend(
            readers
                .remove
                .iter()
                .map(|(read, reader)| Remove(Slot::Readers, reader_index_key(read, reader))),
        );
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
                Change::PutDefinition { definition, .. } => writes.push(Insert(
                    Slot::Definitions,
                    definition.key().into_bytes(),
                    encode(definition)?,
                )),
                Change::DeleteDefinition(kind, name) => writes.push(Remove(
                    Slot::Definitions,
                    tributary_types::Dependency {
                        namespace: kind.namespace(),
                        name: name.clone(),
                    }
                    .key()
                    .into_bytes(),
                )),
            }
        }
        writes.extend(
            deps.add
                .iter()
                .map(|(p, t)| Insert(Slot::Deps, dep_key(p, t), Vec::new())),
        );
        writes.extend(readers.add.iter().map(|(read, reader)| {
            Insert(Slot::Readers, reader_index_key(read, reader), Vec::new())
        }));
        Ok(writes)
    }
}

impl GroupStorage for SledCore {
    type Checked = Vec<KeyWrite>;

    fn check(&self, changes: &[Change]) -> Result<Vec<KeyWrite>> {
        self.prepare(changes)
    }

    /// Write a group of checked batches (whose keys are disjoint) in one transaction.
    /// Never a conflict: the commit lock, held since `hold`, keeps other processes out.
    fn write(&self, group: Vec<Vec<KeyWrite>>) -> Result<Written> {
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
        Ok(Written::Done)
    }

    fn flush(&self) -> Result<()> {
        self.flush_db()
    }

    fn flushes_apart(&self) -> bool {
        true
    }

    fn hold(&self, _: &[Vec<Change>]) -> Result<()> {
        let mut holds = self
            .commit_holds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *holds == 0 {
            self.commit
                .lock_exclusive()
                .map_err(|source| CatalogError::Io {
                    path: self.path.clone(),
                    source,
                })?;
        }
        *holds += 1;
        Ok(())
    }

    fn release(&self) {
        let mut holds = self
            .commit_holds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *holds = holds.saturating_sub(1);
        if *holds == 0 {
            // An unlock that fails leaves the lock to be dropped with the file; snapshot
            // copies wait until then.
            let _ = FileExt::unlock(&self.commit);
        }
    }
}

/// The `tables_by_created` key of a table: its creation time (big-endian, so keys sort
/// by time) and its id.
pub(crate) fn created_key(created_at: i64, id: &TableId) -> Vec<u8> {
    // Times before 1970 do not occur; clamp rather than wrap.
    let mut key = (created_at.max(0) as u64).to_be_bytes().to_vec();
    key.extend_from_slice(id.as_str().as_bytes());
    key
}
