//! `tributary plan PATH...`: the SQL files (directories are read for `*.sql` files, in
//! path order) describe the catalog wanted; they are checked as one script into an empty
//! in-memory catalog, offline, and compared with the catalog (`--catalog`, read from a
//! snapshot). Exit 0 when nothing differs, 2 when something would change, 1 when the
//! files are invalid or cannot be read.

use crate::args::{Cli, PlanArgs};
use crate::output::{Stdout, err_line};
use crate::render::Renderer;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tributary_catalog::{CatalogStore, OverlayStore};
use tributary_sql::plan::SourceFile;

/// Compare the files with the catalog and print the plan; the exit status.
pub async fn run(cli: &Cli, args: &PlanArgs) -> u8 {
    if cli.server.is_some() {
        err_line(
            "error: `plan` reads the catalog itself; over --server it is not available yet\n  help: Run it where the catalog is (--catalog PATH or postgres://...).",
        );
        return 1;
    }
    let files = match sql_files(&args.paths) {
        Ok(f) => f,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    let mut sources = Vec::with_capacity(files.len());
    for path in &files {
        match crate::script::read_file(path) {
            Ok(text) => sources.push(SourceFile {
                name: path.display().to_string(),
                text,
            }),
            Err(e) => {
                err_line(&format!("error: {e}"));
                return 1;
            }
        }
    }
    let desired = match tributary_sql::plan::desired_catalog(None, &sources).await {
        Ok(d) => d,
        Err(invalid) => {
            for (i, diagnostics) in &invalid.failures {
                let file = &sources[*i];
                Renderer::new(cli.format, &file.name, &file.text)
                    .styled(cli)
                    .diagnostics(diagnostics);
            }
            err_line(&format!(
                "plan: {} of {} statement(s) invalid; nothing was compared",
                invalid.failures.len(),
                invalid.statements
            ));
            return 1;
        }
    };
    let actual: Arc<dyn CatalogStore> = match crate::store::catalog_location(cli)
        .and_then(|location| crate::store::read_only(&location, cli))
    {
        Ok(Some(store)) => store,
        Ok(None) => Arc::new(OverlayStore::in_memory()),
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    let plan = match tributary_sql::plan::plan(desired.as_ref(), actual.as_ref(), args.prune) {
        Ok(p) => p,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return 1;
        }
    };
    let mut out = Stdout::default();
    if cli.format.is_json() {
        out.write(&format!("{}\n", tributary_sql::plan::plan_json(&plan)));
    } else {
        out.write(&tributary_sql::plan::plan_text(&plan));
    }
    if plan.is_empty() { 0 } else { 2 }
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
