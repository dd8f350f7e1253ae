//! Where a file sink puts rows and when it closes a file: [`PartitionSpec`]
//! (`partitioning.time_pattern` and `partitioning.fields`: a directory per time bucket
//! and per value of each field, Hive style) and [`RollingPolicy`] (`rolling_policy.*`:
//! close a file at a size, an age or after a quiet spell). The SQL layer computes each
//! row's directory with the spec; the sink opens and rolls the files.

use serde_json::Value;
use std::time::Duration;

/// How a file sink lays rows out in directories under its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionSpec {
    /// A strftime pattern such as `%Y/%m/%d/%H`, applied to each row's event time (the
    /// time the rows are written when they carry none).
    pub time_pattern: Option<String>,
    /// Columns whose values name a directory each, as `name=value`.
    pub fields: Vec<String>,
}

/// The directory name Hive and its readers give a NULL partition value.
pub const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

impl PartitionSpec {
    /// The spec under JSON Pointer `at` (`/table_type/partitioning`), when the table
    /// partitions by anything.
    pub fn of_table(table: &Value, at: &str) -> Option<Self> {
        let p = table.pointer(at)?;
        let time_pattern = p
            .get("time_pattern")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let fields: Vec<String> = p
            .get("fields")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        (time_pattern.is_some() || !fields.is_empty()).then_some(Self {
            time_pattern,
            fields,
        })
    }

    /// The time directory of rows written at `now` (empty without a pattern). The pattern
    /// was checked when the table was created ([`check_time_pattern`]); a component that
    /// would leave the sink's directory is dropped.
    pub fn time_directory(&self, now: chrono::DateTime<chrono::Utc>) -> String {
        let Some(pattern) = &self.time_pattern else {
            return String::new();
        };
        if check_time_pattern(pattern).is_err() {
            return String::new();
        }
        let formatted = now.format(pattern).to_string();
        formatted
            .split('/')
            .filter(|c| !c.is_empty() && *c != "." && *c != "..")
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The time directory of rows written now.
    pub fn time_directory_now(&self) -> String {
        self.time_directory(chrono::Utc::now())
    }

    /// The time directory of a row whose event time is `nanos` since the epoch (UTC).
    pub fn time_directory_at(&self, nanos: i64) -> String {
        self.time_directory(chrono::DateTime::from_timestamp_nanos(nanos))
    }

    /// The directory of a row: the time directory, then `field=value` for each field
    /// (`values` in the order of [`fields`](Self::fields); `None` is NULL).
    pub fn directory(&self, time: &str, values: &[Option<&str>]) -> String {
        let mut out = String::from(time);
        for (name, value) in self.fields.iter().zip(values) {
            if !out.is_empty() {
                out.push('/');
            }
            out.push_str(&escape(name));
            out.push('=');
            match value {
                Some(v) => out.push_str(&escape(v)),
                None => out.push_str(NULL_PARTITION),
            }
        }
        out
    }
}

/// A value as one directory name: letters, digits, `-`, `_` and `.` stay; every other
/// byte is percent-encoded, as are names made only of dots, so no value can name
/// another directory.
fn escape(value: &str) -> String {
    if value.is_empty() {
        return "%00".into();
    }
    let dots_only = value.bytes().all(|b| b == b'.');
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        let keep = b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || (b == b'.' && !dots_only);
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a `partitioning.time_pattern` cannot name directories, if it cannot: strftime
/// items chrono does not know, or an absolute path.
pub fn check_time_pattern(pattern: &str) -> Result<(), String> {
    use chrono::format::{Item, StrftimeItems};
    if let Some(bad) = StrftimeItems::new(pattern).find(|i| matches!(i, Item::Error)) {
        return Err(format!(
            "'{pattern}' is not a strftime pattern ({bad:?} at an unknown % item)"
        ));
    }
    if pattern.starts_with('/') {
        return Err(format!(
            "'{pattern}' starts with '/', but partitions are directories under the table's path"
        ));
    }
    Ok(())
}

/// When a file sink closes a file and starts the next (each limit optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RollingPolicy {
    /// Close a file once it holds this many bytes.
    pub file_size: Option<u64>,
    /// Close a file this long after it was opened.
    pub interval: Option<Duration>,
    /// Close a file when nothing was written to it for this long.
    pub inactivity: Option<Duration>,
}

impl RollingPolicy {
    /// The policy under JSON Pointer `at` (`/table_type/rolling_policy`).
    pub fn of_table(table: &Value, at: &str) -> Self {
        let Some(p) = table.pointer(at) else {
            return Self::default();
        };
        let seconds = |key: &str| {
            p.get(key)
                .and_then(Value::as_u64)
                .filter(|s| *s > 0)
                .map(Duration::from_secs)
        };
        Self {
            file_size: p
                .get("file_size_bytes")
                .and_then(Value::as_u64)
                .filter(|b| *b > 0),
            interval: seconds("interval_seconds"),
            inactivity: seconds("inactivity_seconds"),
        }
    }

    /// Whether the policy closes files on time, so the sink must be woken while no rows
    /// arrive.
    pub fn timed(&self) -> bool {
        self.interval.is_some() || self.inactivity.is_some()
    }

    /// Whether a file of `bytes`, open for `age` and quiet for `quiet`, is to be closed.
    pub fn rolls(&self, bytes: u64, age: Duration, quiet: Duration) -> bool {
        self.file_size.is_some_and(|s| bytes >= s)
            || self.interval.is_some_and(|i| age >= i)
            || self.inactivity.is_some_and(|i| quiet >= i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn spec(time: Option<&str>, fields: &[&str]) -> PartitionSpec {
        PartitionSpec {
            time_pattern: time.map(str::to_string),
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn directories_join_the_time_and_escaped_field_values() {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 12, 1, 9, 5, 0)
            .single()
            .expect("a time");
        let s = spec(Some("%Y/%m/%d/%H"), &["kind", "app"]);
        let time = s.time_directory(now);
        assert_eq!(time, "2026/12/01/09");
        assert_eq!(
            s.directory(&time, &[Some("click"), Some("v1.2")]),
            "2026/12/01/09/kind=click/app=v1.2"
        );
        assert_eq!(
            s.directory(&time, &[Some("../etc"), None]),
            "2026/12/01/09/kind=..%2Fetc/app=__HIVE_DEFAULT_PARTITION__"
        );
        assert_eq!(spec(None, &["k"]).directory("", &[Some("..")]), "k=%2E%2E");
        assert_eq!(spec(None, &["k"]).directory("", &[Some("")]), "k=%00");
    }

    #[test]
    fn time_patterns_are_checked_and_cannot_leave_the_directory() {
        assert!(check_time_pattern("%Y/%m/%d").is_ok());
        assert!(
            check_time_pattern("%Q")
                .unwrap_err()
                .contains("not a strftime pattern")
        );
        assert!(
            check_time_pattern("/%Y")
                .unwrap_err()
                .contains("starts with '/'")
        );
        let now = chrono::Utc::now();
        assert_eq!(
            spec(Some("../x/%Y"), &[])
                .time_directory(now)
                .split('/')
                .next(),
            Some("x")
        );
    }

    #[test]
    fn rolling_limits_each_close_a_file() {
        let p = RollingPolicy::of_table(
            &serde_json::json!({"r": {"file_size_bytes": 100, "interval_seconds": 60, "inactivity_seconds": 5}}),
            "/r",
        );
        let s = Duration::from_secs;
        assert!(p.timed());
        assert!(!p.rolls(99, s(59), s(4)));
        assert!(p.rolls(100, s(0), s(0)));
        assert!(p.rolls(0, s(60), s(0)));
        assert!(p.rolls(0, s(0), s(5)));
        assert_eq!(
            RollingPolicy::of_table(&serde_json::json!({}), "/r"),
            RollingPolicy::default()
        );
    }
}
