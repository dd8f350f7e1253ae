//! What every statement's result passes through before it leaves the session: its
//! diagnostics are bounded in number and length (and a script's in total), and no
//! secret survives in their text, whichever rule produced them.

use super::outcome::Outcome;
use tributary_dialect::secret_spans::{masked, secret_values};
use tributary_types::limits::MAX_DIAGNOSTICS_PER_SCRIPT;
use tributary_types::{Diagnostic, REDACTED, bound_diagnostics, redact_answer};

/// Bound a statement's diagnostics (its errors, or its warnings on success), and redact
/// them: the secret values written in `statement` (its text) and credentials inside any
/// value.
/// A handler's result as the statement's sealed outcome: the span added, then sealed.
pub(super) fn sealed(
    handled: super::outcome::Handled,
    span: tributary_types::Span,
    statement: &str,
) -> Outcome {
    sealed_with(handled.map(|reply| (reply, ())), span, statement).map(|(result, ())| result)
}

/// [`sealed`] for a handler that also gives its caller a value (the record it stored).
pub(super) fn sealed_with<T>(
    handled: Result<(super::outcome::Reply, T), Vec<Diagnostic>>,
    span: tributary_types::Span,
    statement: &str,
) -> Result<(super::outcome::StatementResult, T), super::outcome::StatementError> {
    match handled {
        Ok((reply, value)) => {
            let mut warnings = reply.warnings;
            seal_diagnostics(&mut warnings, statement);
            let result = super::outcome::StatementResult {
                span,
                output: reply.output,
                warnings,
            };
            Ok((result, value))
        }
        Err(mut diagnostics) => {
            seal_diagnostics(&mut diagnostics, statement);
            Err(super::outcome::StatementError { span, diagnostics })
        }
    }
}

pub(super) fn seal(outcome: &mut Outcome, statement: &str) {
    match outcome {
        Ok(r) => seal_diagnostics(&mut r.warnings, statement),
        Err(e) => seal_diagnostics(&mut e.diagnostics, statement),
    }
}

/// [`seal`] for a list of diagnostics.
pub(super) fn seal_diagnostics(diags: &mut Vec<Diagnostic>, statement: &str) {
    bound_diagnostics(diags);
    // Every diagnostic leaves with a code: the general one where the rule that found it
    // gave none.
    tributary_types::codes::fill(diags, tributary_types::codes::INVALID);
    if diags.is_empty() {
        return;
    }
    let secrets = secret_values(statement);
    // The statement as its author may see it echoed: remembered secrets it shows are not
    // hidden on that account, so a diagnostic never confirms a guessed secret.
    let shown = masked(statement);
    for d in diags.iter_mut() {
        scrub(&mut d.message, &secrets, &shown);
        d.notes.iter_mut().for_each(|n| scrub(n, &secrets, &shown));
        if let Some(h) = d.help.as_mut() {
            scrub(h, &secrets, &shown);
        }
    }
}

fn scrub(text: &mut String, secrets: &[String], shown: &str) {
    if let std::borrow::Cow::Owned(redacted) = redact_answer(text, shown) {
        *text = redacted;
    }
    for s in secrets {
        if text.contains(s.as_str()) {
            *text = text.replace(s.as_str(), REDACTED);
        }
    }
}

/// How many diagnostics a script may still report; the rest are counted. Errors and
/// warnings are budgeted apart, so a flood of warnings never hides an error.
#[derive(Debug)]
pub(super) struct ScriptBudget {
    errors_left: usize,
    warnings_left: usize,
    suppressed: usize,
}

impl ScriptBudget {
    pub(super) fn new() -> Self {
        Self {
            errors_left: MAX_DIAGNOSTICS_PER_SCRIPT,
            warnings_left: MAX_DIAGNOSTICS_PER_SCRIPT,
            suppressed: 0,
        }
    }

    /// Keep what the budget allows of `outcome`'s diagnostics.
    pub(super) fn admit(&mut self, outcome: &mut Outcome) {
        let diags: &mut Vec<Diagnostic> = match outcome {
            Ok(r) => &mut r.warnings,
            Err(e) => &mut e.diagnostics,
        };
        let before = diags.len();
        diags.retain(|d| {
            let left = if d.is_error() {
                &mut self.errors_left
            } else {
                &mut self.warnings_left
            };
            if *left == 0 {
                return false;
            }
            *left -= 1;
            true
        });
        self.suppressed += before - diags.len();
    }

    /// How many diagnostics were not reported.
    pub(super) fn suppressed(&self) -> usize {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed_message(message: &str, statement: &str) -> String {
        let mut diags = vec![Diagnostic::error(message)];
        seal_diagnostics(&mut diags, statement);
        diags.remove(0).message
    }

    #[test]
    fn a_statement_echoes_its_own_words_but_never_its_own_secrets() {
        tributary_types::remember_secrets_in(true, "Authorization: Bearer Own-Tok-551");
        tributary_types::remember_secret("Someones-Pw-552");
        // A word the statement wrote is echoed, whoever's secret it is.
        assert_eq!(
            sealed_message("no field named Someones-Pw-552", "SELECT Someones-Pw-552"),
            "no field named Someones-Pw-552"
        );
        // Part of a secret option's value is hidden, though the statement holds it: the
        // statement counts as shown only with its secrets masked.
        let statement = concat!(
            "CREATE TABLE t WITH (connector = 'webhook', ",
            "headers = 'Authorization: Bearer Own-Tok-551')"
        );
        assert_eq!(
            sealed_message("the peer refused Own-Tok-551", statement),
            "the peer refused ********"
        );
    }
}
