//! [`Failure`]: why a binary record failed to decode, and the field path it failed at
//! (`field 'customer.address': ...`), shared by the Avro and Protobuf decoders.

use crate::columns::ColumnError;
use std::fmt;

/// A decoding failure and where in the record it happened.
#[derive(Debug)]
pub(crate) struct Failure {
    /// Field names, innermost first (they are added as the error unwinds).
    path: Vec<String>,
    reason: String,
}

impl Failure {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            path: Vec::new(),
            reason: reason.into(),
        }
    }

    /// The same failure, one field further out.
    pub(crate) fn at(mut self, name: &str) -> Self {
        self.path.push(name.to_string());
        self
    }
}

impl From<&str> for Failure {
    fn from(reason: &str) -> Self {
        Failure::new(reason)
    }
}

impl From<String> for Failure {
    fn from(reason: String) -> Self {
        Failure::new(reason)
    }
}

impl From<ColumnError> for Failure {
    fn from(e: ColumnError) -> Self {
        Failure::new(e.0)
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            return f.write_str(&self.reason);
        }
        let path: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
        write!(f, "field '{}': {}", path.join("."), self.reason)
    }
}
