//! The REPL's backslash commands, psql's where they mean the same: what each is called,
//! what it does, and how a typed line becomes one. Listing and describing commands
//! become the SQL statements that do the same (`\dp` is `SHOW CONNECTION PROFILES`), so
//! they print exactly as those do, locally or through a server.

/// One command, for `\?` and completion.
#[derive(Debug, Clone, Copy)]
pub struct CommandDoc {
    /// How it is typed.
    pub name: &'static str,
    /// Its argument, if it takes one.
    pub argument: &'static str,
    /// What it does.
    pub summary: &'static str,
}

/// Every command, in the order `\?` lists them.
pub const COMMANDS: &[CommandDoc] = &[
    CommandDoc {
        name: "\\?",
        argument: "",
        summary: "list these commands",
    },
    CommandDoc {
        name: "\\h",
        argument: "[STATEMENT]",
        summary: "list statements, or show one's syntax and an example",
    },
    CommandDoc {
        name: "\\d",
        argument: "[NAME]",
        summary: "list tables, or describe a table or profile",
    },
    CommandDoc {
        name: "\\dt",
        argument: "",
        summary: "list tables",
    },
    CommandDoc {
        name: "\\dp",
        argument: "",
        summary: "list connection profiles",
    },
    CommandDoc {
        name: "\\dc",
        argument: "[CONNECTOR]",
        summary: "list connectors, or describe one",
    },
    CommandDoc {
        name: "\\timing",
        argument: "[on|off]",
        summary: "show how long each statement took",
    },
    CommandDoc {
        name: "\\x",
        argument: "[on|off]",
        summary: "expanded display: one line per column, for wide rows",
    },
    CommandDoc {
        name: "\\o",
        argument: "[FILE]",
        summary: "send results to FILE, or back to standard output",
    },
    CommandDoc {
        name: "\\i",
        argument: "FILE",
        summary: "run the statements in FILE",
    },
    CommandDoc {
        name: "\\e",
        argument: "",
        summary: "edit the statement being typed (or the last one) in $EDITOR",
    },
    CommandDoc {
        name: "\\c",
        argument: "",
        summary: "clear the statement being typed",
    },
    CommandDoc {
        name: "\\q",
        argument: "",
        summary: "quit",
    },
];

/// What a line starting with a backslash (or `quit`, `exit`, `help`) asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Meta {
    Quit,
    ListCommands,
    /// `\h` with the statement named, if any.
    Help(Option<String>),
    /// SQL that does what the command asks (`\d`, `\dp`, `\dc`).
    Sql(String),
    /// `\d name`: describe a table, or else a profile, of that name.
    Describe(String),
    Timing(Toggle),
    Expanded(Toggle),
    /// `\o` with the file, or none for standard output.
    Output(Option<String>),
    /// `\i` with the file.
    Include(String),
    Edit,
    Clear,
    /// A command that does not exist, or a bad argument: the message.
    Bad(String),
}

/// `on`, `off`, or nothing (flip).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toggle {
    On,
    Off,
    Flip,
}

impl Toggle {
    /// The new value from `current`.
    pub fn apply(self, current: bool) -> bool {
        match self {
            Toggle::On => true,
            Toggle::Off => false,
            Toggle::Flip => !current,
        }
    }
}

/// The command `line` is, or `None` when it is SQL.
pub fn parse(line: &str) -> Option<Meta> {
    let line = line.trim();
    let (word, rest) = match line.split_once(char::is_whitespace) {
        Some((w, r)) => (w, r.trim()),
        None => (line, ""),
    };
    if !word.starts_with('\\') {
        return match (word, rest) {
            ("quit" | "exit", "") => Some(Meta::Quit),
            ("help", "") => Some(Meta::ListCommands),
            _ => None,
        };
    }
    let arg = (!rest.is_empty()).then(|| rest.trim_end_matches(';').trim().to_string());
    let none = |meta: Meta| match &arg {
        Some(_) => Meta::Bad(format!("{word} takes no argument")),
        None => meta,
    };
    Some(match word {
        "\\q" => none(Meta::Quit),
        "\\?" => none(Meta::ListCommands),
        "\\h" | "\\help" => Meta::Help(arg),
        // psql's `\dt` lists tables too.
        "\\dt" => none(Meta::Sql("SHOW TABLES".into())),
        "\\d" => match arg {
            Some(name) => Meta::Describe(name),
            None => Meta::Sql("SHOW TABLES".into()),
        },
        "\\dp" => none(Meta::Sql("SHOW CONNECTION PROFILES".into())),
        "\\dc" => match arg {
            Some(id) => Meta::Sql(format!("DESCRIBE CONNECTOR {id}")),
            None => Meta::Sql("SHOW CONNECTORS".into()),
        },
        "\\timing" => toggle(word, arg.as_deref()).map_or_else(Meta::Bad, Meta::Timing),
        "\\x" => toggle(word, arg.as_deref()).map_or_else(Meta::Bad, Meta::Expanded),
        "\\o" => Meta::Output(arg),
        "\\i" => match arg {
            Some(file) => Meta::Include(file),
            None => Meta::Bad("\\i needs a file: \\i FILE".into()),
        },
        "\\e" => none(Meta::Edit),
        "\\c" | "\\r" => none(Meta::Clear),
        _ => Meta::Bad(format!(
            "unknown command '{}'; \\? lists the commands",
            tributary_types::limits::shorten(word)
        )),
    })
}

fn toggle(word: &str, arg: Option<&str>) -> Result<Toggle, String> {
    match arg.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(Toggle::Flip),
        Some("on") => Ok(Toggle::On),
        Some("off") => Ok(Toggle::Off),
        Some(_) => Err(format!("{word} takes on or off")),
    }
}

/// The `\?` text.
pub fn command_list() -> String {
    let mut out = String::from("Commands:\n");
    for c in COMMANDS {
        let usage = if c.argument.is_empty() {
            c.name.to_string()
        } else {
            format!("{} {}", c.name, c.argument)
        };
        out.push_str(&format!("  {usage:<22} {}\n", c.summary));
    }
    out.push_str("Statements end with ';'. Tab completes names and options; \\h lists statements.");
    out
}

/// The `\h` text: every statement, or one's syntax and example.
pub fn statement_help(name: Option<&str>) -> Result<String, String> {
    use tributary_sql::help::{STATEMENTS, statement_help};
    match name {
        None => {
            let mut out = String::from("Statements (\\h NAME shows one):\n");
            for s in STATEMENTS {
                out.push_str(&format!("  {:<26} {}\n", s.name, s.summary));
            }
            out.push_str("  and any DataFusion query.");
            Ok(out)
        }
        Some(name) => match statement_help(name) {
            Some(s) => Ok(format!(
                "{}: {}\n\nSyntax:\n{}\n\nExample:\n{}",
                s.name,
                s.summary,
                indent(s.syntax),
                indent(s.example)
            )),
            None => Err(format!(
                "no help for '{}'; \\h lists the statements",
                tributary_types::limits::shorten(name)
            )),
        },
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_commands_or_stay_sql() {
        assert_eq!(parse("SELECT 1;"), None);
        assert_eq!(parse("quit"), Some(Meta::Quit));
        assert_eq!(parse("quit now"), None, "SQL that starts with quit");
        assert_eq!(parse("\\d"), Some(Meta::Sql("SHOW TABLES".into())));
        assert_eq!(parse("\\d orders;"), Some(Meta::Describe("orders".into())));
        assert_eq!(
            parse("\\dc kafka"),
            Some(Meta::Sql("DESCRIBE CONNECTOR kafka".into()))
        );
        assert_eq!(parse("\\timing"), Some(Meta::Timing(Toggle::Flip)));
        assert_eq!(parse("\\x ON"), Some(Meta::Expanded(Toggle::On)));
        assert_eq!(parse("\\o"), Some(Meta::Output(None)));
        assert_eq!(
            parse("\\h create table"),
            Some(Meta::Help(Some("create table".into())))
        );
        assert!(matches!(parse("\\x maybe"), Some(Meta::Bad(m)) if m.contains("on or off")));
        assert!(matches!(parse("\\q now"), Some(Meta::Bad(m)) if m.contains("no argument")));
        assert!(
            matches!(parse("\\zz"), Some(Meta::Bad(m)) if m.contains("unknown command '\\zz'"))
        );
        assert!(matches!(parse("\\i"), Some(Meta::Bad(m)) if m.contains("needs a file")));
    }

    #[test]
    fn help_lists_commands_and_statements() {
        let list = command_list();
        for c in COMMANDS {
            assert!(list.contains(c.name), "{}", c.name);
        }
        assert!(statement_help(None).unwrap().contains("CREATE TABLE"));
        let one = statement_help(Some("create table")).unwrap();
        assert!(
            one.contains("Syntax:") && one.contains("WATERMARK FOR"),
            "{one}"
        );
        assert!(statement_help(Some("vacuum")).is_err());
    }

    /// `\?`, the parser and docs/cli.md's table list the same commands.
    #[test]
    fn the_listed_the_parsed_and_the_documented_commands_are_the_same() {
        for c in COMMANDS {
            let parsed = parse(c.name);
            assert!(
                !matches!(&parsed, Some(Meta::Bad(m)) if m.contains("unknown command")),
                "{} is listed but not a command",
                c.name
            );
        }
        let docs = include_str!("../../../docs/cli.md");
        let documented: Vec<&str> = docs
            .lines()
            .filter_map(|l| l.strip_prefix("| `\\"))
            .filter_map(|l| l.split(['`', ' ']).next())
            .collect();
        let listed: Vec<String> = COMMANDS
            .iter()
            .map(|c| c.name.trim_start_matches('\\').to_string())
            .collect();
        assert_eq!(documented, listed, "docs/cli.md and \\? differ");
    }
}
