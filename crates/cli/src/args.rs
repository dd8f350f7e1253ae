//! Command-line arguments.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// Tributary: SQL DDL and a catalog for streaming connectors.
#[derive(Debug, Parser)]
#[command(name = "tributary", version, about)]
pub struct Cli {
    /// The catalog: a directory (an embedded sled database; default: in the user's data
    /// directory) or a PostgreSQL database, postgres://user[:password]@host[:port]/db.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_CATALOG",
        value_name = "PATH|URL",
        hide_env_values = true
    )]
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

    /// Send `run`, `check` and `repl` statements to the Tributary server at this URL
    /// (`http://127.0.0.1:8000`) instead of opening a catalog.
    #[arg(long, global = true, env = "TRIBUTARY_SERVER", value_name = "URL")]
    pub server: Option<String>,

    /// The API token: sent to `--server`, or (with `serve`, repeatable) accepted by it.
    #[arg(
        long,
        global = true,
        env = "TRIBUTARY_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Vec<String>,

    /// Print results and errors only: no status lines, warnings, progress or banner.
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,

    /// When to colour errors, warnings, carets, hints and table headers (NO_COLOR, when
    /// set, means never for auto).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// What to do; without one, the shell at a terminal, else a script read from
    /// standard input (as psql does).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// At a terminal, unless NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether output to a stream that `is_terminal` is coloured.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text tables.
    Table,
    /// One JSON document for the run: every statement's result, rows and diagnostics.
    Json,
    /// One JSON result per statement, one per line.
    Jsonl,
    /// Result sets only, as CSV with a header, a blank line between sets (status lines
    /// go to standard error).
    Csv,
    /// Values only, tab-separated, no header or quoting: `SHOW CREATE TABLE` prints the
    /// bare statement (status lines go to standard error).
    Raw,
}

impl OutputFormat {
    /// Whether results are JSON reports, diagnostics included.
    pub fn is_json(self) -> bool {
        matches!(self, OutputFormat::Json | OutputFormat::Jsonl)
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Execute a script's statements in order, persisting DDL; stops at the first error.
    Run(Input),
    /// Validate a script without changing the catalog or connecting anywhere, reporting
    /// every error.
    Check(Input),
    /// Compare SQL files (the catalog wanted; directories are read for *.sql files) with
    /// the catalog: what would be created, changed (option by option, column by
    /// column), replaced or dropped. Exit 0 when nothing differs, 2 when something
    /// would change, 1 when the files are invalid.
    Plan(PlanArgs),
    /// Make the catalog match SQL files (or a plan saved by `plan --out`) in one atomic
    /// batch: all of it or nothing. Objects not in the files are kept unless --prune;
    /// replacements need --allow-replace.
    Apply(ApplyArgs),
    /// An interactive SQL shell.
    Repl,
    /// Serve the REST API (Arroyo-compatible) over the catalog.
    Serve(ServeArgs),
    /// Deploy the catalog to an Arroyo cluster, or import one's profiles and tables.
    #[command(subcommand)]
    Arroyo(ArroyoCommand),
    /// Work on the catalog as a whole.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Print a shell completion script: `tributary completions bash > ~/.local/share/bash-completion/completions/tributary`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `tributary plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// SQL files, or directories of them, describing the whole catalog wanted.
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// List objects in the catalog but not in the files as dropped [default: kept].
    #[arg(long)]
    pub prune: bool,
    /// Also save the plan to this file, for `apply --plan-file` (it holds the files'
    /// text and the catalog's fingerprint, no stored secret).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `tributary apply`.
#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// SQL files, or directories of them, describing the whole catalog wanted.
    #[arg(
        value_name = "PATH",
        required_unless_present = "plan_file",
        conflicts_with = "plan_file"
    )]
    pub paths: Vec<PathBuf>,
    /// Drop objects in the catalog but not in the files [default: kept].
    #[arg(long, conflicts_with = "plan_file")]
    pub prune: bool,
    /// Allow replacing objects that cannot change in place (dropped and created again,
    /// with new ids).
    #[arg(long)]
    pub allow_replace: bool,
    /// Apply exactly the plan `plan --out FILE` saved; refused if the catalog has changed
    /// since.
    #[arg(long, value_name = "FILE")]
    pub plan_file: Option<PathBuf>,
}

/// `tributary arroyo ...`: objects are matched by name, so both can run again; --token
/// is sent to the Arroyo API as a bearer token.
#[derive(Debug, Subcommand)]
pub enum ArroyoCommand {
    /// Create the catalog's profiles and tables (or the TABLES named, with their
    /// profiles) in an Arroyo API; those already there and the same are skipped, those
    /// that differ are reported.
    Push {
        /// The Arroyo API: http://host:port.
        #[arg(value_name = "URL")]
        url: String,
        /// Recreate tables that differ there (Arroyo cannot change one in place; they get
        /// new ids).
        #[arg(long)]
        replace: bool,
        /// The tables to push [default: every profile and table].
        #[arg(value_name = "TABLES")]
        tables: Vec<String>,
    },
    /// Import an Arroyo API's profiles and tables into the catalog, validating each;
    /// those refused are reported with the reason, those already here are compared.
    Pull {
        /// The Arroyo API: http://host:port.
        #[arg(value_name = "URL")]
        url: String,
    },
}

/// `tributary catalog ...`.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Print a SQL script that recreates the catalog (profiles, tables, views, declared
    /// functions), for keeping it in git and restoring it with `tributary run`. Secrets
    /// are never printed: each becomes a {{ VAR }} reference the script's header names.
    Dump,
    /// Copy a whole catalog into an empty one, between a catalog directory (sled) and a
    /// PostgreSQL database (postgres://user@host/db) either way. Records are kept as
    /// stored: ids, times, and secrets as written.
    Copy {
        /// The catalog to copy: a directory or a postgres:// URL (read, never changed).
        #[arg(value_name = "FROM")]
        from: PathBuf,
        /// The empty catalog to copy into: a directory or a postgres:// URL.
        #[arg(value_name = "TO")]
        to: PathBuf,
    },
}

/// `tributary serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8000", value_name = "ADDR")]
    pub bind: std::net::SocketAddr,

    /// A file of accepted API tokens, one per line ('#' starts a comment); tokens also
    /// come from --token and TRIBUTARY_TOKENS (comma-separated).
    #[arg(long, value_name = "PATH")]
    pub tokens_file: Option<PathBuf>,

    /// Accept requests without a token (allowed only on a loopback address).
    #[arg(long)]
    pub no_auth: bool,

    /// How log lines are written to standard error (filter them with RUST_LOG).
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    pub log_format: LogFormatArg,

    /// A directory whose files file sources (filesystem, single_file) and schema files
    /// may read (repeatable). Without it the server reads no local file; never the
    /// catalog's directory, /proc, /sys or /dev.
    #[arg(long, value_name = "DIR")]
    pub allow_file_reads: Vec<PathBuf>,

    /// The prefix of the environment variables `{{ VAR }}` references may name.
    #[arg(long, value_name = "PREFIX", default_value = "TRIBUTARY_VAR_")]
    pub variable_prefix: String,

    /// An environment variable `{{ VAR }}` references may name whatever its prefix
    /// (repeatable; the server's own, such as TRIBUTARY_TOKENS, never).
    #[arg(long = "allow-variable", value_name = "NAME")]
    pub allow_variables: Vec<String>,

    /// Refuse connections from connectors and tests to loopback and private addresses
    /// too (link-local ones, such as cloud metadata services, are always refused).
    #[arg(long)]
    pub deny_private_networks: bool,

    /// A host name, address or network (10.1.0.0/16) connectors may reach whatever the
    /// address rules say (repeatable).
    #[arg(long = "allow-host", value_name = "HOST")]
    pub allow_hosts: Vec<String>,

    /// The most memory one query may hold ('512MB', '2GB') [default: a quarter of the
    /// total].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub query_memory: Option<u64>,

    /// The most memory all running queries may hold together [default: half the
    /// machine's memory].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub total_query_memory: Option<u64>,

    /// How long a request that runs SQL may take unless it asks otherwise.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    pub query_deadline: Duration,

    /// The longest deadline a request may ask for.
    #[arg(long, value_name = "DURATION", default_value = "10 minutes", value_parser = parse_duration)]
    pub max_query_deadline: Duration,

    /// Requests that run SQL or test connections at once; more wait briefly, then get 429.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_concurrent_queries: usize,

    /// On SIGTERM, how long requests in flight may take to finish before they are
    /// cancelled.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub shutdown_grace: Duration,
}

fn parse_size(text: &str) -> Result<u64, String> {
    match tributary_types::parse_data_size(text)? {
        0 => Err("the size must be larger than zero".into()),
        n => Ok(n),
    }
}

/// Log line formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable text.
    Text,
    /// One JSON object per line.
    Json,
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

impl Input {
    /// A script read from standard input.
    pub fn stdin() -> Self {
        Self {
            file: None,
            command: None,
        }
    }
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let micros = tributary_types::parse_interval_micros(text)?;
    Ok(Duration::from_micros(micros.unsigned_abs()))
}
