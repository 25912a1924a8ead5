//! Partition field summaries of a manifest (spec: "Manifest Lists",
//! `field_summary`): null and NaN presence and the bounds of the non-null,
//! non-NaN values, serialized as single values (Appendix D).

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

use crate::error::{Error, Result};

/// The summary of one partition field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSummary {
    pub contains_null: bool,
    pub contains_nan: bool,
    pub lower_bound: Option<Vec<u8>>,
    pub upper_bound: Option<Vec<u8>>,
}

/// The minimal two's-complement big-endian bytes of a decimal's unscaled
/// value (Appendix D), as Java's `BigInteger.toByteArray` produces.
pub fn decimal_to_bytes(value: i128) -> Vec<u8> {
    let bytes = value.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}

fn bounds<T: Copy>(
    values: impl Iterator<Item = Option<T>>,
    is_nan: impl Fn(T) -> bool,
    cmp: impl Fn(&T, &T) -> Ordering,
    to_bytes: impl Fn(T) -> Vec<u8>,
) -> FieldSummary {
    let mut summary = FieldSummary::default();
    let mut range: Option<(T, T)> = None;
    for v in values {
        match v {
            None => summary.contains_null = true,
            Some(v) if is_nan(v) => summary.contains_nan = true,
            Some(v) => {
                range = Some(match range {
                    None => (v, v),
                    Some((lo, hi)) => (
                        if cmp(&v, &lo) == Ordering::Less {
                            v
                        } else {
                            lo
                        },
                        if cmp(&v, &hi) == Ordering::Greater {
                            v
                        } else {
                            hi
                        },
                    ),
                });
            }
        }
    }
    if let Some((lo, hi)) = range {
        summary.lower_bound = Some(to_bytes(lo));
        summary.upper_bound = Some(to_bytes(hi));
    }
    summary
}

fn no_nan<T>(_: T) -> bool {
    false
}

/// Summarizes one partition column.
pub fn summarize(array: &dyn Array) -> Result<FieldSummary> {
    Ok(match array.data_type() {
        DataType::Boolean => bounds(array.as_boolean().iter(), no_nan, Ord::cmp, |v| {
            vec![u8::from(v)]
        }),
        DataType::Int32 => bounds(
            array.as_primitive::<Int32Type>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Date32 => bounds(
            array.as_primitive::<Date32Type>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Int64 => bounds(
            array.as_primitive::<Int64Type>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Time64(TimeUnit::Microsecond) => bounds(
            array.as_primitive::<Time64MicrosecondType>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => bounds(
            array.as_primitive::<TimestampMicrosecondType>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => bounds(
            array.as_primitive::<TimestampNanosecondType>().iter(),
            no_nan,
            Ord::cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        // `unknown` (a partition field whose source column was dropped): only
        // nulls, so no bounds.
        DataType::Null => FieldSummary {
            contains_null: !array.is_empty(),
            ..FieldSummary::default()
        },
        // total_cmp orders -0.0 before +0.0 (spec note 2 of "Manifest Lists":
        // a -0.0 value must not get a +0.0 lower bound); NaN is never a bound.
        DataType::Float32 => bounds(
            array.as_primitive::<Float32Type>().iter(),
            f32::is_nan,
            f32::total_cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Float64 => bounds(
            array.as_primitive::<Float64Type>().iter(),
            f64::is_nan,
            f64::total_cmp,
            |v| v.to_le_bytes().to_vec(),
        ),
        DataType::Decimal128(_, _) => bounds(
            array.as_primitive::<Decimal128Type>().iter(),
            no_nan,
            Ord::cmp,
            decimal_to_bytes,
        ),
        // UTF-8 byte order is code point order; binary, fixed and uuid
        // compare as unsigned bytes.
        DataType::Utf8 => bounds(
            array.as_string::<i32>().iter(),
            no_nan,
            Ord::cmp,
            |v: &str| v.as_bytes().to_vec(),
        ),
        DataType::Binary => bounds(
            array.as_binary::<i32>().iter(),
            no_nan,
            Ord::cmp,
            <[u8]>::to_vec,
        ),
        DataType::FixedSizeBinary(_) => bounds(
            array.as_fixed_size_binary().iter(),
            no_nan,
            Ord::cmp,
            <[u8]>::to_vec,
        ),
        other => {
            return Err(Error::TypeMismatch(format!(
                "cannot summarize a partition column of type {other}"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Float64Array, Int32Array, StringArray};

    #[test]
    fn bounds_skip_nulls_and_nans_and_order_signed_zeros() {
        let s = summarize(&Float64Array::from(vec![
            Some(0.0),
            Some(-0.0),
            None,
            Some(f64::NAN),
        ]))
        .unwrap();
        assert!(s.contains_null && s.contains_nan);
        assert_eq!(s.lower_bound, Some((-0.0f64).to_le_bytes().to_vec()));
        assert_eq!(s.upper_bound, Some(0.0f64.to_le_bytes().to_vec()));
        let all_nan = summarize(&Float64Array::from(vec![f64::NAN])).unwrap();
        assert_eq!((all_nan.lower_bound, all_nan.contains_null), (None, false));
        let ints = summarize(&Int32Array::from(vec![5, -3, 9])).unwrap();
        assert_eq!(ints.lower_bound, Some((-3i32).to_le_bytes().to_vec()));
        let strings = summarize(&StringArray::from(vec!["b", "a\u{10000}", "\u{e000}"])).unwrap();
        assert_eq!(
            strings.lower_bound.as_deref(),
            Some("a\u{10000}".as_bytes())
        );
        assert_eq!(strings.upper_bound.as_deref(), Some("\u{e000}".as_bytes()));
    }

    #[test]
    fn decimals_use_minimal_twos_complement() {
        assert_eq!(decimal_to_bytes(0), vec![0x00]);
        assert_eq!(decimal_to_bytes(-1), vec![0xff]);
        assert_eq!(decimal_to_bytes(-128), vec![0x80]);
        assert_eq!(decimal_to_bytes(128), vec![0x00, 0x80]);
        assert_eq!(decimal_to_bytes(-129), vec![0xff, 0x7f]);
        assert_eq!(decimal_to_bytes(i128::MIN).len(), 16);
    }
}
