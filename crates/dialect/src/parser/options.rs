//! WITH clauses: `WITH (key = value, ...)` with quoted, double-quoted or dotted keys, and
//! values that are strings, numbers, booleans, intervals, identifiers or arrays.

use super::spans::span;
use super::{PResult, StmtError, StmtParser};
use datafusion::sql::sqlparser::ast::{Expr, UnaryOperator, Value};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::Token;
use tributary_types::{Diagnostic, OptionValue, Span, SqlOption};

impl StmtParser {
    /// `KEYWORD ( options )`, returning the options and the clause's span.
    pub(crate) fn with_clause(&mut self, keyword: Keyword) -> PResult<(Vec<SqlOption>, Span)> {
        let start = span(self.p.peek_token_ref().span);
        self.p.expect_keyword(keyword)?;
        let (options, paren) = self.paren_options()?;
        Ok((options, start.union(&paren)))
    }

    /// `( key = value, ... )`, allowing an empty list and a trailing comma.
    pub(crate) fn paren_options(&mut self) -> PResult<(Vec<SqlOption>, Span)> {
        let start = span(self.p.peek_token_ref().span);
        self.p.expect_token(&Token::LParen)?;
        let mut options = Vec::new();
        while !self.p.consume_token(&Token::RParen) {
            options.push(self.option()?);
            if !self.p.consume_token(&Token::Comma) {
                self.p.expect_token(&Token::RParen)?;
                break;
            }
        }
        let end = span(self.p.get_current_token().span);
        Ok((options, start.union(&end)))
    }

    fn option(&mut self) -> PResult<SqlOption> {
        let first = self.p.next_token();
        let key_start = span(first.span);
        let mut key = match &first.token {
            Token::SingleQuotedString(s) => s.clone(),
            Token::Word(w) => w.value.clone(),
            _ => {
                return self
                    .p
                    .expected("an option name", first)
                    .map_err(StmtError::Parser);
            }
        };
        // Dotted keys may be written bare: bootstrap.servers = '...'.
        if matches!(first.token, Token::Word(ref w) if w.quote_style.is_none()) {
            loop {
                // `messages.0` arrives as a word and the number `.0`.
                if let Token::Number(n, _) = &self.p.peek_token_ref().token
                    && n.starts_with('.')
                    && n[1..].chars().all(|c| c.is_ascii_digit())
                {
                    key.push_str(n);
                    self.p.next_token();
                    continue;
                }
                if self.p.peek_token_ref().token != Token::Period {
                    break;
                }
                self.p.next_token();
                let part = self.p.next_token();
                match &part.token {
                    Token::Word(w) => {
                        key.push('.');
                        key.push_str(&w.value);
                    }
                    Token::Number(n, _) => {
                        key.push('.');
                        key.push_str(n);
                    }
                    _ => {
                        return self
                            .p
                            .expected("the rest of a dotted option name", part)
                            .map_err(StmtError::Parser);
                    }
                }
            }
        }
        let key_span = key_start.union(&span(self.p.get_current_token().span));
        if !self.p.consume_token(&Token::Eq) {
            let found = self.p.peek_token();
            return Err(StmtError::Diagnostic(
                Diagnostic::error(format!(
                    "syntax error: expected '=' after option '{key}', found {}",
                    found.token
                ))
                .with_span(span(found.span))
                .with_help(format!("Write options as {key} = 'value'.")),
            ));
        }
        let value_start = span(self.p.peek_token_ref().span);
        let expr = self.p.parse_expr()?;
        let value_span = value_start.union(&span(self.p.get_current_token().span));
        let value = option_value(&expr).ok_or_else(|| {
            StmtError::Diagnostic(
                Diagnostic::error(format!("unsupported value for option '{key}'"))
                    .with_span(value_span)
                    .with_note("option values are strings, numbers, booleans, intervals, names or arrays of these")
                    .with_help(format!("Quote the value: {key} = '...'.")),
            )
        })?;
        Ok(SqlOption {
            key,
            key_span,
            value,
            value_span,
        })
    }
}

/// The option value an expression denotes, if it is one of the accepted forms.
pub(crate) fn option_value(expr: &Expr) -> Option<OptionValue> {
    Some(match expr {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s)
            | Value::EscapedStringLiteral(s)
            | Value::NationalStringLiteral(s) => OptionValue::String(s.clone()),
            Value::DoubleQuotedString(s) => OptionValue::Identifier(s.clone()),
            Value::Number(n, _) => OptionValue::Number(n.to_string()),
            Value::Boolean(b) => OptionValue::Bool(*b),
            _ => return None,
        },
        Expr::UnaryOp {
            op: UnaryOperator::Minus,
            expr,
        } => match option_value(expr)? {
            OptionValue::Number(n) => OptionValue::Number(format!("-{n}")),
            _ => return None,
        },
        Expr::Interval(_) => OptionValue::Interval(expr.to_string()),
        Expr::Identifier(i) => OptionValue::Identifier(i.value.clone()),
        Expr::CompoundIdentifier(parts) => OptionValue::Identifier(
            parts
                .iter()
                .map(|p| p.value.as_str())
                .collect::<Vec<_>>()
                .join("."),
        ),
        Expr::Array(a) => OptionValue::Array(
            a.elem
                .iter()
                .map(option_value)
                .collect::<Option<Vec<_>>>()?,
        ),
        Expr::Nested(inner) => option_value(inner)?,
        _ => return None,
    })
}
