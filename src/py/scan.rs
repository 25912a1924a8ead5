//! Bindings for scan planning: `RawScan` (a bound filter over a table,
//! created once per scan), the plan iterator, and `FileScanTask` /
//! `DataFile`, lazy views of the decoded manifests (a file's attributes are
//! read from the Arrow columns when asked for, so that planning 200,000
//! files creates 200,000 small objects and nothing else).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use arrow_array::Array;
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use super::errors::run;
use super::io::{io_or_default, RawFileIO};
use super::scan_distributed::{manifest_file, Feed, ManifestTuple, RawPlanning};
use super::scan_table::RawTable;
use crate::expr::json as expr_json;
use crate::expr::Bound as BoundExpr;
use crate::scan::delete_file_index::DeleteId;
use crate::scan::files::MetricMap;
use crate::scan::split::{
    merge_adjacent, split, weight as split_weight, Packer, SplitOptions, SplitTask,
};
use crate::scan::{Columns, FileRef, PlanStream, PlannedFile, ScanContext, ScanOptions};

/// What every task of a scan shares.
pub(super) struct ScanInfo {
    include_stats: bool,
    /// The scan's schema as JSON, for Appendix C task JSON: parsed when a
    /// task is first written as JSON, not by every scan.
    schema_value: OnceLock<serde_json::Value>,
    /// The scan's schema (Appendix C `schema` of a task).
    schema_json: String,
    /// The frazil.Schema the residuals' values are typed by.
    py_schema: Py<PyAny>,
}

/// A filter bound to a table, ready to plan snapshots.
#[pyclass(frozen, module = "frazil._native")]
pub struct RawScan {
    pub(super) context: Arc<ScanContext>,
    pub(super) info: Arc<ScanInfo>,
}

#[pymethods]
impl RawScan {
    /// `table`: the table's schema, specs and manifest lists;
    /// `scan_schema_json`: the scan's schema, which binds the filter (the
    /// snapshot's for time travel by id, time or tag, else the table's:
    /// Java's `SnapshotUtil.schemaFor`) and is the Appendix C `schema` of
    /// its tasks; `py_schema`: the same as a frazil.Schema, which types the
    /// residuals; `filter_json`: the filter in expression JSON (tagged values
    /// allowed); `io`: the
    /// FileIO the manifest list and manifests are read through (default:
    /// none configured, local files and the environment's object-store
    /// settings).
    #[new]
    #[pyo3(signature = (table, scan_schema_json, filter_json, py_schema, case_sensitive=true, threads=1, include_column_stats=false, io=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        table: &RawTable,
        scan_schema_json: String,
        filter_json: &str,
        py_schema: Py<PyAny>,
        case_sensitive: bool,
        threads: usize,
        include_column_stats: bool,
        io: Option<&RawFileIO>,
    ) -> PyResult<Self> {
        let read = io_or_default(io).read_fn();
        let context = py.detach(|| {
            run(|| {
                let view = table.view(&scan_schema_json)?;
                let filter = expr_json::parse(filter_json)?;
                let options = ScanOptions {
                    case_sensitive,
                    threads: if threads == 0 {
                        crate::runtime::available_threads()
                    } else {
                        threads
                    },
                    include_column_stats,
                };
                ScanContext::new(&view, &filter, options, read)
            })
        })?;
        let context = Arc::new(context);
        Ok(RawScan {
            context: context.clone(),
            info: Arc::new(ScanInfo {
                schema_value: OnceLock::new(),
                include_stats: context.options.include_column_stats,
                schema_json: scan_schema_json,
                py_schema,
            }),
        })
    }

    /// The bound filter in Java's expression JSON.
    fn bound_filter_json(&self) -> String {
        expr_json::to_json(&self.context.filter).to_string()
    }

    /// Combined tasks: files split and packed as Java's `planTasks`.
    fn plan_tasks(
        &self,
        py: Python<'_>,
        manifest_list: String,
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
        let files = self.plan_files(py, manifest_list)?;
        Ok(TaskGroupIter::new(files, options))
    }

    /// The first steps of a distributed plan of the snapshot whose manifest
    /// list is at `manifest_list` (frazil.spark.planning): the manifests to
    /// read, the delete index, then the tasks from the entries executors
    /// kept.
    fn planning(&self, py: Python<'_>, manifest_list: String) -> PyResult<RawPlanning> {
        RawPlanning::new(py, self, &manifest_list)
    }

    /// The entries of one manifest (a tuple of `RawPlanning.data_manifests`
    /// or `delete_manifests`) that the plan keeps, decoded with `columns`
    /// and `metric_keys` (`RawPlanning.data_columns`, or
    /// `planning_delete_columns`), as a pyarrow RecordBatch: an executor's
    /// share of a distributed plan.
    fn prune_manifest(
        &self,
        py: Python<'_>,
        manifest: ManifestTuple,
        columns: Vec<String>,
        metric_keys: Option<Vec<i32>>,
    ) -> PyResult<Py<PyAny>> {
        let manifest = manifest_file(manifest);
        let columns = Columns {
            names: columns,
            metric_keys,
        };
        let context = self.context.clone();
        let batch = py.detach(|| run(|| context.prune_entries(&manifest, &columns)))?;
        Ok(super::arrow::record_batch(py, batch)?.unbind())
    }

    /// The plan as a pyarrow Table, one row per data file.
    fn plan_arrow(&self, py: Python<'_>, manifest_list: String) -> PyResult<Py<PyAny>> {
        let context = self.context.clone();
        let batch = py.detach(|| {
            run(|| {
                let plan = crate::scan::plan_all(context, &manifest_list)?;
                crate::scan::arrow_plan::plan_batch(&plan.files, &plan.delete_files)
            })
        })?;
        Ok(super::arrow::batch_table(py, batch)?.unbind())
    }

    /// Plans the snapshot whose manifest list is at `manifest_list`.
    fn plan_files(&self, py: Python<'_>, manifest_list: String) -> PyResult<PlanIter> {
        let context = self.context.clone();
        let stream = py.detach(|| run(|| crate::scan::plan(context, &manifest_list)))?;
        Ok(PlanIter::from_stream(self.info.clone(), stream))
    }
}

struct IterState {
    stream: Option<PlanStream>,
    /// A distributed plan's entries, planned as they are taken.
    feed: Option<Feed>,
    buffer: VecDeque<PlannedFile>,
}

/// What every task of one plan shares: the scan's info, the plan's table of
/// delete files (which a task's `deletes` point into), and their Python
/// objects, made on first use and shared by every task a file applies to: a
/// partition-scoped or global delete file applies to thousands of data
/// files, and one object each is less work and memory than one per
/// reference (`a.delete_files[0] is b.delete_files[0]` for a shared file).
struct PlanShared {
    info: Arc<ScanInfo>,
    delete_files: Arc<[FileRef]>,
    delete_objects: Box<[OnceLock<Py<DataFile>>]>,
}

impl PlanShared {
    fn new(info: Arc<ScanInfo>, delete_files: Arc<[FileRef]>) -> Self {
        PlanShared {
            delete_objects: delete_files.iter().map(|_| OnceLock::new()).collect(),
            info,
            delete_files,
        }
    }

    /// The objects of the delete files `ids`, in order.
    fn delete_objects(&self, py: Python<'_>, ids: &[DeleteId]) -> PyResult<Vec<Py<DataFile>>> {
        ids.iter().map(|&id| self.delete_object(py, id)).collect()
    }

    fn delete_object(&self, py: Python<'_>, id: DeleteId) -> PyResult<Py<DataFile>> {
        let (Some(cell), Some(file)) = (
            self.delete_objects.get(id as usize),
            self.delete_files.get(id as usize),
        ) else {
            return Err(super::errors::to_py(crate::Error::Internal(format!(
                "delete file {id} is not in the plan's {} delete files",
                self.delete_files.len()
            ))));
        };
        if let Some(object) = cell.get() {
            return Ok(object.clone_ref(py));
        }
        // Made before the cell is filled, not inside its initializer:
        // allocating may run the garbage collector, and so other Python code
        // (which may ask for the same file). A thread that lost the race
        // drops its object and shares the winner's.
        let object = Py::new(py, data_file(file, &self.info))?;
        Ok(cell.get_or_init(|| object).clone_ref(py))
    }
}

/// An iterator of FileScanTask, fed by the planner thread.
#[pyclass(module = "frazil._native")]
pub struct PlanIter {
    shared: Arc<PlanShared>,
    state: Mutex<IterState>,
}

#[pymethods]
impl PlanIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<FileScanTask> {
        match self.next_planned(py)? {
            Some(planned) => {
                let length = planned.file.file_size();
                Ok(FileScanTask {
                    planned,
                    start: 0,
                    length,
                    shared: self.shared.clone(),
                })
            }
            None => Err(PyStopIteration::new_err(())),
        }
    }
}

impl PlanIter {
    pub(super) fn from_stream(info: Arc<ScanInfo>, stream: PlanStream) -> Self {
        PlanIter {
            shared: Arc::new(PlanShared::new(info, stream.delete_files().clone())),
            state: Mutex::new(IterState {
                stream: Some(stream),
                feed: None,
                buffer: VecDeque::new(),
            }),
        }
    }

    pub(super) fn from_feed(info: Arc<ScanInfo>, feed: Feed) -> Self {
        PlanIter {
            shared: Arc::new(PlanShared::new(info, feed.delete_files())),
            state: Mutex::new(IterState {
                stream: None,
                feed: Some(feed),
                buffer: VecDeque::new(),
            }),
        }
    }

    /// The next planned file, waiting for the planner without the GIL.
    fn next_planned(&self, py: Python<'_>) -> PyResult<Option<PlannedFile>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(planned) = state.buffer.pop_front() {
                return Ok(Some(planned));
            }
            if let Some(feed) = state.feed.as_mut() {
                match feed.next(py) {
                    Ok(Some(batch)) => state.buffer.extend(batch),
                    Ok(None) => state.feed = None,
                    Err(e) => {
                        state.feed = None;
                        return Err(e);
                    }
                }
                continue;
            }
            let Some(stream) = state.stream.as_mut() else {
                return Ok(None);
            };
            match py.detach(|| stream.next()) {
                None => {
                    state.stream = None;
                }
                Some(Ok(batch)) => state.buffer.extend(batch),
                Some(Err(e)) => {
                    state.stream = None;
                    return Err(super::errors::to_py(e));
                }
            }
        }
    }
}

struct GroupState {
    packer: Packer<SplitTask>,
    ready: VecDeque<Vec<SplitTask>>,
    done: bool,
}

/// An iterator of lists of FileScanTask (combined tasks).
#[pyclass(module = "frazil._native")]
pub struct TaskGroupIter {
    files: PlanIter,
    state: Mutex<GroupState>,
    options: SplitOptions,
}

impl TaskGroupIter {
    pub(super) fn new(files: PlanIter, options: SplitOptions) -> Self {
        TaskGroupIter {
            files,
            state: Mutex::new(GroupState {
                packer: Packer::new(options.target_size, options.lookback),
                ready: VecDeque::new(),
                done: false,
            }),
            options,
        }
    }
}

#[pymethods]
impl TaskGroupIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Vec<FileScanTask>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(group) = state.ready.pop_front() {
                return Ok(group
                    .into_iter()
                    .map(|t| FileScanTask {
                        planned: t.file,
                        start: t.start,
                        length: t.length,
                        shared: self.files.shared.clone(),
                    })
                    .collect());
            }
            if state.done {
                return Err(PyStopIteration::new_err(()));
            }
            match self.files.next_planned(py)? {
                Some(planned) => {
                    for piece in split(&planned, self.options.target_size) {
                        let weight = split_weight(
                            &piece,
                            &self.files.shared.delete_files,
                            self.options.open_file_cost,
                        );
                        if let Some(group) = state.packer.push(piece, weight) {
                            state.ready.push_back(merge_adjacent(group));
                        }
                    }
                }
                None => {
                    let rest = state.packer.finish();
                    state.ready.extend(rest.into_iter().map(merge_adjacent));
                    state.done = true;
                }
            }
        }
    }
}

/// A data file to read, with its delete files and residual filter (Java's
/// `FileScanTask`).
#[pyclass(frozen, module = "frazil.table")]
pub struct FileScanTask {
    planned: PlannedFile,
    start: i64,
    length: i64,
    shared: Arc<PlanShared>,
}

fn data_file(file: &FileRef, info: &Arc<ScanInfo>) -> DataFile {
    DataFile {
        file: file.clone(),
        include_stats: info.include_stats,
    }
}

#[pymethods]
impl FileScanTask {
    /// The data file.
    #[getter]
    fn file(&self) -> DataFile {
        data_file(&self.planned.file, &self.shared.info)
    }

    /// The delete files that apply to the data file.
    #[getter]
    fn delete_files(&self, py: Python<'_>) -> PyResult<Vec<Py<DataFile>>> {
        self.shared.delete_objects(py, &self.planned.deletes)
    }

    #[getter]
    fn spec_id(&self) -> i32 {
        self.planned.file.spec_id()
    }

    #[getter]
    fn start(&self) -> i64 {
        self.start
    }

    #[getter]
    fn length(&self) -> i64 {
        self.length
    }

    /// The residual filter in Java's expression JSON.
    #[getter]
    fn residual_json(&self) -> String {
        residual_json(&self.planned.residual)
    }

    /// The part of the scan's filter this file's partition does not
    /// guarantee, as a frazil expression.
    #[getter]
    fn residual<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = residual_json(&self.planned.residual);
        py.import("frazil.expressions")?
            .getattr("from_json")?
            .call1((text, self.shared.info.py_schema.bind(py)))
    }

    /// The scan's schema as Appendix C JSON text.
    #[getter]
    fn schema_json(&self) -> &str {
        &self.shared.info.schema_json
    }

    /// The task as Appendix C JSON text (Java's `FileScanTaskParser`).
    fn to_json(&self) -> PyResult<String> {
        let info = &self.shared.info;
        run(|| {
            let schema = match info.schema_value.get() {
                Some(schema) => schema,
                None => {
                    let parsed = serde_json::from_str(&info.schema_json).map_err(|e| {
                        crate::Error::InvalidValue(format!("scan schema is not JSON: {e}"))
                    })?;
                    info.schema_value.get_or_init(|| parsed)
                }
            };
            let deletes: Vec<&FileRef> = self
                .planned
                .delete_files(&self.shared.delete_files)
                .collect();
            crate::scan::task_json::task_json(
                schema,
                &self.planned.file,
                &deletes,
                &self.planned.residual,
                self.start,
                self.length,
                info.include_stats,
            )
            .map(|v| v.to_string())
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "FileScanTask(file={:?}, deletes={}, start={}, length={})",
            self.planned.file.path(),
            self.planned.deletes.len(),
            self.start,
            self.length
        )
    }
}

fn residual_json(residual: &BoundExpr) -> String {
    expr_json::to_json(residual).to_string()
}

/// A data or delete file of a manifest (`data_file`, spec: "Manifests").
/// Column metrics are present only when the scan was asked to include them.
#[pyclass(frozen, module = "frazil.table")]
pub struct DataFile {
    file: FileRef,
    include_stats: bool,
}

fn long_map<'py>(
    py: Python<'py>,
    map: &Option<MetricMap>,
    row: usize,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(map) = map else { return Ok(None) };
    if map.is_null(row) {
        return Ok(None);
    }
    let dict = PyDict::new(py);
    for (key, index) in map.entries(row) {
        dict.set_item(key, map.long_at(index))?;
    }
    Ok(Some(dict))
}

fn bytes_map<'py>(
    py: Python<'py>,
    map: &Option<MetricMap>,
    row: usize,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(map) = map else { return Ok(None) };
    if map.is_null(row) {
        return Ok(None);
    }
    let dict = PyDict::new(py);
    for (key, index) in map.entries(row) {
        dict.set_item(key, map.bytes_at(index).map(|b| PyBytes::new(py, b)))?;
    }
    Ok(Some(dict))
}

impl DataFile {
    fn row(&self) -> usize {
        self.file.row()
    }

    /// A data file's metrics only when the scan asked for them (Java:
    /// `includeColumnStats`); a delete file's always (Java keeps them).
    fn shows_stats(&self) -> bool {
        self.include_stats
            || !matches!(
                self.file.manifest.content(self.row()),
                Ok(crate::scan::Content::Data)
            )
    }

    fn stats<'a>(&self, map: &'a Option<MetricMap>) -> &'a Option<MetricMap> {
        const NONE: &Option<MetricMap> = &None;
        if self.shows_stats() {
            map
        } else {
            NONE
        }
    }
}

fn opt_i64(column: &Option<arrow_array::Int64Array>, row: usize) -> Option<i64> {
    column
        .as_ref()
        .filter(|c| c.is_valid(row))
        .map(|c| c.value(row))
}

#[pymethods]
impl DataFile {
    /// 0 data, 1 position deletes, 2 equality deletes.
    #[getter]
    fn content(&self) -> PyResult<i32> {
        let content = run(|| self.file.manifest.content(self.row()))?;
        Ok(match content {
            crate::scan::Content::Data => 0,
            crate::scan::Content::PositionDeletes => 1,
            crate::scan::Content::EqualityDeletes => 2,
        })
    }

    #[getter]
    fn file_path(&self) -> &str {
        self.file.path()
    }

    #[getter]
    fn file_format(&self) -> &str {
        self.file.manifest.file_format.value(self.row())
    }

    #[getter]
    fn spec_id(&self) -> i32 {
        self.file.spec_id()
    }

    #[getter]
    fn record_count(&self) -> i64 {
        self.file.record_count()
    }

    #[getter]
    fn file_size_in_bytes(&self) -> i64 {
        self.file.file_size()
    }

    /// None for a file read from task JSON (Appendix C carries none) unless
    /// given with it.
    #[getter]
    fn data_sequence_number(&self) -> Option<i64> {
        opt_i64(
            &Some(self.file.manifest.sequence_number.clone()),
            self.row(),
        )
    }

    #[getter]
    fn file_sequence_number(&self) -> Option<i64> {
        opt_i64(&self.file.manifest.file_sequence_number, self.row())
    }

    #[getter]
    fn column_sizes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        long_map(py, self.stats(&self.file.manifest.column_sizes), self.row())
    }

    #[getter]
    fn value_counts<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        long_map(py, self.stats(&self.file.manifest.value_counts), self.row())
    }

    #[getter]
    fn null_value_counts<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        long_map(
            py,
            self.stats(&self.file.manifest.null_value_counts),
            self.row(),
        )
    }

    #[getter]
    fn nan_value_counts<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        long_map(
            py,
            self.stats(&self.file.manifest.nan_value_counts),
            self.row(),
        )
    }

    #[getter]
    fn lower_bounds<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        bytes_map(py, self.stats(&self.file.manifest.lower_bounds), self.row())
    }

    #[getter]
    fn upper_bounds<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        bytes_map(py, self.stats(&self.file.manifest.upper_bounds), self.row())
    }

    #[getter]
    fn key_metadata<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        let column = self.file.manifest.key_metadata.as_ref()?;
        column
            .is_valid(self.row())
            .then(|| PyBytes::new(py, column.value(self.row())))
    }

    #[getter]
    fn split_offsets(&self) -> Option<Vec<i64>> {
        self.file.manifest.split_offsets(self.row())
    }

    #[getter]
    fn equality_ids(&self) -> Option<Vec<i32>> {
        let m = &self.file.manifest;
        let column = m.equality_ids.as_ref()?;
        if column.is_null(self.row()) {
            return None;
        }
        Some(m.equality_ids(self.row()))
    }

    #[getter]
    fn sort_order_id(&self) -> Option<i32> {
        let column = self.file.manifest.sort_order_id.as_ref()?;
        column
            .is_valid(self.row())
            .then(|| column.value(self.row()))
    }

    #[getter]
    fn first_row_id(&self) -> Option<i64> {
        opt_i64(&self.file.manifest.first_row_id, self.row())
    }

    #[getter]
    fn referenced_data_file(&self) -> Option<&str> {
        self.file.manifest.referenced_data_file(self.row())
    }

    #[getter]
    fn content_offset(&self) -> Option<i64> {
        opt_i64(&self.file.manifest.content_offset, self.row())
    }

    #[getter]
    fn content_size_in_bytes(&self) -> Option<i64> {
        opt_i64(&self.file.manifest.content_size, self.row())
    }

    /// The partition tuple as a dict from partition field name to value
    /// (Python values as `frazil.values` gives them).
    #[getter]
    fn partition<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let m = &self.file.manifest;
        let crate::types::Type::Struct(fields) = &m.partition_type else {
            return Err(super::errors::to_py(crate::Error::Internal(
                "partition type is not a struct".to_owned(),
            )));
        };
        let dict = PyDict::new(py);
        let from_bytes = py.import("frazil.values")?.getattr("from_bytes")?;
        for (i, field) in fields.iter().enumerate() {
            let value = match field.field_type.as_primitive() {
                None => None,
                Some(ty) => run(|| {
                    crate::arrow::datum::datum_at(m.partition.column(i).as_ref(), self.row(), ty)
                })?,
            };
            let value = match value {
                None => py.None().into_bound(py),
                Some(datum) => {
                    from_bytes.call1((datum.ty.to_string(), PyBytes::new(py, &datum.to_bytes())))?
                }
            };
            dict.set_item(&field.name, value)?;
        }
        Ok(dict)
    }

    /// The file as Appendix C content-file JSON text (metrics included when
    /// the scan includes them).
    fn to_json(&self) -> PyResult<String> {
        run(|| {
            crate::scan::task_json::content_file_json(&self.file, self.shows_stats())
                .map(|v| v.to_string())
        })
    }

    /// The manifest this file was listed in.
    #[getter]
    fn manifest_path(&self) -> &str {
        &self.file.manifest.path
    }

    fn __repr__(&self) -> String {
        format!(
            "DataFile(file_path={:?}, file_format={:?}, record_count={})",
            self.file.path(),
            self.file_format(),
            self.file.record_count()
        )
    }
}

/// A FileScanTask read from Appendix C JSON text; its data file's sequence
/// numbers, which the JSON does not carry, when given.
#[pyfunction]
#[pyo3(signature = (text, data_sequence_number=None, file_sequence_number=None))]
fn file_scan_task_from_json(
    py: Python<'_>,
    text: &str,
    data_sequence_number: Option<i64>,
    file_sequence_number: Option<i64>,
) -> PyResult<FileScanTask> {
    let sequence = crate::scan::task_from_json::SequenceNumbers {
        data: data_sequence_number,
        file: file_sequence_number,
    };
    let parsed = py.detach(|| {
        run(|| {
            let json: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                crate::Error::InvalidData(format!("file scan task JSON does not parse: {e}"))
            })?;
            crate::scan::task_from_json::task_from_json_with(&json, sequence)
        })
    })?;
    let py_schema = py
        .import("frazil.schema")?
        .getattr("Schema")?
        .call_method1("from_json", (pythonize_json(py, &parsed.schema_json)?,))?
        .unbind();
    let info = Arc::new(ScanInfo {
        include_stats: true,
        schema_json: parsed.schema_json.to_string(),
        schema_value: OnceLock::from(parsed.schema_json),
        py_schema,
    });
    Ok(FileScanTask {
        planned: parsed.planned,
        start: parsed.start,
        length: parsed.length,
        shared: Arc::new(PlanShared::new(info, parsed.delete_files)),
    })
}

/// A JSON value as Python objects (through the json module: rare, small).
fn pythonize_json<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .getattr("loads")?
        .call1((value.to_string(),))
}

/// The schema of `plan_arrow`'s tables.
#[pyfunction]
fn plan_arrow_schema(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let schema = crate::scan::arrow_plan::plan_schema();
    Ok(super::arrow::schema(py, schema)?.unbind())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawScan>()?;
    super::scan_distributed::register(m)?;
    m.add_class::<PlanIter>()?;
    m.add_class::<TaskGroupIter>()?;
    m.add_function(wrap_pyfunction!(plan_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(file_scan_task_from_json, m)?)?;
    m.add_class::<FileScanTask>()?;
    m.add_class::<DataFile>()?;
    Ok(())
}
