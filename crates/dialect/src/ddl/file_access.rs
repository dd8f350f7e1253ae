//! The local files a table definition names, judged by the session's `Access`: a
//! confined session (a shared server's) refuses a source whose `path`, or a schema file
//! (`avro.schema_file`, `protobuf.descriptor_file`, `protobuf.schema_file`), lies outside
//! what its operator allows, before anything reads it. Paths written as `{{ VAR }}`
//! references are judged when the connection resolves them.

use serde_json::Value;
use tributary_connectors::Connector;
use tributary_types::access::Access;
use tributary_types::{ConnectionType, Diagnostic, SqlOption, WithOptions, contains_env_reference};

/// Options whose value is a schema file the DDL reads.
const SCHEMA_FILE_OPTIONS: [&str; 3] = [
    "avro.schema_file",
    "protobuf.descriptor_file",
    "protobuf.schema_file",
];

/// Refuse (and take out, so nothing reads them) the schema files `access` does not allow.
pub(crate) fn check_schema_files(
    opts: &mut WithOptions,
    access: &Access,
    diags: &mut Vec<Diagnostic>,
) {
    if access.is_unrestricted() {
        return;
    }
    for key in SCHEMA_FILE_OPTIONS {
        let Some(o) = opts.peek(key) else { continue };
        if let Some(d) = refusal(o, access) {
            diags.push(d);
            opts.take(key);
        }
    }
}

/// Refuse a source whose local path `access` does not allow.
pub(crate) fn check_read_path(
    connector: &dyn Connector,
    config: &Value,
    connection_type: ConnectionType,
    options: &[SqlOption],
    access: &Access,
    diags: &mut Vec<Diagnostic>,
) {
    if access.is_unrestricted() || connection_type == ConnectionType::Sink {
        return;
    }
    let Some(path) = connector.local_read_path(config) else {
        return;
    };
    let option = options.iter().find(|o| o.value.as_text() == path);
    let span = option.map(|o| o.value_span).unwrap_or_default();
    if contains_env_reference(path) {
        return;
    }
    let local = path.strip_prefix("file://").unwrap_or(path);
    if let Err(r) = access.file_read(std::path::Path::new(local)) {
        diags.push(r.diagnostic(span));
    }
}

fn refusal(o: &SqlOption, access: &Access) -> Option<Diagnostic> {
    // Schema files are read as written (no `{{ VAR }}` is resolved in them).
    let value = o.value.as_text();
    access
        .file_read(std::path::Path::new(&value))
        .err()
        .map(|r| r.diagnostic(o.value_span))
}
