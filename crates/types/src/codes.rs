//! Diagnostic codes: short, stable names for the kind of problem a diagnostic reports, so
//! that programs (editors, CI annotations, scripts over `--format json` and the REST API)
//! can match on them rather than on wording, which may improve. [`Code`] is the complete
//! list; `docs/cli.md` documents each one, and a test keeps the two in step.
//!
//! Connection tests use the same style: their codes (`CONNECT_REFUSED`, `AUTH_FAILED`,
//! ...) are codes here too, as a failed test's diagnostic carries its stage's code.

use serde::{Deserialize, Serialize};

/// What kind of problem a diagnostic reports. One byte, so diagnostics stay small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// The statement does not parse.
    SyntaxError,
    /// An option the connector, format or statement does not have.
    UnknownOption,
    /// A required option is missing.
    MissingOption,
    /// An option's value has the wrong type, is out of range or not allowed.
    InvalidOption,
    /// Options that cannot be combined, or one that needs another.
    ConflictingOptions,
    /// No connector has this name.
    UnknownConnector,
    /// The format or its schema text cannot be used.
    InvalidFormat,
    /// A column, type, watermark, key or generated column is not valid.
    InvalidSchema,
    /// The schema registry could not be asked, or its answer cannot be used.
    SchemaRegistry,
    /// A table, profile, topic, stream, path or other named object does not exist.
    NotFound,
    /// An object of that name already exists.
    AlreadyExists,
    /// The object is used by others and cannot be dropped.
    InUse,
    /// The catalog cannot be read or written.
    Catalog,
    /// The query does not plan.
    PlanError,
    /// The query failed while it ran.
    ExecutionError,
    /// The query reads an unbounded source and could never finish.
    UnboundedQuery,
    /// The query breaks a rule of streaming SQL (as Arroyo's planner applies them).
    StreamingRule,
    /// Valid, but not something Tributary does (or can test) here.
    Unsupported,
    /// The input is larger or deeper than a limit allows.
    LimitExceeded,
    /// A secret is exposed, or a {{ VAR }} reference is wrong.
    Secret,
    /// The server's operator does not allow it: a file, a variable or an address.
    Forbidden,
    /// A query needed more memory, time or room than the server gives it.
    ResourcesExhausted,
    /// The statement is not valid, and no more precise code applies.
    Invalid,
    /// A note of what the statement did or found.
    Info,
    /// A warning: the statement ran, but may not do what was meant.
    Advice,
    /// Connection test: a {{ VAR }} reference names an unset variable.
    MissingVariable,
    /// Connection test: the host name does not resolve.
    DnsUnresolved,
    /// Connection test: nothing listens at the address.
    ConnectRefused,
    /// Connection test: no answer within the timeout.
    Timeout,
    /// Connection test: the credentials were refused.
    AuthFailed,
    /// Connection test: TLS could not be established.
    TlsFailed,
    /// Connection test: access is denied.
    PermissionDenied,
    /// Connection test: nothing arrived to read.
    Empty,
    /// Connection test: a message did not decode.
    DecodeFailed,
    /// Connection test: the system answered something unexpected.
    BadResponse,
    /// Connection test: the system cannot be reached from here.
    NotTestable,
}

impl Code {
    /// Every code, in the order the documentation lists them.
    pub const ALL: &'static [Code] = &[
        Code::SyntaxError,
        Code::UnknownOption,
        Code::MissingOption,
        Code::InvalidOption,
        Code::ConflictingOptions,
        Code::UnknownConnector,
        Code::InvalidFormat,
        Code::InvalidSchema,
        Code::SchemaRegistry,
        Code::NotFound,
        Code::AlreadyExists,
        Code::InUse,
        Code::Catalog,
        Code::PlanError,
        Code::ExecutionError,
        Code::UnboundedQuery,
        Code::StreamingRule,
        Code::Unsupported,
        Code::LimitExceeded,
        Code::Secret,
        Code::Forbidden,
        Code::ResourcesExhausted,
        Code::Invalid,
        Code::Info,
        Code::Advice,
        Code::MissingVariable,
        Code::DnsUnresolved,
        Code::ConnectRefused,
        Code::Timeout,
        Code::AuthFailed,
        Code::TlsFailed,
        Code::PermissionDenied,
        Code::Empty,
        Code::DecodeFailed,
        Code::BadResponse,
        Code::NotTestable,
    ];

    /// The code as written: `SYNTAX_ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::SyntaxError => "SYNTAX_ERROR",
            Code::UnknownOption => "UNKNOWN_OPTION",
            Code::MissingOption => "MISSING_OPTION",
            Code::InvalidOption => "INVALID_OPTION",
            Code::ConflictingOptions => "CONFLICTING_OPTIONS",
            Code::UnknownConnector => "UNKNOWN_CONNECTOR",
            Code::InvalidFormat => "INVALID_FORMAT",
            Code::InvalidSchema => "INVALID_SCHEMA",
            Code::SchemaRegistry => "SCHEMA_REGISTRY",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::InUse => "IN_USE",
            Code::Catalog => "CATALOG",
            Code::PlanError => "PLAN_ERROR",
            Code::ExecutionError => "EXECUTION_ERROR",
            Code::UnboundedQuery => "UNBOUNDED_QUERY",
            Code::StreamingRule => "STREAMING_RULE",
            Code::Unsupported => "UNSUPPORTED",
            Code::LimitExceeded => "LIMIT_EXCEEDED",
            Code::Secret => "SECRET",
            Code::Forbidden => "FORBIDDEN",
            Code::ResourcesExhausted => "RESOURCES_EXHAUSTED",
            Code::Invalid => "INVALID",
            Code::Info => "INFO",
            Code::Advice => "ADVICE",
            Code::MissingVariable => "MISSING_VARIABLE",
            Code::DnsUnresolved => "DNS_UNRESOLVED",
            Code::ConnectRefused => "CONNECT_REFUSED",
            Code::Timeout => "TIMEOUT",
            Code::AuthFailed => "AUTH_FAILED",
            Code::TlsFailed => "TLS_FAILED",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::Empty => "EMPTY",
            Code::DecodeFailed => "DECODE_FAILED",
            Code::BadResponse => "BAD_RESPONSE",
            Code::NotTestable => "NOT_TESTABLE",
        }
    }

    /// What it means, in a few words.
    pub fn meaning(self) -> &'static str {
        match self {
            Code::SyntaxError => "the statement does not parse",
            Code::UnknownOption => "an option the connector, format or statement does not have",
            Code::MissingOption => "a required option is missing",
            Code::InvalidOption => {
                "an option's value has the wrong type, is out of range or not allowed"
            }
            Code::ConflictingOptions => {
                "options that cannot be combined, or one that needs another"
            }
            Code::UnknownConnector => "no connector has this name",
            Code::InvalidFormat => "the format or its schema text cannot be used",
            Code::InvalidSchema => {
                "a column, type, watermark, key or generated column is not valid"
            }
            Code::SchemaRegistry => {
                "the schema registry could not be asked, or its answer cannot be used"
            }
            Code::NotFound => {
                "a table, profile, topic, stream, path or other named object does not exist"
            }
            Code::AlreadyExists => "an object of that name already exists",
            Code::InUse => "the object is used by others and cannot be dropped",
            Code::Catalog => "the catalog cannot be read or written",
            Code::PlanError => "the query does not plan",
            Code::ExecutionError => "the query failed while it ran",
            Code::UnboundedQuery => "the query reads an unbounded source and could never finish",
            Code::StreamingRule => "the query breaks a rule of streaming SQL",
            Code::Unsupported => "valid, but not something Tributary does (or can test) here",
            Code::LimitExceeded => "the input is larger or deeper than a limit allows",
            Code::Secret => "a secret is exposed, or a {{ VAR }} reference is wrong",
            Code::Forbidden => {
                "the server's operator does not allow it: a file, a variable or an address"
            }
            Code::ResourcesExhausted => {
                "a query needed more memory, time or room than the server gives it"
            }
            Code::Invalid => "the statement is not valid, and no more precise code applies",
            Code::Info => "a note of what the statement did or found",
            Code::Advice => "a warning: the statement ran, but may not do what was meant",
            Code::MissingVariable => {
                "connection test: a {{ VAR }} reference names an unset variable"
            }
            Code::DnsUnresolved => "connection test: the host name does not resolve",
            Code::ConnectRefused => "connection test: nothing listens at the address",
            Code::Timeout => "connection test: no answer within the timeout",
            Code::AuthFailed => "connection test: the credentials were refused",
            Code::TlsFailed => "connection test: TLS could not be established",
            Code::PermissionDenied => "connection test: access is denied",
            Code::Empty => "connection test: nothing arrived to read",
            Code::DecodeFailed => "connection test: a message did not decode",
            Code::BadResponse => "connection test: the system answered something unexpected",
            Code::NotTestable => "connection test: the system cannot be reached from here",
        }
    }

    /// The code written `text`, if there is one.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The codes by name, for `.with_code(codes::SYNTAX_ERROR)`. This one: the statement
/// does not parse.
pub const SYNTAX_ERROR: Code = Code::SyntaxError;
/// An option the connector, format or statement does not have.
pub const UNKNOWN_OPTION: Code = Code::UnknownOption;
/// A required option is missing.
pub const MISSING_OPTION: Code = Code::MissingOption;
/// An option's value has the wrong type, is out of range or not allowed.
pub const INVALID_OPTION: Code = Code::InvalidOption;
/// Options that cannot be combined, or one that needs another.
pub const CONFLICTING_OPTIONS: Code = Code::ConflictingOptions;
/// No connector has this name.
pub const UNKNOWN_CONNECTOR: Code = Code::UnknownConnector;
/// The format or its schema text cannot be used.
pub const INVALID_FORMAT: Code = Code::InvalidFormat;
/// A column, type, watermark, key or generated column is not valid.
pub const INVALID_SCHEMA: Code = Code::InvalidSchema;
/// The schema registry could not be asked, or its answer cannot be used.
pub const SCHEMA_REGISTRY: Code = Code::SchemaRegistry;
/// A table, profile, topic, stream, path or other named object does not exist.
pub const NOT_FOUND: Code = Code::NotFound;
/// An object of that name already exists.
pub const ALREADY_EXISTS: Code = Code::AlreadyExists;
/// The object is used by others and cannot be dropped.
pub const IN_USE: Code = Code::InUse;
/// The catalog cannot be read or written.
pub const CATALOG: Code = Code::Catalog;
/// The query does not plan.
pub const PLAN_ERROR: Code = Code::PlanError;
/// The query failed while it ran.
pub const EXECUTION_ERROR: Code = Code::ExecutionError;
/// The query reads an unbounded source and could never finish.
pub const UNBOUNDED_QUERY: Code = Code::UnboundedQuery;
/// The query breaks a rule of streaming SQL (as Arroyo's planner applies them).
pub const STREAMING_RULE: Code = Code::StreamingRule;
/// Valid, but not something Tributary does (or can test) here.
pub const UNSUPPORTED: Code = Code::Unsupported;
/// The input is larger or deeper than a limit allows.
pub const LIMIT_EXCEEDED: Code = Code::LimitExceeded;
/// A secret is exposed, or a {{ VAR }} reference is wrong.
pub const SECRET: Code = Code::Secret;
/// The server's operator does not allow it: a file, a variable or an address.
pub const FORBIDDEN: Code = Code::Forbidden;
/// A query needed more memory, time or room than the server gives it.
pub const RESOURCES_EXHAUSTED: Code = Code::ResourcesExhausted;
/// The statement is not valid, and no more precise code applies.
pub const INVALID: Code = Code::Invalid;
/// A note of what the statement did or found.
pub const INFO: Code = Code::Info;
/// A warning: the statement ran, but may not do what was meant.
pub const ADVICE: Code = Code::Advice;
/// Connection test: a {{ VAR }} reference names an unset variable.
pub const TEST_MISSING_VARIABLE: Code = Code::MissingVariable;
/// Connection test: the host name does not resolve.
pub const TEST_DNS_UNRESOLVED: Code = Code::DnsUnresolved;
/// Connection test: nothing listens at the address.
pub const TEST_CONNECT_REFUSED: Code = Code::ConnectRefused;
/// Connection test: no answer within the timeout.
pub const TEST_TIMEOUT: Code = Code::Timeout;
/// Connection test: the credentials were refused.
pub const TEST_AUTH_FAILED: Code = Code::AuthFailed;
/// Connection test: TLS could not be established.
pub const TEST_TLS_FAILED: Code = Code::TlsFailed;
/// Connection test: access is denied.
pub const TEST_PERMISSION_DENIED: Code = Code::PermissionDenied;
/// Connection test: nothing arrived to read.
pub const TEST_EMPTY: Code = Code::Empty;
/// Connection test: a message did not decode.
pub const TEST_DECODE_FAILED: Code = Code::DecodeFailed;
/// Connection test: the system answered something unexpected.
pub const TEST_BAD_RESPONSE: Code = Code::BadResponse;
/// Connection test: the system cannot be reached from here.
pub const TEST_NOT_TESTABLE: Code = Code::NotTestable;

/// Give each of `diags` that has no code yet the general one for its severity: `error`
/// for errors, [`ADVICE`] for warnings and [`INFO`] for notes.
pub fn fill(diags: &mut [crate::Diagnostic], error: Code) {
    for d in diags.iter_mut().filter(|d| d.code.is_none()) {
        d.code = Some(match d.severity {
            crate::Severity::Error => error,
            crate::Severity::Warning => ADVICE,
            crate::Severity::Note => INFO,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_screaming_snake_case_parse_back_and_are_distinct() {
        for code in Code::ALL {
            let text = code.as_str();
            assert!(
                text.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{text}"
            );
            assert_eq!(Code::parse(text), Some(*code));
            assert_eq!(
                serde_json::to_value(code).expect("a code serialises"),
                serde_json::Value::String(text.into())
            );
            assert!(!code.meaning().is_empty());
        }
        let mut texts: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        texts.sort();
        texts.dedup();
        assert_eq!(texts.len(), Code::ALL.len());
        assert_eq!(Code::parse("NOPE"), None);
    }

    #[test]
    fn the_cli_documentation_lists_every_code_with_its_meaning() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md");
        let docs = std::fs::read_to_string(path).expect("docs/cli.md is readable");
        for code in Code::ALL {
            let row = format!("| `{code}` | {} |", code.meaning());
            assert!(docs.contains(&row), "docs/cli.md lacks the row {row}");
        }
    }
}
