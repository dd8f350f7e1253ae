//! `tributary`: run, check and explore SQL against a Tributary catalog.
//!
//! Exit status: 0 when every statement succeeded, 1 when a statement was invalid, 2 on
//! usage or I/O errors (including a catalog that cannot be opened).

mod args;
mod output;
mod render;
mod repl;
mod script;
mod store;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The catalog and the history hold secrets as written: whatever the user's umask,
    // every file this process creates is the user's alone.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    // Statements run one after another, so one thread serves them; idle worker threads
    // of a multi-threaded runtime cost about 0.1 ms of wake-ups per DDL statement here.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            output::err_line(&format!("error: cannot start the runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async {
        match &cli.command {
            Command::Run(input) => script::run(&cli, input, tributary_sql::Mode::Run).await,
            Command::Check(input) => script::run(&cli, input, tributary_sql::Mode::Check).await,
            Command::Repl => repl::run(&cli).await,
        }
    });
    ExitCode::from(code)
}
