//! `tributary`: run, check and explore SQL against a Tributary catalog.
//!
//! Exit status: 0 when every statement succeeded, 1 when a statement was invalid, 2 on
//! usage or I/O errors (including a catalog that cannot be opened).

mod apply;
mod args;
mod arroyo;
mod catalog;
mod colour;
mod executor;
mod json_print;
mod line_helper;
mod meta;
mod output;
mod pager;
mod plan;
mod remote;
mod remote_names;
mod render;
mod repl;
mod script;
mod serve;
mod store;
mod stream_print;

/// mimalloc (why: `tributary_allocator`).
#[global_allocator]
static ALLOCATOR: tributary_allocator::Allocator = tributary_allocator::Allocator;

use args::{Cli, Command};
use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The catalog and the history hold secrets as written: whatever the user's umask,
    // every file this process creates is the user's alone.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    // Statements run one after another, so one thread serves them; idle worker threads
    // of a multi-threaded runtime cost about 0.1 ms of wake-ups per DDL statement here.
    // A server serves many clients at once: it gets a worker per core.
    if let Some(Command::Completions { shell }) = &cli.command {
        let mut command = <Cli as clap::CommandFactory>::command();
        // Into memory first: clap_complete panics when its writer fails (`| head`).
        let mut script = Vec::new();
        clap_complete::generate(*shell, &mut command, "tributary", &mut script);
        output::Stdout::default().write(&String::from_utf8_lossy(&script));
        return ExitCode::SUCCESS;
    }
    // Another process that finds the catalog taken is told which command holds it.
    tributary_catalog::describe_this_process(match &cli.command {
        Some(Command::Run(_)) => "tributary run",
        Some(Command::Check(_)) => "tributary check",
        Some(Command::Plan(_)) => "tributary plan",
        Some(Command::Apply(_)) => "tributary apply",
        Some(Command::Repl) => "tributary repl",
        None if std::io::stdin().is_terminal() => "tributary repl",
        None => "tributary (a script on standard input)",
        Some(Command::Serve(_)) => "tributary serve",
        Some(Command::Catalog(_)) => "tributary catalog",
        Some(Command::Arroyo(_)) => "tributary arroyo",
        Some(Command::Completions { .. }) => "tributary completions",
    });
    // Batch commands over whole files free as they go: their memory goes back at once
    // rather than after the allocator's delay, which would make it their peak.
    if matches!(
        &cli.command,
        Some(Command::Check(_) | Command::Plan(_) | Command::Apply(_))
    ) {
        tributary_allocator::return_freed_memory_promptly();
    }
    let runtime = match &cli.command {
        Some(Command::Serve(_)) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    }
    .enable_all()
    .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            output::err_line(&format!("error: cannot start the runtime: {e}"));
            return ExitCode::from(2);
        }
    };
    let code = runtime.block_on(async {
        match &cli.command {
            Some(Command::Run(input)) => script::run(&cli, input, tributary_sql::Mode::Run).await,
            Some(Command::Check(input)) => {
                script::run(&cli, input, tributary_sql::Mode::Check).await
            }
            Some(Command::Plan(args)) => plan::run(&cli, args).await,
            Some(Command::Apply(args)) => apply::run(&cli, args).await,
            Some(Command::Repl) => repl::run(&cli).await,
            // As psql: the shell at a terminal, a script from a pipe or file.
            None if std::io::stdin().is_terminal() => repl::run(&cli).await,
            None => script::run(&cli, &args::Input::stdin(), tributary_sql::Mode::Run).await,
            Some(Command::Serve(args)) if cli.server.is_some() => {
                let _ = args;
                output::err_line("error: --server sends statements to a server; `serve` runs one");
                2
            }
            Some(Command::Serve(args)) => serve::run(&cli, args).await,
            Some(Command::Catalog(command)) => catalog::run(&cli, command),
            Some(Command::Arroyo(command)) => arroyo::run(&cli, command).await,
            Some(Command::Completions { .. }) => 0,
        }
    });
    ExitCode::from(code)
}
