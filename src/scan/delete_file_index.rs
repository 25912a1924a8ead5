//! Which delete files apply to which data file (spec: "Scan Planning",
//! "Row-level Deletes"), as an index built once per scan, never a data-file
//! by delete-file cross product:
//!
//! - position delete files apply to data files of the same spec and
//!   partition with a data sequence number `<=` theirs; a file-scoped one
//!   (`referenced_data_file`, or equal `file_path` bounds) only to that file;
//! - a v3 deletion vector applies to its `referenced_data_file`, and then the
//!   v2 position delete files no longer do;
//! - equality delete files apply to data files with a strictly smaller data
//!   sequence number in the same spec and partition, or to every partition
//!   when their spec is unpartitioned; like Java's `DeleteFileIndex`, one
//!   whose equality columns' null counts or bounds cannot overlap the data
//!   file's is left out.
//!
//! Groups are sorted by sequence number so that a data file's deletes are a
//! binary search away. A data file's deletes are positions in the index's
//! table of delete files ([`DeleteId`]), not shared references: a plan with
//! equality deletes lists hundreds of thousands, and counting references to
//! a few delete manifests from every planner thread made their counters
//! contended.

use std::collections::HashMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::files::{Content, FileRef, ManifestData};
use crate::error::{Error, Result};
use crate::expr::Datum;
use crate::spec::schema::Schema;
use crate::types::PrimitiveType;

type PartitionKey = (i32, Box<[u8]>);

/// Groups by spec id, then by the partition tuple's comparable bytes: a
/// data file's lookup borrows its key, allocating nothing.
type ByPartition<T> = FxHashMap<i32, FxHashMap<Box<[u8]>, Sorted<T>>>;

fn by_partition<T>(groups: HashMap<PartitionKey, Vec<(i64, T)>>) -> ByPartition<T> {
    let mut out: ByPartition<T> = FxHashMap::default();
    for ((spec_id, key), items) in groups {
        out.entry(spec_id)
            .or_default()
            .insert(key, Sorted::from(items));
    }
    out
}

fn lookup<'a, T>(groups: &'a ByPartition<T>, spec_id: i32, key: &[u8]) -> Option<&'a Sorted<T>> {
    groups.get(&spec_id)?.get(key)
}

/// Files sorted by the sequence number from which on they apply.
struct Sorted<T> {
    seqs: Vec<i64>,
    files: Vec<T>,
}

impl<T> Default for Sorted<T> {
    fn default() -> Self {
        Sorted {
            seqs: Vec::new(),
            files: Vec::new(),
        }
    }
}

impl<T> Sorted<T> {
    fn from(mut items: Vec<(i64, T)>) -> Self {
        items.sort_by_key(|(seq, _)| *seq);
        let (seqs, files) = items.into_iter().unzip();
        Sorted { seqs, files }
    }

    /// The files whose sequence number is `>= seq`.
    fn applying_to(&self, seq: i64) -> &[T] {
        let start = self.seqs.partition_point(|&s| s < seq);
        &self.files[start..]
    }
}

/// A delete file's position in its index's (or a task's) table of delete
/// files.
pub type DeleteId = u32;

/// What the overlap test needs of an equality delete file.
struct EqualityDelete {
    id: DeleteId,
    fields: Vec<EqualityField>,
    /// Both bounds maps are present (Java: `hasLowerAndUpperBounds`).
    has_bounds: bool,
}

struct EqualityField {
    id: i32,
    required: bool,
    /// None for a column no longer in the schema or not primitive: then the
    /// delete file may match.
    ty: Option<PrimitiveType>,
    lower: Option<Datum>,
    upper: Option<Datum>,
    null_count: Option<i64>,
    value_count: Option<i64>,
}

pub struct DeleteFileIndex {
    /// Every indexed delete file, by [`DeleteId`].
    files: Arc<[FileRef]>,
    global: Sorted<EqualityDelete>,
    eq_by_partition: ByPartition<EqualityDelete>,
    pos_by_partition: ByPartition<DeleteId>,
    pos_by_path: FxHashMap<String, Sorted<DeleteId>>,
    dv_by_path: FxHashMap<String, DeleteId>,
}

impl Default for DeleteFileIndex {
    fn default() -> Self {
        DeleteFileIndex {
            files: Arc::from(Vec::new()),
            global: Sorted::default(),
            eq_by_partition: ByPartition::default(),
            pos_by_partition: ByPartition::default(),
            pos_by_path: FxHashMap::default(),
            dv_by_path: FxHashMap::default(),
        }
    }
}

/// Whether a data file's metrics maps are decoded for the overlap test.
pub struct DataStats<'a> {
    pub manifest: &'a ManifestData,
    pub row: usize,
}

impl DeleteFileIndex {
    /// Indexes the live delete files `files` (already filtered by the scan).
    /// With `data_floor`, the smallest data sequence number of the data files
    /// planned, delete files that apply only to older data are left out
    /// (deletion vectors stay: one older than its data file is an error).
    pub fn build(files: Vec<FileRef>, schema: &Schema, data_floor: Option<i64>) -> Result<Self> {
        let below_floor = |apply: i64| data_floor.is_some_and(|floor| apply < floor);
        let mut global = Vec::new();
        let mut eq_by_partition: HashMap<PartitionKey, Vec<(i64, EqualityDelete)>> = HashMap::new();
        let mut pos_by_partition: HashMap<PartitionKey, Vec<(i64, DeleteId)>> = HashMap::new();
        let mut pos_by_path: HashMap<String, Vec<(i64, DeleteId)>> = HashMap::new();
        let mut dv_by_path: FxHashMap<String, DeleteId> = FxHashMap::default();
        let id_of = |index: usize| {
            DeleteId::try_from(index).map_err(|_| {
                Error::Validation(format!(
                    "a scan can apply at most {} delete files",
                    u32::MAX
                ))
            })
        };
        for (index, file) in files.iter().enumerate() {
            let id = id_of(index)?;
            let manifest = file.manifest.clone();
            let row = file.row();
            let seq = manifest.data_sequence_number(row)?;
            let key =
                || -> PartitionKey { (manifest.spec.spec_id, manifest.partition_key(row).into()) };
            match manifest.content(row)? {
                Content::Data => {
                    return Err(Error::InvalidData(format!(
                        "delete manifest {} lists data file {}",
                        manifest.path,
                        file.path()
                    )))
                }
                Content::PositionDeletes if manifest.is_dv(row) => {
                    let target = manifest.referenced_data_file(row).ok_or_else(|| {
                        Error::InvalidData(format!(
                            "deletion vector {} in {} has no referenced_data_file",
                            file.path(),
                            manifest.path
                        ))
                    })?;
                    if let Some(&existing) = dv_by_path.get(target) {
                        return Err(Error::InvalidData(format!(
                            "two deletion vectors for {target}: {} and {}",
                            dv_desc(&files[existing as usize]),
                            dv_desc(file)
                        )));
                    }
                    dv_by_path.insert(target.to_owned(), id);
                }
                Content::PositionDeletes if below_floor(seq) => {}
                Content::PositionDeletes => match manifest.referenced_location(row) {
                    Some(path) => pos_by_path
                        .entry(path.to_owned())
                        .or_default()
                        .push((seq, id)),
                    None => pos_by_partition.entry(key()).or_default().push((seq, id)),
                },
                // Equality deletes apply to strictly older data: from the
                // sequence number before theirs on.
                Content::EqualityDeletes if below_floor(seq - 1) => {}
                Content::EqualityDeletes => {
                    let delete = equality_delete(id, file, schema)?;
                    let apply = seq - 1;
                    if manifest.spec.is_unpartitioned() {
                        global.push((apply, delete));
                    } else {
                        eq_by_partition
                            .entry(key())
                            .or_default()
                            .push((apply, delete));
                    }
                }
            }
        }
        Ok(DeleteFileIndex {
            files: files.into(),
            global: Sorted::from(global),
            eq_by_partition: by_partition(eq_by_partition),
            pos_by_partition: by_partition(pos_by_partition),
            pos_by_path: pos_by_path
                .into_iter()
                .map(|(k, v)| (k, Sorted::from(v)))
                .collect(),
            dv_by_path,
        })
    }

    pub fn is_empty(&self) -> bool {
        !self.has_equality_deletes() && !self.has_position_deletes()
    }

    pub fn has_equality_deletes(&self) -> bool {
        !self.global.files.is_empty() || !self.eq_by_partition.is_empty()
    }

    /// Every indexed delete file, by [`DeleteId`]: the table the ids
    /// [`DeleteFileIndex::for_data_file`] returns point into.
    pub fn files(&self) -> &Arc<[FileRef]> {
        &self.files
    }

    /// The equality columns of every equality delete, partition-scoped and
    /// global.
    fn equality_fields(&self) -> impl Iterator<Item = &EqualityField> {
        self.eq_by_partition
            .values()
            .flat_map(|groups| groups.values())
            .chain(std::iter::once(&self.global))
            .flat_map(|sorted| sorted.files.iter())
            .flat_map(|delete| delete.fields.iter())
    }

    /// The field ids of every equality delete's equality columns (the data
    /// files' metrics the overlap test reads), sorted.
    pub fn equality_field_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self.equality_fields().map(|f| f.id).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Whether the overlap test reads the data files' value and null counts:
    /// only for an optional equality column (a required one holds no null,
    /// so only the bounds matter; Java's `canContainEqDeletesForFile`).
    pub fn equality_tests_read_counts(&self) -> bool {
        self.equality_fields()
            .any(|f| !f.required && f.ty.is_some())
    }

    pub fn has_position_deletes(&self) -> bool {
        !self.pos_by_partition.is_empty()
            || !self.pos_by_path.is_empty()
            || !self.dv_by_path.is_empty()
    }

    /// Whether lookups need data files' partition keys.
    pub fn has_partition_scoped(&self) -> bool {
        !self.eq_by_partition.is_empty() || !self.pos_by_partition.is_empty()
    }

    /// The delete files that apply to the data file `data`, as positions in
    /// [`DeleteFileIndex::files`].
    pub fn for_data_file(&self, data: &FileRef) -> Result<Vec<DeleteId>> {
        if self.is_empty() {
            return Ok(Vec::new());
        }
        let manifest = &data.manifest;
        let row = data.row();
        let seq = manifest.data_sequence_number(row)?;
        let path = data.path();
        let spec_id = manifest.spec.spec_id;
        let key = manifest.partition_key(row);
        let mut out = Vec::new();
        let stats = DataStats { manifest, row };
        for delete in self.global.applying_to(seq) {
            if can_contain_eq_deletes(&stats, delete)? {
                out.push(delete.id);
            }
        }
        if let Some(group) = lookup(&self.eq_by_partition, spec_id, key) {
            for delete in group.applying_to(seq) {
                if can_contain_eq_deletes(&stats, delete)? {
                    out.push(delete.id);
                }
            }
        }
        if let Some(&dv_id) = self.dv_by_path.get(path) {
            let dv = &self.files[dv_id as usize];
            let dv_seq = dv.data_sequence_number();
            if dv_seq < seq {
                return Err(Error::InvalidData(format!(
                    "deletion vector {} has data sequence number {dv_seq}, older than its data \
                     file {path} ({seq})",
                    dv_desc(dv)
                )));
            }
            out.push(dv_id);
            return Ok(out);
        }
        if let Some(group) = lookup(&self.pos_by_partition, spec_id, key) {
            out.extend_from_slice(group.applying_to(seq));
        }
        if let Some(group) = self.pos_by_path.get(path) {
            out.extend_from_slice(group.applying_to(seq));
        }
        Ok(out)
    }
}

/// For each row of `deletes` (a decoded delete manifest), the rows of `data`
/// whose metrics may hold one of its deleted keys when it is an equality
/// delete file (none for other rows). The overlap test of planning, for
/// conflict checks that ask which data files a new equality delete file may
/// reach (Java's `validateNoNewDeletesForDataFiles`, through
/// `DeleteFileIndex.forDataFile`). Partitions and sequence numbers are the
/// caller's to match.
pub fn equality_delete_reach(
    data: &ManifestData,
    deletes: &Arc<ManifestData>,
    schema: &Schema,
) -> Result<Vec<Vec<usize>>> {
    let mut out = Vec::with_capacity(deletes.len());
    for row in 0..deletes.len() {
        let mut reached = Vec::new();
        if deletes.content(row)? == Content::EqualityDeletes {
            let delete = equality_delete(0, &FileRef::new(deletes, row), schema)?;
            for data_row in 0..data.len() {
                let stats = DataStats {
                    manifest: data,
                    row: data_row,
                };
                if can_contain_eq_deletes(&stats, &delete)? {
                    reached.push(data_row);
                }
            }
        }
        out.push(reached);
    }
    Ok(out)
}

fn dv_desc(file: &FileRef) -> String {
    let m = &file.manifest;
    let row = file.row();
    let offset = m.content_offset.as_ref().map(|c| c.value(row));
    let size = m.content_size.as_ref().map(|c| c.value(row));
    format!(
        "{} (offset {}, length {})",
        file.path(),
        offset.map_or("?".to_owned(), |v| v.to_string()),
        size.map_or("?".to_owned(), |v| v.to_string())
    )
}

fn equality_delete(id: DeleteId, file: &FileRef, schema: &Schema) -> Result<EqualityDelete> {
    let m = file.manifest.clone();
    let row = file.row();
    let ids = m.equality_ids(row);
    let mut fields = Vec::with_capacity(ids.len());
    for id in ids {
        let field = schema.field(id);
        let ty = field.and_then(|f| f.field_type.as_primitive());
        let bound = |map: &Option<super::files::MetricMap>| -> Result<Option<Datum>> {
            let (Some(ty), Some(bytes)) = (ty, map.as_ref().and_then(|m| m.bytes(row, id))) else {
                return Ok(None);
            };
            Datum::from_bytes(ty, bytes).map(Some).map_err(|e| {
                Error::InvalidData(format!(
                    "equality delete file {}: bound of field {id}: {e}",
                    file.path()
                ))
            })
        };
        fields.push(EqualityField {
            id,
            required: field.is_some_and(|f| f.required),
            ty,
            lower: bound(&m.lower_bounds)?,
            upper: bound(&m.upper_bounds)?,
            null_count: m.null_value_counts.as_ref().and_then(|c| c.long(row, id)),
            value_count: m.value_counts.as_ref().and_then(|c| c.long(row, id)),
        });
    }
    let has_bounds = m.lower_bounds.as_ref().is_some_and(|b| !b.is_null(row))
        && m.upper_bounds.as_ref().is_some_and(|b| !b.is_null(row));
    Ok(EqualityDelete {
        id,
        fields,
        has_bounds,
    })
}

/// Java's `DeleteFileIndex.canContainEqDeletesForFile`: false only when the
/// metrics prove that no deleted key can occur in the data file.
fn can_contain_eq_deletes(data: &DataStats<'_>, delete: &EqualityDelete) -> Result<bool> {
    let m = data.manifest;
    let row = data.row;
    let data_lowers = m.lower_bounds.as_ref().filter(|b| !b.is_null(row));
    let data_uppers = m.upper_bounds.as_ref().filter(|b| !b.is_null(row));
    let check_ranges = data_lowers.is_some() && data_uppers.is_some() && delete.has_bounds;
    let data_nulls = m.null_value_counts.as_ref().filter(|c| !c.is_null(row));
    let data_values = m.value_counts.as_ref().filter(|c| !c.is_null(row));
    for field in &delete.fields {
        let Some(ty) = field.ty else {
            // Stats are not kept for nested types (or the column is gone).
            continue;
        };
        let data_null_count = data_nulls.and_then(|c| c.long(row, field.id));
        let data_value_count = data_values.and_then(|c| c.long(row, field.id));
        // containsNull: unknown counts might hold nulls.
        let data_has_null = !field.required && data_null_count.is_none_or(|n| n > 0);
        let delete_has_null = !field.required && field.null_count.is_none_or(|n| n > 0);
        if data_has_null && delete_has_null {
            continue;
        }
        let all_null = |nulls: Option<i64>, values: Option<i64>| {
            !field.required && matches!((nulls, values), (Some(n), Some(v)) if n == v)
        };
        let all_non_null = |nulls: Option<i64>| field.required || nulls.is_some_and(|n| n <= 0);
        if all_null(data_null_count, data_value_count) && all_non_null(field.null_count) {
            return Ok(false);
        }
        if all_null(field.null_count, field.value_count) && all_non_null(data_null_count) {
            return Ok(false);
        }
        if !check_ranges {
            continue;
        }
        let data_lower = data_lowers.and_then(|b| b.bytes(row, field.id));
        let data_upper = data_uppers.and_then(|b| b.bytes(row, field.id));
        let (Some(data_lower), Some(data_upper), Some(delete_lower), Some(delete_upper)) =
            (data_lower, data_upper, &field.lower, &field.upper)
        else {
            continue;
        };
        let decode = |bytes: &[u8]| {
            Datum::from_bytes(ty, bytes).map_err(|e| {
                Error::InvalidData(format!(
                    "data file {}: bound of field {}: {e}",
                    m.file_path.value(row),
                    field.id
                ))
            })
        };
        if decode(data_lower)?.cmp_value(delete_upper).is_gt() {
            return Ok(false);
        }
        if delete_lower.cmp_value(&decode(data_upper)?).is_gt() {
            return Ok(false);
        }
    }
    Ok(true)
}
