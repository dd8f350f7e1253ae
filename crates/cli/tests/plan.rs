//! `tributary plan` on both stores: a catalog's own dump plans nothing; changes, creations
//! and drops are listed with their details and exit 2; invalid files exit 1 with their
//! diagnostics; no secret is ever printed.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::catalog_files::{self, text};
use common::server::{Server, TOKEN};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;
use tributary_catalog::testing::PgSchema;

const SECRET: &str = "hunter2-plan-marker";

fn tributary(catalog: impl AsRef<OsStr>, args: &[&str]) -> Output {
    catalog_files::tributary(catalog, args, SECRET)
}

fn setup() -> String {
    catalog_files::setup(SECRET)
}

/// On `catalog` (a directory or a PostgreSQL URL): the dump plans nothing, edits plan
/// what they change.
fn plans_on(catalog: &str, files: &Path) {
    let made = tributary(catalog, &["run", "-c", &setup()]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let dumped = tributary(catalog, &["catalog", "dump"]);
    assert!(dumped.status.success(), "{}", text(&dumped.stderr));
    let script = text(&dumped.stdout);
    std::fs::create_dir_all(files.join("more")).unwrap();
    std::fs::write(files.join("catalog.sql"), &script).unwrap();
    let dir = files.to_str().unwrap();

    let same = tributary(catalog, &["plan", dir]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(
        text(&same.stdout).contains("No changes: the catalog matches the files."),
        "{}",
        text(&same.stdout)
    );

    // An edit, an addition in a subdirectory, a removal.
    let edited = script
        .replace("'topic' = 'orders'", "'topic' = 'orders_v2'")
        .replace("\"amount\" DOUBLE", "\"amount\" DOUBLE,\n  \"note\" TEXT");
    let without_ticks: String = {
        let start = edited.find("CREATE TABLE \"ticks\"").unwrap();
        let end = start + edited[start..].find(");").unwrap() + 2;
        format!("{}{}", &edited[..start], &edited[end..])
    };
    std::fs::write(files.join("catalog.sql"), &without_ticks).unwrap();
    std::fs::write(
        files.join("more/new.sql"),
        "CREATE TABLE bids WITH (connector = 'nexmark', event_rate = '5');",
    )
    .unwrap();
    let changed = tributary(catalog, &["plan", dir]);
    assert_eq!(changed.status.code(), Some(2), "{}", text(&changed.stderr));
    let shown = text(&changed.stdout);
    for line in [
        "+ table bids",
        "~ table orders",
        "    column \"note\": (none) -> TEXT",
        "    option 'topic': 'orders' -> 'orders_v2'",
        "Plan: 1 to create, 1 to change, 0 to replace, 0 to drop; 1 kept",
    ] {
        assert!(shown.contains(line), "{line} missing:\n{shown}");
    }
    let pruned = tributary(catalog, &["--format", "json", "plan", "--prune", dir]);
    assert_eq!(pruned.status.code(), Some(2), "{}", text(&pruned.stderr));
    let json: serde_json::Value = serde_json::from_slice(&pruned.stdout).unwrap();
    assert_eq!(json["summary"]["drop"], 1, "{json}");
    assert!(
        json["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["action"] == "drop" && c["name"] == "ticks"),
        "{json}"
    );
    // A secret changed is said to have changed, never shown.
    std::fs::write(
        files.join("catalog.sql"),
        without_ticks.replace(
            "'auth.password' = '{{ TRIBUTARY_SECRET_K_AUTH_PASSWORD }}'",
            "'auth.password' = 'rotated'",
        ),
    )
    .unwrap();
    let rotated = tributary(catalog, &["plan", dir]);
    let shown = text(&rotated.stdout);
    assert!(
        shown.contains("~ profile k\n    option 'auth.password': (secret) -> (secret)"),
        "{shown}"
    );
    assert!(!shown.contains("rotated"), "{shown}");

    // Invalid files: their diagnostics, exit 1, nothing compared.
    std::fs::write(
        files.join("more/new.sql"),
        "CREATE TABLE bids WITH (connector = 'nexmark', event_rat = '5');",
    )
    .unwrap();
    let invalid = tributary(catalog, &["plan", dir]);
    assert_eq!(invalid.status.code(), Some(1));
    let err = text(&invalid.stderr);
    assert!(
        err.contains("unknown option 'event_rat' for table 'bids'") && err.contains("new.sql:1:"),
        "{err}"
    );
    assert!(text(&invalid.stdout).is_empty());
    // Nothing was written by any of it.
    let after = tributary(catalog, &["catalog", "dump"]);
    assert_eq!(text(&after.stdout), script);
}

#[test]
fn plan_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    plans_on(catalog.to_str().unwrap(), &dir.path().join("files"));
}

#[test]
fn plan_on_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let schema = PgSchema::new();
    plans_on(&schema.url, &dir.path().join("files"));
}

#[test]
fn a_missing_path_or_an_empty_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let out = tributary(
        &catalog,
        &["plan", dir.path().join("nowhere.sql").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot read"),
        "{}",
        text(&out.stderr)
    );
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    let out = tributary(
        &catalog,
        &["plan", dir.path().join("empty").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("holds no .sql file"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn plan_over_a_server_plans_against_its_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let made = tributary(&catalog, &["run", "-c", &setup()]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let script = text(&tributary(&catalog, &["catalog", "dump"]).stdout);
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("catalog.sql"), &script).unwrap();
    let server = Server::start(&catalog, dir.path().join("serve.log"));
    let elsewhere = dir.path().join("unused");
    let over = |extra: &[&str]| {
        let mut args = vec!["--server", server.url.as_str(), "--token", TOKEN, "plan"];
        args.extend_from_slice(extra);
        args.push(files.to_str().unwrap());
        tributary(&elsewhere, &args)
    };
    let same = over(&[]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(
        text(&same.stdout).contains("No changes"),
        "{}",
        text(&same.stdout)
    );
    std::fs::write(
        files.join("catalog.sql"),
        script.replace("'topic' = 'orders'", "'topic' = 'orders_v2'"),
    )
    .unwrap();
    let changed = over(&[]);
    assert_eq!(changed.status.code(), Some(2), "{}", text(&changed.stderr));
    assert!(
        text(&changed.stdout).contains("    option 'topic': 'orders' -> 'orders_v2'"),
        "{}",
        text(&changed.stdout)
    );
    // The server's diagnostics, shown in the file they point into.
    std::fs::write(
        files.join("more.sql"),
        "\nCREATE VIEW w AS SELECT * FROM nowhere;",
    )
    .unwrap();
    let invalid = over(&[]);
    assert_eq!(invalid.status.code(), Some(1));
    let err = text(&invalid.stderr);
    assert!(
        err.contains("more.sql:2:") && err.contains("nowhere"),
        "{err}"
    );
    drop(server);
}
