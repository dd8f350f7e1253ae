//! `CREATE [TEMPORARY] TABLE name (columns, WATERMARK FOR .., PRIMARY KEY (..)) WITH (..)
//! [PARTITIONED BY (..)]`.

use super::ast::{ColumnDef, CreateTable, Generated, Name, Statement, WatermarkDef};
use super::spans::span;
use super::{PResult, StmtError, StmtParser, normalize_ident};
use datafusion::sql::sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Value,
};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::tokenizer::Token;
use tributary_types::{Diagnostic, Span};

impl StmtParser {
    /// After `CREATE [TEMPORARY] TABLE`: a connection table (or memory table), or
    /// `CREATE TABLE name AS query`.
    pub(crate) fn create_table(&mut self, temporary: bool) -> PResult<Statement> {
        let if_not_exists = self
            .p
            .parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
        let name = self.name()?;
        if self.p.peek_keyword(Keyword::AS) && !temporary && !if_not_exists {
            return self.create_table_as(name);
        }
        self.table_definition(name, temporary, if_not_exists)
            .map(|t| Statement::CreateTable(Box::new(t)))
    }

    fn table_definition(
        &mut self,
        name: Name,
        temporary: bool,
        if_not_exists: bool,
    ) -> PResult<CreateTable> {
        let mut table = CreateTable {
            name,
            temporary,
            if_not_exists,
            columns: vec![],
            star: None,
            primary_key: vec![],
            watermarks: vec![],
            options: vec![],
            with_span: Span::default(),
            has_with: false,
            partitioned_by: vec![],
            // Measured by `parse_script` on the tokens; unmeasured counts as deep.
            depth: usize::MAX,
        };
        if self.p.consume_token(&Token::LParen) && !self.p.consume_token(&Token::RParen) {
            loop {
                self.table_element(&mut table)?;
                if self.p.consume_token(&Token::Comma) {
                    // Allow a trailing comma before the closing parenthesis.
                    if self.p.consume_token(&Token::RParen) {
                        break;
                    }
                    continue;
                }
                self.p.expect_token(&Token::RParen)?;
                break;
            }
        }
        if self.p.peek_keyword(Keyword::AS) {
            return Err(StmtError::Diagnostic(
                Diagnostic::error(
                    "CREATE TABLE ... AS takes no column list or TEMPORARY or IF NOT EXISTS",
                )
                .with_code(tributary_types::codes::UNSUPPORTED)
                .with_span(span(self.p.peek_token_ref().span))
                .with_help("Write CREATE TABLE name AS SELECT ...: the query gives the columns."),
            ));
        }
        if self.p.peek_keyword(Keyword::WITH) {
            let (options, with_span) = self.with_clause(Keyword::WITH)?;
            table.options = options;
            table.with_span = with_span;
            table.has_with = true;
        }
        if self.p.parse_keywords(&[Keyword::PARTITIONED, Keyword::BY]) {
            self.p.expect_token(&Token::LParen)?;
            loop {
                let start = span(self.p.peek_token_ref().span);
                let expr = self.p.parse_expr()?;
                table
                    .partitioned_by
                    .push((expr, start.union(&span(self.p.get_current_token().span))));
                if !self.p.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.p.expect_token(&Token::RParen)?;
        }
        self.expect_end()?;
        Ok(table)
    }

    fn table_element(&mut self, table: &mut CreateTable) -> PResult<()> {
        let start = span(self.p.peek_token_ref().span);
        // `*`: the schema's columns, here (as in RisingWave).
        if self.p.consume_token(&Token::Mul) {
            if table.star.is_some() {
                return Err(StmtError::Diagnostic(
                    Diagnostic::error("'*' appears twice in the column list")
                        .with_span(start)
                        .with_help("Write '*' once: it stands for every column of the schema."),
                ));
            }
            table.star = Some((table.columns.len(), start));
            return Ok(());
        }
        if self.eat_word("watermark") {
            self.p.expect_keyword(Keyword::FOR)?;
            let ident = self.p.parse_identifier()?;
            let column = Name {
                value: normalize_ident(&ident),
                span: span(ident.span),
            };
            let expr = if self.p.parse_keyword(Keyword::AS) {
                let at = span(self.p.peek_token_ref().span);
                let e = self.p.parse_expr()?;
                Some((e, at.union(&span(self.p.get_current_token().span))))
            } else {
                None
            };
            let whole = start.union(&span(self.p.get_current_token().span));
            table.watermarks.push(WatermarkDef {
                column,
                expr,
                span: whole,
            });
            return Ok(());
        }
        if self.p.parse_keywords(&[Keyword::PRIMARY, Keyword::KEY]) {
            self.p.expect_token(&Token::LParen)?;
            loop {
                let ident = self.p.parse_identifier()?;
                table.primary_key.push(Name {
                    value: normalize_ident(&ident),
                    span: span(ident.span),
                });
                if !self.p.consume_token(&Token::Comma) {
                    break;
                }
            }
            self.p.expect_token(&Token::RParen)?;
            return Ok(());
        }
        // Other constraints; a column may still be called `unique` or `check`, so those
        // count only when a parenthesis or KEY follows.
        let [first, second] = self.p.peek_tokens::<2>();
        let constraint = match &first {
            Token::Word(w) if matches!(w.keyword, Keyword::CONSTRAINT | Keyword::FOREIGN) => {
                Some(w.value.clone())
            }
            Token::Word(w) if matches!(w.keyword, Keyword::UNIQUE | Keyword::CHECK) => {
                matches!(&second, Token::LParen | Token::Word(_))
                    .then(|| w.value.clone())
                    .filter(|_| {
                        matches!(&second, Token::LParen)
                            || matches!(&second, Token::Word(n) if n.keyword == Keyword::KEY)
                    })
            }
            _ => None,
        };
        if let Some(kw) = constraint {
            return Err(StmtError::Diagnostic(
                Diagnostic::error(format!("table constraint {} is not supported in connection tables", kw.to_uppercase()))
                    .with_code(tributary_types::codes::UNSUPPORTED)
                    .with_span(start)
                    .with_help("Connection tables take PRIMARY KEY (...) and WATERMARK FOR ...; remove the constraint."),
            ));
        }
        let column = self.column_def()?;
        table.columns.push(column);
        Ok(())
    }

    fn column_def(&mut self) -> PResult<ColumnDef> {
        let start = span(self.p.peek_token_ref().span);
        let ident = self.p.parse_identifier()?;
        let name = Name {
            value: normalize_ident(&ident),
            span: span(ident.span),
        };
        if matches!(self.p.peek_token_ref().token, Token::Comma | Token::RParen) {
            return Err(StmtError::Diagnostic(
                Diagnostic::error(format!("column '{}' has no type", name.value))
                    .with_span(name.span)
                    .with_help(format!("Give it a type, for example: {} TEXT.", name.value)),
            ));
        }
        let type_start = span(self.p.peek_token_ref().span);
        let data_type = self.p.parse_data_type()?;
        let type_span = type_start.union(&span(self.p.get_current_token().span));
        let mut col = ColumnDef {
            name,
            data_type,
            type_span,
            not_null: false,
            primary_key: false,
            metadata_key: None,
            generated: None,
            span: start,
        };
        loop {
            if matches!(
                self.p.peek_token_ref().token,
                Token::Comma | Token::RParen | Token::EOF
            ) {
                break;
            }
            if self.p.parse_keywords(&[Keyword::NOT, Keyword::NULL]) {
                col.not_null = true;
            } else if self.p.parse_keyword(Keyword::NULL) {
            } else if self.p.parse_keywords(&[Keyword::PRIMARY, Keyword::KEY]) {
                col.primary_key = true;
            } else if self.eat_word("metadata") {
                self.p.expect_keyword(Keyword::FROM)?;
                let at = span(self.p.peek_token_ref().span);
                let key = self.p.parse_literal_string()?;
                col.metadata_key = Some((key, at));
            } else if self
                .p
                .parse_keywords(&[Keyword::GENERATED, Keyword::ALWAYS, Keyword::AS])
            {
                self.p.expect_token(&Token::LParen)?;
                let at = span(self.p.peek_token_ref().span);
                let expr = self.p.parse_expr()?;
                let expr_span = at.union(&span(self.p.get_current_token().span));
                self.p.expect_token(&Token::RParen)?;
                let stored = self.p.parse_keyword(Keyword::STORED);
                if !stored {
                    let _ = self.p.parse_keyword(Keyword::VIRTUAL);
                }
                match metadata_call(&expr, expr_span)? {
                    Some(key) => col.metadata_key = Some((key, expr_span)),
                    None => {
                        col.generated = Some(Generated {
                            expr,
                            span: expr_span,
                            stored,
                        })
                    }
                }
            } else {
                let t = self.p.peek_token();
                return Err(StmtError::Diagnostic(
                    Diagnostic::error(format!("syntax error: unexpected '{}' in the definition of column '{}'", t.token, col.name.value))
                        .with_span(span(t.span))
                        .with_help("Column options are NOT NULL, PRIMARY KEY, METADATA FROM 'key' and GENERATED ALWAYS AS (expr)."),
                ));
            }
        }
        col.span = start.union(&span(self.p.get_current_token().span));
        Ok(col)
    }
}

/// Arroyo's older metadata form, `GENERATED ALWAYS AS (metadata('key')) STORED`: the key, or
/// `None` when the expression is not a `metadata` call at all.
fn metadata_call(expr: &Expr, at: Span) -> PResult<Option<String>> {
    let Expr::Function(f) = expr else {
        if contains_metadata_call(expr) {
            return Err(StmtError::Diagnostic(
                Diagnostic::error("a metadata column must be a single call to 'metadata'")
                    .with_span(at)
                    .with_help("Write the column as name TYPE METADATA FROM 'key'."),
            ));
        }
        return Ok(None);
    };
    if !f.name.to_string().eq_ignore_ascii_case("metadata") {
        return Ok(None);
    }
    let args: Vec<&FunctionArg> = match &f.args {
        FunctionArguments::List(l) => l.args.iter().collect(),
        _ => vec![],
    };
    match args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => match &v.value {
            Value::SingleQuotedString(s) => Ok(Some(s.clone())),
            _ => Err(metadata_error("must have a literal string argument", at)),
        },
        [_] => Err(metadata_error("must have a literal string argument", at)),
        _ => Err(metadata_error("must have a single argument", at)),
    }
}

fn contains_metadata_call(expr: &Expr) -> bool {
    expr.to_string().to_lowercase().contains("metadata(")
}

fn metadata_error(what: &str, at: Span) -> StmtError {
    StmtError::Diagnostic(
        Diagnostic::error(format!("the 'metadata' call of a metadata column {what}"))
            .with_span(at)
            .with_help("Write the column as name TYPE METADATA FROM 'key'."),
    )
}
