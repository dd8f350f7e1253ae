//! Bounds on a statement's shape, checked on its tokens before anything parses them:
//! size, nesting depth, and the depth of the expression trees it would build. sqlparser,
//! DataFusion and Tributary all recurse over those trees, so a statement past the
//! bounds is refused here with a diagnostic, in time linear in its length, and never
//! reaches a recursion that could exhaust the stack.

use super::spans::span;
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan};
use tributary_types::limits::{MAX_EXPRESSION_DEPTH, MAX_NESTING_DEPTH, MAX_STATEMENT_BYTES};
use tributary_types::{Diagnostic, Span};

/// Refuse a statement of `bytes` bytes whose tokens are `tokens` if it is too large or
/// nested too deeply; otherwise its depth: the deepest its expression trees and
/// brackets go, which bounds how deep the recursion over it goes.
pub(crate) fn check_shape(tokens: &[TokenWithSpan], bytes: usize) -> Result<usize, Diagnostic> {
    let first = tokens.first().map(|t| span(t.span)).unwrap_or_default();
    if bytes > MAX_STATEMENT_BYTES {
        return Err(Diagnostic::error(format!(
            "the statement is {bytes} bytes long, more than the limit of {MAX_STATEMENT_BYTES}"
        ))
        .with_span(first)
        .with_help("Split it, or move a large schema into a file ('avro.schema_file', 'protobuf.schema_file').")
        .with_code(tributary_types::codes::LIMIT_EXCEEDED));
    }
    let mut levels: Vec<Level> = vec![Level::new(Opener::Statement)];
    // The expression depth along the open levels: each level's operator chain, plus one
    // per level.
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut previous: Option<&Token> = None;
    // `T[][]...`: each empty pair of brackets wraps the type once more without leaving a
    // level open.
    let mut array_suffixes = 0usize;
    for t in tokens {
        let token = &t.token;
        if matches!(token, Token::Whitespace(_)) {
            continue;
        }
        let opener = match token {
            Token::LParen => Some(Opener::Paren),
            Token::LBracket => Some(Opener::Bracket),
            Token::Lt if previous.is_some_and(is_type_word) => Some(Opener::Angle),
            _ => None,
        };
        if let Some(opener) = opener {
            levels.push(Level::new(opener));
            depth += 1;
            if levels.len() + array_suffixes > MAX_NESTING_DEPTH + 1 {
                return Err(too_deep(
                    format!("nested more than {MAX_NESTING_DEPTH} levels deep"),
                    span(t.span),
                ));
            }
        } else if closes(token, levels.last().map(|l| l.opener)) {
            let closing = if matches!(token, Token::ShiftRight) {
                2
            } else {
                1
            };
            for _ in 0..closing {
                if levels.len() > 1
                    && let Some(level) = levels.pop()
                {
                    depth = depth.saturating_sub(level.chain + 1);
                }
            }
            if matches!(token, Token::RBracket) && matches!(previous, Some(Token::LBracket)) {
                array_suffixes += 1;
                if levels.len() + array_suffixes > MAX_NESTING_DEPTH + 1 {
                    return Err(too_deep(
                        format!("array types nested more than {MAX_NESTING_DEPTH} levels deep"),
                        span(t.span),
                    ));
                }
            }
        } else if let Some(level) = levels.last_mut() {
            if separates(token) {
                depth -= level.chain;
                level.chain = 0;
            } else if is_binary_operator(token) {
                level.chain += 1;
                depth += 1;
            }
        }
        if !matches!(token, Token::LBracket | Token::RBracket) {
            array_suffixes = 0;
        }
        if depth > MAX_EXPRESSION_DEPTH {
            return Err(too_deep(
                format!(
                    "an expression more than {MAX_EXPRESSION_DEPTH} levels deep (operators in a chain count one level each)"
                ),
                span(t.span),
            ));
        }
        deepest = deepest.max(depth.max(levels.len() - 1 + array_suffixes));
        previous = Some(token);
    }
    Ok(deepest)
}

fn too_deep(what: String, at: Span) -> Diagnostic {
    let help = if what.starts_with("an expression") {
        "Split the chain of operators: an IN list can replace many ORs, and a virtual column or a view can hold part of a long expression."
    } else {
        "Flatten the nesting: a STRUCT with more fields, or a JSON column, holds deep documents."
    };
    Diagnostic::error(format!("the statement is nested too deeply: {what}"))
        .with_span(at)
        .with_help(help)
        .with_code(tributary_types::codes::LIMIT_EXCEEDED)
}

/// What opened a nesting level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opener {
    Statement,
    Paren,
    Bracket,
    Angle,
}

#[derive(Debug)]
struct Level {
    opener: Opener,
    /// Binary operators since the last separator at this level.
    chain: usize,
}

impl Level {
    fn new(opener: Opener) -> Self {
        Self { opener, chain: 0 }
    }
}

fn closes(token: &Token, open: Option<Opener>) -> bool {
    matches!(
        (token, open),
        (Token::RParen, Some(Opener::Paren))
            | (Token::RBracket, Some(Opener::Bracket))
            | (Token::Gt | Token::ShiftRight, Some(Opener::Angle))
    )
}

/// Words after which `<` opens a type's brackets rather than comparing.
fn is_type_word(token: &Token) -> bool {
    matches!(token, Token::Word(w) if w.quote_style.is_none()
        && ["struct", "array", "map", "list", "row"].iter().any(|k| w.value.eq_ignore_ascii_case(k)))
}

/// Tokens that end one expression at a level: commas and the clause keywords between
/// expressions.
fn separates(token: &Token) -> bool {
    match token {
        Token::Comma | Token::SemiColon => true,
        Token::Word(w) if w.quote_style.is_none() => [
            "select",
            "from",
            "where",
            "group",
            "having",
            "order",
            "limit",
            "offset",
            "on",
            "using",
            "when",
            "then",
            "else",
            "end",
            "as",
            "join",
            "union",
            "except",
            "intersect",
            "values",
            "set",
            "with",
            "returning",
            "partitioned",
            "by",
        ]
        .iter()
        .any(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

/// Tokens that join two operands into one tree node. (`a.b.c` is not among them: it
/// parses into one flat name.)
fn is_binary_operator(token: &Token) -> bool {
    match token {
        Token::Plus
        | Token::Minus
        | Token::Mul
        | Token::Div
        | Token::Mod
        | Token::DuckIntDiv
        | Token::StringConcat
        | Token::Eq
        | Token::DoubleEq
        | Token::Neq
        | Token::Lt
        | Token::Gt
        | Token::LtEq
        | Token::GtEq
        | Token::Spaceship
        | Token::Caret
        | Token::Ampersand
        | Token::Pipe
        | Token::ShiftLeft
        | Token::ShiftRight
        | Token::Arrow
        | Token::LongArrow
        | Token::HashArrow
        | Token::HashLongArrow
        | Token::DoubleColon
        | Token::Tilde
        | Token::TildeAsterisk
        | Token::ExclamationMarkTilde
        | Token::ExclamationMarkTildeAsterisk
        | Token::Question
        | Token::AtArrow
        | Token::ArrowAt => true,
        Token::Word(w) if w.quote_style.is_none() => [
            "and", "or", "like", "ilike", "is", "in", "between", "similar", "regexp", "rlike",
            "collate", "at",
        ]
        .iter()
        .any(|k| w.value.eq_ignore_ascii_case(k)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::parser::parse_script;

    fn refused(sql: &str) -> Option<String> {
        parse_script(sql)
            .into_iter()
            .find_map(|r| r.err())
            .map(|f| f.diagnostic.message)
    }

    #[test]
    fn ordinary_statements_pass_and_deep_ones_are_refused() {
        // Long flat lists, qualified names and many CASE branches are not deep.
        let list: Vec<String> = (0..5_000).map(|i| i.to_string()).collect();
        assert_eq!(
            refused(&format!("SELECT 1 WHERE a IN ({})", list.join(", "))),
            None
        );
        let cols: Vec<String> = (0..2_000).map(|i| format!("t.c{i} + 1")).collect();
        assert_eq!(refused(&format!("SELECT {} FROM t", cols.join(", "))), None);
        let whens: Vec<String> = (0..1_000)
            .map(|i| format!("WHEN a = {i} THEN {i}"))
            .collect();
        assert_eq!(
            refused(&format!("SELECT CASE {} END FROM t", whens.join(" "))),
            None
        );
        assert_eq!(
            refused(&format!("SELECT {} FROM t", vec!["a"; 250].join(" + "))),
            None
        );
        // Chains and nesting past the limits.
        let deep = refused(&format!("SELECT {} FROM t", vec!["a"; 300].join(" + ")));
        assert!(deep.is_some_and(|m| m.contains("more than 256 levels deep")));
        let nested = refused(&format!("SELECT {}1{}", "(".repeat(70), ")".repeat(70)));
        assert!(nested.is_some_and(|m| m.contains("more than 64 levels deep")));
        // Chains inside parentheses add up along the path.
        let inner = vec!["a"; 150].join(" + ");
        let sum = format!("SELECT {inner} + ({inner}) FROM t");
        assert!(refused(&sum).is_some_and(|m| m.contains("levels deep")));
    }
}
