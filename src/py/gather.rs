//! Binding of `write::gather`: a pyarrow Table reordered by an index array,
//! Arrow crossing both ways through the C data interface without copies.

use pyo3::prelude::*;
use pyo3_arrow::input::AnyArray;
use pyo3_arrow::PyTable;

use super::errors::run;
use crate::write::gather;

/// The rows of `table` in the order of `indices` (integers, no nulls, each
/// below `table.num_rows`) as a pyarrow Table of one batch with `table`'s
/// schema; columns gathered on `threads` workers (0: every core) without the
/// GIL. Bad indices raise a FrazilError naming the column.
#[pyfunction]
#[pyo3(signature = (table, indices, threads=0))]
fn gather_rows<'py>(
    py: Python<'py>,
    table: PyTable,
    indices: AnyArray,
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

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(gather_rows, m)?)?;
    Ok(())
}
