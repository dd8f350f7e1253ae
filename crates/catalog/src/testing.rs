//! Test support (feature `test-support`): a throwaway PostgreSQL schema per test, so
//! that the catalog's tests, and those of the crates above it, run against the
//! machine's PostgreSQL without touching each other.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // Test helpers fail loudly.

use crate::new_table_id;

/// The test database: `TRIBUTARY_TEST_POSTGRES` (`.ci/run` sets it to a throwaway
/// database), else `tributary_test` on the machine's server, created when missing.
pub fn test_database() -> String {
    if let Ok(url) = std::env::var("TRIBUTARY_TEST_POSTGRES") {
        return url;
    }
    std::thread::spawn(default_test_database)
        .join()
        .unwrap_or_else(|_| panic!("cannot prepare the test database"))
}

fn default_test_database() -> String {
    let server = "postgres://postgres@127.0.0.1:5432";
    let mut admin = postgres::Client::connect(&format!("{server}/postgres"), postgres::NoTls)
        .unwrap_or_else(|e| {
            panic!(
                "the catalog tests need PostgreSQL at {server} (or a database URL in \
                 TRIBUTARY_TEST_POSTGRES); `.ci/run` starts one: {e}"
            )
        });
    let exists = admin
        .query_opt(
            "SELECT 1 FROM pg_database WHERE datname = 'tributary_test'",
            &[],
        )
        .unwrap()
        .is_some();
    if !exists {
        // Two test binaries may race to create it: either one's creation will do.
        let _ = admin.batch_execute("CREATE DATABASE tributary_test");
    }
    format!("{server}/tributary_test")
}

/// A fresh schema in the test database, dropped with everything in it at the end.
#[derive(Debug)]
pub struct PgSchema {
    /// The catalog URL, placing the catalog in this schema.
    pub url: String,
    database: String,
    name: String,
}

impl PgSchema {
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let database = test_database();
        let name = format!(
            "t_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
            new_table_id().as_str()[3..].to_lowercase()
        );
        off_runtime(&database, &format!("CREATE SCHEMA {name}"))
            .unwrap_or_else(|e| panic!("cannot make a schema in the test database: {e}"));
        let sep = if database.contains('?') { '&' } else { '?' };
        let url = format!("{database}{sep}options=-csearch_path%3D{name}");
        Self {
            url,
            database,
            name,
        }
    }

    /// Wait until the server has no session left of process `pid` (gone, for example
    /// killed): a statement a killed client had sent, a COMMIT among them, still runs
    /// to its end on the server, so only then is the catalog's state final.
    pub fn wait_for_sessions_of(&self, pid: u32, timeout: std::time::Duration) {
        let name = crate::postgres_application_name(pid);
        let url = self.url.clone();
        let deadline = std::time::Instant::now() + timeout;
        std::thread::spawn(move || {
            let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
            loop {
                let row = c
                    .query_one(
                        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
                        &[&name],
                    )
                    .unwrap();
                if row.get::<_, i64>(0) == 0 {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the sessions of process {pid} outlived it by {timeout:?}"
                );
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
        .join()
        .unwrap_or_else(|_| panic!("waiting for the sessions of process {pid} failed"));
    }

    /// A statement run in this schema, outside any store.
    pub fn execute(&self, sql: &str) {
        off_runtime(&self.url, sql).unwrap();
    }
}

impl Default for PgSchema {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let _ = off_runtime(
            &self.database,
            &format!("DROP SCHEMA {} CASCADE", self.name),
        );
    }
}

/// Run `sql` on the database at `url` from a thread of its own: the synchronous client
/// may not be used (or dropped) on a thread that runs an async runtime, as async tests do.
fn off_runtime(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).map_err(|e| e.to_string())?;
        c.batch_execute(&sql).map_err(|e| e.to_string())
    })
    .join()
    .map_err(|_| "the database thread panicked".to_string())?
}
