//! A script's catalog statements run without waiting for each other's flushes, yet each
//! outcome is handed out only once its writes are durable, in statement order; a flush
//! that fails fails its statement and stops the script.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tributary_catalog::{
    CatalogError, CatalogStore, Change, OverlayStore, PendingWrite, Result, SledStore, StagedWrite,
    StagingStore, WriteOutcome,
};
use tributary_sql::{Mode, Outcome, Session};
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, ProfileId, TableId,
};

/// An in-memory store whose staged writes are visible at once and durable only when the
/// test says so.
#[derive(Debug)]
struct HeldFlushes {
    inner: OverlayStore,
    durable: Mutex<Vec<Option<WriteOutcome>>>,
    staged: AtomicUsize,
    /// Make each staged write durable as it is submitted (no flush to release).
    durable_at_once: AtomicBool,
    /// How many times the session discarded what it had not reported.
    discards: AtomicUsize,
}

impl HeldFlushes {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: OverlayStore::in_memory(),
            durable: Mutex::new(Vec::new()),
            staged: AtomicUsize::new(0),
            durable_at_once: AtomicBool::new(false),
            discards: AtomicUsize::new(0),
        })
    }

    /// Make staged write `i` (in submission order) durable, or fail its flush.
    fn flush(&self, i: usize, outcome: Result<()>) {
        let w = self.durable.lock().expect("not poisoned")[i]
            .take()
            .expect("not resolved yet");
        w.send(outcome);
    }
}

impl CatalogStore for HeldFlushes {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.inner.profile_by_name(name)
    }
    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.inner.profile(id)
    }
    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        self.inner.profiles()
    }
    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.inner.table_by_name(name)
    }
    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.inner.table(id)
    }
    fn table_names(&self) -> Result<Vec<String>> {
        self.inner.table_names()
    }
    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        self.inner.tables()
    }
    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.inner.dependents(profile)
    }
    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>> {
        self.inner.definition(kind, name)
    }
    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        self.inner.definitions(kind)
    }
    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        self.inner.readers(dependency)
    }
    fn generation(&self) -> u64 {
        self.inner.generation()
    }
    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        self.inner.apply(changes)
    }
    fn submit_staged(&self, changes: Vec<Change>) -> StagedWrite {
        if let Err(e) = self.inner.apply(changes) {
            return StagedWrite::durable_when_visible(PendingWrite::done(Err(e)));
        }
        self.staged.fetch_add(1, Ordering::SeqCst);
        if self.durable_at_once.load(Ordering::SeqCst) {
            self.durable.lock().expect("not poisoned").push(None);
            return StagedWrite::durable_when_visible(PendingWrite::done(Ok(())));
        }
        let (outcome, durable) = PendingWrite::later();
        self.durable
            .lock()
            .expect("not poisoned")
            .push(Some(outcome));
        StagedWrite::new(PendingWrite::done(Ok(())), durable)
    }
    fn discard_staged(&self) {
        self.discards.fetch_add(1, Ordering::SeqCst);
    }
}

fn table(name: &str) -> String {
    format!("CREATE TABLE {name} (id BIGINT) WITH (connector = 'stdout', format = 'json');\n")
}

/// Run `script` on a task of its own; its outcomes arrive on the returned channel.
fn run(
    store: Arc<HeldFlushes>,
    script: String,
) -> (
    mpsc::UnboundedReceiver<Outcome>,
    tokio::task::JoinHandle<tributary_sql::ScriptSummary>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let session = Session::new(store).offline();
        session
            .run_script_with(&script, Mode::Run, |o| {
                let _ = tx.send(o);
                std::ops::ControlFlow::Continue(())
            })
            .await
    });
    (rx, task)
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..500 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Nothing more has been handed out (given a moment to arrive).
async fn nothing_more(rx: &mut mpsc::UnboundedReceiver<Outcome>) {
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        rx.try_recv().is_err(),
        "an outcome came out before its flush"
    );
}

#[tokio::test]
async fn each_outcome_waits_for_its_flush_while_the_next_statements_run() {
    let store = HeldFlushes::new();
    let script = [table("a"), table("b"), table("c")].concat();
    let (mut rx, task) = run(store.clone(), script);
    // All three ran (each saw the one before: the names are checked as they go), and
    // none is durable, so nothing is out.
    until("three staged writes", || {
        store.staged.load(Ordering::SeqCst) == 3
    })
    .await;
    assert_eq!(store.table_names().unwrap(), vec!["a", "b", "c"]);
    nothing_more(&mut rx).await;
    // b's flush alone hands out nothing: a comes first.
    store.flush(1, Ok(()));
    nothing_more(&mut rx).await;
    store.flush(0, Ok(()));
    for name in ["a", "b"] {
        let o = rx.recv().await.expect("an outcome").expect("created");
        assert!(
            o.span.start.line == 1 + u64::from(name == "b"),
            "{name} out of order: {o:?}"
        );
    }
    nothing_more(&mut rx).await;
    // A failed flush fails the statement it covered.
    store.flush(
        2,
        Err(CatalogError::Storage(
            "fdatasync: input/output error".into(),
        )),
    );
    let e = rx.recv().await.expect("c's outcome").unwrap_err();
    assert!(
        e.diagnostics[0].message.contains("input/output error"),
        "{e}"
    );
    assert_eq!(e.span.start.line, 3);
    let summary = task.await.unwrap();
    assert_eq!((summary.statements, summary.failed), (3, 1));
}

#[tokio::test]
async fn a_failed_flush_stops_the_script_before_anything_that_is_not_catalog_only_runs() {
    let store = HeldFlushes::new();
    // The INSERT writes to a sink: it runs only once everything before it is out.
    let script = [
        table("a"),
        table("b"),
        "INSERT INTO a VALUES (1);\n".to_string(),
        table("c"),
    ]
    .concat();
    let (mut rx, task) = run(store.clone(), script);
    until("two staged writes", || {
        store.staged.load(Ordering::SeqCst) == 2
    })
    .await;
    nothing_more(&mut rx).await;
    store.flush(0, Err(CatalogError::Storage("disk gone".into())));
    let e = rx.recv().await.expect("a's outcome").unwrap_err();
    assert!(e.diagnostics[0].message.contains("disk gone"), "{e}");
    let summary = task.await.unwrap();
    assert_eq!((summary.statements, summary.failed), (1, 1));
    assert!(rx.recv().await.is_none(), "nothing after the failure");
    // b had run (its change is visible); the INSERT and c never ran. What the store
    // still holds back of b is discarded: the script did not report it.
    assert_eq!(store.staged.load(Ordering::SeqCst), 2);
    assert_eq!(store.table_names().unwrap(), vec!["a", "b"]);
    assert_eq!(store.discards.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_script_whose_reader_has_gone_stops_and_discards_what_it_did_not_report() {
    let store = HeldFlushes::new();
    store.durable_at_once.store(true, Ordering::SeqCst);
    let script = [table("a"), table("b"), table("c")].concat();
    let session = Session::new(store.clone()).offline();
    let mut handed = 0;
    let summary = session
        .run_script_with(&script, Mode::Run, |_| {
            handed += 1;
            std::ops::ControlFlow::Break(())
        })
        .await;
    // a was out as soon as it ran, and its reader went: b and c never ran, and what
    // the store held back was discarded.
    assert_eq!((handed, summary.statements), (1, 1));
    assert_eq!(store.table_names().unwrap(), vec!["a"]);
    assert_eq!(store.discards.load(Ordering::SeqCst), 1);
    // A script that runs to its end discards nothing.
    let summary = session.run_script(&table("d"), Mode::Run).await;
    assert_eq!(summary.len(), 1);
    assert_eq!(store.discards.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_statement_that_is_not_catalog_only_waits_for_every_flush_before_it() {
    let store = HeldFlushes::new();
    let script = [table("a"), "SHOW TABLES;\n".to_string(), table("b")].concat();
    let (mut rx, task) = run(store.clone(), script);
    until("a staged", || store.staged.load(Ordering::SeqCst) == 1).await;
    nothing_more(&mut rx).await;
    // SHOW TABLES waits for a's flush: b has not run.
    assert_eq!(store.staged.load(Ordering::SeqCst), 1);
    store.flush(0, Ok(()));
    rx.recv().await.unwrap().expect("a");
    rx.recv().await.unwrap().expect("SHOW TABLES");
    until("b staged", || store.staged.load(Ordering::SeqCst) == 2).await;
    store.flush(1, Ok(()));
    rx.recv().await.unwrap().expect("b");
    let summary = task.await.unwrap();
    assert_eq!((summary.statements, summary.failed), (3, 0));
}

#[tokio::test]
async fn a_script_on_sled_is_durable_once_its_outcomes_are_out() {
    let dir = tempfile::tempdir().unwrap();
    let script: String = (0..200).map(|i| table(&format!("t{i}"))).collect();
    {
        let session = Session::new(Arc::new(SledStore::open(dir.path()).unwrap())).offline();
        let outcomes = session.run_script(&script, Mode::Run).await;
        assert_eq!(outcomes.len(), 200);
        assert!(outcomes.iter().all(Result::is_ok));
        // A duplicate is refused against the writes before it, flushed or not.
        let again = session
            .run_script(&[table("t0"), table("u")].concat(), Mode::Run)
            .await;
        assert_eq!(again.len(), 1, "the script stops at the duplicate");
        assert!(again[0].is_err());
    }
    let reopened = SledStore::open(dir.path()).unwrap();
    assert_eq!(reopened.table_names().unwrap().len(), 200);
}

#[tokio::test]
async fn a_staged_script_stores_what_ran_before_its_failure_and_nothing_after() {
    let dir = tempfile::tempdir().unwrap();
    let script = [
        table("a"),
        table("b"),
        table("a"),
        table("c"),
        "SELECT 1;\n".to_string(),
    ]
    .concat();
    {
        let sled: Arc<dyn CatalogStore> = Arc::new(SledStore::open(dir.path()).unwrap());
        let staging = Arc::new(StagingStore::over(sled).unwrap());
        let session = Session::new(staging).offline();
        let outcomes = session.run_script(&script, Mode::Run).await;
        assert_eq!(outcomes.len(), 3, "{outcomes:?}");
        assert!(outcomes[0].is_ok() && outcomes[1].is_ok());
        let e = outcomes[2].as_ref().unwrap_err();
        assert_eq!(e.span.start.line, 3);
        assert!(e.diagnostics[0].message.contains("already exists"), "{e}");
    }
    let reopened = SledStore::open(dir.path()).unwrap();
    assert_eq!(reopened.table_names().unwrap(), vec!["a", "b"]);
}
