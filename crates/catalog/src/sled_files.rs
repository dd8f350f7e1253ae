//! The files of a sled catalog directory, outside sled itself: the process lock (waited
//! for up to a timeout), the commit lock that makes a consistent copy possible, private
//! permissions, and the snapshot copy `tributary check` reads while another process
//! holds the catalog.

use crate::error::{CatalogError, Result};
use fs2::FileExt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held for a store's lifetime: keeps other processes from opening the catalog.
pub(crate) const LOCK_FILE: &str = "tributary.lock";

/// Held exclusively while batches are written and flushed (see `group_commit`), and
/// shared while a snapshot is copied, so a copy never sees half a commit.
pub(crate) const COMMIT_LOCK_FILE: &str = "tributary.commit.lock";

/// Written by `tributary serve` while it holds the catalog: its address and process id,
/// so a command that finds the catalog taken can say which server has it.
pub(crate) const SERVER_FILE: &str = "tributary.server";

/// How often a waiting process tries the lock again.
const RETRY: Duration = Duration::from_millis(100);

/// How long to wait for a lock, and whom to tell that we are waiting.
#[derive(Clone, Copy)]
pub struct LockWait<'a> {
    /// The longest wait; zero fails at once.
    pub timeout: Duration,
    /// Called once, when the lock is found taken and the wait begins.
    pub on_wait: &'a dyn Fn(&Path),
}

impl std::fmt::Debug for LockWait<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockWait")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LockWait<'_> {
    /// Fail at once when the catalog is taken.
    pub const NONE: LockWait<'static> = LockWait {
        timeout: Duration::ZERO,
        on_wait: &|_| {},
    };

    /// Retry `attempt` until it stops answering "busy" or the wait is over; a catalog
    /// still busy then is [`CatalogError::InUse`].
    pub(crate) fn retry<T>(&self, path: &Path, mut attempt: impl FnMut() -> Busy<T>) -> Result<T> {
        let started = Instant::now();
        let mut told = false;
        loop {
            match attempt() {
                Busy::Done(r) => return r,
                Busy::Taken if started.elapsed() >= self.timeout => {
                    return Err(CatalogError::InUse {
                        path: path.to_path_buf(),
                        server: announced_server(path),
                        holder: Holder::of(path),
                    });
                }
                Busy::Taken => {
                    if !told {
                        (self.on_wait)(path);
                        told = true;
                    }
                    std::thread::sleep(RETRY.min(self.timeout.saturating_sub(started.elapsed())));
                }
            }
        }
    }
}

/// One attempt at something another process may hold.
pub(crate) enum Busy<T> {
    /// It worked, or failed for another reason.
    Done(Result<T>),
    /// Another process holds it.
    Taken,
}

/// Whether an I/O error means another process holds a lock (sled's own lock on its log
/// reports this until the previous owner's threads have let go). sled wraps the `EAGAIN`
/// of its `flock` in an error of kind `Other` that carries only text, so the text is
/// what says so.
pub(crate) fn is_lock_conflict(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::WouldBlock
        || e.raw_os_error() == Some(11)
        || e.to_string().starts_with("could not acquire lock on")
}

/// Take the catalog's process lock, creating the directory (private) if needed.
pub(crate) fn lock_catalog(path: &Path, wait: LockWait<'_>) -> Result<File> {
    let io = |source| CatalogError::Io {
        path: path.to_path_buf(),
        source,
    };
    create_private_dir(path).map_err(io)?;
    let lock = private_file(&path.join(LOCK_FILE)).map_err(io)?;
    wait.retry(path, || match lock.try_lock_exclusive() {
        Ok(()) => Busy::Done(Ok(())),
        // A server keeps the catalog until it stops: waiting for it is pointless.
        Err(_) => match announced_server(path) {
            Some(url) => Busy::Done(Err(CatalogError::InUse {
                path: path.to_path_buf(),
                server: Some(url),
                holder: None,
            })),
            None => Busy::Taken,
        },
    })?;
    Holder::record(&lock).map_err(io)?;
    Ok(lock)
}

/// What this process calls itself in the lock file (`tributary repl`), set once by the
/// program; the executable's name otherwise. Never the whole command line: its
/// arguments may hold a token.
static DESCRIPTION: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Name this process, for the message another process gets when it finds the catalog
/// taken (`catalog '...' is in use by process 4242 (tributary repl)`).
pub fn describe_this_process(description: impl Into<String>) {
    let _ = DESCRIPTION.set(description.into());
}

/// The process holding a catalog, as it recorded itself in the lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// Its process id.
    pub pid: u32,
    /// What it called itself.
    pub description: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "process {} ({})", self.pid, self.description)
    }
}

impl Holder {
    /// Write this process into the lock file it holds.
    fn record(mut lock: &File) -> std::io::Result<()> {
        use std::io::{Seek, Write};
        let description = DESCRIPTION.get().cloned().unwrap_or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "an unnamed program".into())
        });
        lock.set_len(0)?;
        lock.seek(std::io::SeekFrom::Start(0))?;
        // One line, and short: it is shown in another process's error message.
        let description: String = description
            .chars()
            .filter(|c| !c.is_control())
            .take(80)
            .collect();
        write!(lock, "{}\n{description}\n", std::process::id())?;
        lock.flush()
    }

    /// The holder recorded in the catalog at `path`, if that process still runs.
    fn of(path: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(path.join(LOCK_FILE)).ok()?;
        let mut lines = text.lines();
        let pid: u32 = lines.next()?.trim().parse().ok()?;
        let description = lines.next()?.trim().to_string();
        let alive = Path::new(&format!("/proc/{pid}")).exists();
        (alive && pid != std::process::id() && !description.is_empty())
            .then_some(Self { pid, description })
    }
}

/// The commit lock file of the catalog at `path`.
pub(crate) fn commit_lock(path: &Path) -> Result<File> {
    private_file(&path.join(COMMIT_LOCK_FILE)).map_err(|source| CatalogError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A directory only its owner can enter, created if needed; an existing one is made so.
pub(crate) fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)?;
    set_mode(path, 0o700)
}

/// A file only its owner can read, created if needed.
pub(crate) fn private_file(path: &Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .read(true)
        .open(path)?;
    set_mode(path, 0o600)?;
    Ok(file)
}

/// Make every file under `dir` owner-only (0600, directories 0700), whatever the umask
/// was when they were made. The catalog holds secrets as written.
pub(crate) fn make_private(dir: &Path) -> std::io::Result<()> {
    set_mode(dir, 0o700)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            make_private(&path)?;
        } else {
            set_mode(&path, 0o600)?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot make '{}' owner-only ({mode:o}), as a catalog holding secrets must be: {e}",
                path.display()
            ),
        )
    })
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// Copy the sled files of the catalog at `from` into the new directory `to`, while no
/// commit is under way (the commit lock is held shared, waited for up to `wait`). Sled's
/// snapshots are copied before its log, so the log is never older than a snapshot.
pub(crate) fn copy_catalog(from: &Path, to: &Path, wait: LockWait<'_>) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CatalogError::Io { path, source }
    };
    let commit = private_file(&from.join(COMMIT_LOCK_FILE)).map_err(io(from))?;
    wait.retry(from, || match FileExt::try_lock_shared(&commit) {
        Ok(()) => Busy::Done(Ok(())),
        Err(_) => Busy::Taken,
    })?;
    let copied = copy_dir(&from.join("db"), &to.join("db"));
    let _ = FileExt::unlock(&commit);
    copied.map_err(io(from))
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    create_private_dir(to)?;
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()))?;
        } else {
            files.push(entry.path());
        }
    }
    // The log (`db`) last: everything a snapshot refers to is in it.
    files.sort_by_key(|p| p.file_name().is_some_and(|n| n == "db"));
    for file in files {
        let Some(name) = file.file_name() else {
            continue;
        };
        match std::fs::copy(&file, to.join(name)) {
            Ok(_) => {}
            // Sled replaced a snapshot meanwhile; the newer one (or the log) has it all.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// While alive, tells other processes that the server at `url` (this process) holds
/// the catalog; dropping it withdraws the notice.
#[derive(Debug)]
pub struct ServerNotice {
    file: PathBuf,
}

impl ServerNotice {
    /// Announce that this process serves the catalog at `path` on `url`. Call it once
    /// the catalog is open (its lock held).
    pub fn announce(path: &Path, url: &str) -> std::io::Result<Self> {
        let file = path.join(SERVER_FILE);
        let tmp = path.join(format!("{SERVER_FILE}.tmp"));
        std::fs::write(&tmp, format!("{url}\n{}\n", std::process::id()))?;
        set_mode(&tmp, 0o600)?;
        std::fs::rename(&tmp, &file)?;
        Ok(Self { file })
    }
}

impl Drop for ServerNotice {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

/// The address of the server holding the catalog at `path`, if its notice is there and
/// its process still runs (a server that crashed leaves a stale notice, ignored).
pub(crate) fn announced_server(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path.join(SERVER_FILE)).ok()?;
    let mut lines = text.lines();
    let url = lines.next()?.trim().to_string();
    let pid: u32 = lines.next()?.trim().parse().ok()?;
    let alive = Path::new(&format!("/proc/{pid}")).exists();
    (alive && !url.is_empty()).then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleds_wrapped_lock_error_is_a_lock_conflict() {
        // The shape sled 0.34 gives a log file another handle still holds.
        let sled_says = std::io::Error::other(
            "could not acquire lock on \"/tmp/x/db/db\": Os { code: 11, kind: WouldBlock, \
             message: \"Resource temporarily unavailable\" }",
        );
        assert!(is_lock_conflict(&sled_says));
        assert!(is_lock_conflict(&std::io::Error::from_raw_os_error(11)));
        assert!(!is_lock_conflict(&std::io::Error::other("disk full")));
    }
}
