//! [`ExpandedSchema`]: what any schema document (JSON Schema, Avro, Protobuf) expands into.

use tributary_types::SourceField;

/// The columns a schema document describes, and what was approximated on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedSchema {
    /// The top-level columns.
    pub fields: Vec<SourceField>,
    /// Why some columns became JSON (or other approximate) columns, one sentence each
    /// (`column 'x' is a union of int and string, ...`).
    pub notes: Vec<String>,
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
