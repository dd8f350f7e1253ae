//! DDL: turning parsed statements into validated catalog changes. Every failure is a
//! diagnostic; nothing here writes to the catalog (the session applies the returned
//! changes in one batch).

mod column_plans;
mod columns;
mod file_access;
mod generic;
mod profile;
mod registry;
mod schema_def;
mod table;
mod table_options;
mod table_roles;
mod table_schema;
mod unknown;

pub use columns::all_arrow_fields;
pub use generic::{GENERIC_PROFILE_OPTIONS, GENERIC_TABLE_OPTIONS, GenericOption};
pub use profile::{alter_profile, build_profile, drop_profile, lookup as lookup_profile};
pub use registry::{
    FetchedSchema, fetch_registry_schema, plan_sink_registration, register_sink_schema,
    registry_not_fetched,
};
pub use table::build_table;

use tributary_catalog::{CatalogError, ObjectKind};
use tributary_types::{Diagnostic, Span, codes};

/// A catalog error as a diagnostic about the statement at `span`.
pub fn catalog_diagnostic(e: CatalogError, span: Span) -> Diagnostic {
    let code = match &e {
        CatalogError::AlreadyExists { .. } => codes::ALREADY_EXISTS,
        CatalogError::NotFound { .. } => codes::NOT_FOUND,
        CatalogError::ProfileInUse { .. } | CatalogError::ReadBy { .. } => codes::IN_USE,
        CatalogError::Cycle { .. } => codes::PLAN_ERROR,
        _ => codes::CATALOG,
    };
    let d = Diagnostic::error(e.to_string())
        .with_span(span)
        .with_code(code);
    match e {
        CatalogError::AlreadyExists { kind: ObjectKind::Table, .. } => {
            d.with_help("Choose another name, drop the existing table first, or write CREATE TABLE IF NOT EXISTS.")
        }
        CatalogError::AlreadyExists { kind: ObjectKind::Profile, .. } => d.with_help(
            "Choose another name, change it with ALTER CONNECTION PROFILE, or write CREATE CONNECTION PROFILE IF NOT EXISTS.",
        ),
        CatalogError::ProfileInUse { profile, .. } => d.with_help(format!(
            "Drop those tables first, or drop them together with DROP CONNECTION PROFILE {profile} CASCADE."
        )),
        CatalogError::ReadBy { .. } => d.with_help("Drop what reads it first, or write DROP ... CASCADE to drop the views that read it too."),
        CatalogError::Cycle { .. } => d.with_help("A view cannot read itself, even through other views; read the tables instead."),
        CatalogError::AlreadyExists { kind: ObjectKind::View, .. } => d.with_help("Tables and views share one namespace: choose another name, or drop the view first."),
        CatalogError::InUse { .. } => d.with_help("Close the other Tributary process, or point --catalog at another location."),
        CatalogError::NewerFormat { .. } | CatalogError::NewerSchema { .. } => d.with_help("Use a newer Tributary to open this catalog."),
        CatalogError::OlderSchema { .. } => d.with_help("Open the catalog once with `tributary run` or `serve`, which upgrades it, then read it again."),
        CatalogError::Unreachable { .. } => d.with_help("Check that the database is running and that the URL's host, port, user and database are right."),
        CatalogError::BadLocation { .. } => d.with_help("Write the catalog as a directory, or as postgres://user[:password]@host[:port]/database."),
        CatalogError::Corrupt { .. } => d.with_help("Restore the catalog from a backup, or start a new one with --catalog."),
        _ => d,
    }
}
