//! Secrets through the binary: `check` never connects (so never sends credentials to an
//! address a script chose), quoted source lines mask secrets in every diagnostic, result
//! sets in every output format redact them, and the catalog and history are owner-only
//! whatever the umask.

#![allow(clippy::unwrap_used)] // Test helpers panic on failure, like the tests themselves.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const S: &str = "Sup3r-S3cret-Value";

fn tributary(catalog: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tributary"))
        .arg("--catalog")
        .arg(catalog)
        .args(args)
        .env_remove("TRIBUTARY_CATALOG")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn check_never_connects_even_to_fetch_a_registry_schema() {
    let dir = tempfile::tempdir().unwrap();
    // A registry that would receive the credentials: it must see nobody.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = '127.0.0.1:{port}', 'schema_registry.endpoint' = 'http://127.0.0.1:{port}', 'schema_registry.api_key' = '{{{{ SR_KEY }}}}', 'schema_registry.api_secret' = '{{{{ SR_SECRET }}}}');\n\
         CREATE TABLE orders WITH (connector = 'kafka', connection_profile = 'k', topic = 'orders', type = 'source', format = 'avro', 'avro.confluent_schema_registry' = true);\n\
         TEST CONNECTION PROFILE k;\n\
         SHOW TOPICS IN PROFILE k;\n\
         CREATE TABLE sampled (id BIGINT) WITH (connector = 'kafka', connection_profile = 'k', topic = 'o', type = 'source', format = 'json', validate = 'sample');\n"
    );
    let file = dir.path().join("untrusted.sql");
    std::fs::write(&file, script).unwrap();
    let out = tributary(
        &dir.path().join("catalog"),
        &["check", file.to_str().unwrap()],
        &[("SR_KEY", "svc"), ("SR_SECRET", S)],
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains(
            "the schema of subject 'orders-value' was not fetched from the schema registry"
        ),
        "{err}"
    );
    assert!(err.contains("check makes no network calls"), "{err}");
    assert!(!err.contains(S), "{err}");
    // Nothing ever connected: not the profile test, the registry, TEST, SHOW TOPICS or
    // the table's sample.
    std::thread::sleep(std::time::Duration::from_millis(200));
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("check connected: {other:?}"),
    }
}

#[test]
fn quoted_source_lines_mask_secrets_in_every_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let script = format!(
        "CREATE CONNECTION PROFILE n WITH (connector = 'redis', address = 'redis://h:6379', password = '{S}', validate = false);\n\
         CREATE CONNECTION PROFILE r WITH (connector = 'redis', address = 'redis://u:{S}@h:6379', password = '{S}', colour = 'x');\n\
         CREATE CONNECTION PROFILE q WITH (connector = 'redis', address = 'redis://h:6379', password = '{S}', pasword = '{S}');\n\
         CREATE CONNECTION PROFILE z WITH (connector = 'redis', password = '{S}' oops);\n"
    );
    let file = dir.path().join("s.sql");
    std::fs::write(&file, &script).unwrap();
    let out = tributary(&catalog, &["check", file.to_str().unwrap()], &[]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The note that a profile was not tested is one line; the unknown options and the
    // syntax error quote their lines, with the secrets masked.
    assert!(
        err.contains("note: the connection was not tested (validate = false)\n"),
        "{err}"
    );
    assert!(err.contains("unknown option 'colour'"), "{err}");
    assert!(err.contains("unknown option 'pasword'"), "{err}");
    assert!(err.contains("syntax error"), "{err}");
    assert!(err.contains("password = ********"), "{err}");
    assert!(err.contains("redis://********@h:6379"), "{err}");
    assert!(!err.contains(S), "{err}");
}

#[test]
fn no_output_format_prints_a_secret() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let setup = format!(
        "CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'b:1', 'auth.type' = 'sasl', 'auth.mechanism' = 'PLAIN', 'auth.protocol' = 'SASL_SSL', 'auth.username' = 'u', 'auth.password' = '{S}', 'schema_registry.endpoint' = 'http://u:{S}@r:8081', validate = false);\n\
         CREATE TABLE t (a TEXT) WITH (connector = 'kafka', connection_profile = 'k', topic = 't', type = 'source', format = 'json', client_configs = 'sasl.password={S},acks=all');\n\
         CREATE TABLE h (a TEXT) WITH (connector = 'polling_http', endpoint = 'https://api.example.com/x?token={S}', format = 'json');\n"
    );
    let out = tributary(&catalog, &["run", "-c", &setup], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for format in ["table", "json", "jsonl", "csv", "raw"] {
        for sql in [
            "SHOW CONNECTION PROFILES",
            "DESCRIBE CONNECTION PROFILE k",
            "SHOW CREATE CONNECTION PROFILE k",
            "SHOW TABLES",
            "SHOW CREATE TABLE t",
            "SHOW CREATE TABLE h",
            "DESCRIBE t",
            "EXPLAIN SELECT * FROM t",
            "EXPLAIN SELECT * FROM h",
        ] {
            let out = tributary(&catalog, &["--format", format, "run", "-c", sql], &[]);
            let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
            assert_eq!(out.status.code(), Some(0), "{sql}: {all}");
            assert!(!all.contains(S), "{format} {sql}: {all}");
        }
    }
    let out = tributary(&catalog, &["run", "-c", "SHOW CREATE TABLE t"], &[]);
    assert!(
        text(&out.stdout).contains("client_configs = 'sasl.password=********,acks=all'"),
        "{}",
        text(&out.stdout)
    );
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every file under `dir` is owner-only.
fn assert_private(dir: &Path) {
    assert_eq!(mode(dir), 0o700, "{}", dir.display());
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_private(&path);
        } else {
            assert_eq!(mode(&path), 0o600, "{}", path.display());
        }
    }
}

#[test]
fn the_catalog_and_the_history_are_owner_only_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    let bin = env!("CARGO_BIN_EXE_tributary");
    // A permissive umask, as on a shared machine.
    let ran = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 000 && exec '{bin}' --catalog '{}' run -c \"CREATE CONNECTION PROFILE k WITH (connector = 'kafka', bootstrap_servers = 'b:1', validate = false)\"",
            catalog.display()
        ))
        .env_remove("TRIBUTARY_CATALOG")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    assert_private(&catalog);

    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 000 && exec '{bin}' --catalog '{}' repl",
            dir.path().join("catalog2").display()
        ))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HOME", &home)
        .env_remove("TRIBUTARY_CATALOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"SHOW TABLES;\n\\q\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let history = home.join("data/tributary/history");
    assert_eq!(mode(&history), 0o600);
    assert_eq!(mode(history.parent().unwrap()), 0o700);
    assert_private(&dir.path().join("catalog2"));
}
