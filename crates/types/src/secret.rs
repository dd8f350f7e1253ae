//! Secrets: `{{ VAR }}` environment references and redaction.
//!
//! A value may hold `{{ VAR }}` placeholders. They are kept verbatim in the catalog and
//! resolved from the environment only when a connection is made, never when printing.
//!
//! Redaction has two halves. Options a connector's schema marks sensitive are printed as
//! [`REDACTED`] whole. Every other text that leaves Tributary passes [`redact_text`],
//! which hides credentials embedded in values: the userinfo of URLs
//! (`redis://user:pw@host`) and the values of `key=value` pairs whose key names a secret
//! (`sasl.password=...`, `?token=...`).

use std::borrow::Cow;
use std::collections::HashMap;

/// What is printed in place of a secret.
pub const REDACTED: &str = "********";

/// Whether an option or setting named `key` holds a secret by its name: a part of it
/// (split at `.`, `_` and `-`) names a password, secret, key, token or credential.
/// Connectors' schemas are the authority for their own options; this rule covers free
/// maps (`client_configs`, `storage.*`) and keys nobody declared.
pub fn looks_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    const WORDS: [&str; 6] = [
        "password",
        "passwd",
        "secret",
        "token",
        "credential",
        "apikey",
    ];
    if WORDS.iter().any(|w| key.contains(w)) {
        return true;
    }
    // `key` alone is prose ("a key=value pair"); as part of a longer name (`ssl.key`,
    // `api_key`) it names one.
    let mut parts = key.split(['.', '_', '-', ' ']).filter(|p| !p.is_empty());
    let several = key
        .split(['.', '_', '-', ' '])
        .filter(|p| !p.is_empty())
        .count()
        > 1;
    parts.any(|part| matches!(part, "pwd" | "pass" | "jaas" | "pem") || (part == "key" && several))
}

/// `text` with the credentials it embeds replaced by [`REDACTED`]: URL userinfo, the
/// values of `key=value` pairs whose key [`looks_secret`], and every secret value this
/// process has seen ([`crate::remember_secret`]). Borrowed when nothing changed.
///
/// This is the one redaction path: whatever leaves Tributary as text (an answer, a
/// diagnostic, a log line, a dump) passes it, or [`redact_answer`], the same rules for
/// text that answers a request.
pub fn redact_text(text: &str) -> Cow<'_, str> {
    // Text that answers no request: every remembered secret is hidden.
    redact_answer(text, "")
}

/// [`redact_text`] for text that answers a request (a statement's diagnostics, a query's
/// plan): the same, except that a remembered secret is not hidden where `request` shows
/// it itself. `request` is the request as it may be shown, its own secrets already
/// masked (`tributary_dialect::secret_spans::masked`).
///
/// Echoing a caller's own words tells them nothing; hiding a word because someone's
/// stored secret equals it would confirm their guess (`SELECT "hunter22"` answering
/// `no field named ********`), so a token holder could test candidate passwords of
/// profiles they cannot read. Secrets by shape are hidden as always.
pub fn redact_answer<'a>(text: &'a str, request: &str) -> Cow<'a, str> {
    let mut ranges = secret_ranges(text);
    // Whether the request shows a value, asked once per distinct value found.
    let mut shown: HashMap<&str, bool> = HashMap::new();
    for (start, end) in crate::known_secrets::known_secret_ranges(text) {
        let value = &text[start..end];
        if !*shown
            .entry(value)
            .or_insert_with(|| request.contains(value))
        {
            ranges.push((start, end));
        }
    }
    let ranges = merge_ranges(ranges);
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in ranges {
        out.push_str(&text[at..start]);
        out.push_str(REDACTED);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// The byte ranges of `text` that [`redact_text`] hides, in order and disjoint.
pub fn secret_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let bytes = text.as_bytes();
    // URL userinfo: `scheme://userinfo@host`.
    let mut search = 0;
    while let Some(found) = text[search..].find("://") {
        let authority = search + found + 3;
        let end = text[authority..]
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '\'' | '"' | ',' | ';' | '<' | '>')
                    || c.is_whitespace()
            })
            .map_or(text.len(), |e| authority + e);
        if let Some(at) = text[authority..end].rfind('@')
            && at > 0
        {
            ranges.push((authority, authority + at));
        }
        search = end.max(authority);
    }
    // `key=value` pairs: the key is the run of name characters before `=`.
    let name = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    for (eq, _) in text.match_indices('=') {
        let mut key_start = eq;
        while key_start > 0 && name(bytes[key_start - 1]) {
            key_start -= 1;
        }
        if key_start == eq || !looks_secret(&text[key_start..eq]) {
            continue;
        }
        let value_start = eq + 1;
        // A `{{ VAR }}` reference is one value, spaces and all.
        if text[value_start..].starts_with("{{")
            && let Some(close) = text[value_start..].find("}}")
        {
            ranges.push((value_start, value_start + close + 2));
            continue;
        }
        let value_end = text[value_start..]
            .find(|c: char| {
                matches!(c, ',' | ';' | '&' | '\'' | '"' | ')' | '}' | '>') || c.is_whitespace()
            })
            .map_or(text.len(), |e| value_start + e);
        if value_end > value_start {
            ranges.push((value_start, value_end));
        }
    }
    merge_ranges(ranges)
}

/// `ranges` sorted, with overlapping ones merged, so a caller can splice them in order.
pub fn merge_ranges(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// Whether `text` holds the placeholder Tributary prints in place of secrets: given back
/// as a value (from `SHOW CREATE TABLE` output), it would store the placeholder itself.
pub fn contains_redacted(text: &str) -> bool {
    text.contains(REDACTED)
}

/// Every `{{ NAME }}` reference in `s`, in order (names are `[A-Za-z0-9_]+`).
pub fn env_references(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push(name.to_string());
        }
        rest = &after[end + 2..];
    }
    out
}

/// Whether `s` holds at least one `{{ VAR }}` reference.
pub fn contains_env_reference(s: &str) -> bool {
    !env_references(s).is_empty()
}

/// Whether `s` is exactly one `{{ VAR }}` reference (surrounding spaces aside): a
/// pointer to a secret, not a secret, so it is shown as written.
pub fn is_env_reference(s: &str) -> bool {
    let t = s.trim();
    t.starts_with("{{")
        && t.ends_with("}}")
        && t.len() > 4
        && t[2..t.len() - 2].find("}}").is_none()
        && env_references(t).len() == 1
}

/// How a secret value is shown: a lone `{{ VAR }}` reference as written, anything else
/// as [`REDACTED`].
pub fn printable_secret(s: &str) -> &str {
    if is_env_reference(s) { s } else { REDACTED }
}

/// Replace every `{{ VAR }}` in `s` using `lookup`; the error names the first missing
/// variable.
pub fn resolve_env(s: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("{{") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else { break };
        let name = after[..end].trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str(&rest[..start + 2]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(&lookup(name).ok_or_else(|| name.to_string())?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for k in [
            "password",
            "auth.password",
            "sasl.password",
            "ssl.key.password",
            "ssl.key.pem",
            "api_secret",
            "schema_registry.api_key",
            "access_token",
            "aws_secret_access_key",
            "sasl.jaas.config",
        ] {
            assert!(looks_secret(k), "{k}");
        }
        for k in [
            "topic",
            "bootstrap_servers",
            "source.offset",
            "keyspace",
            "monkey",
            "key",
        ] {
            assert!(!looks_secret(k), "{k}");
        }
    }

    #[test]
    fn credentials_inside_values_are_redacted() {
        assert_eq!(
            redact_text("redis://user:pw@host:6379/0"),
            "redis://********@host:6379/0"
        );
        assert_eq!(
            redact_text("https://TOKEN@github.com/x"),
            "https://********@github.com/x"
        );
        assert_eq!(
            redact_text("sasl.password=hunter2,ssl.key.password=p2,acks=all"),
            "sasl.password=********,ssl.key.password=********,acks=all"
        );
        assert_eq!(
            redact_text("see 'http://a:b@h/x?token=abc&page=2' now"),
            "see 'http://********@h/x?token=********&page=2' now"
        );
        assert_eq!(
            redact_text("nothing here = at all"),
            "nothing here = at all"
        );
        assert!(matches!(redact_text("plain://host"), Cow::Borrowed(_)));
        assert_eq!(
            secret_ranges("sasl.password={{ PW }},acks=all"),
            [(14, 22)],
            "a reference is one value"
        );
        // An address with an at sign in its path is not userinfo.
        assert_eq!(redact_text("http://h/a@b"), "http://h/a@b");
    }

    #[test]
    fn a_lone_reference_is_shown_anything_else_is_redacted() {
        assert_eq!(
            printable_secret("{{ KAFKA_PASSWORD }}"),
            "{{ KAFKA_PASSWORD }}"
        );
        assert_eq!(printable_secret(" {{X}} "), " {{X}} ");
        for secret in [
            "hunter2",
            "pre{{ X }}",
            "{{ X }}post",
            "{{ X }}{{ Y }}",
            "{{ }}",
            "{{x-y}}",
        ] {
            assert_eq!(printable_secret(secret), REDACTED, "{secret}");
        }
    }

    #[test]
    fn finds_and_resolves_references() {
        assert_eq!(
            env_references("a {{ USER }}:{{PASS}} b"),
            vec!["USER", "PASS"]
        );
        assert!(!contains_env_reference("plain {{ not valid! }}"));
        let got = resolve_env("x={{ A }},y={{B}}", |n| Some(n.to_lowercase())).unwrap();
        assert_eq!(got, "x=a,y=b");
        assert_eq!(
            resolve_env("{{ MISSING }}", |_| None).unwrap_err(),
            "MISSING"
        );
    }
}
