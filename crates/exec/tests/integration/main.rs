//! The integration tests of `tributary-exec`: scans, sinks, lookups, windows and previews
//! against real services and peers on 127.0.0.1, driven through a `Session` as users
//! drive them. One binary: each test binary links all of DataFusion (about 280 MB
//! unoptimised), so one instead of several saves CI link steps and disk.

mod connection_tests;
mod event_time;
mod file_sinks;
mod live_previews;
mod lookups;
mod preview_harness;
mod reading;
mod windows;
mod writing;
