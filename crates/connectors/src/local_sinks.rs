//! Sinks that stay on this machine: `blackhole` (discards), `stdout` (one line per row),
//! `single_file` (appends a line per row) and `filesystem` on a local path (a new file per
//! INSERT, written under a hidden in-progress name and renamed when the INSERT finishes,
//! so readers never see half a file; parquet rows come as whole files, one per batch).

use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use std::path::{Path, PathBuf};
use tokio::io::AsyncWriteExt;

/// Discards every message.
#[derive(Debug)]
pub(crate) struct Discard;

#[async_trait::async_trait]
impl SinkWriter for Discard {
    async fn write(&mut self, _messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        Ok(())
    }
}

/// Prints each message as a line on standard output.
#[derive(Debug)]
pub(crate) struct Stdout;

#[async_trait::async_trait]
impl SinkWriter for Stdout {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let mut out = Vec::new();
        for m in messages {
            out.extend_from_slice(&m.payload);
            out.push(b'\n');
        }
        // A pipe that blocks blocks the query, as it should: stdout is the sink.
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(&out)
            .and_then(|()| stdout.flush())
            .map_err(|e| io_failure("standard output", &e))
    }
}

fn io_failure(what: &str, e: &std::io::Error) -> WriteFailure {
    WriteFailure::new(
        format!("cannot write {what}: {e}"),
        "Check the path's permissions and free space.",
    )
}

/// Appends each message as a line to one file.
#[derive(Debug)]
pub(crate) struct AppendLines {
    path: PathBuf,
    file: tokio::io::BufWriter<tokio::fs::File>,
}

impl AppendLines {
    pub(crate) async fn open(path: &Path) -> Result<Self, std::io::Error> {
        let file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .await?;
        Ok(Self {
            path: path.to_path_buf(),
            file: tokio::io::BufWriter::new(file),
        })
    }
}

#[async_trait::async_trait]
impl SinkWriter for AppendLines {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        let what = format!("'{}'", self.path.display());
        for m in messages {
            self.file
                .write_all(&m.payload)
                .await
                .map_err(|e| io_failure(&what, &e))?;
            self.file
                .write_all(b"\n")
                .await
                .map_err(|e| io_failure(&what, &e))?;
        }
        // A written batch reaches the file now, so an INSERT that runs until cancelled
        // leaves every batch it reported.
        self.file.flush().await.map_err(|e| io_failure(&what, &e))
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        let what = format!("'{}'", self.path.display());
        self.file.flush().await.map_err(|e| io_failure(&what, &e))?;
        self.file
            .get_ref()
            .sync_all()
            .await
            .map_err(|e| io_failure(&what, &e))
    }
}

/// The file name extension of rows in `format`.
pub(crate) fn extension(format: Option<&tributary_types::Format>) -> &'static str {
    use tributary_types::Format;
    match format {
        Some(Format::Json(_)) => "json",
        Some(Format::Parquet(_)) => "parquet",
        Some(Format::Avro(_)) => "avro",
        Some(Format::Protobuf(_)) => "pb",
        Some(Format::RawBytes {}) => "bin",
        Some(Format::RawString {}) | None => "txt",
    }
}

/// Writes an INSERT's rows into new files of a directory.
#[derive(Debug)]
pub(crate) struct DirectoryFiles {
    dir: PathBuf,
    /// `<prefix>-<time>-<pid>`: the files' common stem.
    stem: String,
    extension: String,
    /// Each message is a whole file (parquet), not a line.
    whole_files: bool,
    /// The line file being written, under its in-progress name.
    lines: Option<AppendLines>,
    /// Files written under in-progress names, renamed at the end.
    written: Vec<PathBuf>,
}

impl DirectoryFiles {
    /// Files named `<prefix>-<time>-<pid>-<n>.<extension>` in `dir`.
    pub(crate) fn new(dir: &Path, prefix: &str, extension: String, whole_files: bool) -> Self {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        Self {
            dir: dir.to_path_buf(),
            stem: format!("{prefix}-{micros}-{}", std::process::id()),
            extension,
            whole_files,
            lines: None,
            written: Vec::new(),
        }
    }

    fn in_progress(&self, n: usize) -> PathBuf {
        self.dir
            .join(format!(".{}-{n}.{}.inprogress", self.stem, self.extension))
    }
}

#[async_trait::async_trait]
impl SinkWriter for DirectoryFiles {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        if self.whole_files {
            for m in messages {
                let path = self.in_progress(self.written.len());
                tokio::fs::write(&path, &m.payload)
                    .await
                    .map_err(|e| io_failure(&format!("'{}'", path.display()), &e))?;
                self.written.push(path);
            }
            return Ok(());
        }
        if self.lines.is_none() {
            let path = self.in_progress(0);
            let file = AppendLines::open(&path)
                .await
                .map_err(|e| io_failure(&format!("'{}'", path.display()), &e))?;
            self.written.push(path);
            self.lines = Some(file);
        }
        match &mut self.lines {
            Some(lines) => lines.write(messages).await,
            None => Ok(()),
        }
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        if let Some(lines) = &mut self.lines {
            lines.finish().await?;
        }
        for (n, from) in self.written.iter().enumerate() {
            let to = self
                .dir
                .join(format!("{}-{n}.{}", self.stem, self.extension));
            tokio::fs::rename(from, &to)
                .await
                .map_err(|e| io_failure(&format!("'{}'", to.display()), &e))?;
        }
        Ok(())
    }
}
