//! Sinks that stay on this machine: `blackhole` (discards), `stdout` (one line per row)
//! and `single_file` (appends a line per row); `filesystem` on a local path is
//! `directory_sink`, which writes its line files with [`AppendLines`].

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

pub(crate) fn io_failure(what: &str, e: &std::io::Error) -> WriteFailure {
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
