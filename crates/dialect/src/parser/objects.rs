//! Views, declared functions and script-scoped tables: `CREATE [OR REPLACE] VIEW`,
//! `DROP VIEW`, `CREATE [OR REPLACE] [AGGREGATE | ASYNC] FUNCTION`, `DROP FUNCTION`, and
//! `CREATE TABLE name AS query`. A query is kept as the text the user wrote, with its
//! span, and planned by DataFusion later.

use super::ast::{CreateFunction, CreateView, DropBehavior, Name, QueryText, Statement};
use super::spans::span;
use super::{PResult, StmtError, StmtParser};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::Token;
use tributary_types::{Diagnostic, FunctionArg, FunctionSignature, codes};

impl StmtParser {
    /// After `CREATE [OR REPLACE]`: `VIEW [IF NOT EXISTS] name [(a, b)] AS query`.
    pub(crate) fn create_view(&mut self, or_replace: bool) -> PResult<Statement> {
        let if_not_exists = self
            .p
            .parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        if or_replace && if_not_exists {
            return Err(StmtError::Diagnostic(
                Diagnostic::error("CREATE OR REPLACE VIEW cannot also say IF NOT EXISTS")
                    .with_help("Keep one: OR REPLACE replaces the view, IF NOT EXISTS keeps the one there is."),
            ));
        }
        let name = self.name()?;
        let mut columns = Vec::new();
        if self.p.consume_token(&Token::LParen) {
            loop {
                let at = span(self.p.peek_token_ref().span);
                let ident = self.p.parse_identifier()?;
                columns.push(Name {
                    value: super::normalize_ident(&ident),
                    span: at,
                });
                if !self.p.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.p.expect_token(&Token::RParen)?;
        }
        self.p.expect_keyword(Keyword::AS)?;
        let query = self.rest_as_query()?;
        Ok(Statement::CreateView(Box::new(CreateView {
            name,
            or_replace,
            if_not_exists,
            columns,
            query,
        })))
    }

    /// After `CREATE TABLE name`: `AS query` or `AS (query)`.
    pub(crate) fn create_table_as(&mut self, name: Name) -> PResult<Statement> {
        self.p.expect_keyword(Keyword::AS)?;
        let query = self.rest_as_query()?;
        Ok(Statement::CreateTableAs { name, query })
    }

    /// The rest of the statement, which must be a query: its span (checked to parse as
    /// one here; DataFusion plans it later). `parse_script` fills in its text.
    fn rest_as_query(&mut self) -> PResult<QueryText> {
        let start = span(self.p.peek_token_ref().span);
        let _ = self.p.parse_query()?;
        let end = span(self.p.get_current_token().span);
        self.expect_end()?;
        Ok(QueryText {
            text: String::new(),
            span: start.union(&end),
        })
    }

    /// After `CREATE [OR REPLACE]`: `[AGGREGATE | ASYNC] FUNCTION name(args) RETURNS type
    /// [LANGUAGE name]`.
    pub(crate) fn create_function(&mut self, or_replace: bool) -> PResult<Statement> {
        let aggregate = self.p.parse_keyword(Keyword::AGGREGATE);
        let is_async = !aggregate && self.eat_word("async");
        self.p.expect_keyword(Keyword::FUNCTION)?;
        let if_not_exists = self
            .p
            .parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let name = self.name()?;
        self.p.expect_token(&Token::LParen)?;
        let mut args = Vec::new();
        if !self.p.consume_token(&Token::RParen) {
            loop {
                // `name TYPE` or just `TYPE`: a name is a word followed by a type.
                let arg_name = match (
                    &self.p.peek_token_ref().token,
                    &self.p.peek_nth_token_ref(1).token,
                ) {
                    (Token::Word(_), Token::Word(_)) => {
                        Some(super::normalize_ident(&self.p.parse_identifier()?))
                    }
                    _ => None,
                };
                let data_type = self.p.parse_data_type()?;
                args.push(FunctionArg {
                    name: arg_name,
                    data_type: data_type.to_string(),
                });
                if !self.p.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.p.expect_token(&Token::RParen)?;
        }
        self.p.expect_keyword(Keyword::RETURNS)?;
        let returns_at = span(self.p.peek_token_ref().span);
        let returns = self.p.parse_data_type()?.to_string();
        let language = if self.p.parse_keyword(Keyword::LANGUAGE) {
            Some(super::normalize_ident(&self.p.parse_identifier()?))
        } else {
            None
        };
        if self.p.peek_keyword(Keyword::AS) {
            return Err(StmtError::Diagnostic(
                Diagnostic::error("a declared function has no body here")
                    .with_code(codes::UNSUPPORTED)
                    .with_span(span(self.p.peek_token_ref().span))
                    .with_note("CREATE FUNCTION records a UDF's signature, so pipelines that call it can be checked; its code lives with the stream processor (an Arroyo Rust or Python UDF)")
                    .with_help("Remove the AS clause."),
            ));
        }
        self.expect_end()?;
        Ok(Statement::CreateFunction(Box::new(CreateFunction {
            name,
            or_replace,
            if_not_exists,
            signature: FunctionSignature {
                args,
                returns,
                aggregate,
                is_async,
                language,
            },
            returns_span: returns_at.union(&span(self.p.get_current_token().span)),
        })))
    }

    /// After `DROP`: `VIEW [IF EXISTS] a [, b] [RESTRICT | CASCADE]`.
    pub(crate) fn drop_view(&mut self) -> PResult<Statement> {
        let if_exists = self.p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let names = self.names()?;
        let behavior = self.drop_behavior();
        self.expect_end()?;
        Ok(Statement::DropView {
            names,
            if_exists,
            behavior,
        })
    }

    /// After `DROP`: `FUNCTION [IF EXISTS] name [(types)]` (the types are accepted, as
    /// PostgreSQL writes them; a name holds one signature).
    pub(crate) fn drop_function(&mut self) -> PResult<Statement> {
        let if_exists = self.p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
        let name = self.name()?;
        if self.p.consume_token(&Token::LParen) && !self.p.consume_token(&Token::RParen) {
            loop {
                let _ = self.p.parse_data_type()?;
                if !self.p.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.p.expect_token(&Token::RParen)?;
        }
        if self.drop_behavior() == DropBehavior::Cascade {
            return Err(StmtError::Diagnostic(
                Diagnostic::error("DROP FUNCTION does not take CASCADE").with_help(
                    "Drop the views that call it first (DROP VIEW ... ), then the function.",
                ),
            ));
        }
        self.expect_end()?;
        Ok(Statement::DropFunction { name, if_exists })
    }
}
