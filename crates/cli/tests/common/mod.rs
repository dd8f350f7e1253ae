//! Helpers shared by the binary's integration tests.

pub mod browser;
pub mod server;
