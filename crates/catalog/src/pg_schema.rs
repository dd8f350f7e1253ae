//! The PostgreSQL catalog's schema: versioned migrations, kept in `migrations/` and
//! applied in order, once, by whichever process opens the catalog first. A database whose
//! schema is newer than this build knows is refused.

use crate::error::{CatalogError, Result};
use crate::pg_conn::{PgTarget, pg_detail};
use postgres::Client;

/// The migrations, in order; migration `i` brings the schema to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_catalog.sql"),
    include_str!("../migrations/0002_key_versions.sql"),
    include_str!("../migrations/0003_keys_of_everything.sql"),
];

/// The schema version this build writes.
pub(crate) const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Key of the advisory lock that keeps two processes from migrating at once.
const MIGRATION_LOCK: i64 = 0x7472_6962_7574_6172; // "tributar"

/// Bring the schema up to [`SCHEMA_VERSION`], or refuse a newer one.
pub(crate) fn migrate(client: &mut Client, target: &PgTarget) -> Result<()> {
    let fail = |e: postgres::Error| {
        CatalogError::Storage(format!(
            "cannot prepare catalog '{}': {}",
            target.shown,
            pg_detail(&e)
        ))
    };
    // Fast path: a catalog already at this version needs one read and no lock.
    if let Some(found) = current_version(client).map_err(fail)?
        && found >= SCHEMA_VERSION
    {
        return refuse_newer(found, target);
    }
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .map_err(fail)?;
    let outcome = apply_missing(client).map_err(fail);
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK])
        .map_err(fail);
    let newer = outcome?;
    unlocked?;
    match newer {
        Some(found) => refuse_newer(found, target),
        None => Ok(()),
    }
}

/// Whether the database holds a catalog this build reads as it is: `false` for none; a
/// newer schema is refused, and an older one too (it needs the upgrade that opening it
/// for writing applies, and nothing here may change it).
pub(crate) fn check_existing(client: &mut Client, target: &PgTarget) -> Result<bool> {
    let found = current_version(client).map_err(|e| {
        CatalogError::Storage(format!(
            "cannot read catalog '{}': {}",
            target.shown,
            pg_detail(&e)
        ))
    })?;
    match found {
        None | Some(0) => Ok(false),
        Some(v) if v < SCHEMA_VERSION => Err(CatalogError::OlderSchema {
            location: target.shown.clone(),
            found: v,
            supported: SCHEMA_VERSION,
        }),
        Some(v) => refuse_newer(v, target).map(|()| true),
    }
}

fn refuse_newer(found: i32, target: &PgTarget) -> Result<()> {
    if found > SCHEMA_VERSION {
        return Err(CatalogError::NewerSchema {
            location: target.shown.clone(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// The schema version recorded, or `None` for a database without a catalog.
fn current_version(client: &mut Client) -> Result<Option<i32>, postgres::Error> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('tributary_schema_version') IS NOT NULL",
            &[],
        )?
        .try_get(0)?;
    if !exists {
        return Ok(None);
    }
    let row = client.query_one("SELECT max(version) FROM tributary_schema_version", &[])?;
    Ok(Some(row.try_get::<_, Option<i32>>(0)?.unwrap_or(0)))
}

/// Under the migration lock: apply every migration past the recorded version, each in
/// its own transaction with its version row. Returns the version found when it is newer
/// than this build's.
fn apply_missing(client: &mut Client) -> Result<Option<i32>, postgres::Error> {
    client.batch_execute(
        "CREATE TABLE IF NOT EXISTS tributary_schema_version (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         )",
    )?;
    let found = current_version(client)?.unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Ok(Some(found));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found.max(0) as usize) {
        let version = i as i32 + 1;
        let mut tx = client.transaction()?;
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO tributary_schema_version (version) VALUES ($1)",
            &[&version],
        )?;
        tx.commit()?;
    }
    Ok(None)
}
