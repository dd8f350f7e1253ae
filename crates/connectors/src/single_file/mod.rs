//! The `single_file` connector: one local file as a source or sink.

use crate::connector::{Connector, ConnectorInfo, Roles, TableCheck, str_at};
use crate::local_files::{
    Compression, FileReader, check_writable, io_code, local_path, read_messages,
};
use crate::local_sinks::AppendLines;
use crate::probe::{Probe, Stage, TestCode};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use crate::spec::OptionSpec;
use serde_json::Value;
use std::path::PathBuf;
use tributary_types::{ConnectionType, Diagnostic};

/// The `single_file` connector.
#[derive(Debug)]
pub struct SingleFile;

const TABLE_OPTIONS: &[OptionSpec] = &[
    OptionSpec::at("path", "/path"),
    OptionSpec::at("type", "/table_type"),
    OptionSpec::at("wait_for_control", "/wait_for_control"),
];

const INFO: ConnectorInfo = ConnectorInfo {
    id: "single_file",
    name: "Single File",
    description: "Read or write one local file",
    roles: Roles::SOURCE_AND_SINK,
    table_schema: include_str!("table.json"),
    table_options: TABLE_OPTIONS,
    testing: true,
    ..ConnectorInfo::BASE
};

#[async_trait::async_trait]
impl Connector for SingleFile {
    fn info(&self) -> &'static ConnectorInfo {
        &INFO
    }
    fn connection_type(&self, table: &Value) -> ConnectionType {
        if str_at(table, "/table_type") == Some("sink") {
            ConnectionType::Sink
        } else {
            ConnectionType::Source
        }
    }
    fn check_table(&self, cx: &TableCheck<'_>) -> Vec<Diagnostic> {
        let path = str_at(cx.config, "/path").unwrap_or_default();
        if path.contains("://") && !path.starts_with("file://") {
            return vec![
                Diagnostic::error(format!(
                    "single_file paths must be local, but '{path}' is a URL"
                ))
                .with_span(cx.span_of("path"))
                .with_help("Use a local path, or the filesystem connector for object stores."),
            ];
        }
        vec![]
    }
    fn table_description(&self, table: &Value, connection_type: ConnectionType) -> String {
        let path = str_at(table, "/path").unwrap_or_default();
        match connection_type {
            ConnectionType::Sink => format!("SingleFileSink<{path}>"),
            _ => format!("SingleFileSource<{path}>"),
        }
    }
    async fn test_connection(&self, probe: &mut Probe<'_>) {
        probe.pass(Stage::Connect, "local files need no connection");
    }
    fn bounded(&self, _table: &Value) -> bool {
        true
    }
    fn stays_local(&self, _table: &Value) -> bool {
        true
    }
    fn writes_local_files(&self, _table: &Value) -> bool {
        true
    }
    fn local_read_path<'t>(&self, table: &'t Value) -> Option<&'t str> {
        str_at(table, "/path").filter(|p| local_path(p).is_some())
    }
    async fn open_source(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
        let path = resolved_path(probe)?;
        let path = locate(probe, path).await?;
        Some(Box::new(FileReader::new(
            vec![path],
            probe.whole_files,
            Compression::None,
            probe.access().clone(),
        )))
    }
    async fn open_sink(&self, probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
        let path = resolved_path(probe)?;
        match AppendLines::open(&path).await {
            Ok(w) => {
                probe.pass(Stage::Write, format!("appending to '{}'", path.display()));
                Some(Box::new(w))
            }
            Err(e) => {
                probe.fail(
                    Stage::Write,
                    io_code(&e),
                    format!("cannot open '{}' for writing: {e}", path.display()),
                    "Check that the directory exists and is writable.",
                );
                None
            }
        }
    }
    async fn test_table(&self, probe: &mut Probe<'_>) {
        let Some(path) = resolved_path(probe) else {
            return;
        };
        if probe.role == Some(ConnectionType::Sink) {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            check_writable(probe, &dir).await;
            return;
        }
        if let Some(path) = locate(probe, path).await {
            read_messages(probe, &[path]).await;
        }
    }
}

/// The table's `path` as a local path (the probe says why not).
fn resolved_path(probe: &mut Probe<'_>) -> Option<PathBuf> {
    let setting = probe.table_setting("/path", "path")?;
    // A source's file is read: it must be one the session may read.
    let path = match local_path(&setting) {
        Some(_) if probe.role != Some(ConnectionType::Sink) => {
            Some(probe.readable_path(&setting, "path")?)
        }
        other => other,
    };
    if path.is_none() {
        probe.fail(
            Stage::Resolve,
            TestCode::NotFound,
            format!("'{setting}' is not a local path"),
            "Use a local path or a file:// URL.",
        );
    }
    path
}

/// The file, once it is found to be one (the probe records the locate stage).
async fn locate(probe: &mut Probe<'_>, path: PathBuf) -> Option<PathBuf> {
    match tokio::fs::metadata(&path).await {
        Ok(m) if m.is_file() => {
            probe.pass(
                Stage::Locate,
                format!("file '{}' exists ({} bytes)", path.display(), m.len()),
            );
            Some(path)
        }
        Ok(_) => {
            probe.fail(
                Stage::Locate,
                TestCode::NotFound,
                format!("'{}' is not a file", path.display()),
                "Point 'path' at a file; use the filesystem connector for directories.",
            );
            None
        }
        Err(e) => {
            probe.fail(
                Stage::Locate,
                io_code(&e),
                format!("file '{}' is not accessible: {e}", path.display()),
                "Check the path; relative paths are resolved from the working directory.",
            );
            None
        }
    }
}
