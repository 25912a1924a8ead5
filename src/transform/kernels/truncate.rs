//! `truncate[W]` (spec: "Truncate Transform Details").
//!
//! Integers and decimals round down to a multiple of W, `v - (((v % W) + W) %
//! W)`, so that negative values round towards negative infinity (-1 -> -10 for
//! W = 10); a decimal applies W to its unscaled value. Strings keep at most W
//! Unicode code points, binary at most W bytes.
//!
//! Where the rounded value does not fit the type (near the type's minimum),
//! Java silently wraps around; we refuse with `InvalidValue` instead of
//! producing a partition value that lies above its source value.

use std::sync::Arc;

use arrow_array::builder::make_view;
use arrow_array::types::{
    BinaryViewType, ByteArrayType, ByteViewType, Decimal128Type, Decimal32Type, Decimal64Type,
    DecimalType, GenericBinaryType, GenericStringType, Int16Type, Int32Type, Int64Type, Int8Type,
    StringViewType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, GenericByteArray, GenericByteViewArray, Int32Array,
    Int64Array, PrimitiveArray,
};
use arrow_buffer::{ArrowNativeType, OffsetBuffer, ScalarBuffer};
use arrow_schema::DataType;

use super::bucket::view_bytes;
use super::{downcast, first_bad_valid, map_values_plain, min_max, unsupported};
use crate::error::{Error, Result};
use crate::transform::Transform;

pub(super) fn truncate(array: &dyn Array, width: u32) -> Result<ArrayRef> {
    let w = width.max(1);
    match array.data_type() {
        // The Iceberg type of an 8 or 16-bit integer column is int.
        DataType::Int8 => ints::<Int8Type>(array, w),
        DataType::Int16 => ints::<Int16Type>(array, w),
        DataType::Int32 => ints::<Int32Type>(array, w),
        DataType::Int64 => longs(array, w),
        DataType::Decimal32(p, s) => decimals::<Decimal32Type>(array, w, *p, *s),
        DataType::Decimal64(p, s) => decimals::<Decimal64Type>(array, w, *p, *s),
        DataType::Decimal128(p, s) => decimals::<Decimal128Type>(array, w, *p, *s),
        DataType::Utf8 => bytes::<GenericStringType<i32>>(array, w, utf8_prefix_len),
        DataType::LargeUtf8 => bytes::<GenericStringType<i64>>(array, w, utf8_prefix_len),
        DataType::Binary => bytes::<GenericBinaryType<i32>>(array, w, byte_prefix_len),
        DataType::LargeBinary => bytes::<GenericBinaryType<i64>>(array, w, byte_prefix_len),
        DataType::Utf8View => views::<StringViewType>(array, w, utf8_prefix_len),
        DataType::BinaryView => views::<BinaryViewType>(array, w, byte_prefix_len),
        other => Err(unsupported(Transform::Truncate(width), other)),
    }
}

fn out_of_range(
    value: impl std::fmt::Display,
    width: u32,
    data_type: &DataType,
    detail: &str,
) -> Error {
    Error::InvalidValue(format!(
        "truncate[{width}] of {value} (Arrow type {data_type}) {detail}"
    ))
}

/// int (and the narrower Arrow integers), result int32. The smallest value
/// has the smallest result, so only it can fall below `i32::MIN`.
fn ints<T>(array: &dyn Array, width: u32) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType,
    T::Native: Into<i32> + Ord,
{
    let typed = downcast::<PrimitiveArray<T>>(array)?;
    let values = typed.values();
    // A width above i32::MAX is impossible (Transform checks it); clamping
    // keeps the arithmetic total anyway.
    let w = i32::try_from(width).unwrap_or(i32::MAX);
    // i32 remainder by a positive divisor never overflows.
    let rounded = |v: i32| i64::from(v) - i64::from(v.rem_euclid(w));
    let min = min_max(values).map_or(0, |(lo, _)| lo.into());
    if rounded(min) < i64::from(i32::MIN) {
        if let Some(i) = first_bad_valid(array, |i| rounded(values[i].into()) < i64::from(i32::MIN))
        {
            let v: i32 = values[i].into();
            return Err(out_of_range(
                v,
                width,
                array.data_type(),
                "is below the smallest int",
            ));
        }
    }
    let out: Vec<i32> = map_values_plain(values, move |v| rounded(v.into()) as i32);
    Ok(Arc::new(Int32Array::new(
        out.into(),
        typed.nulls().cloned(),
    )))
}

fn longs(array: &dyn Array, width: u32) -> Result<ArrayRef> {
    let typed = downcast::<PrimitiveArray<Int64Type>>(array)?;
    let values = typed.values();
    let w = i64::from(width);
    let rounded = |v: i64| v.checked_sub(v.rem_euclid(w));
    let min = min_max(values).map_or(0, |(lo, _)| lo);
    if rounded(min).is_none() {
        if let Some(i) = first_bad_valid(array, |i| rounded(values[i]).is_none()) {
            return Err(out_of_range(
                values[i],
                width,
                array.data_type(),
                "is below the smallest long",
            ));
        }
    }
    let out: Vec<i64> = map_values_plain(values, move |v| v.wrapping_sub(v.rem_euclid(w)));
    Ok(Arc::new(Int64Array::new(
        out.into(),
        typed.nulls().cloned(),
    )))
}

/// decimal(P,S): W applies to the unscaled value (`scaled_W = decimal(W,
/// scale)`); the result keeps the column's type and must fit its precision.
/// Decimal32 and Decimal64 columns are decimals of a smaller precision.
fn decimals<T>(array: &dyn Array, width: u32, precision: u8, scale: i8) -> Result<ArrayRef>
where
    T: DecimalType,
    T::Native: Into<i128> + TryFrom<i128> + Ord + Default,
{
    let typed = downcast::<PrimitiveArray<T>>(array)?;
    let values = typed.values();
    let w = i128::from(width);
    let smallest = 1 - 10i128
        .checked_pow(u32::from(precision))
        .unwrap_or(i128::MAX);
    let rounded = |v: i128| v.checked_sub(v.rem_euclid(w)).filter(|r| *r >= smallest);
    let (min, max): (i128, i128) =
        min_max(values).map_or((0, 0), |(lo, hi)| (lo.into(), hi.into()));
    if rounded(min).is_none() {
        if let Some(i) = first_bad_valid(array, |i| rounded(values[i].into()).is_none()) {
            let detail = format!("has more digits than the precision {precision} allows");
            let shown = Decimal128Type::format_decimal(values[i].into(), precision, scale);
            return Err(out_of_range(shown, width, array.data_type(), &detail));
        }
    }
    // Every valid result lies between the smallest value of the precision
    // and the source value, so it fits the source's native type; a null
    // slot's garbage may not, and becomes 0.
    let narrow = |r: i128| T::Native::try_from(r).unwrap_or_default();
    let out: Vec<T::Native> = if i64::try_from(min).is_ok() && i64::try_from(max).is_ok() {
        // The common case (precision up to 18): 64-bit division is far
        // cheaper than 128-bit.
        let w = i64::from(width);
        map_values_plain(values, |v| {
            let v = v.into() as i64;
            narrow(i128::from(v) - i128::from(v.rem_euclid(w)))
        })
    } else {
        map_values_plain(values, |v| {
            let v: i128 = v.into();
            narrow(v.wrapping_sub(v.rem_euclid(w)))
        })
    };
    let out = PrimitiveArray::<T>::new(out.into(), typed.nulls().cloned())
        .with_data_type(array.data_type().clone());
    Ok(Arc::new(out))
}

/// The byte length of the first `width` code points of the UTF-8 `s`
/// (spec note 3: "no more than L code points"), never splitting a character.
#[inline]
pub(crate) fn utf8_prefix_len(s: &[u8], width: usize) -> usize {
    if s.len() <= width {
        // Each code point takes at least one byte.
        return s.len();
    }
    if s[..width].is_ascii() {
        // W one-byte characters; byte W starts the next character.
        return width;
    }
    let mut count = 0;
    for (i, &b) in s.iter().enumerate() {
        // Every byte except a continuation byte (10xxxxxx) starts a code point.
        if (b as i8) >= -0x40 {
            if count == width {
                return i;
            }
            count += 1;
        }
    }
    s.len()
}

#[inline]
fn byte_prefix_len(s: &[u8], width: usize) -> usize {
    s.len().min(width)
}

fn corrupt(array: &dyn Array) -> Error {
    Error::InvalidData(format!(
        "malformed Arrow array of type {}: a value lies outside its data buffer",
        array.data_type()
    ))
}

/// string and binary with 32 or 64-bit offsets; the result has the same
/// Arrow type. Strings are validated as UTF-8 when the result is built, so a
/// malformed input cannot produce an invalid string array.
fn bytes<T: ByteArrayType>(
    array: &dyn Array,
    width: u32,
    prefix: fn(&[u8], usize) -> usize,
) -> Result<ArrayRef> {
    let typed = downcast::<GenericByteArray<T>>(array)?;
    let width = width as usize;
    let offsets = typed.value_offsets();
    if offsets
        .windows(2)
        .all(|p| p[1].as_usize().saturating_sub(p[0].as_usize()) <= width)
    {
        // Nothing is longer than W bytes, so nothing has more than W code
        // points: the input is its own truncation.
        return Ok(Arc::new(typed.clone()));
    }
    let data = typed.value_data();
    let nulls = typed.nulls();
    let mut out_offsets: Vec<T::Offset> = Vec::with_capacity(offsets.len());
    out_offsets.push(T::Offset::usize_as(0));
    let mut out = Vec::with_capacity(data.len().min(typed.len().saturating_mul(width)));
    for (i, p) in offsets.windows(2).enumerate() {
        if nulls.is_none_or(|n| n.is_valid(i)) {
            let value = data
                .get(p[0].as_usize()..p[1].as_usize())
                .ok_or_else(|| corrupt(array))?;
            out.extend_from_slice(&value[..prefix(value, width)]);
        }
        out_offsets.push(T::Offset::usize_as(out.len()));
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(out_offsets));
    let result =
        GenericByteArray::<T>::try_new(offsets, out.into(), nulls.cloned()).map_err(|e| {
            Error::InvalidData(format!("truncating Arrow type {}: {e}", array.data_type()))
        })?;
    Ok(Arc::new(result))
}

/// Utf8View and BinaryView: a truncated value longer than 12 bytes still
/// points into the input's data buffers, so those are shared, not copied.
fn views<T: ByteViewType + ?Sized>(
    array: &dyn Array,
    width: u32,
    prefix: fn(&[u8], usize) -> usize,
) -> Result<ArrayRef> {
    let typed = downcast::<GenericByteViewArray<T>>(array)?;
    let width = width as usize;
    let buffers = typed.data_buffers();
    let nulls = typed.nulls();
    let mut out = Vec::with_capacity(typed.len());
    for (i, view) in typed.views().iter().enumerate() {
        if nulls.is_some_and(|n| n.is_null(i)) {
            out.push(0u128);
            continue;
        }
        if (*view as u32 as usize) <= width {
            out.push(*view);
            continue;
        }
        let value = view_bytes(view, buffers).ok_or_else(|| corrupt(array))?;
        let cut = prefix(value, width);
        let (buffer_index, offset) = ((*view >> 64) as u32, (*view >> 96) as u32);
        // make_view inlines values of up to 12 bytes and otherwise keeps
        // the buffer and offset, which still hold the prefix.
        out.push(make_view(&value[..cut], buffer_index, offset));
    }
    let result = GenericByteViewArray::<T>::try_new(
        ScalarBuffer::from(out),
        buffers.to_vec(),
        nulls.cloned(),
    )
    .map_err(|e| Error::InvalidData(format!("truncating Arrow type {}: {e}", array.data_type())))?;
    Ok(Arc::new(result))
}
