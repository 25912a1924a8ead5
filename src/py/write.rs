//! Bindings of `crate::write`: a pyarrow Table reordered by an index array
//! and per-file column statistics, Arrow crossing through the C data
//! interface without copies.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::arrow_in::{any_array, ArrowTable, ArrowValues};
use super::errors::run;
use crate::write::{gather, group, scatter, stats};

/// The rows of `table` in the order of `indices` (integers, no nulls, each
/// below `table.num_rows`) as a pyarrow Table of one batch with `table`'s
/// schema; columns gathered on `threads` workers (0: every core) without the
/// GIL. Bad indices raise a FrazilError naming the column.
#[pyfunction]
#[pyo3(signature = (table, indices, threads=0))]
fn gather_rows<'py>(
    py: Python<'py>,
    table: ArrowTable,
    #[pyo3(from_py_with = any_array)] indices: ArrowValues,
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (batches, schema) = table.into_inner();
    let (chunks, _) = indices.into_chunks();
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

/// The rows of `table` grouped by partition (a counting sort): `keys`, one
/// array per partition field as long as the table (integers or date32,
/// nulls allowed; other values encoded as integer codes first), give each
/// row its group; groups come in ascending order of their keys (null
/// last), rows in input order within a group. Returns the reordered table
/// (None when there is at most one group: the table as it is), the row
/// count of each group and the first input row of each. Columns are moved
/// on `threads` workers (0: every core) without the GIL.
#[pyfunction]
#[pyo3(signature = (table, keys, threads=0))]
#[allow(clippy::type_complexity)]
fn partition_rows<'py>(
    py: Python<'py>,
    table: ArrowTable,
    keys: Vec<Bound<'py, PyAny>>,
    threads: usize,
) -> PyResult<(Option<Bound<'py, PyAny>>, Vec<usize>, Vec<usize>)> {
    let (batches, schema) = table.into_inner();
    let keys = keys
        .iter()
        .map(|key| Ok(any_array(key)?.into_chunks().0))
        .collect::<PyResult<Vec<_>>>()?;
    let threads = if threads == 0 {
        crate::runtime::available_threads()
    } else {
        threads
    };
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let (grouping, batch) = py.detach(|| {
        run(|| {
            let joined = keys
                .iter()
                .enumerate()
                .map(|(position, chunks)| join(chunks, position))
                .collect::<crate::Result<Vec<_>>>()?;
            let refs: Vec<&dyn arrow_array::Array> = joined.iter().map(|k| k.as_ref()).collect();
            let grouping = group::group_rows(&refs, rows)?;
            let batch = if grouping.groups() > 1 {
                Some(scatter::scatter(&batches, schema, &grouping, threads)?)
            } else {
                None
            };
            Ok((grouping, batch))
        })
    })?;
    let lengths = grouping.starts.windows(2).map(|w| w[1] - w[0]).collect();
    let table = batch
        .map(|b| super::arrow::batch_table(py, b))
        .transpose()?;
    Ok((table, lengths, grouping.first_rows))
}

/// One array of a key's chunks.
fn join(chunks: &[arrow_array::ArrayRef], position: usize) -> crate::Result<arrow_array::ArrayRef> {
    match chunks {
        [one] => Ok(one.clone()),
        // No chunks: no values (the length check catches a table with rows).
        [] => Ok(arrow_array::new_empty_array(&arrow_schema::DataType::Int64)),
        _ => {
            let parts: Vec<_> = chunks.iter().map(|c| c.as_ref()).collect();
            arrow_select::concat::concat(&parts).map_err(|e| {
                crate::Error::InvalidValue(format!("partitioning: joining key {position}: {e}"))
            })
        }
    }
}

/// The least and greatest non-null values of a string or binary array (or
/// chunked array), by unsigned bytes, as `(bytes, bytes)`; None when every
/// value is null.
#[pyfunction]
fn bytes_min_max<'py>(
    py: Python<'py>,
    #[pyo3(from_py_with = any_array)] values: ArrowValues,
) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
    let (chunks, _) = values.into_chunks();
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
    #[pyo3(from_py_with = any_array)] values: ArrowValues,
) -> PyResult<Option<usize>> {
    let array = match values {
        ArrowValues::Array(array, _) => array,
        ArrowValues::Chunked(chunks, field) => {
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
    m.add_function(wrap_pyfunction!(partition_rows, m)?)?;
    m.add_function(wrap_pyfunction!(bytes_min_max, m)?)?;
    m.add_function(wrap_pyfunction!(distinct_count, m)?)?;
    Ok(())
}
