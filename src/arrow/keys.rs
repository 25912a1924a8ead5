//! Key columns as hashable values, shared by the hash joins on key columns:
//! equality deletes (an anti-join with Java's equality, `equality_deletes`)
//! and key joins (an upsert's match of source and target rows, `key_join`).
//!
//! One key column of at most 64 bits is held as machine words
//! ([`is_word`], [`with_words!`]); any other key is arrow-row encoded, its
//! floats first made canonical ([`canonical_floats`]) so that equal keys
//! encode to equal bytes. The two joins differ only in float equality
//! ([`FloatKeys`]).

use std::hash::BuildHasher;

use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{make_array, Array, ArrayRef, ArrowPrimitiveType, PrimitiveArray};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use rustc_hash::FxBuildHasher;

/// Which float values are equal keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FloatKeys {
    /// Java's `Float.compare` / `Double.compare` (the comparator of Java's
    /// `StructLikeSet`, so equality deletes): every NaN equals every other
    /// NaN, -0.0 differs from 0.0.
    Total,
    /// SQL join equality as Spark normalises join keys: every NaN equals
    /// every other NaN and -0.0 equals 0.0.
    Join,
}

/// Whether a column type is held as a machine word.
pub(crate) fn is_word(data_type: &DataType) -> bool {
    use DataType::*;
    matches!(
        data_type,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Float32
            | Float64
            | Date32
            | Date64
            | Time32(_)
            | Time64(_)
            | Timestamp(_, _)
            | Duration(_)
    )
}

/// The key word of a float: NaNs canonical; -0.0 as 0.0 for [`FloatKeys::Join`].
#[inline]
pub(crate) fn f64_word(v: f64, floats: FloatKeys) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else if floats == FloatKeys::Join && v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

/// [`f64_word`] for a 32-bit float.
#[inline]
pub(crate) fn f32_word(v: f32, floats: FloatKeys) -> u64 {
    u64::from(if v.is_nan() {
        f32::NAN.to_bits()
    } else if floats == FloatKeys::Join && v == 0.0 {
        0
    } else {
        v.to_bits()
    })
}

/// Calls `$body` with `$array` as the primitive array of `$column`'s type
/// (one for which [`is_word`] holds) and `$word` a function from its native
/// value to the key word, floats compared as `$floats` ([`FloatKeys`]) says.
macro_rules! with_words {
    ($column:expr, $floats:expr, |$array:ident, $word:ident| $body:expr) => {{
        use arrow_array::cast::AsArray as _;
        use arrow_array::types::*;
        use arrow_schema::{DataType as D, TimeUnit};
        macro_rules! as_int {
            ($t:ty) => {{
                let $array = $column.as_primitive::<$t>();
                let $word = |v: <$t as arrow_array::ArrowPrimitiveType>::Native| v as u64;
                $body
            }};
        }
        let floats: $crate::arrow::keys::FloatKeys = $floats;
        match $column.data_type() {
            D::Int8 => as_int!(Int8Type),
            D::Int16 => as_int!(Int16Type),
            D::Int32 => as_int!(Int32Type),
            D::Int64 => as_int!(Int64Type),
            D::UInt8 => as_int!(UInt8Type),
            D::UInt16 => as_int!(UInt16Type),
            D::UInt32 => as_int!(UInt32Type),
            D::UInt64 => as_int!(UInt64Type),
            D::Date32 => as_int!(Date32Type),
            D::Date64 => as_int!(Date64Type),
            D::Time32(TimeUnit::Second) => as_int!(Time32SecondType),
            D::Time32(_) => as_int!(Time32MillisecondType),
            D::Time64(TimeUnit::Nanosecond) => as_int!(Time64NanosecondType),
            D::Time64(_) => as_int!(Time64MicrosecondType),
            D::Timestamp(TimeUnit::Second, _) => as_int!(TimestampSecondType),
            D::Timestamp(TimeUnit::Millisecond, _) => as_int!(TimestampMillisecondType),
            D::Timestamp(TimeUnit::Microsecond, _) => as_int!(TimestampMicrosecondType),
            D::Timestamp(TimeUnit::Nanosecond, _) => as_int!(TimestampNanosecondType),
            D::Duration(TimeUnit::Second) => as_int!(DurationSecondType),
            D::Duration(TimeUnit::Millisecond) => as_int!(DurationMillisecondType),
            D::Duration(TimeUnit::Microsecond) => as_int!(DurationMicrosecondType),
            D::Duration(TimeUnit::Nanosecond) => as_int!(DurationNanosecondType),
            D::Float32 => {
                let $array = $column.as_primitive::<Float32Type>();
                let $word = |v: f32| $crate::arrow::keys::f32_word(v, floats);
                $body
            }
            D::Float64 => {
                let $array = $column.as_primitive::<Float64Type>();
                let $word = |v: f64| $crate::arrow::keys::f64_word(v, floats);
                $body
            }
            other => unreachable!("{other} is not held as a word (is_word)"),
        }
    }};
}
pub(crate) use with_words;

/// The hash of an encoded key.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8]) -> u64 {
    FxBuildHasher.hash_one(bytes)
}

/// Whether `data_type` holds floats, at any depth.
fn has_floats(data_type: &DataType) -> bool {
    use DataType::*;
    match data_type {
        Float16 | Float32 | Float64 => true,
        List(f)
        | LargeList(f)
        | ListView(f)
        | LargeListView(f)
        | FixedSizeList(f, _)
        | Map(f, _) => has_floats(f.data_type()),
        Struct(fields) => fields.iter().any(|f| has_floats(f.data_type())),
        Union(fields, _) => fields.iter().any(|(_, f)| has_floats(f.data_type())),
        Dictionary(_, values) => has_floats(values),
        RunEndEncoded(_, values) => has_floats(values.data_type()),
        _ => false,
    }
}

/// `column` with every float (at any depth: struct fields, list elements,
/// map entries, dictionary values) made canonical, so that arrow-row
/// encodes equal values to equal bytes: every NaN becomes the canonical NaN
/// and, for [`FloatKeys::Join`], -0.0 becomes 0.0. `column` itself (no
/// copy) when nothing changes.
pub(crate) fn canonical_floats(column: &ArrayRef, floats: FloatKeys) -> ArrayRef {
    if !has_floats(column.data_type()) {
        return column.clone();
    }
    match canonical_data(&column.to_data(), floats) {
        Some(data) => make_array(data),
        None => column.clone(),
    }
}

/// The canonical form of `data` ([`canonical_floats`]); `None` when it is
/// already canonical.
fn canonical_data(data: &ArrayData, floats: FloatKeys) -> Option<ArrayData> {
    match data.data_type() {
        DataType::Float16 => canonical_leaf::<Float16Type>(data, |v| {
            if v.is_nan() {
                Some(half_nan())
            } else if floats == FloatKeys::Join && v == half_zero() && v.is_sign_negative() {
                Some(half_zero())
            } else {
                None
            }
        }),
        DataType::Float32 => canonical_leaf::<Float32Type>(data, |v| {
            let word = f32_word(v, floats) as u32;
            (word != v.to_bits()).then(|| f32::from_bits(word))
        }),
        DataType::Float64 => canonical_leaf::<Float64Type>(data, |v| {
            let word = f64_word(v, floats);
            (word != v.to_bits()).then(|| f64::from_bits(word))
        }),
        _ if has_floats(data.data_type()) => {
            let children: Vec<Option<ArrayData>> = data
                .child_data()
                .iter()
                .map(|child| canonical_data(child, floats))
                .collect();
            if children.iter().all(Option::is_none) {
                return None;
            }
            let children = children
                .into_iter()
                .zip(data.child_data())
                .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                .collect();
            let builder = data.clone().into_builder().child_data(children);
            // Safety: each child keeps its type, length and layout; only float
            // values changed, so the parent's buffers still describe it.
            Some(unsafe { builder.build_unchecked() })
        }
        _ => None,
    }
}

type Half = <Float16Type as ArrowPrimitiveType>::Native;

fn half_nan() -> Half {
    Half::NAN
}

fn half_zero() -> Half {
    Half::ZERO
}

/// The float leaf `data` with each value that `change` maps replaced;
/// `None` when no value changes (nulls' slots included, which is harmless).
fn canonical_leaf<T: ArrowPrimitiveType>(
    data: &ArrayData,
    change: impl Fn(T::Native) -> Option<T::Native>,
) -> Option<ArrayData> {
    let array = PrimitiveArray::<T>::from(data.clone());
    if !array.values().iter().any(|&v| change(v).is_some()) {
        return None;
    }
    let fixed: PrimitiveArray<T> = array.unary(|v| change(v).unwrap_or(v));
    Some(fixed.into_data())
}
