//! `tributary apply PATH...` / `apply --plan-file F`: make the catalog (or, with
//! `--server`, the server's, through `POST /apply`) hold what the files describe, in one
//! atomic batch. Prints the plan carried out, then what was applied. Exit 0 when the
//! catalog now matches, 1 when nothing was applied (invalid files, a refused change, a
//! replacement without `--allow-replace`, a saved plan whose catalog has changed).

use crate::args::{ApplyArgs, Cli};
use crate::output::{Stdout, err_line};
use crate::plan::{read_sources, show_diagnostics, show_server_diagnostics};
use crate::remote::Remote;
use crate::render::Renderer;
use serde_json::{Value, json};
use std::sync::Arc;
use tributary_api::plan::{
    Action, ApplyError, ApplyOptions, Plan, PlanFile, SourceFile, plan_from_json, plan_json,
    plan_text,
};
use tributary_sql::Session;
use tributary_types::Diagnostic;

/// Apply and report; the exit status.
pub async fn run(cli: &Cli, args: &ApplyArgs) -> u8 {
    let (sources, options) = match &args.plan_file {
        Some(path) => match read_plan_file(path) {
            Ok(saved) => (
                saved.files,
                ApplyOptions {
                    prune: saved.prune,
                    allow_replace: args.allow_replace,
                    planned_against: Some(saved.fingerprint),
                },
            ),
            Err(e) => {
                err_line(&format!("error: {e}"));
                return 1;
            }
        },
        None => match read_sources(&args.paths) {
            Ok(s) => (
                s,
                ApplyOptions {
                    prune: args.prune,
                    allow_replace: args.allow_replace,
                    planned_against: None,
                },
            ),
            Err(code) => return code,
        },
    };
    match &cli.server {
        Some(url) => remote_apply(cli, url, &sources, &options).await,
        None => local_apply(cli, &sources, &options).await,
    }
}

fn read_plan_file(path: &std::path::Path) -> Result<PlanFile, String> {
    let text = crate::script::read_file(path)?;
    PlanFile::parse(&text).map_err(|e| format!("'{}': {e}", path.display()))
}

async fn local_apply(cli: &Cli, sources: &[SourceFile], options: &ApplyOptions) -> u8 {
    let store = match crate::store::open(cli) {
        Ok(s) => s,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    let session = Session::new(Arc::clone(&store));
    let outcome = tributary_api::plan::apply_files(&session, sources, options).await;
    // Whatever happened, what was written is durable before the process ends.
    let _ = store.flush();
    match outcome {
        Ok(applied) => {
            for (file, note) in &applied.notes {
                let note = std::slice::from_ref(note);
                match file.and_then(|i| sources.get(i)) {
                    Some(f) => show_diagnostics(cli, f, note),
                    None => Renderer::new(cli.format, "apply", "")
                        .styled(cli)
                        .diagnostics(note),
                }
            }
            applied_report(cli, &applied.plan, &applied.fingerprint);
            0
        }
        Err(ApplyError::Invalid(invalid)) => {
            for (i, diagnostics) in &invalid.failures {
                show_diagnostics(cli, &sources[*i], diagnostics);
            }
            err_line(&format!(
                "apply: {} of {} statement(s) invalid; nothing was applied",
                invalid.failures.len(),
                invalid.statements
            ));
            1
        }
        Err(e @ ApplyError::CatalogChanged { .. }) => {
            err_line(&format!("error: {e}; nothing was applied"));
            err_line(
                "help: make the plan again with `tributary plan --out FILE`, review it, and apply that",
            );
            1
        }
        Err(ApplyError::ReplaceNotAllowed { plan, replaced }) => {
            show_plan(cli, &plan, false);
            replace_refused(&replaced)
        }
        Err(ApplyError::Refused { plan, failures }) => {
            show_plan(cli, &plan, false);
            for (file, diagnostics) in &failures {
                match file.and_then(|i| sources.get(i)) {
                    Some(f) => show_diagnostics(cli, f, diagnostics),
                    None => Renderer::new(cli.format, "apply", "")
                        .styled(cli)
                        .diagnostics(diagnostics),
                }
            }
            err_line("apply: refused; nothing was applied");
            1
        }
        Err(ApplyError::Catalog(e)) => {
            err_line(&format!("error: {e}; nothing was applied"));
            1
        }
    }
}

/// The server's `POST /apply`.
async fn remote_apply(cli: &Cli, url: &str, sources: &[SourceFile], options: &ApplyOptions) -> u8 {
    let remote = match Remote::new(url, cli.token.last().cloned()) {
        Ok(r) => r,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    let files: Vec<Value> = sources
        .iter()
        .map(|f| json!({"name": f.name, "sql": f.text}))
        .collect();
    let mut body = json!({
        "files": files,
        "prune": options.prune,
        "allow_replace": options.allow_replace,
    });
    if let Some(f) = &options.planned_against {
        body["fingerprint"] = json!(f);
    }
    let (status, answer) = match remote.post_json("/apply", &body).await {
        Ok(a) => a,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    if status == 200 {
        return match (plan_from_json(&answer), answer["fingerprint"].as_str()) {
            (Some(plan), Some(fingerprint)) => {
                applied_report(cli, &plan, fingerprint);
                0
            }
            _ => {
                err_line(&format!(
                    "error: the server at {url} answered an apply this client cannot read"
                ));
                1
            }
        };
    }
    if let Some(plan) = plan_from_json(&answer["plan"]) {
        show_plan(cli, &plan, false);
    }
    if show_server_diagnostics(cli, sources, &answer) == 0
        && let Some(ds) = answer["diagnostics"].as_array()
    {
        // Diagnostics of no file (a table the files leave alone): as the server said.
        let shown: Vec<Diagnostic> = ds
            .iter()
            .filter_map(|d| serde_json::from_value::<tributary_api::ApiDiagnostic>(d.clone()).ok())
            .map(|d| d.to_diagnostic())
            .collect();
        Renderer::new(cli.format, "apply", "")
            .styled(cli)
            .diagnostics(&shown);
    }
    let said = answer["error"].as_str().unwrap_or("no reason given");
    err_line(&format!(
        "error: the server at {url} answered {status}: {said}; nothing was applied"
    ));
    1
}

/// The plan (as `plan` prints it), its heading saying whether it was carried out.
fn show_plan(cli: &Cli, plan: &Plan, applied: bool) {
    let mut out = Stdout::default();
    if cli.format.is_json() {
        let mut json = plan_json(plan);
        json["applied"] = applied.into();
        out.write(&format!("{json}\n"));
    } else {
        out.write(&plan_text(plan));
    }
}

fn applied_report(cli: &Cli, plan: &Plan, fingerprint: &str) {
    if cli.format.is_json() {
        let mut json = plan_json(plan);
        json["applied"] = true.into();
        json["fingerprint"] = fingerprint.into();
        Stdout::default().write(&format!("{json}\n"));
        return;
    }
    show_plan(cli, plan, true);
    if plan.is_empty() {
        return;
    }
    Stdout::default().write(&format!(
        "Applied: {} created, {} changed, {} replaced, {} dropped.\n",
        plan.count(Action::Create),
        plan.count(Action::Change),
        plan.count(Action::Replace),
        plan.count(Action::Drop),
    ));
}

fn replace_refused(replaced: &[String]) -> u8 {
    err_line(&format!(
        "error: the plan replaces {} (dropped and created again, with new ids); nothing was applied",
        replaced.join(", ")
    ));
    err_line("help: review the plan, then apply with --allow-replace");
    1
}
