//! What the metrics and manifest evaluators share: a view of the metrics
//! columns of a decoded manifest ([`FileMetrics`]), the per-column counts and
//! bounds gathered from its maps in one pass each ([`ColumnMetrics`]), the
//! Appendix D decoding of bounds into typed Arrow columns, and the NOT
//! rewrite that keeps NaN rows.
//!
//! Only the columns a filter references are gathered. For each one, the
//! position of its entry in every row's map is found by a scan of that row's
//! keys, starting where the previous row had it: files of one manifest are
//! usually written by one writer with the same key layout, so this costs one
//! comparison per row.

use std::sync::Arc;

use arrow_array::builder::BinaryBuilder;
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, Int64Array, MapArray,
    PrimitiveArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::compare::collect;
use crate::avro::columns::primitive_data_type;
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, Expr, Op};
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
                let valid = |i: usize| counts.is_valid(i);
                (
                    collect(self.len, |i| valid(i) && v[i] == 0),
                    collect(self.len, |i| valid(i) && v[i] < 0),
                )
            }
        }
    }
}

/// For each row of `map`, the position (in the map's flattened entries) of
/// the entry whose key is `field_id`, if any.
pub(crate) fn entry_positions(map: &MapArray, field_id: i32) -> Vec<Option<u32>> {
    let offsets = map.value_offsets();
    let keys = map.keys().as_primitive::<Int32Type>().values();
    let values = map.values();
    let mut guess = 0usize;
    (0..map.len())
        .map(|row| {
            if map.is_null(row) {
                return None;
            }
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let at = if start + guess < end && keys[start + guess] == field_id {
                start + guess
            } else {
                let p = keys[start..end].iter().position(|k| *k == field_id)?;
                guess = p;
                start + p
            };
            // A null value is no value (the spec requires one).
            values.is_valid(at).then_some(at as u32)
        })
        .collect()
}

/// The counts of one column in each row (null where unknown: no entry, or a
/// negative count).
fn gather_counts(map: Option<&MapArray>, field_id: i32, len: usize) -> Int64Array {
    let Some(map) = map else {
        return Int64Array::new_null(len);
    };
    let values = map.values().as_primitive::<Int64Type>().values();
    entry_positions(map, field_id)
        .into_iter()
        .map(|p| p.map(|p| values[p as usize]).filter(|v| *v >= 0))
        .collect()
}

/// Which bound a column of bounds holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Lower,
    Upper,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Lower => "lower",
            Side::Upper => "upper",
        }
    }
}

/// One unreadable bound: the row and what is wrong with it.
pub(crate) struct BadBound {
    pub row: usize,
    pub error: Error,
}

/// Decodes the bounds at `positions` of `values` (Appendix D bytes) into a
/// column of `ty`'s Arrow type (null where there is none).
///
/// - Widths written before a promotion are read (spec: "Schema Evolution";
///   pitfalls: iceberg #2232): 4 bytes for a `long` (int), a `double`
///   (float) or a timestamp (v3: a date, midnight of that day).
/// - Decimals are minimum-length big-endian two's complement (1 to 16 bytes).
/// - A NaN bound (the spec forbids them; old ORC writers wrote them) is no
///   bound. Zeros are widened: a lower bound +0.0 reads as -0.0 and an upper
///   bound -0.0 as +0.0, as writers that ignore the sign of zero (spec note
///   to "Manifest Lists", pitfalls) may have produced them.
/// - Strings, binary, fixed and UUIDs stay bytes (a `Binary` column).
pub(crate) fn decode_bounds(
    values: &BinaryArray,
    positions: &[Option<u32>],
    ty: PrimitiveType,
    side: Side,
) -> std::result::Result<ArrayRef, BadBound> {
    use PrimitiveType as P;
    let bytes_at = |row: usize| {
        positions[row]
            .map(|p| p as usize)
            .filter(|p| values.is_valid(*p))
            .map(|p| values.value(p))
    };
    let n = positions.len();
    let width = |row: usize, bytes: &[u8], expected: &str| BadBound {
        row,
        error: Error::InvalidData(format!(
            "the {} bound of a {ty} column has {} bytes, expected {expected}",
            side.name(),
            bytes.len()
        )),
    };
    macro_rules! fixed {
        ($arrow:ty, $decode:expr) => {
            gather::<$arrow>(n, ty, |row| match bytes_at(row) {
                None => Ok(None),
                Some(b) => $decode(b).map_err(|expected: &str| width(row, b, expected)),
            })?
        };
    }
    let le4 = |b: &[u8]| -> Option<[u8; 4]> { b.try_into().ok() };
    let le8 = |b: &[u8]| -> Option<[u8; 8]> { b.try_into().ok() };
    let int_or_long = |b: &[u8]| -> std::result::Result<Option<i64>, &'static str> {
        match b.len() {
            4 => Ok(le4(b).map(|b| i64::from(i32::from_le_bytes(b)))),
            8 => Ok(le8(b).map(i64::from_le_bytes)),
            _ => Err("8 (or 4, written as an int)"),
        }
    };
    let timestamp = |b: &[u8], per_day: i64| -> std::result::Result<Option<i64>, &'static str> {
        match b.len() {
            8 => Ok(le8(b).map(i64::from_le_bytes)),
            // Days of a date promoted to a timestamp; beyond the range of a
            // timestamp (no real bound is) it saturates, still a bound.
            4 => Ok(le4(b).map(|b| i64::from(i32::from_le_bytes(b)).saturating_mul(per_day))),
            _ => Err("8 (or 4, written as a date)"),
        }
    };
    let float = |v: f64| -> Option<f64> {
        match (v.is_nan(), v == 0.0, side) {
            (true, _, _) => None,
            (false, true, Side::Lower) => Some(-0.0),
            (false, true, Side::Upper) => Some(0.0),
            _ => Some(v),
        }
    };
    let micros_per_day = values::MICROS_PER_DAY;
    Ok(match ty {
        P::Boolean => {
            let mut bits = Vec::with_capacity(n);
            for row in 0..n {
                bits.push(match bytes_at(row) {
                    None => None,
                    Some([b]) => Some(*b != 0),
                    Some(b) => return Err(width(row, b, "1")),
                });
            }
            Arc::new(BooleanArray::from(bits))
        }
        P::Int => fixed!(Int32Type, |b: &[u8]| le4(b)
            .map(|b| Some(i32::from_le_bytes(b)))
            .ok_or("4")),
        P::Date => fixed!(Date32Type, |b: &[u8]| le4(b)
            .map(|b| Some(i32::from_le_bytes(b)))
            .ok_or("4")),
        P::Long => fixed!(Int64Type, int_or_long),
        P::Time => fixed!(Time64MicrosecondType, |b: &[u8]| le8(b)
            .map(|b| Some(i64::from_le_bytes(b)))
            .ok_or("8")),
        P::Timestamp | P::Timestamptz => {
            fixed!(TimestampMicrosecondType, |b: &[u8]| timestamp(
                b,
                micros_per_day
            ))
        }
        P::TimestampNs | P::TimestamptzNs => {
            fixed!(TimestampNanosecondType, |b: &[u8]| timestamp(
                b,
                micros_per_day * 1000
            ))
        }
        P::Float => fixed!(Float32Type, |b: &[u8]| le4(b)
            .map(|b| float(f64::from(f32::from_le_bytes(b))).map(|v| v as f32))
            .ok_or("4")),
        P::Double => fixed!(Float64Type, |b: &[u8]| match b.len() {
            4 => Ok(le4(b).and_then(|b| float(f64::from(f32::from_le_bytes(b))))),
            8 => Ok(le8(b).and_then(|b| float(f64::from_le_bytes(b)))),
            _ => Err("8 (or 4, written as a float)"),
        }),
        P::Decimal { .. } => fixed!(Decimal128Type, |b: &[u8]| values::decimal::from_be_bytes(b)
            .map(Some)
            .map_err(|_| "1 to 16")),
        P::String | P::Binary | P::Uuid | P::Fixed(_) => {
            let expected = match ty {
                P::Uuid => Some(16),
                P::Fixed(length) => usize::try_from(length).ok(),
                _ => None,
            };
            let mut builder = BinaryBuilder::with_capacity(n, 0);
            for row in 0..n {
                match bytes_at(row) {
                    None => builder.append_null(),
                    Some(b) if expected.is_some_and(|e| e != b.len()) => {
                        return Err(width(row, b, &expected.unwrap_or(0).to_string()))
                    }
                    Some(b) => builder.append_value(b),
                }
            }
            Arc::new(builder.finish())
        }
        P::Unknown => Arc::new(arrow_array::NullArray::new(n)),
    })
}

/// A primitive column from per-row decoded values (`None`: no bound).
fn gather<T: ArrowPrimitiveType>(
    n: usize,
    ty: PrimitiveType,
    mut decode: impl FnMut(usize) -> std::result::Result<Option<T::Native>, BadBound>,
) -> std::result::Result<ArrayRef, BadBound> {
    let mut values = Vec::with_capacity(n);
    let mut valid = Vec::with_capacity(n);
    for row in 0..n {
        let v = decode(row)?;
        valid.push(v.is_some());
        values.push(v.unwrap_or_default());
    }
    Ok(Arc::new(
        PrimitiveArray::<T>::new(ScalarBuffer::from(values), Some(NullBuffer::from(valid)))
            .with_data_type(primitive_data_type(ty)),
    ))
}

/// The metrics of one column in every file of a manifest. Unknown counts
/// and bounds are null.
pub(crate) struct ColumnMetrics {
    pub value_counts: Int64Array,
    pub null_counts: Int64Array,
    pub nan_counts: Int64Array,
    /// In the column's Arrow type; None for columns without single values.
    pub lower: Option<ArrayRef>,
    pub upper: Option<ArrayRef>,
}

impl ColumnMetrics {
    pub(crate) fn gather(
        files: &FileMetrics<'_>,
        field_id: i32,
        name: &str,
        ty: Option<PrimitiveType>,
    ) -> Result<Self> {
        let n = files.len;
        let bounds = |map: Option<&MapArray>, side: Side| -> Result<Option<ArrayRef>> {
            let Some(ty) = ty else { return Ok(None) };
            let positions = match map {
                Some(map) => entry_positions(map, field_id),
                None => vec![None; n],
            };
            let empty = BinaryArray::new_null(0);
            let values = map.map(|m| m.values().as_binary::<i32>()).unwrap_or(&empty);
            decode_bounds(values, &positions, ty, side)
                .map(Some)
                .map_err(|bad| {
                    Error::InvalidData(format!(
                        "{}: column {name:?} (field id {field_id}): {}",
                        files.describe_row(bad.row),
                        bad.error
                    ))
                })
        };
        Ok(ColumnMetrics {
            value_counts: gather_counts(files.value_counts, field_id, n),
            null_counts: gather_counts(files.null_value_counts, field_id, n),
            nan_counts: gather_counts(files.nan_value_counts, field_id, n),
            lower: bounds(files.lower_bounds, Side::Lower)?,
            upper: bounds(files.upper_bounds, Side::Upper)?,
        })
    }

    /// Every value is null (Java: `containsNullsOnly`): both counts known
    /// and equal.
    pub(crate) fn nulls_only(&self) -> BooleanBuffer {
        both_equal(&self.value_counts, &self.null_counts)
    }

    /// Every value is NaN (Java: `containsNaNsOnly`).
    pub(crate) fn nans_only(&self) -> BooleanBuffer {
        both_equal(&self.value_counts, &self.nan_counts)
    }

    /// The null count is known to be 0.
    pub(crate) fn no_nulls(&self) -> BooleanBuffer {
        known_zero(&self.null_counts)
    }

    /// The NaN count is known to be 0.
    pub(crate) fn no_nans(&self) -> BooleanBuffer {
        known_zero(&self.nan_counts)
    }
}

fn both_equal(a: &Int64Array, b: &Int64Array) -> BooleanBuffer {
    let (x, y) = (a.values(), b.values());
    collect(a.len(), |i| a.is_valid(i) && b.is_valid(i) && x[i] == y[i])
}

fn known_zero(a: &Int64Array) -> BooleanBuffer {
    let v = a.values();
    collect(a.len(), |i| a.is_valid(i) && v[i] == 0)
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

/// Pushes NOT down to the predicates (as [`super::rewrite_not`]), keeping
/// the rows NaN makes true: `NOT (x < c)` holds for a NaN `x`, `x >= c` does
/// not, so on float columns it becomes `x >= c OR x IS NAN` (pitfalls:
/// "Bounds and metrics"). Nulls need nothing: under three-valued logic
/// `NOT (x < c)` and `x >= c` are both unknown.
pub fn rewrite_not_keep_nan(expr: &Bound) -> Bound {
    match expr {
        Expr::True | Expr::False | Expr::Predicate(_) => expr.clone(),
        Expr::And(a, b) => Expr::and(rewrite_not_keep_nan(a), rewrite_not_keep_nan(b)),
        Expr::Or(a, b) => Expr::or(rewrite_not_keep_nan(a), rewrite_not_keep_nan(b)),
        Expr::Not(inner) => negate(inner),
    }
}

fn negate(expr: &Bound) -> Bound {
    match expr {
        Expr::True => Expr::False,
        Expr::False => Expr::True,
        Expr::And(a, b) => Expr::or(negate(a), negate(b)),
        Expr::Or(a, b) => Expr::and(negate(a), negate(b)),
        Expr::Not(inner) => rewrite_not_keep_nan(inner),
        Expr::Predicate(p) => {
            let negated = Expr::Predicate(p.negate());
            match p {
                BoundPredicate::Literal { op, term, .. }
                    if matches!(op, Op::Lt | Op::LtEq | Op::Gt | Op::GtEq)
                        && term.ty().is_floating() =>
                {
                    Expr::or(
                        negated,
                        Expr::Predicate(BoundPredicate::Unary {
                            op: Op::IsNan,
                            term: term.clone(),
                        }),
                    )
                }
                _ => negated,
            }
        }
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
/// predicate's answer, AND and OR combine them. The right side of an AND
/// whose left side is false everywhere (or an OR true everywhere) is not
/// evaluated.
pub(crate) fn visit(
    expr: &Bound,
    len: usize,
    leaf: &mut impl FnMut(&BoundPredicate) -> Result<BooleanBuffer>,
) -> Result<BooleanBuffer> {
    Ok(match expr {
        Expr::True => BooleanBuffer::new_set(len),
        Expr::False => BooleanBuffer::new_unset(len),
        Expr::And(a, b) => {
            let left = visit(a, len, leaf)?;
            if !left.has_true() {
                return Ok(left);
            }
            &left & &visit(b, len, leaf)?
        }
        Expr::Or(a, b) => {
            let left = visit(a, len, leaf)?;
            if !left.has_false() {
                return Ok(left);
            }
            &left | &visit(b, len, leaf)?
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
    bounds: &ArrayRef,
    source: PrimitiveType,
) -> Result<ArrayRef> {
    let input: ArrayRef = if source == PrimitiveType::String {
        // String bounds are gathered as bytes; truncate counts code points.
        let b = bounds.as_binary::<i32>();
        Arc::new(
            StringArray::try_new(b.offsets().clone(), b.values().clone(), b.nulls().cloned())
                .map_err(|e| {
                    Error::InvalidData(format!("a string bound is not valid UTF-8: {e}"))
                })?,
        )
    } else {
        Arc::clone(bounds)
    };
    crate::transform::kernels::apply(transform, input.as_ref())
}
