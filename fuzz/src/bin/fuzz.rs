//! The AFL++ harness: `fuzz TARGET`, fed by `cargo afl fuzz` (docs/fuzzing.md).

fn main() {
    let target = std::env::args().nth(1).unwrap_or_default();
    if !tributary_fuzz::TARGETS.contains(&target.as_str()) {
        eprintln!(
            "usage: fuzz TARGET, one of: {}",
            tributary_fuzz::TARGETS.join(", ")
        );
        std::process::exit(2);
    }
    afl::fuzz!(|data: &[u8]| {
        tributary_fuzz::run(&target, data);
    });
}
