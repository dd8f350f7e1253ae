//! A client for the Confluent Schema Registry REST API: fetch a subject's schema (latest or
//! a pinned version), a schema by id, its references (recursively), and register a schema
//! for a sink. Every request has a bounded timeout, and every error says which URL was
//! asked and what came back. Credentials are never part of an error.
//!
//! With the `testing` feature, [`testing::FakeRegistry`] serves the same endpoints on
//! 127.0.0.1 for tests.

mod client;
mod error;
mod model;
#[cfg(feature = "testing")]
pub mod testing;

pub use client::{DEFAULT_TIMEOUT, RegistryClient};
pub use error::RegistryError;
pub use model::{Reference, RegisteredSchema, SchemaType, Version};
