//! [`StagingStore`]: a script's consecutive catalog statements written to the store below
//! as one batch. Each staged statement is checked and made visible in an in-memory layer
//! at once, so the next statement sees it; the layer goes down as one atomic batch when
//! enough has gathered, when the oldest has waited long enough, or when the script needs
//! everything stored (before a statement that is not catalog-only, at its end). Each
//! statement's durable outcome is that batch's.
//!
//! Why: on sled every atomic batch costs two synchronous log writes of its own, whatever
//! is flushed after it, so a script of one batch per statement runs at half the disk's
//! speed however its flushes are grouped (BENCHMARKS.md, issue 39). Only the process that
//! holds the catalog may stage: nothing else writes beneath the layer.

use crate::error::{CatalogError, Result};
use crate::group_commit::{PendingWrite, StagedWrite, WriteOutcome};
use crate::overlay::OverlayStore;
use crate::store::{CatalogStore, Change};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tributary_types::{
    ConnectionProfile, ConnectionTable, Definition, DefinitionKind, Dependency, ProfileId, TableId,
};

/// When the staged layer goes down on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StagingLimits {
    /// The most statements staged before the layer goes down.
    pub statements: usize,
    /// The longest the oldest staged statement waits before the layer goes down
    /// (checked as statements are staged and after each one).
    pub wait: Duration,
}

impl Default for StagingLimits {
    /// 128 statements or 2 ms: past either, a batch's log writes cost less than the
    /// statements' checks, so larger batches gain nothing (BENCHMARKS.md, issue 39).
    fn default() -> Self {
        Self {
            statements: 128,
            wait: Duration::from_millis(2),
        }
    }
}

/// A store below which a script's catalog statements are written in batches.
#[derive(Debug)]
pub struct StagingStore {
    base: Arc<dyn CatalogStore>,
    staged: Mutex<Staged>,
    limits: StagingLimits,
    /// Batches applied to the layer, so [`CatalogStore::generation`] moves with them.
    applied: AtomicU64,
    forwarder: Forwarder,
}

#[derive(Debug)]
struct Staged {
    layer: Arc<OverlayStore>,
    /// One per staged statement: where its durable outcome goes.
    waiting: Vec<WriteOutcome>,
    since: Option<Instant>,
}

impl StagingStore {
    /// Stage statements over `base`, which no other process may write meanwhile (a sled
    /// catalog this process holds).
    pub fn over(base: Arc<dyn CatalogStore>) -> std::io::Result<Self> {
        Self::with_limits(base, StagingLimits::default())
    }

    /// As [`StagingStore::over`], going down at `limits` instead of the defaults.
    pub fn with_limits(
        base: Arc<dyn CatalogStore>,
        limits: StagingLimits,
    ) -> std::io::Result<Self> {
        Ok(Self {
            limits,
            staged: Mutex::new(Staged {
                layer: Arc::new(OverlayStore::over(base.clone())),
                waiting: Vec::new(),
                since: None,
            }),
            base,
            applied: AtomicU64::new(0),
            forwarder: Forwarder::start()?,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Staged> {
        // A panic while staging leaves at worst a layer that was not written: usable.
        self.staged
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The current layer, for a read (not holding the lock while the base is read).
    fn layer(&self) -> Arc<OverlayStore> {
        self.lock().layer.clone()
    }

    /// Write the layer to the base as one batch, now: visible there before this
    /// returns; each staged statement learns its durability through the forwarder.
    fn write_down(&self, staged: &mut Staged) {
        if staged.waiting.is_empty() {
            return;
        }
        let waiting = std::mem::take(&mut staged.waiting);
        staged.since = None;
        let fresh = Arc::new(OverlayStore::over(self.base.clone()));
        let layer = std::mem::replace(&mut staged.layer, fresh);
        let visible = layer
            .net_changes()
            .map(|changes| self.base.submit_staged(changes))
            .and_then(|write| futures::executor::block_on(write.visible()));
        match visible {
            Ok(durable) => self.forwarder.forward(durable, waiting),
            // Refused as a whole: none of the statements is stored, and each fails.
            Err(e) => WriteOutcome::send_all(waiting, Err(e)),
        }
    }
}

impl Drop for StagingStore {
    fn drop(&mut self) {
        let mut staged = self.lock();
        let staged = &mut *staged;
        self.write_down(staged);
    }
}

impl CatalogStore for StagingStore {
    fn profile_by_name(&self, name: &str) -> Result<Option<ConnectionProfile>> {
        self.layer().profile_by_name(name)
    }
    fn profile(&self, id: &ProfileId) -> Result<Option<ConnectionProfile>> {
        self.layer().profile(id)
    }
    fn profiles(&self) -> Result<Vec<ConnectionProfile>> {
        self.layer().profiles()
    }
    fn table_by_name(&self, name: &str) -> Result<Option<ConnectionTable>> {
        self.layer().table_by_name(name)
    }
    fn table(&self, id: &TableId) -> Result<Option<ConnectionTable>> {
        self.layer().table(id)
    }
    fn table_names(&self) -> Result<Vec<String>> {
        self.layer().table_names()
    }
    fn tables(&self) -> Result<Vec<ConnectionTable>> {
        self.layer().tables()
    }
    fn dependents(&self, profile: &ProfileId) -> Result<Vec<TableId>> {
        self.layer().dependents(profile)
    }
    fn definition(&self, kind: DefinitionKind, name: &str) -> Result<Option<Definition>> {
        self.layer().definition(kind, name)
    }
    fn definitions(&self, kind: DefinitionKind) -> Result<Vec<Definition>> {
        self.layer().definitions(kind)
    }
    fn readers(&self, dependency: &Dependency) -> Result<Vec<Definition>> {
        self.layer().readers(dependency)
    }
    fn tables_page(
        &self,
        after: Option<&TableId>,
        limit: usize,
    ) -> Result<(Vec<ConnectionTable>, bool)> {
        let layer = self.layer();
        match layer.is_empty() {
            // The base pages without reading every table.
            true => self.base.tables_page(after, limit),
            false => layer.tables_page(after, limit),
        }
    }
    fn flush(&self) -> Result<()> {
        self.write_staged(true);
        self.base.flush()
    }
    fn generation(&self) -> u64 {
        self.base
            .generation()
            .wrapping_add(self.applied.load(Ordering::SeqCst))
    }
    fn refresh(&self) -> Result<()> {
        self.base.refresh()
    }
    fn location(&self) -> String {
        self.base.location()
    }
    fn apply(&self, changes: Vec<Change>) -> Result<()> {
        self.write_staged(true);
        self.base.apply(changes)
    }
    fn submit(&self, changes: Vec<Change>) -> PendingWrite {
        self.write_staged(true);
        self.base.submit(changes)
    }
    fn submit_staged(&self, changes: Vec<Change>) -> StagedWrite {
        let mut staged = self.lock();
        if let Err(e) = staged.layer.apply(changes) {
            return StagedWrite::durable_when_visible(PendingWrite::done(Err(e)));
        }
        self.applied.fetch_add(1, Ordering::SeqCst);
        let (outcome, durable) = PendingWrite::later();
        staged.waiting.push(outcome);
        let since = *staged.since.get_or_insert_with(Instant::now);
        if staged.waiting.len() >= self.limits.statements || since.elapsed() >= self.limits.wait {
            self.write_down(&mut staged);
        }
        StagedWrite::new(PendingWrite::done(Ok(())), durable)
    }
    fn discard_staged(&self) {
        let mut staged = self.lock();
        let waiting = std::mem::take(&mut staged.waiting);
        staged.since = None;
        staged.layer = Arc::new(OverlayStore::over(self.base.clone()));
        self.applied.fetch_add(1, Ordering::SeqCst);
        WriteOutcome::send_all(
            waiting,
            Err(CatalogError::Storage(
                "not stored: the script stopped at an earlier failure".into(),
            )),
        );
    }
    fn write_staged(&self, all: bool) {
        let mut staged = self.lock();
        let due = staged
            .since
            .is_some_and(|t| t.elapsed() >= self.limits.wait);
        if all || due {
            self.write_down(&mut staged);
        }
    }
}

/// The thread that waits for each written batch's durability and tells its statements.
#[derive(Debug)]
struct Forwarder {
    batches: Option<mpsc::Sender<(PendingWrite, Vec<WriteOutcome>)>>,
    thread: Option<JoinHandle<()>>,
}

impl Forwarder {
    fn start() -> std::io::Result<Self> {
        let (batches, queue) = mpsc::channel::<(PendingWrite, Vec<WriteOutcome>)>();
        let thread = std::thread::Builder::new()
            .name("catalog-staging".into())
            .spawn(move || {
                for (durable, waiting) in queue {
                    WriteOutcome::send_all(waiting, durable.wait());
                }
            })?;
        Ok(Self {
            batches: Some(batches),
            thread: Some(thread),
        })
    }

    fn forward(&self, durable: PendingWrite, waiting: Vec<WriteOutcome>) {
        let unsent = match &self.batches {
            Some(batches) => batches.send((durable, waiting)).err().map(|e| e.0),
            None => Some((durable, waiting)),
        };
        // The thread gone (it cannot panic, but were it): wait here.
        if let Some((durable, waiting)) = unsent {
            WriteOutcome::send_all(waiting, durable.wait());
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.batches.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
