//! Crash test, on both stores: a `tributary run` process streams DDL, printing each
//! acknowledgement, and is killed with SIGKILL at random moments, 50 times per store.
//! After every kill the catalog opens cleanly, holds exactly the state after the
//! acknowledged statements, or after a few more (the kill fell between a commit and its
//! acknowledgement: one statement on PostgreSQL, one staged batch on sled), and no table
//! outlives its profile.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::collections::BTreeSet;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tributary_catalog::testing::PgSchema;
use tributary_catalog::{CatalogStore, LockWait, PostgresStore, SledStore};

const KILLS: usize = 50;
/// Tables each run's script creates: more than a run ever gets through before its kill
/// (at most 400 ms after start-up; a warm sled catalog took 400 tables in less).
const TABLES_PER_RUN: usize = 4000;

/// One statement and what it does to the catalog's names.
enum Effect {
    CreateProfile(String),
    DropProfileCascade(String),
    CreateTable { name: String, profile: String },
    DropTable(String),
}

/// The names a catalog holds: profiles, and tables with their profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Names {
    profiles: BTreeSet<String>,
    tables: BTreeSet<(String, String)>,
}

impl Names {
    fn of(store: &dyn CatalogStore) -> Self {
        let profiles = store.profiles().unwrap();
        let by_id: std::collections::HashMap<_, _> = profiles
            .iter()
            .map(|p| (p.id.clone(), p.name.clone()))
            .collect();
        let tables = store
            .tables()
            .unwrap()
            .into_iter()
            .map(|t| {
                let profile = t.profile.as_ref().map(|id| {
                    by_id
                        .get(id)
                        .unwrap_or_else(|| panic!("table {} dangles: profile {id} is gone", t.name))
                        .clone()
                });
                (t.name, profile.unwrap_or_default())
            })
            .collect();
        Self {
            profiles: profiles.into_iter().map(|p| p.name).collect(),
            tables,
        }
    }

    fn apply(&mut self, effect: &Effect) {
        match effect {
            Effect::CreateProfile(p) => {
                self.profiles.insert(p.clone());
            }
            Effect::DropProfileCascade(p) => {
                if self.profiles.remove(p) {
                    self.tables.retain(|(_, owner)| owner != p);
                }
            }
            Effect::CreateTable { name, profile } => {
                self.tables.insert((name.clone(), profile.clone()));
            }
            Effect::DropTable(name) => self.tables.retain(|(t, _)| t != name),
        }
    }
}

/// Run `run`'s script: a profile, its tables (every tenth statement drops an earlier
/// one), and first the profile of two runs ago, dropped with its tables.
fn script(run: usize) -> (String, Vec<Effect>) {
    let mut effects = Vec::new();
    let mut sql = String::new();
    let profile = format!("p{run}");
    if run >= 2 {
        let old = format!("p{}", run - 2);
        sql.push_str(&format!(
            "DROP CONNECTION PROFILE IF EXISTS {old} CASCADE;\n"
        ));
        effects.push(Effect::DropProfileCascade(old));
    }
    sql.push_str(&format!(
        "CREATE CONNECTION PROFILE {profile} WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);\n"
    ));
    effects.push(Effect::CreateProfile(profile.clone()));
    for i in 0..TABLES_PER_RUN {
        if i % 10 == 9 {
            let name = format!("r{run}_t{}", i - 5);
            sql.push_str(&format!("DROP TABLE {name};\n"));
            effects.push(Effect::DropTable(name));
        } else {
            let name = format!("r{run}_t{i}");
            sql.push_str(&format!(
                "CREATE TABLE {name} (id BIGINT, v TEXT) WITH (connector = 'kafka', connection_profile = '{profile}', topic = 't', type = 'source', format = 'json');\n"
            ));
            effects.push(Effect::CreateTable {
                name,
                profile: profile.clone(),
            });
        }
    }
    (sql, effects)
}

/// A small deterministic generator: the seed is printed, so a failure can be replayed.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Start `run` on `catalog`, kill it at a random moment; the acknowledgements it printed
/// and its process id.
fn run_and_kill(
    catalog: &str,
    script_path: &std::path::Path,
    random: &mut Random,
    mid_stream: bool,
) -> (usize, u32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["--catalog", catalog, "--lock-timeout", "30s", "run"])
        .arg(script_path)
        .env_remove("TRIBUTARY_CATALOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let acks = Arc::new(AtomicUsize::new(0));
    let mut stdout = child.stdout.take().unwrap();
    let counting = acks.clone();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            counting.store(
                all.iter().filter(|b| **b == b'\n').count(),
                Ordering::SeqCst,
            );
        }
        all
    });
    // Half the kills wait for some acknowledgements first (mid-stream), the others fall
    // anywhere from start-up on.
    let wanted = if mid_stream {
        1 + random.below(60) as usize
    } else {
        0
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while acks.load(Ordering::SeqCst) < wanted {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("the writer stopped by itself ({status}): {err}");
        }
        assert!(
            Instant::now() < deadline,
            "no acknowledgements within a minute"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_micros(random.below(if wanted == 0 {
        400_000
    } else {
        20_000
    })));
    let _ = child.kill(); // SIGKILL
    let status = child.wait().unwrap();
    // Killed, not exited: a writer that failed by itself would pass for a kill.
    if status.signal() != Some(rustix::process::Signal::KILL.as_raw()) {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("the writer was not killed by SIGKILL ({status}): {err}");
    }
    let out = reader.join().unwrap();
    let text = String::from_utf8_lossy(&out);
    // Only whole lines are acknowledgements.
    let lines: Vec<&str> = text
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .collect();
    (lines.len(), pid)
}

/// Kill a writer on `catalog` [`KILLS`] times; after each, and once `settle` has waited
/// for whatever the killed process left running, `open` must show exactly the
/// acknowledged state, or that and at most `unacknowledged` more statements.
fn crash_many_times(
    catalog: &str,
    unacknowledged: usize,
    settle: &dyn Fn(u32),
    open: &dyn Fn() -> Box<dyn CatalogStore>,
) {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    println!("crash test seed: {seed}");
    let mut random = Random(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut state = Names::default();
    let mut applied_beyond_acks = 0;
    let mut after_acks = 0;
    for run in 0..KILLS {
        let (sql, effects) = script(run);
        let path = dir.path().join(format!("run{run}.sql"));
        std::fs::write(&path, sql).unwrap();
        let (acked, pid) = run_and_kill(catalog, &path, &mut random, run % 2 == 0);
        if acked > 0 {
            after_acks += 1;
        }
        settle(pid);
        let mut expected = state.clone();
        for e in &effects[..acked] {
            expected.apply(e);
        }
        let store = open();
        let found = Names::of(store.as_ref());
        drop(store);
        // What survived is the script up to some statement at or past the last one
        // acknowledged: statements are stored in order, in atomic batches (several
        // at a time on sled), and acknowledged once their batch is durable.
        let mut prefix = expected.clone();
        let mut beyond = 0;
        while found != prefix && beyond < unacknowledged && acked + beyond < effects.len() {
            prefix.apply(&effects[acked + beyond]);
            beyond += 1;
        }
        if found == prefix && beyond > 0 {
            applied_beyond_acks += 1;
        } else {
            assert_eq!(
                found, expected,
                "run {run} (seed {seed}): {acked} statements were acknowledged"
            );
        }
        state = found;
    }
    println!(
        "{KILLS} kills, {after_acks} after some acknowledgements; {applied_beyond_acks} fell between a commit and its acknowledgement"
    );
    // Kills at start-up prove little about acknowledged work: at least half land after it.
    assert!(
        after_acks * 2 >= KILLS,
        "only {after_acks} of {KILLS} kills landed after an acknowledgement (seed {seed})"
    );
}

#[test]
fn sled_keeps_every_acknowledged_statement_through_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("catalog");
    let open_path = path.clone();
    // An embedded store's writes stop with its process. A script's statements are
    // stored in batches of up to 128, each acknowledged once its batch is durable.
    crash_many_times(path.to_str().unwrap(), 128, &|_| {}, &move || {
        let wait = LockWait {
            timeout: Duration::from_secs(30),
            on_wait: &|_| {},
        };
        Box::new(SledStore::open_waiting(&open_path, wait).unwrap())
    });
}

#[test]
fn postgres_keeps_every_acknowledged_statement_through_sigkill() {
    let schema = PgSchema::new();
    let url = schema.url.clone();
    // The server finishes what a killed client had sent, a COMMIT among them (in CI
    // one such COMMIT landed after the check had read the catalog): wait for the
    // killed writer's sessions to end before reading.
    let settle = |pid| schema.wait_for_sessions_of(pid, Duration::from_secs(30));
    crash_many_times(&schema.url, 1, &settle, &move || {
        Box::new(PostgresStore::open(&url).unwrap())
    });
}
