//! The one place where Rust errors become Python exceptions.
//!
//! Each [`Error`] variant maps to a class of `frazil.errors`, so users catch
//! `FrazilError` or a precise subclass. Panics are caught by [`guard`] and
//! surface as `frazil.errors.InternalError` instead of aborting the interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::error::{panic_message, Error};

/// The `frazil.errors` class name for each kind of error.
fn class_name(error: &Error) -> &'static str {
    match error {
        Error::UnknownType(_) => "UnknownTypeError",
        Error::InvalidTransform(_) => "InvalidTransformError",
        Error::UnsupportedTransform { .. } => "UnsupportedTransformError",
        Error::TypeMismatch(_) => "FrazilTypeError",
        Error::InvalidValue(_) => "InvalidValueError",
        Error::InvalidData(_) => "InvalidDataError",
        Error::UnknownField(_) => "UnknownFieldError",
        Error::Validation(_) => "ValidationError",
        Error::NotFound(_) => "NotFoundError",
        Error::PermissionDenied(_) => "PermissionDeniedError",
        Error::Io(_) => "FrazilIOError",
        Error::Internal(_) => "InternalError",
    }
}

/// Converts a core error into the matching `frazil.errors` exception.
pub fn to_py(error: Error) -> PyErr {
    Python::attach(|py| {
        let message = error.to_string();
        match py
            .import("frazil.errors")
            .and_then(|module| module.getattr(class_name(&error)))
        {
            Ok(class) => {
                match PyTuple::new(py, [message.as_str()]).and_then(|args| class.call1(args)) {
                    Ok(instance) => PyErr::from_value(instance),
                    Err(e) => e,
                }
            }
            Err(e) => e,
        }
    })
}

/// Runs `work`, turning a panic into [`Error::Internal`] so that it reaches
/// Python as `frazil.errors.InternalError`.
pub fn guard<T>(work: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => Err(Error::Internal(format!(
            "panic in frazil's Rust core: {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// `guard`, then conversion to a Python exception.
pub fn run<T>(work: impl FnOnce() -> crate::Result<T>) -> PyResult<T> {
    guard(work).map_err(to_py)
}

/// Panics inside [`run`]: lets the test suite prove that a panic in the core
/// reaches Python as `frazil.errors.InternalError` instead of aborting.
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    run(|| -> crate::Result<()> { panic!("{message}") })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    Ok(())
}
