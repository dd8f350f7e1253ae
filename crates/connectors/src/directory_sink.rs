//! The filesystem sink on a local directory: rows go into new files, one open file per
//! partition directory (see [`PartitionSpec`]), written under a hidden in-progress name
//! and renamed when the file is closed, so readers never see half a file. A file closes
//! when the [`RollingPolicy`] says so, when the INSERT ends, or when it is cancelled
//! (what was written stays); a failed INSERT removes the files it had not closed.
//! Parquet rows come as whole files, one per batch: a partition's whole files close
//! together, by the same policy.

use crate::file_layout::{PartitionSpec, RollingPolicy};
use crate::local_sinks::{AppendLines, io_failure};
use crate::sink::{OutMessage, SinkWriter, WriteFailure};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a sink with a timed rolling policy looks at its open files.
const TICK: Duration = Duration::from_secs(1);

/// Writes an INSERT's rows into new files of a directory.
#[derive(Debug)]
pub(crate) struct DirectoryFiles {
    dir: PathBuf,
    /// `<prefix>-<time>-<pid>`: the files' common stem.
    stem: String,
    extension: String,
    /// Each message is a whole file (parquet), not a line.
    whole_files: bool,
    partitioning: Option<PartitionSpec>,
    rolling: RollingPolicy,
    /// The open output of each partition directory ("" without partitioning).
    open: HashMap<String, Part>,
    /// The number of the next file.
    next: usize,
}

/// The files of one partition not closed yet.
#[derive(Debug)]
struct Part {
    /// Each file under its in-progress name and its final name.
    files: Vec<(PathBuf, PathBuf)>,
    /// The line file being appended to (the last of `files`).
    lines: Option<AppendLines>,
    /// The line file's length before the write under way: a cancelled write is cut
    /// back to it, so no half line is ever published.
    whole_length: u64,
    bytes: u64,
    opened: Instant,
    last_write: Instant,
}

impl DirectoryFiles {
    /// Files named `<prefix>-<time>-<pid>-<n>.<extension>` in `dir` (and its partition
    /// directories).
    pub(crate) fn new(
        dir: &Path,
        prefix: &str,
        extension: String,
        whole_files: bool,
        partitioning: Option<PartitionSpec>,
        rolling: RollingPolicy,
    ) -> Self {
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        Self {
            dir: dir.to_path_buf(),
            stem: format!("{prefix}-{micros}-{}", std::process::id()),
            extension,
            whole_files,
            partitioning,
            rolling,
            open: HashMap::new(),
            next: 0,
        }
    }

    /// The in-progress and final names of the next file in `partition`.
    fn next_file(&mut self, partition: &str) -> (PathBuf, PathBuf) {
        let n = self.next;
        self.next += 1;
        let dir = self.dir.join(partition);
        (
            dir.join(format!(".{}-{n}.{}.inprogress", self.stem, self.extension)),
            dir.join(format!("{}-{n}.{}", self.stem, self.extension)),
        )
    }

    async fn write_part(
        &mut self,
        partition: String,
        messages: Vec<OutMessage>,
    ) -> Result<(), WriteFailure> {
        if !self.open.contains_key(&partition) {
            let dir = self.dir.join(&partition);
            tokio::fs::create_dir_all(&dir)
                .await
                .map_err(|e| io_failure(&format!("'{}'", dir.display()), &e))?;
            let now = Instant::now();
            self.open.insert(
                partition.clone(),
                Part {
                    files: Vec::new(),
                    lines: None,
                    whole_length: 0,
                    bytes: 0,
                    opened: now,
                    last_write: now,
                },
            );
        }
        if self.whole_files {
            for m in messages {
                let (path, done) = self.next_file(&partition);
                tokio::fs::write(&path, &m.payload)
                    .await
                    .map_err(|e| io_failure(&format!("'{}'", path.display()), &e))?;
                if let Some(part) = self.open.get_mut(&partition) {
                    part.files.push((path, done));
                    part.bytes += m.payload.len() as u64;
                }
            }
        } else {
            let needs_file = self.open.get(&partition).is_some_and(|p| p.lines.is_none());
            if needs_file {
                let (path, done) = self.next_file(&partition);
                let file = AppendLines::open(&path)
                    .await
                    .map_err(|e| io_failure(&format!("'{}'", path.display()), &e))?;
                if let Some(part) = self.open.get_mut(&partition) {
                    part.files.push((path, done));
                    part.lines = Some(file);
                }
            }
            let size: u64 = messages.iter().map(|m| m.payload.len() as u64 + 1).sum();
            if let Some(part) = self.open.get_mut(&partition)
                && let Some(lines) = &mut part.lines
            {
                lines.write(messages).await?;
                part.bytes += size;
                part.whole_length = part.bytes;
            }
        }
        if let Some(part) = self.open.get_mut(&partition) {
            part.last_write = Instant::now();
        }
        self.roll(false).await
    }

    /// Close the files the policy says are done (all of them with `all`).
    async fn roll(&mut self, all: bool) -> Result<(), WriteFailure> {
        let now = Instant::now();
        let done: Vec<String> = self
            .open
            .iter()
            .filter(|(_, p)| {
                all || self.rolling.rolls(
                    p.bytes,
                    now.duration_since(p.opened),
                    now.duration_since(p.last_write),
                )
            })
            .map(|(k, _)| k.clone())
            .collect();
        for key in done {
            if let Some(mut part) = self.open.remove(&key) {
                if let Some(lines) = &mut part.lines {
                    lines.finish().await?;
                }
                for (from, to) in &part.files {
                    tokio::fs::rename(from, to)
                        .await
                        .map_err(|e| io_failure(&format!("'{}'", to.display()), &e))?;
                }
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl SinkWriter for DirectoryFiles {
    async fn write(&mut self, messages: Vec<OutMessage>) -> Result<(), WriteFailure> {
        // Messages arrive grouped by partition (the SQL layer encodes each directory's
        // rows together); keep their order within each.
        let mut groups: Vec<(String, Vec<OutMessage>)> = Vec::new();
        for m in messages {
            let key = m.partition.clone().unwrap_or_default();
            match groups.last_mut() {
                Some((k, group)) if *k == key => group.push(m),
                _ => groups.push((key, vec![m])),
            }
        }
        for (partition, group) in groups {
            self.write_part(partition, group).await?;
        }
        Ok(())
    }

    async fn finish(&mut self) -> Result<(), WriteFailure> {
        self.roll(true).await
    }

    fn abandon(&mut self) {
        for (_, part) in self.open.drain() {
            for (from, _) in &part.files {
                let _ = std::fs::remove_file(from);
            }
        }
    }

    fn partitioning(&self) -> Option<&PartitionSpec> {
        self.partitioning.as_ref()
    }

    fn tick_every(&self) -> Option<Duration> {
        self.rolling.timed().then_some(TICK)
    }

    async fn tick(&mut self) -> Result<(), WriteFailure> {
        self.roll(false).await
    }
}

impl Drop for DirectoryFiles {
    /// A cancelled INSERT keeps what it wrote: every open file is closed where it stands,
    /// a line file cut back to its last whole write.
    fn drop(&mut self) {
        for (_, part) in self.open.drain() {
            if part.lines.is_some()
                && let Some((from, _)) = part.files.last()
                && let Ok(file) = std::fs::OpenOptions::new().write(true).open(from)
            {
                let _ = file.set_len(part.whole_length);
            }
            for (from, to) in &part.files {
                let _ = std::fs::rename(from, to);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(root: &Path) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(root)
            .expect("a directory")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        out.sort();
        out
    }

    fn lines(n: usize) -> Vec<OutMessage> {
        (0..n)
            .map(|i| OutMessage::from(format!("{{\"i\":{i}}}").into_bytes()))
            .collect()
    }

    fn sink(dir: &Path, rolling: RollingPolicy) -> DirectoryFiles {
        DirectoryFiles::new(dir, "t", "json".into(), false, None, rolling)
    }

    #[tokio::test]
    async fn a_quiet_file_is_closed_on_a_tick_after_the_inactivity_interval() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let rolling = RollingPolicy {
            inactivity: Some(Duration::from_millis(200)),
            ..RollingPolicy::default()
        };
        let mut s = sink(dir.path(), rolling);
        assert_eq!(s.tick_every(), Some(TICK));
        s.write(lines(3)).await.expect("written");
        s.tick().await.expect("ticked");
        let open = files(dir.path());
        assert!(
            open.len() == 1 && open[0].ends_with(".inprogress"),
            "{open:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        s.tick().await.expect("ticked");
        let closed = files(dir.path());
        assert!(
            closed.len() == 1 && closed[0].ends_with("-0.json"),
            "{closed:?}"
        );
        // The next rows open the next file.
        s.write(lines(1)).await.expect("written");
        s.finish().await.expect("finished");
        assert_eq!(files(dir.path()).len(), 2);
        assert!(
            sink(dir.path(), RollingPolicy::default())
                .tick_every()
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_cancelled_insert_keeps_whole_lines_and_a_failed_one_keeps_nothing_open() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut s = sink(dir.path(), RollingPolicy::default());
        s.write(lines(2)).await.expect("written");
        // A write cut short by cancellation leaves a half line behind the last whole one.
        let open = dir.path().join(&files(dir.path())[0]);
        let whole = std::fs::read_to_string(&open).expect("the file");
        std::fs::write(&open, format!("{whole}{{\"i\":")).expect("a torn write");
        drop(s);
        let kept = files(dir.path());
        assert!(kept.len() == 1 && kept[0].ends_with("-0.json"), "{kept:?}");
        let text = std::fs::read_to_string(dir.path().join(&kept[0])).expect("the file");
        assert_eq!(text, "{\"i\":0}\n{\"i\":1}\n");

        let failed = tempfile::tempdir().expect("a temporary directory");
        let mut s = sink(failed.path(), RollingPolicy::default());
        s.write(lines(2)).await.expect("written");
        s.abandon();
        drop(s);
        assert!(files(failed.path()).is_empty());
    }
}
