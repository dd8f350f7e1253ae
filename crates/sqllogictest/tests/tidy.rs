//! Repository hygiene: every Rust file opens with a `//!` line saying what it is, the SQL
//! crates depend only downward (ARCHITECTURE.md, "Crate layers"), and the user docs
//! mention every generic and format option the code accepts.

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

/// The names in a manifest's `[dependencies]` table (not dev- or build-dependencies).
fn library_dependencies(krate: &str) -> Vec<String> {
    let path = root().join("crates").join(krate).join("Cargo.toml");
    let manifest = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(!manifest.is_empty(), "cannot read {}", path.display());
    let mut in_dependencies = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['.', '=', ' ']).next().unwrap_or_default();
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn the_sql_crates_depend_only_downward() {
    const BELOW: [&str; 5] = [
        "tributary-types",
        "tributary-formats",
        "tributary-connectors",
        "tributary-catalog",
        "tributary-registry",
    ];
    // Each SQL crate and the crates of this workspace it may use beside those below it.
    let layers: [(&str, &[&str]); 5] = [
        ("dialect", &[]),
        ("exec", &["tributary-dialect"]),
        ("sql", &["tributary-dialect", "tributary-exec"]),
        (
            "api",
            &["tributary-dialect", "tributary-exec", "tributary-sql"],
        ),
        ("complete", &["tributary-dialect", "tributary-sql"]),
    ];
    for (krate, allowed) in layers {
        let deps = library_dependencies(krate);
        assert!(deps.len() > 3, "{krate}: read only {deps:?}");
        for dep in deps.iter().filter(|d| d.starts_with("tributary-")) {
            assert!(
                BELOW.contains(&dep.as_str()) || allowed.contains(&dep.as_str()),
                "crates/{krate} depends on {dep}, which its layer may not use"
            );
        }
    }
    // The API's library half speaks no HTTP: the server routes.
    for dep in library_dependencies("api") {
        assert!(
            !["axum", "hyper", "tower", "tower-http"].contains(&dep.as_str()),
            "crates/api depends on {dep}"
        );
    }
}

#[test]
fn the_dialect_plans_and_never_executes() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/dialect/src"), &mut files);
    assert!(files.len() > 20, "found only {} files", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for word in [
            "ExecutionPlan",
            "execute_stream",
            "physical_plan",
            "create_physical_plan",
        ] {
            assert!(
                !text.contains(word),
                "{} names {word}: execution belongs in crates/exec",
                f.display()
            );
        }
    }
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
        // A prefix (`protobuf.import.`) is documented with its placeholder: `prefix.<path>`.
        .filter(|k| {
            let documented = doc.contains(&format!("`{k}`"))
                || (k.ends_with('.') && doc.contains(&format!("`{k}<")));
            !documented
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/sql.md does not mention: {missing:?}"
    );
}

/// The cells of the markdown table row whose first cell is `first`.
fn row<'a>(doc: &'a str, first: &str) -> Option<Vec<&'a str>> {
    doc.lines()
        .find(|l| l.starts_with(&format!("| {first} |")))
        .map(|l| l.trim_matches('|').split(" | ").map(str::trim).collect())
}

#[test]
fn sql_docs_list_every_format_and_every_tested_connector() {
    let doc = std::fs::read_to_string(root().join("docs/sql.md")).expect("docs/sql.md");
    // The `format` option's row names every format, as working today.
    let format = row(&doc, "`format`").expect("the `format` row").join(" | ");
    for f in tributary_formats::FORMATS {
        assert!(
            format.contains(&format!("`{}`", f.name)),
            "the `format` row does not name {}: {format}",
            f.name
        );
    }
    for stale in ["arrive", "later", "not yet"] {
        assert!(
            !format.contains(stale),
            "the `format` row says '{stale}': {format}"
        );
        for line in doc.lines().filter(|l| l.contains("TEST TABLE")) {
            assert!(
                !line.contains(stale),
                "a TEST TABLE line says '{stale}': {line}"
            );
        }
    }
    // The live-test table has a row for exactly the connectors that test live, and the
    // sentence after it names the others.
    let start = doc
        .find("| connector | what the test does |")
        .expect("the live-test table");
    let table: Vec<&str> = doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let listed: Vec<String> = table
        .iter()
        .flat_map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let after = &doc[start..];
    let untestable_sentence = after
        .lines()
        .skip(2 + table.len())
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .to_string();
    for entry in tributary_connectors::registry().iter() {
        let id = entry.connector.id().to_string();
        let tested = entry.connector.supports_testing();
        let in_table = listed.contains(&id);
        assert_eq!(
            tested,
            in_table,
            "connector '{id}': testing = {tested}, but docs/sql.md's live-test table {} it",
            if in_table { "lists" } else { "does not list" }
        );
        // Connectors without a profile or a source role (blackhole, stdout, impulse,
        // nexmark) have nothing to reach; the others that do not test must be named.
        let reaches_out = entry.profile_schema.is_some()
            || !matches!(id.as_str(), "blackhole" | "stdout" | "impulse" | "nexmark");
        if !tested && reaches_out {
            assert!(
                untestable_sentence.contains(&id),
                "docs/sql.md does not say that '{id}' answers NOT_TESTABLE: {untestable_sentence}"
            );
        }
    }
}
