//! The SQL front-end: splits a script into statements, parses Tributary's own statements
//! (connection tables with WATERMARK/METADATA/virtual columns, profiles, SHOW/DESCRIBE/
//! DROP/TEST) on top of sqlparser's public `Parser`, and leaves every other statement to
//! DataFusion. No text is rewritten, so every span points into the user's script.

pub mod ast;
mod chunks;
mod create_table;
mod objects;
mod options;
mod set;
mod shape;
pub mod spans;

use ast::{DropBehavior, Name, ParsedStatement, Statement};
use datafusion::sql::sqlparser::dialect::GenericDialect;
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::{Token, TokenWithSpan, Whitespace};
use spans::{LineIndex, parser_error, span};
use tributary_types::limits::{MAX_COLUMNS, MAX_OPTIONS, MAX_SCRIPT_BYTES};
use tributary_types::{Diagnostic, Span, codes};

/// The dialect every statement is read with (DataFusion's default).
pub const DIALECT: GenericDialect = GenericDialect {};

/// A statement that failed to parse: where it is, and why.
#[derive(Debug, Clone)]
pub struct ParseFailure {
    /// The statement's span.
    pub span: Span,
    /// The problem.
    pub diagnostic: Box<Diagnostic>,
    /// The statement's text, as far as it could be told apart.
    pub text: String,
}

/// Split and parse a script. Each statement parses independently, so one syntax error
/// does not hide the others; a tokenizer error (an unterminated string) ends the script.
/// Time is linear in the script's length; statements past the limits of
/// `tributary_types::limits` are refused before they are parsed.
pub fn parse_script(sql: &str) -> Vec<Result<ParsedStatement, ParseFailure>> {
    parse_script_lazily(sql).collect()
}

/// [`parse_script`], one statement at a time: each is parsed when it is asked for, so a
/// script runner holds one statement's syntax tree at a time, not the whole script's
/// (10,000 `CREATE TABLE` statements would otherwise hold about 100 MB of trees).
pub fn parse_script_lazily(
    sql: &str,
) -> Box<dyn Iterator<Item = Result<ParsedStatement, ParseFailure>> + Send + '_> {
    if sql.len() > MAX_SCRIPT_BYTES {
        let at = tributary_types::Location::new(1, 1);
        return Box::new(std::iter::once(Err(failure(
            Span::new(at, at),
            "",
            Diagnostic::error(format!(
                "the script is {} bytes long, more than the limit of {MAX_SCRIPT_BYTES}",
                sql.len()
            ))
            .with_help("Split it into several scripts.")
            .with_code(codes::LIMIT_EXCEEDED),
        ))));
    }
    let pieces = match chunks::pieces(sql) {
        Ok(p) => p,
        Err(e) => return Box::new(std::iter::once(Err(tokenizer_failure(sql, &e)))),
    };
    let index = std::sync::Arc::new(LineIndex::new(sql));
    Box::new(pieces.into_iter().flat_map(move |piece| {
        let statements: Box<dyn Iterator<Item = _> + Send> = match chunks::tokens(sql, &piece) {
            Ok(tokens) => Box::new(split(tokens).into_iter().map(Ok)),
            // Each piece was tokenized once already; the same text gives the same tokens.
            Err(e) => Box::new(std::iter::once(Err(tokenizer_failure(sql, &e)))),
        };
        let index = index.clone();
        statements.map(move |stmt_tokens| parse_one(&index, stmt_tokens?))
    }))
}

/// The statements of `sql` that begin with `words` (uppercase: `["CREATE", "CONNECTION",
/// "PROFILE"]`), parsed; the others are only tokenized. Statements that do not parse,
/// and a script that does not tokenize, give nothing.
pub fn parse_statements_starting(sql: &str, words: &[&str]) -> Vec<ParsedStatement> {
    let index = LineIndex::new(sql);
    let mut out = Vec::new();
    let whole = chunks::each_piece(sql, |_, tokens| {
        for statement in split(tokens) {
            if leading_words(&statement, words.len()) == words
                && let Ok(parsed) = parse_one(&index, statement)
            {
                out.push(parsed);
            }
        }
    });
    match whole {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}

/// A tokenizer error (an unterminated string or comment): it ends the script.
fn tokenizer_failure(
    sql: &str,
    e: &datafusion::sql::sqlparser::tokenizer::TokenizerError,
) -> ParseFailure {
    let at = tributary_types::Location::new(e.location.line, e.location.column);
    let span = Span::new(at, at);
    let message = e.message.to_lowercase();
    failure(
        span,
        sql,
        Diagnostic::error(format!("syntax error: {message}"))
            .with_span(span)
            .with_help("Close every quoted string and comment."),
    )
}

/// One statement's tokens, checked and parsed.
fn parse_one(
    index: &LineIndex,
    stmt_tokens: Vec<TokenWithSpan>,
) -> Result<ParsedStatement, ParseFailure> {
    let first = stmt_tokens
        .first()
        .map(|t| span(t.span))
        .unwrap_or_default();
    let last = stmt_tokens.last().map(|t| span(t.span)).unwrap_or_default();
    let whole = first.union(&last);
    let text = index.slice(whole);
    let depth =
        shape::check_shape(&stmt_tokens, text.len()).map_err(|d| failure(whole, text, d))?;
    let mut statement = parse_statement(stmt_tokens).map_err(|d| failure(whole, text, d))?;
    match &mut statement {
        Statement::CreateTable(t) => t.depth = depth,
        Statement::CreateView(v) => v.query.text = index.slice(v.query.span).to_string(),
        Statement::CreateTableAs { query, .. } => {
            query.text = index.slice(query.span).to_string();
        }
        _ => {}
    }
    check_counts(&statement).map_err(|d| failure(whole, text, d))?;
    Ok(ParsedStatement {
        statement,
        span: whole,
        text: text.to_string(),
    })
}

/// A statement that did not parse: a syntax error, unless the rule that refused it gave a
/// more precise code.
fn failure(span: Span, text: &str, diagnostic: Diagnostic) -> ParseFailure {
    ParseFailure {
        span,
        diagnostic: Box::new(diagnostic.or_code(codes::SYNTAX_ERROR)),
        text: text.to_string(),
    }
}

/// The limits on how many options and columns a statement gives.
fn check_counts(statement: &Statement) -> Result<(), Diagnostic> {
    let (options, with_span, columns, name_span) = match statement {
        Statement::CreateTable(t) => (t.options.len(), t.with_span, t.columns.len(), t.name.span),
        Statement::CreateProfile {
            options,
            with_span,
            name,
            ..
        }
        | Statement::AlterProfile {
            options,
            with_span,
            name,
        } => (options.len(), *with_span, 0, name.span),
        _ => return Ok(()),
    };
    if options > MAX_OPTIONS {
        return Err(Diagnostic::error(format!(
            "the statement gives {options} options, more than the limit of {MAX_OPTIONS}"
        ))
        .with_span(with_span)
        .with_help("No connector has that many options; remove the ones that are not needed.")
        .with_code(codes::LIMIT_EXCEEDED));
    }
    if columns > MAX_COLUMNS {
        return Err(Diagnostic::error(format!(
            "the table declares {columns} columns, more than the limit of {MAX_COLUMNS}"
        ))
        .with_span(name_span)
        .with_help("Keep the columns the table needs, or nest related ones in a STRUCT.")
        .with_code(codes::LIMIT_EXCEEDED));
    }
    Ok(())
}

/// Split at semicolons, dropping whitespace-only statements and leading/trailing
/// whitespace tokens.
fn split(tokens: Vec<TokenWithSpan>) -> Vec<Vec<TokenWithSpan>> {
    let mut out = Vec::new();
    let mut cur: Vec<TokenWithSpan> = Vec::new();
    for t in tokens {
        match t.token {
            Token::SemiColon => out.push(std::mem::take(&mut cur)),
            Token::EOF => {}
            _ => cur.push(t),
        }
    }
    out.push(cur);
    out.into_iter()
        .filter_map(|mut s| {
            // Drain the leading whitespace at once: one token at a time is quadratic in a
            // script of many blank lines.
            let start = s.iter().position(|t| !is_trivia(t))?;
            s.drain(..start);
            while s.last().is_some_and(is_trivia) {
                s.pop();
            }
            Some(s)
        })
        .collect()
}

fn is_trivia(t: &TokenWithSpan) -> bool {
    matches!(t.token, Token::Whitespace(_))
}

fn is_word(t: &TokenWithSpan, word: &str) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word))
}

/// The leading words of a statement, uppercased, skipping whitespace and comments.
fn leading_words(tokens: &[TokenWithSpan], n: usize) -> Vec<String> {
    tokens
        .iter()
        .filter(|t| {
            !matches!(
                t.token,
                Token::Whitespace(
                    Whitespace::Space
                        | Whitespace::Newline
                        | Whitespace::Tab
                        | Whitespace::SingleLineComment { .. }
                        | Whitespace::MultiLineComment(_)
                )
            )
        })
        .take(n)
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_uppercase(),
            other => other.to_string(),
        })
        .collect()
}

fn parse_statement(tokens: Vec<TokenWithSpan>) -> Result<Statement, Diagnostic> {
    let words = leading_words(&tokens, 4);
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let ours = matches!(
        w.as_slice(),
        ["CREATE", "TABLE", ..]
            | ["CREATE", "TEMPORARY", "TABLE", ..]
            | ["CREATE", "TEMP", "TABLE", ..]
            | ["CREATE", "CONNECTION", ..]
            | ["CREATE", "VIEW", ..]
            | ["CREATE", "OR", "REPLACE", ..]
            | ["CREATE", "FUNCTION", ..]
            | ["CREATE", "AGGREGATE", "FUNCTION", ..]
            | ["CREATE", "ASYNC", "FUNCTION", ..]
            | ["DROP", "VIEW", ..]
            | ["DROP", "FUNCTION", ..]
            | ["SHOW", "VIEWS", ..]
            | ["ALTER", "CONNECTION", ..]
            | ["DROP", "CONNECTION", ..]
            | ["DROP", "TABLE", ..]
            | ["SHOW", "TABLES", ..]
            | ["SHOW", "CONNECTION", ..]
            | ["SHOW", "CONNECTORS", ..]
            | ["SHOW", "TOPICS", ..]
            | ["SHOW", "DIRECTORIES", ..]
            | ["SHOW", "CREATE", ..]
            | ["DESCRIBE", ..]
            | ["DESC", ..]
            | ["TEST", ..]
    );
    if w.first() == Some(&"SET")
        && let Some(set) = set::parse_set(&tokens)
    {
        return set;
    }
    if !ours {
        // Other CREATE/DROP/ALTER forms would reach DataFusion, which cannot store anything
        // in Tributary's catalog; say so plainly.
        if let [verb @ ("CREATE" | "DROP" | "ALTER"), what, ..] = w.as_slice() {
            let at = tokens
                .iter()
                .find(|t| !matches!(t.token, Token::Whitespace(_)))
                .map(|t| span(t.span))
                .unwrap_or_default();
            let what = if *what == "OR" {
                "OR REPLACE".to_string()
            } else {
                (*what).to_string()
            };
            return Err(Diagnostic::error(format!("{verb} {what} is not supported"))
                .with_code(codes::UNSUPPORTED)
                .with_span(at)
                .with_note("Tributary's catalog holds connection profiles, connection tables, views and declared functions")
                .with_help("Use CREATE TABLE ... WITH (connector = '...') or CREATE CONNECTION PROFILE, and write derived data as queries."));
        }
        return Ok(Statement::Query);
    }
    // `CREATE TABLE t AS SELECT` and `CREATE TABLE t (..)` without WITH are decided by the
    // table parser; views and other CREATEs never reach here.
    let mut p = StmtParser::new(tokens);
    let result = p.statement();
    result.map_err(|e| {
        let at = p.error_span();
        match e {
            StmtError::Parser(pe) => parser_error(pe, at),
            StmtError::Diagnostic(d) => d.or_span(at),
        }
    })
}

/// Errors while parsing one statement.
#[derive(Debug)]
pub(crate) enum StmtError {
    /// sqlparser's error; the span is the token it stopped at.
    Parser(ParserError),
    /// Our own, already explained.
    Diagnostic(Diagnostic),
}

impl From<ParserError> for StmtError {
    fn from(e: ParserError) -> Self {
        StmtError::Parser(e)
    }
}

impl From<Diagnostic> for StmtError {
    fn from(d: Diagnostic) -> Self {
        StmtError::Diagnostic(d)
    }
}

pub(crate) type PResult<T> = Result<T, StmtError>;

/// sqlparser's parser over one statement's tokens, plus the statement grammar of
/// Tributary's own statements.
pub(crate) struct StmtParser {
    pub(crate) p: Parser<'static>,
}

impl StmtParser {
    fn new(tokens: Vec<TokenWithSpan>) -> Self {
        Self {
            p: Parser::new(&DIALECT).with_tokens_with_locations(tokens),
        }
    }

    /// The span of the token the parser is looking at (or the last one at the end).
    pub(crate) fn error_span(&self) -> Span {
        let next = self.p.peek_token_ref();
        if next.token == Token::EOF {
            span(self.p.get_current_token().span)
        } else {
            span(next.span)
        }
    }

    /// Consume `word` (an unreserved word compared case-insensitively) if it is next.
    pub(crate) fn eat_word(&mut self, word: &str) -> bool {
        if is_word(self.p.peek_token_ref(), word) {
            self.p.next_token();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect_word(&mut self, word: &str) -> PResult<()> {
        if self.eat_word(word) {
            Ok(())
        } else {
            let found = self.p.peek_token();
            Err(self
                .p
                .expected::<()>(word, found)
                .err()
                .map(StmtError::Parser)
                .unwrap_or_else(|| {
                    StmtError::Parser(ParserError::ParserError(format!("Expected: {word}")))
                }))
        }
    }

    /// A (possibly dotted) object name, normalised.
    pub(crate) fn name(&mut self) -> PResult<Name> {
        let start = span(self.p.peek_token_ref().span);
        let object = self.p.parse_object_name(false)?;
        let end = span(self.p.get_current_token().span);
        let parts: Vec<String> = object
            .0
            .iter()
            .filter_map(|p| p.as_ident())
            .map(normalize_ident)
            .collect();
        Ok(Name {
            value: parts.join("."),
            span: start.union(&end),
        })
    }

    /// One or more names, separated by commas (`DROP TABLE a, b`).
    pub(crate) fn names(&mut self) -> PResult<Vec<Name>> {
        let mut names = vec![self.name()?];
        while self.p.consume_token(&Token::Comma) {
            names.push(self.name()?);
        }
        Ok(names)
    }

    pub(crate) fn expect_end(&mut self) -> PResult<()> {
        let t = self.p.peek_token();
        if t.token == Token::EOF {
            Ok(())
        } else {
            Err(StmtError::Diagnostic(
                Diagnostic::error(format!(
                    "syntax error: unexpected '{}' after the end of the statement",
                    t.token
                ))
                .with_span(span(t.span))
                .with_help("Remove it, or end the statement with a semicolon before it."),
            ))
        }
    }

    fn statement(&mut self) -> PResult<Statement> {
        let p = &mut self.p;
        if p.parse_keyword(Keyword::CREATE) {
            if self.eat_word("connection") {
                self.expect_word("profile")?;
                let if_not_exists =
                    self.p
                        .parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
                let name = self.name()?;
                let (options, with_span) = self.with_clause(Keyword::WITH)?;
                self.expect_end()?;
                return Ok(Statement::CreateProfile {
                    name,
                    if_not_exists,
                    options,
                    with_span,
                });
            }
            let or_replace = self.p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
            if self.p.parse_keyword(Keyword::VIEW) {
                return self.create_view(or_replace);
            }
            if self.p.peek_keyword(Keyword::FUNCTION)
                || self.p.peek_keyword(Keyword::AGGREGATE)
                || is_word(self.p.peek_token_ref(), "async")
            {
                return self.create_function(or_replace);
            }
            if or_replace {
                return Err(StmtError::Diagnostic(
                    Diagnostic::error("CREATE OR REPLACE is for views and functions")
                        .with_code(codes::UNSUPPORTED)
                        .with_help("Replace a table with DROP TABLE, then CREATE TABLE (or REST's PUT /connection_tables/{id}); replace a view with CREATE OR REPLACE VIEW."),
                ));
            }
            let temporary =
                self.p.parse_keyword(Keyword::TEMPORARY) || self.p.parse_keyword(Keyword::TEMP);
            self.p.expect_keyword(Keyword::TABLE)?;
            return self.create_table(temporary);
        }
        if p.parse_keyword(Keyword::ALTER) {
            self.expect_word("connection")?;
            self.expect_word("profile")?;
            let name = self.name()?;
            self.p.expect_keyword(Keyword::SET)?;
            let (options, with_span) = self.paren_options()?;
            self.expect_end()?;
            return Ok(Statement::AlterProfile {
                name,
                options,
                with_span,
            });
        }
        if p.parse_keyword(Keyword::DROP) {
            if self.eat_word("connection") {
                self.expect_word("profile")?;
                let if_exists = self.p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
                let name = self.name()?;
                let behavior = self.drop_behavior();
                self.expect_end()?;
                return Ok(Statement::DropProfile {
                    name,
                    if_exists,
                    behavior,
                });
            }
            if self.p.parse_keyword(Keyword::VIEW) {
                return self.drop_view();
            }
            if self.p.parse_keyword(Keyword::FUNCTION) {
                return self.drop_function();
            }
            self.p.expect_keyword(Keyword::TABLE)?;
            let if_exists = self.p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
            let names = self.names()?;
            let behavior = self.drop_behavior();
            self.expect_end()?;
            return Ok(Statement::DropTable {
                names,
                if_exists,
                behavior,
            });
        }
        if p.parse_keyword(Keyword::SHOW) {
            let stmt = if self.p.parse_keyword(Keyword::TABLES) {
                Statement::ShowTables
            } else if self.eat_word("views") {
                Statement::ShowViews
            } else if self.eat_word("connectors") {
                Statement::ShowConnectors
            } else if self.eat_word("topics") {
                self.p.expect_keyword(Keyword::IN)?;
                let _ = self.eat_word("connection");
                self.expect_word("profile")?;
                Statement::ShowTopics(self.name()?)
            } else if self.eat_word("directories") {
                self.p.expect_keyword(Keyword::IN)?;
                let span = span(self.p.peek_token_ref().span);
                let path = self.p.parse_literal_string()?;
                Statement::ShowDirectories { path, span }
            } else if self.eat_word("connection") {
                self.expect_word("profiles")?;
                Statement::ShowProfiles
            } else {
                self.p.expect_keyword(Keyword::CREATE)?;
                if self.eat_word("connection") {
                    self.expect_word("profile")?;
                    Statement::ShowCreateProfile(self.name()?)
                } else if self.p.parse_keyword(Keyword::VIEW) {
                    Statement::ShowCreateView(self.name()?)
                } else {
                    self.p.expect_keyword(Keyword::TABLE)?;
                    Statement::ShowCreateTable(self.name()?)
                }
            };
            self.expect_end()?;
            return Ok(stmt);
        }
        if p.parse_keyword(Keyword::DESCRIBE) || p.parse_keyword(Keyword::DESC) {
            let stmt = if self.eat_word("connection") {
                self.expect_word("profile")?;
                Statement::DescribeProfile(self.name()?)
            } else if self.eat_word("connector") {
                Statement::DescribeConnector(self.name()?)
            } else {
                let _ = self.p.parse_keyword(Keyword::TABLE);
                Statement::DescribeTable(self.name()?)
            };
            self.expect_end()?;
            return Ok(stmt);
        }
        self.expect_word("test")?;
        let stmt = if self.eat_word("connection") {
            self.expect_word("profile")?;
            let name = self.name()?;
            let timeout = self.test_timeout()?;
            Statement::TestProfile { name, timeout }
        } else {
            self.p.expect_keyword(Keyword::TABLE)?;
            let name = self.name()?;
            let limit = if self.p.parse_keyword(Keyword::LIMIT) {
                Some(self.p.parse_literal_uint()?)
            } else {
                None
            };
            let timeout = self.test_timeout()?;
            Statement::TestTable {
                name,
                limit,
                timeout,
            }
        };
        self.expect_end()?;
        Ok(stmt)
    }

    /// `TIMEOUT INTERVAL '5' SECOND` or `TIMEOUT '500 ms'`, if given: the interval's text
    /// and where it is.
    fn test_timeout(&mut self) -> PResult<Option<(String, Span)>> {
        if !self.eat_word("timeout") {
            return Ok(None);
        }
        let start = span(self.p.peek_token_ref().span);
        let expr = self.p.parse_expr()?;
        let end = span(self.p.get_current_token().span);
        let text = match &expr {
            datafusion::sql::sqlparser::ast::Expr::Value(v) => match &v.value {
                datafusion::sql::sqlparser::ast::Value::SingleQuotedString(s) => s.clone(),
                other => other.to_string(),
            },
            other => other.to_string(),
        };
        Ok(Some((text, start.union(&end))))
    }

    fn drop_behavior(&mut self) -> DropBehavior {
        if self.p.parse_keyword(Keyword::CASCADE) {
            DropBehavior::Cascade
        } else {
            let _ = self.p.parse_keyword(Keyword::RESTRICT);
            DropBehavior::Restrict
        }
    }
}

/// DataFusion's identifier rule: unquoted names are lowercased, quoted names kept.
pub fn normalize_ident(ident: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if ident.quote_style.is_some() {
        ident.value.clone()
    } else {
        ident.value.to_lowercase()
    }
}

#[cfg(test)]
mod tests;
