//! `SET preview.max_rows = N` and `SET preview.timeout = '10 seconds'`: the bounds a
//! session puts on every source a query reads, so that aggregates, sorts and windows over
//! unbounded sources finish (over the first N rows of each source, or what arrived in T).
//! They live in DataFusion's session configuration under the `preview` namespace.

use datafusion::common::config::{ConfigExtension, ConfigField, Visit};
use datafusion::error::{DataFusionError, Result};
use std::fmt;
use std::time::Duration;
use tributary_types::parse_interval_micros;

datafusion::common::extensions_options! {
    /// A session's bounds on reading sources.
    pub struct PreviewOptions {
        /// The most rows a query reads from each source.
        pub max_rows: Option<usize>, default = None
        /// How long a query reads each source (an interval: '10 seconds').
        pub timeout: Option<PreviewTimeout>, default = None
    }
}

impl ConfigExtension for PreviewOptions {
    const PREFIX: &'static str = "preview";
}

impl PreviewOptions {
    /// Whether either bound is set, so every source read ends.
    pub fn bounds_reads(&self) -> bool {
        self.max_rows.is_some() || self.timeout.is_some()
    }
}

/// `preview.timeout`: a positive interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PreviewTimeout(pub Duration);

impl fmt::Display for PreviewTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} milliseconds", self.0.as_millis())
    }
}

impl ConfigField for PreviewTimeout {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description)
    }

    fn set(&mut self, _key: &str, value: &str) -> Result<()> {
        self.0 = positive_interval(value, "preview.timeout", "'10 seconds'")?;
        Ok(())
    }
}

/// `value` as a positive interval for option `name`, or why not (with an `example` of
/// the value to write).
pub(crate) fn positive_interval(value: &str, name: &str, example: &str) -> Result<Duration> {
    match parse_interval_micros(value) {
        Ok(us) if us > 0 => Ok(Duration::from_micros(us as u64)),
        Ok(_) => Err(DataFusionError::Configuration(format!(
            "{name} must be longer than zero; write SET {name} = {example}"
        ))),
        Err(e) => Err(DataFusionError::Configuration(format!(
            "invalid {name} '{value}': {e}; write SET {name} = {example}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::config::ExtensionOptions;

    #[test]
    fn the_bounds_parse_and_bad_timeouts_are_refused() {
        let mut p = PreviewOptions::default();
        assert!(!p.bounds_reads());
        ExtensionOptions::set(&mut p, "max_rows", "100").expect("max_rows");
        assert_eq!(p.max_rows, Some(100));
        ExtensionOptions::set(&mut p, "timeout", "2 seconds").expect("timeout");
        assert_eq!(p.timeout, Some(PreviewTimeout(Duration::from_secs(2))));
        assert!(p.bounds_reads());
        let e = ExtensionOptions::set(&mut p, "timeout", "soon").expect_err("not an interval");
        assert!(
            e.to_string().contains("invalid preview.timeout 'soon'"),
            "{e}"
        );
        let e = ExtensionOptions::set(&mut p, "timeout", "0 seconds").expect_err("zero");
        assert!(e.to_string().contains("longer than zero"), "{e}");
        assert!(ExtensionOptions::set(&mut p, "max_rows", "many").is_err());
    }
}
