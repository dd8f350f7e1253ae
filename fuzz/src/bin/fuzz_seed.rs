//! `fuzz_seed DIR`: write each target's seed inputs (the SQL tests, the fixtures) and
//! regression inputs to `DIR/<target>/`, the input directories AFL++ starts from.

use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: fuzz_seed DIR");
        std::process::exit(2);
    };
    for target in tributary_fuzz::TARGETS {
        let out = dir.join(target);
        if let Err(e) = std::fs::create_dir_all(&out) {
            eprintln!("error: cannot create {}: {e}", out.display());
            std::process::exit(1);
        }
        let inputs = tributary_fuzz::seeds(target)
            .into_iter()
            .chain(tributary_fuzz::regressions(target));
        let mut n = 0;
        for (i, (_, bytes)) in inputs.enumerate() {
            if let Err(e) = std::fs::write(out.join(format!("seed{i:04}")), bytes) {
                eprintln!("error: cannot write to {}: {e}", out.display());
                std::process::exit(1);
            }
            n += 1;
        }
        println!("{target}: {n} inputs in {}", out.display());
    }
}
