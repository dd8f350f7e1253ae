//! `SET name = value` (or `SET name TO value`): the option's dotted name and its value as
//! text, each with its place. `SET TIME ZONE ...` is left to DataFusion.

use super::ast::{Name, Statement};
use super::spans::span;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};
use tributary_types::{Diagnostic, Span, codes};

/// Read `SET ...` from `tokens` (whitespace included); `None` for forms DataFusion
/// handles (`SET TIME ZONE`).
pub(crate) fn parse_set(tokens: &[TokenWithSpan]) -> Option<Result<Statement, Diagnostic>> {
    let significant: Vec<&TokenWithSpan> = tokens
        .iter()
        .filter(|t| {
            !matches!(
                t.token,
                Token::Whitespace(_) | Token::EOF | Token::SemiColon
            )
        })
        .collect();
    let rest = significant.get(1..).unwrap_or_default();
    if let Some(Token::Word(w)) = rest.first().map(|t| &t.token)
        && w.quote_style.is_none()
        && w.value.eq_ignore_ascii_case("time")
    {
        return None;
    }
    // The name: words joined by dots.
    let mut name = String::new();
    let mut name_span: Option<Span> = None;
    let mut i = 0;
    while let Some(t) = rest.get(i) {
        match &t.token {
            Token::Word(w) if name.is_empty() || name.ends_with('.') => {
                name.push_str(&w.value);
                name_span = Some(match name_span {
                    Some(s) => s.union(&span(t.span)),
                    None => span(t.span),
                });
            }
            Token::Period if !name.is_empty() && !name.ends_with('.') => name.push('.'),
            _ => break,
        }
        i += 1;
    }
    let statement_span = significant
        .first()
        .map(|t| span(t.span))
        .unwrap_or_default();
    let Some(name_span) = name_span.filter(|_| !name.ends_with('.')) else {
        return Some(Err(Diagnostic::error("SET needs the option's name")
            .with_span(statement_span)
            .with_help("Write SET name = value, as in SET updating_ttl = INTERVAL '1' HOUR.")
            .with_code(codes::SYNTAX_ERROR)));
    };
    // `=` or `TO`, then the value.
    match rest.get(i).map(|t| &t.token) {
        Some(Token::Eq) => i += 1,
        Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("to") => i += 1,
        _ => {
            return Some(Err(Diagnostic::error(format!(
                "expected '=' or TO after SET {name}"
            ))
            .with_span(name_span)
            .with_help(format!("Write SET {name} = value."))
            .with_code(codes::SYNTAX_ERROR)));
        }
    }
    let value_tokens = rest.get(i..).unwrap_or_default();
    let Some(first) = value_tokens.first() else {
        return Some(Err(Diagnostic::error(format!("SET {name} needs a value"))
            .with_span(name_span)
            .with_code(codes::SYNTAX_ERROR)));
    };
    let value_span = value_tokens
        .iter()
        .fold(span(first.span), |s, t| s.union(&span(t.span)));
    let value = match value_tokens {
        // INTERVAL '5 seconds', INTERVAL '5' SECOND
        [kw, rest @ ..] if matches!(&kw.token, Token::Word(w) if w.value.eq_ignore_ascii_case("interval")) => {
            rest.iter()
                .map(|t| text(&t.token))
                .collect::<Vec<_>>()
                .join(" ")
        }
        [single] => text(&single.token),
        // A negative number.
        [minus, n] if matches!(minus.token, Token::Minus) => format!("-{}", text(&n.token)),
        _ => {
            return Some(Err(Diagnostic::error(format!(
                "the value of SET {name} must be one literal"
            ))
            .with_span(value_span)
            .with_help("Write a number, a quoted string, true or false, or an INTERVAL.")
            .with_code(codes::INVALID_OPTION)));
        }
    };
    Some(Ok(Statement::Set {
        name: Name {
            value: name,
            span: name_span,
        },
        value,
        value_span,
    }))
}

/// A value token's text: a string's content, a word or number as written.
fn text(token: &Token) -> String {
    match token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.clone(),
        Token::Word(w) => w.value.clone(),
        Token::Number(n, _) => n.clone(),
        other => other.to_string(),
    }
}
