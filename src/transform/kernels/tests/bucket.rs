//! bucket[N]: Appendix B values, minimum-length decimals, refusals.

use std::sync::Arc;

use arrow_array::*;
use proptest::prelude::*;

use super::*;
use crate::transform::kernels::bucket::{float_remainder, Buckets};

#[test]
fn bucket_appendix_b_values() {
    // Appendix B hashes, reduced the way "Bucket Transform Details" says.
    let of = |hash: i32, n: i32| Some((hash & i32::MAX) % n);
    for n in [1u32, 2, 16, 1000, i32::MAX as u32] {
        let ni = n as i32;
        assert_eq!(
            bucket(n, &Int32Array::from(vec![34])),
            vec![of(2017239379, ni)]
        );
        assert_eq!(
            bucket(n, &Int64Array::from(vec![34])),
            vec![of(2017239379, ni)]
        );
        assert_eq!(
            bucket(n, &Int16Array::from(vec![34])),
            vec![of(2017239379, ni)]
        );
        assert_eq!(
            bucket(n, &Int8Array::from(vec![34])),
            vec![of(2017239379, ni)]
        );
        let dec = Decimal128Array::from(vec![1420])
            .with_precision_and_scale(4, 2)
            .unwrap();
        assert_eq!(bucket(n, &dec), vec![of(-500754589, ni)]);
        assert_eq!(
            bucket(n, &Date32Array::from(vec![17486])),
            vec![of(-653330422, ni)]
        );
        let time = Time64MicrosecondArray::from(vec![81_068_000_000]);
        assert_eq!(bucket(n, &time), vec![of(-662762989, ni)]);
        assert_eq!(
            bucket(n, &Time32SecondArray::from(vec![81_068])),
            vec![of(-662762989, ni)]
        );
        assert_eq!(
            bucket(n, &Time32MillisecondArray::from(vec![81_068_000])),
            vec![of(-662762989, ni)]
        );
        let ts = TimestampMicrosecondArray::from(vec![TS_MICROS]);
        assert_eq!(bucket(n, &ts), vec![of(-2047944441, ni)]);
        // timestamptz: stored in UTC, the zone does not matter.
        let tstz = TimestampMicrosecondArray::from(vec![TS_MICROS]).with_timezone("-08:00");
        assert_eq!(bucket(n, &tstz), vec![of(-2047944441, ni)]);
        let ms = TimestampMillisecondArray::from(vec![TS_MICROS / 1000]).with_timezone("UTC");
        assert_eq!(bucket(n, &ms), vec![of(-2047944441, ni)]);
        assert_eq!(
            bucket(n, &TimestampSecondArray::from(vec![TS_MICROS / 1_000_000])),
            vec![of(-2047944441, ni)]
        );
        assert_eq!(
            bucket(n, &StringArray::from(vec!["iceberg"])),
            vec![of(1210000089, ni)]
        );
        assert_eq!(
            bucket(n, &LargeStringArray::from(vec!["iceberg"])),
            vec![of(1210000089, ni)]
        );
        assert_eq!(
            bucket(n, &StringViewArray::from(vec!["iceberg"])),
            vec![of(1210000089, ni)]
        );
        let uuid: [u8; 16] = [
            0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7,
            0x85, 0xe7,
        ];
        let uuids = FixedSizeBinaryArray::try_from_iter([uuid].into_iter()).unwrap();
        assert_eq!(bucket(n, &uuids), vec![of(1488055340, ni)]);
        let raw: &[u8] = &[0, 1, 2, 3];
        assert_eq!(
            bucket(n, &BinaryArray::from(vec![raw])),
            vec![of(-188683207, ni)]
        );
        assert_eq!(
            bucket(n, &LargeBinaryArray::from(vec![raw])),
            vec![of(-188683207, ni)]
        );
        assert_eq!(
            bucket(n, &BinaryViewArray::from(vec![raw])),
            vec![of(-188683207, ni)]
        );
        let fixed = FixedSizeBinaryArray::try_from_iter([[0u8, 1, 2, 3]].into_iter()).unwrap();
        assert_eq!(bucket(n, &fixed), vec![of(-188683207, ni)]);
    }
}

#[test]
fn bucket_decimal_uses_minimum_length_bytes() {
    let values = [
        -128i128,
        -1,
        0,
        127,
        128,
        -129,
        i64::MIN as i128,
        i128::MAX,
        i128::MIN,
    ];
    let bytes: [&[u8]; 6] = [
        &[0x80],
        &[0xff],
        &[0x00],
        &[0x7f],
        &[0x00, 0x80],
        &[0xff, 0x7f],
    ];
    let array = Decimal128Array::from(values.to_vec())
        .with_precision_and_scale(38, 0)
        .unwrap();
    let got = bucket(1_000_003, &array);
    for (i, b) in bytes.iter().enumerate() {
        assert_eq!(got[i], Some(expected_bucket(b, 1_000_003)), "{}", values[i]);
    }
    assert_eq!(
        got[6],
        Some(expected_bucket(&[0x80, 0, 0, 0, 0, 0, 0, 0], 1_000_003))
    );
    let mut max = vec![0x7f];
    max.extend([0xff; 15]);
    assert_eq!(got[7], Some(expected_bucket(&max, 1_000_003)));
    let mut min = vec![0x80];
    min.extend([0x00; 15]);
    assert_eq!(got[8], Some(expected_bucket(&min, 1_000_003)));
}

#[test]
fn bucket_extremes_and_all_lengths_of_strings() {
    let longs = vec![i64::MIN, i64::MAX, -1, 0];
    let got = bucket(7, &Int64Array::from(longs.clone()));
    for (v, g) in longs.iter().zip(got) {
        assert_eq!(g, Some(expected_bucket(&v.to_le_bytes(), 7)));
    }
    let text = "ab😀cdéfghijklmnopqrstuvwxyz0123456789𝄞";
    let strings: Vec<&str> = text.char_indices().map(|(i, _)| &text[..i]).collect();
    for array in [
        Arc::new(StringArray::from(strings.clone())) as ArrayRef,
        Arc::new(LargeStringArray::from(strings.clone())),
        Arc::new(StringViewArray::from(strings.clone())),
    ] {
        let got = bucket(97, array.as_ref());
        for (s, g) in strings.iter().zip(got) {
            assert_eq!(g, Some(expected_bucket(s.as_bytes(), 97)), "{s:?}");
        }
    }
}

#[test]
fn bucket_refuses_what_appendix_b_does_not_hash() {
    let refused: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from(vec![1.0])),
        Arc::new(Float32Array::from(vec![1.0])),
        Arc::new(BooleanArray::from(vec![true])),
        Arc::new(Time64NanosecondArray::from(vec![1])),
        Arc::new(NullArray::new(2)),
    ];
    for array in refused {
        let err = apply(Transform::Bucket(4), array.as_ref()).unwrap_err();
        match &err {
            Error::UnsupportedTransform {
                transform,
                source_type,
            } => {
                assert_eq!(transform, "bucket[4]");
                assert!(
                    source_type.contains(&array.data_type().to_string()),
                    "{source_type}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn bucket_timestamp_ns_hashes_the_floored_microseconds() {
    // Java's BucketTimestampNano: hashLong(floorDiv(nanos, 1000)). The
    // Appendix B timestamp and every nanosecond of its microsecond agree.
    let of = |hash: i32, n: i32| Some((hash & i32::MAX) % n);
    for n in [1u32, 16, 1000] {
        let nanos = TS_MICROS * 1000;
        for v in [nanos, nanos + 1, nanos + 999] {
            let ns = TimestampNanosecondArray::from(vec![v]);
            assert_eq!(bucket(n, &ns), vec![of(-2047944441, n as i32)]);
            let nstz = ns.with_timezone("+05:30");
            assert_eq!(bucket(n, &nstz), vec![of(-2047944441, n as i32)]);
        }
    }
    // Before 1970 the floor is one microsecond earlier than truncation.
    let before = TimestampNanosecondArray::from(vec![-1, -999, -1000, -1001, i64::MIN, i64::MAX]);
    let micros = Int64Array::from(vec![-1, -1, -1, -2, i64::MIN / 1000 - 1, i64::MAX / 1000]);
    assert_eq!(bucket(97, &before), bucket(97, &micros));
    let nulls = TimestampNanosecondArray::from(vec![Some(5), None]);
    assert_eq!(bucket(4, &nulls)[1], None);
}

proptest! {
    #[test]
    fn timestamp_ns_buckets_as_floored_micros(values in proptest::collection::vec(any::<i64>(), 0..40), n in 1u32..=i32::MAX as u32) {
        let micros: Vec<i64> = values.iter().map(|v| v.div_euclid(1000)).collect();
        prop_assert_eq!(
            bucket(n, &TimestampNanosecondArray::from(values)),
            bucket(n, &TimestampMicrosecondArray::from(micros))
        );
    }
}

#[test]
fn bucket_refuses_timestamps_beyond_long_microseconds() {
    let big = i64::MAX / 1000 + 1;
    let err = apply(
        Transform::Bucket(4),
        &TimestampMillisecondArray::from(vec![0, big]),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains(&big.to_string())),
        "{err:?}"
    );
    // The same value under a null is ignored.
    let masked = TimestampMillisecondArray::from(vec![Some(0), None]);
    let (_, values, nulls) = masked.into_parts();
    let mut raw = values.to_vec();
    raw[1] = big;
    let masked = TimestampMillisecondArray::new(raw.into(), nulls);
    assert_eq!(bucket(4, &masked)[1], None);
}

proptest! {
    #[test]
    fn fast_remainder_is_exact(hash in any::<i32>(), n in 1u32..=i32::MAX as u32) {
        prop_assert_eq!(Buckets::new(n).of(hash), (hash & i32::MAX) % n as i32);
    }

    #[test]
    fn float_remainder_is_exact(hash in 0..=i32::MAX, n in 3..=(i32::MAX - 4096)) {
        prop_assert_eq!(float_remainder(hash, n, 1.0 / f64::from(n)), hash % n);
        // Multiples of n and their neighbours are where the quotient can be off.
        let multiple = (hash / n) * n;
        for h in [multiple, (multiple - 1).max(0), multiple.saturating_add(1)] {
            prop_assert_eq!(float_remainder(h, n, 1.0 / f64::from(n)), h % n);
        }
    }

    #[test]
    fn long_buckets_match_the_reference_for_any_n(values in proptest::collection::vec(any::<i64>(), 0..40), n in 1u32..=i32::MAX as u32) {
        let expected: Vec<Option<i32>> = values.iter().map(|v| Some(expected_bucket(&v.to_le_bytes(), n as i32))).collect();
        prop_assert_eq!(bucket(n, &Int64Array::from(values)), expected);
    }

    #[test]
    fn int_and_long_buckets_agree(values in proptest::collection::vec(any::<i32>(), 0..50), n in 1u32..5000) {
        let wide: Vec<i64> = values.iter().map(|&v| i64::from(v)).collect();
        prop_assert_eq!(bucket(n, &Int32Array::from(values.clone())), bucket(n, &Int64Array::from(wide.clone())));
        prop_assert_eq!(bucket(n, &Date32Array::from(values)), bucket(n, &Int64Array::from(wide)));
    }

    #[test]
    fn binary_buckets_match_the_reference(values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..20)) {
        let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
        let expected: Vec<Option<i32>> = refs.iter().map(|v| Some(expected_bucket(v, 1024))).collect();
        prop_assert_eq!(bucket(1024, &BinaryArray::from(refs.clone())), expected.clone());
        prop_assert_eq!(bucket(1024, &BinaryViewArray::from(refs.clone())), expected.clone());
        prop_assert_eq!(bucket(1024, &LargeBinaryArray::from(refs)), expected);
    }
}

#[test]
fn narrow_decimals_hash_like_decimal128() {
    let unscaled = [
        -129i64,
        -128,
        -1,
        0,
        1,
        127,
        128,
        1420,
        999_999_999,
        -999_999_999,
    ];
    let wide = Decimal128Array::from(unscaled.iter().map(|&v| i128::from(v)).collect::<Vec<_>>())
        .with_precision_and_scale(38, 2)
        .unwrap();
    let d64 = Decimal64Array::from(unscaled.to_vec())
        .with_precision_and_scale(18, 2)
        .unwrap();
    let d32 = Decimal32Array::from(unscaled.iter().map(|&v| v as i32).collect::<Vec<_>>())
        .with_precision_and_scale(9, 2)
        .unwrap();
    let want = bucket(1_000_003, &wide);
    assert_eq!(bucket(1_000_003, &d64), want);
    assert_eq!(bucket(1_000_003, &d32), want);
}
