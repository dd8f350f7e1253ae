//! The filesystem connector's connection test and reader: local paths are located and
//! read (or proved writable for sinks); object-store URLs are only checked for shape,
//! since their stores cannot be reached from a test machine.

use crate::directory_sink::DirectoryFiles;
use crate::file_layout::{PartitionSpec, RollingPolicy};
use crate::local_files::{
    Compression, FileReader, check_writable, io_code, local_path, read_messages,
};
use crate::local_sinks::extension;
use crate::probe::{Probe, Stage, TestCode};
use crate::sink::SinkWriter;
use crate::source::SourceReader;
use std::path::{Path, PathBuf};
use tributary_types::ConnectionType;

/// How many files a test lists before it stops looking.
const MAX_LISTED: usize = 10_000;

pub(super) async fn test_table(probe: &mut Probe<'_>) {
    if let Some(files) = locate(probe, MAX_LISTED).await {
        read_messages(probe, &files).await;
    }
}

/// A reader of the files the table names (whole files or lines, as the format needs),
/// in path order, for a query: every file, or this reader's share of them when a query
/// reads the directory in several streams (file `n` goes to stream `n % count`).
pub(super) async fn open_source(probe: &mut Probe<'_>) -> Option<Box<dyn SourceReader>> {
    let split = probe.split;
    let files: Vec<PathBuf> = locate(probe, usize::MAX)
        .await?
        .into_iter()
        .enumerate()
        .filter_map(|(n, f)| split.takes(n).then_some(f))
        .collect();
    let compression = Compression::of(
        probe
            .table
            .and_then(|t| t.pointer("/table_type/compression_format"))
            .and_then(|v| v.as_str()),
    );
    Some(Box::new(FileReader::new(
        files,
        probe.whole_files,
        compression,
        probe.access().clone(),
    )))
}

/// A writer of new files in the table's local directory, proved writable first.
pub(super) async fn open_sink(probe: &mut Probe<'_>) -> Option<Box<dyn SinkWriter>> {
    let setting = probe.table_setting("/table_type/path", "path")?;
    let Some(dir) = local_path(&setting) else {
        probe.fail(
            Stage::Connect,
            TestCode::Unsupported,
            format!("queries cannot write object stores yet ('{setting}')"),
            "Write to a local directory, or TEST TABLE to check the path.",
        );
        return None;
    };
    let table = probe.table.cloned().unwrap_or_default();
    check_writable(probe, &dir).await;
    if probe.failed() {
        return None;
    }
    let naming = |key: &str| {
        table
            .pointer(&format!("/table_type/file_naming/{key}"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let suffix = naming("suffix").unwrap_or_else(|| extension(probe.format.as_ref()).to_string());
    let prefix = naming("prefix").unwrap_or_else(|| "part".to_string());
    Some(Box::new(DirectoryFiles::new(
        &dir,
        &prefix,
        suffix,
        probe.whole_files,
        PartitionSpec::of_table(&table, "/table_type/partitioning"),
        RollingPolicy::of_table(&table, "/table_type/rolling_policy"),
    )))
}

/// Find the table's files (at most `max`, sorted): the path resolved, then listed and
/// filtered by `source.regex_pattern`. A sink is proved writable instead (`None`).
async fn locate(probe: &mut Probe<'_>, max: usize) -> Option<Vec<PathBuf>> {
    let setting = probe.table_setting("/table_type/path", "path")?;
    let sink = probe.role == Some(ConnectionType::Sink);
    // A source's directory is read: it must be one the session may read.
    let checked = match local_path(&setting) {
        Some(_) if !sink => Some(probe.readable_path(&setting, "path")?),
        other => other,
    };
    let Some(root) = checked else {
        let message = format!(
            "'{setting}' is in an object store, which is tested against the real endpoint only; the path's form was checked"
        );
        if probe.query {
            probe.fail(
                Stage::Connect,
                TestCode::Unsupported,
                format!("queries cannot read object stores yet ('{setting}')"),
                "Copy the files to a local directory and read that, or TEST TABLE to check the path.",
            );
        } else {
            probe.skip(Stage::Connect, TestCode::NotTestable, message);
        }
        return None;
    };
    probe.pass(Stage::Connect, "local files need no connection");
    if sink {
        check_writable(probe, &root).await;
        return None;
    }
    let pattern = probe
        .table
        .and_then(|t| t.pointer("/table_type/regex_pattern"))
        .and_then(|v| v.as_str())
        .and_then(|p| regex::Regex::new(p).ok());
    let files = match list(&root, max).await {
        Ok(files) => files,
        Err(e) => {
            probe.fail(
                Stage::Locate,
                io_code(&e),
                format!("directory '{}' is not accessible: {e}", root.display()),
                "Check the path; relative paths are resolved from the working directory.",
            );
            return None;
        }
    };
    let matching: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            pattern
                .as_ref()
                .is_none_or(|re| re.is_match(&f.to_string_lossy()))
        })
        .collect();
    if matching.is_empty() {
        probe.fail(
            Stage::Locate,
            TestCode::Empty,
            format!(
                "no files under '{}'{}",
                root.display(),
                if pattern.is_some() {
                    " match 'source.regex_pattern'"
                } else {
                    ""
                }
            ),
            "Write files there first, or check the path and 'source.regex_pattern'.",
        );
        return None;
    }
    probe.pass(
        Stage::Locate,
        format!("{} file(s) under '{}'", matching.len(), root.display()),
    );
    Some(matching)
}

/// The files under `root` (at most `max`), sorted, depth first.
async fn list(root: &Path, max: usize) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    tokio::fs::metadata(root).await?;
    while let Some(dir) = dirs.pop() {
        let mut entries = tokio::fs::read_dir(&dir).await?;
        let mut here = Vec::new();
        while let Some(e) = entries.next_entry().await? {
            here.push(e.path());
        }
        here.sort();
        for p in here {
            if tokio::fs::metadata(&p).await?.is_dir() {
                dirs.push(p);
            } else if out.len() < max {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
