//! frazil's Rust core: the hot paths of the Apache Iceberg table format.
//!
//! Modules are named after the spec's concepts so that a reader who knows
//! Iceberg finds each rule where they expect it. Everything here is plain Rust,
//! tested with `cargo test`; the Python bindings live in [`py`] behind the
//! `python` feature and only convert values and release the GIL.

pub mod avro;
pub mod error;
pub mod manifest;
pub mod memo;
pub mod murmur3;
pub mod runtime;
pub mod transform;
pub mod types;
pub mod values;

#[cfg(feature = "python")]
mod py;

pub use error::{Error, Result};

/// The extension allocates through mimalloc: reading a manifest makes and
/// frees many small Arrow buffers, and kernels free and reallocate large
/// outputs, both of which glibc's malloc serves slowly (heap consolidation,
/// and fresh page faults for every output past its mmap threshold). Buffers
/// handed to pyarrow are freed through their Rust release callback, so they
/// return to this allocator.
#[cfg(feature = "python")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
