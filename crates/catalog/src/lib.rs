//! The catalog: connection profiles and connection tables, persisted.
//!
//! [`CatalogStore`] is the storage interface; [`SledStore`] is the embedded default and
//! [`OverlayStore`] layers uncommitted changes over any store (what `tributary check` uses).
//! The catalog knows nothing of SQL: it stores validated records, keeps names unique
//! case-insensitively, records which tables use which profile, and applies each statement's
//! changes atomically and durably.

mod definition_rules;
mod error;
mod group_commit;
mod ids;
mod overlay;
mod sled_core;
mod sled_files;
mod sled_store;
mod sled_write;
mod store;

pub use error::{CatalogError, Result};
pub use group_commit::PendingWrite;
pub use ids::{new_profile_id, new_table_id, now_micros};
pub use overlay::OverlayStore;
pub use sled_files::{LockWait, ServerNotice};
pub use sled_store::SledStore;
pub use store::{CatalogStore, Change, ObjectKind};
