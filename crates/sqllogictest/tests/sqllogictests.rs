//! Runs every `sql-tests/**/*.slt` file, each against a fresh catalog.
//! `cargo test -p tributary-sqllogictest --test sqllogictests -- FILTER` runs the files whose
//! path contains FILTER.

use std::path::{Path, PathBuf};
use tributary_sqllogictest::TributaryDb;

fn slt_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            slt_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "slt") {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sql-tests");
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let mut files = Vec::new();
    slt_files(&root, &mut files);
    files.sort();
    files.retain(|f| {
        filter
            .as_ref()
            .is_none_or(|s| f.to_string_lossy().contains(s.as_str()))
    });
    if files.is_empty() {
        eprintln!("no .slt files found under {}", root.display());
        std::process::exit(1);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (mut passed, mut failed) = (0, 0);
    for file in &files {
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let complete = std::env::var_os("TRIBUTARY_SLT_COMPLETE").is_some();
        let result: Result<(), String> = runtime.block_on(async {
            let mut runner = sqllogictest::Runner::new(|| async { TributaryDb::new() });
            if complete {
                // Rewrites the file's expected results from what Tributary answers now;
                // review the diff before committing it.
                runner
                    .update_test_file(
                        file,
                        " ",
                        sqllogictest::default_validator,
                        sqllogictest::default_normalizer,
                        sqllogictest::default_column_validator,
                    )
                    .await
                    .map_err(|e| e.to_string())
            } else {
                runner
                    .run_file_async(file)
                    .await
                    .map_err(|e| e.display(true).to_string())
            }
        });
        match result {
            Ok(()) => {
                passed += 1;
                println!("ok   {name}");
            }
            Err(e) => {
                failed += 1;
                println!("FAIL {name}\n{e}");
            }
        }
    }
    println!("sqllogictest: {passed} passed, {failed} failed");
    if failed > 0 {
        std::process::exit(1);
    }
}
