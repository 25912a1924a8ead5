//! Kernel tests: Appendix B and the truncate table, floor semantics before
//! 1970, ranges, nulls, slices, threads and refused inputs. Expected bucket
//! values come from the `murmur3` crate on the bytes Appendix B prescribes,
//! never from the kernels themselves.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::builder::{BinaryViewBuilder, FixedSizeBinaryBuilder, StringViewBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::*;
use arrow_schema::{DataType, TimeUnit};

use super::{apply, apply_threaded};

mod bucket;
mod temporal;
mod truncate;
use crate::error::Error;
use crate::transform::Transform;

pub(super) fn murmur(bytes: &[u8]) -> i32 {
    murmur3::murmur3_32(&mut Cursor::new(bytes), 0).expect("reading from memory") as i32
}

pub(super) fn expected_bucket(bytes: &[u8], n: i32) -> i32 {
    (murmur(bytes) & i32::MAX) % n
}

pub(super) fn ints(array: &ArrayRef) -> Vec<Option<i32>> {
    array.as_primitive::<Int32Type>().iter().collect()
}

pub(super) fn bucket(n: u32, array: &dyn Array) -> Vec<Option<i32>> {
    ints(&apply(Transform::Bucket(n), array).expect("bucket"))
}

pub(super) const DAY_MICROS: i64 = 86_400_000_000;
pub(super) const HOUR_MICROS: i64 = 3_600_000_000;
/// 2017-11-16T22:31:08 UTC (Appendix B).
pub(super) const TS_MICROS: i64 = 1_510_871_468_000_000;

fn every_kernel_input() -> Vec<(Transform, ArrayRef)> {
    let n = 40;
    let strings: Vec<Option<String>> = (0..n)
        .map(|i| (i % 3 != 0).then(|| format!("välue-{i}-{}", "😀".repeat(i % 5))))
        .collect();
    let mut fixed = FixedSizeBinaryBuilder::new(16);
    for i in 0..n {
        if i % 4 == 0 {
            fixed.append_null();
        } else {
            fixed.append_value([i as u8; 16]).unwrap();
        }
    }
    let ints: Vec<Option<i64>> = (0..n as i64)
        .map(|i| (i % 3 != 1).then_some((i - 20) * 7_777_777_777))
        .collect();
    let small: Vec<Option<i32>> = ints
        .iter()
        .map(|v| v.map(|v| (v / 1_000_000) as i32))
        .collect();
    let string_refs: Vec<Option<&str>> = strings.iter().map(|s| s.as_deref()).collect();
    vec![
        (
            Transform::Bucket(13),
            Arc::new(Int32Array::from(small.clone())) as ArrayRef,
        ),
        (
            Transform::Bucket(13),
            Arc::new(Int64Array::from(ints.clone())),
        ),
        (
            Transform::Bucket(13),
            Arc::new(StringArray::from(string_refs.clone())),
        ),
        (
            Transform::Bucket(13),
            Arc::new(StringViewArray::from(string_refs.clone())),
        ),
        (Transform::Bucket(13), Arc::new(fixed.finish())),
        (
            Transform::Bucket(13),
            Arc::new(Decimal128Array::from(
                ints.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>(),
            )),
        ),
        (
            Transform::Truncate(7),
            Arc::new(Int32Array::from(small.clone())),
        ),
        (
            Transform::Truncate(7),
            Arc::new(Int64Array::from(ints.clone())),
        ),
        (
            Transform::Truncate(4),
            Arc::new(StringArray::from(string_refs.clone())),
        ),
        (
            Transform::Truncate(4),
            Arc::new(LargeStringArray::from(string_refs.clone())),
        ),
        (
            Transform::Truncate(9),
            Arc::new(StringViewArray::from(string_refs)),
        ),
        (
            Transform::Month,
            Arc::new(TimestampMicrosecondArray::from(ints.clone()).with_timezone("UTC")),
        ),
        (
            Transform::Hour,
            Arc::new(TimestampMicrosecondArray::from(ints.clone())),
        ),
        (Transform::Year, Arc::new(Date32Array::from(small.clone()))),
        (Transform::Day, Arc::new(Date32Array::from(small))),
        (
            Transform::Identity,
            Arc::new(Int64Array::from(ints.clone())),
        ),
        (Transform::Void, Arc::new(Int64Array::from(ints))),
    ]
}

#[test]
fn sliced_inputs_give_the_slice_of_the_result() {
    for (t, array) in every_kernel_input() {
        let whole = apply(t, array.as_ref()).unwrap();
        for (offset, len) in [(1, 30), (5, 0), (7, 33), (39, 1)] {
            let got = apply(t, array.slice(offset, len).as_ref()).unwrap();
            assert_eq!(
                got.to_data(),
                whole.slice(offset, len).to_data(),
                "{t} on {} at {offset}",
                array.data_type()
            );
            let want_nulls = if t == Transform::Void {
                len
            } else {
                array.slice(offset, len).null_count()
            };
            assert_eq!(got.null_count(), want_nulls, "{t}");
        }
    }
}

#[test]
fn nulls_map_to_nulls_and_empty_stays_empty() {
    for (t, array) in every_kernel_input() {
        let got = apply(t, array.as_ref()).unwrap();
        assert_eq!(got.len(), array.len());
        for i in 0..array.len() {
            assert!(
                got.is_valid(i) == (array.is_valid(i) && t != Transform::Void),
                "{t} {i}"
            );
        }
        let empty = apply(t, array.slice(0, 0).as_ref()).unwrap();
        assert_eq!(empty.len(), 0);
        let nulls = arrow_array::new_null_array(array.data_type(), 5);
        let got = apply(t, nulls.as_ref()).unwrap();
        assert_eq!((got.len(), got.null_count()), (5, 5), "{t}");
    }
}

#[test]
fn identity_shares_and_void_keeps_the_type() {
    let array: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None]));
    let same = apply_threaded(Transform::Identity, &array, 2).unwrap();
    assert!(Arc::ptr_eq(&same, &array));
    let same = apply(Transform::Identity, array.as_ref()).unwrap();
    assert_eq!(same.to_data(), array.to_data());
    let void = apply(Transform::Void, array.as_ref()).unwrap();
    assert_eq!((void.data_type(), void.null_count()), (&DataType::Utf8, 2));
    let ts = TimestampMicrosecondArray::from(vec![1]).with_timezone("UTC");
    let void = apply(Transform::Void, &ts).unwrap();
    assert_eq!(
        void.data_type(),
        &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
}

#[test]
fn threads_give_the_single_threaded_result() {
    let n = 300_001;
    let longs: Vec<Option<i64>> = (0..n as i64)
        .map(|i| (i % 11 != 0).then_some(i * 1_234_567 - 77))
        .collect();
    let strings: Vec<Option<String>> = (0..n)
        .map(|i| (i % 7 != 0).then(|| format!("s{i}é")))
        .collect();
    let inputs: Vec<(Transform, ArrayRef)> = vec![
        (
            Transform::Bucket(100),
            Arc::new(Int64Array::from(longs.clone())),
        ),
        (Transform::Truncate(3), Arc::new(StringArray::from(strings))),
        (
            Transform::Day,
            Arc::new(TimestampMicrosecondArray::from(longs.clone())),
        ),
        (
            Transform::Year,
            Arc::new(TimestampMicrosecondArray::from(longs.clone())),
        ),
        (
            Transform::Month,
            Arc::new(TimestampMicrosecondArray::from(longs.clone())),
        ),
        (
            Transform::Hour,
            Arc::new(TimestampMillisecondArray::from(longs.clone())),
        ),
        (
            Transform::Bucket(7),
            Arc::new(TimestampSecondArray::from(longs.clone())),
        ),
        (
            Transform::Bucket(13),
            Arc::new(TimestampNanosecondArray::from(longs.clone())),
        ),
        (
            Transform::Month,
            Arc::new(Date32Array::from_iter(
                (0..n as i32).map(|i| Some(i * 37 - 4_000_000)),
            )),
        ),
        (
            Transform::Bucket(16),
            Arc::new(Int32Array::from_iter(
                (0..n as i32).map(|i| Some(i ^ 0x5555)),
            )),
        ),
        (Transform::Truncate(1000), Arc::new(Int64Array::from(longs))),
    ];
    for (t, array) in inputs {
        let one = apply_threaded(t, &array, 1).unwrap();
        for threads in [2, 3] {
            let many = apply_threaded(t, &array, threads).unwrap();
            assert_eq!(many.to_data(), one.to_data(), "{t} with {threads} threads");
        }
        let sliced = array.slice(3, n - 5);
        let many = apply_threaded(t, &sliced, 2).unwrap();
        assert_eq!(many.to_data(), one.slice(3, n - 5).to_data(), "{t} sliced");
    }
    // An error in any piece is the error of the whole.
    let mut bad: Vec<i32> = vec![0; n];
    bad[n - 1] = i32::MIN;
    let err = apply_threaded(
        Transform::Truncate(10),
        &(Arc::new(Int32Array::from(bad)) as ArrayRef),
        2,
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidValue(_)));
    // Hours of seconds overflow an int past year 246,000: found in the last piece.
    let mut seconds: Vec<i64> = vec![0; n];
    seconds[n - 2] = i64::MAX / 2;
    let err = apply_threaded(
        Transform::Hour,
        &(Arc::new(TimestampSecondArray::from(seconds)) as ArrayRef),
        2,
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidValue(_)), "{err}");
}
