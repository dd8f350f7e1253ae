//! Catalog errors.

use crate::store::ObjectKind;
use std::path::PathBuf;

/// The catalog's result type.
pub type Result<T, E = CatalogError> = std::result::Result<T, E>;

/// What can go wrong in the catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// Another process holds the catalog open.
    #[error("catalog '{}' is in use by {}", path.display(), match (server, holder) {
        (Some(url), _) => format!("the Tributary server at {url}"),
        (None, Some(h)) => h.to_string(),
        (None, None) => "another process".to_string(),
    })]
    InUse {
        /// The catalog's location.
        path: PathBuf,
        /// The address of the `tributary serve` holding it, when a server does.
        server: Option<String>,
        /// The process holding it, as it recorded itself, when it still runs.
        holder: Option<crate::sled_files::Holder>,
    },
    /// The catalog's files could not be read or written.
    #[error("cannot open catalog '{}': {source}", path.display())]
    Io {
        /// The catalog's location.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The stored data cannot be read.
    #[error("catalog '{}' is corrupt: {detail}", path.display())]
    Corrupt {
        /// The catalog's location.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The catalog was written by a newer Tributary.
    #[error("catalog '{}' was written in format version {found}, but this build reads versions up to {supported}", path.display())]
    NewerFormat {
        /// The catalog's location.
        path: PathBuf,
        /// The version found.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// A name is taken.
    #[error("{kind} '{name}' already exists")]
    AlreadyExists {
        /// Profile or table.
        kind: ObjectKind,
        /// The name as stored.
        name: String,
    },
    /// An object does not exist.
    #[error("{kind} '{name}' does not exist")]
    NotFound {
        /// Profile or table.
        kind: ObjectKind,
        /// The name or id asked for.
        name: String,
    },
    /// A profile still used by tables cannot be dropped.
    #[error("connection profile '{profile}' is used by {} table(s): {}", tables.len(), tables.join(", "))]
    ProfileInUse {
        /// The profile's name.
        profile: String,
        /// The names of the tables using it.
        tables: Vec<String>,
    },
    /// A table, view or function that views or functions still read cannot be dropped.
    #[error("{kind} '{name}' is read by {}", readers.join(", "))]
    ReadBy {
        /// What would be dropped.
        kind: ObjectKind,
        /// Its name.
        name: String,
        /// What reads it, as `view name` or `function name`.
        readers: Vec<String>,
    },
    /// A definition would read itself.
    #[error("'{name}' would read itself through '{through}'")]
    Cycle {
        /// The definition.
        name: String,
        /// The name it reads that leads back to it.
        through: String,
    },
    /// A copy's target already holds objects.
    #[error("catalog '{location}' is not empty: it holds {holds}")]
    NotEmpty {
        /// The target catalog (a database without its password).
        location: String,
        /// What it holds.
        holds: String,
    },
    /// A catalog location that cannot be used.
    #[error("bad catalog location: {detail}")]
    BadLocation {
        /// What is wrong (never the location itself, which may hold a password).
        detail: String,
    },
    /// The catalog's database cannot be reached.
    #[error("cannot connect to catalog '{location}': {detail}")]
    Unreachable {
        /// The database, without its password.
        location: String,
        /// Why.
        detail: String,
    },
    /// The catalog's database schema is older than this build's, and the catalog was
    /// opened to be read only.
    #[error("catalog '{location}' has schema version {found}, older than this build's {supported}")]
    OlderSchema {
        /// The database, without its password.
        location: String,
        /// The version found.
        found: i32,
        /// This build's version.
        supported: i32,
    },
    /// The catalog's database schema was made by a newer Tributary.
    #[error(
        "catalog '{location}' has schema version {found}, but this build knows versions up to {supported}"
    )]
    NewerSchema {
        /// The database, without its password.
        location: String,
        /// The version found.
        found: i32,
        /// The newest version this build knows.
        supported: i32,
    },
    /// The storage engine failed.
    #[error("catalog storage error: {0}")]
    Storage(String),
}
