//! Repository hygiene: every Rust file opens with a `//!` line saying what it is, and the
//! user docs mention every generic and format option the code accepts.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_rust_file_starts_with_a_module_doc() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    assert!(files.len() > 40, "found only {} files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap_or_default()
                .starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a //! line: {missing:#?}");
}

#[test]
fn sql_docs_cover_every_generic_and_format_option() {
    let doc = std::fs::read_to_string(root().join("docs/sql.md")).expect("docs/sql.md");
    let mut keys: Vec<&str> = tributary_sql::GENERIC_TABLE_OPTIONS
        .iter()
        .map(|o| o.key)
        .collect();
    keys.extend(tributary_sql::GENERIC_PROFILE_OPTIONS.iter().map(|o| o.key));
    keys.extend(
        tributary_formats::GENERIC_FORMAT_OPTIONS
            .iter()
            .map(|o| o.key),
    );
    for f in tributary_formats::FORMATS {
        keys.extend(
            f.options
                .iter()
                .map(|o| o.key)
                .filter(|k| *k != "json.schema"),
        );
    }
    let missing: Vec<&str> = keys
        .into_iter()
        .filter(|k| !doc.contains(&format!("`{k}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/sql.md does not mention: {missing:?}"
    );
}
