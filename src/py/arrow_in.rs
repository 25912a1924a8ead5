//! Arrow tables, record batches and arrays taken from Python, imported through
//! the Arrow C data interface without tripping arrow-rs.
//!
//! pyarrow slices a struct array by setting the parent's offset and leaving
//! the children whole; arrow-rs 59.3 turns such an `ArrayData` into a
//! `StructArray` by slicing the children with `ArrayData::slice`, which for a
//! struct child both keeps the offset and slices the grandchildren, so the
//! offset is applied twice and a sliced struct-of-struct column panics
//! (apache/arrow-rs#7595; the fix, #10835, is not in 59.3.2). Fixed-size lists
//! and sparse unions slice their children the same way. The import here pushes
//! those offsets down into the children before arrow-rs builds arrays, so such
//! data imports correctly; any other panic while importing becomes an
//! `InvalidDataError` (argument named in the exception's PyO3 note) instead of
//! a `PanicException`. The panic hook still prints, as for `errors::guard`.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow_array::ffi::{from_ffi, from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef, UnionMode};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::types::{PyCapsule, PyTuple};

use super::errors::to_py;
use crate::error::panic_message;
use crate::error::Error;

/// A pyarrow Table (any object with `__arrow_c_stream__` of record batches).
pub struct ArrowTable {
    batches: Vec<RecordBatch>,
    schema: SchemaRef,
}

impl ArrowTable {
    /// The batches and their schema.
    pub fn into_inner(self) -> (Vec<RecordBatch>, SchemaRef) {
        (self.batches, self.schema)
    }
}

/// A pyarrow RecordBatch (any object with `__arrow_c_array__` of a struct).
pub struct ArrowBatch(RecordBatch);

impl ArrowBatch {
    pub fn into_inner(self) -> RecordBatch {
        self.0
    }
}

impl<'py> FromPyObject<'_, 'py> for ArrowTable {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let capsule = stream_capsule(&obj)?;
        let stream = capsule
            .pointer_checked(Some(c"arrow_array_stream"))?
            .cast::<FFI_ArrowArrayStream>();
        // The stream is moved out of the capsule (which is left released), so
        // it is released once, when `stream` drops.
        let stream = unsafe { FFI_ArrowArrayStream::from_raw(stream.as_ptr()) };
        let (batches, schema) = guarded(&obj, || read_table(stream))?;
        Ok(Self { batches, schema })
    }
}

impl<'py> FromPyObject<'_, 'py> for ArrowBatch {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        import_array(&obj, read_batch).map(Self)
    }
}

/// An Arrow array argument: one array (`__arrow_c_array__`, e.g. a pyarrow
/// Array) or the chunks of a stream (`__arrow_c_stream__`, e.g. a pyarrow
/// ChunkedArray), each with its field (extension type and metadata kept).
pub enum ArrowValues {
    Array(ArrayRef, FieldRef),
    Chunked(Vec<ArrayRef>, FieldRef),
}

impl ArrowValues {
    /// The chunks (one for an array) and their field.
    pub fn into_chunks(self) -> (Vec<ArrayRef>, FieldRef) {
        match self {
            Self::Array(array, field) => (vec![array], field),
            Self::Chunked(chunks, field) => (chunks, field),
        }
    }
}

/// An array or a stream of arrays imported like [`ArrowTable`]; for
/// `#[pyo3(from_py_with = ...)]` on [`ArrowValues`] parameters. Objects
/// without the Arrow PyCapsule protocol are refused with a TypeError naming
/// their type.
pub fn any_array(obj: &Bound<'_, PyAny>) -> PyResult<ArrowValues> {
    let py = obj.py();
    let obj = obj.as_borrowed();
    if obj.hasattr(intern!(py, "__arrow_c_array__"))? {
        let (array, field) = import_array(&obj, |array, schema| {
            let field = Field::try_from(schema).map_err(arrow_error)?;
            let data = unsafe { from_ffi(array, schema) }.map_err(arrow_error)?;
            Ok((make_array(unnest_offsets(data)?), field))
        })?;
        return Ok(ArrowValues::Array(array, Arc::new(field)));
    }
    let stream = stream_capsule(&obj)?;
    let stream = stream
        .pointer_checked(Some(c"arrow_array_stream"))?
        .cast::<FFI_ArrowArrayStream>();
    let stream = unsafe { FFI_ArrowArrayStream::from_raw(stream.as_ptr()) };
    let (chunks, field) = guarded(&obj, || {
        let (field, arrays) = read_stream(stream)?;
        let chunks = arrays
            .into_iter()
            .map(|data| Ok(make_array(unnest_offsets(data)?)))
            .collect::<crate::Result<Vec<_>>>()?;
        Ok((chunks, field))
    })?;
    Ok(ArrowValues::Chunked(chunks, Arc::new(field)))
}

/// A pyarrow Schema (any object with `__arrow_c_schema__` of a struct).
pub struct ArrowSchema(SchemaRef);

impl ArrowSchema {
    pub fn into_inner(self) -> SchemaRef {
        self.0
    }
}

impl<'py> FromPyObject<'_, 'py> for ArrowSchema {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        let capsule = arrow_method(&obj, intern!(obj.py(), "__arrow_c_schema__"))?;
        let capsule = capsule.cast_into::<PyCapsule>()?;
        let schema = capsule
            .pointer_checked(Some(c"arrow_schema"))?
            .cast::<FFI_ArrowSchema>();
        // Safety: the capsule's own pointer, checked by name; the schema stays
        // owned (and is released) by the capsule, which outlives this borrow.
        let schema = unsafe { schema.as_ref() };
        guarded(&obj, || {
            let field = Field::try_from(schema).map_err(arrow_error)?;
            Ok(Arc::new(batch_schema(&field)?))
        })
        .map(Self)
    }
}

/// Whether `obj` exports Arrow data (an array or a stream) through the Arrow
/// PyCapsule protocol.
pub fn exports_arrow(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let py = obj.py();
    Ok(obj.hasattr(intern!(py, "__arrow_c_array__"))?
        || obj.hasattr(intern!(py, "__arrow_c_stream__"))?)
}

fn stream_capsule<'py>(obj: &Borrowed<'_, 'py, PyAny>) -> PyResult<Bound<'py, PyCapsule>> {
    let capsule = arrow_method(obj, intern!(obj.py(), "__arrow_c_stream__"))?;
    Ok(capsule.cast_into::<PyCapsule>()?)
}

/// Imports the array `obj` exports through `__arrow_c_array__` with `read`
/// (given the array, moved out of its capsule, and the schema, which stays
/// owned by its capsule), guarded like every import here.
fn import_array<T>(
    obj: &Borrowed<'_, '_, PyAny>,
    read: impl FnOnce(FFI_ArrowArray, &FFI_ArrowSchema) -> crate::Result<T>,
) -> PyResult<T> {
    let (schema, array) = array_capsules(obj)?;
    let schema = schema
        .pointer_checked(Some(c"arrow_schema"))?
        .cast::<FFI_ArrowSchema>();
    let array = array
        .pointer_checked(Some(c"arrow_array"))?
        .cast::<FFI_ArrowArray>();
    // Safety: both pointers are the capsules' own, checked by name above; the
    // schema capsule outlives `read`, and the array is released once, when
    // `read` drops it (its capsule is left released).
    let schema = unsafe { schema.as_ref() };
    let array = unsafe { FFI_ArrowArray::from_raw(array.as_ptr()) };
    guarded(obj, || read(array, schema))
}

/// The schema and array capsules of `__arrow_c_array__`.
fn array_capsules<'py>(
    obj: &Borrowed<'_, 'py, PyAny>,
) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
    let pair = arrow_method(obj, intern!(obj.py(), "__arrow_c_array__"))?;
    let pair = pair.cast_into::<PyTuple>()?;
    let schema = pair.get_item(0)?.cast_into::<PyCapsule>()?;
    let array = pair.get_item(1)?.cast_into::<PyCapsule>()?;
    Ok((schema, array))
}

/// Calls the Arrow PyCapsule protocol method `name` of `obj`.
fn arrow_method<'py>(
    obj: &Borrowed<'_, 'py, PyAny>,
    name: &Bound<'py, PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    if !obj.hasattr(name)? {
        return Err(PyTypeError::new_err(format!(
            "expected Arrow data (an object with {name}), got {}",
            type_name(obj)
        )));
    }
    obj.getattr(name)?.call0()
}

fn type_name(obj: &Borrowed<'_, '_, PyAny>) -> String {
    obj.get_type()
        .fully_qualified_name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_owned())
}

/// Runs an import, turning its error or panic into an `InvalidDataError`.
fn guarded<T>(
    obj: &Borrowed<'_, '_, PyAny>,
    import: impl FnOnce() -> crate::Result<T>,
) -> PyResult<T> {
    let detail = match catch_unwind(AssertUnwindSafe(import)) {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(error)) => error.to_string(),
        Err(payload) => format!("arrow-rs panicked: {}", panic_message(payload.as_ref())),
    };
    Err(to_py(Error::InvalidData(format!(
        "could not import the Arrow data of a {} argument: {detail}",
        type_name(obj)
    ))))
}

fn arrow_error(e: arrow_schema::ArrowError) -> Error {
    Error::InvalidData(e.to_string())
}

/// The field and the arrays of an Arrow C stream.
fn read_stream(mut stream: FFI_ArrowArrayStream) -> crate::Result<(Field, Vec<ArrayData>)> {
    let get_schema = stream.get_schema.ok_or_else(released_stream)?;
    let get_next = stream.get_next.ok_or_else(released_stream)?;
    let mut ffi_schema = FFI_ArrowSchema::empty();
    let code = unsafe { get_schema(&mut stream, &mut ffi_schema) };
    if code != 0 {
        return Err(stream_error(&mut stream, code));
    }
    let field = Field::try_from(&ffi_schema).map_err(arrow_error)?;
    let mut arrays = Vec::new();
    loop {
        let mut array = FFI_ArrowArray::empty();
        let code = unsafe { get_next(&mut stream, &mut array) };
        if code != 0 {
            return Err(stream_error(&mut stream, code));
        }
        if array.is_released() {
            return Ok((field, arrays));
        }
        let data = unsafe { from_ffi_and_data_type(array, field.data_type().clone()) };
        arrays.push(data.map_err(arrow_error)?);
    }
}

fn read_table(stream: FFI_ArrowArrayStream) -> crate::Result<(Vec<RecordBatch>, SchemaRef)> {
    let (field, arrays) = read_stream(stream)?;
    let schema = Arc::new(batch_schema(&field)?);
    let batches = arrays
        .into_iter()
        .map(|data| batch_of(schema.clone(), data))
        .collect::<crate::Result<_>>()?;
    Ok((batches, schema))
}

/// The schema of the record batches of a stream or array of type `field`.
fn batch_schema(field: &Field) -> crate::Result<Schema> {
    let DataType::Struct(fields) = field.data_type() else {
        return Err(Error::InvalidData(format!(
            "expected record batches (struct arrays), got {}",
            field.data_type()
        )));
    };
    Ok(Schema::new(fields.clone()).with_metadata(field.metadata().clone()))
}

fn released_stream() -> Error {
    Error::InvalidData("the Arrow stream is already released".to_owned())
}

fn stream_error(stream: &mut FFI_ArrowArrayStream, code: i32) -> Error {
    let message = stream
        .get_last_error
        .map(|last| unsafe { last(stream) })
        .filter(|p| !p.is_null())
        .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("error code {code}"));
    Error::InvalidData(format!("reading the Arrow stream: {message}"))
}

fn read_batch(array: FFI_ArrowArray, ffi_schema: &FFI_ArrowSchema) -> crate::Result<RecordBatch> {
    let field = Field::try_from(ffi_schema).map_err(arrow_error)?;
    let schema = batch_schema(&field)?;
    let data = unsafe { from_ffi(array, ffi_schema) }.map_err(arrow_error)?;
    if data.null_count() != 0 {
        return Err(Error::InvalidData(
            "a struct array with null rows is not a record batch".to_owned(),
        ));
    }
    batch_of(Arc::new(schema), data)
}

/// The record batch of `data`, a struct array of `schema`'s columns.
fn batch_of(schema: SchemaRef, data: ArrayData) -> crate::Result<RecordBatch> {
    let len = data.len();
    let rows = StructArray::from(unnest_offsets(data)?);
    RecordBatch::try_new_with_options(
        schema,
        rows.into_parts().1,
        &RecordBatchOptions::new().with_row_count(Some(len)),
    )
    .map_err(arrow_error)
}

/// `data` with the offsets of the arrays whose children arrow-rs slices on
/// import (structs, fixed-size lists, sparse unions) pushed down into their
/// children, the layout arrow-rs 59 handles (see the module docs); `data`
/// itself when it holds no such offset.
fn unnest_offsets(data: ArrayData) -> crate::Result<ArrayData> {
    if !has_pushed_offset(&data) {
        return Ok(data);
    }
    let (offset, len) = (data.offset(), data.len());
    let pushed = offset != 0 && pushes_offset(data.data_type());
    let children = data.child_data().to_vec();
    let mut buffers = data.buffers().to_vec();
    let children = match data.data_type() {
        _ if !pushed => children,
        DataType::Struct(_) => children.into_iter().map(|c| rows(c, offset, len)).collect(),
        DataType::FixedSizeList(_, size) => {
            let size = usize::try_from(*size).map_err(|_| invalid_size(*size))?;
            children
                .into_iter()
                .map(|c| rows(c, offset * size, len * size))
                .collect()
        }
        DataType::Union(_, UnionMode::Sparse) => {
            // One i8 type id a row.
            buffers[0] = buffers[0].slice_with_length(offset, len);
            children.into_iter().map(|c| rows(c, offset, len)).collect()
        }
        _ => children,
    };
    let children = children
        .into_iter()
        .map(unnest_offsets)
        .collect::<crate::Result<Vec<_>>>()?;
    let mut builder = data.into_builder().child_data(children);
    if pushed {
        // The validity is already a `NullBuffer` of the `len` rows.
        builder = builder.offset(0).buffers(buffers);
    }
    builder.build().map_err(arrow_error)
}

fn invalid_size(size: i32) -> Error {
    Error::InvalidData(format!("fixed-size list of negative size {size}"))
}

/// Whether arrow-rs slices the children of `data_type` by the parent's offset.
fn pushes_offset(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Struct(_) | DataType::FixedSizeList(..) | DataType::Union(_, UnionMode::Sparse)
    )
}

fn has_pushed_offset(data: &ArrayData) -> bool {
    (data.offset() != 0 && pushes_offset(data.data_type()))
        || data.child_data().iter().any(has_pushed_offset)
}

/// Rows `offset..offset + len` of `data`, as a C data interface producer
/// slices: a struct by its own offset, its children whole (`ArrayData::slice`
/// would slice a struct's children as well, the double count).
fn rows(data: ArrayData, offset: usize, len: usize) -> ArrayData {
    if offset == 0 && len == data.len() {
        return data;
    }
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return data.slice(offset, len);
    }
    let nulls = data.nulls().map(|n| n.slice(offset, len));
    let start = data.offset() + offset;
    let builder = data.into_builder().len(len).offset(start).nulls(nulls);
    // Safety: a window of rows of data that was already valid.
    unsafe { builder.build_unchecked() }
}
