//! `tributary run` and `tributary check`.

use crate::args::{Cli, Input};
use crate::render::{Renderer, Source};
use std::io::Read;
use tributary_sql::{Mode, Session};

/// Read the script, run or check it, print results and diagnostics; the exit status.
pub async fn run(cli: &Cli, input: &Input, mode: Mode) -> u8 {
    let (name, text) = match read_input(input) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let store = match mode {
        Mode::Run => crate::store::open(cli),
        Mode::Check => crate::store::open_overlay(cli),
    };
    let store = match store {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let session = Session::new(store);
    let renderer = Renderer::new(
        cli.format,
        Source {
            name: &name,
            text: &text,
        },
    );
    let outcomes = session.run_script(&text, mode).await;
    let mut failures = 0usize;
    for outcome in &outcomes {
        match outcome {
            Ok(r) => {
                renderer.diagnostics(&r.warnings);
                if mode == Mode::Run {
                    renderer.output(&r.output);
                }
            }
            Err(e) => {
                failures += 1;
                renderer.diagnostics(&e.diagnostics);
            }
        }
    }
    match mode {
        Mode::Check if failures == 0 => {
            eprintln!("{name}: {} statement(s) valid", outcomes.len());
            0
        }
        Mode::Check => {
            eprintln!(
                "{name}: {failures} of {} statement(s) invalid",
                outcomes.len()
            );
            1
        }
        Mode::Run if failures == 0 => 0,
        Mode::Run => 1,
    }
}

fn read_input(input: &Input) -> Result<(String, String), String> {
    if let Some(sql) = &input.command {
        return Ok(("<command>".into(), sql.clone()));
    }
    match &input.file {
        Some(p) if p.as_os_str() != "-" => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("cannot read '{}': {e}", p.display()))?;
            Ok((p.display().to_string(), text))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(("<stdin>".into(), text))
        }
    }
}
