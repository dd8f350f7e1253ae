//! Reading the schema files a table names (`avro.schema_file`, `protobuf.descriptor_file`,
//! `protobuf.schema_file` and its imports): regular files only, at most
//! `limits::MAX_SCHEMA_FILE_BYTES`, so that `/dev/zero` or a FIFO is an error at once
//! instead of memory growing or a read that never ends.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use tributary_types::limits::MAX_SCHEMA_FILE_BYTES;

/// The bytes of the schema file at `path`.
pub(crate) fn read_schema_file(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "it is not a regular file ({})",
            if meta.is_dir() {
                "a directory"
            } else {
                "a device, socket or pipe"
            }
        ));
    }
    if meta.len() > MAX_SCHEMA_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SCHEMA_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| e.to_string())?;
    // The file may have grown since it was measured.
    if bytes.len() as u64 > MAX_SCHEMA_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The text of the schema file at `path`.
pub(crate) fn read_schema_text(path: &Path) -> Result<String, String> {
    String::from_utf8(read_schema_file(path)?).map_err(|e| {
        format!(
            "it is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn too_large(len: u64) -> String {
    format!(
        "it is {len} bytes, more than the limit of {MAX_SCHEMA_FILE_BYTES} bytes for a schema file"
    )
}

/// `.proto` imports, looked up in one directory and read like any schema file; an import
/// may not leave the directory (`..` or an absolute path), and all the files read together
/// stay within the limit of one.
pub(crate) struct ProtoDirectory {
    pub dir: PathBuf,
    pub read: std::sync::atomic::AtomicU64,
}

impl protox::file::FileResolver for ProtoDirectory {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        let relative = path.strip_prefix(&self.dir).ok()?;
        relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
            .then(|| relative.to_str().map(|s| s.replace('\\', "/")))
            .flatten()
    }

    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        let relative = Path::new(name);
        if !relative
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        {
            return Err(protox::Error::file_not_found(name));
        }
        let path = self.dir.join(relative);
        if !path.exists() {
            return Err(protox::Error::file_not_found(name));
        }
        // A symbolic link inside the directory may point out of it: the import is judged
        // by where it really is.
        let inside = match (
            std::fs::canonicalize(&path),
            std::fs::canonicalize(&self.dir),
        ) {
            (Ok(real), Ok(dir)) => real.starts_with(dir),
            _ => false,
        };
        if !inside {
            return Err(protox::Error::file_not_found(name));
        }
        let fail = |reason: String| {
            protox::Error::new(std::io::Error::other(format!("'{name}': {reason}")))
        };
        let source = read_schema_text(&path).map_err(fail)?;
        let total = self
            .read
            .fetch_add(source.len() as u64, std::sync::atomic::Ordering::Relaxed)
            + source.len() as u64;
        if total > MAX_SCHEMA_FILE_BYTES {
            return Err(fail(format!(
                "the .proto file and its imports are {total} bytes together, more than the limit of {MAX_SCHEMA_FILE_BYTES}"
            )));
        }
        protox::file::File::from_source(name, &source)
    }
}
