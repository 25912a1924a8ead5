//! Bindings for distributed planning (frazil.spark.planning; Java's
//! `BaseDistributedDataScan`): the driver lays out a plan (`RawPlanning`),
//! executors decode and prune manifests (`RawScan.prune_manifest`) and send
//! back the entries they keep as Arrow, and the driver builds the delete
//! index once and forms the tasks from those entries with the planner's own
//! code (`ScanContext::plan_manifest_entries`), streamed as the same
//! `FileScanTask` objects a local plan yields.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyIterator;

use super::arrow_in::ArrowBatch;
use super::errors::{run, to_py};
use super::scan::{PlanIter, RawScan, ScanInfo, TaskGroupIter};
use crate::error::{Error, Result};
use crate::scan::delete_file_index::DeleteFileIndex;
use crate::scan::split::SplitOptions;
use crate::scan::{Columns, FileRef, Layout, ManifestFile, PlannedFile, ScanContext};

/// A manifest list row as it crosses to Python and to executors: (path,
/// length, spec id, is a delete manifest, sequence number, min sequence
/// number, added snapshot id, added files, existing files, first row id).
pub type ManifestTuple = (
    String,
    i64,
    i32,
    bool,
    i64,
    Option<i64>,
    Option<i64>,
    Option<i32>,
    Option<i32>,
    Option<i64>,
);

fn manifest_tuple(m: &ManifestFile) -> ManifestTuple {
    (
        m.path.clone(),
        m.length,
        m.spec_id,
        m.deletes,
        m.sequence_number,
        m.min_sequence_number,
        m.added_snapshot_id,
        m.added_files,
        m.existing_files,
        m.first_row_id,
    )
}

pub fn manifest_file(t: ManifestTuple) -> ManifestFile {
    ManifestFile {
        path: t.0,
        length: t.1,
        spec_id: t.2,
        deletes: t.3,
        sequence_number: t.4,
        min_sequence_number: t.5,
        added_snapshot_id: t.6,
        added_files: t.7,
        existing_files: t.8,
        first_row_id: t.9,
    }
}

/// A distributed plan of one snapshot, step by step.
#[pyclass(frozen, module = "frazil._native")]
pub struct RawPlanning {
    context: Arc<ScanContext>,
    info: Arc<ScanInfo>,
    layout: Layout,
    deletes: Mutex<Option<Arc<DeleteFileIndex>>>,
}

impl RawPlanning {
    pub fn new(py: Python<'_>, scan: &RawScan, manifest_list: &str) -> PyResult<Self> {
        let context = scan.context.clone();
        let layout = py.detach(|| run(|| context.layout(manifest_list)))?;
        Ok(RawPlanning {
            context,
            info: scan.info.clone(),
            layout,
            deletes: Mutex::new(None),
        })
    }

    fn set_deletes(&self, index: DeleteFileIndex) {
        *self.deletes.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(index));
    }

    fn deletes(&self) -> Result<Arc<DeleteFileIndex>> {
        self.deletes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| {
                Error::Validation(
                    "the delete files are not indexed yet: call index_deletes or \
                     index_deletes_locally first"
                        .to_owned(),
                )
            })
    }

    fn files(&self, py: Python<'_>, entries: Option<Py<PyAny>>) -> PyResult<PlanIter> {
        let deletes = run(|| self.deletes())?;
        match entries {
            None => {
                let (context, manifests) = (self.context.clone(), self.layout.data.clone());
                let stream =
                    py.detach(|| run(|| crate::scan::plan_data(context, manifests, deletes)))?;
                Ok(PlanIter::from_stream(self.info.clone(), stream))
            }
            Some(entries) => {
                let iterator = PyIterator::from_object(entries.bind(py))?.unbind();
                Ok(PlanIter::from_feed(
                    self.info.clone(),
                    Feed {
                        context: self.context.clone(),
                        deletes,
                        manifests: self.layout.data.clone(),
                        entries: Some(iterator),
                        next: 0,
                    },
                ))
            }
        }
    }
}

#[pymethods]
impl RawPlanning {
    /// The data manifests to read, in plan order (tuples: see
    /// `ManifestTuple`).
    fn data_manifests(&self) -> Vec<ManifestTuple> {
        self.layout.data.iter().map(manifest_tuple).collect()
    }

    /// The delete manifests to read.
    fn delete_manifests(&self) -> Vec<ManifestTuple> {
        self.layout.deletes.iter().map(manifest_tuple).collect()
    }

    /// The delete manifests whose partition summaries match the filter,
    /// also those older than every planned data file (which are not read):
    /// what Java's planning modes decide on.
    fn matching_delete_manifests(&self) -> Vec<ManifestTuple> {
        self.layout
            .matching_deletes
            .iter()
            .map(manifest_tuple)
            .collect()
    }

    /// Indexes the delete files, reading the delete manifests here.
    fn index_deletes_locally(&self, py: Python<'_>) -> PyResult<()> {
        let index = py.detach(|| {
            run(|| {
                self.context
                    .delete_index(&self.layout.deletes, self.layout.floor)
            })
        })?;
        self.set_deletes(index);
        Ok(())
    }

    /// Indexes the delete files from the entries executors kept:
    /// `(position in delete_manifests(), RecordBatch)` for each delete
    /// manifest, once.
    fn index_deletes(&self, py: Python<'_>, entries: Vec<(usize, ArrowBatch)>) -> PyResult<()> {
        let manifests = &self.layout.deletes;
        let index = py.detach(|| {
            run(|| {
                let mut seen = vec![false; manifests.len()];
                let mut pairs = Vec::with_capacity(entries.len());
                for (position, batch) in entries {
                    if position >= manifests.len() || seen[position] {
                        return Err(Error::Internal(format!(
                            "delete manifest entries for position {position}: not one of the \
                             {} delete manifests, or given twice",
                            manifests.len()
                        )));
                    }
                    seen[position] = true;
                    pairs.push((position, batch.into_inner()));
                }
                if let Some(missing) = seen.iter().position(|s| !s) {
                    return Err(Error::Internal(format!(
                        "no entries for delete manifest {}",
                        manifests[missing].path
                    )));
                }
                // Manifest order, as the local index is built.
                pairs.sort_by_key(|(position, _)| *position);
                self.context.delete_index_from_entries(
                    pairs
                        .into_iter()
                        .map(|(position, batch)| (&manifests[position], batch))
                        .collect(),
                    self.layout.floor,
                )
            })
        })?;
        self.set_deletes(index);
        Ok(())
    }

    /// The columns (and metric field ids; None: all) data manifests are
    /// decoded with, once the delete files are indexed.
    fn data_columns(&self) -> PyResult<(Vec<String>, Option<Vec<i32>>)> {
        let deletes = run(|| self.deletes())?;
        let columns = self.context.data_columns(&deletes);
        Ok((columns.names, columns.metric_keys))
    }

    /// The planned files, as `RawScan.plan_files` yields them: from the data
    /// manifests read here (`entries` None), or from an iterator of
    /// `(position in data_manifests(), RecordBatch)` in plan order, one per
    /// data manifest, each taken when the plan reaches it.
    #[pyo3(signature = (entries=None))]
    fn plan_files(&self, py: Python<'_>, entries: Option<Py<PyAny>>) -> PyResult<PlanIter> {
        self.files(py, entries)
    }

    /// Combined tasks, as `RawScan.plan_tasks` gives them.
    #[pyo3(signature = (entries, target_size, lookback, open_file_cost))]
    fn plan_tasks(
        &self,
        py: Python<'_>,
        entries: Option<Py<PyAny>>,
        target_size: i64,
        lookback: usize,
        open_file_cost: i64,
    ) -> PyResult<TaskGroupIter> {
        let options = SplitOptions {
            target_size,
            lookback,
            open_file_cost,
        };
        run(|| options.validate())?;
        let files = self.files(py, entries)?;
        Ok(TaskGroupIter::new(files, options))
    }
}

/// A distributed plan's data entries, planned manifest by manifest as the
/// consumer asks (so the driver holds one decoded manifest at a time, plus
/// what the tasks it kept point into).
pub struct Feed {
    context: Arc<ScanContext>,
    deletes: Arc<DeleteFileIndex>,
    manifests: Vec<ManifestFile>,
    entries: Option<Py<PyIterator>>,
    next: usize,
}

impl Feed {
    pub fn delete_files(&self) -> Arc<[FileRef]> {
        self.deletes.files().clone()
    }

    /// The planned files of the next data manifest; None at the end.
    pub fn next(&mut self, py: Python<'_>) -> PyResult<Option<Vec<PlannedFile>>> {
        let Some(entries) = self.entries.as_ref() else {
            return Ok(None);
        };
        let item = entries.bind(py).clone().next();
        let Some(item) = item else {
            self.entries = None;
            if self.next < self.manifests.len() {
                return Err(to_py(Error::Internal(format!(
                    "the executors returned entries for {} of {} data manifests",
                    self.next,
                    self.manifests.len()
                ))));
            }
            return Ok(None);
        };
        let (position, batch): (usize, ArrowBatch) = item?.extract()?;
        let manifest = self
            .manifests
            .get(self.next)
            .filter(|_| position == self.next);
        let Some(manifest) = manifest else {
            self.entries = None;
            return Err(to_py(Error::Internal(format!(
                "data manifest entries out of order: position {position} where {} of {} was \
                 expected",
                self.next,
                self.manifests.len()
            ))));
        };
        self.next += 1;
        let (context, deletes) = (&self.context, &self.deletes);
        let batch = batch.into_inner();
        py.detach(|| run(|| context.plan_manifest_entries(manifest, batch, deletes)))
            .map(Some)
    }
}

/// The columns (and metric field ids: all) delete manifests are decoded
/// with.
#[pyfunction]
fn planning_delete_columns() -> (Vec<String>, Option<Vec<i32>>) {
    let columns = Columns::deletes();
    (columns.names, columns.metric_keys)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawPlanning>()?;
    m.add_function(wrap_pyfunction!(planning_delete_columns, m)?)?;
    Ok(())
}
