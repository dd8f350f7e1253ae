//! Where a script holds secrets: the string literals given to options that hold secrets
//! (`password = 'hunter2'`), and credentials inside any string literal (URL userinfo,
//! `password=...` pairs). Found on the tokens, so a statement that does not parse is
//! masked as well as one that does; what diagnostics quote of the source shows
//! `********` there instead.

use crate::parser::DIALECT;
use crate::parser::spans::LineIndex;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use tributary_connectors::is_secret_option;
use tributary_types::{Location, env_references, merge_ranges, secret_ranges};

/// `text` with every secret it holds written `********`.
pub fn masked(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in secret_spans(text) {
        out.push_str(&text[at..start]);
        out.push_str(tributary_types::REDACTED);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}

/// SQL text as it may be kept or shown (a shell's history, a log): [`masked`], and every
/// secret the process knows hidden as well (see [`tributary_types::redact_text`]).
pub fn redact_sql(text: &str) -> String {
    tributary_types::redact_text(&masked(text)).into_owned()
}

/// Byte ranges of `text` to mask, in order and disjoint.
pub(crate) fn secret_spans(text: &str) -> Vec<(usize, usize)> {
    let index = LineIndex::new(text);
    let tokens = match Tokenizer::new(&DIALECT, text).tokenize_with_location() {
        Ok(t) => t,
        // An unterminated string: every quoted part of the text may hold a secret.
        Err(_) => return quoted_parts(text),
    };
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .collect();
    let byte = |loc: datafusion::sql::sqlparser::tokenizer::Location| {
        index.offset(Location::new(loc.line, loc.column))
    };
    let mut out = Vec::new();
    // Inside `key = [ ... ]`: whether the key is secret, and how deep the brackets are. The
    // script is walked once; each key is read back from its `=`, a few tokens.
    let mut array: Option<(bool, usize)> = None;
    for (i, t) in significant.iter().enumerate() {
        let after_eq = i > 0 && significant[i - 1].token == Token::Eq;
        match (&t.token, &mut array) {
            (Token::LBracket, None) if after_eq => {
                let secret =
                    key_ending_at(&significant, i - 1).is_some_and(|k| is_secret_option(&k));
                array = Some((secret, 1));
                continue;
            }
            (Token::LBracket, Some((_, depth))) => *depth += 1,
            (Token::RBracket, Some((_, depth))) => {
                *depth -= 1;
                if *depth == 0 {
                    array = None;
                }
            }
            _ => {}
        }
        let Some(content) = literal(&t.token) else {
            continue;
        };
        let (start, end) = (byte(t.span.start), byte(t.span.end));
        if start >= end {
            continue;
        }
        let secret = if after_eq {
            key_ending_at(&significant, i - 1).is_some_and(|k| is_secret_option(&k))
        } else {
            array.is_some_and(|(secret, _)| secret)
        };
        if secret {
            // A value made only of `{{ VAR }}` references names the secret; it is safe.
            if !only_references(content) {
                out.push((start, end));
            }
            continue;
        }
        // Credentials inside other literals, located in the source text of the literal
        // (escaped quotes make it differ from the content only around them).
        for (s, e) in secret_ranges(&text[start..end]) {
            out.push((start + s, start + e));
        }
    }
    merge_ranges(out)
}

/// The contents of the secret literals of `text`, for removing them from messages.
pub fn secret_values(text: &str) -> Vec<String> {
    let mut values: Vec<String> = secret_spans(text)
        .into_iter()
        .map(|(s, e)| text[s..e].trim_matches(['\'', '"']).replace("''", "'"))
        // Too short to scrub without mangling ordinary words.
        .filter(|v| v.chars().count() >= 4)
        .collect();
    values.sort_unstable();
    values.dedup();
    values
}

/// A string literal's content.
fn literal(token: &Token) -> Option<&str> {
    match token {
        Token::SingleQuotedString(s)
        | Token::DoubleQuotedString(s)
        | Token::EscapedStringLiteral(s)
        | Token::NationalStringLiteral(s) => Some(s),
        Token::DollarQuotedString(d) => Some(&d.value),
        // `"text"` is an identifier in this dialect, but an option's value all the same.
        Token::Word(w) if w.quote_style.is_some() => Some(&w.value),
        _ => None,
    }
}

/// The option key that ends just before the `=` at `j`: `key`, `'a.b'`, `a.b.c`,
/// `messages.0`.
fn key_ending_at(tokens: &[&TokenWithSpan], j: usize) -> Option<String> {
    // The key ends just before the `=`: a quoted name, or words joined by periods.
    let mut k = j.checked_sub(1)?;
    let mut parts = match &tokens[k].token {
        Token::SingleQuotedString(s) => return Some(s.clone()),
        Token::Word(w) => vec![w.value.clone()],
        Token::Number(n, _) => vec![n.clone()],
        _ => return None,
    };
    loop {
        let joined = parts.last().is_some_and(|p| p.starts_with('.'));
        let prev = match k.checked_sub(1) {
            Some(p) => p,
            None => break,
        };
        match &tokens[prev].token {
            // `a.0` arrives as a word and the number `.0`.
            Token::Word(w) if joined => {
                parts.push(w.value.clone());
                k = prev;
            }
            Token::Period => {
                let Some(before) = prev.checked_sub(1) else {
                    break;
                };
                match &tokens[before].token {
                    Token::Word(w) => parts.push(format!("{}.", w.value)),
                    Token::Number(n, _) => parts.push(format!("{n}.")),
                    _ => break,
                }
                k = before;
            }
            _ => break,
        }
    }
    parts.reverse();
    Some(parts.concat())
}

fn only_references(content: &str) -> bool {
    let refs = env_references(content);
    if refs.is_empty() {
        return false;
    }
    // Everything outside the references is blank.
    let mut rest = content.to_string();
    for r in refs {
        for form in [format!("{{{{ {r} }}}}"), format!("{{{{{r}}}}}")] {
            rest = rest.replace(&form, "");
        }
    }
    rest.trim().is_empty()
}

/// Every quoted part of `text` (to its end when a quote is not closed).
fn quoted_parts(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<(usize, char)> = None;
    for (i, c) in text.char_indices() {
        match open {
            None if c == '\'' || c == '"' => open = Some((i, c)),
            Some((start, q)) if c == q => {
                out.push((start, i + 1));
                open = None;
            }
            _ => {}
        }
    }
    if let Some((start, _)) = open {
        out.push((start, text.len()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> String {
        let mut out = String::new();
        let mut at = 0;
        for (s, e) in secret_spans(text) {
            out.push_str(&text[at..s]);
            out.push('#');
            at = e;
        }
        out.push_str(&text[at..]);
        out
    }

    #[test]
    fn secret_options_and_embedded_credentials_are_masked() {
        assert_eq!(
            masked(
                "CREATE CONNECTION PROFILE p WITH (connector = 'kafka', 'auth.password' = 'hunter2', topic = 'x')"
            ),
            "CREATE CONNECTION PROFILE p WITH (connector = 'kafka', 'auth.password' = #, topic = 'x')"
        );
        assert_eq!(
            masked("WITH (auth.password = 'hunter2', password = \"p2\")"),
            "WITH (auth.password = #, password = #)"
        );
        assert_eq!(
            masked(
                "WITH (address = 'redis://u:pw@h:6379', client_configs = 'sasl.password=s3,acks=all')"
            ),
            "WITH (address = 'redis://#@h:6379', client_configs = 'sasl.password=#,acks=all')"
        );
        assert_eq!(
            masked("WITH (subscription_messages.0 = '{\"token\": \"t\"}', headers = ['a', 'b'])"),
            "WITH (subscription_messages.0 = #, headers = [#, #])"
        );
        // A misspelled secret is still a secret; a reference is not.
        assert_eq!(
            masked("WITH (pasword = 'x1', password = '{{ PW }}')"),
            "WITH (pasword = #, password = '{{ PW }}')"
        );
        // An unterminated string: everything quoted from it on.
        assert_eq!(masked("WITH (password = 'oops"), "WITH (password = #");
    }

    #[test]
    fn values_are_listed_for_scrubbing() {
        assert_eq!(
            secret_values("WITH (password = 'it''s-secret', secret = 'ab')"),
            vec!["it's-secret".to_string()]
        );
    }
}
