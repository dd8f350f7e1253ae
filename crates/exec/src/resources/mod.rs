//! What a server gives each request that runs SQL: a concurrency slot ([`Slot`]), a
//! deadline, a memory pool per query drawn from a total for the server, and threads of
//! their own, apart from the ones that answer HTTP, so one request can never abort,
//! starve or hang the rest. [`Resources`] is built from [`QueryLimits`]; a session given
//! one (`Session::govern`, in `tributary-sql`) runs every query inside it, and the REST API's
//! library calls (`tributary_api`) admit, bound and run each request through it.

mod gate;
mod memory;

pub use gate::{Busy, Slot};

use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryPool};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// The bounds a server sets; [`QueryLimits::for_this_machine`] gives the defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryLimits {
    /// The most memory one query's operators may hold (`--query-memory`).
    pub query_memory: usize,
    /// The most memory all running queries may hold together (`--total-query-memory`).
    pub total_memory: usize,
    /// How long a request may run unless it asks for less or more (`--query-deadline`).
    pub deadline: Duration,
    /// The longest deadline a request may ask for (`--max-query-deadline`).
    pub max_deadline: Duration,
    /// Requests that run SQL at once (`--max-concurrent-queries`).
    pub slots: usize,
    /// Requests that may wait for a slot; past that, the server answers busy at once.
    pub max_waiting: usize,
    /// How long a request waits for a slot before the server answers busy.
    pub max_wait: Duration,
    /// The threads that run queries (apart from those answering HTTP).
    pub threads: usize,
}

/// The default deadline of a request.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

impl QueryLimits {
    /// Defaults sized to this machine: half its memory for queries together, a quarter
    /// of that for one, eight at once, a minute each (ten at most), and a query thread
    /// per core.
    pub fn for_this_machine() -> Self {
        let memory = machine_memory().unwrap_or(4 << 30);
        let total = (memory / 2).max(64 << 20);
        let threads = std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(2);
        Self {
            query_memory: total / 4,
            total_memory: total,
            deadline: DEFAULT_DEADLINE,
            max_deadline: Duration::from_secs(600),
            slots: 8,
            max_waiting: 16,
            max_wait: Duration::from_secs(5),
            threads,
        }
    }
}

/// The machine's memory in bytes (Linux: `MemTotal` in /proc/meminfo).
fn machine_memory() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// A server's query resources: its slots, its memory and its query threads.
pub struct Resources {
    limits: QueryLimits,
    total: Arc<dyn MemoryPool>,
    gate: gate::Gate,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("limits", &self.limits)
            .field("free_slots", &self.gate.available())
            .finish_non_exhaustive()
    }
}

/// Why a request ended before its work did.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Overrun {
    /// It ran past its deadline and was cancelled.
    #[error("the request ran past its deadline of {} s and was cancelled", .0.as_secs_f64())]
    Deadline(Duration),
    /// Its task failed (a bug: a panic in a query).
    #[error("the query stopped unexpectedly")]
    Crashed,
}

impl Resources {
    /// Resources bounded by `limits`, with `limits.threads` query threads.
    pub fn new(limits: QueryLimits) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(limits.threads.max(1))
            .thread_name("tributary-query")
            .enable_all()
            .build()?;
        Ok(Self {
            total: Arc::new(GreedyMemoryPool::new(limits.total_memory)),
            gate: gate::Gate::new(limits.slots, limits.max_waiting, limits.max_wait),
            runtime: Some(runtime),
            limits,
        })
    }

    /// The bounds.
    pub fn limits(&self) -> &QueryLimits {
        &self.limits
    }

    /// Memory all running queries hold now.
    pub fn memory_in_use(&self) -> usize {
        self.total.reserved()
    }

    /// A slot to run in, waiting briefly if all are taken.
    pub async fn admit(&self) -> Result<Slot, Busy> {
        self.gate.admit().await
    }

    /// The deadline of a request that asked for `asked` (the default if it did not);
    /// an error says what the longest is.
    pub fn deadline(&self, asked: Option<Duration>) -> Result<Duration, String> {
        match asked {
            None => Ok(self.limits.deadline),
            Some(d) if d.is_zero() => Err("the deadline must be longer than zero".into()),
            Some(d) if d > self.limits.max_deadline => Err(format!(
                "the deadline may be at most {} s on this server (--max-query-deadline)",
                self.limits.max_deadline.as_secs()
            )),
            Some(d) => Ok(d),
        }
    }

    /// Run `work` on the query threads until it ends or `deadline` passes; dropping the
    /// returned future (the client went away) cancels it.
    pub async fn run<T: Send + 'static>(
        &self,
        deadline: Duration,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, Overrun> {
        let bounded = async move { tokio::time::timeout(deadline, work).await };
        let handle = match &self.runtime {
            Some(rt) => rt.spawn(bounded),
            None => tokio::spawn(bounded),
        };
        match AbortOnDrop(handle).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(Overrun::Deadline(deadline)),
            Err(_) => Err(Overrun::Crashed),
        }
    }

    /// Spawn `work` on the query threads (a streamed request's script, which ends itself).
    pub fn spawn(
        &self,
        work: impl Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        match &self.runtime {
            Some(rt) => rt.spawn(work),
            None => tokio::spawn(work),
        }
    }

    /// The runtime environment of one query: `base`'s, with a memory pool of its own
    /// drawn from the server's total.
    pub fn query_runtime(&self, base: &RuntimeEnv) -> Arc<RuntimeEnv> {
        let pool = Arc::new(memory::QueryPool::new(
            self.limits.query_memory,
            Arc::clone(&self.total),
        ));
        RuntimeEnvBuilder::from_runtime_env(base)
            .with_memory_pool(pool)
            .build_arc()
            .unwrap_or_else(|_| Arc::new(RuntimeEnv::default()))
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        // Dropped on an async thread, a runtime would block it waiting for its tasks.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A spawned task that is cancelled when its handle is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;
    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0).poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Resources {
        Resources::new(QueryLimits {
            threads: 1,
            ..QueryLimits::for_this_machine()
        })
        .unwrap()
    }

    #[tokio::test]
    async fn work_past_its_deadline_is_cancelled() {
        let r = small();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let out = r
            .run(Duration::from_millis(100), async move {
                tokio::time::sleep(Duration::from_secs(30)).await;
                let _ = tx.send(());
            })
            .await;
        assert_eq!(out, Err(Overrun::Deadline(Duration::from_millis(100))));
        // Cancelled: the work never finished, so its sender was dropped unsent.
        assert!(rx.await.is_err());
        assert_eq!(r.run(Duration::from_secs(5), async { 7 }).await, Ok(7));
    }

    #[tokio::test]
    async fn a_dropped_request_cancels_its_work() {
        let r = small();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let run = r.run(Duration::from_secs(30), async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            let _ = tx.send(());
        });
        // The client goes away after 50 ms.
        let _ = tokio::time::timeout(Duration::from_millis(50), run).await;
        let gone = tokio::time::timeout(Duration::from_secs(2), rx).await;
        assert!(matches!(gone, Ok(Err(_))), "the work was not cancelled");
    }

    #[test]
    fn deadlines_are_capped_by_the_operator() {
        let r = small();
        assert_eq!(r.deadline(None), Ok(DEFAULT_DEADLINE));
        assert!(r.deadline(Some(Duration::from_secs(3600))).is_err());
        assert!(r.deadline(Some(Duration::ZERO)).is_err());
    }
}
