//! `tributary arroyo push` and `pull` against a second `tributary serve` acting as the
//! Arroyo API (the shapes are the same): ids mapped, reruns skip what is unchanged,
//! differences reported or replaced, refusals explained, secrets kept as written and
//! never printed.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

mod common;

use common::server::{Server, TOKEN};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use tributary_catalog::{CatalogStore, SledStore};

const SECRET: &str = "hunter2-sync-secret";

fn tributary(catalog: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .env_remove("TRIBUTARY_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(!text.contains(SECRET), "a secret was printed:\n{text}");
        assert!(!text.contains(TOKEN), "the token was printed:\n{text}");
    }
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(catalog: &Path, sql: &str) {
    let out = tributary(catalog, &["run", "-c", sql]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

fn sync(catalog: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["--token", TOKEN, "arroyo"];
    all.extend_from_slice(args);
    let out = tributary(catalog, &all);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    (out.status.code(), said)
}

const SETUP: &str = "
CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'localhost:9092', validate = false);
CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://localhost:6379', password = 'hunter2-sync-secret', validate = false);
CREATE TABLE orders (id BIGINT, amount DOUBLE) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');
CREATE TABLE cache (id TEXT NOT NULL, v BIGINT) WITH (connector = 'redis', connection_profile = 'r', type = 'sink', target = 'string', 'target.key_prefix' = 'c:', 'target.key_column' = id, format = 'json');
CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');
";

#[test]
fn push_creates_maps_skips_reports_and_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there) = (dir.path().join("here"), dir.path().join("there"));
    run(&here, SETUP);
    let mut server = Server::start(&there, dir.path().join("serve.log"));
    let url = server.url.clone();

    let (code, said) = sync(&here, &["push", &url]);
    assert_eq!(code, Some(0), "{said}");
    for line in [
        "profile k: created (cp_",
        "profile r: created (cp_",
        "table cache: created (ct_",
        "table orders: created (ct_",
        "table ticks: created (ct_",
    ] {
        assert!(said.contains(line), "{line} missing:\n{said}");
    }
    assert!(
        said.contains(&format!("pushed to {url}: 5 created")),
        "{said}"
    );

    // Again: nothing to do.
    let (code, said) = sync(&here, &["push", &url]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(": 5 unchanged"), "{said}");

    // A table changed here differs there until it is replaced.
    run(
        &here,
        "DROP TABLE orders; CREATE TABLE orders (id BIGINT, amount DOUBLE, note TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');",
    );
    let (code, said) = sync(&here, &["push", &url, "orders"]);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("table orders: differs (schema), left as it is"),
        "{said}"
    );
    assert!(
        !said.contains("table cache"),
        "only orders and its profile:\n{said}"
    );
    let (code, said) = sync(&here, &["push", "--replace", &url, "orders"]);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("table orders: replaced, its schema differed"),
        "{said}"
    );
    let (code, said) = sync(&here, &["push", &url]);
    assert_eq!(code, Some(0), "{said}");

    let (code, said) = sync(&here, &["push", &url, "ordres"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("table 'ordres' does not exist; did you mean 'orders'?"),
        "{said}"
    );
    let (code, said) = sync(&here, &["push", "ftp://example.com"]);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("bad Arroyo API URL"), "{said}");
    // Credentials belong in --token; the URL's are refused, and never repeated.
    let (code, said) = sync(
        &here,
        &["push", &format!("http://admin:{SECRET}@127.0.0.1:9/")],
    );
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("without credentials"), "{said}");

    // The API got the secret as written.
    server.stop();
    let store = SledStore::open(&there).unwrap();
    let r = store.profile_by_name("r").unwrap().unwrap();
    assert!(r.config.to_string().contains(SECRET));
    let orders = store.table_by_name("orders").unwrap().unwrap();
    assert_eq!(orders.schema.fields.len(), 3);
}

#[test]
fn pull_imports_validates_and_reports_refusals_and_redacted_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let (there, here) = (dir.path().join("there"), dir.path().join("here"));
    run(&there, SETUP);
    let server = Server::start(&there, dir.path().join("serve.log"));
    // Here, `ticks` is a view's name already: the table cannot be made.
    run(&here, "CREATE VIEW ticks AS SELECT 1 AS x;");

    let (code, said) = sync(&here, &["pull", &server.url]);
    assert_eq!(code, Some(1), "{said}");
    for line in [
        "profile k: created (cp_",
        "profile r: created (cp_",
        "table cache: created (ct_",
        "table orders: created (ct_",
        "table ticks: refused: ",
        "note: a secret arrived redacted and is stored as {{ TRIBUTARY_SECRET_R_PASSWORD }}",
    ] {
        assert!(said.contains(line), "{line} missing:\n{said}");
    }
    assert!(said.contains(": 4 created, 1 refused"), "{said}");

    // Again: what was imported is unchanged, the refusal stands.
    let (code, said) = sync(&here, &["pull", &server.url]);
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains(": 4 unchanged, 1 refused"), "{said}");

    drop(server);
    let out = tributary(&here, &["run", "-c", "SHOW CREATE TABLE orders"]);
    assert!(
        text(&out.stdout).contains("'orders'"),
        "{}",
        text(&out.stdout)
    );
}

/// Tables of every kind the REST API takes: formats, metadata, generated columns, a
/// watermark, a lookup with its cache options, generators, sinks.
const WHOLE: &str = "
CREATE TABLE clicks (user_id BIGINT NOT NULL, page TEXT, ts TIMESTAMP NOT NULL, part INT METADATA FROM 'partition', page_len BIGINT GENERATED ALWAYS AS (length(page)), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'kafka', connection_profile = 'k', topic = 'clicks', type = 'source', format = 'json', bad_data = 'drop');
CREATE TABLE raw_lines WITH (connector = 'kafka', connection_profile = 'k', topic = 'raw', type = 'source', format = 'raw_string');
CREATE TABLE changes (id BIGINT PRIMARY KEY, v TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'changes', type = 'source', format = 'debezium_json');
CREATE TEMPORARY TABLE users (id TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT) WITH (connector = 'redis', connection_profile = 'r', format = 'json', type = 'lookup', 'lookup.cache.max_bytes' = 100000, 'lookup.cache.ttl' = INTERVAL '1' MINUTE);
CREATE TABLE bids WITH (connector = 'nexmark', event_rate = '5');
CREATE TABLE counted WITH (connector = 'impulse', event_rate = '0', message_count = '10', event_time_interval = '1000');
CREATE TABLE out (user_id BIGINT, n BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'out', type = 'sink', format = 'json');
CREATE TABLE dropped (x BIGINT) WITH (connector = 'blackhole');
";

/// Every table of a catalog as what it means: its role, config, columns, generated
/// columns and watermark, by name (ids differ from catalog to catalog).
fn tables(catalog: &Path) -> Vec<(String, serde_json::Value)> {
    let store = SledStore::open(catalog).unwrap();
    let mut out: Vec<(String, serde_json::Value)> = store
        .tables()
        .unwrap()
        .into_iter()
        .map(|t| {
            let meaning = serde_json::json!({
                "role": t.connection_type.as_str(),
                "connector": t.connector,
                "config": t.config,
                "fields": t.schema.fields,
                "format": t.schema.format,
                "primary_keys": t.schema.primary_keys,
                "virtual_columns": t.virtual_columns.iter().map(|v| (&v.name, &v.expression)).collect::<Vec<_>>(),
                "watermark": t.watermark,
            });
            (t.name, meaning)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_whole_catalog_pushed_to_a_tributary_server_and_pulled_back_dumps_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (here, there, back) = (
        dir.path().join("here"),
        dir.path().join("there"),
        dir.path().join("back"),
    );
    run(&here, &format!("{SETUP}{WHOLE}"));
    let server = Server::start(&there, dir.path().join("serve.log"));

    let (code, said) = sync(&here, &["push", &server.url]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(": 13 created"), "{said}");
    assert!(
        !said.contains("refused") && !said.contains("note:"),
        "{said}"
    );
    // Nothing was lost: a second push finds every table the same.
    let (code, said) = sync(&here, &["push", &server.url]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(": 13 unchanged"), "{said}");

    let (code, said) = sync(&back, &["pull", &server.url]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(": 13 created"), "{said}");
    // Pulled back, each table means what it meant here.
    let (code, said) = sync(&back, &["push", &server.url]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains(": 13 unchanged"), "{said}");
    drop(server);
    let (here_tables, back_tables) = (tables(&here), tables(&back));
    assert_eq!(here_tables.len(), 11);
    for (h, b) in here_tables.iter().zip(&back_tables) {
        assert_eq!(h, b);
    }
    // And the two catalogs dump the same script, statement for statement.
    let dump = |catalog: &Path| {
        let out = tributary(catalog, &["catalog", "dump"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let (here_dump, back_dump) = (dump(&here), dump(&back));
    assert!(
        here_dump.contains("CREATE TEMPORARY TABLE \"users\""),
        "{here_dump}"
    );
    assert_eq!(here_dump, back_dump);
}
