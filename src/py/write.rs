//! Bindings of `crate::write`: a pyarrow Table reordered by an index array
//! and per-file column statistics, Arrow crossing through the C data
//! interface without copies.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use pyo3_arrow::input::AnyArray;

use super::arrow_in::{any_array, ArrowTable};
use super::errors::run;
use crate::write::{gather, stats};

/// The rows of `table` in the order of `indices` (integers, no nulls, each
/// below `table.num_rows`) as a pyarrow Table of one batch with `table`'s
/// schema; columns gathered on `threads` workers (0: every core) without the
/// GIL. Bad indices raise a FrazilError naming the column.
#[pyfunction]
#[pyo3(signature = (table, indices, threads=0))]
fn gather_rows<'py>(
    py: Python<'py>,
    table: ArrowTable,
    #[pyo3(from_py_with = any_array)] indices: AnyArray,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (batches, schema) = table.into_inner();
    let indices = indices.into_chunked_array()?;
    let (chunks, _) = indices.into_inner();
    let threads = if threads == 0 {
        crate::runtime::available_threads()
    } else {
        threads
    };
    let batch = py.detach(|| {
        run(|| {
            let joined;
            let indices: &dyn arrow_array::Array = match chunks.as_slice() {
                [one] => one.as_ref(),
                _ => {
                    let parts: Vec<_> = chunks.iter().map(|c| c.as_ref()).collect();
                    if parts.is_empty() {
                        return Err(crate::Error::InvalidValue(
                            "gather: indices of unknown type (no chunks)".into(),
                        ));
                    }
                    joined = arrow_select::concat::concat(&parts).map_err(|e| {
                        crate::Error::InvalidValue(format!("gather: joining the indices: {e}"))
                    })?;
                    joined.as_ref()
                }
            };
            gather::gather(&batches, schema, indices, threads)
        })
    })?;
    super::arrow::batch_table(py, batch)
}

/// The least and greatest non-null values of a string or binary array (or
/// chunked array), by unsigned bytes, as `(bytes, bytes)`; None when every
/// value is null.
#[pyfunction]
fn bytes_min_max<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = any_array)] values: AnyArray,
) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
    let (chunks, _) = values.into_chunked_array()?.into_inner();
    let found = py.detach(|| {
        run(|| {
            let mut found: Option<(Vec<u8>, Vec<u8>)> = None;
            for chunk in &chunks {
                if let Some((low, high)) = stats::bytes_min_max(chunk.as_ref())? {
                    found = Some(match found {
                        None => (low, high),
                        Some((l, h)) => (l.min(low), h.max(high)),
                    });
                }
            }
            Ok(found)
        })
    })?;
    Ok(found.map(|(low, high)| (PyBytes::new(py, &low), PyBytes::new(py, &high))))
}

/// The number of distinct non-null values of an array of strings, binary or
/// fixed-width values, by their bytes; None for other types.
#[pyfunction]
fn distinct_count(
    py: Python<'_>,
    #[pyo3(from_py_with = any_array)] values: AnyArray,
) -> PyResult<Option<usize>> {
    let array = match values {
        AnyArray::Array(array) => array.into_inner().0,
        AnyArray::Stream(stream) => {
            let (chunks, field) = AnyArray::Stream(stream).into_chunked_array()?.into_inner();
            let parts: Vec<_> = chunks.iter().map(|c| c.as_ref()).collect();
            if parts.is_empty() {
                arrow_array::new_empty_array(field.data_type())
            } else if let [one] = chunks.as_slice() {
                one.clone()
            } else {
                arrow_select::concat::concat(&parts).map_err(|e| {
                    super::errors::to_py(crate::Error::InvalidValue(format!(
                        "distinct_count: joining the chunks: {e}"
                    )))
                })?
            }
        }
    };
    Ok(py.detach(|| stats::distinct_count(array.as_ref())))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gather_rows, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_min_max, m)?)?;
    m.add_function(wrap_pyfunction!(distinct_count, m)?)?;
    Ok(())
}
