//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

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

    /// How long to wait for a catalog another process holds ('5s', '500ms', '1 minute').
    #[arg(long, global = true, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    pub lock_timeout: Duration,

    /// Let `COPY ... TO 'path'` write files (refused otherwise).
    #[arg(long, global = true)]
    pub allow_file_writes: bool,

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
    /// Validate a script without changing the catalog or connecting anywhere, reporting
    /// every error.
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

fn parse_duration(text: &str) -> Result<Duration, String> {
    let micros = tributary_types::parse_interval_micros(text)?;
    Ok(Duration::from_micros(micros.unsigned_abs()))
}
