//! Bindings for equality deletes: `EqualityDeleteSet`, the delete keys of one
//! set of equality field ids, applied to pyarrow batches as an anti-join.
//! The GIL is released while keys are encoded and batches filtered.

use arrow_array::ArrayRef;
use pyo3::prelude::*;

use super::arrow_in::{ArrowBatch, ArrowSchema};
use super::errors::run;
use crate::arrow::equality_deletes::EqualityDeleteSet as Set;
use crate::error::Error;

/// The delete keys of equality delete files that share their equality field
/// ids, as columns of `key_schema` (one field per delete column, in order).
#[pyclass(module = "frazil._native", name = "EqualityDeleteSet")]
pub struct PyEqualityDeleteSet {
    inner: Set,
}

/// The columns of `batch` named by `keys` (names or indices), in that order.
fn key_indices(
    batch: &arrow_array::RecordBatch,
    keys: &[KeyColumn],
    source: &str,
) -> crate::Result<Vec<usize>> {
    keys.iter()
        .map(|key| match key {
            KeyColumn::Index(i) => Ok(*i),
            KeyColumn::Name(name) => batch.schema().index_of(name).map_err(|_| {
                Error::UnknownField(format!(
                    "{source}: the batch has no column {name:?} (columns: {:?})",
                    batch
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                ))
            }),
        })
        .collect()
}

#[derive(FromPyObject)]
enum KeyColumn {
    Index(usize),
    Name(String),
}

#[pymethods]
impl PyEqualityDeleteSet {
    #[new]
    fn new(key_schema: ArrowSchema) -> PyResult<Self> {
        let inner = run(|| Set::new(key_schema.into_inner()))?;
        Ok(PyEqualityDeleteSet { inner })
    }

    /// The key columns' pyarrow schema.
    #[getter]
    fn key_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        super::arrow::schema(py, self.inner.schema().clone())
    }

    /// Adds the rows of `keys` (a pyarrow RecordBatch of the key columns, in
    /// order) as delete keys; `source` (the delete file) names them in errors.
    #[pyo3(signature = (keys, source="<equality delete file>"))]
    fn add(&mut self, py: Python<'_>, keys: ArrowBatch, source: &str) -> PyResult<()> {
        let batch = keys.into_inner();
        let columns: Vec<ArrayRef> = batch.columns().to_vec();
        let inner = &mut self.inner;
        py.detach(|| run(|| inner.add(&columns, source)))
    }

    /// A pyarrow boolean array: true for each row of `keys` (the data's key
    /// columns, in order) that a delete key matches.
    #[pyo3(signature = (keys, source="<data file>"))]
    fn deleted_mask<'py>(
        &self,
        py: Python<'py>,
        keys: ArrowBatch,
        source: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = keys.into_inner();
        let columns: Vec<ArrayRef> = batch.columns().to_vec();
        let mask = py.detach(|| run(|| self.inner.deleted_mask(&columns, source)))?;
        let array: ArrayRef = std::sync::Arc::new(mask);
        super::arrow::array(
            py,
            &array,
            std::sync::Arc::new(arrow_schema::Field::new(
                "_deleted",
                arrow_schema::DataType::Boolean,
                false,
            )),
        )
    }

    /// `batch` without the rows a delete key matches; `key_columns` name (or
    /// index) the batch's key columns, in the set's order.
    #[pyo3(signature = (batch, key_columns, source="<data file>"))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        batch: ArrowBatch,
        key_columns: Vec<KeyColumn>,
        source: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = batch.into_inner();
        let kept = py.detach(|| {
            run(|| {
                let indices = key_indices(&batch, &key_columns, source)?;
                self.inner.apply(&batch, &indices, source)
            })
        })?;
        super::arrow::record_batch(py, kept)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyEqualityDeleteSet>()
}
