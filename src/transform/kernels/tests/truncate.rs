//! truncate[W]: the spec's table, ranges, code points, views.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Decimal128Type, Int64Type};
use arrow_array::*;
use arrow_schema::DataType;
use proptest::prelude::*;

use super::*;
use crate::transform::kernels::truncate::utf8_prefix_len;

fn truncate(w: u32, array: &dyn Array) -> ArrayRef {
    apply(Transform::Truncate(w), array).expect("truncate")
}

#[test]
fn truncate_table_examples() {
    let got = truncate(10, &Int32Array::from(vec![1, -1, 0, 10, -10, 19, -11]));
    assert_eq!(ints(&got), [0, -10, 0, 10, -10, 10, -20].map(Some));
    let got = truncate(10, &Int64Array::from(vec![1, -1]));
    assert_eq!(
        got.as_primitive::<Int64Type>().values().to_vec(),
        vec![0, -10]
    );
    let dec = Decimal128Array::from(vec![1065, -1065])
        .with_precision_and_scale(4, 2)
        .unwrap();
    let got = truncate(50, &dec);
    assert_eq!(got.data_type(), &DataType::Decimal128(4, 2));
    assert_eq!(
        got.as_primitive::<Decimal128Type>().values().to_vec(),
        vec![1050, -1100]
    );
    let got = truncate(3, &StringArray::from(vec!["iceberg"]));
    assert_eq!(got.as_string::<i32>().value(0), "ice");
}

#[test]
fn truncate_narrow_ints_to_int32() {
    let got = truncate(10, &Int8Array::from(vec![i8::MIN, -1, i8::MAX]));
    assert_eq!(got.data_type(), &DataType::Int32);
    assert_eq!(ints(&got), [-130, -10, 120].map(Some));
    let got = truncate(100, &Int16Array::from(vec![i16::MIN, i16::MAX]));
    assert_eq!(ints(&got), [-32800, 32700].map(Some));
}

#[test]
fn truncate_refuses_results_below_the_type_minimum() {
    let err = apply(
        Transform::Truncate(10),
        &Int32Array::from(vec![0, i32::MIN]),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains("-2147483648") && m.contains("truncate[10]")),
        "{err:?}"
    );
    let err = apply(Transform::Truncate(3), &Int64Array::from(vec![i64::MIN])).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains(&i64::MIN.to_string())),
        "{err:?}"
    );
    // Exact multiples and the maxima are fine.
    assert_eq!(
        ints(&truncate(2, &Int32Array::from(vec![i32::MIN, i32::MAX]))),
        [i32::MIN, i32::MAX - 1].map(Some)
    );
    let got = truncate(1, &Int64Array::from(vec![i64::MIN, i64::MAX]));
    assert_eq!(
        got.as_primitive::<Int64Type>().values().to_vec(),
        vec![i64::MIN, i64::MAX]
    );
    let got = truncate(i32::MAX as u32, &Int64Array::from(vec![-1, i64::MAX]));
    let w = i64::from(i32::MAX);
    assert_eq!(
        got.as_primitive::<Int64Type>().values().to_vec(),
        vec![-w, i64::MAX - i64::MAX % w]
    );
    // A null slot holding the minimum is not an error.
    let (_, values, _) = Int32Array::from(vec![i32::MIN, 5]).into_parts();
    let masked = Int32Array::new(values, Some(vec![false, true].into()));
    assert_eq!(ints(&truncate(10, &masked)), vec![None, Some(0)]);
    // A decimal whose result needs more digits than the precision.
    let dec = Decimal128Array::from(vec![-9999])
        .with_precision_and_scale(4, 2)
        .unwrap();
    let err = apply(Transform::Truncate(10), &dec).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains("-99.99")),
        "{err:?}"
    );
}

#[test]
fn truncate_large_decimals() {
    let big = 10i128.pow(37) + 123;
    let dec = Decimal128Array::from(vec![big, -big])
        .with_precision_and_scale(38, 5)
        .unwrap();
    let got = truncate(100, &dec);
    assert_eq!(
        got.as_primitive::<Decimal128Type>().values().to_vec(),
        vec![big - 23, -big - 77]
    );
}

#[test]
fn truncate_strings_by_code_points() {
    let values = vec!["iceberg", "𝄞𝄞𝄞𝄞", "😀a", "éé", "ab", "", "ñandú"];
    let expected = vec!["ice", "𝄞𝄞𝄞", "😀a", "éé", "ab", "", "ñan"];
    let check = |array: ArrayRef| {
        let got: Vec<String> = match array.data_type() {
            DataType::Utf8 => array
                .as_string::<i32>()
                .iter()
                .map(|s| s.unwrap().to_owned())
                .collect(),
            DataType::LargeUtf8 => array
                .as_string::<i64>()
                .iter()
                .map(|s| s.unwrap().to_owned())
                .collect(),
            DataType::Utf8View => array
                .as_string_view()
                .iter()
                .map(|s| s.unwrap().to_owned())
                .collect(),
            other => panic!("{other}"),
        };
        assert_eq!(got, expected);
    };
    check(truncate(3, &StringArray::from(values.clone())));
    check(truncate(3, &LargeStringArray::from(values.clone())));
    check(truncate(3, &StringViewArray::from(values)));
    assert_eq!(utf8_prefix_len("a😀b".as_bytes(), 2), 5);
}

#[test]
fn truncate_views_long_and_short() {
    let long = "0123456789abcdefghijklmnopqrstuvwxyz";
    let mut builder = StringViewBuilder::new();
    builder.append_value(long);
    builder.append_null();
    builder.append_value("short");
    builder.append_value(&long[..13]);
    let array = builder.finish();
    for w in [1usize, 4, 12, 13, 20, 40] {
        let got = truncate(w as u32, &array);
        let got = got.as_string_view();
        assert_eq!(got.value(0), &long[..w.min(long.len())]);
        assert!(got.is_null(1));
        assert_eq!(got.value(2), &"short"[..w.min(5)]);
        assert_eq!(got.value(3), &long[..w.min(13)]);
    }
    let mut builder = BinaryViewBuilder::new();
    builder.append_value(long.as_bytes());
    let got = truncate(14, &builder.finish());
    assert_eq!(got.as_binary_view().value(0), &long.as_bytes()[..14]);
}

#[test]
fn truncate_binary_by_bytes() {
    let values: Vec<&[u8]> = vec![&[1, 2, 3, 4, 5], &[0xff], &[], &[0xe2, 0x82, 0xac]];
    let got = truncate(2, &BinaryArray::from(values.clone()));
    let got: Vec<&[u8]> = got.as_binary::<i32>().iter().map(|v| v.unwrap()).collect();
    assert_eq!(got, vec![&[1u8, 2][..], &[0xff], &[], &[0xe2, 0x82]]);
    let got = truncate(2, &LargeBinaryArray::from(values));
    assert_eq!(got.as_binary::<i64>().value(0), &[1, 2]);
}

#[test]
fn truncate_refuses_other_types() {
    for array in [
        Arc::new(Float64Array::from(vec![1.0])) as ArrayRef,
        Arc::new(Date32Array::from(vec![1])),
        Arc::new(BooleanArray::from(vec![true])),
        Arc::new(FixedSizeBinaryArray::try_from_iter([[1u8; 16]].into_iter()).unwrap()),
    ] {
        let err = apply(Transform::Truncate(4), array.as_ref()).unwrap_err();
        assert!(matches!(err, Error::UnsupportedTransform { .. }), "{err:?}");
    }
}

proptest! {
    #[test]
    fn truncate_ints_round_down(values in proptest::collection::vec(-1_000_000_000i32..1_000_000_000, 0..40), w in 1u32..100_000) {
        let got = ints(&truncate(w, &Int32Array::from(values.clone())));
        for (v, g) in values.iter().zip(got) {
            let g = i64::from(g.unwrap());
            let (v, w) = (i64::from(*v), i64::from(w));
            prop_assert!(g <= v && v - g < w && g % w == 0);
        }
    }

    #[test]
    fn truncate_longs_round_down(values in proptest::collection::vec(any::<i64>(), 0..40), w in 1u32..=i32::MAX as u32) {
        let w128 = i128::from(w);
        match apply(Transform::Truncate(w), &Int64Array::from(values.clone())) {
            Ok(got) => {
                for (v, g) in values.iter().zip(got.as_primitive::<Int64Type>().values().iter()) {
                    let (v, g) = (i128::from(*v), i128::from(*g));
                    prop_assert!(g <= v && v - g < w128 && g % w128 == 0);
                }
            }
            Err(Error::InvalidValue(_)) => {
                prop_assert!(values.iter().any(|&v| i128::from(v) - i128::from(v).rem_euclid(w128) < i128::from(i64::MIN)));
            }
            Err(other) => prop_assert!(false, "{:?}", other),
        }
    }

    #[test]
    fn truncated_strings_are_code_point_prefixes(values in proptest::collection::vec(".{0,12}", 0..20), w in 1u32..15) {
        let got = truncate(w, &StringArray::from(values.clone()));
        for (v, g) in values.iter().zip(got.as_string::<i32>().iter()) {
            let expected: String = v.chars().take(w as usize).collect();
            prop_assert_eq!(g.unwrap(), expected.as_str());
        }
    }
}

#[test]
fn narrow_decimals_truncate_like_decimal128() {
    let d64 = Decimal64Array::from(vec![Some(1065), None, Some(-1065)])
        .with_precision_and_scale(10, 2)
        .unwrap();
    let got = truncate(50, &d64);
    assert_eq!(got.data_type(), &DataType::Decimal64(10, 2));
    let got: Vec<Option<i64>> = got
        .as_primitive::<arrow_array::types::Decimal64Type>()
        .iter()
        .collect();
    assert_eq!(got, vec![Some(1050), None, Some(-1100)]);
    let d32 = Decimal32Array::from(vec![-999_999_999])
        .with_precision_and_scale(9, 0)
        .unwrap();
    let err = apply(Transform::Truncate(10), &d32).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains("-999999999")),
        "{err:?}"
    );
    let d32 = Decimal32Array::from(vec![1065])
        .with_precision_and_scale(9, 2)
        .unwrap();
    let got = truncate(50, &d32);
    assert_eq!(
        got.as_primitive::<arrow_array::types::Decimal32Type>()
            .value(0),
        1050
    );
}
