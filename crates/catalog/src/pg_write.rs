//! Writes to a PostgreSQL catalog: the committer's [`GroupStorage`]. Every batch is
//! checked against the state it changes, by the shared `record_rules` and
//! `definition_rules`, answered from one query that also reads the catalog's version.
//!
//! Optimistically, a group costs two round trips: that query, then one statement that
//! writes the group only if the version is still the one read, bumps it and notifies the
//! other processes, committed on its own (`pg_bulk`). Every write bumps the version, so
//! an unchanged version proves nothing changed in between. If another process did write,
//! nothing is written and the group goes round again; then, and for the next
//! [`LOCKED_AFTER_CONFLICT`] groups, the writer first locks the version row in a
//! transaction of its own, so processes that keep meeting take turns instead of failing.

use crate::definition_rules::{DefinitionState, ReaderEdits};
use crate::error::{CatalogError, Result};
use crate::group_commit::{GroupStorage, Written};
use crate::pg_bulk::{BUMP_VERSION, Bulk, write_group};
use crate::pg_conn::{PgConn, PgTarget};
use crate::pg_prefetch::Prefetched;
use crate::pg_store::{PgShared, decode_row};
use crate::record_rules::RecordState;
use crate::records::encode;
use crate::store::{Change, name_key};
use std::sync::{Arc, Mutex, MutexGuard};
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, Dependency, ProfileId, TableId,
};

/// Groups written under the version row's lock after a conflict, before trying the
/// optimistic path again.
const LOCKED_AFTER_CONFLICT: u32 = 16;

/// The committer's connection and the transaction it has open.
#[derive(Default)]
struct WriterState {
    conn: Option<PgConn>,
    in_transaction: bool,
    /// Groups still to write under the version row's lock (after a conflict).
    locked_groups: u32,
    /// The version the held group was checked against, when it is written
    /// optimistically; `None` when the writer holds the version row's lock.
    expected: Option<i64>,
    /// The version the open transaction commits.
    committing: Option<i64>,
    /// What the group's checks ask about, read when the group was held.
    prefetched: Option<Prefetched>,
}

/// The writing side of a PostgreSQL catalog, owned by its committer thread.
pub(crate) struct PgWriter {
    shared: Arc<PgShared>,
    state: Mutex<WriterState>,
}

impl std::fmt::Debug for PgWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgWriter({:?})", self.shared.target)
    }
}

/// A batch checked and ready to write.
pub(crate) struct CheckedBatch {
    pub(crate) changes: Vec<Change>,
    /// The JSON text of each change's record (`None` for deletions), encoded while
    /// checking so that a record that cannot be encoded refuses its batch.
    pub(crate) records: Vec<Option<String>>,
    pub(crate) readers: ReaderEdits,
}

impl PgWriter {
    pub(crate) fn new(shared: Arc<PgShared>, conn: PgConn) -> Self {
        Self {
            shared,
            state: Mutex::new(WriterState {
                conn: Some(conn),
                ..WriterState::default()
            }),
        }
    }

    fn target(&self) -> &PgTarget {
        &self.shared.target
    }

    fn lock(&self) -> Result<MutexGuard<'_, WriterState>> {
        self.state
            .lock()
            .map_err(|_| CatalogError::Storage("internal error: the catalog writer failed".into()))
    }

    /// Run `f` on the writer's connection (connecting again if it broke between groups).
    fn with_conn<T>(&self, f: impl FnOnce(&mut PgConn) -> Result<T, postgres::Error>) -> Result<T> {
        let mut state = self.lock()?;
        if state.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            if state.in_transaction {
                return Err(CatalogError::Storage(format!(
                    "catalog '{}': the connection broke during a write; nothing was stored",
                    self.target().shown
                )));
            }
            state.conn = None;
        }
        if state.conn.is_none() {
            state.conn = Some(PgConn::new(self.target().connect()?));
        }
        let Some(conn) = state.conn.as_mut() else {
            return Err(CatalogError::Storage(
                "internal error: no connection".into(),
            ));
        };
        f(conn).map_err(|e| self.target().error(e))
    }

    /// The answer read ahead for this group, if the question was foreseen.
    fn foreseen<T>(&self, ask: impl FnOnce(&Prefetched) -> Option<T>) -> Result<Option<T>> {
        Ok(self.lock()?.prefetched.as_ref().and_then(ask))
    }

    /// A record read ahead (`Some`), decoded, or `None` when it was not foreseen.
    fn foreseen_record<T>(
        &self,
        what: &str,
        key: &str,
        ask: impl FnOnce(&Prefetched) -> Option<Option<&str>>,
    ) -> Result<Option<Option<T>>>
    where
        T: serde::de::DeserializeOwned + crate::records::Versioned,
    {
        let state = self.lock()?;
        let Some(answer) = state.prefetched.as_ref().and_then(ask) else {
            return Ok(None);
        };
        answer
            .map(|text| {
                crate::records::decode_record(&self.target().path(), what, key, text.as_bytes())
            })
            .transpose()
            .map(Some)
    }

    fn record_at<T>(&self, sql: &'static str, what: &str, key: &str) -> Result<Option<T>>
    where
        T: serde::de::DeserializeOwned + crate::records::Versioned,
    {
        let key_owned = key.to_string();
        let row = self.with_conn(|c| c.query_opt(sql, &[&key_owned]))?;
        row.map(|r| decode_row(self.target(), what, key, &r))
            .transpose()
    }

    fn text_at(&self, sql: &'static str, key: &str) -> Result<Option<String>> {
        let key = key.to_string();
        self.with_conn(|c| c.query_opt(sql, &[&key])?.map(|r| r.try_get(0)).transpose())
    }

    fn write_batch(conn: &mut PgConn, batch: &CheckedBatch) -> Result<(), postgres::Error> {
        for (change, record) in batch.changes.iter().zip(&batch.records) {
            let record = record.as_deref().unwrap_or_default();
            match change {
                Change::PutProfile(p) => {
                    conn.execute(
                        "INSERT INTO tributary_profiles (id, name_key, record) VALUES ($1, $2, $3)
                         ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, record = EXCLUDED.record",
                        &[&p.id.as_str(), &name_key(&p.name), &record],
                    )?;
                }
                Change::DeleteProfile(id) => {
                    conn.execute(
                        "DELETE FROM tributary_profiles WHERE id = $1",
                        &[&id.as_str()],
                    )?;
                }
                Change::PutTable(t) => {
                    let profile = t.profile.as_ref().map(|p| p.as_str());
                    conn.execute(
                        "INSERT INTO tributary_tables (id, name_key, name, profile_id, created_at, record)
                         VALUES ($1, $2, $3, $4, $5, $6)
                         ON CONFLICT (id) DO UPDATE SET name_key = EXCLUDED.name_key, name = EXCLUDED.name,
                           profile_id = EXCLUDED.profile_id, created_at = EXCLUDED.created_at,
                           record = EXCLUDED.record",
                        &[&t.id.as_str(), &name_key(&t.name), &t.name, &profile, &t.created_at, &record],
                    )?;
                }
                Change::DeleteTable(id) => {
                    conn.execute(
                        "DELETE FROM tributary_tables WHERE id = $1",
                        &[&id.as_str()],
                    )?;
                }
                Change::PutDefinition { definition, .. } => {
                    conn.execute(
                        "INSERT INTO tributary_definitions (key, record) VALUES ($1, $2)
                         ON CONFLICT (key) DO UPDATE SET record = EXCLUDED.record",
                        &[&definition.key(), &record],
                    )?;
                }
                Change::DeleteDefinition(kind, name) => {
                    let key = Dependency {
                        namespace: kind.namespace(),
                        name: name.clone(),
                    }
                    .key();
                    conn.execute("DELETE FROM tributary_definitions WHERE key = $1", &[&key])?;
                }
            }
        }
        for (read, reader) in &batch.readers.remove {
            conn.execute(
                "DELETE FROM tributary_readers WHERE dependency = $1 AND reader = $2",
                &[read, reader],
            )?;
        }
        for (read, reader) in &batch.readers.add {
            conn.execute(
                "INSERT INTO tributary_readers (dependency, reader) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[read, reader],
            )?;
        }
        Ok(())
    }
}

/// The JSON text of a change's record, `None` for a deletion.
fn record_text(change: &Change) -> Result<Option<String>> {
    let bytes = match change {
        Change::PutProfile(p) => encode(p)?,
        Change::PutTable(t) => encode(t)?,
        Change::PutDefinition { definition, .. } => encode(definition)?,
        Change::DeleteProfile(_) | Change::DeleteTable(_) | Change::DeleteDefinition(..) => {
            return Ok(None);
        }
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| CatalogError::Storage("a record encoded to invalid UTF-8".into()))
}

impl GroupStorage for PgWriter {
    type Checked = CheckedBatch;

    fn hold(&self, batches: &[Vec<Change>]) -> Result<()> {
        let locked = {
            let mut state = self.lock()?;
            let locked = state.locked_groups > 0;
            state.locked_groups = state.locked_groups.saturating_sub(1);
            locked
        };
        if locked {
            self.with_conn(|c| {
                c.client.batch_execute(
                    "BEGIN; SELECT version FROM tributary_state WHERE id = 1 FOR UPDATE",
                )
            })?;
            self.lock()?.in_transaction = true;
        }
        let prefetched = self.with_conn(|c| Prefetched::read(c, batches))?;
        let version = prefetched.version.ok_or_else(|| {
            CatalogError::Storage(format!(
                "catalog '{}' has lost its version row; restore it from a backup",
                self.target().shown
            ))
        })?;
        let mut state = self.lock()?;
        state.expected = (!locked).then_some(version);
        state.prefetched = Some(prefetched);
        Ok(())
    }

    fn check(&self, changes: &[Change]) -> Result<CheckedBatch> {
        crate::record_rules::check(self, changes)?;
        let readers = crate::definition_rules::check(self, changes)?;
        Ok(CheckedBatch {
            records: changes.iter().map(record_text).collect::<Result<_>>()?,
            changes: changes.to_vec(),
            readers,
        })
    }

    fn write(&self, group: Vec<CheckedBatch>) -> Result<Written> {
        let channel = self.shared.channel.clone();
        let (expected, in_transaction) = {
            let state = self.lock()?;
            (state.expected, state.in_transaction)
        };
        let bulk = self.with_conn(|c| write_group(c, &group, &channel, expected))?;
        let written = match bulk {
            Bulk::Written(version) => Some(version),
            Bulk::Stale => None,
            Bulk::ChangeByChange => {
                if !in_transaction {
                    self.with_conn(|c| c.client.batch_execute("BEGIN"))?;
                    self.lock()?.in_transaction = true;
                }
                self.with_conn(|c| {
                    let Some(row) = c.query_opt(BUMP_VERSION, &[&expected])? else {
                        return Ok(None);
                    };
                    let version: i64 = row.try_get(0)?;
                    for batch in &group {
                        Self::write_batch(c, batch)?;
                    }
                    c.execute(
                        "SELECT pg_notify($1, $2)",
                        &[&channel, &version.to_string()],
                    )?;
                    Ok(Some(version))
                })?
            }
        };
        let mut state = self.lock()?;
        match written {
            Some(version) => {
                state.committing = Some(version);
                Ok(Written::Done)
            }
            None => {
                state.locked_groups = LOCKED_AFTER_CONFLICT;
                Ok(Written::Conflict)
            }
        }
    }

    fn flush(&self) -> Result<()> {
        // COMMIT is where PostgreSQL makes the group durable, and where deferred
        // constraints (unique names, a table's profile) are checked one last time. A
        // group written in one statement outside a transaction has committed already.
        if self.lock()?.in_transaction {
            self.with_conn(|c| c.client.batch_execute("COMMIT"))?;
        }
        let mut state = self.lock()?;
        state.in_transaction = false;
        if let Some(version) = state.committing.take() {
            self.shared.saw_version(version);
        }
        Ok(())
    }

    fn release(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.committing = None;
        state.prefetched = None;
        state.expected = None;
        if state.in_transaction {
            state.in_transaction = false;
            // A group that failed or wrote nothing: undo it. A connection that cannot
            // even roll back is dropped, which rolls back on the server.
            let rolled_back = state
                .conn
                .as_mut()
                .is_some_and(|c| c.client.batch_execute("ROLLBACK").is_ok());
            if !rolled_back {
                state.conn = None;
            }
        }
    }
}

impl RecordState for PgWriter {
    fn profile_id_named(&self, name: &str) -> Result<Option<String>> {
        let key = name_key(name);
        if let Some(answer) = self.foreseen(|p| p.profile_id_named(&key))? {
            return Ok(answer);
        }
        self.text_at(
            "SELECT id FROM tributary_profiles WHERE name_key = $1",
            &key,
        )
    }

    fn table_id_named(&self, name: &str) -> Result<Option<String>> {
        let key = name_key(name);
        if let Some(answer) = self.foreseen(|p| p.table_id_named(&key))? {
            return Ok(answer);
        }
        self.text_at("SELECT id FROM tributary_tables WHERE name_key = $1", &key)
    }

    fn profile_exists(&self, id: &str) -> Result<bool> {
        if let Some(answer) = self.foreseen(|p| p.profile_record(id).map(|r| r.is_some()))? {
            return Ok(answer);
        }
        Ok(self
            .text_at("SELECT id FROM tributary_profiles WHERE id = $1", id)?
            .is_some())
    }

    fn profile_record(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        let (what, key) = ("connection profile", id.as_str());
        if let Some(answer) = self.foreseen_record(what, key, |p| p.profile_record(key))? {
            return Ok(answer);
        }
        self.record_at(
            "SELECT record FROM tributary_profiles WHERE id = $1",
            what,
            key,
        )
    }

    fn table_record(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        let key = id.as_str();
        if let Some(answer) = self.foreseen_record("table", key, |p| p.table_record(key))? {
            return Ok(answer);
        }
        self.record_at(
            "SELECT record FROM tributary_tables WHERE id = $1",
            "table",
            key,
        )
    }

    fn tables_using(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        if let Some(ids) = self.foreseen(|p| p.tables_using(profile.as_str()))? {
            return Ok(ids.iter().filter_map(|id| TableId::parse(id)).collect());
        }
        let profile = profile.as_str().to_string();
        let ids: Vec<String> = self.with_conn(|c| {
            c.query(
                "SELECT id FROM tributary_tables WHERE profile_id = $1 ORDER BY id",
                &[&profile],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, postgres::Error>>()
        })?;
        Ok(ids.iter().filter_map(|id| TableId::parse(id)).collect())
    }
}

impl DefinitionState for PgWriter {
    fn table_name(&self, id: &TableId) -> Result<Option<String>> {
        if let Some(answer) = self.foreseen(|p| p.table_name(id.as_str()))? {
            return Ok(answer);
        }
        self.text_at(
            "SELECT name FROM tributary_tables WHERE id = $1",
            id.as_str(),
        )
    }

    fn table_named(&self, name: &str) -> Result<Option<TableId>> {
        Ok(self
            .table_id_named(name)?
            .and_then(|id| TableId::parse(&id)))
    }

    fn definition_at(&self, key: &str) -> Result<Option<Definition>> {
        if let Some(answer) = self.foreseen_record("definition", key, |p| p.definition(key))? {
            return Ok(answer);
        }
        self.record_at(
            "SELECT record FROM tributary_definitions WHERE key = $1",
            "definition",
            key,
        )
    }

    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        if let Some(keys) = self.foreseen(|p| p.reader_keys(dependency_key))? {
            return Ok(keys);
        }
        let key = dependency_key.to_string();
        self.with_conn(|c| {
            c.query(
                "SELECT reader FROM tributary_readers WHERE dependency = $1 ORDER BY reader",
                &[&key],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, postgres::Error>>()
        })
    }
}
