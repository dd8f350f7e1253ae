//! The REPL's line editor helper: Tab completion and hints from the library's
//! [`Completer`] (over the statement typed so far, earlier lines included), hints
//! dimmed, and meta-command names completed after a backslash.

use crate::meta::COMMANDS;
use rustyline::completion::{Completer as LineCompleter, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::{Hint, Hinter};
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use tributary_complete::Completer;

/// Completion and hints for the line being edited.
pub struct LineHelper {
    completer: Option<Completer>,
    /// The lines of the statement entered before this one.
    pending: Arc<Mutex<String>>,
    colour: bool,
}

impl LineHelper {
    /// A helper completing with `completer` (keywords only without one); `pending` holds
    /// the earlier lines of the statement being typed.
    pub fn new(completer: Option<Completer>, pending: Arc<Mutex<String>>, colour: bool) -> Self {
        Self {
            completer,
            pending,
            colour,
        }
    }

    /// The whole statement so far with `line` appended, and where `pos` is in it.
    fn statement(&self, line: &str, pos: usize) -> (String, usize) {
        let pending = self.pending.lock().map(|p| p.clone()).unwrap_or_default();
        if pending.is_empty() {
            return (line.to_string(), pos);
        }
        let offset = pending.len() + 1;
        (format!("{pending}\n{line}"), offset + pos)
    }
}

/// A hint that completes the word, or only describes (and so is not inserted).
pub struct LineHint {
    display: String,
    completion: Option<String>,
}

impl Hint for LineHint {
    fn display(&self) -> &str {
        &self.display
    }
    fn completion(&self) -> Option<&str> {
        self.completion.as_deref()
    }
}

impl LineCompleter for LineHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        if let Some(word) = line.get(..pos).filter(|l| l.trim_start().starts_with('\\')) {
            let start = line.len() - line.trim_start().len();
            let typed = word.trim_start();
            let pairs = COMMANDS
                .iter()
                .filter(|c| c.name.starts_with(typed) && !typed.contains(' '))
                .map(|c| Pair {
                    display: format!("{:<12} {}", c.name, c.summary),
                    replacement: c.name.to_string(),
                })
                .collect();
            return Ok((start, pairs));
        }
        let Some(completer) = &self.completer else {
            return Ok((pos, Vec::new()));
        };
        let (text, cursor) = self.statement(line, pos);
        let done = completer.complete(&text, cursor);
        let line_start = cursor - pos;
        if done.start < line_start {
            // The word began on an earlier line: it cannot be replaced from here.
            return Ok((pos, Vec::new()));
        }
        let pairs = done
            .candidates
            .into_iter()
            .map(|c| Pair {
                display: if c.detail.is_empty() {
                    c.text.clone()
                } else {
                    format!("{}  ({})", c.text, shorten(&c.detail, 60))
                },
                replacement: c.text,
            })
            .collect();
        Ok((done.start - line_start, pairs))
    }
}

impl Hinter for LineHelper {
    type Hint = LineHint;

    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<LineHint> {
        if pos < line.len() || line.trim_start().starts_with('\\') {
            return None;
        }
        let (text, cursor) = self.statement(line, pos);
        let hint = self.completer.as_ref()?.hint(&text, cursor)?;
        Some(LineHint {
            completion: hint.completes.then(|| hint.text.clone()),
            display: hint.text,
        })
    }
}

impl Highlighter for LineHelper {
    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if self.colour {
            Cow::Owned(format!("\x1b[2m{hint}\x1b[0m"))
        } else {
            Cow::Borrowed(hint)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        false
    }
}

impl Validator for LineHelper {}

impl Helper for LineHelper {}

/// At most `max` characters, with an ellipsis when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}
