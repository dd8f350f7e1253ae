//! Helpers shared by the binary's integration tests.

pub mod browser;
pub mod catalog_files;
pub mod server;
