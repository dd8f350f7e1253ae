//! The flusher of a storage that flushes apart: written groups wait here, still held,
//! while the committer goes on; one flush makes every group that arrived durable, then
//! each is released and its writers told.

use super::{GroupStorage, Reply, flush_and_release};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a flush whose writers all wait only for visibility (a script's statements)
/// waits for more groups to share it. A statement's checks take about 0.1 ms, a flush
/// about as long in system time: sharing one flush among several statements is what
/// lets a script run near the disk's speed. The statements' outcomes are shown this much
/// later at most; the script itself does not wait.
const PATIENCE: Duration = Duration::from_millis(1);

/// The most groups one patient flush waits for.
const PATIENT_GROUPS: usize = 64;

/// A written group: its writers, and whether they all wait only for visibility.
struct Written {
    replies: Vec<Reply>,
    patient: bool,
}

/// The groups one flush covers: `first`, every group written since, and, while they are
/// all patient, those written within [`PATIENCE`] of `first`.
fn gather(first: Written, queue: &mpsc::Receiver<Written>) -> Vec<Written> {
    let deadline = Instant::now() + PATIENCE;
    let mut written = vec![first];
    written.extend(queue.try_iter());
    while written.len() < PATIENT_GROUPS && written.iter().all(|w| w.patient) {
        let left = deadline.saturating_duration_since(Instant::now());
        match queue.recv_timeout(left) {
            Ok(next) => written.push(next),
            Err(_) => break,
        }
    }
    written
}

/// The flusher thread; dropping it flushes what it was handed and stops it.
#[derive(Debug)]
pub(super) struct Flusher {
    groups: Option<mpsc::Sender<Written>>,
    thread: Option<JoinHandle<()>>,
}

impl Flusher {
    pub(super) fn start<S>(storage: Arc<S>) -> std::io::Result<Self>
    where
        S: GroupStorage + Send + Sync + 'static,
    {
        let (groups, queue) = mpsc::channel::<Written>();
        let thread = std::thread::Builder::new()
            .name("catalog-flush".into())
            .spawn(move || {
                while let Ok(first) = queue.recv() {
                    let written = gather(first, &queue);
                    let count = written.len();
                    // Each group was held on its own: release all but one here, and the
                    // last after the flush.
                    for _ in 1..count {
                        storage.release();
                    }
                    let replies = written.into_iter().flat_map(|w| w.replies).collect();
                    flush_and_release(storage.as_ref(), replies);
                }
            })?;
        Ok(Self {
            groups: Some(groups),
            thread: Some(thread),
        })
    }

    /// Flush a written (and held) group, then release it and answer its writers;
    /// `patient`: they all wait only for visibility. Should the thread be gone (it cannot
    /// panic, but were it), the group is flushed here.
    pub(super) fn flush<S: GroupStorage>(&self, storage: &S, replies: Vec<Reply>, patient: bool) {
        let written = Written { replies, patient };
        let unsent = match &self.groups {
            Some(groups) => groups.send(written).err().map(|mpsc::SendError(w)| w),
            None => Some(written),
        };
        if let Some(written) = unsent {
            flush_and_release(storage, written.replies);
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.groups.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
