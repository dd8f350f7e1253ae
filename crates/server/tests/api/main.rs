//! The REST API through its router, without TCP: Arroyo's request and response shapes,
//! authentication on every route, every limit, the lifecycle of profiles and tables, and
//! the OpenAPI document against the routes served. One test binary (each links
//! DataFusion).

#![allow(clippy::unwrap_used)] // Tests panic on failure.

mod boundary;
mod common;
mod console_requests;
mod contract;
mod guards;
mod lifecycle;
mod openapi;
mod roundtrip;
mod statuses;
mod streaming;
