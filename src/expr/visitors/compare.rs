//! Typed comparison kernels over Arrow columns, shared by the partition,
//! manifest and metrics evaluators, and the value semantics they agree on.
//!
//! A column (a partition field, or the lower or upper bounds of a column
//! gathered from a manifest) is compared with a bound literal in one tight
//! loop per predicate, giving a bitmap; no per-row `Datum` is built.
//!
//! Value semantics ("R", what the evaluators are sound for):
//! - null: `IS NULL`, `IS NOT NAN` and the negative operations `!=`,
//!   `NOT IN` and `NOT STARTS WITH` hold (Java's evaluator computes those as
//!   negations; pitfalls: `NOT NaN(null)` is true, NOT STARTS WITH is the
//!   negation of STARTS WITH); ordered comparisons, `=`, `IN` and
//!   `STARTS WITH` do not (unlike Java, which orders nulls first).
//! - floats: NaN is unordered. `<`, `<=`, `>`, `>=`, `=` and `IN` are false
//!   for NaN, `!=` and `NOT IN` true. Other values follow Iceberg's order
//!   (spec: "Sorting"): -0.0 sorts before and differs from +0.0, as in Java.
//! - strings compare by UTF-8 bytes (code point order), binary, fixed and
//!   UUIDs as unsigned bytes (spec: UUIDs are unsigned; Java 1.10 compares
//!   them signed).
//!
//! Java's row `Evaluator` differs on purpose: it orders nulls first and NaN
//! above every value, so `null < 5` and `NaN > 5` hold there (while Java's
//! metrics evaluators prune as if they did not).

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::Array;
use arrow_buffer::BooleanBuffer;
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};
use crate::expr::literal::Datum;
use crate::expr::predicate::{BoundPredicate, Op};
use crate::values::Literal;

use super::metrics::NO_ENTRY;

/// The values of one column.
#[derive(Clone)]
enum Values<'a> {
    /// Every slot is null (Arrow `Null`, Iceberg `unknown`).
    Null,
    Bool(&'a BooleanBuffer),
    I32(&'a [i32]),
    I64(&'a [i64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
    I128(&'a [i128]),
    Bytes {
        offsets: &'a [i32],
        data: &'a [u8],
    },
    LargeBytes {
        offsets: &'a [i64],
        data: &'a [u8],
    },
    Fixed {
        size: usize,
        data: &'a [u8],
    },
    /// Bounds read in place from their Appendix D bytes ([`super::bounds`]).
    Raw(RawBounds<'a>, RawKind),
}

/// How raw bound bytes decode; widths were checked when the column was made.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawKind {
    Bool,
    /// 8 bytes little-endian, or 4 (an int, or a date's days times
    /// `per_day` for a timestamp promoted from a date).
    Int {
        per_day: i64,
    },
    /// 8 or 4 bytes, the sign of zero as written (spec: "Manifests", note 2:
    /// -0.0 precedes +0.0; Java compares bounds as written).
    Float,
    /// Big-endian two's complement, 1 to 16 bytes.
    Decimal,
    Bytes,
}

/// Entries of a metrics map's binary values, one per row (or none).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawBounds<'a> {
    pub positions: &'a [u32],
    pub offsets: &'a [i32],
    pub data: &'a [u8],
}

impl<'a> RawBounds<'a> {
    /// The bytes of row `i`'s entry (empty when there is none).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &'a [u8] {
        match self.positions[i] {
            NO_ENTRY => &[],
            p => {
                let p = p as usize;
                &self.data[self.offsets[p] as usize..self.offsets[p + 1] as usize]
            }
        }
    }
}

/// The kind of values a column holds, for choosing a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Decimal,
    Bytes,
}

/// A typed view of a column (an Arrow array, or bounds read in place) with
/// its validity.
#[derive(Clone)]
pub(crate) struct Column<'a> {
    values: Values<'a>,
    /// The Arrow type of the values (for bounds: of the column's type,
    /// `Binary` for strings, UUIDs and fixed).
    data_type: DataType,
    /// Set where the slot holds a value.
    valid: BooleanBuffer,
}

/// A literal in the representation of a column's values.
#[derive(Debug, Clone, PartialEq)]
enum Key {
    Bool(bool),
    Int(i64),
    Float(f64),
    Decimal(i128),
    Bytes(Vec<u8>),
}

impl<'a> Column<'a> {
    pub(crate) fn new(array: &'a dyn Array) -> Result<Self> {
        let len = array.len();
        let data_type = array.data_type();
        let values = match data_type {
            DataType::Null => Values::Null,
            DataType::Boolean => Values::Bool(array.as_boolean().values()),
            DataType::Int32 => Values::I32(array.as_primitive::<Int32Type>().values()),
            DataType::Date32 => Values::I32(array.as_primitive::<Date32Type>().values()),
            DataType::Int64 => Values::I64(array.as_primitive::<Int64Type>().values()),
            DataType::Time64(TimeUnit::Microsecond) => {
                Values::I64(array.as_primitive::<Time64MicrosecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Values::I64(array.as_primitive::<TimestampMicrosecondType>().values())
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Values::I64(array.as_primitive::<TimestampNanosecondType>().values())
            }
            DataType::Float32 => Values::F32(array.as_primitive::<Float32Type>().values()),
            DataType::Float64 => Values::F64(array.as_primitive::<Float64Type>().values()),
            DataType::Decimal128(_, _) => {
                Values::I128(array.as_primitive::<Decimal128Type>().values())
            }
            DataType::Utf8 => {
                let a = array.as_string::<i32>();
                Values::Bytes {
                    offsets: a.value_offsets(),
                    data: a.value_data(),
                }
            }
            DataType::LargeUtf8 => {
                let a = array.as_string::<i64>();
                Values::LargeBytes {
                    offsets: a.value_offsets(),
                    data: a.value_data(),
                }
            }
            DataType::Binary => {
                let a = array.as_binary::<i32>();
                Values::Bytes {
                    offsets: a.value_offsets(),
                    data: a.value_data(),
                }
            }
            DataType::LargeBinary => {
                let a = array.as_binary::<i64>();
                Values::LargeBytes {
                    offsets: a.value_offsets(),
                    data: a.value_data(),
                }
            }
            DataType::FixedSizeBinary(size) => {
                let a = array.as_fixed_size_binary();
                Values::Fixed {
                    size: usize::try_from(*size).unwrap_or(0),
                    data: a.value_data(),
                }
            }
            other => {
                return Err(Error::TypeMismatch(format!(
                    "cannot evaluate filters on an Arrow column of type {other}"
                )))
            }
        };
        let valid = match (&values, array.nulls()) {
            (Values::Null, _) => BooleanBuffer::new_unset(len),
            (_, Some(nulls)) => nulls.inner().clone(),
            (_, None) => BooleanBuffer::new_set(len),
        };
        Ok(Column {
            values,
            data_type: data_type.clone(),
            valid,
        })
    }

    /// A column of bounds read in place (see [`super::bounds`]); `valid` is
    /// set where a usable bound exists.
    pub(crate) fn raw(
        raw: RawBounds<'a>,
        kind: Option<RawKind>,
        data_type: DataType,
        valid: BooleanBuffer,
    ) -> Self {
        Column {
            values: match kind {
                Some(kind) => Values::Raw(raw, kind),
                None => Values::Null,
            },
            data_type,
            valid,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.valid.len()
    }

    /// Set where the slot holds a value.
    pub(crate) fn valid(&self) -> &BooleanBuffer {
        &self.valid
    }

    fn kind(&self) -> Kind {
        match &self.values {
            Values::Null => Kind::Null,
            Values::Bool(_) | Values::Raw(_, RawKind::Bool) => Kind::Bool,
            Values::I32(_) | Values::I64(_) | Values::Raw(_, RawKind::Int { .. }) => Kind::Int,
            Values::F32(_) | Values::F64(_) | Values::Raw(_, RawKind::Float) => Kind::Float,
            Values::I128(_) | Values::Raw(_, RawKind::Decimal) => Kind::Decimal,
            Values::Bytes { .. }
            | Values::LargeBytes { .. }
            | Values::Fixed { .. }
            | Values::Raw(_, RawKind::Bytes) => Kind::Bytes,
        }
    }

    // Typed access to slot `i` (any value for null slots). The match on the
    // representation is the same for every slot, so it predicts perfectly.

    #[inline]
    pub(crate) fn bool_at(&self, i: usize) -> bool {
        match &self.values {
            Values::Bool(v) => v.value(i),
            Values::Raw(raw, _) => raw.get(i).first().is_some_and(|b| *b != 0),
            _ => false,
        }
    }

    #[inline]
    pub(crate) fn int_at(&self, i: usize) -> i64 {
        match &self.values {
            Values::I32(v) => i64::from(v[i]),
            Values::I64(v) => v[i],
            Values::Raw(raw, RawKind::Int { per_day }) => {
                let b = raw.get(i);
                if let Ok(b8) = <[u8; 8]>::try_from(b) {
                    i64::from_le_bytes(b8)
                } else if let Ok(b4) = <[u8; 4]>::try_from(b) {
                    i64::from(i32::from_le_bytes(b4)).saturating_mul(*per_day)
                } else {
                    0
                }
            }
            _ => 0,
        }
    }

    #[inline]
    pub(crate) fn float_at(&self, i: usize) -> f64 {
        match &self.values {
            Values::F32(v) => f64::from(v[i]),
            Values::F64(v) => v[i],
            Values::Raw(raw, RawKind::Float) => {
                let b = raw.get(i);
                if let Ok(b8) = <[u8; 8]>::try_from(b) {
                    f64::from_le_bytes(b8)
                } else if let Ok(b4) = <[u8; 4]>::try_from(b) {
                    f64::from(f32::from_le_bytes(b4))
                } else {
                    0.0
                }
            }
            _ => 0.0,
        }
    }

    #[inline]
    pub(crate) fn decimal_at(&self, i: usize) -> i128 {
        match &self.values {
            Values::I128(v) => v[i],
            Values::Raw(raw, _) => be_i128(raw.get(i)),
            _ => 0,
        }
    }

    /// The bytes of slot `i` of a string, binary or fixed column.
    #[inline]
    pub(crate) fn bytes(&self, i: usize) -> &'a [u8] {
        match self.values {
            Values::Bytes { offsets, data } => &data[offsets[i] as usize..offsets[i + 1] as usize],
            Values::LargeBytes { offsets, data } => {
                &data[offsets[i] as usize..offsets[i + 1] as usize]
            }
            Values::Fixed { size, data } => &data[i * size..(i + 1) * size],
            Values::Raw(raw, _) => raw.get(i),
            _ => &[],
        }
    }

    /// The literal as a value of this column, or a type error: a literal
    /// of another kind would compare a different representation (days
    /// against microseconds).
    fn key(&self, literal: &Literal) -> Result<Key> {
        use DataType as D;
        use Literal as L;
        let key = match (literal, &self.data_type) {
            (L::Boolean(v), D::Boolean) => Some(Key::Bool(*v)),
            (L::Int(v), D::Int32 | D::Int64) => Some(Key::Int(i64::from(*v))),
            (L::Long(v), D::Int64) => Some(Key::Int(*v)),
            // Day counts: the day transform's kernel gives Int32 for its
            // `date` result, and some writers type day partitions as int.
            (L::Date(v) | L::Int(v), D::Date32) | (L::Date(v), D::Int32) => {
                Some(Key::Int(i64::from(*v)))
            }
            (L::Time(v), D::Time64(TimeUnit::Microsecond)) => Some(Key::Int(*v)),
            (L::Timestamp(v) | L::Timestamptz(v), D::Timestamp(TimeUnit::Microsecond, _)) => {
                Some(Key::Int(*v))
            }
            (L::TimestampNs(v) | L::TimestamptzNs(v), D::Timestamp(TimeUnit::Nanosecond, _)) => {
                Some(Key::Int(*v))
            }
            (L::Float(v), D::Float32 | D::Float64) => Some(Key::Float(f64::from(*v))),
            (L::Double(v), D::Float64) => Some(Key::Float(*v)),
            (L::Decimal(v), D::Decimal128(_, _)) => Some(Key::Decimal(*v)),
            // Bounds of string, uuid and fixed columns are binary.
            (L::String(s), D::Utf8 | D::LargeUtf8 | D::Binary) => {
                Some(Key::Bytes(s.as_bytes().to_vec()))
            }
            (L::Binary(b), D::Binary | D::LargeBinary) => Some(Key::Bytes(b.clone())),
            (L::Fixed(b), D::FixedSizeBinary(_) | D::Binary) => Some(Key::Bytes(b.clone())),
            (L::Uuid(b), D::FixedSizeBinary(16) | D::Binary) => Some(Key::Bytes(b.to_vec())),
            _ => None,
        };
        match (key, self.kind()) {
            (_, Kind::Null) => Ok(Key::Bool(false)),
            (Some(key), _) => Ok(key),
            (None, _) => Err(Error::TypeMismatch(format!(
                "cannot compare a {} literal ({literal}) with a column of Arrow type {}",
                literal.kind(),
                self.data_type
            ))),
        }
    }

    /// `value <op> literal` for each slot holding a value (unset for nulls),
    /// `op` one of `<`, `<=`, `>`, `>=`, `=`, `!=`.
    pub(crate) fn compare(&self, op: Op, literal: &Literal) -> Result<BooleanBuffer> {
        let key = self.key(literal)?;
        let n = self.len();
        let bits = match (self.kind(), &key) {
            (Kind::Null, _) => return Ok(BooleanBuffer::new_unset(n)),
            (Kind::Bool, Key::Bool(k)) => collect(n, |i| holds(op, self.bool_at(i).cmp(k))),
            (Kind::Int, Key::Int(k)) => collect(n, |i| holds(op, self.int_at(i).cmp(k))),
            (Kind::Float, Key::Float(k)) => collect(n, |i| float_holds(op, self.float_at(i), *k)),
            (Kind::Decimal, Key::Decimal(k)) => {
                collect(n, |i| holds(op, self.decimal_at(i).cmp(k)))
            }
            (Kind::Bytes, Key::Bytes(k)) => {
                collect(n, |i| holds(op, self.bytes(i).cmp(k.as_slice())))
            }
            _ => return Err(self.mismatch()),
        };
        Ok(&bits & &self.valid)
    }

    fn mismatch(&self) -> Error {
        Error::Internal(format!(
            "no comparison kernel for Arrow type {}",
            self.data_type
        ))
    }

    /// Set for NaN values.
    pub(crate) fn is_nan(&self) -> BooleanBuffer {
        let n = self.len();
        let bits = match self.kind() {
            Kind::Float => collect(n, |i| self.float_at(i).is_nan()),
            _ => BooleanBuffer::new_unset(n),
        };
        &bits & &self.valid
    }

    /// For each slot, the position in `set` of a literal equal to its value
    /// (None for nulls, NaN and values not in the set). `set` must be
    /// sorted by [`Datum::cmp_value`] (bound predicates are).
    pub(crate) fn position_in(&self, set: &KeySet) -> Vec<Option<u32>> {
        let n = self.len();
        let find = |i: usize| -> Option<usize> {
            if !self.valid.value(i) {
                return None;
            }
            match (self.kind(), set) {
                (Kind::Bool, KeySet::Bool(s)) => s.binary_search(&self.bool_at(i)).ok(),
                (Kind::Int, KeySet::Int(s)) => s.binary_search(&self.int_at(i)).ok(),
                (Kind::Float, KeySet::Float(s)) => float_position(s, self.float_at(i)),
                (Kind::Decimal, KeySet::Decimal(s)) => s.binary_search(&self.decimal_at(i)).ok(),
                (Kind::Bytes, KeySet::Bytes(s)) => {
                    s.binary_search_by(|k| k.as_slice().cmp(self.bytes(i))).ok()
                }
                _ => None,
            }
        };
        (0..n).map(|i| find(i).map(|p| p as u32)).collect()
    }

    /// Whether the value is in `set` (false for nulls and NaN).
    pub(crate) fn is_in(&self, set: &KeySet) -> BooleanBuffer {
        let positions = self.position_in(set);
        collect(self.len(), |i| positions[i].is_some())
    }

    /// How each value, cut to the length of `prefix`, compares with
    /// `prefix`: the tests `STARTS WITH` needs on (possibly truncated)
    /// string bounds. Unset for nulls.
    pub(crate) fn prefix_test(&self, prefix: &[u8], test: PrefixTest) -> Result<BooleanBuffer> {
        match self.kind() {
            Kind::Bytes => {}
            Kind::Null => return Ok(BooleanBuffer::new_unset(self.len())),
            _ => {
                return Err(Error::TypeMismatch(format!(
                    "STARTS WITH needs a string column, not Arrow type {}",
                    self.data_type
                )))
            }
        }
        let bits = collect(self.len(), |i| {
            let value = self.bytes(i);
            let cut = &value[..value.len().min(prefix.len())];
            match test {
                PrefixTest::StartsWith => value.len() >= prefix.len() && cut == prefix,
                PrefixTest::CutAbove => cut > prefix,
                PrefixTest::CutBelow => cut < prefix,
            }
        });
        Ok(&bits & &self.valid)
    }

    /// Whether some literal of `set` lies in `[lower, upper]` where `self`
    /// is the column of lower bounds; a null bound is unbounded on its side.
    /// `set` is sorted, so each row costs one binary search.
    pub(crate) fn any_in_range(&self, upper: &Column<'_>, set: &KeySet) -> BooleanBuffer {
        let n = self.len();
        if set.is_empty() {
            return BooleanBuffer::new_unset(n);
        }
        // The first literal >= lower, then whether it is <= upper.
        let first_at_least = |i: usize| -> usize {
            if !self.valid.value(i) {
                return 0;
            }
            match (self.kind(), set) {
                (Kind::Bool, KeySet::Bool(s)) => {
                    // false < true: the first literal >= x.
                    let x = self.bool_at(i);
                    s.partition_point(|k| !*k & x)
                }
                (Kind::Int, KeySet::Int(s)) => {
                    let x = self.int_at(i);
                    s.partition_point(|k| *k < x)
                }
                (Kind::Float, KeySet::Float(s)) => {
                    let x = self.float_at(i);
                    s.partition_point(|k| k.total_cmp(&x).is_lt())
                }
                (Kind::Decimal, KeySet::Decimal(s)) => {
                    let x = self.decimal_at(i);
                    s.partition_point(|k| *k < x)
                }
                (Kind::Bytes, KeySet::Bytes(s)) => {
                    let x = self.bytes(i);
                    s.partition_point(|k| k.as_slice() < x)
                }
                _ => 0,
            }
        };
        let at_most_upper = |i: usize, p: usize| -> bool {
            if !upper.valid.value(i) {
                return true;
            }
            match (upper.kind(), set) {
                (Kind::Bool, KeySet::Bool(s)) => s[p] <= upper.bool_at(i),
                (Kind::Int, KeySet::Int(s)) => s[p] <= upper.int_at(i),
                (Kind::Float, KeySet::Float(s)) => s[p].total_cmp(&upper.float_at(i)).is_le(),
                (Kind::Decimal, KeySet::Decimal(s)) => s[p] <= upper.decimal_at(i),
                (Kind::Bytes, KeySet::Bytes(s)) => s[p].as_slice() <= upper.bytes(i),
                _ => true,
            }
        };
        collect(n, |i| {
            let p = first_at_least(i);
            p < set.len() && at_most_upper(i, p)
        })
    }

    /// The literals of a set predicate in this column's representation,
    /// sorted in Iceberg's order.
    pub(crate) fn key_set(&self, literals: &[Datum]) -> Result<KeySet> {
        let keys = literals
            .iter()
            .map(|d| self.key(&d.value))
            .collect::<Result<Vec<_>>>()?;
        KeySet::from_keys(keys)
    }
}

/// A big-endian two's-complement integer of 1 to 16 bytes (0 if empty).
#[inline]
pub(crate) fn be_i128(b: &[u8]) -> i128 {
    let Some(first) = b.first() else { return 0 };
    let mut buf = if first & 0x80 != 0 {
        [0xff; 16]
    } else {
        [0; 16]
    };
    let n = b.len().min(16);
    buf[16 - n..].copy_from_slice(&b[b.len() - n..]);
    i128::from_be_bytes(buf)
}

/// The tests [`Column::prefix_test`] offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PrefixTest {
    /// The value starts with the prefix.
    StartsWith,
    /// The value cut to the prefix's length sorts after the prefix: no
    /// value at or above it starts with the prefix.
    CutAbove,
    /// The value cut to the prefix's length sorts before the prefix: no
    /// value at or below it starts with the prefix.
    CutBelow,
}

/// The sorted literals of a set predicate, in a column's representation.
#[derive(Debug, Clone)]
pub(crate) enum KeySet {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Decimal(Vec<i128>),
    Bytes(Vec<Vec<u8>>),
}

impl KeySet {
    fn from_keys(keys: Vec<Key>) -> Result<Self> {
        fn all<T>(keys: Vec<Key>, f: impl Fn(Key) -> Option<T>) -> Result<Vec<T>> {
            keys.into_iter()
                .map(|k| f(k).ok_or_else(|| Error::Internal("mixed set literals".to_owned())))
                .collect()
        }
        let mut set = match keys.first() {
            None | Some(Key::Int(_)) => KeySet::Int(all(keys, |k| match k {
                Key::Int(v) => Some(v),
                _ => None,
            })?),
            Some(Key::Bool(_)) => KeySet::Bool(all(keys, |k| match k {
                Key::Bool(v) => Some(v),
                _ => None,
            })?),
            Some(Key::Float(_)) => KeySet::Float(all(keys, |k| match k {
                Key::Float(v) => Some(v),
                _ => None,
            })?),
            Some(Key::Decimal(_)) => KeySet::Decimal(all(keys, |k| match k {
                Key::Decimal(v) => Some(v),
                _ => None,
            })?),
            Some(Key::Bytes(_)) => KeySet::Bytes(all(keys, |k| match k {
                Key::Bytes(v) => Some(v),
                _ => None,
            })?),
        };
        match &mut set {
            KeySet::Bool(v) => v.sort(),
            KeySet::Int(v) => v.sort(),
            KeySet::Float(v) => v.sort_by(f64::total_cmp),
            KeySet::Decimal(v) => v.sort(),
            KeySet::Bytes(v) => v.sort(),
        }
        Ok(set)
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            KeySet::Bool(v) => v.len(),
            KeySet::Int(v) => v.len(),
            KeySet::Float(v) => v.len(),
            KeySet::Decimal(v) => v.len(),
            KeySet::Bytes(v) => v.len(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A NaN is in no set; other floats by Iceberg's order (-0.0 is not 0.0).
fn float_position(set: &[f64], x: f64) -> Option<usize> {
    if x.is_nan() {
        return None;
    }
    set.binary_search_by(|k| k.total_cmp(&x)).ok()
}

#[inline]
pub(crate) fn collect(len: usize, f: impl FnMut(usize) -> bool) -> BooleanBuffer {
    BooleanBuffer::collect_bool(len, f)
}

/// Whether `value <op> literal` holds when the value compares to the
/// literal as `ord`.
#[inline]
pub(crate) fn holds(op: Op, ord: Ordering) -> bool {
    match op {
        Op::Lt => ord.is_lt(),
        Op::LtEq => ord.is_le(),
        Op::Gt => ord.is_gt(),
        Op::GtEq => ord.is_ge(),
        Op::Eq => ord.is_eq(),
        Op::NotEq => ord.is_ne(),
        _ => false,
    }
}

/// [`holds`] for floats: NaN satisfies only `!=` (the literal is never NaN).
#[inline]
fn float_holds(op: Op, value: f64, literal: f64) -> bool {
    if value.is_nan() {
        return op == Op::NotEq;
    }
    holds(op, value.total_cmp(&literal))
}

/// Whether the predicate holds for one value under the semantics above:
/// `None` is null. The reference the vectorized kernels agree with; used
/// for single values such as a column's initial default.
pub fn predicate_holds(predicate: &BoundPredicate, value: Option<&Literal>) -> bool {
    let is_nan = |v: &Literal| match v {
        Literal::Float(f) => f.is_nan(),
        Literal::Double(f) => f.is_nan(),
        _ => false,
    };
    let op = predicate.op();
    let Some(value) = value else {
        return matches!(
            op,
            Op::IsNull | Op::NotNan | Op::NotEq | Op::NotIn | Op::NotStartsWith
        );
    };
    let compare = |literal: &Datum| crate::expr::literal::compare(value, &literal.value);
    match predicate {
        BoundPredicate::Unary { op, .. } => match op {
            Op::IsNull => false,
            Op::NotNull => true,
            Op::IsNan => is_nan(value),
            Op::NotNan => !is_nan(value),
            _ => false,
        },
        BoundPredicate::Literal { op, literal, .. } => match op {
            Op::StartsWith | Op::NotStartsWith => {
                let starts = match (value, &literal.value) {
                    (Literal::String(v), Literal::String(p)) => v.starts_with(p.as_str()),
                    _ => false,
                };
                starts == (*op == Op::StartsWith)
            }
            _ if is_nan(value) => *op == Op::NotEq,
            _ => holds(*op, compare(literal)),
        },
        BoundPredicate::Set { op, literals, .. } => {
            let found = !is_nan(value) && literals.iter().any(|l| compare(l).is_eq());
            found == (*op == Op::In)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array, StringArray};

    #[test]
    fn floats_nan_fails_ordered_comparisons_and_signed_zeros_differ() {
        let a = Float64Array::from(vec![Some(f64::NAN), Some(-0.0), Some(0.0), None]);
        let c = Column::new(&a).unwrap();
        let bits = |op| {
            c.compare(op, &Literal::Double(0.0))
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(Op::Lt), [false, true, false, false]);
        assert_eq!(bits(Op::GtEq), [false, false, true, false]);
        assert_eq!(bits(Op::Eq), [false, false, true, false]);
        assert_eq!(bits(Op::NotEq), [true, true, false, false]);
        assert_eq!(
            c.is_nan().iter().collect::<Vec<_>>(),
            [true, false, false, false]
        );
        // -0.0 is not in (0.0) and NaN in no set.
        let set = KeySet::Float(vec![0.0]);
        assert_eq!(c.position_in(&set), [None, None, Some(0), None]);
    }

    #[test]
    fn refuses_literals_of_another_representation() {
        let a = Int32Array::from(vec![1]);
        let c = Column::new(&a).unwrap();
        assert!(matches!(
            c.compare(Op::Eq, &Literal::Timestamp(1)),
            Err(Error::TypeMismatch(_))
        ));
        assert!(c.compare(Op::Eq, &Literal::Int(1)).unwrap().value(0));
    }

    #[test]
    fn prefix_tests_cut_values_to_the_prefix() {
        let a = StringArray::from(vec![Some("ab"), Some("abc"), Some("b"), Some("a"), None]);
        let c = Column::new(&a).unwrap();
        let t = |test| {
            c.prefix_test(b"ab", test)
                .unwrap()
                .iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(t(PrefixTest::StartsWith), [true, true, false, false, false]);
        assert_eq!(t(PrefixTest::CutAbove), [false, false, true, false, false]);
        assert_eq!(t(PrefixTest::CutBelow), [false, false, false, true, false]);
    }

    #[test]
    fn any_in_range_with_open_sides() {
        let lower = Int32Array::from(vec![Some(1), Some(5), None, Some(7)]);
        let upper = Int32Array::from(vec![Some(3), Some(6), Some(2), None]);
        let (l, u) = (Column::new(&lower).unwrap(), Column::new(&upper).unwrap());
        let set = KeySet::Int(vec![2, 8]);
        let bits: Vec<bool> = l.any_in_range(&u, &set).iter().collect();
        assert_eq!(bits, [true, false, true, true]);
    }
}
