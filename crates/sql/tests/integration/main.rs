//! The integration tests of `tributary-sql`, in one binary: each test binary links all of
//! DataFusion (about 280 MB unoptimised), so one binary instead of three saves CI a few
//! link steps and most of a gigabyte of disk.

mod arroyo_target;
mod connection_tests;
mod event_time;
mod file_sinks;
mod limits;
mod live_previews;
mod lookups;
mod preview_harness;
mod reading;
mod registry;
mod script_durability;
mod secrets;
mod session;
mod windows;
mod writing;
