//! A script's tokens, a piece at a time. Tokenizing a whole script at once holds every
//! token of every statement (about 20 KB for a `CREATE TABLE` of a few columns, so 200 MB
//! for 10,000 of them) before the first statement runs. Instead the script is cut into
//! pieces of about [`PIECE_BYTES`], each ending at a statement's `;`, and each piece is
//! tokenized when its statements are needed. A cut is accepted only where the tokenizer
//! itself ends the piece with a `;` token, so a `;` inside a string, a quoted name or a
//! comment never cuts a statement; a piece that does not end so is grown to the next `;`, and,
//! after a few, to twice its length (so a script is tokenized a bounded number of times
//! over).

use super::DIALECT;
use datafusion::sql::sqlparser::tokenizer::{
    Location as TokenLocation, Token, TokenWithSpan, Tokenizer, TokenizerError,
};
use std::ops::Range;

/// How much text is tokenized at a time, before it is cut at the next statement's end.
pub(super) const PIECE_BYTES: usize = 64 * 1024;

/// How many next `;`s are tried before a piece's length doubles.
const NEXT_CUTS: usize = 8;

/// One piece of a script: its byte range and where it begins (1-based line and column).
#[derive(Debug, Clone)]
pub(super) struct Piece {
    range: Range<usize>,
    line: u64,
    column: u64,
}

/// Cut `sql` into pieces that each end where a statement ends (the last at the end of
/// the script). The whole script is tokenized once here, a piece at a time, so a
/// tokenizer error anywhere is found before any statement runs, as when the script was
/// tokenized whole; its location is in the whole script.
pub(super) fn pieces(sql: &str) -> Result<Vec<Piece>, TokenizerError> {
    let mut out = Vec::new();
    each_piece(sql, |piece, _| out.push(piece))?;
    Ok(out)
}

/// Cut `sql` as [`pieces`] does, handing each piece to `each` with its tokens (for a
/// caller that reads the script once, in order, and so need not tokenize it twice).
pub(super) fn each_piece(
    sql: &str,
    mut each: impl FnMut(Piece, Vec<TokenWithSpan>),
) -> Result<(), TokenizerError> {
    let (mut start, mut line, mut column) = (0usize, 1u64, 1u64);
    while start < sql.len() {
        let mut want = PIECE_BYTES;
        let mut end = cut_after(sql, start + want);
        let mut tries = 0;
        loop {
            let piece = Piece {
                range: start..end,
                line,
                column,
            };
            match tokens(sql, &piece) {
                Ok(t) if end == sql.len() || ends_with_semicolon(&t) => {
                    (line, column) = advance(&sql[start..end], line, column);
                    each(piece, t);
                    start = end;
                    break;
                }
                Err(e) if end == sql.len() => return Err(e),
                // The cut fell inside a string or a comment: the next `;`, and after a
                // few of those (a long string full of them) twice the length.
                _ => {
                    tries += 1;
                    if tries < NEXT_CUTS {
                        end = cut_after(sql, end);
                    } else {
                        want = want.saturating_mul(2);
                        end = cut_after(sql, start + want);
                        tries = 0;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The tokens of `piece`, located in the whole script.
pub(super) fn tokens(sql: &str, piece: &Piece) -> Result<Vec<TokenWithSpan>, TokenizerError> {
    let text = &sql[piece.range.clone()];
    let shift = |l: &mut TokenLocation| {
        if l.line == 0 {
            return; // "no location"
        }
        if l.line == 1 {
            l.column += piece.column - 1;
        }
        l.line += piece.line - 1;
    };
    match Tokenizer::new(&DIALECT, text).tokenize_with_location() {
        Ok(mut tokens) => {
            for t in &mut tokens {
                shift(&mut t.span.start);
                shift(&mut t.span.end);
            }
            Ok(tokens)
        }
        Err(mut e) => {
            shift(&mut e.location);
            Err(e)
        }
    }
}

/// The end of the piece that holds at least `at` bytes: just after the first `;` at or
/// after `at`, or the end of the script.
fn cut_after(sql: &str, at: usize) -> usize {
    if at >= sql.len() {
        return sql.len();
    }
    // `;` is ASCII, so the byte after it is a character boundary.
    sql.as_bytes()[at..]
        .iter()
        .position(|b| *b == b';')
        .map_or(sql.len(), |i| at + i + 1)
}

/// Whether the piece's last token (before the end marker) is the `;` it was cut after.
fn ends_with_semicolon(tokens: &[TokenWithSpan]) -> bool {
    tokens
        .iter()
        .rev()
        .find(|t| t.token != Token::EOF)
        .is_some_and(|t| t.token == Token::SemiColon)
}

/// The line and column just after `text`, which begins at `line`, `column` (columns
/// counted in characters, as the tokenizer counts them).
fn advance(text: &str, line: u64, column: u64) -> (u64, u64) {
    match text.rfind('\n') {
        None => (line, column + text.chars().count() as u64),
        Some(i) => (
            line + text.matches('\n').count() as u64,
            1 + text[i + 1..].chars().count() as u64,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Every token of `sql`, as one tokenization of the whole script gives them.
    fn whole(sql: &str) -> Vec<(Token, u64, u64)> {
        Tokenizer::new(&DIALECT, sql)
            .tokenize_with_location()
            .unwrap()
            .into_iter()
            .filter(|t| t.token != Token::EOF)
            .map(|t| (t.token, t.span.start.line, t.span.start.column))
            .collect()
    }

    fn pieced(sql: &str) -> (usize, Vec<(Token, u64, u64)>) {
        let pieces = pieces(sql).unwrap();
        let tokens = pieces
            .iter()
            .flat_map(|p| tokens(sql, p).unwrap())
            .filter(|t| t.token != Token::EOF)
            .map(|t| (t.token, t.span.start.line, t.span.start.column))
            .collect();
        (pieces.len(), tokens)
    }

    #[test]
    fn pieces_give_the_tokens_and_locations_of_the_whole_script() {
        // Long enough for several pieces, with `;` in strings, quoted names and both
        // kinds of comment near every cut, and characters of several bytes.
        let mut sql = String::new();
        let mut i = 0;
        while sql.len() < 5 * PIECE_BYTES {
            sql.push_str(&format!(
                "CREATE TABLE \"t;{i}\" WITH (connector = 'impulse', note = 'a;b é ;', event_rate = '1'); -- c;d\n/* e;\nf; */ SELECT 'ü;'  ;"
            ));
            i += 1;
        }
        let (count, tokens) = pieced(&sql);
        assert!(count >= 5, "{count} pieces");
        assert_eq!(tokens, whole(&sql));
    }

    #[test]
    fn a_string_longer_than_a_piece_full_of_semicolons_is_one_token() {
        let body = ";".repeat(3 * PIECE_BYTES);
        let sql = format!("SELECT 1; SELECT '{body}'; SELECT 2;");
        let (_, tokens) = pieced(&sql);
        assert_eq!(tokens, whole(&sql));
    }

    #[test]
    fn an_unterminated_string_is_an_error_located_in_the_whole_script() {
        let mut sql = "SELECT 1;\n".repeat(PIECE_BYTES / 5);
        sql.push_str("SELECT 'never closed; ;");
        let e = pieces(&sql).unwrap_err();
        let lines = sql.lines().count() as u64;
        assert_eq!(e.location.line, lines, "{e}");
    }
}
