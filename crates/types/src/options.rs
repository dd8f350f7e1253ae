//! [`WithOptions`]: the options of a WITH clause with their spans, consumed as they are read.
//!
//! Readers take the keys they understand; whatever is left at the end is unknown and is
//! reported all at once. Typed accessors turn a wrongly-typed value into a diagnostic that
//! points at the value.

use crate::diagnostic::Diagnostic;
use crate::limits::shorten;
use crate::records::{OptionEntry, OptionValue};
use crate::secret::{REDACTED, contains_redacted};
use crate::span::Span;
use std::collections::HashMap;

/// One `key = value` pair as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlOption {
    /// The key, quotes removed, case preserved.
    pub key: String,
    /// Where the key is.
    pub key_span: Span,
    /// The value.
    pub value: OptionValue,
    /// Where the value is.
    pub value_span: Span,
}

impl SqlOption {
    /// A span covering key and value.
    pub fn span(&self) -> Span {
        self.key_span.union(&self.value_span)
    }

    /// The option as a catalog entry (the caller decides sensitivity).
    pub fn to_entry(&self, sensitive: bool) -> OptionEntry {
        let entry = OptionEntry {
            key: self.key.clone(),
            value: self.value.clone(),
            sensitive,
        };
        entry.remember_secrets();
        entry
    }

    /// A short, secret-free description of the value's kind for error messages.
    pub fn value_kind(&self) -> &'static str {
        match &self.value {
            OptionValue::String(_) => "a string",
            OptionValue::Number(_) => "a number",
            OptionValue::Bool(_) => "a boolean",
            OptionValue::Interval(_) => "an interval",
            OptionValue::Identifier(_) => "an identifier",
            OptionValue::Array(_) => "an array",
        }
    }
}

/// The options of one WITH clause. Keys are indexed, so taking every option of a long
/// clause is linear in its length.
#[derive(Debug, Clone, Default)]
pub struct WithOptions {
    items: Vec<SqlOption>,
    taken: Vec<bool>,
    index: HashMap<String, usize>,
}

impl WithOptions {
    /// Build from parsed options; a key given twice is an error (the second occurrence is
    /// dropped so the rest of the pipeline still sees one value).
    pub fn new(options: Vec<SqlOption>) -> (Self, Vec<Diagnostic>) {
        let mut items: Vec<SqlOption> = Vec::with_capacity(options.len());
        let mut index = HashMap::with_capacity(options.len());
        let mut diagnostics = Vec::new();
        for opt in options {
            if let Some(first) = index.get(&opt.key).map(|&i: &usize| &items[i]) {
                diagnostics.push(
                    Diagnostic::error(format!(
                        "option '{}' is specified more than once",
                        shorten(&opt.key)
                    ))
                    .with_span(opt.key_span)
                    .with_note(format!(
                        "first specified at line {}, column {}",
                        first.key_span.start.line, first.key_span.start.column
                    ))
                    .with_help("Remove one of the two settings.")
                    .with_code(crate::codes::CONFLICTING_OPTIONS),
                );
                continue;
            }
            if holds_placeholder(&opt.value) {
                diagnostics.push(
                    Diagnostic::error(format!(
                        "option '{}' holds '{REDACTED}', the placeholder Tributary prints in place of a secret",
                        shorten(&opt.key)
                    ))
                    .with_span(opt.value_span)
                    .with_note("SHOW CREATE and DESCRIBE never print secrets, so their output cannot give one back")
                    .with_help("Give the secret itself, or a reference to an environment variable such as '{{ KAFKA_PASSWORD }}'.")
                    .with_code(crate::codes::SECRET),
                );
            }
            index.insert(opt.key.clone(), items.len());
            items.push(opt);
        }
        let taken = vec![false; items.len()];
        (
            Self {
                items,
                taken,
                index,
            },
            diagnostics,
        )
    }

    /// Add an option the statement implies (a temporary table's `type = 'lookup'`), unless
    /// one with its key is present.
    pub fn supply(&mut self, option: SqlOption) {
        if !self.index.contains_key(&option.key) {
            self.index.insert(option.key.clone(), self.items.len());
            self.items.push(option);
            self.taken.push(false);
        }
    }

    /// Look at an option without consuming it.
    pub fn peek(&self, key: &str) -> Option<&SqlOption> {
        let &i = self.index.get(key)?;
        (!self.taken[i]).then(|| &self.items[i])
    }

    /// Whether an option is present (and not yet consumed).
    pub fn contains(&self, key: &str) -> bool {
        self.peek(key).is_some()
    }

    /// Consume an option.
    pub fn take(&mut self, key: &str) -> Option<SqlOption> {
        let &i = self.index.get(key)?;
        if self.taken[i] {
            return None;
        }
        self.taken[i] = true;
        Some(self.items[i].clone())
    }

    /// Consume every option whose key starts with `prefix`.
    pub fn take_prefixed(&mut self, prefix: &str) -> Vec<SqlOption> {
        let mut out = Vec::new();
        for (i, o) in self.items.iter().enumerate() {
            if !self.taken[i] && o.key.starts_with(prefix) {
                self.taken[i] = true;
                out.push(o.clone());
            }
        }
        out
    }

    /// Consume a string option.
    pub fn take_string(&mut self, key: &str) -> Result<Option<(String, Span)>, Diagnostic> {
        match self.take(key) {
            None => Ok(None),
            Some(o) => match &o.value {
                OptionValue::String(s) => Ok(Some((s.clone(), o.value_span))),
                _ => Err(expected(&o, "a single-quoted string", "'text'")),
            },
        }
    }

    /// Consume a boolean option (`true`, or the strings 'true'/'false'/'yes'/'no').
    pub fn take_bool(&mut self, key: &str) -> Result<Option<(bool, Span)>, Diagnostic> {
        match self.take(key) {
            None => Ok(None),
            Some(o) => to_bool(&o).map(|b| Some((b, o.value_span))),
        }
    }

    /// Consume an unsigned integer option (a number or a numeric string).
    pub fn take_u64(&mut self, key: &str) -> Result<Option<(u64, Span)>, Diagnostic> {
        match self.take(key) {
            None => Ok(None),
            Some(o) => to_u64(&o).map(|n| Some((n, o.value_span))),
        }
    }

    /// Consume an integer option.
    pub fn take_i64(&mut self, key: &str) -> Result<Option<(i64, Span)>, Diagnostic> {
        match self.take(key) {
            None => Ok(None),
            Some(o) => to_i64(&o).map(|n| Some((n, o.value_span))),
        }
    }

    /// Consume an identifier option (a bare name; a string is accepted for compatibility).
    pub fn take_field(&mut self, key: &str) -> Result<Option<(String, Span)>, Diagnostic> {
        match self.take(key) {
            None => Ok(None),
            Some(o) => match &o.value {
                OptionValue::Identifier(s) | OptionValue::String(s) => {
                    Ok(Some((s.clone(), o.value_span)))
                }
                _ => Err(expected(&o, "a column name", "event_time")),
            },
        }
    }

    /// The options nobody consumed, in the order written.
    pub fn remaining(&self) -> Vec<&SqlOption> {
        self.items
            .iter()
            .zip(&self.taken)
            .filter(|(_, t)| !**t)
            .map(|(o, _)| o)
            .collect()
    }

    /// All options as written, consumed or not.
    pub fn all(&self) -> &[SqlOption] {
        &self.items
    }
}

/// Whether a value holds the redaction placeholder anywhere.
fn holds_placeholder(value: &OptionValue) -> bool {
    match value {
        OptionValue::String(s) | OptionValue::Identifier(s) => contains_redacted(s),
        OptionValue::Array(items) => items.iter().any(holds_placeholder),
        _ => false,
    }
}

/// The diagnostic for a value of the wrong kind. Never echoes the value itself, which may
/// be a secret.
pub fn expected(o: &SqlOption, what: &str, example: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "expected option '{}' to be {what}, but it is {}",
        shorten(&o.key),
        o.value_kind()
    ))
    .with_span(o.value_span)
    .with_help(format!("Write it as {} = {example}.", quote_key(&o.key)))
    .with_code(crate::codes::INVALID_OPTION)
}

/// `key` as it must be written in a WITH clause (dotted keys quoted).
pub fn quote_key(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        key.to_string()
    } else {
        format!("'{key}'")
    }
}

/// The diagnostic for `value` outside the enumeration `allowed` of option `key`, with a
/// did-you-mean when one is close.
pub fn not_allowed(key: &str, value: &str, allowed: &[&str], span: Span) -> Diagnostic {
    let d = Diagnostic::error(format!(
        "invalid value '{}' for option '{key}'",
        shorten(value)
    ))
    .with_span(span)
    .with_note(format!("allowed values are {}", quoted_list(allowed)))
    .with_code(crate::codes::INVALID_OPTION);
    match crate::suggest::closest(value, allowed.iter().copied()) {
        Some(s) => d.with_help(format!("Did you mean '{s}'?")),
        None => d.with_help(format!("Use one of {}.", quoted_list(allowed))),
    }
}

/// `'a', 'b', 'c'`.
pub fn quoted_list<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("'{}'", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A boolean from `true`/`false` or the strings 'true', 'false', 'yes', 'no'.
pub fn to_bool(o: &SqlOption) -> Result<bool, Diagnostic> {
    match &o.value {
        OptionValue::Bool(b) => Ok(*b),
        OptionValue::String(s) | OptionValue::Identifier(s) => {
            match s.to_ascii_lowercase().as_str() {
                "true" | "yes" => Ok(true),
                "false" | "no" => Ok(false),
                _ => Err(expected(o, "a boolean", "true")),
            }
        }
        _ => Err(expected(o, "a boolean", "true")),
    }
}

/// An unsigned integer from a number or a numeric string.
pub fn to_u64(o: &SqlOption) -> Result<u64, Diagnostic> {
    match &o.value {
        OptionValue::Number(s) | OptionValue::String(s) => s
            .trim()
            .parse::<u64>()
            .map_err(|_| expected(o, "an unsigned integer", "10")),
        _ => Err(expected(o, "an unsigned integer", "10")),
    }
}

/// A signed integer from a number or a numeric string.
pub fn to_i64(o: &SqlOption) -> Result<i64, Diagnostic> {
    match &o.value {
        OptionValue::Number(s) | OptionValue::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| expected(o, "an integer", "10")),
        _ => Err(expected(o, "an integer", "10")),
    }
}

/// A float from a number or a numeric string.
pub fn to_f64(o: &SqlOption) -> Result<f64, Diagnostic> {
    match &o.value {
        OptionValue::Number(s) | OptionValue::String(s) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .ok_or_else(|| expected(o, "a number", "1.5")),
        _ => Err(expected(o, "a number", "1.5")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Location;

    fn opt(key: &str, value: OptionValue, line: u64) -> SqlOption {
        let span = Span::new(Location::new(line, 1), Location::new(line, 5));
        SqlOption {
            key: key.into(),
            key_span: span,
            value,
            value_span: span,
        }
    }

    #[test]
    fn duplicates_are_reported_and_dropped() {
        let (opts, diags) = WithOptions::new(vec![
            opt("topic", OptionValue::String("a".into()), 1),
            opt("topic", OptionValue::String("b".into()), 2),
        ]);
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].message,
            "option 'topic' is specified more than once"
        );
        assert_eq!(diags[0].span.unwrap().start.line, 2);
        assert_eq!(opts.all().len(), 1);
    }

    #[test]
    fn the_redaction_placeholder_is_refused_as_a_value() {
        let (_, diags) = WithOptions::new(vec![
            opt("password", OptionValue::String("********".into()), 1),
            opt("url", OptionValue::String("redis://********@h".into()), 2),
            opt("topic", OptionValue::String("t".into()), 3),
        ]);
        assert_eq!(diags.len(), 2);
        assert_eq!(
            diags[0].message,
            "option 'password' holds '********', the placeholder Tributary prints in place of a secret"
        );
        assert!(
            diags[0]
                .help
                .as_deref()
                .unwrap()
                .contains("{{ KAFKA_PASSWORD }}")
        );
    }

    #[test]
    fn take_consumes_and_types() {
        let (mut opts, _) = WithOptions::new(vec![
            opt("a", OptionValue::String("yes".into()), 1),
            opt("n", OptionValue::String("12".into()), 2),
            opt("s", OptionValue::Number("3".into()), 3),
            opt("left", OptionValue::Bool(true), 4),
        ]);
        assert!(opts.take_bool("a").unwrap().unwrap().0);
        assert_eq!(opts.take_u64("n").unwrap().unwrap().0, 12);
        let err = opts.take_string("s").unwrap_err();
        assert_eq!(
            err.message,
            "expected option 's' to be a single-quoted string, but it is a number"
        );
        assert_eq!(opts.remaining().len(), 1);
        assert_eq!(opts.remaining()[0].key, "left");
        assert!(opts.take("a").is_none());
    }
}
