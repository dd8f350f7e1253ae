//! Concurrency slots shared by every path that runs SQL on a server (plain and streamed
//! `/sql`, connection tests, `validate_query`): a request takes a slot or waits for one,
//! a bounded number of requests wait at most a bounded time, and the rest are told at
//! once that the server is busy.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots, and who waits for one.
#[derive(Debug)]
pub(crate) struct Gate {
    slots: Arc<Semaphore>,
    size: usize,
    waiting: AtomicUsize,
    max_waiting: usize,
    max_wait: Duration,
}

/// A request's place among the running ones; dropping it frees the slot.
#[derive(Debug)]
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the server is busy: {running} queries and tests are running and {waiting} are waiting, as many as it takes at once"
)]
pub struct Busy {
    /// Slots, all taken.
    pub running: usize,
    /// Requests already waiting.
    pub waiting: usize,
}

impl Gate {
    pub(crate) fn new(size: usize, max_waiting: usize, max_wait: Duration) -> Self {
        Self {
            slots: Arc::new(Semaphore::new(size.max(1))),
            size: size.max(1),
            waiting: AtomicUsize::new(0),
            max_waiting,
            max_wait,
        }
    }

    /// A slot: at once if one is free, else after waiting (if few enough wait) up to the
    /// longest wait.
    pub(crate) async fn admit(&self) -> Result<Slot, Busy> {
        if let Ok(p) = Arc::clone(&self.slots).try_acquire_owned() {
            return Ok(Slot { _permit: p });
        }
        let busy = || Busy {
            running: self.size,
            waiting: self.waiting.load(Ordering::Relaxed),
        };
        let queued = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w < self.max_waiting).then_some(w + 1)
            });
        if queued.is_err() {
            return Err(busy());
        }
        let waited =
            tokio::time::timeout(self.max_wait, Arc::clone(&self.slots).acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        match waited {
            Ok(Ok(p)) => Ok(Slot { _permit: p }),
            _ => Err(busy()),
        }
    }

    /// Slots free now.
    pub(crate) fn available(&self) -> usize {
        self.slots.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_gate_queues_a_few_briefly_and_turns_the_rest_away() {
        let gate = Arc::new(Gate::new(1, 1, Duration::from_millis(300)));
        let first = gate.admit().await.unwrap();
        // One may wait; it gets the slot when it frees.
        let waiter = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.admit().await.map(|_| ()) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        // A second waiter is one too many.
        assert!(gate.admit().await.is_err());
        drop(first);
        assert_eq!(waiter.await.unwrap(), Ok(()));
        // A waiter that waits too long is turned away.
        let _held = gate.admit().await.unwrap();
        let started = std::time::Instant::now();
        assert!(gate.admit().await.is_err());
        assert!(started.elapsed() >= Duration::from_millis(250));
    }
}
