//! The statements Tributary runs, with their syntax, what they do and an example: what
//! the shell's `\h` prints and what a console can show beside its editor.

/// One statement's help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementHelp {
    /// The statement's name, `CREATE TABLE`.
    pub name: &'static str,
    /// What it does, in one sentence.
    pub summary: &'static str,
    /// Its syntax (`[ ]` optional, `|` alternatives, `...` repetition).
    pub syntax: &'static str,
    /// A complete example.
    pub example: &'static str,
}

/// Every statement, by name.
pub const STATEMENTS: &[StatementHelp] = &[
    StatementHelp {
        name: "ALTER CONNECTION PROFILE",
        summary: "Change some options of a profile; the whole profile is validated again.",
        syntax: "ALTER CONNECTION PROFILE name SET (option = value, ...)",
        example: "ALTER CONNECTION PROFILE prod SET (bootstrap_servers = 'k1:9092,k2:9092');",
    },
    StatementHelp {
        name: "CREATE CONNECTION PROFILE",
        summary: "Store a connector's connection settings (servers, credentials) for many tables, tested first.",
        syntax: "CREATE CONNECTION PROFILE [IF NOT EXISTS] name WITH (connector = 'id', option = value, ...)",
        example: "CREATE CONNECTION PROFILE prod WITH (\n  connector = 'kafka',\n  bootstrap_servers = 'localhost:9092'\n);",
    },
    StatementHelp {
        name: "CREATE TABLE",
        summary: "Declare a connection table: a source, sink or lookup table over a connector.",
        syntax: "CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name (\n    column TYPE [NOT NULL] [PRIMARY KEY] [METADATA FROM 'key'],\n    column TYPE GENERATED ALWAYS AS (expression) [STORED],\n    ...,\n    [PRIMARY KEY (column, ...),]\n    [WATERMARK FOR column [AS expression]]\n) WITH (connector = 'id', option = value, ...)\n[PARTITIONED BY (expression, ...)]",
        example: "CREATE TABLE orders (\n  id BIGINT NOT NULL,\n  amount DOUBLE,\n  at TIMESTAMP,\n  WATERMARK FOR at AS at - INTERVAL '5' SECOND\n) WITH (\n  connector = 'kafka',\n  connection_profile = 'prod',\n  topic = 'orders',\n  type = 'source',\n  format = 'json'\n);",
    },
    StatementHelp {
        name: "DESCRIBE",
        summary: "Show a table's columns, a profile's settings (secrets masked) or a connector's options.",
        syntax: "DESCRIBE [TABLE] name\nDESCRIBE CONNECTION PROFILE name\nDESCRIBE CONNECTOR id",
        example: "DESCRIBE CONNECTOR kafka;",
    },
    StatementHelp {
        name: "DROP CONNECTION PROFILE",
        summary: "Remove a profile; refused while tables use it, unless CASCADE drops them too.",
        syntax: "DROP CONNECTION PROFILE [IF EXISTS] name [RESTRICT | CASCADE]",
        example: "DROP CONNECTION PROFILE staging;",
    },
    StatementHelp {
        name: "DROP TABLE",
        summary: "Remove connection tables.",
        syntax: "DROP TABLE [IF EXISTS] name [, ...]",
        example: "DROP TABLE IF EXISTS orders;",
    },
    StatementHelp {
        name: "EXPLAIN",
        summary: "Show how a query is planned, without running it.",
        syntax: "EXPLAIN [ANALYZE] [VERBOSE] query",
        example: "EXPLAIN SELECT count(*) FROM orders;",
    },
    StatementHelp {
        name: "INSERT INTO",
        summary: "Write a query's rows to a sink table; reports the rows written.",
        syntax: "INSERT INTO sink [(column, ...)] query",
        example: "INSERT INTO archive SELECT * FROM orders LIMIT 1000;",
    },
    StatementHelp {
        name: "SELECT",
        summary: "Query tables; an endless source needs a LIMIT or a preview bound.",
        syntax: "SELECT expression, ... FROM table [JOIN ...] [WHERE ...] [GROUP BY ...] [ORDER BY ...] [LIMIT n]",
        example: "SELECT id, amount FROM orders LIMIT 10;",
    },
    StatementHelp {
        name: "SET",
        summary: "Set a session option: Arroyo's updating_ttl, preview bounds, DataFusion settings.",
        syntax: "SET option { = | TO } value\n  options: updating_ttl, preview.max_rows, preview.timeout, datafusion.*",
        example: "SET preview.max_rows = 1000;",
    },
    StatementHelp {
        name: "SHOW",
        summary: "List tables, profiles, connectors, a profile's live names or a directory's subdirectories.",
        syntax: "SHOW TABLES\nSHOW CONNECTION PROFILES\nSHOW CONNECTORS\nSHOW TOPICS IN [CONNECTION] PROFILE name\nSHOW DIRECTORIES IN 'path'",
        example: "SHOW TOPICS IN PROFILE prod;",
    },
    StatementHelp {
        name: "SHOW CREATE",
        summary: "Print the statement that recreates a table or profile (secrets masked).",
        syntax: "SHOW CREATE TABLE name\nSHOW CREATE CONNECTION PROFILE name",
        example: "SHOW CREATE TABLE orders;",
    },
    StatementHelp {
        name: "TEST",
        summary: "Connect as a table or profile would, stage by stage, reading sample messages from sources.",
        syntax: "TEST CONNECTION PROFILE name [TIMEOUT interval]\nTEST TABLE name [LIMIT n] [TIMEOUT interval]",
        example: "TEST TABLE orders LIMIT 5 TIMEOUT '10 seconds';",
    },
];

/// The help of the statement `name` names (any case, extra spaces ignored): the
/// statement itself, or the one it starts (`CREATE CONNECTION` finds `CREATE CONNECTION
/// PROFILE`); `None` when nothing matches.
pub fn statement_help(name: &str) -> Option<&'static StatementHelp> {
    let wanted = name
        .split_whitespace()
        .map(str::to_ascii_uppercase)
        .collect::<Vec<_>>()
        .join(" ");
    if wanted.is_empty() {
        return None;
    }
    STATEMENTS
        .iter()
        .find(|s| s.name == wanted)
        .or_else(|| STATEMENTS.iter().find(|s| s.name.starts_with(&wanted)))
        .or_else(|| {
            // `DESCRIBE CONNECTOR` finds `DESCRIBE`: the longest statement name it starts with.
            STATEMENTS
                .iter()
                .filter(|s| wanted.starts_with(s.name))
                .max_by_key(|s| s.name.len())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_found_by_name_prefix_or_longer_text() {
        assert_eq!(
            statement_help("create table").map(|s| s.name),
            Some("CREATE TABLE")
        );
        assert_eq!(
            statement_help("  Create   Connection ").map(|s| s.name),
            Some("CREATE CONNECTION PROFILE")
        );
        assert_eq!(
            statement_help("describe connector").map(|s| s.name),
            Some("DESCRIBE")
        );
        assert_eq!(
            statement_help("show create table").map(|s| s.name),
            Some("SHOW CREATE")
        );
        assert_eq!(statement_help("VACUUM"), None);
        assert_eq!(statement_help(""), None);
    }

    #[test]
    fn every_example_parses_as_the_statement_it_illustrates() {
        for s in STATEMENTS {
            let parsed = crate::parser::parse_script(s.example);
            assert_eq!(parsed.len(), 1, "{}", s.name);
            assert!(
                parsed[0].is_ok(),
                "{}: {:?}",
                s.name,
                parsed[0].as_ref().err()
            );
        }
    }
}
