//! The Python extension module `frazil._native`.
//!
//! This layer only converts between Python and Rust and releases the GIL
//! around heavy work; all logic lives in the plain-Rust modules.

use pyo3::prelude::*;

mod arrow;
mod arrow_in;
mod avro_bench_hooks;
mod avro_data;
mod deletes;
mod equality_deletes;
mod errors;
mod expressions;
mod expressions_test_hooks;
mod file_match;
mod io;
mod key_join;
mod manifest;
mod read;
mod scan;
mod scan_distributed;
mod scan_table;
mod spec;
mod transforms;
mod values;
mod write;

/// The extension's global allocator: the buffers of the batches filtered in
/// Rust (deleted rows dropped) live as long as the caller's pyarrow Table.
/// glibc's malloc maps each such large buffer fresh and unmaps it on free,
/// so every batch page-faulted new memory (about 10 faults per 1,000 rows
/// read with position deletes); mimalloc keeps freed memory for reuse, as
/// pyarrow's own pool (also mimalloc) does for the decoded columns.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    transforms::register(m)?;
    io::register(m)?;
    deletes::register(m)?;
    equality_deletes::register(m)?;
    key_join::register(m)?;
    manifest::register(m)?;
    scan::register(m)?;
    scan_table::register(m)?;
    read::register(m)?;
    avro_data::register(m)?;
    values::register(m)?;
    expressions::register(m)?;
    expressions_test_hooks::register(m)?;
    file_match::register(m)?;
    avro_bench_hooks::register(m)?;
    spec::register(m)?;
    write::register(m)?;
    m.add_function(wrap_pyfunction!(set_thread_limit, m)?)?;
    Ok(())
}

/// Limits the threads the core uses for "all cores" (0: no limit); see
/// `frazil._threads`.
#[pyfunction]
fn set_thread_limit(threads: usize) {
    crate::runtime::set_thread_limit(threads);
}
