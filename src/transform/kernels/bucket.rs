//! `bucket[N]` (spec: "Bucket Transform Details", Appendix B):
//! `(murmur3_x86_32(x) & Integer.MAX_VALUE) % N`, as an int32 array.

use std::sync::Arc;

use arrow_array::types::{
    BinaryViewType, ByteArrayType, ByteViewType, GenericBinaryType, GenericStringType,
    StringViewType,
};
use arrow_array::types::{
    Date32Type, Decimal128Type, Decimal32Type, Decimal64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, FixedSizeBinaryArray, GenericByteArray,
    GenericByteViewArray, Int32Array, PrimitiveArray,
};
use arrow_buffer::{ArrowNativeType, Buffer};
use arrow_data::ByteView;
use arrow_schema::{DataType, TimeUnit};

use super::{downcast, first_bad_valid, map_values, min_max, unsupported};
use crate::error::{Error, Result};
use crate::murmur3::{hash_bytes, hash_decimal, hash_int, hash_long};
use crate::transform::Transform;

/// `(hash & i32::MAX) % n` without a division per value: Lemire's direct
/// remainder computation ("Faster Remainder by Direct Computation", 2019),
/// exact for every 32-bit dividend and divisor. A hardware division per value
/// would cost more than the hash itself.
#[derive(Clone, Copy)]
pub(crate) struct Buckets {
    n: u64,
    magic: u64,
}

impl Buckets {
    pub(crate) fn new(n: u32) -> Self {
        // n = 1 wraps the magic number to 0, which correctly yields 0.
        let n = u64::from(n.max(1));
        Self {
            n,
            magic: (u64::MAX / n).wrapping_add(1),
        }
    }

    #[inline(always)]
    pub(crate) fn of(self, hash: i32) -> i32 {
        let positive = (hash & i32::MAX) as u64;
        let fraction = self.magic.wrapping_mul(positive);
        ((u128::from(fraction) * u128::from(self.n)) >> 64) as i32
    }
}

pub(super) fn bucket(array: &dyn Array, n: u32) -> Result<ArrayRef> {
    let b = Buckets::new(n);
    let transform = Transform::Bucket(n);
    let values = match array.data_type() {
        // int, long and date all hash as long (Appendix B note 1).
        DataType::Int8 => primitive::<Int8Type>(array, n, |v| hash_int(v.into()))?,
        DataType::Int16 => primitive::<Int16Type>(array, n, |v| hash_int(v.into()))?,
        DataType::Int32 => primitive::<Int32Type>(array, n, hash_int)?,
        DataType::Int64 => primitive::<Int64Type>(array, n, hash_long)?,
        DataType::Date32 => primitive::<Date32Type>(array, n, hash_int)?,
        // time: microseconds from midnight. Seconds and milliseconds scale
        // exactly (an i32 times 10^6 fits an i64); nanoseconds would not.
        DataType::Time64(TimeUnit::Microsecond) => {
            primitive::<Time64MicrosecondType>(array, n, hash_long)?
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            primitive::<Time32MillisecondType>(array, n, |v| hash_long(i64::from(v) * 1_000))?
        }
        DataType::Time32(TimeUnit::Second) => {
            primitive::<Time32SecondType>(array, n, |v| hash_long(i64::from(v) * 1_000_000))?
        }
        // timestamp and timestamptz: microseconds from the epoch, in UTC
        // whatever the zone.
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            primitive::<TimestampMicrosecondType>(array, n, hash_long)?
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            scaled_timestamps::<TimestampMillisecondType>(array, 1_000, n)?
        }
        DataType::Timestamp(TimeUnit::Second, _) => {
            scaled_timestamps::<TimestampSecondType>(array, 1_000_000, n)?
        }
        // timestamp_ns and timestamptz_ns (v3): Java hashes the microseconds,
        // floored (BucketTimestampNano: hashLong(floorDiv(nanos, 1000))), so
        // a value lands in the bucket of its microsecond timestamp.
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            primitive::<TimestampNanosecondType>(array, n, |v| hash_long(v.div_euclid(1_000)))?
        }
        // Decimal32 and Decimal64 hold decimals of a smaller precision; the
        // hash depends only on the unscaled value (Appendix B note 2).
        DataType::Decimal32(_, _) => {
            primitive::<Decimal32Type>(array, n, |v| hash_decimal(v.into()))?
        }
        DataType::Decimal64(_, _) => {
            primitive::<Decimal64Type>(array, n, |v| hash_decimal(v.into()))?
        }
        DataType::Decimal128(_, _) => primitive::<Decimal128Type>(array, n, hash_decimal)?,
        DataType::Utf8 => offsets::<GenericStringType<i32>>(array, b)?,
        DataType::LargeUtf8 => offsets::<GenericStringType<i64>>(array, b)?,
        DataType::Binary => offsets::<GenericBinaryType<i32>>(array, b)?,
        DataType::LargeBinary => offsets::<GenericBinaryType<i64>>(array, b)?,
        DataType::Utf8View => views::<StringViewType>(array, b)?,
        DataType::BinaryView => views::<BinaryViewType>(array, b)?,
        // fixed(L), and uuid (FixedSizeBinary(16), also the storage of the
        // arrow.uuid extension type): the bytes as stored, big-endian for uuid.
        DataType::FixedSizeBinary(_) => fixed(array, b)?,
        // Time64(Nanosecond): Iceberg's time is in microseconds, and
        // converting would drop digits. Boolean, float and double are not
        // valid for bucketing (Appendix B).
        other => return Err(unsupported(transform, other)),
    };
    Ok(Arc::new(Int32Array::new(
        values.into(),
        array.nulls().cloned(),
    )))
}

/// Divisors above this use [`Buckets`]; below it [`float_remainder`] is exact.
const FLOAT_REMAINDER_LIMIT: u32 = i32::MAX as u32 - 4096;

/// `h % n` for `0 <= h < 2^31` and `3 <= n <= FLOAT_REMAINDER_LIMIT`, by a
/// multiplication with the reciprocal in double precision, which vectorises
/// (unlike a 64-bit high multiplication). `h * inv` is within `2^-21` of
/// `h / n`, so the quotient is off by at most one, and only when the true
/// remainder is within 1024 of 0 or of `n`; the two selects correct that.
#[inline(always)]
pub(crate) fn float_remainder(h: i32, n: i32, inv: f64) -> i32 {
    // SAFETY: 0 <= h * inv < 2^30 for n >= 3, well inside the range of i32.
    let q: i32 = unsafe { (f64::from(h) * inv).to_int_unchecked() };
    let r = h.wrapping_sub(q.wrapping_mul(n));
    let r = if r < 0 { r + n } else { r };
    if r >= n {
        r - n
    } else {
        r
    }
}

/// Buckets every slot of a primitive array, nulls included (their values
/// are ignored), with the cheapest exact remainder for `n`, each in one loop
/// that LLVM can vectorise.
#[inline(always)]
fn primitive<T: ArrowPrimitiveType>(
    array: &dyn Array,
    n: u32,
    hash: impl Fn(T::Native) -> i32 + Copy + Sync,
) -> Result<Vec<i32>> {
    let values = downcast::<PrimitiveArray<T>>(array)?.values();
    Ok(if n.is_power_of_two() {
        // (h & i32::MAX) % 2^k keeps the low k bits; k < 31.
        let mask = (n - 1) as i32;
        map_values(values, move |v| hash(v) & mask)
    } else if n <= FLOAT_REMAINDER_LIMIT {
        let (n, inv) = (n as i32, 1.0 / f64::from(n));
        map_values(values, move |v| float_remainder(hash(v) & i32::MAX, n, inv))
    } else {
        let b = Buckets::new(n);
        map_values(values, move |v| b.of(hash(v)))
    })
}

/// Timestamps in seconds or milliseconds, hashed as exact microseconds.
/// A value whose microseconds do not fit a long has no Iceberg counterpart.
fn scaled_timestamps<T>(array: &dyn Array, factor: i64, n: u32) -> Result<Vec<i32>>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let typed = downcast::<PrimitiveArray<T>>(array)?;
    let (low, high) = (i64::MIN / factor, i64::MAX / factor);
    let values = typed.values();
    let (min, max) = min_max(values).unwrap_or((0, 0));
    if min < low || max > high {
        if let Some(i) = first_bad_valid(array, |i| values[i] < low || values[i] > high) {
            return Err(Error::InvalidValue(format!(
                "timestamp {} of Arrow type {} is out of range: it does not fit a long in microseconds",
                values[i],
                array.data_type()
            )));
        }
    }
    primitive::<T>(array, n, move |v| hash_long(v.wrapping_mul(factor)))
}

fn corrupt(array: &dyn Array) -> Error {
    Error::InvalidData(format!(
        "malformed Arrow array of type {}: a value lies outside its data buffer",
        array.data_type()
    ))
}

/// string and binary with 32 or 64-bit offsets: the bytes of each value
/// (UTF-8 for strings, Appendix B).
fn offsets<T: ByteArrayType>(array: &dyn Array, b: Buckets) -> Result<Vec<i32>> {
    let typed = downcast::<GenericByteArray<T>>(array)?;
    let data = typed.value_data();
    let offsets = typed.value_offsets();
    let mut bad = false;
    let out = offsets
        .windows(2)
        .map(|w| match data.get(w[0].as_usize()..w[1].as_usize()) {
            Some(bytes) => b.of(hash_bytes(bytes)),
            None => {
                bad = true;
                0
            }
        })
        .collect();
    if bad
        && first_bad_valid(array, |i| {
            data.get(offsets[i].as_usize()..offsets[i + 1].as_usize())
                .is_none()
        })
        .is_some()
    {
        return Err(corrupt(array));
    }
    Ok(out)
}

/// The bytes of one value of a view array: inline in the view up to 12
/// bytes, else in one of the data buffers.
#[inline(always)]
pub(crate) fn view_bytes<'a>(view: &'a u128, buffers: &'a [Buffer]) -> Option<&'a [u8]> {
    let len = *view as u32 as usize;
    if len <= 12 {
        // Little-endian layout: length (4 bytes), then the inline data.
        // SAFETY: a u128 is 16 initialised bytes; 4 + len <= 16.
        let bytes: &[u8; 16] = unsafe { &*(view as *const u128).cast::<[u8; 16]>() };
        return Some(&bytes[4..4 + len]);
    }
    let v = ByteView::from(*view);
    let start = v.offset as usize;
    buffers
        .get(v.buffer_index as usize)?
        .get(start..start.checked_add(len)?)
}

fn views<T: ByteViewType + ?Sized>(array: &dyn Array, b: Buckets) -> Result<Vec<i32>> {
    let typed = downcast::<GenericByteViewArray<T>>(array)?;
    let buffers = typed.data_buffers();
    let mut bad = false;
    let out = typed
        .views()
        .iter()
        .map(|view| match view_bytes(view, buffers) {
            Some(bytes) => b.of(hash_bytes(bytes)),
            None => {
                bad = true;
                0
            }
        })
        .collect();
    if bad && first_bad_valid(array, |i| view_bytes(&typed.views()[i], buffers).is_none()).is_some()
    {
        return Err(corrupt(array));
    }
    Ok(out)
}

fn fixed(array: &dyn Array, b: Buckets) -> Result<Vec<i32>> {
    let typed = downcast::<FixedSizeBinaryArray>(array)?;
    let width = usize::try_from(typed.value_length()).map_err(|_| corrupt(array))?;
    if width == 0 {
        return Ok(vec![b.of(hash_bytes(&[])); typed.len()]);
    }
    let data = typed.value_data();
    if data.len() < width * typed.len() {
        return Err(corrupt(array));
    }
    let chunks = data[..width * typed.len()].chunks_exact(width);
    if width == 16 {
        // uuid: a constant length lets the hash loop unroll completely.
        return Ok(chunks
            .map(|c| match <&[u8; 16]>::try_from(c) {
                Ok(uuid) => b.of(hash_bytes(uuid)),
                Err(_) => b.of(hash_bytes(c)),
            })
            .collect());
    }
    Ok(chunks.map(|c| b.of(hash_bytes(c))).collect())
}
