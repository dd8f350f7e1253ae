//! Writing to stdout (or the file `\o` names) and stderr without panicking: a reader
//! that went away (`tributary run ... | head -1`) ends the output quietly, and a closed
//! stderr is ignored.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Standard output (or a file), line by line, flushed after each piece so that what was
/// printed is what has happened.
#[derive(Debug, Default, Clone)]
pub struct Stdout {
    closed: bool,
    /// The file results go to instead (`\o FILE`).
    file: Option<Arc<Mutex<std::fs::File>>>,
}

impl Stdout {
    /// Output to `file` rather than standard output.
    pub fn to_file(file: std::fs::File) -> Self {
        Self {
            closed: false,
            file: Some(Arc::new(Mutex::new(file))),
        }
    }

    /// Whether output goes to a file (`\o FILE`), which never takes colour codes.
    pub fn is_file(&self) -> bool {
        self.file.is_some()
    }

    /// Print `text` and a newline; `false` once the reader has gone.
    pub fn line(&mut self, text: &str) -> bool {
        self.write(&format!("{text}\n"))
    }

    /// Print `text` as it is; `false` once the reader has gone.
    pub fn write(&mut self, text: &str) -> bool {
        if self.closed {
            return false;
        }
        let written = match &self.file {
            Some(file) => match file.lock() {
                Ok(mut f) => f.write_all(text.as_bytes()).and_then(|()| f.flush()),
                Err(_) => Err(std::io::Error::other("the output file's lock is poisoned")),
            },
            None => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|()| out.flush())
            }
        };
        if let Err(e) = written {
            self.closed = true;
            // Any other failure to write is reported once; a closed pipe is not an error.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                err_line(&format!("error: cannot write the output: {e}"));
            }
        }
        !self.closed
    }

    /// Whether this is standard output (not a file `\o` named).
    pub fn is_stdout(&self) -> bool {
        self.file.is_none()
    }

    /// Whether the reader has gone.
    pub fn closed(&self) -> bool {
        self.closed
    }
}

/// Print a line to standard error, ignoring a closed stream.
pub fn err_line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}
