//! [`PostgresStore`]: a catalog in a PostgreSQL database, shared by any number of
//! processes.
//!
//! Layout: the tables of `migrations/` (records as the same JSON documents the embedded
//! store keeps, beside the columns they are looked up by). Reads run on a small pool of
//! connections (`pg_conn`); writes are group-committed by the store's committer thread
//! (`pg_write`), each group only if the keys its checks read are unchanged (`pg_keys`).
//! Every commit raises the catalog's version (the sum of its slots) and notifies the
//! catalog's channel: a listener thread raises [`CatalogStore::generation`] within
//! moments, and [`CatalogStore::refresh`] reads the version outright, so no cache keyed
//! by the generation outlives a change acknowledged by another process. Nothing is read
//! at open beyond the schema version and the catalog's version.

use crate::error::{CatalogError, Result};
use crate::group_commit::{Committer, PendingWrite};
use crate::pg_conn::{PgConn, PgTarget, ReadPool};
use crate::pg_write::PgWriter;
use crate::records::{Versioned, decode_record};
use crate::store::{CatalogStore, Change, ObjectKind, name_key};
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::ToSql;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::Duration;
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, ProfileId, TableId,
};

/// Reading connections per process.
// Two: each connection is a server process, and a catalog shared by many processes
// should not take the server's connection slots (a store also has a writer and a
// listener); reads are single indexed queries.
const READERS: usize = 2;

/// How often the listener looks up from waiting for notifications (to notice it should
/// stop).
const LISTEN_TICK: Duration = Duration::from_millis(200);

/// What the store, its writer and its listener share.
#[derive(Debug)]
pub(crate) struct PgShared {
    pub(crate) target: PgTarget,
    /// The notification channel of this catalog (one per database schema).
    pub(crate) channel: String,
    /// The highest catalog version this process has read.
    version: AtomicI64,
    /// Counts the changes this process has noticed: [`CatalogStore::generation`].
    generation: AtomicU64,
    readers: ReadPool,
}

impl PgShared {
    /// Record that the catalog has reached `version`; a version above any read before
    /// means something changed. (Versions from different connections may arrive out of
    /// order; a lower one says nothing.)
    fn saw_version(&self, version: i64) {
        if self.version.fetch_max(version, Ordering::SeqCst) < version {
            self.changed();
        }
    }

    /// Record that the catalog changed: this process committed, or another notified.
    pub(crate) fn changed(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn read<T, F>(&self, read: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut PgConn) -> Result<T, postgres::Error> + Send + 'static,
    {
        let target = self.target.clone();
        self.readers
            .run(move |conn| read(conn).map_err(|e| target.error(e)))
    }

    /// The records `sql` returns (columns: key, JSON text) given `params`, decoded.
    fn records<T: DeserializeOwned + Versioned>(
        &self,
        sql: &'static str,
        what: &str,
        params: Vec<String>,
    ) -> Result<Vec<T>> {
        let texts: Vec<(String, String)> = self.read(move |c| {
            let refs: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            c.query(sql, &refs)?
                .iter()
                .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                .collect::<Result<_, postgres::Error>>()
        })?;
        texts
            .iter()
            .map(|(key, text)| decode_text(&self.target, what, key, text))
            .collect()
    }

    /// The record `sql` returns for `key`, decoded.
    fn record<T: DeserializeOwned + Versioned>(
        &self,
        sql: &'static str,
        what: &str,
        key: &str,
    ) -> Result<Option<T>> {
        Ok(self
            .records(sql, what, vec![key.to_string()])?
            .into_iter()
            .next())
    }

    fn current_version(&self) -> Result<i64> {
        self.read(|c| c.query_one(crate::pg_keys::VERSION, &[])?.try_get(0))
    }
}

/// Decode a record column (column 0 of `row`, JSON text) stored under `key`.
pub(crate) fn decode_row<T: DeserializeOwned + Versioned>(
    target: &PgTarget,
    what: &str,
    key: &str,
    row: &postgres::Row,
) -> Result<T> {
    let text: String = row.try_get(0).map_err(|e| target.error(e))?;
    decode_text(target, what, key, &text)
}

fn decode_text<T: DeserializeOwned + Versioned>(
    target: &PgTarget,
    what: &str,
    key: &str,
    text: &str,
) -> Result<T> {
    decode_record(&target.path(), what, key, text.as_bytes())
}

/// The PostgreSQL-backed catalog.
#[derive(Debug)]
pub struct PostgresStore {
    // Fields drop in this order: the committer finishes what it was handed (and closes
    // the writing connection on its own thread), the listener stops, then the readers.
    committer: Committer,
    _listener: Listener,
    shared: Arc<PgShared>,
}

impl PostgresStore {
    /// Open the catalog in the database at `url` (`postgres://user[:password]@host[:port]/db`,
    /// options such as `?options=-csearch_path%3Dschema` to keep it in a schema of its
    /// own), creating or upgrading its tables. A schema newer than this build knows is
    /// [`CatalogError::NewerSchema`]; errors never show the password.
    pub fn open(url: &str) -> Result<Self> {
        Self::open_as(url, Opening::Migrate).map(|store| {
            store.ok_or_else(|| {
                CatalogError::Storage("internal error: the catalog was not created".into())
            })
        })?
    }

    /// Open the catalog at `url` only if the database holds one, creating and changing
    /// nothing (what `tributary check` and `catalog dump` read); `None` when there is no
    /// catalog there yet. A catalog whose schema is older than this build's is refused
    /// with the help to open it once for writing, which upgrades it.
    pub fn open_existing(url: &str) -> Result<Option<Self>> {
        Self::open_as(url, Opening::Existing)
    }

    fn open_as(url: &str, opening: Opening) -> Result<Option<Self>> {
        let target = PgTarget::parse(url)?;
        // The synchronous client runs a runtime of its own and may not be used on a
        // thread that runs another, as a server's request handlers do: connect, migrate
        // and learn the version on a thread of its own.
        let preparing = target.clone();
        let prepared = std::thread::Builder::new()
            .name("catalog-open".into())
            .spawn(move || prepare(&preparing, opening))
            .map_err(|e| CatalogError::Storage(format!("cannot start a thread: {e}")))?
            .join()
            .map_err(|_| {
                CatalogError::Storage("internal error: opening the catalog failed".into())
            })??;
        let Some((writer_conn, channel, version)) = prepared else {
            return Ok(None);
        };
        let shared = Arc::new(PgShared {
            readers: ReadPool::start(&target, READERS)?,
            channel,
            version: AtomicI64::new(version),
            generation: AtomicU64::new(0),
            target,
        });
        let listener = Listener::start(shared.clone())?;
        let writer = Arc::new(PgWriter::new(shared.clone(), writer_conn));
        let committer = Committer::start(writer).map_err(|e| {
            CatalogError::Storage(format!("cannot start the catalog's committer: {e}"))
        })?;
        Ok(Some(Self {
            committer,
            _listener: listener,
            shared,
        }))
    }

    /// The catalog's location, without its password.
    pub fn location(&self) -> &str {
        &self.shared.target.shown
    }
}

/// How a catalog is opened.
#[derive(Debug, Clone, Copy)]
enum Opening {
    /// Create or upgrade its tables as needed.
    Migrate,
    /// Only a catalog that is there, at this build's schema version.
    Existing,
}

/// Connect, migrate (or check the schema), and read what the store starts from: the
/// writer's connection, the notification channel and the catalog version; `None` for a
/// database without a catalog, opened as [`Opening::Existing`].
fn prepare(target: &PgTarget, opening: Opening) -> Result<Option<(PgConn, String, i64)>> {
    let mut client = target.connect()?;
    match opening {
        Opening::Migrate => crate::pg_schema::migrate(&mut client, target)?,
        Opening::Existing => {
            if !crate::pg_schema::check_existing(&mut client, target)? {
                return Ok(None);
            }
        }
    }
    let row = client
        .query_one(
            &format!(
                "SELECT current_schema()::text, ({})",
                crate::pg_keys::VERSION
            ),
            &[],
        )
        .map_err(|e| target.error(e))?;
    let schema: Option<String> = row.try_get(0).map_err(|e| target.error(e))?;
    let version: i64 = row.try_get(1).map_err(|e| target.error(e))?;
    Ok(Some((
        PgConn::new(client),
        channel_of(schema.as_deref().unwrap_or("public")),
        version,
    )))
}

/// The notification channel of the catalog in `schema`. Channel names are identifiers
/// of at most 63 bytes; two long schema names that share a prefix share a channel, which
/// costs a needless cache refresh, never a missed one.
fn channel_of(schema: &str) -> String {
    let mut channel = String::from("tributary_catalog:");
    for c in schema.chars() {
        if channel.len() + c.len_utf8() > 63 {
            break;
        }
        channel.push(c);
    }
    channel
}

/// The thread that listens to the catalog's channel and raises the version seen.
#[derive(Debug)]
struct Listener {
    stop: Arc<AtomicBool>,
}

impl Listener {
    fn start(shared: Arc<PgShared>) -> Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        std::thread::Builder::new()
            .name("catalog-listen".into())
            .spawn(move || listen_loop(&shared, &stopping))
            .map_err(|e| CatalogError::Storage(format!("cannot start a thread: {e}")))?;
        Ok(Self { stop })
    }
}

impl Drop for Listener {
    /// Tell the thread to stop, without waiting for it: it is blocked in a wait for
    /// notifications that nothing can interrupt, and looks up within [`LISTEN_TICK`]
    /// to end and close its connection. Joining cost every closed store (each `check`
    /// and test) up to 200 ms.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// Until told to stop: listen, and after any failure connect again and count a change
/// (notifications sent while disconnected are lost).
fn listen_loop(shared: &PgShared, stop: &AtomicBool) {
    let quoted = format!("LISTEN \"{}\"", shared.channel.replace('"', "\"\""));
    while !stop.load(Ordering::SeqCst) {
        let Ok(mut client) = shared.target.connect() else {
            pause(stop, Duration::from_secs(1));
            continue;
        };
        if client.batch_execute(&quoted).is_err() {
            pause(stop, Duration::from_secs(1));
            continue;
        }
        shared.changed();
        while !stop.load(Ordering::SeqCst) && !client.is_closed() {
            let mut notes = client.notifications();
            let mut waiting = notes.timeout_iter(LISTEN_TICK);
            let broke = loop {
                match waiting.next() {
                    Ok(Some(_)) => shared.changed(),
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            };
            if broke {
                break;
            }
        }
    }
}

/// Sleep up to `total`, waking early when told to stop.
fn pause(stop: &AtomicBool, total: Duration) {
    let step = Duration::from_millis(50);
    let mut slept = Duration::ZERO;
    while slept < total && !stop.load(Ordering::SeqCst) {
        std::thread::sleep(step);
        slept += step;
    }
}

impl CatalogStore for PostgresStore {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.shared.record(
            "SELECT id, record FROM tributary_profiles WHERE name_key = $1",
            "connection profile",
            &name_key(name),
        )
    }

    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.shared.record(
            "SELECT id, record FROM tributary_profiles WHERE id = $1",
            "connection profile",
            id.as_str(),
        )
    }

    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        let mut all: Vec<ConnectionProfile> = self.shared.records(
            "SELECT id, record FROM tributary_profiles ORDER BY name_key",
            "connection profile",
            Vec::new(),
        )?;
        all.sort_by_key(|p| p.name.to_lowercase());
        Ok(all)
    }

    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.shared.record(
            "SELECT id, record FROM tributary_tables WHERE name_key = $1",
            "table",
            &name_key(name),
        )
    }

    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.shared.record(
            "SELECT id, record FROM tributary_tables WHERE id = $1",
            "table",
            id.as_str(),
        )
    }

    fn table_names(&self) -> Result<Vec<String>> {
        self.shared.read(|c| {
            c.query("SELECT name FROM tributary_tables ORDER BY name_key", &[])?
                .iter()
                .map(|r| r.try_get(0))
                .collect()
        })
    }

    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        let mut all: Vec<ConnectionTable> = self.shared.records(
            "SELECT id, record FROM tributary_tables ORDER BY name_key",
            "table",
            Vec::new(),
        )?;
        all.sort_by_key(|t| t.name.to_lowercase());
        Ok(all)
    }

    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        let param = profile.as_str().to_string();
        let ids: Vec<String> = self.shared.read(move |c| {
            c.query(
                "SELECT id FROM tributary_tables WHERE profile_id = $1 ORDER BY id",
                &[&param],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, postgres::Error>>()
        })?;
        ids.iter()
            .map(|id| {
                TableId::parse(id).ok_or_else(|| CatalogError::Corrupt {
                    path: self.shared.target.path(),
                    detail: format!("a table has the bad id '{id}'"),
                })
            })
            .collect()
    }

    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>> {
        let key = Dependency {
            namespace: kind.namespace(),
            name: name.to_string(),
        }
        .key();
        self.shared.record(
            "SELECT key, record FROM tributary_definitions WHERE key = $1",
            "definition",
            &key,
        )
    }

    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        self.shared.records(
            "SELECT key, record FROM tributary_definitions
             WHERE starts_with(key, $1) ORDER BY key",
            "definition",
            vec![kind.namespace().prefix().to_string()],
        )
    }

    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        let mut out: Vec<Definition> = self.shared.records(
            "SELECT d.key, d.record FROM tributary_readers r
             JOIN tributary_definitions d ON d.key = r.reader
             WHERE r.dependency = $1",
            "definition",
            vec![dependency.key()],
        )?;
        out.sort_by_key(|d| d.name.to_lowercase());
        Ok(out)
    }

    fn tables_page(
        &self,
        after: Option<&TableId>,
        limit: usize,
    ) -> Result<(Vec<ConnectionTable>, bool)> {
        let after = after.map(|id| id.as_str().to_string());
        let wanted = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
        let shown = after.clone();
        let rows: Option<Vec<(String, String)>> = self.shared.read(move |c| {
            let rows = match &after {
                None => c.query(
                    "SELECT id, record FROM tributary_tables
                     ORDER BY created_at DESC, id DESC LIMIT $1",
                    &[&wanted],
                )?,
                Some(id) => {
                    let Some(at) = c.query_opt(
                        "SELECT created_at FROM tributary_tables WHERE id = $1",
                        &[id],
                    )?
                    else {
                        return Ok(None);
                    };
                    let created: i64 = at.try_get(0)?;
                    c.query(
                        "SELECT id, record FROM tributary_tables
                         WHERE (created_at, id) < ($1, $2)
                         ORDER BY created_at DESC, id DESC LIMIT $3",
                        &[&created, id, &wanted],
                    )?
                }
            };
            Ok(Some(
                rows.iter()
                    .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
                    .collect::<Result<_, postgres::Error>>()?,
            ))
        })?;
        let Some(rows) = rows else {
            return Err(CatalogError::NotFound {
                kind: ObjectKind::Table,
                name: shown.unwrap_or_default(),
            });
        };
        let more = rows.len() > limit;
        let page = rows
            .iter()
            .take(limit)
            .map(|(id, text)| decode_text(&self.shared.target, "table", id, text))
            .collect::<Result<_>>()?;
        Ok((page, more))
    }

    fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    fn location(&self) -> String {
        self.shared.target.shown.clone()
    }

    fn refresh(&self) -> Result<()> {
        let version = self.shared.current_version()?;
        self.shared.saw_version(version);
        Ok(())
    }

    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        self.committer.submit(changes).wait()
    }

    fn submit(&self, changes: Vec<Change>) -> PendingWrite {
        self.committer.submit(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_fit_an_identifier() {
        assert_eq!(channel_of("public"), "tributary_catalog:public");
        let long = "é".repeat(60);
        let channel = channel_of(&long);
        assert!(channel.len() <= 63, "{}", channel.len());
        assert!(channel.starts_with("tributary_catalog:é"));
    }
}
