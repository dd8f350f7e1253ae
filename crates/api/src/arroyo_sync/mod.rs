//! Arroyo sync: `tributary arroyo push` deploys the catalog's profiles and tables to an
//! Arroyo API (where pipelines run at scale), `pull` imports a cluster's into the catalog.
//! Objects are matched by name (names are unique in both), so either command can run
//! again: what is the same on both sides is skipped, what differs is reported (and, on a
//! push with `replace`, recreated, since Arroyo cannot change a table in place). Pulled
//! objects go through the same validation as `POST /connection_*` on Tributary's own
//! API; each refusal is reported with its reason and the rest still import.

mod client;
mod compare;
mod pull;
mod push;

pub use pull::pull;
pub use push::{PushOptions, push};

use std::fmt;

/// Why a sync could not run at all (a refused object is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// The API URL cannot be used.
    #[error("bad Arroyo API URL '{url}': {detail}")]
    BadUrl {
        /// The URL as given (shortened).
        url: String,
        /// Why.
        detail: String,
    },
    /// The API could not be reached, or answered something unreadable.
    #[error("cannot {what}: {detail}")]
    Remote {
        /// What was being done.
        what: String,
        /// Why it failed.
        detail: String,
    },
    /// The API answered with an error status.
    #[error("cannot {what}: the API answered {status}: {message}")]
    Refused {
        /// What was being done.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The API's message, secrets redacted.
        message: String,
    },
    /// The local catalog failed.
    #[error("{0}")]
    Catalog(#[from] tributary_catalog::CatalogError),
    /// A table named on the command line is not in the catalog.
    #[error("table '{name}' does not exist{suggestion}")]
    UnknownTable {
        /// The name given.
        name: String,
        /// `; did you mean 'x'?`, or nothing.
        suggestion: String,
    },
}

/// Profiles or tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncKind {
    /// A connection profile.
    Profile,
    /// A connection table.
    Table,
}

impl fmt::Display for SyncKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SyncKind::Profile => "profile",
            SyncKind::Table => "table",
        })
    }
}

/// What happened to one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// Made on the other side: the id it had here, and the one it has there.
    Created {
        /// The id on the side it came from.
        from: String,
        /// The id on the side it went to.
        to: String,
    },
    /// Already there and the same.
    Unchanged {
        /// The id on the side it came from.
        from: String,
        /// The id on the side it went to.
        to: String,
    },
    /// There, but different; left as it is.
    Differs {
        /// What differs: `connector`, `profile`, `config`, `schema`.
        parts: Vec<&'static str>,
    },
    /// There and different, so deleted and made again (`push --replace`).
    Replaced {
        /// What differed.
        parts: Vec<&'static str>,
        /// The id on the side it came from.
        from: String,
        /// Its new id on the side it went to.
        to: String,
    },
    /// Made (or made again), but the other side did not keep all of it: what it lost
    /// (`generated columns`, `watermark`, `config`, `schema`), compared with what it
    /// shows of the new object.
    Incomplete {
        /// What the other side does not hold.
        lost: Vec<&'static str>,
        /// The id on the side it came from.
        from: String,
        /// The id on the side it went to.
        to: String,
    },
    /// Not made: why.
    Refused {
        /// The reason, with how to fix it where known.
        reason: String,
    },
}

/// One object's line in a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncItem {
    /// Profile or table.
    pub kind: SyncKind,
    /// Its name.
    pub name: String,
    /// What happened.
    pub outcome: SyncOutcome,
    /// What the user should know (a secret that arrived redacted, a column Arroyo
    /// cannot hold).
    pub notes: Vec<String>,
}

impl fmt::Display for SyncItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.kind, self.name)?;
        match &self.outcome {
            SyncOutcome::Created { from, to } => write!(f, "created ({from} -> {to})")?,
            SyncOutcome::Unchanged { from, to } => write!(f, "unchanged ({from} = {to})")?,
            SyncOutcome::Differs { parts } => {
                write!(f, "differs ({}), left as it is", parts.join(", "))?
            }
            SyncOutcome::Replaced { parts, from, to } => write!(
                f,
                "replaced, its {} differed ({from} -> {to})",
                parts.join(", ")
            )?,
            SyncOutcome::Incomplete { lost, from, to } => write!(
                f,
                "created without its {}, which the target cannot hold ({from} -> {to})",
                lost.join(", ")
            )?,
            SyncOutcome::Refused { reason } => write!(f, "refused: {reason}")?,
        }
        for note in &self.notes {
            write!(f, "\n  note: {note}")?;
        }
        Ok(())
    }
}

/// What a push or pull did, object by object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// The API synced with (`http://host:port`).
    pub remote: String,
    /// Profiles first, then tables, each in name order.
    pub items: Vec<SyncItem>,
}

impl SyncReport {
    /// Whether both sides now agree on every object synced: nothing refused, nothing
    /// left different.
    pub fn in_sync(&self) -> bool {
        self.items.iter().all(|i| {
            matches!(
                i.outcome,
                SyncOutcome::Created { .. }
                    | SyncOutcome::Unchanged { .. }
                    | SyncOutcome::Replaced { .. }
            )
        })
    }

    /// `3 created, 1 unchanged, 1 refused`.
    pub fn summary(&self) -> String {
        let count =
            |f: fn(&SyncOutcome) -> bool| self.items.iter().filter(|i| f(&i.outcome)).count();
        let parts = [
            (
                count(|o| matches!(o, SyncOutcome::Created { .. })),
                "created",
            ),
            (
                count(|o| matches!(o, SyncOutcome::Unchanged { .. })),
                "unchanged",
            ),
            (
                count(|o| matches!(o, SyncOutcome::Replaced { .. })),
                "replaced",
            ),
            (
                count(|o| matches!(o, SyncOutcome::Differs { .. })),
                "differ",
            ),
            (
                count(|o| matches!(o, SyncOutcome::Incomplete { .. })),
                "incomplete",
            ),
            (
                count(|o| matches!(o, SyncOutcome::Refused { .. })),
                "refused",
            ),
        ];
        let said: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        if said.is_empty() {
            "nothing to sync".into()
        } else {
            said.join(", ")
        }
    }

    fn push(&mut self, kind: SyncKind, name: &str, outcome: SyncOutcome, notes: Vec<String>) {
        self.items.push(SyncItem {
            kind,
            name: name.to_string(),
            outcome,
            notes,
        });
    }
}
