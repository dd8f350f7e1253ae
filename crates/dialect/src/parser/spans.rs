//! Conversions between sqlparser's positions and errors and Tributary's spans and
//! diagnostics.

use datafusion::sql::sqlparser::parser::ParserError;
use datafusion::sql::sqlparser::tokenizer::{Location as SqlLocation, Span as SqlSpan};
use tributary_types::{Diagnostic, Location, Span};

/// A sqlparser span as ours.
pub fn span(s: SqlSpan) -> Span {
    Span::new(location(s.start), location(s.end))
}

fn location(l: SqlLocation) -> Location {
    Location::new(l.line, l.column)
}

/// A parser error as a diagnostic at `at` (the token the parser stopped on).
pub fn parser_error(e: ParserError, at: Span) -> Diagnostic {
    let text = match e {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => s,
        ParserError::RecursionLimitExceeded => "the statement is nested too deeply".into(),
    };
    // sqlparser appends " at Line: x, Column: y"; the span carries the position instead,
    // and that position (the offending token) beats the parser's look-ahead.
    let (text, at) = match text.find(" at Line: ") {
        Some(i) => (
            text[..i].to_string(),
            reported_location(&text[i..])
                .map(|l| Span::new(l, l))
                .unwrap_or(at),
        ),
        None => (text, at),
    };
    let message = match text.strip_prefix("Expected: ") {
        Some(rest) => match rest.split_once(", found: ") {
            Some((want, "EOF")) => {
                format!("syntax error: expected {want}, found the end of the statement")
            }
            Some((want, found)) => format!("syntax error: expected {want}, found {found}"),
            None => format!("syntax error: expected {rest}"),
        },
        None => format!("syntax error: {}", lowercase_first(&text)),
    };
    Diagnostic::error(message)
        .with_span(at)
        .with_code(tributary_types::codes::SYNTAX_ERROR)
}

fn reported_location(tail: &str) -> Option<Location> {
    let rest = tail.strip_prefix(" at Line: ")?;
    let (line, col) = rest.split_once(", Column: ")?;
    let col: String = col.chars().take_while(char::is_ascii_digit).collect();
    Some(Location::new(line.trim().parse().ok()?, col.parse().ok()?))
}

fn lowercase_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Byte offsets of each line start in `text`, to slice statements out of a script.
/// Locations count characters; on a line of ASCII a column is a byte offset, and other
/// lines keep a table of their characters' offsets, so every lookup is O(1) and indexing
/// is linear in the text.
#[derive(Debug)]
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// For each line that is not all ASCII, the byte offset of each character (relative
    /// to the line's start) and the line's length.
    wide: std::collections::HashMap<usize, Vec<u32>>,
}

impl<'a> LineIndex<'a> {
    /// Index `text`.
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let mut wide = std::collections::HashMap::new();
        for (line, &start) in starts.iter().enumerate() {
            let end = starts.get(line + 1).copied().unwrap_or(text.len());
            let content = &text[start..end];
            if !content.is_ascii() {
                // Scripts are capped well below 4 GiB, so offsets fit in u32.
                let mut offsets: Vec<u32> = content.char_indices().map(|(i, _)| i as u32).collect();
                offsets.push(content.len() as u32);
                wide.insert(line, offsets);
            }
        }
        Self { text, starts, wide }
    }

    /// The text indexed.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The byte offset of a 1-based line/column location (columns count characters).
    pub fn offset(&self, loc: Location) -> usize {
        let line = loc.line.saturating_sub(1) as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let col = loc.column.saturating_sub(1) as usize;
        let within = match self.wide.get(&line) {
            Some(offsets) => offsets
                .get(col)
                .or(offsets.last())
                .map_or(0, |o| *o as usize),
            None => col,
        };
        (start + within).min(end)
    }

    /// The text between two locations.
    pub fn slice(&self, span: Span) -> &'a str {
        let (a, b) = (self.offset(span.start), self.offset(span.end));
        &self.text[a.min(b)..b.max(a)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_errors_read_well() {
        let d = parser_error(
            ParserError::ParserError("Expected: ), found: foo at Line: 1, Column: 9".into()),
            Span::default(),
        );
        assert_eq!(d.message, "syntax error: expected ), found foo");
    }

    #[test]
    fn columns_past_the_end_of_a_line_stop_at_it() {
        let idx = LineIndex::new("ab\ncd");
        assert_eq!(idx.offset(Location::new(1, 10)), 3);
        assert_eq!(idx.offset(Location::new(9, 1)), 5);
        let idx = LineIndex::new("é\nx");
        assert_eq!(idx.offset(Location::new(1, 2)), 2);
        assert_eq!(idx.offset(Location::new(1, 9)), 3);
    }

    #[test]
    fn slices_by_location() {
        let idx = LineIndex::new("select 1;\nselect 'é', 2;");
        let s = Span::new(Location::new(2, 1), Location::new(2, 15));
        assert_eq!(idx.slice(s), "select 'é', 2;");
    }
}
