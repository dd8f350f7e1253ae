//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Tributary: SQL DDL and a catalog for streaming connectors.
#[derive(Debug, Parser)]
#[command(name = "tributary", version, about)]
pub struct Cli {
    /// The catalog directory [default: a sled database in the user's data directory].
    #[arg(long, global = true, env = "TRIBUTARY_CATALOG", value_name = "PATH")]
    pub catalog: Option<PathBuf>,

    /// How result sets are printed.
    #[arg(long, global = true, value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text tables.
    Table,
    /// One JSON array of objects per result set.
    Json,
    /// CSV with a header line.
    Csv,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Execute a script's statements in order, persisting DDL; stops at the first error.
    Run(Input),
    /// Validate a script without changing the catalog, reporting every error.
    Check(Input),
    /// An interactive SQL shell.
    Repl,
}

/// Where SQL comes from.
#[derive(Debug, Args)]
pub struct Input {
    /// A SQL file; '-' or nothing reads standard input.
    #[arg(value_name = "FILE", conflicts_with = "command")]
    pub file: Option<PathBuf>,

    /// SQL given on the command line.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    pub command: Option<String>,
}
