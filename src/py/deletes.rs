//! Bindings for position deletes and deletion vectors: `PositionDeleteIndex`
//! (one data file's deleted positions, applied to pyarrow batches) and the
//! Puffin functions tests and writers use. The GIL is released around
//! decoding, reading and filtering.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array};
use arrow_schema::{DataType, Field};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use roaring::RoaringTreemap;

use super::arrow_in::{any_array, exports_arrow, ArrowBatch, ArrowValues};
use super::errors::run;
use super::io::{io_or_default, RawFileIO};
use crate::arrow::position_deletes::{PositionDeleteIndex as Index, PositionDeletesByFile};
use crate::error::Error;
use crate::puffin;

/// The chunks of an array or stream argument (a pyarrow Array or
/// ChunkedArray), without copying.
fn chunks(values: ArrowValues) -> PyResult<Vec<ArrayRef>> {
    Ok(values.into_chunks().0)
}

/// Pairs up the chunks of two columns; when they are chunked differently,
/// each is concatenated into one array (a copy).
fn aligned(left: Vec<ArrayRef>, right: Vec<ArrayRef>) -> crate::Result<Vec<(ArrayRef, ArrayRef)>> {
    let same =
        left.len() == right.len() && left.iter().zip(&right).all(|(l, r)| l.len() == r.len());
    if same {
        return Ok(left.into_iter().zip(right).collect());
    }
    let concat = |parts: &[ArrayRef]| -> crate::Result<ArrayRef> {
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        if refs.is_empty() {
            return Err(Error::InvalidValue(
                "an empty chunked array has no type".into(),
            ));
        }
        arrow_select::concat::concat(&refs).map_err(|e| Error::Internal(e.to_string()))
    };
    Ok(vec![(concat(&left)?, concat(&right)?)])
}

/// The arrays of positions given as a pyarrow int64 array (or chunked
/// array) or as a sequence of ints. Arrow data goes through the guarded
/// import (`arrow_in`), whose errors are raised, not taken for a sequence.
fn position_arrays(values: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    if exports_arrow(values)? {
        return chunks(any_array(values)?);
    }
    if let Ok(list) = values.extract::<Vec<i64>>() {
        return Ok(vec![Arc::new(Int64Array::from(list))]);
    }
    let kind = values.get_type().name()?.to_string();
    run(|| {
        Err(Error::TypeMismatch(format!(
            "positions must be a pyarrow int64 array or a sequence of ints, not {kind}"
        )))
    })
}

/// The set of positions in `arrays` (int64, non-null, non-negative).
fn position_set(arrays: &[ArrayRef]) -> crate::Result<RoaringTreemap> {
    let mut set = RoaringTreemap::new();
    for array in arrays {
        let ints = array.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
            Error::TypeMismatch(format!(
                "positions must be int64, not {}",
                array.data_type()
            ))
        })?;
        if ints.null_count() > 0 {
            return Err(Error::InvalidValue("positions must not be null".into()));
        }
        for &pos in ints.values() {
            let pos = u64::try_from(pos)
                .map_err(|_| Error::InvalidValue(format!("negative position {pos}")))?;
            set.insert(pos);
        }
    }
    Ok(set)
}

/// The deleted row positions of one data file, from deletion vectors and
/// position delete files, applied to its batches by absolute position.
#[pyclass(module = "frazil._native", name = "PositionDeleteIndex")]
pub struct PyPositionDeleteIndex {
    data_file: String,
    inner: Index,
}

impl PyPositionDeleteIndex {
    fn check_referenced(&self, referenced_data_file: Option<&str>, source: &str) -> PyResult<()> {
        match referenced_data_file {
            Some(referenced) if referenced != self.data_file => run(|| {
                Err(Error::Validation(format!(
                    "deletion vector {source} applies to {referenced}, not to {}",
                    self.data_file
                )))
            }),
            _ => Ok(()),
        }
    }
}

#[pymethods]
impl PyPositionDeleteIndex {
    #[new]
    fn new(data_file: String) -> Self {
        PyPositionDeleteIndex {
            data_file,
            inner: Index::new(),
        }
    }

    #[getter]
    fn data_file(&self) -> &str {
        &self.data_file
    }

    /// Adds a `deletion-vector-v1` blob held in memory; `source` names it
    /// in errors. With `record_count`, the vector must hold that many positions.
    #[pyo3(signature = (data, referenced_data_file=None, source="<deletion vector>", record_count=None))]
    fn add_deletion_vector(
        &mut self,
        py: Python<'_>,
        data: &[u8],
        referenced_data_file: Option<&str>,
        source: &str,
        record_count: Option<i64>,
    ) -> PyResult<()> {
        self.check_referenced(referenced_data_file, source)?;
        let positions = py.detach(|| run(|| puffin::decode_deletion_vector(data, source)))?;
        if let Some(expected) = record_count {
            if i64::try_from(positions.len()).ok() != Some(expected) {
                return run(|| {
                    Err(Error::InvalidData(format!(
                        "{source}: holds {} positions but its delete file's record_count is {expected}",
                        positions.len()
                    )))
                });
            }
        }
        self.inner.add_deletion_vector(&positions);
        Ok(())
    }

    /// Reads and adds the deletion vector a delete file entry points at:
    /// `content_size_in_bytes` bytes at `content_offset` of the Puffin file
    /// at `path`, read through `io`.
    #[pyo3(signature = (path, content_offset, content_size_in_bytes, record_count=None, referenced_data_file=None, io=None))]
    #[allow(clippy::too_many_arguments)]
    fn read_deletion_vector(
        &mut self,
        py: Python<'_>,
        path: &str,
        content_offset: i64,
        content_size_in_bytes: i64,
        record_count: Option<i64>,
        referenced_data_file: Option<&str>,
        io: Option<&RawFileIO>,
    ) -> PyResult<()> {
        self.check_referenced(referenced_data_file, path)?;
        let io = io_or_default(io);
        let inner = &mut self.inner;
        py.detach(|| {
            run(|| {
                let positions = puffin::read_deletion_vector(
                    &io,
                    path,
                    content_offset,
                    content_size_in_bytes,
                    record_count,
                )?;
                inner.add_deletion_vector(&positions);
                Ok(())
            })
        })
    }

    /// Adds `positions` (a pyarrow int64 array or a sequence of ints: non-null,
    /// non-negative), e.g. the rows a merge-on-read delete removes. Returns how
    /// many of them were not deleted already.
    fn add_positions(&mut self, py: Python<'_>, positions: &Bound<'_, PyAny>) -> PyResult<u64> {
        let arrays = position_arrays(positions)?;
        let inner = &mut self.inner;
        py.detach(|| {
            run(|| {
                let set = position_set(&arrays)?;
                let before = inner.len();
                inner.add_deletion_vector(&set);
                Ok(inner.len() - before)
            })
        })
    }

    /// Adds what a position delete file (read into `PositionDeletesByFile`)
    /// deletes in this index's data file. Returns how many positions.
    fn add_position_file(&mut self, py: Python<'_>, deletes: &PyPositionDeletesByFile) -> u64 {
        let data_file = self.data_file.as_str();
        let inner = &mut self.inner;
        py.detach(|| inner.add_position_file(&deletes.inner, data_file))
    }

    /// The rows of `batch` (a pyarrow RecordBatch whose first row is at
    /// absolute position `start` of the data file) that are not deleted.
    fn apply<'py>(
        &self,
        py: Python<'py>,
        batch: ArrowBatch,
        start: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = batch.into_inner();
        let kept = py.detach(|| run(|| self.inner.apply(&batch, start)))?;
        super::arrow::record_batch(py, kept)
    }

    /// A pyarrow boolean array: for `length` rows from absolute position
    /// `start`, true where the row is deleted (the `_deleted` column).
    fn deleted_mask<'py>(
        &self,
        py: Python<'py>,
        start: u64,
        length: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mask = py.detach(|| run(|| self.inner.deleted_mask(start, length)))?;
        let array: ArrayRef = Arc::new(mask);
        super::arrow::array(
            py,
            &array,
            Arc::new(Field::new("_deleted", DataType::Boolean, false)),
        )
    }

    /// The deleted positions, ascending, as a pyarrow int64 array.
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Positions never exceed 2^63 - 1: they come from non-negative longs.
        let values: Int64Array =
            py.detach(|| self.inner.positions().iter().map(|p| p as i64).collect());
        let array: ArrayRef = Arc::new(values);
        super::arrow::array(
            py,
            &array,
            Arc::new(Field::new("pos", DataType::Int64, false)),
        )
    }

    /// A `deletion-vector-v1` blob of these positions.
    fn to_deletion_vector<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let blob = py.detach(|| run(|| puffin::encode_deletion_vector(self.inner.positions())))?;
        Ok(PyBytes::new(py, &blob))
    }

    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    fn __contains__(&self, position: i64) -> bool {
        self.inner.contains(position)
    }

    fn __repr__(&self) -> String {
        format!(
            "PositionDeleteIndex(data_file={:?}, deleted={})",
            self.data_file,
            self.inner.len()
        )
    }
}

/// A `deletion-vector-v1` blob of `positions` (pyarrow int64 or ints).
#[pyfunction]
fn encode_deletion_vector<'py>(
    py: Python<'py>,
    positions: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let arrays = position_arrays(positions)?;
    let blob = py.detach(|| run(|| puffin::encode_deletion_vector(&position_set(&arrays)?)))?;
    Ok(PyBytes::new(py, &blob))
}

/// Writes a Puffin file at `location` with one deletion vector per
/// `(data file, positions)`; returns, per vector, the fields of its
/// delete-file entry: `referenced_data_file`, `content_offset`,
/// `content_size_in_bytes`, `record_count`, `file_size_in_bytes`.
#[pyfunction]
#[pyo3(signature = (location, vectors, io=None))]
fn write_deletion_vector_puffin<'py>(
    py: Python<'py>,
    location: &str,
    vectors: Vec<(String, Bound<'py, PyAny>)>,
    io: Option<&RawFileIO>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let vectors = vectors
        .into_iter()
        .map(|(path, positions)| Ok((path, position_arrays(&positions)?)))
        .collect::<PyResult<Vec<_>>>()?;
    let io = io_or_default(io);
    let (size, written) = py.detach(|| {
        run(|| {
            let vectors = vectors
                .into_iter()
                .map(|(path, arrays)| Ok((path, position_set(&arrays)?)))
                .collect::<crate::Result<Vec<_>>>()?;
            let (data, written) = puffin::write_deletion_vectors(&vectors)?;
            io.write(location, &data)?;
            Ok((data.len(), written))
        })
    })?;
    written
        .into_iter()
        .map(|dv| {
            let entry = PyDict::new(py);
            entry.set_item("referenced_data_file", dv.referenced_data_file)?;
            entry.set_item("content_offset", dv.content_offset)?;
            entry.set_item("content_size_in_bytes", dv.content_size_in_bytes)?;
            entry.set_item("record_count", dv.cardinality)?;
            entry.set_item("file_size_in_bytes", size)?;
            Ok(entry)
        })
        .collect()
}

/// The footer of the Puffin file at `location` (its FileMetadata JSON).
#[pyfunction]
#[pyo3(signature = (location, io=None))]
fn read_puffin_footer(py: Python<'_>, location: &str, io: Option<&RawFileIO>) -> PyResult<String> {
    let io = io_or_default(io);
    py.detach(|| {
        run(|| {
            Ok(puffin::read_file_metadata(&io, location)?
                .to_json()
                .to_string())
        })
    })
}

/// The uncompressed content of the blob at `offset`/`length` of the Puffin
/// file at `location`, stored with `compression_codec` (None, "lz4", "zstd").
#[pyfunction]
#[pyo3(signature = (location, offset, length, compression_codec=None, io=None))]
fn read_puffin_blob<'py>(
    py: Python<'py>,
    location: &str,
    offset: u64,
    length: u64,
    compression_codec: Option<String>,
    io: Option<&RawFileIO>,
) -> PyResult<Bound<'py, PyBytes>> {
    let io = io_or_default(io);
    let blob = puffin::BlobMetadata {
        blob_type: "(unnamed)".to_owned(),
        fields: Vec::new(),
        snapshot_id: -1,
        sequence_number: -1,
        offset,
        length,
        compression_codec,
        properties: Default::default(),
    };
    let data = py.detach(|| run(|| puffin::read_blob(&io, location, &blob)))?;
    Ok(PyBytes::new(py, &data))
}

/// A position delete file's positions by the data file each row names,
/// built once from its `file_path` and `pos` columns (pyarrow arrays or
/// chunked arrays, any string layout incl. dictionary-encoded; not copied)
/// and shared by every data file it applies to.
#[pyclass(frozen, module = "frazil._native", name = "PositionDeletesByFile")]
pub struct PyPositionDeletesByFile {
    inner: PositionDeletesByFile,
}

#[pymethods]
impl PyPositionDeletesByFile {
    #[new]
    #[pyo3(signature = (file_paths, positions, source="<position delete file>"))]
    fn new(
        py: Python<'_>,
        #[pyo3(from_py_with = any_array)] file_paths: ArrowValues,
        #[pyo3(from_py_with = any_array)] positions: ArrowValues,
        source: &str,
    ) -> PyResult<Self> {
        let paths = chunks(file_paths)?;
        let positions = chunks(positions)?;
        let inner = py.detach(|| {
            run(|| {
                let total_paths: usize = paths.iter().map(|a| a.len()).sum();
                let total_positions: usize = positions.iter().map(|a| a.len()).sum();
                if total_paths != total_positions {
                    return Err(Error::InvalidData(format!(
                        "position delete file {source}: {total_paths} file paths but {total_positions} positions"
                    )));
                }
                let mut by_file = PositionDeletesByFile::new();
                if total_paths == 0 {
                    // (an empty file may come as chunked arrays without chunks)
                    return Ok(by_file);
                }
                for (paths, positions) in aligned(paths, positions)? {
                    by_file.add(paths.as_ref(), positions.as_ref(), source)?;
                }
                Ok(by_file)
            })
        })?;
        Ok(PyPositionDeletesByFile { inner })
    }

    /// How many positions the file deletes in `data_file`.
    fn count(&self, data_file: &str) -> u64 {
        self.inner.get(data_file).map_or(0, |p| p.len())
    }

    /// How many data files the rows name.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __contains__(&self, data_file: &str) -> bool {
        self.inner.get(data_file).is_some()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPositionDeleteIndex>()?;
    m.add_class::<PyPositionDeletesByFile>()?;
    m.add_function(wrap_pyfunction!(encode_deletion_vector, m)?)?;
    m.add_function(wrap_pyfunction!(write_deletion_vector_puffin, m)?)?;
    m.add_function(wrap_pyfunction!(read_puffin_footer, m)?)?;
    m.add_function(wrap_pyfunction!(read_puffin_blob, m)?)?;
    Ok(())
}
