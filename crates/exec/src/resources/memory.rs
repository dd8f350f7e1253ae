//! A query's memory pool: DataFusion's operators reserve what they hold (sorts, joins,
//! aggregates' states), and each query's reservations are capped twice, by its own limit
//! and by the server's total, so one query cannot take the memory every other needs.
//! Operators that can spill (sorts, aggregates) spill to disk when refused.

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::memory_pool::{MemoryLimit, MemoryPool, MemoryReservation};
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// One query's share of the server's memory.
#[derive(Debug)]
pub(crate) struct QueryPool {
    limit: usize,
    used: AtomicUsize,
    total: Arc<dyn MemoryPool>,
}

impl QueryPool {
    pub(crate) fn new(limit: usize, total: Arc<dyn MemoryPool>) -> Self {
        Self {
            limit,
            used: AtomicUsize::new(0),
            total,
        }
    }
}

impl fmt::Display for QueryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "query(used: {}, limit: {})",
            bytes(self.used.load(Ordering::Relaxed)),
            bytes(self.limit)
        )
    }
}

impl MemoryPool for QueryPool {
    fn name(&self) -> &str {
        "query"
    }

    fn grow(&self, reservation: &MemoryReservation, additional: usize) {
        self.used.fetch_add(additional, Ordering::Relaxed);
        self.total.grow(reservation, additional);
    }

    fn shrink(&self, reservation: &MemoryReservation, shrink: usize) {
        self.used.fetch_sub(shrink, Ordering::Relaxed);
        self.total.shrink(reservation, shrink);
    }

    fn try_grow(&self, reservation: &MemoryReservation, additional: usize) -> Result<()> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                let next = used.checked_add(additional)?;
                (next <= self.limit).then_some(next)
            })
            .map_err(|_| {
                DataFusionError::ResourcesExhausted(format!(
                    "this query needs more than {}, the memory each query may use on this server (--query-memory)",
                    bytes(self.limit)
                ))
            })?;
        if self.total.try_grow(reservation, additional).is_err() {
            self.used.fetch_sub(additional, Ordering::Relaxed);
            return Err(DataFusionError::ResourcesExhausted(format!(
                "the queries running on this server hold all the memory they may use together ({}, --total-query-memory); this query needs {} more",
                match self.total.memory_limit() {
                    MemoryLimit::Finite(n) => bytes(n),
                    _ => "its limit".into(),
                },
                bytes(additional)
            )));
        }
        Ok(())
    }

    fn reserved(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn memory_limit(&self) -> MemoryLimit {
        MemoryLimit::Finite(self.limit)
    }
}

/// `512 MiB`, `1.5 GiB`, `300 KiB`.
pub(crate) fn bytes(n: usize) -> String {
    const KIB: f64 = 1024.0;
    let n = n as f64;
    if n >= KIB * KIB * KIB {
        trim(n / (KIB * KIB * KIB), "GiB")
    } else if n >= KIB * KIB {
        trim(n / (KIB * KIB), "MiB")
    } else if n >= KIB {
        trim(n / KIB, "KiB")
    } else {
        format!("{n} bytes")
    }
}

fn trim(v: f64, unit: &str) -> String {
    if (v - v.round()).abs() < 0.05 {
        format!("{} {unit}", v.round())
    } else {
        format!("{v:.1} {unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryConsumer};

    #[test]
    fn a_query_is_capped_by_its_own_limit_and_by_the_total() {
        let total: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(100));
        let a: Arc<dyn MemoryPool> = Arc::new(QueryPool::new(60, Arc::clone(&total)));
        let b: Arc<dyn MemoryPool> = Arc::new(QueryPool::new(60, Arc::clone(&total)));
        let ra = MemoryConsumer::new("a").register(&a);
        let rb = MemoryConsumer::new("b").register(&b);
        ra.try_grow(60).unwrap();
        let own = ra.try_grow(1).unwrap_err().to_string();
        assert!(own.contains("--query-memory"), "{own}");
        let shared = rb.try_grow(50).unwrap_err().to_string();
        assert!(shared.contains("--total-query-memory"), "{shared}");
        // A refused reservation holds nothing.
        assert_eq!((b.reserved(), total.reserved()), (0, 60));
        rb.try_grow(40).unwrap();
        drop(ra);
        assert_eq!(total.reserved(), 40);
        assert_eq!(bytes(512 * 1024 * 1024), "512 MiB");
    }
}
