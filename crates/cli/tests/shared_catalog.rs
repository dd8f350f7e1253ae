//! A catalog in PostgreSQL, shared by real processes: racing `tributary run`s, a server
//! that sees another process's change at once, and `catalog copy` between a directory
//! and a database, both ways, with secrets kept as written and the database password
//! never printed.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::server::{Server, TOKEN};
use std::ffi::OsStr;
use std::process::{Command, Output, Stdio};
use tributary_catalog::testing::PgSchema;
use tributary_catalog::{CatalogStore, PostgresStore};

/// A password the URL carries: the server trusts loopback, so it is never checked, and
/// it must never be printed.
const DB_PASSWORD: &str = "db-pass-Wq73";

fn with_password(url: &str) -> String {
    url.replacen(
        "postgres://postgres@",
        &format!("postgres://postgres:{DB_PASSWORD}@"),
        1,
    )
}

fn tributary(catalog: impl AsRef<OsStr>, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(
            !text.contains(DB_PASSWORD),
            "the password was printed:\n{text}"
        );
    }
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const PROFILE: &str = "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);";

fn create_table(name: &str) -> String {
    format!(
        "CREATE TABLE {name} (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'o', type = 'source', format = 'json');"
    )
}

/// Run `scripts` as concurrent `tributary run` processes on `catalog`.
fn race(catalog: &str, scripts: &[String]) -> Vec<Output> {
    let children: Vec<_> = scripts
        .iter()
        .map(|script| {
            Command::new(env!("CARGO_BIN_EXE_tributary"))
                .args(["--catalog", catalog, "run", "-c", script])
                .env_remove("TRIBUTARY_CATALOG")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn racing_processes_create_one_table_and_the_others_are_told_it_exists() {
    let schema = PgSchema::new();
    let url = with_password(&schema.url);
    let out = tributary(&url, &["run", "-c", PROFILE], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    for round in 0..3 {
        let name = format!("orders{round}");
        let outs = race(&url, &vec![create_table(&name); 6]);
        let won = outs.iter().filter(|o| o.status.success()).count();
        assert_eq!(won, 1, "round {round}: {won} won");
        for lost in outs.iter().filter(|o| !o.status.success()) {
            let err = text(&lost.stderr);
            assert!(
                err.contains(&format!("table '{name}' already exists")),
                "round {round}: {err}"
            );
        }
    }
}

#[test]
fn a_profile_dropped_by_one_process_while_others_create_on_it_leaves_nothing_dangling() {
    let schema = PgSchema::new();
    for round in 0..4 {
        let out = tributary(&schema.url, &["run", "-c", PROFILE], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut scripts = vec!["DROP CONNECTION PROFILE k;".to_string()];
        scripts.extend((0..5).map(|w| create_table(&format!("r{round}_{w}"))));
        let outs = race(&schema.url, &scripts);
        let store = PostgresStore::open(&schema.url).unwrap();
        for t in store.tables().unwrap() {
            if let Some(p) = &t.profile {
                assert!(store.profile(p).unwrap().is_some(), "{} dangles", t.name);
            }
        }
        let made = outs[1..].iter().filter(|o| o.status.success()).count();
        if outs[0].status.success() {
            assert_eq!(
                made, 0,
                "round {round}: tables were made on a dropped profile"
            );
        } else {
            let err = text(&outs[0].stderr);
            assert!(err.contains("is used by"), "round {round}: {err}");
            assert!(made >= 1, "round {round}");
            // Clear the round's tables and profile for the next one.
            let out = tributary(
                &schema.url,
                &["run", "-c", "DROP CONNECTION PROFILE k CASCADE"],
                "",
            );
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }
}

#[test]
fn check_on_a_database_without_a_catalog_reads_it_as_empty_and_creates_nothing() {
    let schema = PgSchema::new();
    let script = format!("{PROFILE}\n{}", create_table("orders"));
    let out = tributary(&schema.url, &["check", "-c", &script], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = tributary(&schema.url, &["catalog", "dump"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(PostgresStore::open_existing(&schema.url).unwrap().is_none());
}

#[test]
fn a_server_sees_a_table_another_process_created_on_its_next_request() {
    let schema = PgSchema::new();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_shared(&schema.url, dir.path().join("serve.log"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::new();
    let names = || -> Vec<String> {
        let body: serde_json::Value = runtime.block_on(async {
            let answer = http
                .get(format!("{}/api/v1/connection_tables", server.url))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap();
            serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap()
        });
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names().is_empty());
    let script = format!("{PROFILE}\n{}", create_table("orders"));
    let out = tributary(&schema.url, &["run", "-c", &script], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // No waiting: the server checks the catalog's version before each request.
    assert_eq!(names(), ["orders"]);
    let out = tributary(&schema.url, &["run", "-c", "DROP TABLE orders"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(names().is_empty(), "a cached page outlived the drop");
}

/// A change with no notification (as a process whose NOTIFY was lost, or one that
/// wrote the rows itself, would leave it): the version check before each request is
/// what finds it.
#[test]
fn a_server_sees_a_change_that_sent_no_notification_on_its_next_request() {
    let schema = PgSchema::new();
    let dir = tempfile::tempdir().unwrap();
    let script = format!("{PROFILE}\n{}", create_table("orders"));
    let out = tributary(&schema.url, &["run", "-c", &script], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let server = Server::start_shared(&schema.url, dir.path().join("serve.log"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::new();
    let get = |path: &str| -> (u16, serde_json::Value) {
        runtime.block_on(async {
            let answer = http
                .get(format!("{}/api/v1{path}", server.url))
                .bearer_auth(TOKEN)
                .send()
                .await
                .unwrap();
            let status = answer.status().as_u16();
            (
                status,
                serde_json::from_slice(&answer.bytes().await.unwrap()).unwrap(),
            )
        })
    };
    // Read twice, so the server holds the page and the table in its caches.
    for _ in 0..2 {
        let (status, body) = get("/connection_tables");
        assert_eq!(status, 200);
        assert_eq!(body["data"][0]["name"], "orders", "{body}");
        assert_eq!(get("/connection_tables/orders").0, 200);
    }
    // Another writer drops the table and bumps the version, and notifies nobody.
    schema.execute(
        "BEGIN; DELETE FROM tributary_tables WHERE name_key = 'orders'; \
         UPDATE tributary_version_slots SET version = version + 1 WHERE slot = 63; COMMIT",
    );
    let (_, body) = get("/connection_tables");
    assert_eq!(
        body["data"],
        serde_json::json!([]),
        "a cached page outlived the change"
    );
    let (status, body) = get("/connection_tables/orders");
    assert_eq!(status, 404, "{body}");
}

#[test]
fn a_catalog_copied_to_postgres_and_back_dumps_the_same_and_copy_never_merges() {
    let dir = tempfile::tempdir().unwrap();
    let (first, last) = (dir.path().join("first"), dir.path().join("last"));
    let schema = PgSchema::new();
    let url = with_password(&schema.url);
    let script = format!(
        "{PROFILE}
{}
CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://localhost:6379', password = 'hunter2-in-clear', validate = false);
CREATE CONNECTION PROFILE r2 WITH (connector = 'redis', address = 'redis://localhost:6379', password = '{{{{ REDIS_PASSWORD }}}}', validate = false);
CREATE FUNCTION to_cents(amount DOUBLE) RETURNS BIGINT;
CREATE VIEW recent AS SELECT id, to_cents(1.5) AS c FROM orders;
",
        create_table("orders")
    );
    let out = tributary(&first, &["run"], &script);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = tributary(
        &first,
        &["catalog", "copy", first.to_str().unwrap(), &url],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("copied 3 profiles, 1 table, 1 view and 1 function"),
        "{said}"
    );
    assert!(
        said.contains("postgres://postgres@127.0.0.1:5432/"),
        "{said}"
    );

    // The database is a catalog like any other: run, check and dump work on it.
    let out = tributary(&url, &["check", "-c", "SELECT * FROM recent"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = tributary(
        &first,
        &["catalog", "copy", &url, last.to_str().unwrap()],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dump = |catalog: &OsStr| text(&tributary(catalog, &["catalog", "dump"], "").stdout);
    let original = dump(first.as_os_str());
    assert!(original.contains("CREATE VIEW"), "{original}");
    assert_eq!(dump(last.as_os_str()), original);
    assert_eq!(dump(OsStr::new(&url)), original);
    // Secrets are kept as written, not as the dump's references.
    let store = PostgresStore::open(&schema.url).unwrap();
    let r = store.profile_by_name("r").unwrap().unwrap();
    assert!(r.config.to_string().contains("hunter2-in-clear"));
    drop(store);

    // Never into a catalog that holds anything.
    let out = tributary(
        &first,
        &["catalog", "copy", last.to_str().unwrap(), &url],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("is not empty: it holds 3 profiles, 1 table"),
        "{err}"
    );
    let out = tributary(
        &first,
        &["catalog", "copy", "/nonexistent/catalog", &url],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("there is no catalog at"));
}
