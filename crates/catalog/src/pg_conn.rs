//! Connections to a PostgreSQL catalog: parsing its URL (shown without its password),
//! connecting, and a small pool of threads that own reading connections.
//!
//! Why threads: the synchronous `postgres` client runs its own Tokio runtime and must
//! not be called from inside another one, yet the catalog is read from async request
//! handlers. Each connection lives on a thread of its own; a read is handed over and its
//! answer waited for, as a sled read waits for the disk.

use crate::error::{CatalogError, Result};
use postgres::config::Host;
use postgres::{Client, Config, NoTls, Statement};
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `location` names a PostgreSQL catalog rather than a directory.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// A PostgreSQL URL as messages may show it: without its password (and anything else
/// after the database name).
pub fn postgres_url_shown(url: &str) -> String {
    PgTarget::parse(url).map_or_else(
        |_| "a postgres:// URL that cannot be read".into(),
        |t| t.shown,
    )
}

/// The `application_name` of the catalog sessions of process `pid`, unless the URL
/// names one.
pub fn postgres_application_name(pid: u32) -> String {
    format!("tributary/{pid}")
}

/// A PostgreSQL catalog's address.
#[derive(Clone)]
pub(crate) struct PgTarget {
    pub(crate) config: Config,
    /// The URL as errors show it: user, host, port and database, never the password.
    pub(crate) shown: String,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl PgTarget {
    pub(crate) fn parse(url: &str) -> Result<Self> {
        let mut config = Config::from_str(url).map_err(|e| CatalogError::BadLocation {
            // The URL may hold a password: never repeat it.
            detail: format!("not a PostgreSQL URL ({e})"),
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        // Sessions name their process, so an operator (and the crash test) can tell
        // which process a server backend serves; a name in the URL is kept.
        if config.get_application_name().is_none() {
            config.application_name(&postgres_application_name(std::process::id()));
        }
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("");
        let db = config.get_dbname().unwrap_or(user);
        let at = if user.is_empty() {
            String::new()
        } else {
            format!("{user}@")
        };
        let shown = format!("postgres://{at}{host}:{port}/{db}");
        Ok(Self { config, shown })
    }

    /// The location errors name.
    pub(crate) fn path(&self) -> PathBuf {
        PathBuf::from(&self.shown)
    }

    pub(crate) fn connect(&self) -> Result<Client> {
        let unreachable = |e: postgres::Error| CatalogError::Unreachable {
            location: self.shown.clone(),
            detail: pg_detail(&e),
        };
        let mut client = self.config.connect(NoTls).map_err(unreachable)?;
        // Every catalog query looks keys up by an index, or lists a table whole in an
        // index's order. Prepared statements keep the plan made when first run, and a
        // catalog that starts empty would keep sequential scans, growing slower with
        // every table until the next ANALYZE: index scans are what is wanted at any size.
        // And one plan per statement, made once: left to choose, the server re-planned
        // the group's read-ahead query (seven branches) at every call, 0.4 ms each.
        // A disabled scan still costs 10^10 in the planner's eyes when it is the only
        // way (the 64 version slots are summed by one), which crosses the JIT threshold:
        // the version check took 30 ms of compiling. No catalog query is big enough for
        // JIT to pay.
        client
            .batch_execute(
                "SET enable_seqscan = off; SET plan_cache_mode = force_generic_plan; SET jit = off",
            )
            .map_err(unreachable)?;
        Ok(client)
    }

    pub(crate) fn error(&self, e: postgres::Error) -> CatalogError {
        CatalogError::Storage(format!("catalog '{}': {}", self.shown, pg_detail(&e)))
    }
}

/// An error's text with the server's message, when there is one.
pub(crate) fn pg_detail(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

/// A connection and the statements prepared on it.
pub(crate) struct PgConn {
    pub(crate) client: Client,
    prepared: HashMap<String, Statement>,
}

/// The most statements a connection keeps prepared. Writes compose their statements
/// from the parts a group needs, so there are a few dozen shapes, not one per group;
/// should that ever not hold, the cache starts over rather than grow.
const MAX_PREPARED: usize = 256;

impl PgConn {
    pub(crate) fn new(client: Client) -> Self {
        Self {
            client,
            prepared: HashMap::new(),
        }
    }

    /// `sql`, prepared once per connection (a query sent as text is parsed each time,
    /// which costs a round trip of its own).
    pub(crate) fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        if self.prepared.len() >= MAX_PREPARED {
            self.prepared.clear();
        }
        self.prepared.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    pub(crate) fn query(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<postgres::Row>, postgres::Error> {
        let s = self.statement(sql)?;
        self.client.query(&s, params)
    }

    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Option<postgres::Row>, postgres::Error> {
        let s = self.statement(sql)?;
        self.client.query_opt(&s, params)
    }

    pub(crate) fn query_one(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<postgres::Row, postgres::Error> {
        let s = self.statement(sql)?;
        self.client.query_one(&s, params)
    }

    pub(crate) fn execute(
        &mut self,
        sql: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<u64, postgres::Error> {
        let s = self.statement(sql)?;
        self.client.execute(&s, params)
    }
}

/// A read handed to the pool: it gets a connection, or why there is none.
type Job = Box<dyn FnOnce(Result<&mut PgConn>) + Send>;

/// Threads that each own one reading connection, made when first needed and again
/// after it breaks.
pub(crate) struct ReadPool {
    jobs: Option<mpsc::Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ReadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadPool({} threads)", self.threads.len())
    }
}

impl ReadPool {
    pub(crate) fn start(target: &PgTarget, size: usize) -> Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let mut threads = Vec::with_capacity(size);
        for i in 0..size {
            let queue = queue.clone();
            let target = target.clone();
            let thread = std::thread::Builder::new()
                .name(format!("catalog-read-{i}"))
                .spawn(move || read_loop(&target, &queue))
                .map_err(|e| CatalogError::Storage(format!("cannot start a thread: {e}")))?;
            threads.push(thread);
        }
        Ok(Self {
            jobs: Some(jobs),
            threads,
        })
    }

    /// Run `read` on a pooled connection and wait for its answer.
    pub(crate) fn run<T, F>(&self, read: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut PgConn) -> Result<T> + Send + 'static,
    {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |conn| {
            let _ = reply.send(conn.and_then(read));
        });
        let gone = || CatalogError::Storage("the catalog's readers have stopped".into());
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())?;
        answer.recv().map_err(|_| gone())?
    }
}

impl Drop for ReadPool {
    fn drop(&mut self) {
        self.jobs.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn read_loop(target: &PgTarget, queue: &Mutex<mpsc::Receiver<Job>>) {
    let mut conn: Option<PgConn> = None;
    loop {
        let job = {
            let Ok(queue) = queue.lock() else { return };
            match queue.recv() {
                Ok(job) => job,
                Err(_) => return,
            }
        };
        if conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            conn = None;
        }
        if conn.is_none() {
            match target.connect() {
                Ok(c) => conn = Some(PgConn::new(c)),
                Err(e) => {
                    job(Err(e));
                    continue;
                }
            }
        }
        if let Some(c) = conn.as_mut() {
            job(Ok(c));
        }
    }
}
