//! Arrow data crossing to Python: the one way every binding hands pyarrow
//! a table, array, chunked array or schema.
//!
//! Converting through `pyarrow.table(obj)` (and its kin) would first ask
//! whether `obj` is a pandas DataFrame and so import pandas: about a second
//! on the first call, paid again by every fresh process (every PySpark
//! worker). These helpers hand the Arrow C data interface capsules to
//! pyarrow's importers instead (`RecordBatchReader._import_from_c_capsule`,
//! `Array._import_from_c_capsule`, `Schema._import_from_c_capsule`, all in
//! pyarrow >= 14), which never look at pandas.
//!
//! The capsules are made here from arrow-rs's C data interface structs
//! rather than through pyo3-arrow, which also builds arrow-cast, arrow-ord
//! and numpy (ndarray) for the few exporters used here: close to a third of
//! the extension's compile time.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchIterator, StructArray};
use arrow_schema::{ArrowError, Field, FieldRef, SchemaRef};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyList, PyTuple};

use super::errors::to_py;
use crate::error::Error;

// Capsule names of the Arrow PyCapsule interface.
const SCHEMA_CAPSULE: &CStr = c"arrow_schema";
const ARRAY_CAPSULE: &CStr = c"arrow_array";
const STREAM_CAPSULE: &CStr = c"arrow_array_stream";

fn export_error(e: ArrowError) -> PyErr {
    to_py(Error::Internal(format!("exporting Arrow data: {e}")))
}

/// A capsule owning the C schema of `value` (released with the capsule
/// unless a consumer moved it out).
fn schema_capsule<'py>(
    py: Python<'py>,
    value: impl TryInto<FFI_ArrowSchema, Error = ArrowError>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let schema = value.try_into().map_err(export_error)?;
    PyCapsule::new_with_value(py, schema, SCHEMA_CAPSULE)
}

/// The (schema, array) capsules of `array`, typed by `field`.
fn array_capsules<'py>(
    py: Python<'py>,
    field: &Field,
    array: &dyn Array,
) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
    let schema = schema_capsule(py, field)?;
    let array =
        PyCapsule::new_with_value(py, FFI_ArrowArray::new(&array.to_data()), ARRAY_CAPSULE)?;
    Ok((schema, array))
}

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
    let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), schema);
    let stream = FFI_ArrowArrayStream::new(Box::new(reader));
    let capsule = PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)?;
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
    let capsules = array_capsules(py, &field, array.as_ref())?;
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
        (schema_capsule(py, field.as_ref())?,),
    )?;
    pa.getattr(intern!(py, "chunked_array"))?
        .call1((PyList::new(py, arrays)?, data_type))
}

/// A `pyarrow.Schema` (with its metadata).
pub fn schema(py: Python<'_>, schema: SchemaRef) -> PyResult<Bound<'_, PyAny>> {
    let capsule = schema_capsule(py, schema.as_ref())?;
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
    let capsules = array_capsules(py, &field, array.as_ref())?;
    py.import(intern!(py, "pyarrow"))?
        .getattr(intern!(py, "RecordBatch"))?
        .call_method1(intern!(py, "_import_from_c_capsule"), capsules)
}
