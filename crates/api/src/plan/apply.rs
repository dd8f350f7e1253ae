//! `tributary apply`: make the catalog hold what the files describe, in one atomic
//! batch. The files are checked as a whole first (as `plan` checks them), the plan is
//! made, profiles created or changed are tested as CREATE and ALTER test them (unless
//! their statement says `validate = false`), a changed profile must still suit the
//! tables the files leave alone, and only then is the batch written: all of it, or,
//! on any failure, nothing.

use super::{Action, InvalidFiles, Plan, SourceFile, batch, desired_catalog, fingerprint, plan};
use std::collections::{HashMap, HashSet};
use tributary_catalog::{CatalogError, CatalogStore, Change};
use tributary_dialect::ddl::catalog_diagnostic;
use tributary_dialect::parser::ast::Statement;
use tributary_dialect::parser::parse_statements_starting;
use tributary_sql::{Mode, Session};
use tributary_types::{Diagnostic, Span, SqlOption};

/// How to apply.
#[derive(Debug, Clone, Default)]
pub struct ApplyOptions {
    /// Drop what the catalog holds and the files do not.
    pub prune: bool,
    /// Allow replacements (drop and create again: the object gets a new id).
    pub allow_replace: bool,
    /// The fingerprint of the catalog a saved plan was made against: applying is refused
    /// if the catalog's is different now.
    pub planned_against: Option<String>,
}

/// What an apply did.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The plan carried out.
    pub plan: Plan,
    /// The catalog's fingerprint after the batch.
    pub fingerprint: String,
    /// Notes and warnings of the connection tests, each with the index of the file whose
    /// statement made the profile.
    pub notes: Vec<(Option<usize>, Diagnostic)>,
}

/// Why nothing was applied.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The files do not describe a valid catalog.
    #[error("{} of {} statement(s) in the files are invalid", .0.failures.len(), .0.statements)]
    Invalid(InvalidFiles),
    /// A saved plan was made against another state of the catalog.
    #[error(
        "the catalog has changed since the plan was made (planned against {planned}, now {now})"
    )]
    CatalogChanged {
        /// The fingerprint the plan was made against.
        planned: String,
        /// The catalog's now.
        now: String,
    },
    /// The plan replaces objects and replacing was not allowed.
    #[error("the plan replaces {}, which drops and creates again (new ids)", .replaced.join(", "))]
    ReplaceNotAllowed {
        /// The plan.
        plan: Plan,
        /// `table x`, `profile p`.
        replaced: Vec<String>,
    },
    /// A connection test, a dependent table or the catalog's rules refused the batch.
    #[error("the change was refused")]
    Refused {
        /// The plan.
        plan: Plan,
        /// Each refusal's diagnostics, with the index of the file whose statement made
        /// the object (none when no file did: a table the files leave alone).
        failures: Vec<(Option<usize>, Vec<Diagnostic>)>,
    },
    /// The catalog could not be read.
    #[error("{0}")]
    Catalog(#[from] CatalogError),
}

/// Make `session`'s catalog hold what `files` describe; see the module.
pub async fn apply_files(
    session: &Session,
    files: &[SourceFile],
    options: &ApplyOptions,
) -> Result<Applied, ApplyError> {
    let store = session.store().clone();
    store.refresh()?;
    if let Some(planned) = &options.planned_against {
        let now = fingerprint(store.as_ref())?;
        if &now != planned {
            return Err(ApplyError::CatalogChanged {
                planned: planned.clone(),
                now,
            });
        }
    }
    let desired = desired_catalog(Some(session), files)
        .await
        .map_err(ApplyError::Invalid)?;
    let planned = plan(desired.as_ref(), store.as_ref(), options.prune)?;
    let replaced: Vec<String> = planned
        .changes
        .iter()
        .filter(|c| c.action == Action::Replace)
        .map(|c| format!("{} {}", c.kind, c.name))
        .collect();
    if !replaced.is_empty() && !options.allow_replace {
        return Err(ApplyError::ReplaceNotAllowed {
            plan: planned,
            replaced,
        });
    }
    if planned.is_empty() {
        let fingerprint = fingerprint(store.as_ref())?;
        return Ok(Applied {
            plan: planned,
            fingerprint,
            notes: vec![],
        });
    }
    let mut changes = batch::changes(&planned, desired.as_ref(), store.as_ref())?;
    let in_files: HashSet<String> = desired
        .table_names()?
        .into_iter()
        .map(|n| n.to_lowercase())
        .collect();
    let mut notes = Vec::new();
    let mut failures = Vec::new();
    let places = if changes.iter().any(|c| matches!(c, Change::PutProfile(_))) {
        profile_statements(files)
    } else {
        HashMap::new()
    };
    for change in &mut changes {
        let Change::PutProfile(profile) = change else {
            continue;
        };
        let located = places.get(&profile.name.to_lowercase()).copied();
        let span = located.map(|(_, s)| s).unwrap_or_default();
        let file = located.map(|(i, _)| i);
        // A changed profile must still suit the tables the files leave alone (those
        // in the files were checked against it already).
        if let Err(d) = session.check_dependents(profile, span, &|t| {
            in_files.contains(&t.name.to_lowercase())
        }) {
            failures.push((file, d));
            continue;
        }
        let statement: Vec<SqlOption> = profile
            .options
            .iter()
            .map(|o| SqlOption {
                key: o.key.clone(),
                key_span: span,
                value: o.value.clone(),
                value_span: span,
            })
            .collect();
        match session
            .test_profile_before_storing(profile, &statement, Mode::Run, span)
            .await
        {
            Ok(n) => notes.extend(n.into_iter().map(|d| (file, d))),
            Err(d) => failures.push((file, d)),
        }
    }
    if !failures.is_empty() {
        return Err(ApplyError::Refused {
            plan: planned,
            failures,
        });
    }
    if let Err(e) = store.submit(changes).await {
        let what = match &e {
            // The batch broke a rule (a view the files leave alone reads a table
            // they drop, a name taken meanwhile): the catalog's own words.
            CatalogError::AlreadyExists { .. }
            | CatalogError::NotFound { .. }
            | CatalogError::ProfileInUse { .. }
            | CatalogError::ReadBy { .. }
            | CatalogError::Cycle { .. } => catalog_diagnostic(e, Span::default()),
            _ => return Err(ApplyError::Catalog(e)),
        };
        return Err(ApplyError::Refused {
            plan: planned,
            failures: vec![(None, vec![what])],
        });
    }
    Ok(Applied {
        plan: planned,
        fingerprint: fingerprint(store.as_ref())?,
        notes,
    })
}

/// Where each profile the files create is named: its file and the span of its name, by
/// lowercase name (one pass over the files, however many profiles change).
fn profile_statements(files: &[SourceFile]) -> HashMap<String, (usize, Span)> {
    let mut out = HashMap::new();
    for (i, f) in files.iter().enumerate() {
        // Only the profiles' statements are parsed (a catalog's files are mostly tables).
        let profiles = parse_statements_starting(&f.text, &["CREATE", "CONNECTION", "PROFILE"]);
        for parsed in profiles {
            if let Statement::CreateProfile { name, .. } = parsed.statement {
                out.entry(name.value.to_lowercase())
                    .or_insert((i, name.span));
            }
        }
    }
    out
}
