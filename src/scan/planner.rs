//! Planning a scan of one snapshot (spec: "Scan Planning"): read the
//! manifest list, prune manifests by file counts and partition summaries,
//! index the live delete files, then decode the data manifests in parallel
//! and stream out one task per live data file that may match, with its
//! residual filter and the delete files that apply to it.
//!
//! Memory stays bounded by the delete index plus a window of manifests: a
//! producer thread decodes a chunk of data manifests at a time (on the
//! fork-safe rayon pool) and hands the tasks over a bounded channel.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, BooleanArray, RecordBatch};
use rayon::prelude::*;

use super::delete_file_index::{DeleteFileIndex, DeleteId};
use super::evaluate::{MetricsEvaluator, SpecEvaluators};
use super::files::{Content, FileRef, ManifestData};
use crate::error::{panic_message, Error, Result};
use crate::expr::{bind, Bound, Expr, Unbound};
use crate::manifest::{read_manifest_as, read_manifest_list, Inherit};
use crate::memo::Memo;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::types::Type;

/// Reads a whole file: the scan's storage (a FileIO).
pub type ReadFile = Arc<dyn Fn(&str) -> Result<Vec<u8>> + Send + Sync>;

/// How a scan plans.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub case_sensitive: bool,
    /// Worker threads for decoding manifests (1: the producer thread only).
    pub threads: usize,
    /// Keep files' column metrics in the tasks (Java: `includeColumnStats`).
    /// Without it, metrics are decoded only where a filter or an equality
    /// delete needs them, and tasks carry none.
    pub include_column_stats: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            case_sensitive: true,
            threads: 1,
            include_column_stats: false,
        }
    }
}

/// The table as a scan sees it: the scan's schema, which binds the filter
/// and types every spec's partition tuple (the snapshot's schema for a
/// time-travel read by id, time or tag, else the current one: Java's
/// `SnapshotUtil.schemaFor`, and its scans since apache/iceberg#13301); the
/// table's current schema, which types the partition fields whose source
/// the scan's schema lacks; every partition spec by id; and the manifest
/// lists its scans decoded.
pub struct TableView {
    pub schema: Arc<Schema>,
    pub table_schema: Arc<Schema>,
    pub specs: HashMap<i32, Arc<PartitionSpec>>,
    pub lists: Arc<ManifestLists>,
}

/// How many decoded manifest lists a table keeps: a few snapshots are
/// planned again and again (the current one, a branch, a tag).
const KEPT_LISTS: usize = 4;

/// The decoded manifest lists of one table's scans, by location. A manifest
/// list is never rewritten (spec: "Manifest Lists": a snapshot's list is
/// written once, under a new name), so a list decoded once serves every
/// later scan of the snapshot, as Java's `BaseSnapshot` keeps its manifests.
pub struct ManifestLists(Memo<String, Arc<ManifestList>>);

impl Default for ManifestLists {
    fn default() -> Self {
        ManifestLists(Memo::new(KEPT_LISTS))
    }
}

/// A decoded manifest list: its rows as planning reads them, and the Arrow
/// batch the manifest-list evaluators read the partition summaries from.
pub struct ManifestList {
    pub batch: RecordBatch,
    pub files: Vec<ManifestFile>,
}

/// One spec's partition type and evaluators.
struct SpecPlan {
    spec: Arc<PartitionSpec>,
    partition_type: Type,
    evaluators: SpecEvaluators,
}

/// Everything derived from the table, the filter and the options: shared by
/// every worker of a scan.
pub struct ScanContext {
    pub schema: Arc<Schema>,
    pub filter: Bound,
    pub options: ScanOptions,
    specs: HashMap<i32, Arc<SpecPlan>>,
    metrics: MetricsEvaluator,
    read: ReadFile,
    lists: Arc<ManifestLists>,
}

/// One row of a manifest list, as planning needs it.
#[derive(Debug, Clone)]
pub struct ManifestFile {
    pub path: String,
    /// `manifest_length` in bytes (Java's AUTO planning mode sums them).
    pub length: i64,
    pub spec_id: i32,
    pub deletes: bool,
    pub sequence_number: i64,
    /// The smallest data sequence number of the manifest's live files.
    pub min_sequence_number: Option<i64>,
    pub added_snapshot_id: Option<i64>,
    pub added_files: Option<i32>,
    pub existing_files: Option<i32>,
    pub first_row_id: Option<i64>,
}

impl ManifestFile {
    /// Whether the manifest may list live files: counts that are missing
    /// must be read (Java's `hasAddedFiles() || hasExistingFiles()`). A
    /// delete manifest with only EXISTING entries is read too.
    pub fn may_have_live_files(&self) -> bool {
        self.added_files.is_none_or(|n| n > 0) || self.existing_files.is_none_or(|n| n > 0)
    }

    fn inherit(&self) -> Inherit {
        Inherit {
            snapshot_id: self.added_snapshot_id,
            sequence_number: self.sequence_number,
            first_row_id: self.first_row_id,
        }
    }
}

/// The rows of a decoded manifest list.
pub fn manifest_files(list: &RecordBatch, location: &str) -> Result<Vec<ManifestFile>> {
    let column = |name: &str| {
        list.column_by_name(name).ok_or_else(|| {
            Error::InvalidData(format!("manifest list {location} has no {name} column"))
        })
    };
    let paths = column("manifest_path")?.as_string::<i32>().clone();
    let lengths = column("manifest_length")?
        .as_primitive::<Int64Type>()
        .clone();
    let spec_ids = column("partition_spec_id")?
        .as_primitive::<Int32Type>()
        .clone();
    let content = column("content")?.as_primitive::<Int32Type>().clone();
    let seqs = column("sequence_number")?
        .as_primitive::<Int64Type>()
        .clone();
    let snapshot_ids = column("added_snapshot_id")?
        .as_primitive::<Int64Type>()
        .clone();
    let added = column("added_files_count")?
        .as_primitive::<Int32Type>()
        .clone();
    let existing = column("existing_files_count")?
        .as_primitive::<Int32Type>()
        .clone();
    let first_row_ids = list
        .column_by_name("first_row_id")
        .map(|c| c.as_primitive::<Int64Type>().clone());
    let min_seqs = list
        .column_by_name("min_sequence_number")
        .map(|c| c.as_primitive::<Int64Type>().clone());
    // The partition summaries are read by the manifest-list evaluators from
    // the batch itself; here only their presence is checked.
    column("partitions")?;
    let opt_i32 = |a: &arrow_array::Int32Array, i: usize| a.is_valid(i).then(|| a.value(i));
    let mut out = Vec::with_capacity(list.num_rows());
    for i in 0..list.num_rows() {
        let path = paths.value(i).to_owned();
        let deletes = match content.value(i) {
            0 => false,
            1 => true,
            other => {
                return Err(Error::InvalidData(format!(
                    "manifest list {location}: manifest {path} has content {other} (0 data, 1 \
                     deletes)"
                )))
            }
        };
        out.push(ManifestFile {
            length: lengths.value(i),
            spec_id: spec_ids.value(i),
            deletes,
            sequence_number: seqs.value(i),
            min_sequence_number: min_seqs
                .as_ref()
                .and_then(|c| c.is_valid(i).then(|| c.value(i))),
            added_snapshot_id: snapshot_ids.is_valid(i).then(|| snapshot_ids.value(i)),
            added_files: opt_i32(&added, i),
            existing_files: opt_i32(&existing, i),
            first_row_id: first_row_ids
                .as_ref()
                .and_then(|c| c.is_valid(i).then(|| c.value(i))),
            path,
        });
    }
    Ok(out)
}

/// One planned data file.
#[derive(Debug, Clone)]
pub struct PlannedFile {
    pub file: FileRef,
    /// The delete files that apply, as positions in the plan's table of
    /// delete files ([`PlanStream::delete_files`]).
    pub deletes: Arc<[DeleteId]>,
    pub residual: Arc<Bound>,
}

impl PlannedFile {
    /// The delete files that apply, looked up in the plan's `table`.
    pub fn delete_files<'a>(
        &'a self,
        table: &'a [FileRef],
    ) -> impl ExactSizeIterator<Item = &'a FileRef> + 'a {
        self.deletes.iter().map(move |&id| &table[id as usize])
    }
}

/// The columns every scan decodes.
const BASE_COLUMNS: [&str; 16] = [
    "status",
    "snapshot_id",
    "sequence_number",
    "file_sequence_number",
    "data_file.content",
    "data_file.file_path",
    "data_file.file_format",
    "data_file.partition",
    "data_file.record_count",
    "data_file.file_size_in_bytes",
    "data_file.key_metadata",
    "data_file.split_offsets",
    "data_file.sort_order_id",
    "data_file.first_row_id",
    "data_file.equality_ids",
    "data_file.referenced_data_file",
];

const DV_COLUMNS: [&str; 2] = [
    "data_file.content_offset",
    "data_file.content_size_in_bytes",
];

const STATS_COLUMNS: [&str; 5] = [
    "data_file.value_counts",
    "data_file.null_value_counts",
    "data_file.nan_value_counts",
    "data_file.lower_bounds",
    "data_file.upper_bounds",
];

const BOUND_COLUMNS: [&str; 2] = ["data_file.lower_bounds", "data_file.upper_bounds"];

const BOUND_AND_COUNT_COLUMNS: [&str; 4] = [
    "data_file.value_counts",
    "data_file.null_value_counts",
    "data_file.lower_bounds",
    "data_file.upper_bounds",
];

/// Which of a data file's metrics a plan decodes (the others are skipped).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stats {
    None,
    /// Bounds only: the equality deletes' overlap test on required columns.
    Bounds,
    /// Bounds, value and null counts: the overlap test on optional columns.
    BoundsAndCounts,
    /// Every metric: a filter's evaluators, or the caller asked for them.
    All,
}

/// The columns a manifest is decoded with, and the field ids whose metrics
/// are kept (all when None).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    pub names: Vec<String>,
    pub metric_keys: Option<Vec<i32>>,
}

impl Columns {
    /// What delete manifests are decoded with: every metric, column sizes
    /// included (equality ids are not known before the files are read, and
    /// Java keeps every metric of a delete file).
    pub fn deletes() -> Columns {
        Columns {
            names: columns(Stats::All, true),
            metric_keys: None,
        }
    }
}

fn columns(stats: Stats, sizes: bool) -> Vec<String> {
    let mut out: Vec<String> = BASE_COLUMNS
        .iter()
        .chain(DV_COLUMNS.iter())
        .map(|s| (*s).to_owned())
        .collect();
    let stats_columns: &[&str] = match stats {
        Stats::None => &[],
        Stats::Bounds => &BOUND_COLUMNS,
        Stats::BoundsAndCounts => &BOUND_AND_COUNT_COLUMNS,
        Stats::All => &STATS_COLUMNS,
    };
    out.extend(stats_columns.iter().map(|s| (*s).to_owned()));
    if sizes {
        out.push("data_file.column_sizes".to_owned());
    }
    out
}

impl ScanContext {
    pub fn new(
        table: &TableView,
        filter: &Unbound,
        options: ScanOptions,
        read: ReadFile,
    ) -> Result<Self> {
        let bound = bind(filter, &table.schema, options.case_sensitive)?;
        let mut specs = HashMap::with_capacity(table.specs.len());
        for (id, spec) in &table.specs {
            // A field whose source the scan's schema lacks (a spec made for a later
            // schema: no manifest of the snapshot uses it, unless a writer recorded a
            // stale schema id) is typed by the current schema, so its values decode.
            let schemas = [table.schema.as_ref(), table.table_schema.as_ref()];
            let partition_type = spec.partition_type_in(&schemas).map_err(|e| {
                Error::Validation(format!("partition spec {id} cannot be planned: {e}"))
            })?;
            let evaluators = SpecEvaluators::new(&bound, spec, &table.schema, &partition_type)?;
            specs.insert(
                *id,
                Arc::new(SpecPlan {
                    spec: spec.clone(),
                    partition_type,
                    evaluators,
                }),
            );
        }
        Ok(ScanContext {
            metrics: MetricsEvaluator::new(&bound, &table.schema)?,
            schema: table.schema.clone(),
            filter: bound,
            options,
            specs,
            read,
            lists: table.lists.clone(),
        })
    }

    /// The manifest list at `location`, decoded once per table.
    fn manifest_list(&self, location: &str) -> Result<Arc<ManifestList>> {
        self.lists.0.get_or_try_insert(location.to_owned(), |_| {
            let data = (self.read)(location)?;
            let batch = read_manifest_list(&data, location)?;
            let files = manifest_files(&batch, location)?;
            Ok(Arc::new(ManifestList { batch, files }))
        })
    }

    fn spec(&self, manifest: &ManifestFile) -> Result<&Arc<SpecPlan>> {
        self.specs.get(&manifest.spec_id).ok_or_else(|| {
            Error::InvalidData(format!(
                "manifest {} was written with partition spec {}, which the table metadata does \
                 not have",
                manifest.path, manifest.spec_id
            ))
        })
    }

    fn read_manifest(
        &self,
        manifest: &ManifestFile,
        columns: &Columns,
        partition_keys: bool,
    ) -> Result<Arc<ManifestData>> {
        let spec = self.spec(manifest)?;
        let data = (self.read)(&manifest.path)?;
        let batch = read_manifest_as(
            &data,
            &manifest.path,
            &spec.partition_type,
            Some(&columns.names),
            Some(manifest.inherit()),
            columns.metric_keys.as_deref(),
        )?;
        Ok(Arc::new(ManifestData::new(
            manifest.path.clone(),
            spec.spec.clone(),
            spec.partition_type.clone(),
            batch,
            partition_keys,
        )?))
    }

    /// Live entries of `data` whose partition and metrics may match.
    fn matching_rows(&self, spec: &SpecPlan, data: &ManifestData) -> Result<Vec<usize>> {
        let partition_mask = spec.evaluators.partitions_might_match(&data.partition)?;
        let metrics_mask = self.metrics.files_might_match(&data.data_file)?;
        let mask = &partition_mask & &metrics_mask;
        let status = BooleanArray::from(mask);
        Ok((0..data.len())
            .filter(|&i| status.value(i) && data.is_live(i))
            .collect())
    }

    /// Manifests to read: live-file counts, then the partition summaries
    /// against each manifest's own spec.
    fn select_manifests(
        &self,
        manifests: &[ManifestFile],
        list: &RecordBatch,
    ) -> Result<Vec<ManifestFile>> {
        // Each spec's evaluator reads the partition summaries of its own
        // manifests only: another spec's summaries are laid out by that
        // spec's fields (a string bound where this spec has an int).
        let mut spec_ids: Vec<i32> = manifests.iter().map(|m| m.spec_id).collect();
        let row_specs = spec_ids.clone();
        spec_ids.sort_unstable();
        spec_ids.dedup();
        let mut answers: HashMap<i32, (arrow_buffer::BooleanBuffer, usize)> = HashMap::new();
        for &id in &spec_ids {
            let Some(spec) = self.specs.get(&id) else {
                continue; // refused below, naming the manifest
            };
            let answer = if spec_ids.len() == 1 {
                spec.evaluators.manifests_might_match(list)?
            } else {
                let rows: BooleanArray = row_specs.iter().map(|&s| Some(s == id)).collect();
                let own = arrow_select::filter::filter_record_batch(list, &rows).map_err(|e| {
                    Error::Internal(format!("selecting spec {id}'s manifests: {e}"))
                })?;
                spec.evaluators.manifests_might_match(&own)?
            };
            answers.insert(id, (answer, 0));
        }
        let mut out = Vec::with_capacity(manifests.len());
        for m in manifests {
            self.spec(m)?;
            let (answer, next) = answers
                .get_mut(&m.spec_id)
                .ok_or_else(|| Error::Internal(format!("no answer for spec {}", m.spec_id)))?;
            let matches = answer.value(*next);
            *next += 1;
            if matches && m.may_have_live_files() {
                out.push(m.clone());
            }
        }
        Ok(out)
    }

    /// Runs `work` over `items` on the scan's threads, keeping their order.
    fn parallel<T: Sync, R: Send>(
        &self,
        items: &[T],
        work: impl Fn(&T) -> Result<R> + Sync + Send,
    ) -> Result<Vec<R>> {
        if self.options.threads <= 1 || items.len() <= 1 {
            return items.iter().map(work).collect();
        }
        crate::runtime::run(self.options.threads, || {
            items.par_iter().map(work).collect::<Result<Vec<_>>>()
        })?
    }

    /// Decodes `manifest` and keeps its live entries whose partition and
    /// metrics may match: the manifest's data and the rows kept.
    fn prune(
        &self,
        manifest: &ManifestFile,
        columns: &Columns,
        partition_keys: bool,
    ) -> Result<(Arc<ManifestData>, Vec<usize>)> {
        let spec = self.spec(manifest)?;
        let data = self.read_manifest(manifest, columns, partition_keys)?;
        let rows = self.matching_rows(spec, &data)?;
        Ok((data, rows))
    }

    /// The entries of `manifest` that a plan keeps (live, partition and
    /// metrics may match), decoded with `columns`, as one batch: what an
    /// executor of a distributed plan sends back for the manifest
    /// ([`ScanContext::manifest_from_entries`] takes it in).
    pub fn prune_entries(&self, manifest: &ManifestFile, columns: &Columns) -> Result<RecordBatch> {
        let (data, rows) = self.prune(manifest, columns, false)?;
        if rows.len() == data.len() {
            return Ok(data.batch.clone());
        }
        let mut keep = vec![false; data.len()];
        for row in rows {
            keep[row] = true;
        }
        arrow_select::filter::filter_record_batch(&data.batch, &BooleanArray::from(keep))
            .map_err(|e| Error::Internal(format!("pruning manifest {}: {e}", manifest.path)))
    }

    /// A manifest's kept entries (from [`ScanContext::prune_entries`],
    /// perhaps in another process) as the planner holds them.
    fn manifest_from_entries(
        &self,
        manifest: &ManifestFile,
        entries: RecordBatch,
        partition_keys: bool,
    ) -> Result<Arc<ManifestData>> {
        let spec = self.spec(manifest)?;
        Ok(Arc::new(ManifestData::new(
            manifest.path.clone(),
            spec.spec.clone(),
            spec.partition_type.clone(),
            entries,
            partition_keys,
        )?))
    }

    /// Reads and filters the delete manifests into an index, leaving out
    /// delete files that apply to no data file of sequence number
    /// `data_floor` or above (when known; the index applies the rule).
    pub fn delete_index(
        &self,
        manifests: &[ManifestFile],
        data_floor: Option<i64>,
    ) -> Result<DeleteFileIndex> {
        let columns = Columns::deletes();
        let per_manifest = self.parallel(manifests, |m| {
            let (data, rows) = self.prune(m, &columns, true)?;
            Ok(rows
                .into_iter()
                .map(|row| FileRef::new(&data, row))
                .collect::<Vec<_>>())
        })?;
        DeleteFileIndex::build(
            per_manifest.into_iter().flatten().collect(),
            &self.schema,
            data_floor,
        )
    }

    /// The delete index from the kept entries of each delete manifest
    /// ([`ScanContext::prune_entries`] with [`Columns::deletes`]), as
    /// [`ScanContext::delete_index`] builds it from the manifests.
    pub fn delete_index_from_entries(
        &self,
        entries: Vec<(&ManifestFile, RecordBatch)>,
        data_floor: Option<i64>,
    ) -> Result<DeleteFileIndex> {
        let mut files = Vec::new();
        for (manifest, batch) in entries {
            let data = self.manifest_from_entries(manifest, batch, true)?;
            files.extend((0..data.len()).map(|row| FileRef::new(&data, row)));
        }
        DeleteFileIndex::build(files, &self.schema, data_floor)
    }

    /// The columns data manifests are decoded with, given the plan's
    /// delete index: only the metrics the filter and the equality deletes'
    /// overlap test read, unless the caller asked for every column's.
    pub fn data_columns(&self, deletes: &DeleteFileIndex) -> Columns {
        let stats =
            if self.options.include_column_stats || !self.metrics.referenced_ids().is_empty() {
                Stats::All
            } else if !deletes.has_equality_deletes() {
                Stats::None
            } else if deletes.equality_tests_read_counts() {
                Stats::BoundsAndCounts
            } else {
                Stats::Bounds
            };
        let metric_keys = (!self.options.include_column_stats).then(|| {
            let mut ids = self.metrics.referenced_ids();
            ids.extend(deletes.equality_field_ids());
            ids.sort_unstable();
            ids.dedup();
            ids
        });
        Columns {
            names: columns(stats, self.options.include_column_stats),
            metric_keys,
        }
    }

    /// Whether a data manifest's residuals depend on the partition, and
    /// whether its partition tuples must be comparable (for those residuals
    /// and for partition-scoped deletes).
    fn residuals_vary(&self, spec: &SpecPlan) -> bool {
        !matches!(self.filter, Expr::True) && !spec.spec.fields.is_empty()
    }

    fn data_keys(&self, spec: &SpecPlan, deletes: &DeleteFileIndex) -> bool {
        deletes.has_partition_scoped() || self.residuals_vary(spec)
    }

    /// Plans one data manifest.
    fn plan_manifest(
        &self,
        manifest: &ManifestFile,
        deletes: &DeleteFileIndex,
        columns: &Columns,
    ) -> Result<Vec<PlannedFile>> {
        let spec = self.spec(manifest)?;
        let (data, rows) = self.prune(manifest, columns, self.data_keys(spec, deletes))?;
        self.planned_files(manifest, &data, rows, deletes)
    }

    /// Plans one data manifest from its kept entries
    /// ([`ScanContext::prune_entries`] with [`ScanContext::data_columns`]):
    /// the same files as [`ScanContext::plan_manifest`].
    pub fn plan_manifest_entries(
        &self,
        manifest: &ManifestFile,
        entries: RecordBatch,
        deletes: &DeleteFileIndex,
    ) -> Result<Vec<PlannedFile>> {
        let spec = self.spec(manifest)?;
        let data = self.manifest_from_entries(manifest, entries, self.data_keys(spec, deletes))?;
        let rows = (0..data.len()).collect();
        self.planned_files(manifest, &data, rows, deletes)
    }

    /// The tasks of the kept `rows` of a data manifest: residuals and the
    /// delete files that apply.
    fn planned_files(
        &self,
        manifest: &ManifestFile,
        data: &Arc<ManifestData>,
        rows: Vec<usize>,
        deletes: &DeleteFileIndex,
    ) -> Result<Vec<PlannedFile>> {
        let spec = self.spec(manifest)?;
        let residuals_vary = self.residuals_vary(spec);
        let mut residuals: rustc_hash::FxHashMap<&[u8], Arc<Bound>> = Default::default();
        let whole = Arc::new(if residuals_vary {
            Expr::True
        } else {
            self.filter.clone()
        });
        let no_deletes: Arc<[DeleteId]> = Arc::from(Vec::new());
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            if data.content(row)? != Content::Data {
                return Err(Error::InvalidData(format!(
                    "data manifest {} lists delete file {}",
                    manifest.path,
                    data.file_path.value(row)
                )));
            }
            data.data_sequence_number(row)?;
            let residual = if residuals_vary {
                match residuals.get(data.partition_key(row)) {
                    Some(r) => r.clone(),
                    None => {
                        let r = Arc::new(spec.evaluators.residual(&data.partition, row)?);
                        residuals.insert(data.partition_key(row), r.clone());
                        r
                    }
                }
            } else {
                whole.clone()
            };
            let file = FileRef::new(data, row);
            let applied = deletes.for_data_file(&file)?;
            out.push(PlannedFile {
                deletes: if applied.is_empty() {
                    no_deletes.clone()
                } else {
                    applied.into()
                },
                residual,
                file,
            });
        }
        Ok(out)
    }
}

/// One data manifest's planned files, with the manifest's position in the
/// plan.
type Planned = (usize, Result<Vec<PlannedFile>>);

/// How a plan's data manifests are decoded.
enum Workers {
    /// On the scan's thread pool: one job per manifest, dispatched by the
    /// consumer as it takes results, never more than `WINDOW` ahead.
    Pool {
        pool: Arc<rayon::ThreadPool>,
        job: Arc<ManifestJob>,
        sender: Sender<Planned>,
        next: usize,
    },
    /// On one producer thread, in order (`threads` = 1).
    Thread,
}

/// What a manifest's job needs: shared by every job of one plan.
struct ManifestJob {
    context: Arc<ScanContext>,
    deletes: Arc<DeleteFileIndex>,
    columns: Columns,
    manifests: Vec<ManifestFile>,
}

impl ManifestJob {
    fn run(&self, index: usize) -> Result<Vec<PlannedFile>> {
        // A panic in a pool job would abort the process: it becomes the
        // manifest's error instead.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.context
                .plan_manifest(&self.manifests[index], &self.deletes, &self.columns)
        }))
        .unwrap_or_else(|payload| {
            Err(Error::Internal(format!(
                "panic while planning manifest {}: {}",
                self.manifests[index].path,
                panic_message(payload.as_ref())
            )))
        })
    }
}

/// The smallest data sequence number of the live files of `data_manifests`
/// (None when a manifest does not record it).
fn data_floor(data_manifests: &[ManifestFile]) -> Option<i64> {
    data_manifests
        .iter()
        .try_fold(i64::MAX, |floor, m| Some(floor.min(m.min_sequence_number?)))
}

/// The planned files of a scan, streamed in manifest-list order.
///
/// Manifests are decoded at most `WINDOW` ahead of the consumer, each as
/// soon as a worker is free, and handed over one by one: the consumer starts
/// on the first manifest while the others are decoded, and there is no
/// barrier where a worker waits for the rest of a chunk (chunks of 16
/// manifests, each handed over when all were done; the difference on a full
/// scan was within the noise of 2 cores). Jobs never wait for the consumer,
/// so a consumer that uses the same pool cannot deadlock with them.
pub struct PlanStream {
    receiver: Option<Receiver<Planned>>,
    workers: Workers,
    total: usize,
    /// The position of the next manifest to yield.
    taken: usize,
    /// Results that arrived before their turn, by position.
    early: VecDeque<Option<Result<Vec<PlannedFile>>>>,
    deletes: Arc<[FileRef]>,
}

impl PlanStream {
    /// The plan's table of delete files, which [`PlannedFile::deletes`]
    /// point into.
    pub fn delete_files(&self) -> &Arc<[FileRef]> {
        &self.deletes
    }

    /// Starts jobs until `WINDOW` manifests are in flight or waiting.
    fn dispatch(&mut self) {
        if let Workers::Pool {
            pool,
            job,
            sender,
            next,
        } = &mut self.workers
        {
            while *next < self.total && *next < self.taken + WINDOW {
                let (job, sender, index) = (job.clone(), sender.clone(), *next);
                // A send fails only when the stream was dropped.
                pool.spawn(move || drop(sender.send((index, job.run(index)))));
                *next += 1;
            }
        }
    }
}

/// How many manifests are decoded ahead of the consumer (memory: a few
/// thousand planned files each).
const WINDOW: usize = 16;

impl Iterator for PlanStream {
    type Item = Result<Vec<PlannedFile>>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.taken >= self.total {
            return None;
        }
        let receiver = self.receiver.as_ref()?;
        let result = loop {
            if let Some(Some(_)) = self.early.front() {
                if let Some(Some(result)) = self.early.pop_front() {
                    break result;
                }
            }
            match receiver.recv() {
                // Each position is sent once, and never one already taken.
                Ok((index, result)) if index >= self.taken => {
                    let slot = index - self.taken;
                    if self.early.len() <= slot {
                        self.early.resize_with(slot + 1, || None);
                    }
                    self.early[slot] = Some(result);
                }
                Ok((index, _)) => {
                    self.receiver = None;
                    return Some(Err(Error::Internal(format!(
                        "the planner sent manifest {index} twice"
                    ))));
                }
                // Every job and the producer are gone without the result:
                // cannot happen while the stream lives (they hold senders).
                Err(_) => {
                    self.receiver = None;
                    return Some(Err(Error::Internal(format!(
                        "the planner stopped before manifest {} of {}",
                        self.taken, self.total
                    ))));
                }
            }
        };
        self.taken += 1;
        if result.is_err() {
            // An error ends the plan: nothing more is decoded.
            self.taken = self.total;
            self.receiver = None;
        } else {
            self.dispatch();
        }
        Some(result)
    }
}

/// The manifests a plan of one snapshot reads: the data manifests and the
/// delete manifests that may hold live files matching the filter (file
/// counts and partition summaries, each manifest by its own spec).
#[derive(Debug, Clone, Default)]
pub struct Layout {
    pub data: Vec<ManifestFile>,
    /// The matching delete manifests (Java's `findMatchingDeleteManifests`:
    /// what its planning modes look at).
    pub matching_deletes: Vec<ManifestFile>,
    /// The delete manifests read: those not older than every planned data
    /// file (none when no data manifest matches).
    pub deletes: Vec<ManifestFile>,
    /// The smallest data sequence number of the planned data files, when
    /// every data manifest records it.
    pub floor: Option<i64>,
}

impl ScanContext {
    /// Reads (once per table) and prunes the manifest list at
    /// `manifest_list`.
    pub fn layout(&self, manifest_list: &str) -> Result<Layout> {
        let list = self.manifest_list(manifest_list)?;
        let all = self.select_manifests(&list.files, &list.batch)?;
        let (matching_deletes, data): (Vec<_>, Vec<_>) = all.into_iter().partition(|m| m.deletes);
        if data.is_empty() {
            // Nothing to read: delete files apply to no data file.
            return Ok(Layout {
                matching_deletes,
                ..Layout::default()
            });
        }
        // Delete files older than every planned data file apply to none of
        // them. A manifest's sequence number bounds its entries' (a manifest
        // never lists a file newer than the snapshot that added it), so a
        // delete manifest older than every planned data file is not read.
        let floor = data_floor(&data);
        let deletes = matching_deletes
            .iter()
            .filter(|m| floor.is_none_or(|floor| m.sequence_number >= floor))
            .cloned()
            .collect();
        Ok(Layout {
            data,
            matching_deletes,
            deletes,
            floor,
        })
    }
}

/// Plans the snapshot whose manifest list is at `manifest_list`. The
/// manifest list and the delete manifests are read before this returns
/// (their errors surface here); data manifests stream.
pub fn plan(context: Arc<ScanContext>, manifest_list: &str) -> Result<PlanStream> {
    let layout = context.layout(manifest_list)?;
    let deletes = context.delete_index(&layout.deletes, layout.floor)?;
    plan_data(context, layout.data, Arc::new(deletes))
}

/// Plans `data_manifests` (a [`Layout`]'s) with the delete index `deletes`
/// built from its delete manifests.
pub fn plan_data(
    context: Arc<ScanContext>,
    data_manifests: Vec<ManifestFile>,
    deletes: Arc<DeleteFileIndex>,
) -> Result<PlanStream> {
    let (sender, receiver) = channel();
    if data_manifests.is_empty() {
        return Ok(PlanStream {
            receiver: Some(receiver),
            workers: Workers::Thread,
            total: 0,
            taken: 0,
            early: VecDeque::new(),
            deletes: Arc::from(Vec::new()),
        });
    }
    let delete_files = deletes.files().clone();
    let columns = context.data_columns(&deletes);
    let total = data_manifests.len();
    let threads = context.options.threads;
    let job = Arc::new(ManifestJob {
        context,
        deletes,
        columns,
        manifests: data_manifests,
    });
    let (workers, receiver) = if threads > 1 {
        let pool = crate::runtime::pool(threads)?;
        let workers = Workers::Pool {
            pool,
            job,
            sender,
            next: 0,
        };
        (workers, receiver)
    } else {
        // One producer thread, bounded by the channel: the stream holds no
        // sender, so the producer's end tells when it stopped.
        let (bounded_sender, bounded_receiver) = sync_channel(WINDOW);
        std::thread::Builder::new()
            .name("frazil-planner".to_owned())
            .spawn(move || {
                for index in 0..job.manifests.len() {
                    let result = job.run(index);
                    let failed = result.is_err();
                    if bounded_sender.send((index, result)).is_err() || failed {
                        return;
                    }
                }
            })
            .map_err(|e| Error::Internal(format!("cannot start the planner thread: {e}")))?;
        (Workers::Thread, bounded_receiver)
    };
    let mut stream = PlanStream {
        receiver: Some(receiver),
        workers,
        total,
        taken: 0,
        early: VecDeque::new(),
        deletes: delete_files,
    };
    stream.dispatch();
    Ok(stream)
}

/// A whole plan: the planned files and the table of delete files their
/// `deletes` point into.
pub struct Plan {
    pub files: Vec<PlannedFile>,
    pub delete_files: Arc<[FileRef]>,
}

/// Plans everything at once (tests, and callers that want all tasks).
pub fn plan_all(context: Arc<ScanContext>, manifest_list: &str) -> Result<Plan> {
    let mut stream = plan(context, manifest_list)?;
    let mut files = Vec::new();
    for batch in &mut stream {
        files.extend(batch?);
    }
    Ok(Plan {
        files,
        delete_files: stream.deletes,
    })
}
