//! Tributary's SQL layer.

pub mod parser;
