//! What fits at the cursor: the statement around it is lexed (forgivingly, since it is
//! still being typed) and read backwards from the cursor to the keyword, parenthesis or
//! option that decides which kind of word comes next.

use tributary_dialect::partial_lexer::{Kind, Token, tokens};

/// The kind of word that fits at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Context {
    /// These keywords (a statement's start, or what follows a keyword).
    Keywords(&'static [&'static str]),
    /// Table names, and these keywords.
    Tables(&'static [&'static str]),
    /// Connection profile names.
    Profiles,
    /// Connector ids.
    Connectors,
    /// An option key inside `WITH (...)` or `SET (...)`; `key_start` is where a dotted
    /// key being typed starts, before the word at the cursor.
    OptionKey {
        options: Options,
        key_start: Option<usize>,
    },
    /// The value of option `key`.
    OptionValue { options: Options, key: String },
    /// Columns of these tables (by name as written), and plain columns of any of them;
    /// `qualifier` when the word follows `name.`.
    Columns {
        tables: Vec<TableRef>,
        qualifier: Option<String>,
    },
    /// The columns declared so far in a `CREATE TABLE` column list.
    DeclaredColumns(Vec<String>),
    /// A column type in a `CREATE TABLE` column list.
    ColumnTypes,
    /// The metadata keys of the connector the statement names.
    MetadataKeys { connector: Option<String> },
    /// Nothing to offer (a new name, a number, a literal).
    Nothing,
}

/// A table a query reads, and the alias it is read under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableRef {
    pub name: String,
    pub alias: Option<String>,
}

/// An option list being written, and what it is for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Options {
    /// A profile's options (`CREATE`/`ALTER CONNECTION PROFILE`), else a table's.
    pub profile: bool,
    /// The profile being altered (`ALTER CONNECTION PROFILE name SET (...)`).
    pub altered: Option<String>,
    /// The options given anywhere in the list (before or after the cursor), key → value.
    pub given: Vec<(String, String)>,
}

impl Options {
    /// The value given for `key`, if any.
    pub(crate) fn value(&self, key: &str) -> Option<&str> {
        self.given
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }
}

/// The context at `cursor` in `text`, and where the word being typed starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct At {
    pub context: Context,
    /// Where the word being completed starts (the cursor when none is started).
    pub start: usize,
    /// What of it is typed.
    pub prefix: String,
}

/// Statement starts.
pub(crate) const STATEMENTS: &[&str] = &[
    "ALTER", "CREATE", "DESCRIBE", "DROP", "EXPLAIN", "INSERT", "SELECT", "SET", "SHOW", "TEST",
    "WITH",
];

const TYPES: &[&str] = &[
    "BIGINT",
    "BOOLEAN",
    "BYTEA",
    "DATE",
    "DECIMAL",
    "DOUBLE",
    "FLOAT",
    "INT",
    "INTERVAL",
    "JSON",
    "REAL",
    "SMALLINT",
    "TEXT",
    "TIME",
    "TIMESTAMP",
    "VARCHAR",
];

/// Read the context at `cursor` (a byte offset; clamped to the text and to a character
/// boundary).
pub(crate) fn at(text: &str, cursor: usize) -> At {
    let mut cursor = cursor.min(text.len());
    while !text.is_char_boundary(cursor) {
        cursor -= 1;
    }
    let all = tokens(text);
    // The statement around the cursor: from the `;` before it to the `;` after it.
    let begin = all
        .iter()
        .rposition(|t| t.is_punct(';') && t.end <= cursor)
        .map_or(0, |i| i + 1);
    let end = all[begin..]
        .iter()
        .position(|t| t.is_punct(';') && t.start >= cursor)
        .map_or(all.len(), |i| begin + i);
    let stmt = &all[begin..end];
    // The word being typed: a word or string the cursor is inside or just after.
    let partial = stmt.iter().position(|t| {
        t.start < cursor
            && cursor <= t.end
            && matches!(t.kind, Kind::Word | Kind::Str { .. } | Kind::Quoted { .. })
            && !(matches!(t.kind, Kind::Str { closed: true }) && cursor == t.end)
    });
    let (before, start) = match partial {
        Some(i) => (&stmt[..i], stmt[i].start),
        None => {
            let n = stmt.iter().take_while(|t| t.end <= cursor).count();
            (&stmt[..n], cursor)
        }
    };
    let reader = Reader { text, stmt, before };
    let context = reader.context();
    let start = match &context {
        Context::OptionKey {
            key_start: Some(s), ..
        } => *s,
        _ => start,
    };
    At {
        context,
        start,
        prefix: text[start..cursor].to_string(),
    }
}

struct Reader<'a> {
    text: &'a str,
    /// The whole statement.
    stmt: &'a [Token],
    /// Its tokens before the word being typed.
    before: &'a [Token],
}

impl Reader<'_> {
    fn word(&self, t: &Token) -> String {
        t.text(self.text).to_ascii_uppercase()
    }

    /// The last `n` tokens before the word, as upper-case text, oldest first.
    fn last(&self, n: usize) -> Vec<String> {
        let from = self.before.len().saturating_sub(n);
        self.before[from..].iter().map(|t| self.word(t)).collect()
    }

    /// Whether the tokens before the word end with `words`.
    fn ends_with(&self, words: &[&str]) -> bool {
        let last = self.last(words.len());
        last.len() == words.len() && last.iter().zip(words).all(|(a, b)| a == b)
    }

    /// Whether the statement starts with `words`.
    fn starts_with(&self, words: &[&str]) -> bool {
        self.stmt.len() >= words.len()
            && self.stmt.iter().zip(words).all(|(t, w)| t.is(self.text, w))
    }

    fn context(&self) -> Context {
        if self.before.is_empty() {
            return Context::Keywords(STATEMENTS);
        }
        if let Some(open) = self.open_paren()
            && let Some(c) = self.in_parens(open)
        {
            return c;
        }
        if let Some(c) = self.after_keyword() {
            return c;
        }
        if let Some(c) = self.in_query() {
            return c;
        }
        Context::Nothing
    }

    /// The innermost parenthesis open before the word, as an index into `before`.
    fn open_paren(&self) -> Option<usize> {
        let mut open = Vec::new();
        for (i, t) in self.before.iter().enumerate() {
            if t.is_punct('(') {
                open.push(i);
            } else if t.is_punct(')') {
                open.pop();
            }
        }
        open.pop()
    }

    /// Inside `WITH (`, `SET (` or a `CREATE TABLE name (` column list.
    fn in_parens(&self, open: usize) -> Option<Context> {
        let opener = open.checked_sub(1).map(|i| self.word(&self.before[i]));
        match opener.as_deref() {
            Some("WITH") | Some("SET") => Some(self.in_options(open)),
            _ if self.column_list(open) => Some(self.in_columns(open)),
            _ => None,
        }
    }

    /// Whether the parenthesis at `open` starts a `CREATE [TEMPORARY] TABLE name (`
    /// column list.
    fn column_list(&self, open: usize) -> bool {
        let head: Vec<String> = self.before[..open].iter().map(|t| self.word(t)).collect();
        let words: Vec<&str> = head.iter().map(String::as_str).collect();
        matches!(
            words.as_slice(),
            ["CREATE", "TABLE", _]
                | ["CREATE", "TEMPORARY", "TABLE", _]
                | ["CREATE", "TABLE", "IF", "NOT", "EXISTS", _]
                | ["CREATE", "TEMPORARY", "TABLE", "IF", "NOT", "EXISTS", _]
        )
    }

    fn in_columns(&self, open: usize) -> Context {
        let inside = &self.before[open + 1..];
        // Only the current entry matters, from the last top-level comma.
        let mut depth = 0usize;
        let mut entry_start = 0;
        for (i, t) in inside.iter().enumerate() {
            if t.is_punct('(') {
                depth += 1;
            } else if t.is_punct(')') {
                depth = depth.saturating_sub(1);
            } else if t.is_punct(',') && depth == 0 {
                entry_start = i + 1;
            }
        }
        let entry: Vec<String> = inside[entry_start..].iter().map(|t| self.word(t)).collect();
        let words: Vec<&str> = entry.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["WATERMARK", "FOR"] => Context::DeclaredColumns(self.declared_columns(open)),
            [.., "METADATA", "FROM"] => Context::MetadataKeys {
                connector: self
                    .with_options()
                    .and_then(|o| o.value("connector").map(str::to_string)),
            },
            [] => Context::Keywords(&["PRIMARY KEY", "WATERMARK FOR"]),
            [_name] => Context::ColumnTypes,
            [.., "WATERMARK", "FOR", _] => Context::Keywords(&["AS"]),
            ["WATERMARK", ..] | ["PRIMARY", ..] => Context::Nothing,
            [_name, _type, ..] if !words.contains(&"AS") => {
                Context::Keywords(&["GENERATED ALWAYS AS", "METADATA FROM", "NOT NULL"])
            }
            _ => Context::Nothing,
        }
    }

    /// The top-level, comma-separated entries of the list opened at `open` (an index
    /// into `stmt`), to its closing parenthesis or the statement's end.
    fn entries(&self, open: usize) -> Vec<&[Token]> {
        let list = self.stmt.get(open + 1..).unwrap_or(&[]);
        let mut out = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        for (i, t) in list.iter().enumerate() {
            if t.is_punct('(') {
                depth += 1;
            } else if t.is_punct(')') {
                if depth == 0 {
                    out.push(&list[start..i]);
                    return out;
                }
                depth -= 1;
            } else if t.is_punct(',') && depth == 0 {
                out.push(&list[start..i]);
                start = i + 1;
            }
        }
        out.push(&list[start..]);
        out
    }

    /// The column names declared in the column list opened at `open`.
    fn declared_columns(&self, open: usize) -> Vec<String> {
        self.entries(open)
            .into_iter()
            .filter_map(|entry| entry.first())
            .filter(|t| matches!(t.kind, Kind::Word | Kind::Quoted { .. }))
            .map(|t| t.value(self.text))
            .filter(|name| {
                let upper = name.to_ascii_uppercase();
                upper != "WATERMARK" && upper != "PRIMARY"
            })
            .collect()
    }

    /// The statement's `WITH (...)` option list, wherever the cursor is.
    fn with_options(&self) -> Option<Options> {
        let at = self.stmt.iter().enumerate().position(|(i, t)| {
            t.is(self.text, "WITH") && self.stmt.get(i + 1).is_some_and(|n| n.is_punct('('))
        })?;
        Some(self.options_from(at + 1))
    }

    /// Inside an option list opened at `open` (an index into `before`, and so into
    /// `stmt`).
    fn in_options(&self, open: usize) -> Context {
        let options = self.options_from(open);
        // From the current entry's start: `key ... =` means a value is being typed.
        let entry_start = self.before[open + 1..]
            .iter()
            .rposition(|t| t.is_punct(','))
            .map_or(open + 1, |i| open + 1 + i + 1);
        let entry = &self.before[entry_start..];
        match entry.iter().position(|t| t.is_punct('=')) {
            // The value is written already (`= 'earliest'|`): a second Tab adds nothing.
            Some(eq) if eq + 1 < entry.len() => Context::Nothing,
            Some(eq) => Context::OptionValue {
                key: self.key_text(&entry[..eq]),
                options,
            },
            // A dotted key being typed (`source.off`) is one word to complete.
            None => Context::OptionKey {
                options,
                key_start: entry.first().map(|t| t.start),
            },
        }
    }

    /// The options of the list opened at `open` (an index into `stmt`), in order.
    fn options_from(&self, open: usize) -> Options {
        let profile = self.starts_with(&["CREATE", "CONNECTION", "PROFILE"])
            || self.starts_with(&["ALTER", "CONNECTION", "PROFILE"]);
        let altered = if self.starts_with(&["ALTER", "CONNECTION", "PROFILE"]) {
            self.stmt.get(3).map(|t| t.value(self.text))
        } else {
            None
        };
        let mut given = Vec::new();
        for entry in self.entries(open) {
            if let Some(eq) = entry.iter().position(|t| t.is_punct('=')) {
                let key = self.key_text(&entry[..eq]);
                let value = entry.get(eq + 1).map(|t| t.value(self.text));
                if !key.is_empty() {
                    given.push((key, value.unwrap_or_default()));
                }
            }
        }
        Options {
            profile,
            altered,
            given,
        }
    }

    /// An option key as written: `source.offset`, `'source.offset'` or `"a"."b"`.
    fn key_text(&self, tokens: &[Token]) -> String {
        tokens
            .iter()
            .map(|t| match t.kind {
                Kind::Punct(c) => c.to_string(),
                _ => t.value(self.text),
            })
            .collect::<String>()
            .to_ascii_lowercase()
    }

    /// After a keyword that decides the next word.
    fn after_keyword(&self) -> Option<Context> {
        let last = self.last(1);
        let last = last.first().map(String::as_str)?;
        let keywords = |k: &'static [&'static str]| Some(Context::Keywords(k));
        if self.before.len() == 1 {
            return match last {
                "CREATE" => keywords(&["CONNECTION PROFILE", "TABLE", "TEMPORARY TABLE"]),
                "ALTER" => keywords(&["CONNECTION PROFILE"]),
                "DROP" => keywords(&["CONNECTION PROFILE", "TABLE"]),
                "SHOW" => keywords(&[
                    "CONNECTION PROFILES",
                    "CONNECTORS",
                    "CREATE CONNECTION PROFILE",
                    "CREATE TABLE",
                    "DIRECTORIES IN",
                    "TABLES",
                    "TOPICS IN PROFILE",
                ]),
                "DESCRIBE" => Some(Context::Tables(&[
                    "CONNECTION PROFILE",
                    "CONNECTOR",
                    "TABLE",
                ])),
                "TEST" => keywords(&["CONNECTION PROFILE", "TABLE"]),
                "EXPLAIN" => keywords(&["ANALYZE", "INSERT INTO", "SELECT", "VERBOSE"]),
                "INSERT" => keywords(&["INTO"]),
                _ => None,
            };
        }
        match last {
            "CONNECTION" => {
                if self.ends_with(&["SHOW", "CONNECTION"]) {
                    keywords(&["PROFILES"])
                } else {
                    keywords(&["PROFILE"])
                }
            }
            "PROFILE" if !self.starts_with(&["CREATE", "CONNECTION"]) => Some(Context::Profiles),
            "CONNECTOR" if self.starts_with(&["DESCRIBE"]) => Some(Context::Connectors),
            "TABLE" if self.starts_with(&["CREATE"]) => Some(Context::Nothing),
            "TABLE" => Some(Context::Tables(&[])),
            "FROM" | "JOIN" | "INTO" => Some(Context::Tables(&[])),
            "IN" if self.ends_with(&["TOPICS", "IN"]) => {
                keywords(&["CONNECTION PROFILE", "PROFILE"])
            }
            _ if self.starts_with(&["DROP", "TABLE"]) && last == "," => Some(Context::Tables(&[])),
            _ if self.starts_with(&["ALTER", "CONNECTION", "PROFILE"])
                && self.before.len() == 4 =>
            {
                keywords(&["SET"])
            }
            _ => None,
        }
    }

    /// In a query: columns after SELECT, WHERE, ON, BY, a comma or an operator; `t.`
    /// qualifies them.
    fn in_query(&self) -> Option<Context> {
        let last = self.before.last()?;
        let qualifier = if last.is_punct('.') {
            self.before
                .len()
                .checked_sub(2)
                .map(|i| self.before[i].value(self.text))
        } else {
            None
        };
        let columns_follow = qualifier.is_some()
            || matches!(
                last.kind,
                Kind::Punct(',' | '=' | '<' | '>' | '(' | '+' | '-' | '*' | '/')
            )
            || [
                "SELECT", "WHERE", "AND", "OR", "ON", "BY", "NOT", "HAVING", "DISTINCT",
            ]
            .iter()
            .any(|k| last.is(self.text, k));
        if !columns_follow || !self.is_query() {
            return None;
        }
        Some(Context::Columns {
            tables: self.tables_read(),
            qualifier,
        })
    }

    fn is_query(&self) -> bool {
        ["SELECT", "INSERT", "EXPLAIN", "WITH"]
            .iter()
            .any(|k| self.starts_with(&[k]))
    }

    /// The tables the statement reads (`FROM a x, b`, `JOIN c AS y`), wherever the
    /// cursor is.
    fn tables_read(&self) -> Vec<TableRef> {
        let mut out = Vec::new();
        let s = self.stmt;
        let mut i = 0;
        while i < s.len() {
            let reads = s[i].is(self.text, "FROM") || s[i].is(self.text, "JOIN");
            let metadata = i > 0 && s[i - 1].is(self.text, "METADATA");
            if !reads || metadata {
                i += 1;
                continue;
            }
            i += 1;
            // A list after FROM: `a x, b AS y`.
            while let Some(name) = s
                .get(i)
                .filter(|t| matches!(t.kind, Kind::Word | Kind::Quoted { .. }))
            {
                let mut table = TableRef {
                    name: name.value(self.text),
                    alias: None,
                };
                i += 1;
                if s.get(i).is_some_and(|t| t.is(self.text, "AS")) {
                    i += 1;
                }
                if let Some(alias) = s.get(i).filter(|t| {
                    matches!(t.kind, Kind::Word | Kind::Quoted { .. })
                        && !is_clause_word(t.text(self.text))
                }) {
                    table.alias = Some(alias.value(self.text));
                    i += 1;
                }
                out.push(table);
                if s.get(i).is_some_and(|t| t.is_punct(',')) {
                    i += 1;
                    continue;
                }
                break;
            }
        }
        out
    }
}

/// Words that end a table reference rather than alias it.
fn is_clause_word(word: &str) -> bool {
    [
        "WHERE", "JOIN", "LEFT", "RIGHT", "INNER", "FULL", "CROSS", "ON", "GROUP", "ORDER",
        "LIMIT", "HAVING", "UNION", "OFFSET", "WINDOW",
    ]
    .iter()
    .any(|k| word.eq_ignore_ascii_case(k))
}

/// Column types, for `Context::ColumnTypes`.
pub(crate) fn column_types() -> &'static [&'static str] {
    TYPES
}
