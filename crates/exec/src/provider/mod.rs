//! DataFusion integration: the catalog and schema providers backed by a [`CatalogStore`],
//! one table provider per connection table, its scan and sink plan nodes, lookup joins
//! (a logical node, its optimizer rule and physical node), and the checks on planned
//! queries (sources are read, sinks written, lookups joined). A table of changes
//! (Debezium) is read as the rows its changes leave live (`changelog`).
//!
//! [`CatalogStore`]: tributary_catalog::CatalogStore

mod bounds;
mod cache;
mod catalog;
mod changelog;
mod checks;
mod connect;
mod exec;
mod lookup;
mod lookup_cache;
mod lookup_exec;
mod lookup_stream;
mod prompt;
mod rows;
mod scan;
pub mod script;
mod sink;
mod streaming_rules;
mod table;
mod views;
mod writing;

pub use bounds::unbounded_reads;
pub use catalog::{SessionShared, TributaryCatalogProvider, TributarySchemaProvider};
pub use checks::{check_plan, file_write_notes};
pub use lookup::{LookupJoin, LookupJoins};
pub use lookup_exec::{LookupJoinExec, TributaryQueryPlanner};
pub use prompt::PromptRows;
pub use streaming_rules::{StatementText, streaming_violations};
pub use table::ConnectionTableProvider;
pub use views::named_columns;
