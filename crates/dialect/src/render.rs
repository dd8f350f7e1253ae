//! Diagnostics as text, the way a terminal shows them: the message, `--> file:line:col`,
//! the source line with a caret under the span, then notes and help. The line quoted is
//! a window of at most [`SNIPPET_CHARS`] characters around the span, and the values of
//! secrets in it show as `********`. The CLI prints this; the REST API returns it.

use crate::parser::spans::LineIndex;
use crate::secret_spans::secret_spans;
use tributary_types::{Diagnostic, Location, REDACTED, Severity};

/// The most characters of a source line a snippet shows.
pub const SNIPPET_CHARS: usize = 120;

/// Characters shown before the span when a long line is cut.
const LEAD: usize = 40;

/// A script, ready to quote in diagnostics: its name, its text, and where its secrets are.
#[derive(Debug)]
pub struct SourceText<'a> {
    name: &'a str,
    text: &'a str,
    index: LineIndex<'a>,
    /// Found when a snippet is first quoted: finding them reads the whole script, which
    /// a diagnostic without a snippet (or none at all) does not need.
    masks: std::sync::OnceLock<Vec<(usize, usize)>>,
}

impl<'a> SourceText<'a> {
    /// `text`, called `name` (a file name or `<stdin>`) in diagnostics.
    pub fn new(name: &'a str, text: &'a str) -> Self {
        Self {
            name,
            text,
            index: LineIndex::new(text),
            masks: std::sync::OnceLock::new(),
        }
    }

    /// A diagnostic as rustc-style text.
    pub fn render(&self, d: &Diagnostic) -> String {
        let label = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        let mut out = format!("{label}: {}", d.message);
        // rustc's layout: the gutter is as wide as the line number.
        let gutter = d.span.map(|s| s.start.line.to_string().len()).unwrap_or(1);
        if let Some(span) = d.span.filter(|s| s.is_known()) {
            out.push_str(&format!(
                "\n{:gutter$}--> {}:{}:{}",
                "", self.name, span.start.line, span.start.column
            ));
            if let Some((line, caret_start, caret_width)) = self.snippet(span.start, span.end) {
                out.push_str(&format!("\n{:gutter$} |", ""));
                out.push_str(&format!("\n{:>gutter$} | {line}", span.start.line));
                out.push_str(&format!(
                    "\n{:gutter$} | {}{}",
                    "",
                    " ".repeat(caret_start),
                    "^".repeat(caret_width)
                ));
            }
        }
        for n in &d.notes {
            out.push_str(&format!("\n{:gutter$} = note: {n}", ""));
        }
        if let Some(h) = &d.help {
            out.push_str(&format!("\n{:gutter$} = help: {h}", ""));
        }
        out
    }

    /// The line of `start` as shown (secrets masked, cut to a window), and where the caret
    /// goes in it: its offset and width in characters.
    fn snippet(&self, start: Location, end: Location) -> Option<(String, usize, usize)> {
        let line_start = self.index.offset(Location::new(start.line, 1));
        let next = self.index.offset(Location::new(start.line + 1, 1));
        if start.line == 0 || line_start >= self.text.len() && start.line > 1 {
            return None;
        }
        let line_end = self.text[line_start..next]
            .find(['\n', '\r'])
            .map_or(next, |i| line_start + i);
        let from = self.index.offset(start).clamp(line_start, line_end);
        let to = if end.line > start.line {
            // A span over several lines is underlined to the end of its first.
            line_end
        } else if end.column > start.column {
            self.index.offset(end).clamp(from, line_end)
        } else {
            // A point: the word there, or one character.
            let rest = &self.text[from..line_end];
            let word: usize = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .map(char::len_utf8)
                .sum();
            let one = rest.chars().next().map_or(0, char::len_utf8);
            from + word.max(one)
        };
        // The line with each masked range replaced, and the caret's ends mapped onto it.
        let mut shown: Vec<char> = Vec::new();
        let (mut caret_from, mut caret_to) = (None, None);
        let mut at = line_start;
        let masks = self
            .masks
            .get_or_init(|| secret_spans(self.text))
            .iter()
            .filter(|(s, e)| *e > line_start && *s < line_end)
            .map(|&(s, e)| (s.max(line_start), e.min(line_end)));
        let push_plain = |shown: &mut Vec<char>,
                          upto: usize,
                          cf: &mut Option<usize>,
                          ct: &mut Option<usize>,
                          at: &mut usize| {
            for (i, c) in self.text[*at..upto].char_indices() {
                let byte = *at + i;
                if byte == from {
                    *cf = Some(shown.len());
                }
                if byte == to {
                    *ct = Some(shown.len());
                }
                shown.push(c);
            }
            *at = upto;
        };
        for (s, e) in masks {
            push_plain(&mut shown, s, &mut caret_from, &mut caret_to, &mut at);
            if (s..e).contains(&from) {
                caret_from = Some(shown.len());
            }
            shown.extend(REDACTED.chars());
            if (s + 1..=e).contains(&to) && caret_to.is_none() {
                caret_to = Some(shown.len());
            }
            at = e;
        }
        push_plain(
            &mut shown,
            line_end,
            &mut caret_from,
            &mut caret_to,
            &mut at,
        );
        let caret_from = caret_from.unwrap_or(shown.len());
        let caret_to = caret_to.unwrap_or(shown.len()).max(caret_from);
        let width = (caret_to - caret_from).max(1);
        if shown.len() <= SNIPPET_CHARS {
            return Some((shown.into_iter().collect(), caret_from, width));
        }
        // A long line: a window starting a little before the span.
        let begin = caret_from
            .saturating_sub(LEAD)
            .min(shown.len().saturating_sub(SNIPPET_CHARS));
        let finish = (begin + SNIPPET_CHARS).min(shown.len());
        let mut line = String::new();
        if begin > 0 {
            line.push('…');
        }
        line.extend(&shown[begin..finish]);
        if finish < shown.len() {
            line.push('…');
        }
        let offset = caret_from - begin + usize::from(begin > 0);
        let width = width.min(finish.saturating_sub(caret_from).max(1));
        Some((line, offset, width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_types::Span;

    fn at(line: u64, from: u64, to: u64) -> Span {
        Span::new(Location::new(line, from), Location::new(line, to))
    }

    #[test]
    fn carets_sit_under_the_span() {
        let text = "SELECT 1;\nCREATE TABLE t (a INT) WITH (connector = 'kafka', topik = 'x');";
        let source = SourceText::new("f.sql", text);
        let d = Diagnostic::error("unknown option 'topik'")
            .with_span(at(2, 51, 56))
            .with_help("Did you mean 'topic'?");
        assert_eq!(
            source.render(&d),
            "error: unknown option 'topik'\n --> f.sql:2:51\n  |\n2 | CREATE TABLE t (a INT) WITH (connector = 'kafka', topik = 'x');\n  |                                                   ^^^^^\n  = help: Did you mean 'topic'?"
        );
    }

    #[test]
    fn secrets_on_the_line_are_masked_and_the_caret_follows() {
        let text = "CREATE CONNECTION PROFILE p WITH (connector = 'redis', password = 'hunter2hunter2', pasword = 'x')";
        let source = SourceText::new("f.sql", text);
        let d = Diagnostic::error("unknown option 'pasword'").with_span(at(1, 85, 92));
        let shown = source.render(&d);
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(
            shown.contains("password = ********, pasword = ********)"),
            "{shown}"
        );
        let lines: Vec<&str> = shown.lines().collect();
        let caret = lines[4].find('^').unwrap();
        assert_eq!(&lines[3][caret..caret + 7], "pasword", "{shown}");
    }

    #[test]
    fn long_lines_show_a_window_around_the_span() {
        let mut text = String::from("CREATE TABLE t (a INT) WITH (connector = 'kafka'");
        for i in 0..400 {
            text.push_str(&format!(", opt{i} = 'v'"));
        }
        text.push_str(", password = 'hunter2', topik = 'x');");
        let col = text.find("topik").unwrap() as u64 + 1;
        let source = SourceText::new("f.sql", &text);
        let shown = source.render(&Diagnostic::error("unknown option 'topik'").with_span(at(
            1,
            col,
            col + 5,
        )));
        let lines: Vec<&str> = shown.lines().collect();
        let quoted = lines[3].trim_start_matches("1 | ");
        assert!(quoted.chars().count() <= SNIPPET_CHARS + 2, "{quoted}");
        assert!(
            quoted.starts_with('…') && !quoted.contains("hunter2"),
            "{quoted}"
        );
        // Columns count characters ('…' is one).
        let caret = lines[4].chars().position(|c| c == '^').unwrap();
        let under: String = lines[3].chars().skip(caret).take(5).collect();
        assert_eq!(under, "topik", "{shown}");
    }
}
