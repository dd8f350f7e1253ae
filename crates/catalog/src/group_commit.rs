//! Group commit for [`SledStore`](crate::SledStore): one flush makes durable every write
//! that committed while the previous flush ran. Concurrent writers share flushes instead
//! of queueing behind each other's, so throughput grows with concurrency, and each writer
//! still returns only once its own write is on disk.
//!
//! While any writer of this process is between its transaction and its flush, the
//! catalog's commit lock is held exclusively (taken by the first writer in, released by
//! the last one out), so a snapshot copy made by another process never sees half a
//! commit.

use crate::error::{CatalogError, Result};
use fs2::FileExt;
use std::fs::File;
use std::path::Path;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The writers' shared state.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<State>,
    flushed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Writers between entering and leaving.
    active: usize,
    /// Tickets handed out: one per committed transaction, in commit order.
    committed: u64,
    /// Every ticket up to this one is durable.
    durable: u64,
    /// A writer is flushing now.
    flushing: bool,
}

/// A writer inside a commit; leaving (dropping it) releases the commit lock when it is
/// the last one.
pub(crate) struct Committer<'a> {
    group: &'a GroupCommit,
    lock: &'a File,
}

fn poisoned() -> CatalogError {
    CatalogError::Storage("a previous write panicked".into())
}

impl GroupCommit {
    fn state(&self) -> Result<MutexGuard<'_, State>> {
        self.state.lock().map_err(|_| poisoned())
    }

    /// Enter a commit; the first writer in takes the commit lock (waiting while another
    /// process copies a snapshot).
    pub(crate) fn enter<'a>(&'a self, lock: &'a File, path: &Path) -> Result<Committer<'a>> {
        let mut state = self.state()?;
        if state.active == 0 {
            lock.lock_exclusive().map_err(|source| CatalogError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        state.active += 1;
        Ok(Committer { group: self, lock })
    }

    /// A ticket for a transaction that has just committed. Call it while transactions
    /// are still serialised, so tickets follow commit order.
    pub(crate) fn committed(&self) -> Result<u64> {
        let mut state = self.state()?;
        state.committed += 1;
        Ok(state.committed)
    }

    /// Return once the write holding `ticket` is durable: when a flush that began after
    /// it committed has finished. Flushes with `flush` when no other writer is flushing;
    /// otherwise waits for that flush, which may already cover this write. A failed
    /// flush is reported to the writer that ran it; the others try again themselves.
    pub(crate) fn wait_durable(&self, ticket: u64, flush: impl Fn() -> Result<()>) -> Result<()> {
        let mut state = self.state()?;
        loop {
            if state.durable >= ticket {
                return Ok(());
            }
            if state.flushing {
                state = self.flushed.wait(state).map_err(|_| poisoned())?;
                continue;
            }
            state.flushing = true;
            let target = state.committed;
            drop(state);
            let flushed = flush();
            state = self.state()?;
            state.flushing = false;
            if flushed.is_ok() {
                state.durable = state.durable.max(target);
            }
            self.flushed.notify_all();
            flushed?;
        }
    }
}

impl Drop for Committer<'_> {
    fn drop(&mut self) {
        // A poisoned state means a writer panicked mid-commit; the lock is released when
        // the store (and its file) goes.
        if let Ok(mut state) = self.group.state.lock() {
            state.active -= 1;
            if state.active == 0 {
                let _ = FileExt::unlock(self.lock);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn concurrent_writers_share_flushes_and_each_waits_for_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("lock")).unwrap();
        let group = Arc::new(GroupCommit::default());
        let flushes = Arc::new(AtomicUsize::new(0));
        let writers = 16;
        let path = dir.path();
        std::thread::scope(|s| {
            for _ in 0..writers {
                let (group, flushes, file) = (group.clone(), flushes.clone(), &file);
                s.spawn(move || {
                    let _in = group.enter(file, path).unwrap();
                    let ticket = group.committed().unwrap();
                    group
                        .wait_durable(ticket, || {
                            flushes.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(20));
                            Ok(())
                        })
                        .unwrap();
                    assert!(group.state().unwrap().durable >= ticket);
                });
            }
        });
        let flushes = flushes.load(Ordering::SeqCst);
        assert!(
            flushes >= 1 && flushes < writers,
            "{flushes} flushes for {writers} writers"
        );
        assert_eq!(group.state().unwrap().active, 0);
    }

    #[test]
    fn a_failed_flush_fails_its_writer_and_the_next_one_flushes_again() {
        let group = GroupCommit::default();
        let t1 = group.committed().unwrap();
        let err = group.wait_durable(t1, || Err(CatalogError::Storage("disk full".into())));
        assert!(err.is_err());
        assert!(group.wait_durable(t1, || Ok(())).is_ok());
    }
}
