//! DataFusion integration: the catalog and schema providers backed by a [`CatalogStore`],
//! one table provider per connection table, its scan and sink plan nodes, and the checks
//! on planned queries (sources are read, sinks written, lookups joined).
//!
//! [`CatalogStore`]: tributary_catalog::CatalogStore

mod catalog;
mod checks;
mod exec;
mod table;

pub use catalog::{SessionShared, TributaryCatalogProvider, TributarySchemaProvider};
pub(crate) use checks::check_plan;
pub use table::ConnectionTableProvider;
