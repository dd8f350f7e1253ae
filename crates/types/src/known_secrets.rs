//! The secret values this process has seen, so that [`crate::redact_text`] hides them
//! wherever they surface: in a library's error ("WRONGPASS for bob:hunter2"), a debug
//! log of a database parameter, a message quoting a resolved `{{ VAR }}`.
//!
//! Patterns (URL userinfo, `password=...` pairs) catch secrets by their shape; this
//! registry catches them by their value, whatever text carries them. Values are learned
//! where secrets enter: an option stored as sensitive, a record read from the catalog, a
//! `{{ VAR }}` resolved into a secret position. The registry is bounded: past
//! [`MAX_KNOWN`] values the oldest are forgotten.

use crate::secret::{is_env_reference, secret_ranges};
use aho_corasick::AhoCorasick;
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, OnceLock, RwLock};

/// How many values are remembered at most.
pub const MAX_KNOWN: usize = 4096;

/// Values shorter than this are not remembered: hiding every `abc` in every message
/// would mangle ordinary text, and such a value protects nothing anyway.
pub const MIN_SECRET_CHARS: usize = 5;

#[derive(Default)]
struct Known {
    /// In the order learned, the oldest first.
    values: VecDeque<String>,
    set: HashSet<String>,
    /// A matcher over the values known when it was built (it may still hold some since
    /// forgotten: hiding a forgotten secret is harmless).
    matcher: Option<Arc<AhoCorasick>>,
    /// Values learned since: searched one by one until there are enough to rebuild, so a
    /// script that learns a secret per statement costs linear time, not quadratic.
    pending: Vec<String>,
}

impl Known {
    /// Whether the matcher is worth rebuilding: the values searched one by one are many,
    /// relative to those it holds.
    fn stale(&self) -> bool {
        self.pending.len() > 16.max(self.values.len() / 4)
    }

    fn rebuild(&mut self) {
        // Should the matcher not build, the values stay pending: searched one by one,
        // never forgotten.
        if let Ok(matcher) = AhoCorasick::new(self.values.iter()) {
            self.matcher = Some(Arc::new(matcher));
            self.pending.clear();
        }
    }
}

fn known() -> &'static RwLock<Known> {
    static KNOWN: OnceLock<RwLock<Known>> = OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

/// Whether `value` is worth remembering: long enough, not a number (a port), not a
/// reference (which names a secret but is none).
fn rememberable(value: &str) -> bool {
    let v = value.trim();
    v.chars().count() >= MIN_SECRET_CHARS
        && !v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !is_env_reference(v)
        && !v.contains(crate::REDACTED)
}

/// Remember `value` as a secret: from now on [`crate::redact_text`] hides it.
pub fn remember_secret(value: &str) {
    let value = value.trim();
    if !rememberable(value) {
        return;
    }
    if let Ok(k) = known().read()
        && k.set.contains(value)
    {
        return;
    }
    let Ok(mut k) = known().write() else { return };
    if !k.set.insert(value.to_string()) {
        return;
    }
    if k.values.len() >= MAX_KNOWN
        && let Some(oldest) = k.values.pop_front()
    {
        k.set.remove(&oldest);
    }
    k.values.push_back(value.to_string());
    k.pending.push(value.to_string());
}

/// Remember the secrets an option's value holds: the whole value when the option is
/// `sensitive`, and otherwise the credentials inside it (a URL's userinfo and its
/// password, the values of `password=...` pairs).
pub fn remember_secrets_in(sensitive: bool, value: &str) {
    if sensitive {
        remember_secret(value);
        sensitive_parts(value).for_each(remember_secret);
    }
    for (start, end) in secret_ranges(value) {
        let part = &value[start..end];
        remember_secret(part);
        // `user:password`: the password alone, as a library may print it.
        if let Some((_, password)) = part.split_once(':') {
            remember_secret(password);
        }
    }
}

/// The parts of a secret value a library may print on their own: of headers
/// (`Authorization: Bearer t, X-Key: k`) each value and its last word (`t`, however the
/// name is cased when sent); of a PEM key, each line of its body.
fn sensitive_parts(value: &str) -> impl Iterator<Item = &str> {
    let headers = value.split(',').flat_map(|piece| {
        let value = piece.split_once(':').map_or(piece, |(_, v)| v).trim();
        [value, value.split_whitespace().last().unwrap_or_default()]
    });
    let lines = value
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----"));
    headers.chain(lines)
}

/// The byte ranges of `text` that hold a remembered secret, in order (may overlap).
pub(crate) fn known_secret_ranges(text: &str) -> Vec<(usize, usize)> {
    let stale = match known().read() {
        Ok(k) if k.values.is_empty() => return Vec::new(),
        Ok(k) => k.stale(),
        Err(_) => return Vec::new(),
    };
    if stale
        && let Ok(mut k) = known().write()
        && k.stale()
    {
        k.rebuild();
    }
    let Ok(k) = known().read() else {
        return Vec::new();
    };
    let mut ranges: Vec<(usize, usize)> = k
        .matcher
        .iter()
        .flat_map(|m| m.find_overlapping_iter(text))
        .map(|m| (m.start(), m.end()))
        .collect();
    for value in &k.pending {
        ranges.extend(
            text.match_indices(value.as_str())
                .map(|(at, v)| (at, at + v.len())),
        );
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{redact_answer, redact_text};

    #[test]
    fn remembered_values_are_hidden_in_any_text() {
        remember_secret("Kn0wn-Value-1");
        assert_eq!(
            redact_text("WRONGPASS for Kn0wn-Value-1, twice: Kn0wn-Value-1"),
            "WRONGPASS for ********, twice: ********"
        );
        remember_secrets_in(false, "redis://bob:Pw-From-Url@h:6379");
        assert_eq!(
            redact_text("auth failed: Pw-From-Url"),
            "auth failed: ********"
        );
        remember_secrets_in(
            true,
            "Authorization: Bearer Header-Token-1, X-Api: Key-Value-22",
        );
        assert_eq!(
            redact_text("authorization: bearer Header-Token-1\nx-api: Key-Value-22"),
            "authorization: bearer ********\nx-api: ********"
        );
        // Past the rebuilding threshold, every value is still found.
        for n in 0..100 {
            remember_secret(&format!("Many-Secrets-{n:03}"));
        }
        for n in [0, 50, 99] {
            assert_eq!(
                redact_text(&format!("x Many-Secrets-{n:03} y")),
                "x ******** y"
            );
        }
        // Short values, numbers and references are not remembered.
        for v in ["abc", "6379", "{{ PASSWORD }}"] {
            remember_secret(v);
            assert_eq!(redact_text(&format!("x {v} y")), format!("x {v} y"));
        }
    }

    #[test]
    fn an_answer_does_not_confirm_a_guessed_secret() {
        remember_secret("Guessed-Pw-31");
        let answer = |word: &str| {
            let request = format!("SELECT {word}");
            let message = format!("no field named {word}");
            redact_answer(&message, &request).into_owned()
        };
        // A secret the request wrote is echoed as any other word would be.
        assert_eq!(answer("Guessed-Pw-31"), "no field named Guessed-Pw-31");
        assert_eq!(answer("Guessed-Pw-32"), "no field named Guessed-Pw-32");
        // One it did not write is hidden, as are secrets by shape, written or not.
        remember_secret("Not-Asked-Pw-33");
        assert_eq!(
            redact_answer(
                "auth failed with Not-Asked-Pw-33 for redis://u:Shape-Pw-34@h",
                "SELECT 1 FROM redis://u:Shape-Pw-34@h"
            ),
            "auth failed with ******** for redis://********@h"
        );
        // A request masked before it is passed (`masked`) does not show its own
        // secrets, so they stay hidden.
        assert_eq!(
            redact_answer("bad value Guessed-Pw-31", "password = '********'"),
            "bad value ********"
        );
    }
}
