//! The filesystem connector's connection test: local paths are located and read (or
//! proved writable for sinks); object-store URLs are only checked for shape, since their
//! stores cannot be reached from a test machine.

use crate::local_files::{check_writable, io_code, local_path, read_messages};
use crate::probe::{Probe, Stage, TestCode};
use std::path::{Path, PathBuf};
use tributary_types::ConnectionType;

/// How many files a test lists before it stops looking.
const MAX_LISTED: usize = 10_000;

pub(super) async fn test_table(probe: &mut Probe<'_>) {
    let Some(setting) = probe.table_setting("/table_type/path", "path") else {
        return;
    };
    let Some(root) = local_path(&setting) else {
        probe.skip(
            Stage::Connect,
            TestCode::NotTestable,
            format!(
                "'{setting}' is in an object store, which is tested against the real endpoint only; the path's form was checked"
            ),
        );
        return;
    };
    probe.pass(Stage::Connect, "local files need no connection");
    if probe.role == Some(ConnectionType::Sink) {
        check_writable(probe, &root).await;
        return;
    }
    let pattern = probe
        .table
        .and_then(|t| t.pointer("/table_type/regex_pattern"))
        .and_then(|v| v.as_str())
        .and_then(|p| regex::Regex::new(p).ok());
    let files = match list(&root).await {
        Ok(files) => files,
        Err(e) => {
            probe.fail(
                Stage::Locate,
                io_code(&e),
                format!("directory '{}' is not accessible: {e}", root.display()),
                "Check the path; relative paths are resolved from the working directory.",
            );
            return;
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
        return;
    }
    probe.pass(
        Stage::Locate,
        format!("{} file(s) under '{}'", matching.len(), root.display()),
    );
    read_messages(probe, &matching).await;
}

/// Every file under `root`, sorted, depth first.
async fn list(root: &Path) -> std::io::Result<Vec<PathBuf>> {
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
            } else if out.len() < MAX_LISTED {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}
