//! [`ExpandedSchema`]: what any schema document (JSON Schema, Avro, Protobuf) expands into.

use tributary_types::SourceField;
use tributary_types::limits::{MAX_EXPANDED_FIELDS, MAX_SCHEMA_DEPTH};

/// The columns a schema document describes, and what was approximated on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedSchema {
    /// The top-level columns.
    pub fields: Vec<SourceField>,
    /// Why some columns became JSON (or other approximate) columns.
    pub notes: Vec<ColumnNote>,
}

/// Why one column (or a field inside one) was approximated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnNote {
    /// The field's path: `extra`, `customer.address`, `events[]`.
    pub path: String,
    /// What happened, as the rest of a sentence: `is a union of int, string; ...`.
    pub reason: String,
}

impl ColumnNote {
    pub(crate) fn new(path: &str, reason: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            reason: reason.into(),
        }
    }

    /// The top-level column the path is in.
    pub fn column(&self) -> &str {
        self.path.split(['.', '[']).next().unwrap_or(&self.path)
    }
}

impl std::fmt::Display for ColumnNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "column '{}' {}", self.path, self.reason)
    }
}

/// Bounds on expanding one schema document, so that a small document cannot expand into
/// an exponential number of columns (a type referenced twice by each of twenty types) or
/// recurse past the stack.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    fields: usize,
}

/// Which bound an expansion crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// More than `limits::MAX_EXPANDED_FIELDS` fields.
    Fields,
    /// Deeper than `limits::MAX_SCHEMA_DEPTH`.
    Depth,
}

impl Budget {
    /// Count one more field (nested ones included).
    pub(crate) fn field(&mut self) -> Result<(), Exceeded> {
        self.fields += 1;
        if self.fields > MAX_EXPANDED_FIELDS {
            return Err(Exceeded::Fields);
        }
        Ok(())
    }

    /// Check a nesting depth (types inside types, and chains of references).
    pub(crate) fn depth(depth: usize) -> Result<(), Exceeded> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(Exceeded::Depth);
        }
        Ok(())
    }
}

/// serde_json's message without its trailing " at line L column C", which callers report
/// as a position of their own.
pub(crate) fn json_error_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    message
        .rsplit_once(" at line ")
        .map(|(m, _)| m.to_string())
        .unwrap_or(message)
}
