//! The bound the fuzz targets claim, asserted: memory and time at most linear in the
//! input. Each regression input, and the smallest seeds of every target, is run as a
//! scaled family (the input repeated to 4 KiB, then that 1, 4 and 16 times); the peak of live heap bytes and
//! the time may grow with the input's size, never faster. A quadratic step shows as 16
//! times the linear figure at the largest scale; the factor allowed here is 2 (4 for
//! time, which a shared machine makes noisy), plus a small constant for fixed costs.
//!
//! One test in its own binary: the measuring allocator sees this test's work alone.

use peakmem_alloc::{INSTRUMENTED_SYSTEM, PeakMemAlloc, PeakMemAllocTrait};
use std::alloc::System;
use std::time::{Duration, Instant};

/// The system allocator, keeping the peak of live heap bytes since its last reset.
#[global_allocator]
static ALLOCATOR: &PeakMemAlloc<System> = &INSTRUMENTED_SYSTEM;

/// What one run cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// Peak live heap bytes above those live before the run.
    peak_bytes: usize,
    time: Duration,
}

/// Run `target` on `data` three times; the least of each figure (the others are noise).
fn cost(target: &str, data: &[u8]) -> Cost {
    let mut best: Option<Cost> = None;
    for _ in 0..3 {
        ALLOCATOR.reset_peak_memory();
        let started = Instant::now();
        assert!(tributary_fuzz::run(target, data));
        let c = Cost {
            time: started.elapsed(),
            peak_bytes: ALLOCATOR.get_peak_memory(),
        };
        best = Some(match best {
            None => c,
            Some(b) => Cost {
                peak_bytes: b.peak_bytes.min(c.peak_bytes),
                time: b.time.min(c.time),
            },
        });
    }
    best.unwrap_or(Cost {
        peak_bytes: 0,
        time: Duration::ZERO,
    })
}

/// The least size of a family's first input.
const BASE_BYTES: usize = 4096;

/// The scales of each family.
const SCALES: [usize; 3] = [1, 4, 16];

/// Fixed costs a run may add whatever its input (a runtime, a session, caches).
const BYTES_SLACK: usize = 512 * 1024;
const TIME_SLACK: Duration = Duration::from_millis(30);

/// The inputs measured for `target`: its regressions, and its three smallest seeds.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let mut seeds = tributary_fuzz::seeds(target);
    seeds.sort_by_key(|(_, bytes)| bytes.len());
    seeds.retain(|(_, bytes)| !bytes.is_empty());
    seeds.truncate(3);
    let mut all = tributary_fuzz::regressions(target);
    all.extend(seeds);
    all
}

#[test]
fn memory_and_time_grow_at_most_linearly_with_the_input() {
    let mut measured = 0;
    for target in tributary_fuzz::TARGETS {
        for (name, bytes) in inputs(target) {
            // The family starts at a few kilobytes, so fixed costs do not hide the growth.
            let base = bytes.repeat(BASE_BYTES.div_ceil(bytes.len()));
            // Warm up: lazily built tables and caches are not the input's cost.
            tributary_fuzz::run(target, &base);
            let costs: Vec<Cost> = SCALES
                .iter()
                .map(|&k| cost(target, &base.repeat(k)))
                .collect();
            println!(
                "{target} {name}: {} bytes at scale 1: {costs:?}",
                base.len()
            );
            let (base, top) = (costs[0], costs[SCALES.len() - 1]);
            let k = SCALES[SCALES.len() - 1];
            let say = || format!("{target} {name} at scales {SCALES:?}: {costs:?}");
            assert!(
                top.peak_bytes <= 2 * k * base.peak_bytes + BYTES_SLACK,
                "memory grows faster than the input: {}",
                say()
            );
            assert!(
                top.time <= base.time * (4 * k) as u32 + TIME_SLACK,
                "time grows faster than the input: {}",
                say()
            );
            measured += 1;
        }
    }
    assert!(measured >= tributary_fuzz::TARGETS.len() * 3, "{measured}");
}
