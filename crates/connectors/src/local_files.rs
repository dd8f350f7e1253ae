//! Connection tests on the local filesystem, shared by `filesystem` and `single_file`:
//! locate the path, read sample messages (lines, or whole files for binary formats), and
//! for sinks prove the directory is writable by creating and removing a probe file.

use crate::probe::{Probe, SampledMessage, Stage, TestCode};
use crate::source::{ReadFailure, SourceReader};
use std::path::{Path, PathBuf};
use tokio::io::AsyncReadExt;
use tributary_types::access::Access;

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
    /// The session may not read there.
    #[error("{0}")]
    Forbidden(tributary_types::access::Refusal),
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
pub fn subdirectories(path: &str, access: &Access) -> Result<Vec<String>, ListError> {
    let root = local_path(path).ok_or_else(|| ListError::Remote(path.to_string()))?;
    let root = access.file_read(&root).map_err(ListError::Forbidden)?;
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
        // A file listed in an allowed directory may be a link to one that is not.
        let file = match probe.access().file_read(file) {
            Ok(f) => f,
            Err(refused) => {
                probe.fail(
                    Stage::Read,
                    TestCode::Forbidden,
                    format!("{} is not allowed: {}", refused.what, refused.rule),
                    refused.help,
                );
                return;
            }
        };
        let bytes = match tokio::fs::read(&file).await {
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

/// The longest line a file source reads as one message; a longer one is an error naming
/// the file, so a file without newlines cannot take all memory.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The most bytes one compressed file may expand to: the file is decompressed in memory,
/// so a decompression bomb is an error naming the file, not an exhausted machine.
const MAX_DECOMPRESSED_BYTES: u64 = 1 << 30;

/// How the files of a source are compressed (`source.compression`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression a table's `compression_format` setting names.
    pub(crate) fn of(setting: Option<&str>) -> Self {
        match setting {
            Some("gzip") => Self::Gzip,
            Some("zstd") => Self::Zstd,
            _ => Self::None,
        }
    }

    fn expand(self, path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, ReadFailure> {
        use std::io::Read;
        let reader: Box<dyn Read> = match self {
            Self::None => return Ok(bytes),
            Self::Gzip => Box::new(flate2::read::MultiGzDecoder::new(bytes.as_slice())),
            Self::Zstd => Box::new(
                zstd::stream::read::Decoder::new(bytes.as_slice())
                    .map_err(|e| read_failure(path, &e))?,
            ),
        };
        let mut out = Vec::new();
        reader
            .take(MAX_DECOMPRESSED_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| {
                ReadFailure::new(
                    format!("cannot decompress '{}': {e}", path.display()),
                    "Check 'source.compression' against how the files were written.",
                )
            })?;
        if out.len() as u64 > MAX_DECOMPRESSED_BYTES {
            return Err(ReadFailure::new(
                format!(
                    "'{}' expands to more than {} GiB",
                    path.display(),
                    MAX_DECOMPRESSED_BYTES >> 30
                ),
                "Split the file into smaller ones.",
            ));
        }
        Ok(out)
    }
}

/// The file being read: lines come from it as they are asked for.
type Lines = Box<dyn tokio::io::AsyncBufRead + Unpin + Send>;

/// Files read for a query, one after the other: each line a message (empty lines
/// skipped), or each whole file for binary formats. A file is opened only when the one
/// before it is done; an uncompressed one is read line by line as rows are asked for, a
/// compressed one is expanded in memory first.
pub(crate) struct FileReader {
    files: std::collections::VecDeque<PathBuf>,
    whole_files: bool,
    compression: Compression,
    access: Access,
    current: Option<(PathBuf, Lines)>,
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileReader")
            .field("files_left", &self.files.len())
            .field("whole_files", &self.whole_files)
            .field("compression", &self.compression)
            .finish_non_exhaustive()
    }
}

impl FileReader {
    pub(crate) fn new(
        files: Vec<PathBuf>,
        whole_files: bool,
        compression: Compression,
        access: Access,
    ) -> Self {
        Self {
            files: files.into(),
            whole_files,
            compression,
            access,
            current: None,
        }
    }

    /// The next file's contents as one message (whole files), or its lines made current.
    async fn open_next(&mut self, path: PathBuf) -> Result<Option<SampledMessage>, ReadFailure> {
        // Checked again as each file opens: a file listed in an allowed directory may be
        // a link to one that is not, or have become one since it was listed.
        let path = self.access.file_read(&path).map_err(|refused| {
            ReadFailure::new(
                format!("{} is not allowed: {}", refused.what, refused.rule),
                refused.help,
            )
        })?;
        if self.whole_files || self.compression != Compression::None {
            let bytes = tokio::fs::read(&path)
                .await
                .map_err(|e| read_failure(&path, &e))?;
            let bytes = self.compression.expand(&path, bytes)?;
            if self.whole_files {
                return Ok(Some(bytes.into()));
            }
            self.current = Some((path, Box::new(std::io::Cursor::new(bytes))));
            return Ok(None);
        }
        let file = tokio::fs::File::open(&path)
            .await
            .map_err(|e| read_failure(&path, &e))?;
        self.current = Some((path, Box::new(tokio::io::BufReader::new(file))));
        Ok(None)
    }
}

fn read_failure(file: &Path, e: &std::io::Error) -> ReadFailure {
    ReadFailure::new(
        format!("cannot read '{}': {e}", file.display()),
        "Check that the file still exists and is readable.",
    )
}

#[async_trait::async_trait]
impl SourceReader for FileReader {
    async fn next_batch(&mut self, max: usize) -> Result<Option<Vec<SampledMessage>>, ReadFailure> {
        use tokio::io::AsyncBufReadExt;
        let mut out = Vec::new();
        while out.len() < max.max(1) {
            let Some((path, reader)) = &mut self.current else {
                let Some(next) = self.files.pop_front() else {
                    break;
                };
                if let Some(whole) = self.open_next(next).await? {
                    out.push(whole);
                }
                continue;
            };
            let mut line = Vec::new();
            let n = (&mut *reader)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
                .map_err(|e| read_failure(path, &e))?;
            if n == 0 {
                self.current = None;
                continue;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            } else if line.len() > MAX_LINE_BYTES {
                return Err(ReadFailure::new(
                    format!(
                        "a line of '{}' is longer than {} MiB",
                        path.display(),
                        MAX_LINE_BYTES >> 20
                    ),
                    "Check that the file is newline-delimited, as the table's format expects.",
                ));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if !line.is_empty() {
                out.push(line.into());
            }
        }
        Ok((!out.is_empty()).then_some(out))
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
            subdirectories(&format!("{root}/"), &Access::unrestricted()).unwrap(),
            [format!("{root}/clicks"), format!("{root}/orders")]
        );
        assert_eq!(
            subdirectories(&format!("file://{root}"), &Access::unrestricted())
                .unwrap()
                .len(),
            2
        );
        let missing = subdirectories(&format!("{root}/nope"), &Access::unrestricted()).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with(&format!("cannot list '{root}/nope': "))
        );
        assert!(matches!(
            subdirectories("s3://bucket/x", &Access::unrestricted()),
            Err(ListError::Remote(_))
        ));
    }
}
