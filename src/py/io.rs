//! Bindings for `frazil.io`: `RawFileIO` holds one Rust [`FileIO`]; every
//! call releases the GIL while storage works.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::run;
use crate::io::{FileIO, Location};

/// The FileIO of an optional `RawFileIO` argument: without one, the
/// process's FileIO without properties.
pub fn io_or_default(io: Option<&RawFileIO>) -> Arc<FileIO> {
    match io {
        Some(raw) => raw.inner.clone(),
        None => crate::io::default_file_io(),
    }
}

fn threads_or_all(threads: usize) -> usize {
    if threads == 0 {
        crate::runtime::available_threads()
    } else {
        threads
    }
}

#[pyclass(frozen, module = "frazil._native")]
pub struct RawFileIO {
    pub inner: Arc<FileIO>,
}

#[pymethods]
impl RawFileIO {
    #[new]
    #[pyo3(signature = (properties=None))]
    fn new(properties: Option<HashMap<String, String>>) -> PyResult<Self> {
        let inner = run(|| FileIO::new(properties.unwrap_or_default()))?;
        Ok(RawFileIO {
            inner: Arc::new(inner),
        })
    }

    #[getter]
    fn properties(&self) -> HashMap<String, String> {
        self.inner
            .properties()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn read<'py>(&self, py: Python<'py>, location: &str) -> PyResult<Bound<'py, PyBytes>> {
        let data = py.detach(|| run(|| self.inner.read(location)))?;
        Ok(PyBytes::new(py, &data))
    }

    fn read_range<'py>(
        &self,
        py: Python<'py>,
        location: &str,
        start: u64,
        length: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = py.detach(|| run(|| self.inner.read_range(location, start, length)))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The contents of many locations, in order (`threads=0`: all cores for
    /// local files); the first failure, in that order, is raised.
    #[pyo3(signature = (locations, threads=0))]
    fn read_many<'py>(
        &self,
        py: Python<'py>,
        locations: Vec<String>,
        threads: usize,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let threads = threads_or_all(threads);
        let contents = py.detach(|| {
            run(|| {
                self.inner
                    .read_many(&locations, threads)
                    .into_iter()
                    .collect::<crate::Result<Vec<_>>>()
            })
        })?;
        Ok(contents.iter().map(|d| PyBytes::new(py, d)).collect())
    }

    fn size(&self, py: Python<'_>, location: &str) -> PyResult<u64> {
        py.detach(|| run(|| self.inner.size(location)))
    }

    fn exists(&self, py: Python<'_>, location: &str) -> PyResult<bool> {
        py.detach(|| run(|| self.inner.exists(location)))
    }

    fn write(&self, py: Python<'_>, location: &str, data: &[u8]) -> PyResult<()> {
        py.detach(|| run(|| self.inner.write(location, data)))
    }

    fn write_if_absent(&self, py: Python<'_>, location: &str, data: &[u8]) -> PyResult<bool> {
        py.detach(|| run(|| self.inner.write_if_absent(location, data)))
    }

    fn delete(&self, py: Python<'_>, location: &str) -> PyResult<()> {
        py.detach(|| run(|| self.inner.delete(location)))
    }

    /// `(location, size, modified ms or None)` of every file under `prefix`, sorted by
    /// location.
    fn list(&self, py: Python<'_>, prefix: &str) -> PyResult<Vec<(String, u64, Option<i64>)>> {
        py.detach(|| {
            run(|| {
                Ok(self
                    .inner
                    .list(prefix)?
                    .into_iter()
                    .map(|f| (f.location, f.size, f.last_modified_ms))
                    .collect())
            })
        })
    }

    /// One level of `prefix`: `([(location, size, modified ms or None)], [subdirectory])`,
    /// each sorted.
    #[allow(clippy::type_complexity)]
    fn list_dir(
        &self,
        py: Python<'_>,
        prefix: &str,
    ) -> PyResult<(Vec<(String, u64, Option<i64>)>, Vec<String>)> {
        py.detach(|| {
            run(|| {
                let (files, dirs) = self.inner.list_dir(prefix)?;
                let files = files
                    .into_iter()
                    .map(|f| (f.location, f.size, f.last_modified_ms))
                    .collect();
                Ok((files, dirs))
            })
        })
    }

    fn __repr__(&self) -> String {
        // Property values may be secrets: show the names only.
        let names: Vec<&str> = self.inner.properties().keys().map(String::as_str).collect();
        format!("RawFileIO(properties={names:?})")
    }
}

/// What a location names: `("file", None, None, path)`, or
/// `(kind, bucket or container, account, key)` with kind `s3`, `gs`, `abfs`.
#[pyfunction]
fn parse_location(location: &str) -> PyResult<(String, Option<String>, Option<String>, String)> {
    run(|| match Location::parse(location)? {
        Location::Local { path, .. } => Ok((
            "file".to_owned(),
            None,
            None,
            path.to_string_lossy().into_owned(),
        )),
        Location::Object(o) => Ok((
            o.store.kind.to_string(),
            Some(o.store.bucket),
            o.store.account,
            o.key,
        )),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawFileIO>()?;
    m.add_function(wrap_pyfunction!(parse_location, m)?)?;
    Ok(())
}
