//! The bounds Tributary keeps on every input, so that time and memory grow at most
//! linearly with what a user (or an attacker) sends. Crossing one is a diagnostic naming
//! the limit, never an abort. docs/sql.md lists them for users.

/// The largest script `run`, `check` and a session accept, in bytes.
pub const MAX_SCRIPT_BYTES: usize = 64 * 1024 * 1024;

/// The largest single statement, in bytes (a schema inlined in a WITH clause included;
/// larger schemas belong in a file).
pub const MAX_STATEMENT_BYTES: usize = 1024 * 1024;

/// The most options one WITH (or SET) clause may give.
pub const MAX_OPTIONS: usize = 1_000;

/// The most columns a table may declare.
pub const MAX_COLUMNS: usize = 10_000;

/// The deepest nesting of parentheses, brackets and type brackets (`STRUCT<..>`,
/// `MAP(..)`, `T[]`) in a statement.
pub const MAX_NESTING_DEPTH: usize = 64;

/// The deepest expression tree a statement may build: nesting plus chains of binary
/// operators (`a + b + c` is three deep), bounding every recursion over expressions.
pub const MAX_EXPRESSION_DEPTH: usize = 256;

/// The most fields (nested ones included) a schema document may expand into.
pub const MAX_EXPANDED_FIELDS: usize = 10_000;

/// The deepest nesting of types (and chain of references) in a schema document.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The largest schema or descriptor file read for a table, in bytes.
pub const MAX_SCHEMA_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The largest a compressed message may grow when it is inflated (a small gzip message
/// can expand a thousandfold).
pub const MAX_INFLATED_MESSAGE_BYTES: u64 = 64 * 1024 * 1024;

/// The most diagnostics one statement reports; the rest are counted in a final note.
pub const MAX_DIAGNOSTICS_PER_STATEMENT: usize = 50;

/// The most diagnostics one script reports; the rest are counted in a final note.
pub const MAX_DIAGNOSTICS_PER_SCRIPT: usize = 500;

/// The longest option key or name that gets a did-you-mean: longer than any real one.
pub const MAX_SUGGESTED_NAME_CHARS: usize = 128;

/// At most this many characters of a user-given name or value are quoted in a message.
pub const MAX_QUOTED_CHARS: usize = 64;

/// The largest REST request body, in bytes (a script sent to `POST /sql` included).
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The deepest nesting of arrays and objects in a REST request body.
pub const MAX_JSON_DEPTH: usize = 128;

/// The longest a REST connection test may stream, in seconds, whatever its timeout.
pub const MAX_TEST_SECONDS: u64 = 60;

/// Connection tests (and other requests that connect) a server runs at once.
pub const MAX_CONCURRENT_TESTS: usize = 8;

/// The largest page of `GET /connection_tables`.
pub const MAX_PAGE_SIZE: usize = 1_000;

/// `s` for quoting in a message: whole when short, otherwise its start, an ellipsis and
/// its length, so a megabyte-long key cannot make a megabyte-long diagnostic.
pub fn shorten(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() <= MAX_QUOTED_CHARS {
        return std::borrow::Cow::Borrowed(s);
    }
    let head: String = s.chars().take(MAX_QUOTED_CHARS).collect();
    if head.len() == s.len() {
        return std::borrow::Cow::Borrowed(s);
    }
    let total = s.chars().count();
    std::borrow::Cow::Owned(format!("{head}… ({total} characters)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_with_their_length() {
        assert_eq!(shorten("topic"), "topic");
        let long = "k".repeat(100_000);
        let s = shorten(&long);
        assert!(s.len() < 100, "{s}");
        assert!(s.ends_with("… (100000 characters)"), "{s}");
        // Multi-byte characters are counted as characters, and never split.
        let wide = "é".repeat(40);
        assert_eq!(shorten(&wide), wide);
    }
}
