//! Public ids: `cp_…` for connection profiles and `ct_…` for connection tables.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! public_id {
    ($name:ident, $prefix:literal, $what:literal) => {
        #[doc = concat!("The public id of a ", $what, ": `", $prefix, "_` followed by 10 alphanumerics.")]
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id's prefix, without the underscore.
            pub const PREFIX: &'static str = $prefix;

            /// Build an id from its 10-character random part.
            pub fn from_suffix(suffix: &str) -> Self {
                Self(format!("{}_{}", $prefix, suffix))
            }

            /// Parse an id, checking its prefix and alphabet.
            pub fn parse(s: &str) -> Option<Self> {
                let rest = s.strip_prefix(concat!($prefix, "_"))?;
                (!rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric()))
                    .then(|| Self(s.to_string()))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

public_id!(ProfileId, "cp", "connection profile");
public_id!(TableId, "ct", "connection table");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_checks_prefix_and_alphabet() {
        assert_eq!(
            ProfileId::parse("cp_abc123XYZ0").unwrap().as_str(),
            "cp_abc123XYZ0"
        );
        assert!(ProfileId::parse("ct_abc").is_none());
        assert!(TableId::parse("ct_").is_none());
        assert!(TableId::parse("ct_a-b").is_none());
        assert_eq!(
            TableId::from_suffix("0123456789").to_string(),
            "ct_0123456789"
        );
    }
}
