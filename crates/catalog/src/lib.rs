//! The catalog: connection profiles and connection tables, persisted.
//!
//! [`CatalogStore`] is the storage interface; [`SledStore`] is the embedded default,
//! [`PostgresStore`] a catalog many processes share, and [`OverlayStore`] layers uncommitted changes over any store (what `tributary check` uses).
//! The catalog knows nothing of SQL: it stores validated records, keeps names unique
//! case-insensitively, records which tables use which profile, and applies each statement's
//! changes atomically and durably.

mod copy;
mod definition_rules;
mod error;
mod group_commit;
mod ids;
mod overlay;
mod pg_bulk;
mod pg_compose;
mod pg_conn;
mod pg_keys;
mod pg_prefetch;
mod pg_schema;
mod pg_store;
mod pg_write;
mod record_rules;
mod records;
mod sled_core;
mod sled_files;
mod sled_store;
mod sled_write;
mod staging;
mod store;
#[cfg(feature = "test-support")]
pub mod testing;

pub use copy::{CopySummary, copy_catalog, count};
pub use error::{CatalogError, Result};
pub use group_commit::{PendingWrite, StagedWrite, WriteOutcome};
pub use ids::{new_profile_id, new_table_id, now_micros};
pub use overlay::OverlayStore;
pub use pg_conn::{is_postgres_url, postgres_application_name, postgres_url_shown};
pub use pg_store::PostgresStore;
pub use sled_files::{Holder, LockWait, ServerNotice, describe_this_process};
pub use sled_store::SledStore;
pub use staging::{StagingLimits, StagingStore};
pub use store::{CatalogStore, Change, ObjectKind};
