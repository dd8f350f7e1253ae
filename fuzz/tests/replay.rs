//! Every fuzz target over its seed corpus (the SQL tests, the fixtures) and its
//! regression inputs (`fuzz/regressions/<target>/`): each returns without panicking, and
//! within a time bound, as in CI. A crash AFL++ finds becomes a file there.

use std::time::{Duration, Instant};

/// Longest one input may take in a debug build (a hang shows as far more).
const PER_INPUT: Duration = Duration::from_secs(20);

#[test]
fn every_target_survives_its_corpus_and_regressions() {
    for target in tributary_fuzz::TARGETS {
        let seeds = tributary_fuzz::seeds(target);
        assert!(!seeds.is_empty(), "{target}: no seed inputs found");
        for (name, bytes) in seeds.iter().chain(&tributary_fuzz::regressions(target)) {
            let started = Instant::now();
            assert!(
                tributary_fuzz::run(target, bytes),
                "{target}: unknown target"
            );
            let took = started.elapsed();
            assert!(took < PER_INPUT, "{target}: {name} took {took:?}");
        }
    }
}

#[test]
fn unknown_targets_are_refused() {
    assert!(!tributary_fuzz::run("no_such_target", b""));
}
