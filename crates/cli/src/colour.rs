//! Colour for a terminal (`--color`, `NO_COLOR`): diagnostics as rustc colours them
//! (the severity, the location arrow, the carets, `help` and `note`), and table headers
//! in bold. Only presentation: the text is the library's, unchanged but for escapes.

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const RED: &str = "\x1b[1;31m";
const YELLOW: &str = "\x1b[1;33m";
const BLUE: &str = "\x1b[1;34m";
const CYAN: &str = "\x1b[1;36m";

/// A rendered diagnostic with its parts coloured.
pub fn diagnostic(text: &str) -> String {
    let severity = if text.starts_with("warning") {
        YELLOW
    } else {
        RED
    };
    let mut out = Vec::new();
    for line in text.lines() {
        out.push(paint_line(line, severity));
    }
    out.join("\n")
}

fn paint_line(line: &str, severity: &str) -> String {
    for head in ["error", "warning"] {
        if let Some(rest) = line.strip_prefix(head)
            && let Some((tag, message)) = rest.split_once(": ")
            && !tag.contains(' ')
        {
            return format!("{severity}{head}{tag}{RESET}{BOLD}: {message}{RESET}");
        }
    }
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    if let Some(rest) = trimmed.strip_prefix("-->") {
        return format!("{indent}{BLUE}-->{RESET}{rest}");
    }
    if let Some(rest) = trimmed.strip_prefix("= help:") {
        return format!("{indent}{CYAN}= help:{RESET}{rest}");
    }
    if let Some(rest) = trimmed.strip_prefix("= note:") {
        return format!("{indent}{BLUE}= note:{RESET}{rest}");
    }
    // The gutter (`  |` or `12 |`), then source text or carets.
    if let Some((gutter, body)) = line.split_once('|')
        && gutter.trim().chars().all(|c| c.is_ascii_digit())
    {
        let carets = !body.trim().is_empty() && body.trim().chars().all(|c| c == '^' || c == '-');
        let body = if carets {
            format!("{severity}{body}{RESET}")
        } else {
            body.to_string()
        };
        return format!("{BLUE}{gutter}|{RESET}{body}");
    }
    line.to_string()
}

/// A pretty table with its header line in bold (the line after the first rule).
pub fn table(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.len() > 1 && lines[0].starts_with('+') {
        lines[1] = header_line(&lines[1]);
    }
    lines.join("\n")
}

/// A table's header line with the names in bold and the borders plain.
pub fn header_line(line: &str) -> String {
    line.split('|')
        .map(|cell| {
            if cell.trim().is_empty() {
                cell.to_string()
            } else {
                format!("{BOLD}{cell}{RESET}")
            }
        })
        .collect::<Vec<_>>()
        .join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_are_coloured_by_part_and_keep_their_text() {
        let text = "error: unknown connector 'kafak'\n --> <command>:1:43\n  |\n1 | WITH (connector = 'kafak')\n  |                   ^^^^^^^\n  = help: Did you mean 'kafka'?";
        let painted = diagnostic(text);
        assert!(
            painted.starts_with("\x1b[1;31merror\x1b[0m\x1b[1m: unknown connector"),
            "{painted:?}"
        );
        assert!(
            painted.contains("\x1b[1;34m-->\x1b[0m <command>:1:43"),
            "{painted:?}"
        );
        assert!(
            painted.contains("\x1b[1;31m                   ^^^^^^^\x1b[0m"),
            "{painted:?}"
        );
        assert!(
            painted.contains("\x1b[1;36m= help:\x1b[0m Did you mean"),
            "{painted:?}"
        );
        let plain: String = strip(&painted);
        assert_eq!(plain, text, "only escapes were added");
        assert!(diagnostic("warning: old").starts_with("\x1b[1;33mwarning"));
    }

    #[test]
    fn table_headers_are_bold() {
        let t = "+----+\n| id |\n+----+\n| 1  |\n+----+";
        let painted = table(t);
        assert!(painted.contains("|\x1b[1m id \x1b[0m|"), "{painted:?}");
        assert_eq!(strip(&painted), t);
    }

    fn strip(text: &str) -> String {
        let mut out = String::new();
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
