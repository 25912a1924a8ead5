//! Bindings for the key join of upserts: `KeyIndex` (the source rows' keys,
//! probed with the target's) and `rows_differ`. Column lists come as a
//! pyarrow RecordBatch or Table (one column a field), or as a list of
//! Arrays / ChunkedArrays (one a column); both are imported through the
//! Arrow C data interface without copying. The GIL is released while keys
//! are indexed, probed and compared.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Field};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::arrow;
use super::arrow_in::{any_array, exports_arrow, ArrowValues};
use super::errors::{run, to_py};
use crate::arrow::key_join::{rows_differ_chunked, ChunkedColumns, KeyIndex};
use crate::error::Error;

/// The columns of `obj`: a list or tuple of arrays or chunked arrays, one a
/// column; or a record batch or table (anything exporting Arrow data of a
/// struct type without null rows), one column a field, named by the
/// fields; or one array or chunked array of another type, one column.
fn columns(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ChunkedColumns> {
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut columns = Vec::new();
        for item in obj.try_iter()? {
            let (chunks, field) = any_array(&item?)?.into_chunks();
            columns.push((field.data_type().clone(), chunks));
        }
        return ChunkedColumns::from_columns(columns).map_err(|e| to_py(in_arg(e, what)));
    }
    if !exports_arrow(obj)? {
        let kind = obj.get_type().name()?.to_string();
        return Err(to_py(Error::TypeMismatch(format!(
            "{what} must be a pyarrow RecordBatch or Table, or a list of Arrays or \
             ChunkedArrays, not {kind}"
        ))));
    }
    let (chunks, field) = match any_array(obj)? {
        ArrowValues::Array(array, field) => (vec![array], field),
        ArrowValues::Chunked(chunks, field) => (chunks, field),
    };
    let result = match field.data_type() {
        DataType::Struct(fields) => batches(&chunks).and_then(|batches| {
            let types = fields.iter().map(|f| f.data_type().clone()).collect();
            let names = fields.iter().map(|f| f.name().clone()).collect();
            ChunkedColumns::from_batches(types, batches)?.with_names(names)
        }),
        other => ChunkedColumns::from_columns(vec![(other.clone(), chunks)]),
    };
    result.map_err(|e| to_py(in_arg(e, what)))
}

/// The columns of each chunk of a struct array (a batch: no null rows).
fn batches(chunks: &[ArrayRef]) -> crate::Result<Vec<Vec<ArrayRef>>> {
    chunks
        .iter()
        .map(|chunk| {
            if chunk.null_count() != 0 {
                return Err(Error::Validation(
                    "a struct array with null rows is not a record batch".into(),
                ));
            }
            Ok(chunk.as_struct().columns().to_vec())
        })
        .collect()
}

/// `error` with the argument it concerns named.
fn in_arg(error: Error, what: &str) -> Error {
    match error {
        Error::Validation(m) => Error::Validation(format!("{what}: {m}")),
        Error::TypeMismatch(m) => Error::TypeMismatch(format!("{what}: {m}")),
        other => other,
    }
}

fn rows_array<'py>(py: Python<'py>, array: ArrayRef, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let field = Arc::new(Field::new(name, array.data_type().clone(), false));
    arrow::array(py, &array, field)
}

/// The keys of an upsert's source rows (the rows to upsert), each mapped to
/// its row; probed with the target table's keys. Keys compare with SQL join
/// equality: a key holding a null matches nothing, NaN equals NaN, -0.0
/// equals 0.0. A duplicate non-null key is a ValidationError naming it.
#[pyclass(module = "frazil._native", name = "KeyIndex", frozen)]
pub struct PyKeyIndex {
    inner: KeyIndex,
}

#[pymethods]
impl PyKeyIndex {
    /// `keys`: the source's key columns, in order; `source` names them in errors.
    #[new]
    #[pyo3(signature = (keys, source="<source>"))]
    fn new(py: Python<'_>, keys: &Bound<'_, PyAny>, source: &str) -> PyResult<Self> {
        let columns = columns(keys, "keys")?;
        let inner = py.detach(|| run(|| KeyIndex::build_chunked(&columns, source)))?;
        Ok(PyKeyIndex { inner })
    }

    /// The probe rows of `keys` (the target's key columns, of the source's
    /// types) whose key matches a source row, in order, and that source row
    /// for each: two pyarrow uint32 arrays. Records the matched source rows;
    /// safe to call from several threads at once.
    fn probe<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let columns = columns(keys, "keys")?;
        let (probe_rows, source_rows) = py.detach(|| run(|| self.inner.probe_chunked(&columns)))?;
        Ok((
            rows_array(py, Arc::new(probe_rows), "probe_row")?,
            rows_array(py, Arc::new(source_rows), "source_row")?,
        ))
    }

    /// The source rows no probe has matched (null keys among them), as a
    /// pyarrow uint32 array: the inserts of a MERGE.
    fn unmatched<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rows = py.detach(|| self.inner.unmatched());
        rows_array(py, Arc::new(rows), "source_row")
    }

    /// The number of distinct source rows probes have matched.
    fn matched_count(&self) -> usize {
        self.inner.matched_count()
    }

    /// The number of source rows (null keys included).
    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

/// A pyarrow boolean array: for each row, whether any column of `left`
/// differs from the same column of `right` (as many columns, of equal
/// types and lengths). Null equals null, NaN equals NaN, -0.0 differs from
/// 0.0; nested values compare by value.
#[pyfunction]
fn rows_differ<'py>(
    py: Python<'py>,
    left: &Bound<'py, PyAny>,
    right: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (left, right) = (columns(left, "left")?, columns(right, "right")?);
    let mask = py.detach(|| run(|| rows_differ_chunked(&left, &right)))?;
    rows_array(py, Arc::new(mask), "differs")
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKeyIndex>()?;
    m.add_function(wrap_pyfunction!(rows_differ, m)?)?;
    Ok(())
}
