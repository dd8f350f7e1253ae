//! The integration tests of `tributary-sql`, in one binary: scripts, durability, limits,
//! secrets and schema-registry DDL through the Session. Each test binary links all of
//! DataFusion (about 280 MB unoptimised), so one binary saves CI link steps and disk.

mod deep_stack;
mod limits;
mod registry;
mod script_durability;
mod secrets;
mod session;
