//! The [`CatalogStore`] interface and the changes a statement applies.

use crate::error::Result;
use crate::group_commit::{PendingWrite, StagedWrite};
use std::fmt;
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, ProfileId, TableId,
};

/// The kinds of catalog objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ObjectKind {
    /// A connection profile.
    Profile,
    /// A connection table.
    Table,
    /// A view.
    View,
    /// A declared function.
    Function,
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ObjectKind::Profile => "connection profile",
            ObjectKind::Table => "table",
            ObjectKind::View => "view",
            ObjectKind::Function => "function",
        })
    }
}

/// One change of a statement. A statement's changes are applied together or not at all.
#[derive(Debug, Clone, PartialEq)]
// Changes are few per statement and moved once; boxing the records would only add noise.
#[allow(clippy::large_enum_variant)]
pub enum Change {
    /// Create a profile, or replace the one with the same id.
    PutProfile(ConnectionProfile),
    /// Delete a profile (no table may still use it after the batch).
    DeleteProfile(ProfileId),
    /// Create a table, or replace the one with the same id.
    PutTable(ConnectionTable),
    /// Delete a table (no view may still read it after the batch).
    DeleteTable(TableId),
    /// Create a view or declared function; with `replace`, replace the one of that name
    /// (of the same kind) if there is one. What it reads must exist after the batch.
    PutDefinition {
        /// The record.
        definition: Definition,
        /// `CREATE OR REPLACE`.
        replace: bool,
    },
    /// Delete a view or declared function by name (nothing may still read it after the
    /// batch).
    DeleteDefinition(DefinitionKind, String),
}

/// Storage for profiles and tables. Lookups by name are case-insensitive and do not scan.
pub trait CatalogStore: Send + Sync + fmt::Debug {
    /// A profile by name.
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>>;
    /// A profile by id.
    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>>;
    /// Every profile, by name.
    fn profiles(&self) -> Result<Vec<ConnectionProfile>>;
    /// A table by name.
    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>>;
    /// A table by id.
    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>>;
    /// Every table name, sorted case-insensitively, without reading the tables.
    fn table_names(&self) -> Result<Vec<String>>;
    /// Every table, by name.
    fn tables(&self) -> Result<Vec<ConnectionTable>>;
    /// The ids of the tables that use a profile.
    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>>;
    /// A view or declared function by kind and name (case-insensitive).
    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>>;
    /// Every view or every declared function, by name.
    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>>;
    /// The views and functions that read `dependency`, by name.
    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>>;
    /// One page of tables, newest first (equal creation times by id, descending): at most
    /// `limit` of those after the table `after` in that order (from the newest when
    /// `None`), and whether more follow. An `after` that names no table is
    /// [`CatalogError::NotFound`](crate::CatalogError::NotFound).
    fn tables_page(
        &self,
        after: Option<&TableId>,
        limit: usize,
    ) -> Result<(Vec<ConnectionTable>, bool)> {
        let mut all = self.tables()?;
        all.sort_by(newest_first);
        let start = match after {
            None => 0,
            Some(id) => {
                all.iter().position(|t| &t.id == id).ok_or_else(|| {
                    crate::CatalogError::NotFound {
                        kind: ObjectKind::Table,
                        name: id.to_string(),
                    }
                })? + 1
            }
        };
        let rest = all.len().saturating_sub(start);
        let page: Vec<ConnectionTable> = all.into_iter().skip(start).take(limit).collect();
        Ok((page, rest > limit))
    }
    /// Make everything applied so far durable (every `apply` already is; a server calls
    /// this once more as it stops).
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    /// A number that changes whenever a batch is applied, so callers can cache what
    /// they read (the REST server caches rendered pages).
    fn generation(&self) -> u64;
    /// Catch up with changes other processes have made, so that [`generation`]
    /// (Self::generation) reflects every change acknowledged before this call. A store
    /// no other process writes has nothing to do; a session calls it before each
    /// statement.
    fn refresh(&self) -> Result<()> {
        Ok(())
    }
    /// Where the catalog lives, as logs and messages show it (a directory, or a
    /// database URL without its password).
    fn location(&self) -> String {
        "an in-memory catalog".into()
    }
    /// Apply a statement's changes atomically; when this returns `Ok` they are durable.
    fn apply(&self, changes: Vec<Change>) -> Result<()>;
    /// [`apply`](Self::apply) without blocking: the changes are handed over now, and the
    /// returned write resolves once they are durable or refused. On an async runtime,
    /// await it so that no thread waits for the flush. Stores that write in place answer
    /// at once.
    fn submit(&self, changes: Vec<Change>) -> PendingWrite {
        PendingWrite::done(self.apply(changes))
    }

    /// Hand `changes` to the store as [`submit`](Self::submit) does, for a writer whose
    /// next batch only needs to see these changes: the returned write tells when they are
    /// visible (or refused), then when they are durable. A store that flushes on a thread
    /// of its own (sled) makes them visible before the flush, so a script's consecutive
    /// statements share flushes; the others answer both at once.
    fn submit_staged(&self, changes: Vec<Change>) -> StagedWrite {
        StagedWrite::durable_when_visible(self.submit(changes))
    }

    /// Write what [`submit_staged`](Self::submit_staged) has kept back to the storage
    /// below: all of it (`all`: the writer needs it stored, or is done), or only what has
    /// waited long enough. Only a store that stages batches ([`StagingStore`]
    /// (crate::StagingStore)) keeps any back.
    fn write_staged(&self, all: bool) {
        let _ = all;
    }

    /// Drop what [`submit_staged`](Self::submit_staged) has kept back, unwritten: the
    /// writer stopped before reporting it (a script stopped at an earlier failure). Each
    /// such write fails.
    fn discard_staged(&self) {}
}

/// The key names are indexed under.
pub(crate) fn name_key(name: &str) -> String {
    name.to_lowercase()
}

/// The order of [`CatalogStore::tables_page`].
pub(crate) fn newest_first(a: &ConnectionTable, b: &ConnectionTable) -> std::cmp::Ordering {
    b.created_at
        .cmp(&a.created_at)
        .then_with(|| b.id.as_str().cmp(a.id.as_str()))
}
