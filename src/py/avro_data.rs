//! Bindings for Avro data files (`frazil.table._avro_data`): conversion and
//! GIL release only; the work is in `crate::avro_data`.

use pyo3::prelude::*;

use super::arrow;
use super::errors::run;
use super::io::{io_or_default, RawFileIO};
use crate::avro_data::DataFile;

/// An Avro data file read into memory, its header parsed.
#[pyclass(frozen, module = "frazil._native")]
pub struct AvroDataFile {
    inner: DataFile,
}

#[pymethods]
impl AvroDataFile {
    /// The `pyarrow.Schema` of the file's Iceberg fields, ids as
    /// `PARQUET:field_id` field metadata.
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(arrow::schema(py, self.inner.arrow_schema())?.unbind())
    }

    /// The file's length in bytes.
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }

    /// `(position of the first row, pyarrow.RecordBatch)`: the records of
    /// the blocks the byte range owns, of the top-level fields `columns`
    /// (ids; all when None).
    #[pyo3(signature = (start=0, length=u64::MAX, columns=None))]
    fn read(
        &self,
        py: Python<'_>,
        start: u64,
        length: u64,
        columns: Option<Vec<i32>>,
    ) -> PyResult<(u64, Py<PyAny>)> {
        let (first, batch) =
            py.detach(|| run(|| self.inner.read(start, length, columns.as_deref())))?;
        Ok((first, arrow::record_batch(py, batch)?.unbind()))
    }

    /// `(position of the first row, rows)` the byte range owns.
    #[pyo3(signature = (start=0, length=u64::MAX))]
    fn rows_in(&self, py: Python<'_>, start: u64, length: u64) -> PyResult<(u64, u64)> {
        py.detach(|| run(|| self.inner.rows_in(start, length)))
    }
}

/// Reads the Avro data file at `location` (through `io`) and parses its header.
#[pyfunction]
#[pyo3(signature = (location, io=None))]
fn open_avro_data_file(
    py: Python<'_>,
    location: String,
    io: Option<&RawFileIO>,
) -> PyResult<AvroDataFile> {
    let io = io_or_default(io);
    let inner = py.detach(|| {
        run(|| {
            let data = io.read(&location)?;
            DataFile::open(&location, data)
        })
    })?;
    Ok(AvroDataFile { inner })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<AvroDataFile>()?;
    m.add_function(wrap_pyfunction!(open_avro_data_file, m)?)?;
    Ok(())
}
