//! Group commit: concurrent writers' batches are written together, in one storage
//! transaction and one flush, by whichever writer leads at the moment. The others wait,
//! and each returns only once its own batch is durable (or refused).
//!
//! Why: a durable write costs a check, a transaction and a flush. Sixteen batches in one
//! transaction and one flush cost far less than sixteen apart, so throughput grows with
//! concurrency. The leader keeps the lead until its group is flushed: handing it on
//! before the flush, so the next group is written while this one is flushed, measured
//! a third slower on sled (its flush and its writers contend).
//!
//! Every batch is still checked on its own, against the committed state: batches are
//! only grouped when their footprints (the ids and names they write, the profiles they
//! depend on) do not overlap, so checking each alone gives the same answer as checking
//! them one after another. A batch that overlaps one already in the group waits for the
//! next.

use crate::error::{CatalogError, Result};
use crate::store::{Change, name_key};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The most batches written in one group, so one transaction stays small.
const MAX_GROUP: usize = 256;

/// The storage a [`CommitQueue`] writes to.
pub(crate) trait GroupStorage {
    /// A batch checked and ready to write.
    type Checked;
    /// Check one batch against the committed state.
    fn check(&self, changes: &[Change]) -> Result<Self::Checked>;
    /// Write checked batches (with disjoint footprints) atomically, not yet durably.
    fn write(&self, group: Vec<Self::Checked>) -> Result<()>;
    /// Make everything written so far durable.
    fn flush(&self) -> Result<()>;
    /// Called before a group is written (the store takes its commit lock, so a snapshot
    /// never sees half a group).
    fn hold(&self) -> Result<()>;
    /// Called once the group is flushed, or failed.
    fn release(&self);
}

/// The writers' shared queue.
#[derive(Debug, Default)]
pub(crate) struct CommitQueue {
    state: Mutex<QueueState>,
    /// Signalled whenever a group ends.
    turn: Condvar,
}

#[derive(Debug, Default)]
struct QueueState {
    next_ticket: u64,
    /// Batches not yet taken by a leader, in arrival order.
    pending: VecDeque<(u64, Vec<Change>)>,
    /// Outcomes not yet collected by their writers.
    outcomes: HashMap<u64, Result<()>>,
    /// A writer is checking, writing and flushing a group now.
    leading: bool,
}

fn poisoned() -> CatalogError {
    CatalogError::Storage("a previous write panicked".into())
}

impl CommitQueue {
    fn state(&self) -> Result<MutexGuard<'_, QueueState>> {
        self.state.lock().map_err(|_| poisoned())
    }

    /// Commit `changes` and return once they are durable, or why they were refused.
    ///
    /// When no writer leads, this one does: it takes the pending batches whose
    /// footprints do not overlap, checks each (a refusal goes to that batch's writer
    /// alone), then writes and flushes the accepted ones together (a failure there goes
    /// to all of them). It leads again while its own batch is still pending.
    pub(crate) fn submit<S: GroupStorage>(&self, storage: &S, changes: Vec<Change>) -> Result<()> {
        let mut state = self.state()?;
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.pending.push_back((ticket, changes));
        loop {
            if let Some(outcome) = state.outcomes.remove(&ticket) {
                return outcome;
            }
            if state.leading {
                state = self.turn.wait(state).map_err(|_| poisoned())?;
                continue;
            }
            state.leading = true;
            let group = take_group(&mut state.pending);
            drop(state);
            let outcomes = self.lead(storage, group, ticket);
            state = self.state()?;
            state.outcomes.extend(outcomes);
            state.leading = false;
            self.turn.notify_all();
        }
    }

    /// Check, write and flush a group; the outcome of each of its batches.
    fn lead<S: GroupStorage>(
        &self,
        storage: &S,
        group: Vec<(u64, Vec<Change>)>,
        own: u64,
    ) -> Vec<(u64, Result<()>)> {
        let _lead = Lead {
            queue: self,
            tickets: group
                .iter()
                .map(|(t, _)| *t)
                .filter(|t| *t != own)
                .collect(),
        };
        let mut outcomes = Vec::with_capacity(group.len());
        let mut accepted = Vec::with_capacity(group.len());
        let mut checked = Vec::with_capacity(group.len());
        for (ticket, changes) in group {
            match storage.check(&changes) {
                Ok(c) => {
                    accepted.push(ticket);
                    checked.push(c);
                }
                Err(e) => outcomes.push((ticket, Err(e))),
            }
        }
        if !checked.is_empty() {
            let durable = storage.hold().and_then(|()| {
                let durable = storage.write(checked).and_then(|()| storage.flush());
                storage.release();
                durable
            });
            match durable {
                Ok(()) => outcomes.extend(accepted.into_iter().map(|t| (t, Ok(())))),
                Err(e) => outcomes.extend(fail_all(accepted, e)),
            }
        }
        outcomes
    }
}

/// Give every ticket the error: the error itself to the first, its text to the others.
fn fail_all(tickets: Vec<u64>, e: CatalogError) -> Vec<(u64, Result<()>)> {
    let text = e.to_string();
    let mut first = Some(e);
    tickets
        .into_iter()
        .map(|ticket| {
            let e = first
                .take()
                .unwrap_or_else(|| CatalogError::Storage(text.clone()));
            (ticket, Err(e))
        })
        .collect()
}

/// A leader's duty while it checks, writes and flushes a group: should it unwind
/// instead of finishing, the group's other writers are told and the lead passes on.
/// (The storage's `release` is not called then: a store that panicked mid-write keeps
/// its commit lock until a later group releases it, so no snapshot copies a
/// half-written group meanwhile.)
struct Lead<'a> {
    queue: &'a CommitQueue,
    /// The group's other writers (the leader learns of its own failure by unwinding).
    tickets: Vec<u64>,
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        // The lock is not held while a leader checks, writes or flushes, so it is only
        // poisoned if a writer panicked while holding it; then nothing can be told.
        if let Ok(mut state) = self.queue.state.lock() {
            for ticket in self.tickets.drain(..) {
                state.outcomes.insert(ticket, Err(poisoned()));
            }
            state.leading = false;
        }
        self.queue.turn.notify_all();
    }
}

/// The pending batches to write now: in arrival order, each one whose footprint does not
/// overlap those taken before it, at most [`MAX_GROUP`]. The rest stay pending, in order.
fn take_group(pending: &mut VecDeque<(u64, Vec<Change>)>) -> Vec<(u64, Vec<Change>)> {
    let mut taken = Vec::new();
    let mut left = VecDeque::new();
    let mut claimed = Footprint::default();
    while let Some((ticket, changes)) = pending.pop_front() {
        let mine = Footprint::of(&changes);
        if taken.len() < MAX_GROUP && !mine.overlaps(&claimed) {
            claimed.writes.extend(mine.writes);
            claimed.reads.extend(mine.reads);
            taken.push((ticket, changes));
        } else {
            left.push_back((ticket, changes));
        }
    }
    *pending = left;
    taken
}

/// What a batch writes (the ids it puts or deletes, the names it puts,
/// case-insensitively) and what it only reads (the profiles its tables use). Two batches
/// whose footprints do not overlap give the same outcomes checked apart as checked one
/// after the other. Reads overlap only writes: many tables may be created on one profile
/// in a group, but not beside that profile's deletion.
#[derive(Debug, Default)]
struct Footprint {
    writes: HashSet<String>,
    reads: HashSet<String>,
}

impl Footprint {
    fn of(changes: &[Change]) -> Self {
        let mut f = Footprint::default();
        for change in changes {
            match change {
                Change::PutProfile(p) => {
                    f.writes.insert(format!("profile:{}", p.id));
                    f.writes
                        .insert(format!("profile-name:{}", name_key(&p.name)));
                }
                Change::DeleteProfile(id) => {
                    f.writes.insert(format!("profile:{id}"));
                }
                Change::PutTable(t) => {
                    f.writes.insert(format!("table:{}", t.id));
                    f.writes.insert(format!("table-name:{}", name_key(&t.name)));
                    if let Some(p) = &t.profile {
                        f.reads.insert(format!("profile:{p}"));
                    }
                }
                Change::DeleteTable(id) => {
                    f.writes.insert(format!("table:{id}"));
                }
            }
        }
        f
    }

    fn overlaps(&self, other: &Footprint) -> bool {
        self.writes
            .iter()
            .any(|k| other.writes.contains(k) || other.reads.contains(k))
            || self.reads.iter().any(|k| other.writes.contains(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{new_profile_id, new_table_id};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;
    use tributary_types::{ConnectionTable, ConnectionType, ProfileId};

    fn table(name: &str, profile: Option<ProfileId>) -> Change {
        Change::PutTable(ConnectionTable {
            profile,
            ..ConnectionTable::new(new_table_id(), name, "kafka", ConnectionType::Source)
        })
    }

    /// A storage that counts what it is asked to do, refuses tables whose names end in
    /// an odd digit, and fails or panics on write when told to.
    #[derive(Default)]
    struct Counting {
        writes: AtomicUsize,
        written: AtomicUsize,
        flushes: AtomicUsize,
        held: AtomicBool,
        fail_write: bool,
        panic_write: bool,
    }

    impl GroupStorage for Counting {
        type Checked = usize;
        fn check(&self, changes: &[Change]) -> Result<usize> {
            match &changes[0] {
                Change::PutTable(t) if t.name.ends_with(['1', '3', '5', '7', '9']) => {
                    Err(CatalogError::AlreadyExists {
                        kind: crate::ObjectKind::Table,
                        name: t.name.clone(),
                    })
                }
                _ => Ok(changes.len()),
            }
        }
        fn write(&self, group: Vec<usize>) -> Result<()> {
            assert!(self.held.load(Ordering::SeqCst), "written while not held");
            if self.panic_write {
                panic!("storage bug");
            }
            if self.fail_write {
                return Err(CatalogError::Storage("disk full".into()));
            }
            self.writes.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            self.written.fetch_add(group.iter().sum(), Ordering::SeqCst);
            Ok(())
        }
        fn flush(&self) -> Result<()> {
            assert!(self.held.load(Ordering::SeqCst), "flushed while not held");
            self.flushes.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            Ok(())
        }
        fn hold(&self) -> Result<()> {
            assert!(
                !self.held.swap(true, Ordering::SeqCst),
                "held by two groups"
            );
            Ok(())
        }
        fn release(&self) {
            assert!(
                self.held.swap(false, Ordering::SeqCst),
                "released while not held"
            );
        }
    }

    fn idle(queue: &CommitQueue) -> bool {
        let state = queue.state().expect("state");
        state.pending.is_empty() && state.outcomes.is_empty() && !state.leading
    }

    #[test]
    fn concurrent_writers_share_writes_and_each_gets_its_own_outcome() {
        let (queue, storage) = (CommitQueue::default(), Counting::default());
        let writers = 16;
        std::thread::scope(|s| {
            for i in 0..writers {
                let (queue, storage) = (&queue, &storage);
                s.spawn(
                    move || match queue.submit(storage, vec![table(&format!("t{i}"), None)]) {
                        Ok(()) => assert_eq!(i % 2, 0, "writer {i} should have been refused"),
                        Err(e) => {
                            assert_eq!(i % 2, 1, "writer {i} failed: {e}");
                            assert_eq!(e.to_string(), format!("table 't{i}' already exists"));
                        }
                    },
                );
            }
        });
        let writes = storage.writes.load(Ordering::SeqCst);
        assert!(writes >= 1 && writes < writers / 2, "{writes} writes");
        assert_eq!(storage.written.load(Ordering::SeqCst), writers / 2);
        assert_eq!(storage.flushes.load(Ordering::SeqCst), writes);
        assert!(!storage.held.load(Ordering::SeqCst));
        assert!(idle(&queue));
    }

    #[test]
    fn overlapping_batches_never_share_a_group() {
        let p = new_profile_id();
        let mut pending: VecDeque<(u64, Vec<Change>)> = VecDeque::from(vec![
            (0, vec![table("Orders", None)]),
            (1, vec![table("orders", None)]),
            (2, vec![table("a", Some(p.clone()))]),
            (3, vec![Change::DeleteProfile(p.clone())]),
            (4, vec![table("b", Some(p.clone()))]),
            (5, vec![table("c", None)]),
        ]);
        // Tables on one profile share a group; the profile's deletion does not join them.
        let taken: Vec<u64> = take_group(&mut pending).iter().map(|(t, _)| *t).collect();
        assert_eq!(taken, vec![0, 2, 4, 5]);
        let left: Vec<u64> = pending.iter().map(|(t, _)| *t).collect();
        assert_eq!(left, vec![1, 3]);
        let next: Vec<u64> = take_group(&mut pending).iter().map(|(t, _)| *t).collect();
        assert_eq!(next, vec![1, 3]);
    }

    #[test]
    fn a_group_is_capped() {
        let mut pending: VecDeque<(u64, Vec<Change>)> = (0..MAX_GROUP as u64 + 3)
            .map(|i| (i, vec![table(&format!("t{i}"), None)]))
            .collect();
        assert_eq!(take_group(&mut pending).len(), MAX_GROUP);
        assert_eq!(pending.len(), 3);
    }

    #[test]
    fn a_failed_write_fails_its_group_and_the_next_write_runs() {
        let queue = CommitQueue::default();
        let failing = Counting {
            fail_write: true,
            ..Default::default()
        };
        let err = queue
            .submit(&failing, vec![table("a", None)])
            .expect_err("the write failed");
        assert_eq!(err.to_string(), "catalog storage error: disk full");
        assert_eq!(
            failing.flushes.load(Ordering::SeqCst),
            0,
            "nothing to flush"
        );
        assert!(!failing.held.load(Ordering::SeqCst) && idle(&queue));
        let working = Counting::default();
        assert!(queue.submit(&working, vec![table("a", None)]).is_ok());
    }

    #[test]
    fn a_leader_that_panics_fails_its_group_and_frees_the_queue() {
        let queue = CommitQueue::default();
        let buggy = Counting {
            panic_write: true,
            ..Default::default()
        };
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            queue.submit(&buggy, vec![table("a", None)])
        }));
        assert!(panicked.is_err());
        // The buggy store keeps its commit lock: half a group may be written.
        assert!(buggy.held.load(Ordering::SeqCst) && idle(&queue));
        assert!(
            queue
                .submit(&Counting::default(), vec![table("b", None)])
                .is_ok()
        );
    }
}
