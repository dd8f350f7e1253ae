//! `tributary apply` on both stores and over a server: the catalog is made to match the
//! files in one batch (created, changed in place, replaced only when allowed, pruned
//! only when asked); a saved plan applies exactly and is refused once the catalog has
//! changed; any failure applies nothing; no secret is printed, and the stored secrets a
//! dump stands for are kept.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::catalog_files::{self, text};
use common::server::{Server, TOKEN};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;
use tributary_catalog::testing::PgSchema;
use tributary_catalog::{CatalogStore, PostgresStore, SledStore};

const SECRET: &str = "hunter2-apply-marker";

fn tributary(catalog: impl AsRef<OsStr>, args: &[&str]) -> Output {
    catalog_files::tributary(catalog, args, SECRET)
}

fn setup() -> String {
    catalog_files::setup(SECRET)
}

/// `script` without the statement that begins with `start`.
fn without(script: &str, start: &str) -> String {
    let at = script.find(start).unwrap();
    let end = at + script[at..].find(");").unwrap() + 2;
    format!("{}{}", &script[..at], &script[end..])
}

/// On `catalog` (a directory or a PostgreSQL URL), with `open` reading its records once
/// no process holds it.
fn applies_on(catalog: &str, files: &Path, open: &dyn Fn() -> Box<dyn CatalogStore>) {
    let made = tributary(catalog, &["run", "-c", &setup()]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let script = text(&tributary(catalog, &["catalog", "dump"]).stdout);
    std::fs::create_dir_all(files).unwrap();
    let file = files.join("catalog.sql");
    let dir = files.to_str().unwrap();
    let plan_file = files.parent().unwrap().join("reviewed.plan");
    let plan_path = plan_file.to_str().unwrap();
    let dump = || text(&tributary(catalog, &["catalog", "dump"]).stdout);
    let (orders_id, orders_created) = {
        let store = open();
        let t = store.table_by_name("orders").unwrap().unwrap();
        (t.id, t.created_at)
    };

    // Nothing to do: apply says so and changes nothing.
    std::fs::write(&file, &script).unwrap();
    let same = tributary(catalog, &["apply", dir]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    assert!(
        text(&same.stdout).contains("No changes"),
        "{}",
        text(&same.stdout)
    );
    assert_eq!(dump(), script);

    // A change, a creation, a removal and a changed host in a URL whose credentials the
    // dump wrote as a reference: planned, saved, reviewed, applied exactly.
    let edited = without(&script, "CREATE TABLE \"ticks\"")
        .replace("'topic' = 'orders'", "'topic' = 'orders_v2'")
        .replace("@h:6379", "@h2:6379")
        + "\nCREATE TABLE bids WITH (connector = 'nexmark', event_rate = '5');\n";
    std::fs::write(&file, &edited).unwrap();
    let planned = tributary(catalog, &["plan", "--prune", "--out", plan_path, dir]);
    assert_eq!(planned.status.code(), Some(2), "{}", text(&planned.stderr));
    let saved = std::fs::read_to_string(&plan_file).unwrap();
    assert!(!saved.contains(SECRET), "{saved}");
    // What is applied is what was planned, not the files as they are by then.
    std::fs::write(&file, "CREATE TABLE nonsense WITH (connector = 'nope');").unwrap();
    let applied = tributary(catalog, &["apply", "--plan-file", plan_path]);
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stderr));
    let shown = text(&applied.stdout);
    for line in [
        "+ table bids",
        "~ table orders",
        "    option 'topic': 'orders' -> 'orders_v2'",
        "~ profile r",
        "- table ticks",
        "Applied: 1 created, 2 changed, 0 replaced, 1 dropped.",
    ] {
        assert!(shown.contains(line), "{line} missing:\n{shown}");
    }
    // The changed profile's statement said validate = false (as a dump's do): a note, as
    // `run` of that statement gives.
    let said = text(&applied.stderr);
    assert!(
        said.contains("note: the connection was not tested (validate = false)"),
        "{said}"
    );
    std::fs::write(&file, &edited).unwrap();
    let now = tributary(catalog, &["plan", "--prune", dir]);
    assert_eq!(now.status.code(), Some(0), "{}", text(&now.stdout));
    {
        let store = open();
        let orders = store.table_by_name("orders").unwrap().unwrap();
        assert_eq!((orders.id, orders.created_at), (orders_id, orders_created));
        // The stored secrets the dump's references stand for are kept, in the changed
        // address too.
        let r = serde_json::to_string(&store.profile_by_name("r").unwrap().unwrap()).unwrap();
        assert!(r.contains(&format!("bob:{SECRET}@h2:6379")), "{r}");
        assert!(!r.contains("TRIBUTARY_SECRET"), "{r}");
        let k = serde_json::to_string(&store.profile_by_name("k").unwrap().unwrap()).unwrap();
        assert!(k.contains(SECRET) && !k.contains("TRIBUTARY_SECRET"), "{k}");
    }

    // A saved plan whose catalog has changed since is refused.
    let current = dump();
    std::fs::write(&file, current.replace("'orders_v2'", "'orders_v3'")).unwrap();
    let planned = tributary(catalog, &["plan", "--out", plan_path, dir]);
    assert_eq!(planned.status.code(), Some(2), "{}", text(&planned.stderr));
    let meanwhile = tributary(
        catalog,
        &[
            "run",
            "-c",
            "CREATE TABLE meanwhile WITH (connector = 'impulse', event_rate = '1');",
        ],
    );
    assert!(meanwhile.status.success(), "{}", text(&meanwhile.stderr));
    let before = dump();
    let stale = tributary(catalog, &["apply", "--plan-file", plan_path]);
    assert_eq!(stale.status.code(), Some(1));
    let err = text(&stale.stderr);
    assert!(
        err.contains("has changed since the plan was made") && err.contains("plan --out"),
        "{err}"
    );
    assert_eq!(dump(), before);

    // A replacement needs --allow-replace.
    let replacing = before.replace(
        "CREATE TABLE \"meanwhile\" WITH (\n  connector = 'impulse'",
        "CREATE TABLE \"meanwhile\" WITH (\n  connector = 'nexmark'",
    );
    assert_ne!(replacing, before, "{before}");
    std::fs::write(&file, &replacing).unwrap();
    let refused = tributary(catalog, &["apply", dir]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        text(&refused.stdout).contains("-/+ table meanwhile"),
        "{}",
        text(&refused.stdout)
    );
    assert!(
        text(&refused.stderr).contains("--allow-replace"),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(dump(), before);
    let replaced = tributary(catalog, &["apply", "--allow-replace", dir]);
    assert_eq!(
        replaced.status.code(),
        Some(0),
        "{}",
        text(&replaced.stderr)
    );
    assert!(
        text(&replaced.stdout).contains("1 replaced"),
        "{}",
        text(&replaced.stdout)
    );

    // A failure anywhere applies nothing: a new profile whose connection test fails
    // (nothing listens on port 1), among other changes.
    let before = dump();
    std::fs::write(
        &file,
        before.replace("'orders_v2'", "'orders_v4'")
            + "\nCREATE CONNECTION PROFILE dead WITH (connector = 'redis', address = 'redis://127.0.0.1:1');\n",
    )
    .unwrap();
    let failed = tributary(catalog, &["apply", dir]);
    assert_eq!(failed.status.code(), Some(1));
    let err = text(&failed.stderr);
    assert!(
        err.contains("'dead'")
            && err.contains("catalog.sql:")
            && err.contains("nothing was applied"),
        "{err}"
    );
    assert_eq!(dump(), before);

    // Invalid files: their diagnostics, nothing applied.
    std::fs::write(
        &file,
        "CREATE TABLE t WITH (connector = 'impulse', event_rat = '1');",
    )
    .unwrap();
    let invalid = tributary(catalog, &["apply", "--prune", dir]);
    assert_eq!(invalid.status.code(), Some(1));
    assert!(
        text(&invalid.stderr).contains("event_rat"),
        "{}",
        text(&invalid.stderr)
    );
    assert_eq!(dump(), before);
}

#[test]
fn apply_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let at = catalog.clone();
    applies_on(
        catalog.to_str().unwrap(),
        &dir.path().join("files"),
        &move || Box::new(SledStore::open(&at).unwrap()),
    );
}

#[test]
fn apply_on_postgresql() {
    let dir = tempfile::tempdir().unwrap();
    let schema = PgSchema::new();
    let url = schema.url.clone();
    applies_on(&schema.url, &dir.path().join("files"), &move || {
        Box::new(PostgresStore::open(&url).unwrap())
    });
}

#[test]
fn apply_over_a_server_changes_its_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("cat");
    let made = tributary(&catalog, &["run", "-c", &setup()]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let script = text(&tributary(&catalog, &["catalog", "dump"]).stdout);
    let files = dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(
        files.join("catalog.sql"),
        script.replace("'topic' = 'orders'", "'topic' = 'orders_v2'"),
    )
    .unwrap();
    let server = Server::start(&catalog, dir.path().join("serve.log"));
    let elsewhere = dir.path().join("unused");
    let plan_file = dir.path().join("reviewed.plan");
    let over = |args: &[&str]| {
        let mut all = vec!["--server", server.url.as_str(), "--token", TOKEN];
        all.extend_from_slice(args);
        tributary(&elsewhere, &all)
    };
    let planned = over(&[
        "plan",
        "--out",
        plan_file.to_str().unwrap(),
        files.to_str().unwrap(),
    ]);
    assert_eq!(planned.status.code(), Some(2), "{}", text(&planned.stderr));
    let applied = over(&["apply", "--plan-file", plan_file.to_str().unwrap()]);
    assert_eq!(applied.status.code(), Some(0), "{}", text(&applied.stderr));
    assert!(
        text(&applied.stdout).contains("Applied: 0 created, 1 changed"),
        "{}",
        text(&applied.stdout)
    );
    // The same plan again: the catalog has changed since (by that very apply).
    let stale = over(&["apply", "--plan-file", plan_file.to_str().unwrap()]);
    assert_eq!(stale.status.code(), Some(1));
    assert!(
        text(&stale.stderr).contains("409") && text(&stale.stderr).contains("has changed"),
        "{}",
        text(&stale.stderr)
    );
    let same = over(&["plan", files.to_str().unwrap()]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stdout));
    // Invalid files: the server's diagnostics in the file they point into.
    std::fs::write(
        files.join("more.sql"),
        "\nCREATE VIEW w AS SELECT * FROM nowhere;",
    )
    .unwrap();
    let invalid = over(&["apply", files.to_str().unwrap()]);
    assert_eq!(invalid.status.code(), Some(1));
    let err = text(&invalid.stderr);
    assert!(
        err.contains("more.sql:2:") && err.contains("nothing was applied"),
        "{err}"
    );
    drop(server);
    let store = SledStore::open(&catalog).unwrap();
    let orders = store.table_by_name("orders").unwrap().unwrap();
    assert_eq!(orders.config["topic"], "orders_v2");
    assert!(store.table_by_name("w").unwrap().is_none());
}
