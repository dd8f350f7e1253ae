//! Writes to a PostgreSQL catalog: the committer's [`GroupStorage`]. Every batch is
//! checked against the state it changes, by the shared `record_rules` and
//! `definition_rules`, answered from one query that also reads the version of each
//! answer's key (`pg_keys`); a question it did not foresee reads its key's version, then
//! its answer.
//!
//! A group costs two round trips: that query, then one statement that claims the
//! group's keys (each still at the version read: the ones it writes bumped, the others
//! locked shared), writes the group only if they all were and bumps this writer's
//! version slot, committed on its own (`pg_bulk`). A group that only creates tables
//! skips the query: its answers are guessed (`Prefetched::guessed`) and the statement
//! proves them, or writes nothing, after which the group is read and checked as above
//! (as it is when a guessed check refused a batch). Other processes are notified apart,
//! at most every [`NOTIFY_EVERY`], when the committer is idle. Groups of
//! different processes whose keys do not meet commit side by side. A group whose keys
//! moved on writes nothing and goes round again; then the writer first locks the keys
//! it will read, in a transaction of its own, so the next attempt cannot meet the same
//! conflict.

use crate::definition_rules::{DefinitionState, ReaderEdits};
use crate::error::{CatalogError, Result};
use crate::group_commit::{GroupStorage, Written};
use crate::pg_bulk::{Bulk, write_group};
use crate::pg_conn::{PgConn, PgTarget};
use crate::pg_keys::{
    self as keys, CLAIM_SLOT, Claim, KeySet, LOCK_KEYS, NOTIFY, claim_only, lost_race,
};
use crate::pg_prefetch::Prefetched;
use crate::pg_store::{PgShared, decode_row};
use crate::record_rules::RecordState;
use crate::records::encode;
use crate::store::{Change, name_key};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, Dependency, ProfileId, TableId,
};

/// The least time between two notifications of this writer's commits. Every listening
/// process wakes for each notification, and the server takes a database-wide lock to
/// queue it, so a notification per commit cost 16 processes writing at once half their
/// throughput; a change still reaches every listener within this, and every statement
/// checks the catalog's version anyway.
const NOTIFY_EVERY: Duration = Duration::from_millis(100);

/// Groups written with their keys locked first after a conflict, before trying the
/// optimistic path again.
const LOCKED_AFTER_CONFLICT: u32 = 1;

/// The committer's connection and the transaction it has open.
#[derive(Default)]
struct WriterState {
    conn: Option<PgConn>,
    in_transaction: bool,
    /// The version slot this writer's connection claimed (`pg_keys::CLAIM_SLOT`).
    slot: Option<i32>,
    /// Groups still to write with their keys locked first (after a conflict).
    locked_groups: u32,
    /// Whether the group written is committed (or commits with the open transaction).
    committing: bool,
    /// What the group's checks ask about, read when the group was held.
    prefetched: Option<Prefetched>,
    /// The keys the batch being checked has read so far.
    batch_keys: KeySet,
    /// Whether a commit has not been notified to other processes yet.
    notify_pending: bool,
    /// Whether the group being checked was answered by a guess (`Prefetched::guessed`).
    guessing: bool,
    /// Whether the next group must read what it asks about: the last guess was wrong.
    guess_missed: bool,
    /// When the last notification was sent.
    last_notify: Option<Instant>,
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
    /// The keys the batch's checks read, and those it writes.
    keys: KeySet,
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
            state.slot = None;
        }
        let state = &mut *state;
        let Some(conn) = state.conn.as_mut() else {
            return Err(CatalogError::Storage(
                "internal error: no connection".into(),
            ));
        };
        if state.slot.is_none() {
            let row = conn
                .query_one(CLAIM_SLOT.as_str(), &[&self.shared.channel])
                .map_err(|e| self.target().error(e))?;
            state.slot = Some(row.try_get(0).map_err(|e| self.target().error(e))?);
        }
        f(conn).map_err(|e| self.target().error(e))
    }

    /// Note that the batch being checked reads `key`: its version read ahead, or else
    /// read now (before the answer, so an answer newer than the version read shows as a
    /// conflict when the write claims the key). Whether the version was read ahead, with
    /// the answers read ahead; only then may one of those answers be used.
    fn ask(&self, key: String) -> Result<bool> {
        let (ahead, known) = {
            let state = self.lock()?;
            let ahead = state.prefetched.as_ref().and_then(|p| p.key_version(&key));
            (ahead, state.batch_keys.has(&key))
        };
        if let Some(version) = ahead {
            self.lock()?.batch_keys.read(key, version);
            return Ok(true);
        }
        if !known {
            let version = self.key_version_now(&key)?;
            self.lock()?.batch_keys.read(key, version);
        }
        Ok(false)
    }

    /// The version `key` has now (`None`: no row).
    fn key_version_now(&self, key: &str) -> Result<Option<i64>> {
        let key = key.to_string();
        self.with_conn(|c| {
            c.query_opt("SELECT version FROM tributary_keys WHERE key = $1", &[&key])?
                .map(|r| r.try_get(0))
                .transpose()
        })
    }

    /// The keys `changes` (checked) write, each noted as read: ids and names written,
    /// names left by a rename or a drop, and the readers of what a definition starts or
    /// stops reading.
    fn written_keys(&self, changes: &[Change], readers: &ReaderEdits) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    out.push(keys::profile(p.id.as_str()));
                    out.push(keys::profile_name(&p.name));
                    if let Some(old) = self.profile_record(&p.id)? {
                        out.push(keys::profile_name(&old.name));
                    }
                }
                Change::DeleteProfile(id) => {
                    out.push(keys::profile(id.as_str()));
                    if let Some(old) = self.profile_record(id)? {
                        out.push(keys::profile_name(&old.name));
                    }
                }
                Change::PutTable(t) => {
                    out.push(keys::table(t.id.as_str()));
                    out.push(keys::table_name(&t.name));
                    if let Some(old) = DefinitionState::table_name(self, &t.id)? {
                        out.push(keys::table_name(&old));
                    }
                }
                Change::DeleteTable(id) => {
                    out.push(keys::table(id.as_str()));
                    if let Some(old) = DefinitionState::table_name(self, id)? {
                        out.push(keys::table_name(&old));
                    }
                }
                Change::PutDefinition { definition, .. } => {
                    out.push(keys::definition(&definition.key()));
                }
                Change::DeleteDefinition(kind, name) => {
                    let key = Dependency {
                        namespace: kind.namespace(),
                        name: name.clone(),
                    }
                    .key();
                    out.push(keys::definition(&key));
                }
            }
        }
        for (dependency, _) in readers.remove.iter().chain(&readers.add) {
            out.push(keys::readers(dependency));
        }
        for key in &out {
            self.ask(key.clone())?;
        }
        Ok(out)
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

    /// Claim the group's keys, then write its batches one change at a time, in the open
    /// transaction; whether the claim held.
    fn write_change_by_change(
        conn: &mut PgConn,
        group: &[CheckedBatch],
        claim: &Claim<'_>,
        slot: i32,
    ) -> Result<bool, postgres::Error> {
        let (sql, composed) = claim_only(claim, &slot);
        if conn.query_opt(&sql, composed.params())?.is_none() {
            return Ok(false);
        }
        for batch in group {
            Self::write_batch(conn, batch)?;
        }
        // The deferred constraints (unique names, each table's profile), checked now
        // rather than at COMMIT: one that another process's commit broke is a lost
        // race, and the group is checked again, as in the one-statement path.
        conn.client.batch_execute("SET CONSTRAINTS ALL IMMEDIATE")?;
        Ok(true)
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

impl PgWriter {
    /// The rules' verdict on `changes`: their records' text, the reader-index edits and
    /// the keys they write.
    fn check_batch(&self, changes: &[Change]) -> Result<CheckedParts> {
        crate::record_rules::check(self, changes)?;
        let readers = crate::definition_rules::check(self, changes)?;
        let written = self.written_keys(changes, &readers)?;
        let records = changes.iter().map(record_text).collect::<Result<_>>()?;
        Ok((records, readers, written))
    }

    /// The group wrote nothing: lock the keys of the next attempt first.
    fn conflicted(&self) -> Result<Written> {
        self.lock()?.locked_groups = LOCKED_AFTER_CONFLICT;
        Ok(Written::Conflict)
    }
}

/// A checked batch's records, reader-index edits and written keys.
type CheckedParts = (Vec<Option<String>>, ReaderEdits, Vec<String>);

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
            let missed = std::mem::take(&mut state.guess_missed);
            if !locked
                && !missed
                && let Some(guess) = Prefetched::guessed(batches)
            {
                state.prefetched = Some(guess);
                state.guessing = true;
                return Ok(());
            }
            locked
        };
        if locked {
            // Statements in this transaction each read a snapshot taken after the locks
            // are granted, so what the checks read ahead cannot change before COMMIT.
            let mut wanted: Vec<String> = Prefetched::keys_of(batches).into_iter().collect();
            wanted.sort();
            self.with_conn(|c| {
                c.client.batch_execute("BEGIN")?;
                c.execute(LOCK_KEYS, &[&wanted])
            })?;
            self.lock()?.in_transaction = true;
        }
        let prefetched = self.with_conn(|c| Prefetched::read(c, batches))?;
        self.lock()?.prefetched = Some(prefetched);
        Ok(())
    }

    fn check(&self, changes: &[Change]) -> Result<CheckedBatch> {
        self.lock()?.batch_keys = KeySet::default();
        let checked = self.check_batch(changes);
        let keys = std::mem::take(&mut self.lock()?.batch_keys);
        let (records, readers, written) = checked?;
        let mut keys = keys;
        for key in written {
            keys.write(key);
        }
        Ok(CheckedBatch {
            records,
            changes: changes.to_vec(),
            readers,
            keys,
        })
    }

    fn write(&self, mut group: Vec<CheckedBatch>) -> Result<Written> {
        let mut keys = KeySet::default();
        for batch in &mut group {
            keys.merge(std::mem::take(&mut batch.keys));
        }
        if keys.torn() {
            return self.conflicted();
        }
        let claim = keys.claim();
        let (slot, in_transaction) = {
            let state = self.lock()?;
            (state.slot.unwrap_or(0), state.in_transaction)
        };
        let bulk = self.with_conn(|c| write_group(c, &group, &claim, slot))?;
        let written = match bulk {
            Bulk::Written => true,
            Bulk::Stale => false,
            Bulk::ChangeByChange => {
                if !in_transaction {
                    self.with_conn(|c| c.client.batch_execute("BEGIN"))?;
                    self.lock()?.in_transaction = true;
                }
                self.with_conn(|c| {
                    let written = Self::write_change_by_change(c, &group, &claim, slot);
                    match written {
                        Err(e) if lost_race(&e) => Ok(false),
                        other => other,
                    }
                })?
            }
        };
        let mut state = self.lock()?;
        if written {
            state.committing = true;
            return Ok(Written::Done);
        }
        if state.guessing {
            // A guess gone stale is no sign of a race worth locking for: read, then try.
            state.guess_missed = true;
            return Ok(Written::Conflict);
        }
        drop(state);
        self.conflicted()
    }

    fn recheck_refusals(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        if state.guessing {
            state.guess_missed = true;
        }
        state.guessing
    }

    fn flush(&self) -> Result<()> {
        // COMMIT is where PostgreSQL makes the group durable (its deferred constraints
        // were checked at the end of its write). A group written in one statement
        // outside a transaction has committed already.
        if self.lock()?.in_transaction {
            self.with_conn(|c| c.client.batch_execute("COMMIT"))?;
        }
        let committed = {
            let mut state = self.lock()?;
            state.in_transaction = false;
            std::mem::take(&mut state.committing)
        };
        if committed {
            self.shared.changed();
            self.lock()?.notify_pending = true;
            // The group is durable whatever becomes of its notification.
            let _ = self.idle(false);
        }
        Ok(())
    }

    fn idle(&self, stopping: bool) -> Option<Duration> {
        let last = {
            let state = self.state.lock().ok()?;
            if !state.notify_pending {
                return None;
            }
            state.last_notify
        };
        if let Some(last) = last.filter(|_| !stopping) {
            let wait = (last + NOTIFY_EVERY).saturating_duration_since(Instant::now());
            if !wait.is_zero() {
                return Some(wait);
            }
        }
        // A process that misses this (a broken connection) still sees the change at its
        // next statement's version check.
        let channel = self.shared.channel.clone();
        let _ = self.with_conn(|c| c.execute(NOTIFY, &[&channel]));
        let mut state = self.state.lock().ok()?;
        state.notify_pending = false;
        state.last_notify = Some(Instant::now());
        None
    }

    fn release(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        state.committing = false;
        state.guessing = false;
        state.prefetched = None;
        state.batch_keys = KeySet::default();
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
        if self.ask(keys::profile_name(name))?
            && let Some(answer) = self.foreseen(|p| p.profile_id_named(&key))?
        {
            return Ok(answer);
        }
        self.text_at(
            "SELECT id FROM tributary_profiles WHERE name_key = $1",
            &key,
        )
    }

    fn table_id_named(&self, name: &str) -> Result<Option<String>> {
        let key = name_key(name);
        if self.ask(keys::table_name(name))?
            && let Some(answer) = self.foreseen(|p| p.table_id_named(&key))?
        {
            return Ok(answer);
        }
        self.text_at("SELECT id FROM tributary_tables WHERE name_key = $1", &key)
    }

    fn profile_exists(&self, id: &str) -> Result<bool> {
        if self.ask(keys::profile(id))?
            && let Some(answer) = self.foreseen(|p| p.profile_record(id).map(|r| r.is_some()))?
        {
            return Ok(answer);
        }
        Ok(self
            .text_at("SELECT id FROM tributary_profiles WHERE id = $1", id)?
            .is_some())
    }

    fn table_profile_exists(&self, id: &str) -> Result<bool> {
        // No key: the table's foreign key to its profile fails the write if the profile
        // is gone by then, which counts as a lost race (`pg_keys::lost_race`), and the
        // group is checked again. So tables made on one profile claim nothing of it.
        if let Some(answer) = self.foreseen(|p| p.profile_exists(id))? {
            return Ok(answer);
        }
        Ok(self
            .text_at("SELECT id FROM tributary_profiles WHERE id = $1", id)?
            .is_some())
    }

    fn profile_record(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        let (what, key) = ("connection profile", id.as_str());
        if self.ask(keys::profile(key))?
            && let Some(answer) = self.foreseen_record(what, key, |p| p.profile_record(key))?
        {
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
        if self.ask(keys::table(key))?
            && let Some(answer) = self.foreseen_record("table", key, |p| p.table_record(key))?
        {
            return Ok(answer);
        }
        self.record_at(
            "SELECT record FROM tributary_tables WHERE id = $1",
            "table",
            key,
        )
    }

    fn tables_using(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        // Keyed by the profile: see `pg_keys` for why a creation racing this is caught.
        if self.ask(keys::profile(profile.as_str()))?
            && let Some(ids) = self.foreseen(|p| p.tables_using(profile.as_str()))?
        {
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
        if self.ask(keys::table(id.as_str()))?
            && let Some(answer) = self.foreseen(|p| p.table_name(id.as_str()))?
        {
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
        if self.ask(keys::definition(key))?
            && let Some(answer) = self.foreseen_record("definition", key, |p| p.definition(key))?
        {
            return Ok(answer);
        }
        self.record_at(
            "SELECT record FROM tributary_definitions WHERE key = $1",
            "definition",
            key,
        )
    }

    fn reader_keys(&self, dependency_key: &str) -> Result<Vec<String>> {
        if self.ask(keys::readers(dependency_key))?
            && let Some(keys) = self.foreseen(|p| p.reader_keys(dependency_key))?
        {
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
