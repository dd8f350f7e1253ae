//! User-facing diagnostics: what went wrong, where, and how to fix it.
//!
//! Wording rules: a lowercase message without a final period that names the object
//! (`connection profile 'prod' does not exist`); notes add facts; the help line is a full
//! sentence (`Did you mean 'topic'?`). Secrets never appear in any of them.

use crate::span::Span;
use serde::{Deserialize, Serialize};
use std::fmt;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The statement is rejected.
    Error,
    /// The statement is accepted, but something deserves attention (a deprecated spelling).
    Warning,
    /// Information about what the statement did (where a schema came from).
    Note,
}

/// One problem found in user input, with its position and advice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The primary message: lowercase, no final period.
    pub message: String,
    /// Where in the SQL text the problem is, when known.
    pub span: Option<Span>,
    /// Additional facts, each a short clause.
    pub notes: Vec<String>,
    /// How to fix it, as a full sentence.
    pub help: Option<String>,
    /// What kind of problem it is, from [`crate::codes`], for programs to match on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<crate::codes::Code>,
}

impl Diagnostic {
    /// This diagnostic as a note whose message says in what context it holds
    /// (`"as a preview: table 't' never ends"`), keeping its place, notes, help and code:
    /// what `check` says of a refusal that only running would meet.
    pub fn into_note(self, context: &str) -> Self {
        Self {
            severity: Severity::Note,
            message: format!("{context}: {}", self.message),
            ..self
        }
    }

    /// An error with `message`.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            message: message.into(),
            span: None,
            notes: vec![],
            help: None,
            code: None,
        }
    }

    /// A warning with `message`.
    pub fn warning(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(message)
        }
    }

    /// A note: information, not a problem.
    pub fn note(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Note,
            ..Self::error(message)
        }
    }

    /// Attach a span (an unknown span is ignored so callers need not check).
    pub fn with_span(mut self, span: Span) -> Self {
        if span.is_known() {
            self.span = Some(span);
        }
        self
    }

    /// Attach a span only when none is set yet.
    pub fn or_span(mut self, span: Span) -> Self {
        if self.span.is_none() && span.is_known() {
            self.span = Some(span);
        }
        self
    }

    /// Add a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Set the help sentence.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Set the code (one of [`crate::codes`]).
    pub fn with_code(mut self, code: crate::codes::Code) -> Self {
        self.code = Some(code);
        self
    }

    /// Set the code only when none is set yet: a funnel's general code never hides a
    /// more precise one given where the problem was found.
    pub fn or_code(mut self, code: crate::codes::Code) -> Self {
        if self.code.is_none() {
            self.code = Some(code);
        }
        self
    }

    /// Whether this diagnostic rejects the statement.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The longest message, note or help line a diagnostic keeps, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1_000;

/// Bound one statement's diagnostics: at most
/// [`MAX_DIAGNOSTICS_PER_STATEMENT`](crate::limits::MAX_DIAGNOSTICS_PER_STATEMENT) are kept
/// and a final note counts the rest; every message, note and help line is cut to
/// [`MAX_MESSAGE_CHARS`]. Errors are kept before warnings.
pub fn bound_diagnostics(diags: &mut Vec<Diagnostic>) {
    let limit = crate::limits::MAX_DIAGNOSTICS_PER_STATEMENT;
    if diags.len() > limit {
        // A stable partition: errors first, each group in its original order.
        let (mut kept, rest): (Vec<_>, Vec<_>) = std::mem::take(diags)
            .into_iter()
            .partition(Diagnostic::is_error);
        kept.extend(rest);
        let dropped = kept.len() - limit;
        let errors_dropped = kept[limit..].iter().filter(|d| d.is_error()).count();
        kept.truncate(limit);
        let span = kept.last().and_then(|d| d.span);
        let mut more = Diagnostic::note(format!(
            "{dropped} more diagnostic(s) of this statement are not shown ({errors_dropped} of them errors)"
        ))
        .with_help("Fix the ones shown and run it again.");
        more.span = span;
        kept.push(more);
        *diags = kept;
    }
    for d in diags.iter_mut() {
        cut(&mut d.message);
        d.notes.truncate(limit);
        d.notes.iter_mut().for_each(cut);
        if let Some(h) = d.help.as_mut() {
            cut(h);
        }
    }
}

fn cut(text: &mut String) {
    if text.len() <= MAX_MESSAGE_CHARS {
        return;
    }
    let total = text.chars().count();
    if total <= MAX_MESSAGE_CHARS {
        return;
    }
    let head: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
    *text = format!("{head}… ({} more characters)", total - MAX_MESSAGE_CHARS);
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(f, "{label}: {}", self.message)?;
        if let Some(span) = self.span {
            write!(f, " (at {span})")?;
        }
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// A collection of diagnostics, as returned by a failed statement: every error found, not
/// only the first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// An empty collection.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// Add one diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    /// Add many.
    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        self.0.extend(ds);
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    /// Whether there is nothing at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The errors only.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.is_error())
    }

    /// The warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| !d.is_error())
    }

    /// Iterate over all.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    /// `Err(self)` when there are errors, `Ok(())` otherwise.
    pub fn into_result(self) -> Result<(), Diagnostics> {
        if self.has_errors() { Err(self) } else { Ok(()) }
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Self(vec![d])
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Location;

    #[test]
    fn display_has_message_position_notes_and_help() {
        let d = Diagnostic::error("unknown option 'topik'")
            .with_span(Span::new(Location::new(3, 5), Location::new(3, 10)))
            .with_note("valid options are listed by DESCRIBE CONNECTOR kafka")
            .with_help("Did you mean 'topic'?");
        assert_eq!(
            d.to_string(),
            "error: unknown option 'topik' (at 3:5)\n  note: valid options are listed by DESCRIBE CONNECTOR kafka\n  help: Did you mean 'topic'?"
        );
    }

    #[test]
    fn many_diagnostics_are_capped_with_a_count_and_long_ones_cut() {
        let mut ds: Vec<Diagnostic> = (0..1000)
            .map(|i| {
                if i % 2 == 0 {
                    Diagnostic::warning(format!("w{i}"))
                } else {
                    Diagnostic::error(format!("e{i} {}", "x".repeat(5000)))
                }
            })
            .collect();
        bound_diagnostics(&mut ds);
        let limit = crate::limits::MAX_DIAGNOSTICS_PER_STATEMENT;
        assert_eq!(ds.len(), limit + 1);
        assert!(ds[..limit].iter().all(Diagnostic::is_error));
        assert_eq!(
            ds[limit].message,
            format!(
                "{} more diagnostic(s) of this statement are not shown ({} of them errors)",
                1000 - limit,
                500 - limit
            )
        );
        assert!(ds[0].message.chars().count() < MAX_MESSAGE_CHARS + 40);
        assert!(ds[0].message.ends_with("more characters)"));
    }

    #[test]
    fn warnings_do_not_make_errors() {
        let mut ds = Diagnostics::new();
        ds.push(Diagnostic::warning("deprecated"));
        assert!(!ds.has_errors());
        assert!(ds.clone().into_result().is_ok());
        ds.push(Diagnostic::error("bad"));
        assert!(ds.into_result().is_err());
    }
}
