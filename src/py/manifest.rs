//! Bindings for `frazil.manifest`: conversion and GIL release only.

use std::sync::Arc;

use arrow_array::{RecordBatch, StructArray};
use arrow_schema::{DataType, Schema};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::arrow;
use super::arrow_in::ArrowTable;
use super::errors::run;
use super::io::{io_or_default, RawFileIO};
use crate::avro::columns::arrow_type;
use crate::avro::Codec;
use crate::error::Error;
use crate::manifest::schema::{entry_read_fields, manifest_file_fields};
use crate::manifest::writer::partition_type_for;
use crate::manifest::{self, Inherit, ListOptions, ManifestOptions};
use crate::types::Type;

type InheritTuple = (Option<i64>, i64, Option<i64>);

fn inherit(t: Option<InheritTuple>) -> Option<Inherit> {
    t.map(|(snapshot_id, sequence_number, first_row_id)| Inherit {
        snapshot_id,
        sequence_number,
        first_row_id,
    })
}

fn table(py: Python<'_>, batch: RecordBatch) -> PyResult<Py<PyAny>> {
    Ok(arrow::batch_table(py, batch)?.unbind())
}

fn threads_or_all(threads: usize) -> usize {
    if threads == 0 {
        crate::runtime::available_threads()
    } else {
        threads
    }
}

fn codec(name: &str) -> crate::Result<Codec> {
    Codec::parse(name).map_err(|_| Error::InvalidValue(format!("unknown Avro codec {name:?}")))
}

/// A pyarrow Table as one struct array (its batches concatenated).
fn rows(input: ArrowTable) -> crate::Result<StructArray> {
    let (batches, schema) = input.into_inner();
    let batch = arrow_select::concat::concat_batches(&schema, &batches)
        .map_err(|e| Error::TypeMismatch(e.to_string()))?;
    Ok(StructArray::from(batch))
}

#[pyfunction]
#[pyo3(signature = (location, columns=None, inherit=None, io=None))]
fn read_manifest(
    py: Python<'_>,
    location: String,
    columns: Option<Vec<String>>,
    inherit: Option<InheritTuple>,
    io: Option<&RawFileIO>,
) -> PyResult<Py<PyAny>> {
    let inherit = self::inherit(inherit);
    let io = io_or_default(io);
    let batch = py.detach(|| {
        run(|| {
            let data = io.read(&location)?;
            manifest::read_manifest(&data, &location, columns.as_deref(), inherit)
        })
    })?;
    table(py, batch)
}

#[pyfunction]
#[pyo3(signature = (locations, inherits, columns=None, threads=0, io=None))]
fn read_manifests(
    py: Python<'_>,
    locations: Vec<String>,
    inherits: Vec<Option<InheritTuple>>,
    columns: Option<Vec<String>>,
    threads: usize,
    io: Option<&RawFileIO>,
) -> PyResult<Vec<Py<PyAny>>> {
    // One inheritance per location: a shorter list would silently drop
    // manifests, a longer one apply the wrong rows.
    if locations.len() != inherits.len() {
        return Err(super::errors::to_py(Error::InvalidValue(format!(
            "read_manifests got {} locations but {} inheritance rows: one is needed per manifest",
            locations.len(),
            inherits.len()
        ))));
    }
    let io = io_or_default(io);
    let items: Vec<(String, Option<Inherit>)> = locations
        .into_iter()
        .zip(inherits.into_iter().map(inherit))
        .collect();
    let threads = threads_or_all(threads);
    let batches =
        py.detach(|| run(|| manifest::read_manifests(&io, &items, columns.as_deref(), threads)))?;
    tables(py, batches)
}

/// One pyarrow Table per batch. Manifests written under one spec and schema
/// share their Arrow schema: each run of them crosses to pyarrow as one
/// multi-chunk table, and is sliced there, so pyarrow imports the (large,
/// nested) schema once per run rather than once per manifest.
fn tables(py: Python<'_>, batches: Vec<RecordBatch>) -> PyResult<Vec<Py<PyAny>>> {
    let mut out = Vec::with_capacity(batches.len());
    let mut rest = batches.into_iter().peekable();
    while let Some(first) = rest.next() {
        let schema = first.schema();
        let mut run = vec![first];
        while let Some(next) = rest.next_if(|b| b.schema() == schema) {
            run.push(next);
        }
        if run.len() == 1 {
            out.push(table(py, run.pop().expect("one batch"))?);
            continue;
        }
        let lengths: Vec<usize> = run.iter().map(RecordBatch::num_rows).collect();
        let whole = arrow::table(py, run, schema)?;
        let mut offset = 0;
        for length in lengths {
            out.push(whole.call_method1("slice", (offset, length))?.unbind());
            offset += length;
        }
    }
    Ok(out)
}

#[pyfunction]
#[pyo3(signature = (location, io=None))]
fn read_manifest_list(
    py: Python<'_>,
    location: String,
    io: Option<&RawFileIO>,
) -> PyResult<Py<PyAny>> {
    let io = io_or_default(io);
    let batch = py.detach(|| {
        run(|| {
            let data = io.read(&location)?;
            manifest::read_manifest_list(&data, &location)
        })
    })?;
    table(py, batch)
}

/// Encodes a manifest; returns its bytes and its manifest-list row.
#[pyfunction]
#[pyo3(signature = (location, entries, schema_json, spec_json, spec_id, format_version, deletes, snapshot_id, codec="deflate"))]
#[allow(clippy::too_many_arguments)]
fn write_manifest(
    py: Python<'_>,
    location: String,
    entries: ArrowTable,
    schema_json: String,
    spec_json: String,
    spec_id: i32,
    format_version: u8,
    deletes: bool,
    snapshot_id: Option<i64>,
    codec: &str,
) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
    let (data, row) = py.detach(|| {
        run(|| {
            let options = ManifestOptions {
                format_version,
                schema_json,
                spec_json,
                spec_id,
                deletes,
                snapshot_id,
                codec: self::codec(codec)?,
            };
            let (data, stats) = manifest::write_manifest(&rows(entries)?, &options)?;
            let row = manifest::manifest_file_row(
                &location,
                data.len() as i64,
                spec_id,
                deletes,
                snapshot_id,
                &stats,
            )?;
            Ok((data, RecordBatch::from(row)))
        })
    })?;
    Ok((PyBytes::new(py, &data).into_any().unbind(), table(py, row)?))
}

/// Encodes a manifest list; returns its bytes and the next unassigned row id (v3).
#[pyfunction]
#[pyo3(signature = (manifests, format_version, snapshot_id, parent_snapshot_id, sequence_number, first_row_id=None, codec="deflate"))]
#[allow(clippy::too_many_arguments)]
fn write_manifest_list(
    py: Python<'_>,
    manifests: ArrowTable,
    format_version: u8,
    snapshot_id: i64,
    parent_snapshot_id: Option<i64>,
    sequence_number: i64,
    first_row_id: Option<i64>,
    codec: &str,
) -> PyResult<(Py<PyAny>, Option<i64>)> {
    let (data, next) = py.detach(|| {
        run(|| {
            let options = ListOptions {
                format_version,
                snapshot_id,
                parent_snapshot_id,
                sequence_number,
                first_row_id,
                codec: self::codec(codec)?,
            };
            manifest::write_manifest_list(&rows(manifests)?, &options)
        })
    })?;
    Ok((PyBytes::new(py, &data).into_any().unbind(), next))
}

fn schema_of(ty: &Type) -> PyResult<Arc<Schema>> {
    match arrow_type(ty) {
        DataType::Struct(fields) => Ok(Arc::new(Schema::new(fields))),
        _ => Err(super::errors::to_py(Error::Internal(
            "read type is not a struct".to_owned(),
        ))),
    }
}

/// The Arrow schema `read_manifest` produces for a spec and table schema.
#[pyfunction]
fn manifest_entry_schema(
    py: Python<'_>,
    spec_json: &str,
    schema_json: &str,
) -> PyResult<Py<PyAny>> {
    let partition = run(|| partition_type_for(spec_json, schema_json))?;
    let schema = schema_of(&Type::Struct(entry_read_fields(partition)))?;
    Ok(arrow::schema(py, schema)?.unbind())
}

/// The Arrow schema `read_manifest_list` produces.
#[pyfunction]
fn manifest_file_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let schema = schema_of(&Type::Struct(manifest_file_fields(None)))?;
    Ok(arrow::schema(py, schema)?.unbind())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(read_manifests, m)?)?;
    m.add_function(wrap_pyfunction!(read_manifest_list, m)?)?;
    m.add_function(wrap_pyfunction!(write_manifest, m)?)?;
    m.add_function(wrap_pyfunction!(write_manifest_list, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_entry_schema, m)?)?;
    m.add_function(wrap_pyfunction!(manifest_file_schema, m)?)?;
    Ok(())
}
