//! What the metrics and manifest evaluators share: a view of the metrics
//! columns of a decoded manifest ([`FileMetrics`]), the positions of the
//! referenced columns' entries in its maps ([`EntryIndex`]), the per-column
//! counts and bounds ([`ColumnMetrics`], bounds read in place by
//! [`super::bounds`]), the NOT rewrite that keeps NaN rows, and the bitmap
//! visitor.
//!
//! Only the columns a filter references are looked at, and of those only
//! the maps a predicate needs (`x < c`: value, null and NaN counts and lower
//! bounds), when first needed. The position of a column's entry in every
//! row's map is found by a scan of that row's keys starting where the
//! previous row had it: files of one manifest are usually written by one
//! writer with one key layout, so this costs one comparison per row; maps
//! with the same layout as a sibling (null counts as value counts, upper
//! bounds as lower bounds) reuse its positions.

use std::cell::OnceCell;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, Int64Array, MapArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::BooleanBuffer;
use arrow_schema::DataType;

use super::bounds::{bound_column, to_array, Side};
use super::compare::{collect, Column};
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, Expr};
use crate::spec::schema::Schema;
use crate::types::{PrimitiveType, Type};
use crate::values::{self, Literal};

/// Java's `IN_PREDICATE_LIMIT`: an `IN` with more literals answers "might
/// match" without looking at bounds (a planning-cost limit, kept for parity).
pub const IN_PREDICATE_LIMIT: usize = 200;

/// The metrics columns of the `data_file` struct of a decoded manifest, by
/// child name. Any of them may be absent (the reader projects columns):
/// absent metrics are unknown.
#[derive(Debug, Clone, Copy)]
pub struct FileMetrics<'a> {
    pub len: usize,
    pub file_path: Option<&'a StringArray>,
    pub record_count: Option<&'a Int64Array>,
    pub value_counts: Option<&'a MapArray>,
    pub null_value_counts: Option<&'a MapArray>,
    pub nan_value_counts: Option<&'a MapArray>,
    pub lower_bounds: Option<&'a MapArray>,
    pub upper_bounds: Option<&'a MapArray>,
}

impl<'a> FileMetrics<'a> {
    /// The view of a `data_file` struct column (children by name).
    pub fn new(data_file: &'a StructArray) -> Result<Self> {
        let map = |name: &str, value: DataType| -> Result<Option<&'a MapArray>> {
            let Some(column) = data_file.column_by_name(name) else {
                return Ok(None);
            };
            let wrong = || {
                Error::TypeMismatch(format!(
                    "data_file.{name} must be a map from int to {value}, got {}",
                    column.data_type()
                ))
            };
            let map = column.as_map_opt().ok_or_else(wrong)?;
            if map.keys().data_type() != &DataType::Int32 || map.values().data_type() != &value {
                return Err(wrong());
            }
            Ok(Some(map))
        };
        let record_count = match data_file.column_by_name("record_count") {
            None => None,
            Some(c) => Some(c.as_primitive_opt::<Int64Type>().ok_or_else(|| {
                Error::TypeMismatch(format!(
                    "data_file.record_count must be int64, got {}",
                    c.data_type()
                ))
            })?),
        };
        Ok(FileMetrics {
            len: data_file.len(),
            file_path: data_file
                .column_by_name("file_path")
                .and_then(|c| c.as_string_opt::<i32>()),
            record_count,
            value_counts: map("value_counts", DataType::Int64)?,
            null_value_counts: map("null_value_counts", DataType::Int64)?,
            nan_value_counts: map("nan_value_counts", DataType::Int64)?,
            lower_bounds: map("lower_bounds", DataType::Binary)?,
            upper_bounds: map("upper_bounds", DataType::Binary)?,
        })
    }

    /// The view of the `data_file` column of a manifest read by
    /// [`crate::manifest::read_manifest`].
    pub fn from_manifest(batch: &'a RecordBatch) -> Result<Self> {
        let data_file = batch
            .column_by_name("data_file")
            .ok_or_else(|| Error::InvalidValue("the manifest has no data_file column".to_owned()))?
            .as_struct_opt()
            .ok_or_else(|| Error::TypeMismatch("data_file must be a struct column".to_owned()))?;
        Self::new(data_file)
    }

    /// Names a row in error messages.
    pub(crate) fn describe_row(&self, row: usize) -> String {
        match self.file_path {
            Some(paths) if paths.is_valid(row) => format!("data file {}", paths.value(row)),
            _ => format!("manifest entry {row}"),
        }
    }

    /// Rows with a record count of 0 (and rows with a negative one, which
    /// imported files use for "unknown", Java: -1).
    pub(crate) fn empty_and_unknown_rows(&self) -> (BooleanBuffer, BooleanBuffer) {
        match self.record_count {
            None => (
                BooleanBuffer::new_unset(self.len),
                BooleanBuffer::new_unset(self.len),
            ),
            Some(counts) => {
                let v = counts.values();
                let (empty, unknown) = (
                    collect(self.len, |i| v[i] == 0),
                    collect(self.len, |i| v[i] < 0),
                );
                match counts.nulls() {
                    Some(nulls) => (&empty & nulls.inner(), &unknown & nulls.inner()),
                    None => (empty, unknown),
                }
            }
        }
    }
}

/// In entry positions: the row has no entry for the field.
pub(crate) const NO_ENTRY: u32 = u32::MAX;

/// For each row of `map`, the position (in the map's flattened entries) of
/// the entry whose key is `field_id`, or [`NO_ENTRY`]. Each row's keys are
/// searched from where the previous row had the key: one comparison per
/// row when files share a key layout.
pub(crate) fn entry_positions(map: &MapArray, field_id: i32) -> Vec<u32> {
    let offsets = map.value_offsets();
    let keys = map.keys().as_primitive::<Int32Type>().values();
    let map_nulls = map.nulls().filter(|b| b.null_count() > 0);
    // A null value is no value (the spec requires one).
    let value_nulls = map.values().nulls().filter(|b| b.null_count() > 0);
    let mut guess = 0usize;
    (0..map.len())
        .map(|row| {
            let start = offsets[row] as usize;
            let entries = &keys[start..offsets[row + 1] as usize];
            if map_nulls.is_some_and(|b| b.is_null(row)) {
                return NO_ENTRY;
            }
            let p = if entries.get(guess) == Some(&field_id) {
                guess
            } else {
                match entries.iter().position(|k| *k == field_id) {
                    Some(p) => {
                        guess = p;
                        p
                    }
                    None => return NO_ENTRY,
                }
            };
            if value_nulls.is_some_and(|b| b.is_null(start + p)) {
                return NO_ENTRY;
            }
            (start + p) as u32
        })
        .collect()
}

/// Whether two maps have the same keys at the same positions (writers
/// usually give value and null counts, and lower and upper bounds, the same
/// layout): then entry positions found in one hold for the other.
fn same_layout(a: &MapArray, b: &MapArray) -> bool {
    a.len() == b.len()
        && a.nulls() == b.nulls()
        && a.value_offsets() == b.value_offsets()
        && a.keys().as_primitive::<Int32Type>().values()
            == b.keys().as_primitive::<Int32Type>().values()
}

/// The metrics maps of `data_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapKind {
    ValueCounts = 0,
    NullCounts = 1,
    NanCounts = 2,
    Lower = 3,
    Upper = 4,
}

/// Where the referenced columns' entries are in each metrics map of a
/// manifest, found when first needed and shared between maps of the same
/// layout.
pub(crate) struct EntryIndex<'a> {
    files: FileMetrics<'a>,
    field_ids: Vec<i32>,
    /// For each map, the map whose positions it shares (itself if none).
    shares: [OnceCell<MapKind>; 5],
    /// By map, then by field (the order of `field_ids`).
    positions: [Vec<OnceCell<Vec<u32>>>; 5],
    no_entries: OnceCell<Vec<u32>>,
}

impl<'a> EntryIndex<'a> {
    pub(crate) fn new(files: FileMetrics<'a>, field_ids: Vec<i32>) -> Self {
        let cells = || {
            field_ids
                .iter()
                .map(|_| OnceCell::new())
                .collect::<Vec<_>>()
        };
        EntryIndex {
            files,
            positions: [cells(), cells(), cells(), cells(), cells()],
            field_ids,
            shares: Default::default(),
            no_entries: OnceCell::new(),
        }
    }

    fn map(&self, kind: MapKind) -> Option<&'a MapArray> {
        match kind {
            MapKind::ValueCounts => self.files.value_counts,
            MapKind::NullCounts => self.files.null_value_counts,
            MapKind::NanCounts => self.files.nan_value_counts,
            MapKind::Lower => self.files.lower_bounds,
            MapKind::Upper => self.files.upper_bounds,
        }
    }

    /// The map whose entry positions `kind` shares.
    fn shared(&self, kind: MapKind) -> MapKind {
        *self.shares[kind as usize].get_or_init(|| {
            let sibling = match kind {
                MapKind::NullCounts | MapKind::NanCounts => MapKind::ValueCounts,
                MapKind::Upper => MapKind::Lower,
                other => return other,
            };
            match (self.map(kind), self.map(sibling)) {
                (Some(a), Some(b)) if same_layout(a, b) => sibling,
                _ => kind,
            }
        })
    }

    /// Positions for a column without entries.
    fn no_entries(&self) -> &[u32] {
        self.no_entries
            .get_or_init(|| vec![NO_ENTRY; self.files.len])
    }

    /// The positions of `field_id`'s entries in map `kind` (None: no map).
    fn positions(&self, kind: MapKind, field_id: i32) -> Option<&[u32]> {
        let kind = self.shared(kind);
        let map = self.map(kind)?;
        let slot = self.field_ids.iter().position(|id| *id == field_id)?;
        Some(self.positions[kind as usize][slot].get_or_init(|| entry_positions(map, field_id)))
    }

    /// The counts of `field_id` in map `kind`: -1 where unknown (no entry,
    /// or a negative count).
    fn counts(&self, kind: MapKind, field_id: i32) -> Vec<i64> {
        match (self.map(kind), self.positions(kind, field_id)) {
            (Some(map), Some(positions)) => {
                let values = map.values();
                let counts = values.as_primitive::<Int64Type>().values();
                // Positions may come from a sibling map: check this map's
                // own null values.
                let nulls = values.nulls().filter(|b| b.null_count() > 0);
                positions
                    .iter()
                    .map(|p| match counts.get(*p as usize) {
                        Some(v) if *v >= 0 && nulls.is_none_or(|b| b.is_valid(*p as usize)) => *v,
                        _ => -1,
                    })
                    .collect()
            }
            _ => vec![-1; self.files.len],
        }
    }
}

/// The metrics of one column in every file of a manifest, gathered from
/// the maps when first asked for: a predicate looks only at what it needs
/// (`x < c` at the null, value and NaN counts and the lower bounds).
pub(crate) struct ColumnMetrics<'a> {
    index: &'a EntryIndex<'a>,
    field_id: i32,
    name: &'a str,
    /// None for columns without single values (no bounds).
    ty: Option<PrimitiveType>,
    /// Value, null and NaN counts, -1 where unknown.
    counts: [OnceCell<Vec<i64>>; 3],
    nulls_only: OnceCell<BooleanBuffer>,
    lower: OnceCell<Option<Column<'a>>>,
    upper: OnceCell<Option<Column<'a>>>,
}

impl<'a> ColumnMetrics<'a> {
    pub(crate) fn new(
        index: &'a EntryIndex<'a>,
        field_id: i32,
        name: &'a str,
        ty: Option<PrimitiveType>,
    ) -> Self {
        ColumnMetrics {
            index,
            field_id,
            name,
            ty,
            counts: Default::default(),
            nulls_only: OnceCell::new(),
            lower: OnceCell::new(),
            upper: OnceCell::new(),
        }
    }

    fn len(&self) -> usize {
        self.index.files.len
    }

    fn counts(&self, kind: MapKind) -> &[i64] {
        self.counts[kind as usize].get_or_init(|| self.index.counts(kind, self.field_id))
    }

    /// The lower bounds, read in place (null where unknown).
    pub(crate) fn lower(&self) -> Result<Option<&Column<'a>>> {
        self.bounds(&self.lower, MapKind::Lower, Side::Lower)
    }

    /// The upper bounds, read in place (null where unknown).
    pub(crate) fn upper(&self) -> Result<Option<&Column<'a>>> {
        self.bounds(&self.upper, MapKind::Upper, Side::Upper)
    }

    pub(crate) fn bound(&self, side: Side) -> Result<Option<&Column<'a>>> {
        match side {
            Side::Lower => self.lower(),
            Side::Upper => self.upper(),
        }
    }

    fn bounds<'s>(
        &'s self,
        cell: &'s OnceCell<Option<Column<'a>>>,
        kind: MapKind,
        side: Side,
    ) -> Result<Option<&'s Column<'a>>> {
        if let Some(done) = cell.get() {
            return Ok(done.as_ref());
        }
        let column = match (self.ty, self.index.map(kind)) {
            (None, _) => None,
            (Some(ty), map) => {
                let index: &'a EntryIndex<'a> = self.index;
                let (values, positions) = match (map, index.positions(kind, self.field_id)) {
                    (Some(map), Some(positions)) => (map.values().as_binary::<i32>(), positions),
                    _ => (empty_binary(), index.no_entries()),
                };
                Some(bound_column(values, positions, ty, side).map_err(|bad| {
                    Error::InvalidData(format!(
                        "{}: column {:?} (field id {}): {}",
                        self.index.files.describe_row(bad.row),
                        self.name,
                        self.field_id,
                        bad.error
                    ))
                })?)
            }
        };
        Ok(cell.get_or_init(|| column).as_ref())
    }

    /// Every value is null (Java: `containsNullsOnly`): both counts known
    /// and equal.
    pub(crate) fn nulls_only(&self) -> BooleanBuffer {
        self.nulls_only
            .get_or_init(|| {
                both_equal(
                    self.counts(MapKind::ValueCounts),
                    self.counts(MapKind::NullCounts),
                )
            })
            .clone()
    }

    /// Every value is NaN (Java: `containsNaNsOnly`); never for columns
    /// that cannot hold NaN.
    pub(crate) fn nans_only(&self) -> BooleanBuffer {
        if !self.ty.is_some_and(PrimitiveType::is_floating) {
            return BooleanBuffer::new_unset(self.len());
        }
        both_equal(
            self.counts(MapKind::ValueCounts),
            self.counts(MapKind::NanCounts),
        )
    }

    /// The null count is known to be 0.
    pub(crate) fn no_nulls(&self) -> BooleanBuffer {
        known_zero(self.counts(MapKind::NullCounts))
    }

    /// No null at all in a field nested in structs: the null count is 0 and
    /// the value count (which includes nulls) is not below the record count.
    /// Java's Parquet metrics count neither a value nor a null for a leaf
    /// whose enclosing struct is null, so a value count below the record
    /// count means rows where the field is null all the same.
    pub(crate) fn no_nulls_nested(&self) -> BooleanBuffer {
        let nulls = self.counts(MapKind::NullCounts);
        let values = self.counts(MapKind::ValueCounts);
        let records = self.index.files.record_count;
        collect(nulls.len(), |i| {
            let missing = match records {
                Some(r) if r.is_valid(i) && r.value(i) >= 0 && values[i] >= 0 => {
                    values[i] < r.value(i)
                }
                _ => false,
            };
            nulls[i] == 0 && !missing
        })
    }

    /// The NaN count is known to be 0 (always, for columns without NaN).
    pub(crate) fn no_nans(&self) -> BooleanBuffer {
        if !self.ty.is_some_and(PrimitiveType::is_floating) {
            return BooleanBuffer::new_set(self.len());
        }
        known_zero(self.counts(MapKind::NanCounts))
    }
}

/// An empty binary array, for bounds of a map that is absent.
pub(crate) fn empty_binary() -> &'static BinaryArray {
    static EMPTY: std::sync::OnceLock<BinaryArray> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| BinaryArray::new_null(0))
}

/// Both counts known (not negative) and equal.
fn both_equal(a: &[i64], b: &[i64]) -> BooleanBuffer {
    collect(a.len(), |i| a[i] >= 0 && a[i] == b[i])
}

fn known_zero(a: &[i64]) -> BooleanBuffer {
    collect(a.len(), |i| a[i] == 0)
}

/// What the metrics evaluators need to know about a referenced column.
#[derive(Debug, Clone)]
pub(crate) struct FieldInfo {
    pub name: String,
    /// None for columns without single values (struct, list, map, variant).
    pub ty: Option<PrimitiveType>,
    /// Inside a list or map: no metrics at all (spec: "Manifests").
    pub in_repeated: bool,
    /// Not a top-level column.
    pub nested: bool,
    /// Required, and so are all its ancestors: it is never null.
    pub never_null: bool,
    /// The initial-default (Appendix D JSON decoded), when not null.
    pub initial_default: Option<Literal>,
}

impl FieldInfo {
    pub(crate) fn of(schema: &Schema, field_id: i32) -> Result<Self> {
        let info = schema.field_info(field_id).ok_or_else(|| {
            Error::UnknownField(format!(
                "the filter references field id {field_id}, which schema {} does not have",
                schema.schema_id
            ))
        })?;
        let field = &info.field;
        let never_null = field.required
            && info
                .parents
                .iter()
                .all(|p| schema.field(*p).is_some_and(|f| f.required));
        let ty = match &field.field_type {
            Type::Primitive(p) => Some(*p),
            _ => None,
        };
        let initial_default = match (&field.initial_default, ty) {
            (Some(json), Some(_)) if !json.is_null() => {
                Some(values::from_json(&field.field_type, json).map_err(|e| {
                    Error::InvalidValue(format!("initial-default of column {:?}: {e}", info.name))
                })?)
            }
            _ => None,
        };
        Ok(FieldInfo {
            name: info.name.clone(),
            ty,
            in_repeated: info.in_repeated,
            nested: !info.parents.is_empty(),
            never_null,
            initial_default,
        })
    }
}

/// All set where `keep` and not `drop`.
pub(crate) fn and_not(keep: &BooleanBuffer, drop: &BooleanBuffer) -> BooleanBuffer {
    BooleanBuffer::from_bitwise_binary_op(
        keep.values(),
        keep.offset(),
        drop.values(),
        drop.offset(),
        keep.len(),
        |a, b| a & !b,
    )
}

/// Evaluates a NOT-free expression row by row as bitmaps: `leaf` gives each
/// predicate's answer, AND and OR combine them. The operands of an AND
/// after those that are false everywhere together (or of an OR true
/// everywhere) are not evaluated.
pub(crate) fn visit(
    expr: &Bound,
    len: usize,
    leaf: &mut impl FnMut(&BoundPredicate) -> Result<BooleanBuffer>,
) -> Result<BooleanBuffer> {
    Ok(match expr {
        Expr::True => BooleanBuffer::new_set(len),
        Expr::False => BooleanBuffer::new_unset(len),
        Expr::And(items) | Expr::Or(items) => {
            let and = matches!(expr, Expr::And(_));
            let mut result: Option<BooleanBuffer> = None;
            for item in items {
                let answer = visit(item, len, leaf)?;
                let combined = match result {
                    None => answer,
                    Some(so_far) if and => &so_far & &answer,
                    Some(so_far) => &so_far | &answer,
                };
                if (and && !combined.has_true()) || (!and && !combined.has_false()) {
                    return Ok(combined);
                }
                result = Some(combined);
            }
            // An AND of nothing is true, an OR of nothing false.
            result.unwrap_or_else(|| {
                if and {
                    BooleanBuffer::new_set(len)
                } else {
                    BooleanBuffer::new_unset(len)
                }
            })
        }
        Expr::Not(_) => {
            return Err(Error::Internal(
                "NOT left in an expression after rewriting it away".to_owned(),
            ))
        }
        Expr::Predicate(p) => leaf(p)?,
    })
}

/// The field ids the predicates of `expr` reference, each once, in order.
pub(crate) fn referenced_ids(expr: &Bound) -> Vec<i32> {
    let mut ids: Vec<i32> = Vec::new();
    for p in expr.predicates() {
        let id = p.term().field_id();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// The bounds of `transform(x)` from the bounds of `x`, for a transform that
/// preserves order (`a <= b` gives `t(a) <= t(b)`, so `t(lower)` and
/// `t(upper)` bound the transformed values; Java does the same).
pub(crate) fn transform_bounds(
    transform: crate::transform::Transform,
    bounds: &Column<'_>,
    source: PrimitiveType,
) -> Result<ArrayRef> {
    let array = to_array(bounds, source);
    let input: ArrayRef = if source == PrimitiveType::String {
        // String bounds are bytes; truncate counts code points.
        let b = array.as_binary::<i32>();
        Arc::new(
            StringArray::try_new(b.offsets().clone(), b.values().clone(), b.nulls().cloned())
                .map_err(|e| {
                    Error::InvalidData(format!("a string bound is not valid UTF-8: {e}"))
                })?,
        )
    } else {
        array
    };
    crate::transform::kernels::apply(transform, input.as_ref())
}
