//! What the tests of commands over a catalog's files share: the binary run against a
//! catalog (with every output checked for a secret, where one is given), and a
//! catalog's files that hold secrets.

#![allow(dead_code)] // Each test file uses what it needs.

use std::ffi::OsStr;
use std::process::{Command, Output, Stdio};

/// Run the binary on `catalog` (a directory or a PostgreSQL URL) with `args`, without
/// colour, input or the environment's catalog.
pub fn run_on(catalog: impl AsRef<OsStr>, args: &[impl AsRef<OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("the binary runs")
}

/// [`run_on`], failing the test if `secret` appears in what it printed.
pub fn tributary(catalog: impl AsRef<OsStr>, args: &[&str], secret: &str) -> Output {
    let out = run_on(catalog, args);
    for stream in [&out.stdout, &out.stderr] {
        let text = String::from_utf8_lossy(stream);
        assert!(!text.contains(secret), "a secret was printed:\n{text}");
    }
    out
}

/// Bytes printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A catalog's files: two profiles holding `secret`, a source, a lookup table, a
/// table without a profile, a declared function and a view.
pub fn setup(secret: &str) -> String {
    format!(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'b:9092', 'auth.type' = 'sasl', 'auth.protocol' = 'SASL_SSL', 'auth.mechanism' = 'PLAIN', 'auth.username' = 'svc', 'auth.password' = '{secret}', validate = false);
         CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://bob:{secret}@h:6379', validate = false);
         CREATE TABLE orders (id BIGINT NOT NULL, amount DOUBLE, ts TIMESTAMP NOT NULL, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'json');
         CREATE TEMPORARY TABLE users (id TEXT METADATA FROM 'key' PRIMARY KEY, name TEXT) WITH (connector = 'redis', connection_profile = 'r', format = 'json', type = 'lookup', 'lookup.cache.ttl' = INTERVAL '1' MINUTE);
         CREATE TABLE ticks WITH (connector = 'impulse', event_rate = '10');
         CREATE FUNCTION double_it(x BIGINT) RETURNS BIGINT;
         CREATE VIEW big AS SELECT id FROM orders WHERE amount > 100;"
    )
}
