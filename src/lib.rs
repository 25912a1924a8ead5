//! frazil's Rust core: the hot paths of the Apache Iceberg table format.
//!
//! Modules are named after the spec's concepts so that a reader who knows
//! Iceberg finds each rule where they expect it. Everything here is plain Rust,
//! tested with `cargo test`; the Python bindings live in [`py`] behind the
//! `python` feature and only convert values and release the GIL.

pub mod arrow;
pub mod avro;
pub mod avro_data;
pub mod error;
pub mod expr;
pub mod io;
pub mod json;
pub mod manifest;
pub mod memo;
pub mod murmur3;
pub mod puffin;
pub mod runtime;
pub mod scan;
pub mod spec;
pub mod transform;
pub mod values;
pub mod write;

/// The type model lives in [`spec::types`]; this path is kept for the
/// modules written before `spec/` existed.
pub use spec::types;

#[cfg(feature = "python")]
mod py;

pub use error::{Error, Result};
