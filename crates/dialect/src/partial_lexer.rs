//! A forgiving lexer for text still being typed: words, strings and punctuation with
//! their byte spans, where an unterminated string or comment is a token, not an error
//! (the SQL parser refuses both, and a half-typed statement is all completion ever sees).

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An identifier, keyword or number.
    Word,
    /// A `'...'` string, possibly not closed yet.
    Str { closed: bool },
    /// A `"..."` identifier, possibly not closed yet.
    Quoted { closed: bool },
    /// One punctuation character: `( ) , = ; .` and the rest.
    Punct(char),
}

/// One token and where it is in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

impl Token {
    /// The token's text in `source`.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.start..self.end).unwrap_or("")
    }

    /// The word's text or the string's content (quotes removed, `''` unescaped), for
    /// names and values.
    pub fn value(&self, source: &str) -> String {
        let text = self.text(source);
        match self.kind {
            Kind::Str { closed } | Kind::Quoted { closed } => {
                let quote = if matches!(self.kind, Kind::Str { .. }) {
                    '\''
                } else {
                    '"'
                };
                let inner = text.get(1..).unwrap_or("");
                let inner = if closed {
                    inner.get(..inner.len().saturating_sub(1)).unwrap_or("")
                } else {
                    inner
                };
                inner.replace(&format!("{quote}{quote}"), &quote.to_string())
            }
            _ => text.to_string(),
        }
    }

    /// Whether this is the keyword `kw` (any case).
    pub fn is(&self, source: &str, kw: &str) -> bool {
        self.kind == Kind::Word && self.text(source).eq_ignore_ascii_case(kw)
    }

    /// Whether this is the punctuation `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }
}

/// The tokens of `text`, skipping whitespace and comments; linear in its length.
pub fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b == b'-' && bytes.get(i + 1) == Some(&b'-') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(bytes.len());
        } else if b == b'\'' || b == b'"' {
            let (end, closed) = quoted(bytes, i, b);
            i = end;
            let kind = if b == b'\'' {
                Kind::Str { closed }
            } else {
                Kind::Quoted { closed }
            };
            out.push(Token {
                kind,
                start,
                end: i,
            });
        } else if is_word_byte(b) {
            while i < bytes.len() && is_word_byte(bytes[i]) {
                i += 1;
            }
            out.push(Token {
                kind: Kind::Word,
                start,
                end: i,
            });
        } else {
            // One character, whole (never half of a multi-byte one).
            let c = text[i..].chars().next().unwrap_or(' ');
            i += c.len_utf8();
            out.push(Token {
                kind: Kind::Punct(c),
                start,
                end: i,
            });
        }
    }
    out
}

/// Where a string starting at `start` ends, and whether its closing quote was found.
fn quoted(bytes: &[u8], start: usize, quote: u8) -> (usize, bool) {
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return (i + 1, true);
        }
        i += 1;
    }
    (i, false)
}

/// Letters, digits, `_`, `$` and every non-ASCII byte (identifiers may be Unicode).
pub fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, &str)> {
        tokens(text)
            .into_iter()
            .map(|t| (t.kind, t.text(text)))
            .collect()
    }

    #[test]
    fn words_strings_and_punctuation_with_comments_skipped() {
        assert_eq!(
            kinds("CREATE t (a INT) -- note\n WITH (x = 'it''s', \"Q\"/* c */.y"),
            vec![
                (Kind::Word, "CREATE"),
                (Kind::Word, "t"),
                (Kind::Punct('('), "("),
                (Kind::Word, "a"),
                (Kind::Word, "INT"),
                (Kind::Punct(')'), ")"),
                (Kind::Word, "WITH"),
                (Kind::Punct('('), "("),
                (Kind::Word, "x"),
                (Kind::Punct('='), "="),
                (Kind::Str { closed: true }, "'it''s'"),
                (Kind::Punct(','), ","),
                (Kind::Quoted { closed: true }, "\"Q\""),
                (Kind::Punct('.'), "."),
                (Kind::Word, "y"),
            ]
        );
    }

    #[test]
    fn unterminated_strings_and_comments_are_tokens_not_errors() {
        let text = "topic = 'ord";
        let t = tokens(text);
        assert_eq!(t[2].kind, Kind::Str { closed: false });
        assert_eq!(t[2].value(text), "ord");
        assert_eq!(tokens("a /* never closed").len(), 1);
        assert_eq!(tokens("'it''s'")[0].value("'it''s'"), "it's");
        assert_eq!(
            kinds("naïve+1"),
            vec![
                (Kind::Word, "naïve"),
                (Kind::Punct('+'), "+"),
                (Kind::Word, "1")
            ]
        );
    }
}
