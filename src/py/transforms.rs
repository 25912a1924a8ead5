//! Bindings for `frazil.transforms`: the transform model and the Arrow kernels.

use std::sync::Arc;

use arrow_array::ArrayRef;
use arrow_schema::{Field, FieldRef};
use pyo3::prelude::*;

use super::arrow;
use super::arrow_in::{any_array, ArrowValues};
use super::errors::{run, to_py};
use crate::transform::{kernels, Transform};
use crate::types::PrimitiveType;

/// A partition transform (spec: "Partition Transforms"), parsed from its
/// Appendix C string such as ``"bucket[16]"``.
#[pyclass(frozen, eq, hash, name = "Transform", module = "frazil.transforms")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct PyTransform(pub Transform);

#[pymethods]
impl PyTransform {
    #[new]
    fn new(text: &str) -> PyResult<Self> {
        Transform::parse(text).map(Self).map_err(to_py)
    }

    /// The transform's name without its parameter: ``"bucket"``, ``"day"``, ...
    #[getter]
    fn name(&self) -> &'static str {
        match self.0 {
            Transform::Identity => "identity",
            Transform::Bucket(_) => "bucket",
            Transform::Truncate(_) => "truncate",
            Transform::Year => "year",
            Transform::Month => "month",
            Transform::Day => "day",
            Transform::Hour => "hour",
            Transform::Void => "void",
        }
    }

    /// N of ``bucket[N]`` or W of ``truncate[W]``; ``None`` for the others.
    #[getter]
    fn parameter(&self) -> Option<u32> {
        match self.0 {
            Transform::Bucket(n) | Transform::Truncate(n) => Some(n),
            _ => None,
        }
    }

    #[getter]
    fn preserves_order(&self) -> bool {
        self.0.preserves_order()
    }

    fn can_transform(&self, source_type: &str) -> PyResult<bool> {
        let source = PrimitiveType::parse(source_type).map_err(to_py)?;
        Ok(self.0.can_transform(source))
    }

    fn result_type(&self, source_type: &str) -> PyResult<String> {
        let source = PrimitiveType::parse(source_type).map_err(to_py)?;
        self.0
            .result_type(source)
            .map(|t| t.to_string())
            .map_err(to_py)
    }

    #[pyo3(signature = (other, source_type=None))]
    fn satisfies_order_of(&self, other: &PyTransform, source_type: Option<&str>) -> PyResult<bool> {
        let source = source_type
            .map(PrimitiveType::parse)
            .transpose()
            .map_err(to_py)?;
        Ok(self.0.satisfies_order_of(&other.0, source))
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("Transform({:?})", self.0.to_string())
    }
}

/// The field describing a kernel's output: the input field when the type is
/// unchanged (so extension types such as ``arrow.uuid`` survive identity and
/// truncate), else a plain nullable field of the new type.
fn output_field(input: &FieldRef, output: &ArrayRef) -> FieldRef {
    if input.data_type() == output.data_type() {
        input.clone()
    } else {
        Arc::new(Field::new(input.name(), output.data_type().clone(), true))
    }
}

/// Applies `transform` to an Arrow array or stream. Returns a pyarrow Array for
/// an array input and a pyarrow ChunkedArray for a stream input.
#[pyfunction]
#[pyo3(signature = (transform, values, threads=1))]
fn apply_transform(
    py: Python<'_>,
    transform: &PyTransform,
    #[pyo3(from_py_with = any_array)] values: ArrowValues,
    threads: usize,
) -> PyResult<Py<PyAny>> {
    let transform = transform.0;
    let threads = if threads == 0 {
        crate::runtime::available_threads()
    } else {
        threads
    };
    match values {
        ArrowValues::Array(input, field) => {
            let output =
                py.detach(|| run(|| kernels::apply_threaded(transform, &input, threads)))?;
            let field = output_field(&field, &output);
            Ok(arrow::array(py, &output, field)?.unbind())
        }
        ArrowValues::Chunked(chunks, field) => {
            let outputs = py.detach(|| {
                run(|| {
                    chunks
                        .iter()
                        .map(|chunk| kernels::apply_threaded(transform, chunk, threads))
                        .collect::<crate::Result<Vec<_>>>()
                })
            })?;
            let out_field = match outputs.first() {
                Some(first) => output_field(&field, first),
                None => {
                    let empty =
                        kernels::apply(transform, &arrow_array::new_empty_array(field.data_type()))
                            .map_err(to_py)?;
                    output_field(&field, &empty)
                }
            };
            Ok(arrow::chunked_array(py, &outputs, out_field)?.unbind())
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTransform>()?;
    m.add_function(wrap_pyfunction!(apply_transform, m)?)?;
    Ok(())
}
