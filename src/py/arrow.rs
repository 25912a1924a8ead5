//! Arrow data crossing to Python: the one way every binding hands pyarrow
//! a table, array, chunked array or schema.
//!
//! pyo3-arrow's `into_pyarrow` calls `pyarrow.table(obj)` (and its kin),
//! which first asks whether `obj` is a pandas DataFrame and so imports
//! pandas: about a second on the first call, paid again by every fresh
//! process (every PySpark worker). These helpers hand the Arrow C data
//! interface capsules to pyarrow's importers instead
//! (`RecordBatchReader._import_from_c_capsule`, `Array._import_from_c_capsule`,
//! `Schema._import_from_c_capsule`, all in pyarrow >= 14), which never look
//! at pandas.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::{Field, FieldRef, SchemaRef};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use pyo3_arrow::ffi::{to_array_pycapsules, to_schema_pycapsule, to_stream_pycapsule};
use pyo3_arrow::ffi::{ArrayIterator, ArrayReader};

fn pyarrow(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import(intern!(py, "pyarrow"))
}

/// A `pyarrow.Table` of `batches` (all of `schema`, which an empty table
/// keeps).
pub fn table(
    py: Python<'_>,
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
) -> PyResult<Bound<'_, PyAny>> {
    let fields = schema.fields().clone();
    let struct_field =
        arrow_schema::Field::new_struct("", fields, false).with_metadata(schema.metadata().clone());
    let arrays = batches
        .into_iter()
        .map(|batch| Ok(std::sync::Arc::new(StructArray::from(batch)) as ArrayRef));
    let reader: Box<dyn ArrayReader + Send> = Box::new(ArrayIterator::new(
        arrays,
        std::sync::Arc::new(struct_field),
    ));
    let capsule = to_stream_pycapsule(py, reader, None)?;
    pyarrow(py)?
        .getattr(intern!(py, "RecordBatchReader"))?
        .call_method1(intern!(py, "_import_from_c_capsule"), (capsule,))?
        .call_method0(intern!(py, "read_all"))
}

/// A `pyarrow.Table` of one batch.
pub fn batch_table(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let schema = batch.schema();
    table(py, vec![batch], schema)
}

/// A `pyarrow.Array` of `array`, typed by `field` (its extension type and
/// metadata included).
pub fn array<'py>(
    py: Python<'py>,
    array: &ArrayRef,
    field: FieldRef,
) -> PyResult<Bound<'py, PyAny>> {
    let capsules = to_array_pycapsules(py, field, array.as_ref(), None)?;
    pyarrow(py)?
        .getattr(intern!(py, "Array"))?
        .call_method1(intern!(py, "_import_from_c_capsule"), capsules)
}

/// A `pyarrow.ChunkedArray` of `chunks`, typed by `field` (also when there
/// are no chunks).
pub fn chunked_array<'py>(
    py: Python<'py>,
    chunks: &[ArrayRef],
    field: FieldRef,
) -> PyResult<Bound<'py, PyAny>> {
    let arrays = chunks
        .iter()
        .map(|chunk| array(py, chunk, field.clone()))
        .collect::<PyResult<Vec<_>>>()?;
    let pa = pyarrow(py)?;
    let data_type = pa.getattr(intern!(py, "DataType"))?.call_method1(
        intern!(py, "_import_from_c_capsule"),
        (to_schema_pycapsule(py, field.as_ref())?,),
    )?;
    pa.getattr(intern!(py, "chunked_array"))?
        .call1((PyList::new(py, arrays)?, data_type))
}

/// A `pyarrow.Schema` (with its metadata).
pub fn schema(py: Python<'_>, schema: SchemaRef) -> PyResult<Bound<'_, PyAny>> {
    let capsule = to_schema_pycapsule(py, schema.as_ref())?;
    pyarrow(py)?.getattr(intern!(py, "Schema"))?.call_method1(
        intern!(py, "_import_from_c_capsule"),
        PyTuple::new(py, [capsule])?,
    )
}

/// A pyarrow RecordBatch of `batch`, handed over through the C data interface.
pub fn record_batch(py: Python<'_>, batch: RecordBatch) -> PyResult<Bound<'_, PyAny>> {
    let schema = batch.schema();
    let field = Field::new_struct("", schema.fields().clone(), false)
        .with_metadata(schema.metadata().clone());
    let array: ArrayRef = Arc::new(StructArray::from(batch));
    let capsules = to_array_pycapsules(py, Arc::new(field), array.as_ref(), None)?;
    py.import(intern!(py, "pyarrow"))?
        .getattr(intern!(py, "RecordBatch"))?
        .call_method1(intern!(py, "_import_from_c_capsule"), capsules)
}
