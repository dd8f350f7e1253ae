//! Connection tests on the local filesystem, shared by `filesystem` and `single_file`:
//! locate the path, read sample messages (lines, or whole files for binary formats), and
//! for sinks prove the directory is writable by creating and removing a probe file.

use crate::probe::{Probe, Stage, TestCode};
use std::path::{Path, PathBuf};

/// A local path from a setting (`file://` stripped); `None` for other URLs.
pub(crate) fn local_path(setting: &str) -> Option<PathBuf> {
    match setting.split_once("://") {
        None => Some(PathBuf::from(setting)),
        Some(("file", rest)) => Some(PathBuf::from(rest)),
        Some(_) => None,
    }
}

/// The most directories [`subdirectories`] lists.
pub const MAX_DIRECTORIES: usize = 1000;

/// Why a path's subdirectories cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// An object-store URL: listing needs the store.
    #[error("'{0}' is an object-store URL; only local paths can be listed from here")]
    Remote(String),
    /// The path cannot be read.
    #[error("cannot list '{path}': {source}")]
    Io {
        /// The path as given.
        path: String,
        /// What the filesystem said.
        source: std::io::Error,
    },
}

/// The subdirectories of a local path or `file://` URL (hidden ones left out), each
/// written as a `path` option would take it, sorted, at most [`MAX_DIRECTORIES`]: the
/// completion of filesystem tables, which have no profile to connect through.
pub fn subdirectories(path: &str) -> Result<Vec<String>, ListError> {
    let root = local_path(path).ok_or_else(|| ListError::Remote(path.to_string()))?;
    let io = |source| ListError::Io {
        path: path.to_string(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.file_type().map_err(io)?.is_dir() {
            continue;
        }
        out.push(format!("{}/{name}", path.trim_end_matches('/')));
    }
    out.sort();
    out.truncate(MAX_DIRECTORIES);
    Ok(out)
}

/// Read up to `probe.limit` messages from `files` (in order).
pub(crate) async fn read_messages(probe: &mut Probe<'_>, files: &[PathBuf]) {
    if !probe.wants_messages() {
        return;
    }
    for file in files {
        if probe.messages.len() >= probe.limit {
            break;
        }
        let bytes = match tokio::fs::read(file).await {
            Ok(b) => b,
            Err(e) => {
                probe.fail(
                    Stage::Read,
                    io_code(&e),
                    format!("cannot read '{}': {e}", file.display()),
                    "Check the file's permissions.",
                );
                return;
            }
        };
        if probe.whole_files {
            probe.messages.push(bytes.into());
            continue;
        }
        for line in bytes.split(|b| *b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            if probe.messages.len() >= probe.limit {
                break;
            }
            probe.messages.push(line.to_vec().into());
        }
    }
    if probe.messages.is_empty() {
        probe.fail(
            Stage::Read,
            TestCode::Empty,
            "nothing to read: the files are empty",
            "Write data to the path first, or check that the path points at the right files.",
        );
    } else {
        probe.pass(Stage::Read, probe.messages_read());
    }
}

/// Prove `dir` accepts new files by creating and removing one.
pub(crate) async fn check_writable(probe: &mut Probe<'_>, dir: &Path) {
    match tokio::fs::metadata(dir).await {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            probe.fail(
                Stage::Locate,
                TestCode::NotFound,
                format!("'{}' is not a directory", dir.display()),
                "Point the sink at a directory.",
            );
            return;
        }
        Err(e) => {
            probe.fail(
                Stage::Locate,
                io_code(&e),
                format!("directory '{}' is not accessible: {e}", dir.display()),
                "Create the directory, or check the path.",
            );
            return;
        }
    }
    probe.pass(
        Stage::Locate,
        format!("directory '{}' exists", dir.display()),
    );
    let marker = dir.join(format!(".tributary-probe-{}", std::process::id()));
    match tokio::fs::write(&marker, b"").await {
        Ok(()) => {
            let _ = tokio::fs::remove_file(&marker).await;
            probe.pass(
                Stage::Write,
                format!("created and removed the empty file '{}'", marker.display()),
            );
        }
        Err(e) => probe.fail(
            Stage::Write,
            io_code(&e),
            format!("cannot create files in '{}': {e}", dir.display()),
            "Grant write permission on the directory to the user Tributary runs as.",
        ),
    }
}

/// The code for a local I/O error.
pub(crate) fn io_code(e: &std::io::Error) -> TestCode {
    match e.kind() {
        std::io::ErrorKind::NotFound => TestCode::NotFound,
        std::io::ErrorKind::PermissionDenied => TestCode::PermissionDenied,
        _ => TestCode::BadResponse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdirectories_are_listed_as_paths_without_files_or_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["orders", "clicks", ".cache"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::write(dir.path().join("readme.txt"), "x").unwrap();
        let root = dir.path().display().to_string();
        assert_eq!(
            subdirectories(&format!("{root}/")).unwrap(),
            [format!("{root}/clicks"), format!("{root}/orders")]
        );
        assert_eq!(subdirectories(&format!("file://{root}")).unwrap().len(), 2);
        let missing = subdirectories(&format!("{root}/nope")).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with(&format!("cannot list '{root}/nope': "))
        );
        assert!(matches!(
            subdirectories("s3://bucket/x"),
            Err(ListError::Remote(_))
        ));
    }
}
