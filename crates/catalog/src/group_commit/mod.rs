//! Group commit: concurrent writers' batches are written together, in one storage
//! transaction and one flush, by a committer thread that owns the writes. Each writer
//! returns (or its future resolves) only once its own batch is durable, or refused.
//!
//! Why: a durable write costs a check, a transaction and a flush. Sixteen batches in one
//! transaction and one flush cost far less than sixteen apart, so throughput grows with
//! concurrency. Batches that arrive while a group is flushed form the next group. A
//! thread of its own, rather than a leader chosen among the writers, lets writers on an
//! async runtime await their outcome without parking a thread each: an earlier
//! leader-based queue had every waiting request hold an OS thread (Tokio's
//! `block_in_place`) and woke them all at each group's end.
//!
//! Every batch is still checked on its own, against the committed state: batches are
//! only grouped when their footprints (the ids and names they write, the profiles they
//! depend on) do not overlap, so checking each alone gives the same answer as checking
//! them one after another. A batch that overlaps one already in the group waits for the
//! next.
//!
//! A storage may flush apart ([`GroupStorage::flushes_apart`], sled): a written group is
//! then visible at once and handed to a flusher thread, so the next groups are checked
//! and written while it is flushed, and one flush covers every group written meanwhile.
//! A writer that only needs to see its change before its next one
//! ([`Committer::submit_staged`], a script's statements) learns when it is visible and,
//! separately, when it is durable: one writer's consecutive batches share flushes too.

mod flusher;
mod footprint;

use crate::error::{CatalogError, Result};
use crate::store::Change;
use flusher::Flusher;
use footprint::take_group;
use futures::channel::oneshot;
use std::collections::VecDeque;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

/// The most batches written in one group, so one transaction stays small.
const MAX_GROUP: usize = 256;

/// How many times a group is checked and written when the state it was checked against
/// keeps changing under it (a storage shared by processes, written optimistically).
const MAX_ATTEMPTS: usize = 4;

/// What a group's write came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// Written (durable once flushed).
    Done,
    /// Nothing written: another process changed the state the group was checked against
    /// since it was held. The group is held, checked and written again.
    Conflict,
}

/// The storage a [`Committer`] writes to.
pub(crate) trait GroupStorage {
    /// A batch checked and ready to write.
    type Checked;
    /// Check one batch against the committed state (called while held).
    fn check(&self, changes: &[Change]) -> Result<Self::Checked>;
    /// Write checked batches (with disjoint footprints) atomically, not yet durably; or
    /// nothing, when the state they were checked against has changed.
    fn write(&self, group: Vec<Self::Checked>) -> Result<Written>;
    /// Make everything written so far durable.
    fn flush(&self) -> Result<()>;
    /// Whether written groups are flushed by a thread of their own while the next groups
    /// are checked and written. `hold` then nests: a group is released once flushed, so
    /// the storage is held from the first group's `hold` until the last one's flush.
    fn flushes_apart(&self) -> bool {
        false
    }
    /// Called before the group `batches` is checked and written (the sled store takes its
    /// commit lock, so a snapshot never sees half a group; PostgreSQL reads what the
    /// checks will ask about, with the catalog's version, in one query, and after a
    /// conflict first locks the version row, so the next attempt cannot conflict).
    fn hold(&self, batches: &[Vec<Change>]) -> Result<()>;
    /// Called once the group is flushed, or failed, or had nothing to write.
    fn release(&self);
    /// Called when a batch of the group was refused: whether to check the group again
    /// rather than let the refusal stand. PostgreSQL answers a group of creations from
    /// what it knows already, which a write proves still current but a refusal cannot;
    /// it then checks the group again on what it reads.
    fn recheck_refusals(&self) -> bool {
        false
    }
    /// Called when no batch is waiting: work the storage put off (PostgreSQL sends at
    /// most a few notifications a second); how soon it wants to be called again, if
    /// nothing arrives before. `stopping`: the store is closing, so do it all now.
    fn idle(&self, stopping: bool) -> Option<Duration> {
        let _ = stopping;
        None
    }
}

/// A batch handed to a store, until it is durable or refused: `.await` it on an async
/// runtime (no thread waits), or [`wait`](Self::wait) for it.
#[derive(Debug)]
#[must_use = "a write is only known durable once its outcome is collected"]
pub struct PendingWrite(Outcome);

#[derive(Debug)]
enum Outcome {
    Known(Option<Result<()>>),
    Awaited(oneshot::Receiver<Result<()>>),
}

impl PendingWrite {
    /// A write whose outcome is already known (stores that write in place).
    pub fn done(outcome: Result<()>) -> Self {
        Self(Outcome::Known(Some(outcome)))
    }

    /// A write whose outcome comes later, through the returned [`WriteOutcome`]: for a
    /// store written elsewhere than this crate that answers from a thread of its own.
    pub fn later() -> (WriteOutcome, Self) {
        let (tx, rx) = oneshot::channel();
        (WriteOutcome(tx), Self(Outcome::Awaited(rx)))
    }

    /// Block the calling thread until the write is durable or refused.
    pub fn wait(self) -> Result<()> {
        futures::executor::block_on(self)
    }

    /// The outcome if it is known now, without waiting; `None` while it is pending.
    pub fn outcome_now(&mut self) -> Option<Result<()>> {
        match &mut self.0 {
            Outcome::Known(outcome) => outcome.take(),
            Outcome::Awaited(rx) => match rx.try_recv() {
                Ok(Some(outcome)) => {
                    self.0 = Outcome::Known(None);
                    Some(outcome)
                }
                Ok(None) => None,
                Err(oneshot::Canceled) => {
                    self.0 = Outcome::Known(None);
                    Some(Err(stopped()))
                }
            },
        }
    }
}

/// Where the outcome of a [`PendingWrite::later`] goes; dropped unsent, the write fails.
#[derive(Debug)]
pub struct WriteOutcome(oneshot::Sender<Result<()>>);

impl WriteOutcome {
    /// Resolve the write.
    pub fn send(self, outcome: Result<()>) {
        // A writer that stopped waiting needs no answer.
        let _ = self.0.send(outcome);
    }

    /// Resolve every write in `waiting` with the same outcome (an error's text to all
    /// but the first).
    pub(crate) fn send_all(waiting: Vec<WriteOutcome>, outcome: Result<()>) {
        answer(waiting.into_iter().map(|w| w.0).collect(), outcome);
    }
}

/// A batch handed to a store by a writer that waits only until its change is visible
/// (a script's next statement must see it), and collects its durability later.
#[derive(Debug)]
#[must_use = "a write is only known durable once its outcome is collected"]
pub struct StagedWrite {
    visible: PendingWrite,
    /// `None`: durable once visible (the store flushes before it answers).
    durable: Option<PendingWrite>,
}

impl StagedWrite {
    /// A write that is durable as soon as it is visible.
    pub fn durable_when_visible(write: PendingWrite) -> Self {
        Self {
            visible: write,
            durable: None,
        }
    }

    /// A write visible as `visible` says, then durable as `durable` says.
    pub fn new(visible: PendingWrite, durable: PendingWrite) -> Self {
        Self {
            visible,
            durable: Some(durable),
        }
    }

    /// Wait until the change is visible to the store's readers (or refused); then the
    /// write that resolves once it is durable.
    pub async fn visible(self) -> Result<PendingWrite> {
        self.visible.await?;
        Ok(self.durable.unwrap_or_else(|| PendingWrite::done(Ok(()))))
    }
}

impl Future for PendingWrite {
    type Output = Result<()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        match &mut self.0 {
            Outcome::Known(outcome) => {
                Poll::Ready(outcome.take().unwrap_or_else(|| {
                    Err(CatalogError::Storage("a write was awaited twice".into()))
                }))
            }
            Outcome::Awaited(rx) => Pin::new(rx)
                .poll(cx)
                .map(|r| r.unwrap_or_else(|_| Err(stopped()))),
        }
    }
}

fn stopped() -> CatalogError {
    CatalogError::Storage("the catalog's committer stopped before the write was done".into())
}

fn panicked() -> CatalogError {
    CatalogError::Storage("internal error: a catalog write panicked; nothing was stored".into())
}

type Reply = oneshot::Sender<Result<()>>;

/// Where one writer's outcomes go: when its batch is visible (staged writers only), and
/// when it is durable.
struct Replies {
    visible: Option<Reply>,
    durable: Reply,
}

impl Replies {
    /// The batch was refused, or its write or flush failed.
    fn fail(self, e: CatalogError) {
        // A writer that stopped waiting (a cancelled request) needs no answer.
        match self.visible {
            Some(visible) => {
                let text = e.to_string();
                let _ = visible.send(Err(e));
                let _ = self.durable.send(Err(CatalogError::Storage(text)));
            }
            None => {
                let _ = self.durable.send(Err(e));
            }
        }
    }

    /// The batch is written; `durable` says whether it is flushed too.
    fn written(self, durable: bool) -> Option<Reply> {
        if let Some(visible) = self.visible {
            let _ = visible.send(Ok(()));
        }
        if durable {
            let _ = self.durable.send(Ok(()));
            None
        } else {
            Some(self.durable)
        }
    }
}

/// One writer's batch and where its outcomes go.
type Job = (Replies, Vec<Change>);

/// The committer thread of one store (and its flusher, for a storage that flushes
/// apart); stopping it (on drop) lets it finish the batches already handed to it.
#[derive(Debug)]
pub(crate) struct Committer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Committer {
    /// Start the thread that commits to `storage`.
    pub(crate) fn start<S>(storage: Arc<S>) -> std::io::Result<Self>
    where
        S: GroupStorage + Send + Sync + 'static,
    {
        let flusher = match storage.flushes_apart() {
            true => Some(Flusher::start(storage.clone())?),
            false => None,
        };
        let (jobs, queue) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("catalog-commit".into())
            // The flusher moves into the loop: it stops (finishing its flushes) after
            // the loop's last group.
            .spawn(move || commit_loop(storage.as_ref(), &queue, flusher))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Hand `changes` to the committer; the returned write resolves once they are durable
    /// or refused.
    pub(crate) fn submit(&self, changes: Vec<Change>) -> PendingWrite {
        let (durable, outcome) = oneshot::channel();
        let replies = Replies {
            visible: None,
            durable,
        };
        match self.send((replies, changes)) {
            true => PendingWrite(Outcome::Awaited(outcome)),
            false => PendingWrite::done(Err(stopped())),
        }
    }

    /// Hand `changes` to the committer; learn when they are visible, then when durable.
    pub(crate) fn submit_staged(&self, changes: Vec<Change>) -> StagedWrite {
        let (visible, seen) = oneshot::channel();
        let (durable, flushed) = oneshot::channel();
        let replies = Replies {
            visible: Some(visible),
            durable,
        };
        match self.send((replies, changes)) {
            true => StagedWrite {
                visible: PendingWrite(Outcome::Awaited(seen)),
                durable: Some(PendingWrite(Outcome::Awaited(flushed))),
            },
            false => StagedWrite::durable_when_visible(PendingWrite::done(Err(stopped()))),
        }
    }

    fn send(&self, job: Job) -> bool {
        self.jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok())
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Closing the channel ends the loop once the batches already sent are committed
        // (and, with a flusher, flushed).
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Until every sender is gone: wait for a batch, take every batch that has arrived
/// since, and commit them in groups of disjoint footprints. With a flusher, a written
/// group goes to it, still held, and the loop goes on to the next.
fn commit_loop<S: GroupStorage>(
    storage: &S,
    queue: &mpsc::Receiver<Job>,
    flusher: Option<Flusher>,
) {
    let mut pending: VecDeque<Job> = VecDeque::new();
    loop {
        if pending.is_empty() {
            let next = match storage.idle(false) {
                None => queue.recv().map_err(|mpsc::RecvError| true),
                Some(wait) => queue.recv_timeout(wait).map_err(|e| match e {
                    mpsc::RecvTimeoutError::Timeout => false,
                    mpsc::RecvTimeoutError::Disconnected => true,
                }),
            };
            match next {
                Ok(job) => pending.push_back(job),
                // Every sender gone: do what was put off, and stop.
                Err(true) => {
                    storage.idle(true);
                    return;
                }
                Err(false) => continue,
            }
        }
        pending.extend(queue.try_iter());
        let (replies, batches): (Vec<_>, Vec<_>) = take_group(&mut pending).into_iter().unzip();
        // A storage bug fails its group, not the store: later groups are still written
        // (a store that panicked mid-write keeps its commit lock, so no snapshot copies a
        // half-written group: until a later group releases it, or, for a store whose
        // holds nest (sled), until it closes).
        let apart = flusher.is_some();
        let group = catch_unwind(AssertUnwindSafe(|| commit_group(storage, &batches, apart)))
            .unwrap_or_else(|_| Committed {
                outcomes: batches.iter().map(|_| Err(panicked())).collect(),
                unflushed: false,
            });
        let mut to_flush = Vec::new();
        // Whether every writer of the group waits only for visibility: then its flush
        // may wait a moment for more groups to share it.
        let mut patient = true;
        for (replies, outcome) in replies.into_iter().zip(group.outcomes) {
            match outcome {
                Ok(()) => {
                    patient &= replies.visible.is_some();
                    to_flush.extend(replies.written(!group.unflushed));
                }
                Err(e) => replies.fail(e),
            }
        }
        if group.unflushed {
            match &flusher {
                Some(flusher) => flusher.flush(storage, to_flush, patient),
                // Not reached (only a storage that flushes apart leaves a group
                // unflushed); were it, the group is flushed here.
                None => flush_and_release(storage, to_flush),
            }
        }
    }
}

/// Flush, release the group, and tell its writers.
fn flush_and_release<S: GroupStorage>(storage: &S, replies: Vec<Reply>) {
    let outcome =
        catch_unwind(AssertUnwindSafe(|| storage.flush())).unwrap_or_else(|_| Err(panicked()));
    storage.release();
    answer(replies, outcome);
}

/// Tell every writer in `replies` the same outcome.
fn answer(replies: Vec<Reply>, outcome: Result<()>) {
    let n = replies.len();
    let outcomes = match outcome {
        Ok(()) => (0..n).map(|_| Ok(())).collect(),
        Err(e) => fail_all(n, e),
    };
    for (reply, outcome) in replies.into_iter().zip(outcomes) {
        // A writer that stopped waiting needs no answer.
        let _ = reply.send(outcome);
    }
}

/// A group's outcomes, one per batch; `unflushed`: its accepted batches are written but
/// not yet flushed, and the storage is still held for them.
struct Committed {
    outcomes: Vec<Result<()>>,
    unflushed: bool,
}

/// Hold the storage, check each batch, write and flush the accepted ones, release; the
/// outcome of each batch, in order. Checks run under the hold, and a write that finds the
/// state changed since (another process wrote) sends the group round again. `apart`: a
/// written group is left held and unflushed, for the flusher.
fn commit_group<S: GroupStorage>(storage: &S, batches: &[Vec<Change>], apart: bool) -> Committed {
    for _ in 0..MAX_ATTEMPTS {
        if let Some(committed) = attempt_group(storage, batches, apart) {
            return committed;
        }
    }
    Committed {
        outcomes: fail_all(
            batches.len(),
            CatalogError::Storage(format!(
                "the catalog changed under this write {MAX_ATTEMPTS} times in a row (other \
                 processes are writing); nothing was stored, try again"
            )),
        ),
        unflushed: false,
    }
}

/// One attempt at a group: its outcomes, or `None` on a conflict (nothing written).
fn attempt_group<S: GroupStorage>(
    storage: &S,
    batches: &[Vec<Change>],
    apart: bool,
) -> Option<Committed> {
    let done = |outcomes| Committed {
        outcomes,
        unflushed: false,
    };
    if let Err(e) = storage.hold(batches) {
        return Some(done(fail_all(batches.len(), e)));
    }
    let mut outcomes: Vec<Option<Result<()>>> = Vec::with_capacity(batches.len());
    let mut accepted = Vec::with_capacity(batches.len());
    let mut checked = Vec::with_capacity(batches.len());
    for (i, changes) in batches.iter().enumerate() {
        match storage.check(changes) {
            Ok(c) => {
                accepted.push(i);
                checked.push(c);
                outcomes.push(None);
            }
            Err(e) => outcomes.push(Some(Err(e))),
        }
    }
    if checked.len() < batches.len() && storage.recheck_refusals() {
        storage.release();
        return None;
    }
    // A group whose every batch was refused writes nothing, and so cannot conflict: the
    // refusals stand, as they would had the group been checked a moment earlier.
    if !checked.is_empty() {
        let durable = match storage.write(checked) {
            Ok(Written::Conflict) => {
                storage.release();
                return None;
            }
            // Written and visible; the flusher makes it durable and releases it.
            Ok(Written::Done) if apart => {
                return Some(Committed {
                    outcomes: outcomes.into_iter().map(|o| o.unwrap_or(Ok(()))).collect(),
                    unflushed: true,
                });
            }
            Ok(Written::Done) => storage.flush(),
            Err(e) => Err(e),
        };
        let mut results = match durable {
            Ok(()) => accepted.iter().map(|_| Ok(())).collect(),
            Err(e) => fail_all(accepted.len(), e),
        };
        for i in accepted.into_iter().rev() {
            outcomes[i] = results.pop();
        }
    }
    storage.release();
    Some(done(
        outcomes
            .into_iter()
            .map(|o| o.unwrap_or_else(|| Err(panicked())))
            .collect(),
    ))
}

/// `n` copies of the error: the error itself to the first, its text to the others.
fn fail_all(n: usize, e: CatalogError) -> Vec<Result<()>> {
    let text = e.to_string();
    let mut first = Some(e);
    (0..n)
        .map(|_| {
            Err(first
                .take()
                .unwrap_or_else(|| CatalogError::Storage(text.clone())))
        })
        .collect()
}

#[cfg(test)]
mod tests;
