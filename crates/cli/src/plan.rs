//! `tributary plan PATH...`: the SQL files (directories are read for `*.sql` files, in
//! path order) describe the catalog wanted; they are checked as one script into an empty
//! in-memory catalog, offline, and compared with the catalog (`--catalog`, read from a
//! snapshot), or, with `--server`, sent to the server's `POST /plan`. Exit 0 when
//! nothing differs, 2 when something would change, 1 when the files are invalid or
//! cannot be read.

use crate::args::{Cli, PlanArgs};
use crate::output::{Stdout, err_line};
use crate::remote::Remote;
use crate::render::Renderer;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_api::ApiDiagnostic;
use tributary_api::plan::{Plan, PlanFile, SourceFile};
use tributary_catalog::{CatalogStore, OverlayStore};
use tributary_types::Diagnostic;

/// Compare the files with the catalog (or, with `--server`, the server's) and print the
/// plan; the exit status.
pub async fn run(cli: &Cli, args: &PlanArgs) -> u8 {
    let sources = match read_sources(&args.paths) {
        Ok(s) => s,
        Err(code) => return code,
    };
    // The fingerprint reads every object: made only when it is shown or saved.
    let fingerprinted = args.out.is_some() || cli.format.is_json();
    let planned = match &cli.server {
        Some(url) => remote_plan(cli, url, &sources, args.prune).await,
        None => local_plan(cli, &sources, args.prune, fingerprinted).await,
    };
    let (plan, fingerprint) = match planned {
        Ok(p) => p,
        Err(code) => return code,
    };
    if let (Some(out), Some(fingerprint)) = (&args.out, &fingerprint) {
        let saved = PlanFile {
            files: sources,
            prune: args.prune,
            fingerprint: fingerprint.clone(),
            plan: plan.clone(),
        };
        let text = format!("{:#}\n", saved.to_json());
        if let Err(e) = std::fs::write(out, text) {
            err_line(&format!(
                "error: cannot write the plan to '{}': {e}",
                out.display()
            ));
            return 1;
        }
    }
    let mut out = Stdout::default();
    if cli.format.is_json() {
        let mut json = tributary_api::plan::plan_json(&plan);
        if let Some(f) = fingerprint {
            json["fingerprint"] = f.into();
        }
        out.write(&format!("{json}\n"));
    } else {
        out.write(&tributary_api::plan::plan_text(&plan));
    }
    if let Some(path) = &args.out {
        err_line(&format!(
            "plan saved to '{}': `tributary apply --plan-file {}` applies exactly this plan",
            path.display(),
            path.display()
        ));
    }
    if plan.is_empty() { 0 } else { 2 }
}

/// The files `paths` name (directories read for `*.sql`), read; `Err` holds the exit
/// status, after saying why.
pub(crate) fn read_sources(paths: &[PathBuf]) -> Result<Vec<SourceFile>, u8> {
    let files = sql_files(paths).map_err(|e| {
        err_line(&format!("error: {e}"));
        1
    })?;
    let mut sources = Vec::with_capacity(files.len());
    for path in &files {
        match crate::script::read_file(path) {
            Ok(text) => sources.push(SourceFile {
                name: path.display().to_string(),
                text,
            }),
            Err(e) => {
                err_line(&format!("error: {e}"));
                return Err(1);
            }
        }
    }
    Ok(sources)
}

/// The plan against the catalog `--catalog` names; `Err` holds the exit status, after
/// saying why.
async fn local_plan(
    cli: &Cli,
    sources: &[SourceFile],
    prune: bool,
    fingerprinted: bool,
) -> Result<(Plan, Option<String>), u8> {
    let desired = match tributary_api::plan::desired_catalog(None, sources).await {
        Ok(d) => d,
        Err(invalid) => {
            for (i, diagnostics) in &invalid.failures {
                show_diagnostics(cli, &sources[*i], diagnostics);
            }
            return Err(invalid_files(
                invalid.failures.len(),
                Some(invalid.statements),
            ));
        }
    };
    let actual: Arc<dyn CatalogStore> = match crate::store::catalog_location(cli)
        .and_then(|location| crate::store::read_only(&location, cli))
    {
        Ok(Some(store)) => store,
        Ok(None) => Arc::new(OverlayStore::in_memory()),
        Err(e) => {
            err_line(&format!("error: {e}"));
            return Err(1);
        }
    };
    let fail = |e: tributary_catalog::CatalogError| {
        err_line(&format!("error: {e}"));
        1
    };
    let fingerprint = if fingerprinted {
        Some(tributary_api::plan::fingerprint(actual.as_ref()).map_err(fail)?)
    } else {
        None
    };
    let plan = tributary_api::plan::plan(desired.as_ref(), actual.as_ref(), prune).map_err(fail)?;
    Ok((plan, fingerprint))
}

/// The plan a server (`POST /plan`) makes against its catalog.
async fn remote_plan(
    cli: &Cli,
    url: &str,
    sources: &[SourceFile],
    prune: bool,
) -> Result<(Plan, Option<String>), u8> {
    let fail = |e: String| {
        err_line(&format!("error: {e}"));
        1
    };
    let remote = Remote::new(url, cli.token.last().cloned()).map_err(fail)?;
    let files: Vec<serde_json::Value> = sources
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "sql": f.text}))
        .collect();
    let body = serde_json::json!({"files": files, "prune": prune});
    let (status, answer) = remote.post_json("/plan", &body).await.map_err(fail)?;
    if status == 200 {
        let plan = tributary_api::plan::plan_from_json(&answer);
        let fingerprint = answer["fingerprint"].as_str().map(str::to_string);
        return match (plan, fingerprint) {
            (Some(p), Some(f)) => Ok((p, Some(f))),
            _ => Err(fail(format!(
                "the server at {url} answered a plan this client cannot read"
            ))),
        };
    }
    if answer["code"] == "invalid_definition" {
        let shown = show_server_diagnostics(cli, sources, &answer);
        if shown > 0 {
            return Err(invalid_files(shown, None));
        }
    }
    let said = answer["error"].as_str().unwrap_or("no reason given");
    Err(fail(format!(
        "the server at {url} answered {status}: {said}"
    )))
}

/// Show each of a server's diagnostics (`path` `/files/N/sql`) in its file, where it
/// points; how many were shown.
pub(crate) fn show_server_diagnostics(
    cli: &Cli,
    sources: &[SourceFile],
    answer: &serde_json::Value,
) -> usize {
    let mut shown = 0;
    for d in answer["diagnostics"].as_array().into_iter().flatten() {
        let Ok(d) = serde_json::from_value::<ApiDiagnostic>(d.clone()) else {
            continue;
        };
        let file = d
            .path
            .as_deref()
            .and_then(|p| p.strip_prefix("/files/"))
            .and_then(|p| p.split('/').next())
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| sources.get(n));
        if let Some(file) = file {
            show_diagnostics(cli, file, &[d.to_diagnostic()]);
            shown += 1;
        }
    }
    shown
}

pub(crate) fn show_diagnostics(cli: &Cli, file: &SourceFile, diagnostics: &[Diagnostic]) {
    Renderer::new(cli.format, &file.name, &file.text)
        .styled(cli)
        .diagnostics(diagnostics);
}

/// Say that the files are invalid; the exit status.
fn invalid_files(failed: usize, statements: Option<usize>) -> u8 {
    match statements {
        Some(n) => err_line(&format!(
            "plan: {failed} of {n} statement(s) invalid; nothing was compared"
        )),
        None => err_line(&format!(
            "plan: {failed} error(s) in the files; nothing was compared"
        )),
    }
    1
}

/// The files `paths` name: each file, and each directory's `*.sql` files (in its
/// subdirectories too), in path order.
fn sql_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        let meta =
            std::fs::metadata(p).map_err(|e| format!("cannot read '{}': {e}", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            collect(p, &mut found, 0)?;
            found.sort();
            if found.is_empty() {
                return Err(format!("directory '{}' holds no .sql file", p.display()));
            }
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// How deep directories are followed: a catalog's files are never nested deeper.
const MAX_DEPTH: usize = 16;

fn collect(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "directory '{}' is nested deeper than {MAX_DEPTH} levels",
            dir.display()
        ));
    }
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read '{}': {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read '{}': {e}", dir.display()))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
        if kind.is_dir() {
            collect(&path, out, depth + 1)?;
        } else if path.extension().is_some_and(|e| e == "sql") {
            out.push(path);
        }
    }
    Ok(())
}
