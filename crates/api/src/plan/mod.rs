//! `tributary plan`: the catalog as code. SQL files describe the catalog wanted; they are
//! run, checked as a whole, into an empty in-memory catalog (views against the tables
//! the same files create), and what that catalog holds is compared with a real one,
//! object by object: what would be created, changed (option by option, column by
//! column), replaced (a change no statement makes in place) or dropped. Secrets are
//! compared, never shown: a detail says only that one changed. Only `apply` writes, in
//! one batch, once every check has passed.

mod apply;
mod batch;
mod compare;
mod fingerprint;
mod plan_file;
mod render;

pub use apply::{Applied, ApplyError, ApplyOptions, apply_files};
pub use fingerprint::fingerprint;
pub use plan_file::PlanFile;
pub use render::{plan_from_json, plan_json, plan_text};

use std::fmt;
use std::sync::Arc;
use tributary_catalog::{CatalogStore, OverlayStore, Result};
use tributary_sql::{Mode, Session};
use tributary_types::Diagnostic;

/// One file of the catalog wanted: its name (for diagnostics) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The path or name it is shown by.
    pub name: String,
    /// Its SQL.
    pub text: String,
}

/// Files that do not describe a valid catalog: each failed statement's diagnostics, by
/// the index of its file.
#[derive(Debug, Clone, Default)]
pub struct InvalidFiles {
    /// How many statements the files hold.
    pub statements: usize,
    /// For each failed statement, its file's index and its diagnostics.
    pub failures: Vec<(usize, Vec<Diagnostic>)>,
}

/// The catalog `files` describe: their statements checked in order, as one script,
/// into an empty in-memory catalog, offline (nothing is connected to, tested or
/// fetched), so views are checked against the tables the same files create. Under a
/// `parent` session (a server's), its confinement (files, variables) applies.
pub async fn desired_catalog(
    parent: Option<&Session>,
    files: &[SourceFile],
) -> std::result::Result<Arc<OverlayStore>, InvalidFiles> {
    let store = Arc::new(OverlayStore::in_memory());
    let session = match parent {
        Some(p) => p.sibling(store.clone()),
        None => Session::new(store.clone()),
    }
    .offline();
    let mut invalid = InvalidFiles::default();
    for (i, file) in files.iter().enumerate() {
        for outcome in session.run_script(&file.text, Mode::Check).await {
            invalid.statements += 1;
            if let Err(e) = outcome {
                invalid.failures.push((i, e.diagnostics));
            }
        }
    }
    if invalid.failures.is_empty() {
        Ok(store)
    } else {
        Err(invalid)
    }
}

/// What kind of object a change is about, in the order a plan lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ObjectKind {
    /// A declared function (`CREATE FUNCTION`).
    Function,
    /// A connection profile.
    Profile,
    /// A connection table.
    Table,
    /// A view.
    View,
}

impl fmt::Display for ObjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ObjectKind::Function => "function",
            ObjectKind::Profile => "profile",
            ObjectKind::Table => "table",
            ObjectKind::View => "view",
        })
    }
}

/// What would happen to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// In the files, not in the catalog.
    Create,
    /// In both, different, and changed in place.
    Change,
    /// In both, different in a way no statement changes in place (a connector): dropped
    /// and created again.
    Replace,
    /// In the catalog, not in the files, and `--prune` asked for.
    Drop,
    /// In the catalog, not in the files: kept (without `--prune`).
    Keep,
}

impl Action {
    /// The mark a plan's text shows before the object.
    pub fn mark(self) -> &'static str {
        match self {
            Action::Create => "+",
            Action::Change => "~",
            Action::Replace => "-/+",
            Action::Drop => "-",
            Action::Keep => " ",
        }
    }

    /// The word for it.
    pub fn word(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Change => "change",
            Action::Replace => "replace",
            Action::Drop => "drop",
            Action::Keep => "keep",
        }
    }
}

/// One difference inside a changed object: `option 'topic'`, `column amount`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// What differs.
    pub what: String,
    /// Its value in the catalog (none when the files add it); `(secret)` for a secret.
    pub before: Option<String>,
    /// Its value in the files (none when the files remove it); `(secret)` for a secret.
    pub after: Option<String>,
}

/// What would happen to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedChange {
    /// Create, change, replace, drop or keep.
    pub action: Action,
    /// What it is.
    pub kind: ObjectKind,
    /// Its name.
    pub name: String,
    /// For a change or replacement, what differs.
    pub details: Vec<Detail>,
}

/// Everything that would change, by kind then name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// The objects that would change (and, without `--prune`, those kept).
    pub changes: Vec<PlannedChange>,
}

impl Plan {
    /// How many objects `action` applies to.
    pub fn count(&self, action: Action) -> usize {
        self.changes.iter().filter(|c| c.action == action).count()
    }

    /// Whether applying it would change nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.iter().all(|c| c.action == Action::Keep)
    }
}

/// Compare what `desired` holds (the files, run into an empty catalog) with `actual`:
/// the plan that makes `actual` hold the same. Objects only in `actual` are dropped when
/// `prune`, else listed as kept.
pub fn plan(desired: &dyn CatalogStore, actual: &dyn CatalogStore, prune: bool) -> Result<Plan> {
    let mut changes = compare::functions(desired, actual)?;
    changes.extend(compare::profiles(desired, actual)?);
    changes.extend(compare::tables(desired, actual)?);
    changes.extend(compare::views(desired, actual)?);
    for c in &mut changes {
        if c.action == Action::Keep && prune {
            c.action = Action::Drop;
        }
    }
    changes.sort_by_key(|c| (c.kind, c.name.to_lowercase()));
    Ok(Plan { changes })
}

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod tests;
