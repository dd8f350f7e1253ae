//! Arroyo's pipeline options, set with `SET`: `updating_ttl`, how long an updating
//! (non-windowed) aggregate keeps a key's state without changes. Kept in the session's
//! DataFusion configuration as `pipeline.updating_ttl`, beside the `preview.*` bounds.

use crate::preview_bounds::positive_interval;
use datafusion::common::Result;
use datafusion::config::{ConfigExtension, ConfigField, Visit};
use std::fmt;
use std::time::Duration;

datafusion::common::extensions_options! {
    /// A session's pipeline options.
    pub struct PipelineOptions {
        /// How long an updating aggregate keeps a key's state (Arroyo's default: a day).
        pub updating_ttl: Option<UpdatingTtl>, default = None
    }
}

impl ConfigExtension for PipelineOptions {
    const PREFIX: &'static str = "pipeline";
}

/// The options `SET` takes without a prefix, as Arroyo writes them, and their keys.
pub const PIPELINE_OPTIONS: &[(&str, &str)] = &[("updating_ttl", "pipeline.updating_ttl")];

/// `updating_ttl`: a positive interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UpdatingTtl(pub Duration);

impl fmt::Display for UpdatingTtl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} seconds", self.0.as_secs_f64())
    }
}

impl ConfigField for UpdatingTtl {
    fn visit<V: Visit>(&self, v: &mut V, key: &str, description: &'static str) {
        v.some(key, self, description)
    }

    fn set(&mut self, _key: &str, value: &str) -> Result<()> {
        self.0 = positive_interval(value, "updating_ttl", "INTERVAL '1' HOUR")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::config::ExtensionOptions;

    #[test]
    fn the_ttl_is_a_positive_interval() {
        let mut p = PipelineOptions::default();
        ExtensionOptions::set(&mut p, "updating_ttl", "2 hours").expect("an interval");
        assert_eq!(p.updating_ttl, Some(UpdatingTtl(Duration::from_secs(7200))));
        let e = ExtensionOptions::set(&mut p, "updating_ttl", "later").expect_err("not one");
        assert!(
            e.to_string().contains("invalid updating_ttl 'later'"),
            "{e}"
        );
        let e = ExtensionOptions::set(&mut p, "updating_ttl", "0 seconds").expect_err("zero");
        assert!(e.to_string().contains("longer than zero"), "{e}");
    }
}
