use arrow_array::cast::AsArray;
use std::collections::HashSet;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use proptest::prelude::*;

use super::*;

fn schema(fields: &[(&str, DataType)]) -> SchemaRef {
    Arc::new(Schema::new(
        fields
            .iter()
            .map(|(n, t)| Field::new(*n, t.clone(), true))
            .collect::<Vec<_>>(),
    ))
}

fn mask(set: &EqualityDeleteSet, columns: &[ArrayRef]) -> Vec<bool> {
    set.deleted_mask(columns, "data")
        .unwrap()
        .iter()
        .map(|v| v.unwrap())
        .collect()
}

#[test]
fn null_matches_null_and_only_null() {
    let mut set = EqualityDeleteSet::new(schema(&[("id", DataType::Int64)])).unwrap();
    set.add(&[Arc::new(Int64Array::from(vec![Some(3), None]))], "d")
        .unwrap();
    let data: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None, Some(4), Some(0)]));
    assert_eq!(mask(&set, &[data]), [true, true, false, false]);
}

#[test]
fn multi_column_keys_are_an_and() {
    // The spec's example: `id = 4 AND category IS NULL`.
    let mut set = EqualityDeleteSet::new(schema(&[
        ("id", DataType::Int32),
        ("category", DataType::Utf8),
    ]))
    .unwrap();
    set.add(
        &[
            Arc::new(Int32Array::from(vec![Some(4)])),
            Arc::new(StringArray::from(vec![None::<&str>])),
        ],
        "d",
    )
    .unwrap();
    let ids: ArrayRef = Arc::new(Int32Array::from(vec![4, 4, 5]));
    let cats: ArrayRef = Arc::new(StringArray::from(vec![None, Some("a"), None]));
    assert_eq!(mask(&set, &[ids, cats]), [true, false, false]);
}

#[test]
fn floats_compare_as_java_compare() {
    let mut set = EqualityDeleteSet::new(schema(&[("x", DataType::Float64)])).unwrap();
    let other_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    set.add(&[Arc::new(Float64Array::from(vec![0.0, other_nan]))], "d")
        .unwrap();
    let data: ArrayRef = Arc::new(Float64Array::from(vec![0.0, -0.0, f64::NAN, 1.0]));
    assert_eq!(mask(&set, &[data]), [true, false, true, false]);
}

#[test]
fn apply_keeps_the_other_rows_and_every_column() {
    let mut set = EqualityDeleteSet::new(schema(&[("id", DataType::Int64)])).unwrap();
    set.add(&[Arc::new(Int64Array::from(vec![2, 9]))], "d")
        .unwrap();
    let batch = RecordBatch::try_new(
        schema(&[("name", DataType::Utf8), ("id", DataType::Int64)]),
        vec![
            Arc::new(StringArray::from(vec!["a", "b", "c"])),
            Arc::new(Int64Array::from(vec![1, 2, 3])),
        ],
    )
    .unwrap();
    let kept = set.apply(&batch, &[1], "data.parquet").unwrap();
    assert_eq!(kept.num_rows(), 2);
    let names = kept.column(0).as_string::<i32>();
    assert_eq!((names.value(0), names.value(1)), ("a", "c"));
}

#[test]
fn a_type_other_than_the_sets_is_refused_naming_the_column() {
    let mut set = EqualityDeleteSet::new(schema(&[("id", DataType::Int64)])).unwrap();
    let error = set
        .add(&[Arc::new(Int32Array::from(vec![1]))], "deletes.parquet")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("deletes.parquet") && error.contains("\"id\""),
        "{error}"
    );
    let error = set
        .deleted_mask(&[], "data.parquet")
        .unwrap_err()
        .to_string();
    assert!(error.contains("data.parquet"), "{error}");
    let batch = RecordBatch::try_new(
        schema(&[("id", DataType::Int64)]),
        vec![Arc::new(Int64Array::from(vec![1]))],
    )
    .unwrap();
    set.add(&[Arc::new(Int64Array::from(vec![1]))], "d")
        .unwrap();
    assert!(set.apply(&batch, &[3], "data.parquet").is_err());
    assert!(EqualityDeleteSet::new(schema(&[])).is_err());
}

proptest! {
    /// A row is deleted exactly when some delete row has equal key values
    /// (null equal to null), checked against a direct model.
    #[test]
    fn deleted_exactly_when_a_key_matches(
        deletes in proptest::collection::vec((proptest::option::of(0i64..6), proptest::option::of("[ab]{0,2}")), 0..20),
        data in proptest::collection::vec((proptest::option::of(0i64..6), proptest::option::of("[ab]{0,2}")), 0..40),
    ) {
        let mut set = EqualityDeleteSet::new(schema(&[("id", DataType::Int64), ("s", DataType::Utf8)])).unwrap();
        let columns = |rows: &[(Option<i64>, Option<String>)]| -> Vec<ArrayRef> {
            vec![
                Arc::new(rows.iter().map(|r| r.0).collect::<Int64Array>()),
                Arc::new(rows.iter().map(|r| r.1.clone()).collect::<StringArray>()),
            ]
        };
        set.add(&columns(&deletes), "d").unwrap();
        let model: HashSet<_> = deletes.iter().cloned().collect();
        prop_assert_eq!(set.len(), model.len());
        let got = mask(&set, &columns(&data));
        let expected: Vec<bool> = data.iter().map(|r| model.contains(r)).collect();
        prop_assert_eq!(got, expected);
    }
}

/// Java's `Double.compare` equality as a model: NaN equals NaN, -0.0 differs from 0.0.
fn java_equal_bits(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else {
        v.to_bits()
    }
}

/// Builds a key column of the tested width from optional longs.
type ToArray = fn(&[Option<i64>]) -> ArrayRef;

fn float_value() -> impl Strategy<Value = Option<f64>> {
    proptest::option::of(prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::from_bits(0x7ff8_0000_0000_0001)),
        Just(f64::INFINITY),
        (-3i32..3).prop_map(f64::from),
    ])
}

proptest! {
    /// One key column held as machine words: ints of several widths, with
    /// nulls and added in several batches, against a direct model.
    #[test]
    fn word_keys_match_exactly_equal_values(
        batches in proptest::collection::vec(proptest::collection::vec(proptest::option::of(-4i64..4), 0..10), 0..4),
        data in proptest::collection::vec(proptest::option::of(-4i64..4), 0..40),
        narrow in any::<bool>(),
    ) {
        let (data_type, to_array): (DataType, ToArray) = if narrow {
            (DataType::Int32, |v| Arc::new(v.iter().map(|x| x.map(|x| x as i32)).collect::<Int32Array>()))
        } else {
            (DataType::Int64, |v| Arc::new(v.iter().copied().collect::<Int64Array>()))
        };
        let mut set = EqualityDeleteSet::new(schema(&[("id", data_type)])).unwrap();
        let mut model = HashSet::new();
        for batch in &batches {
            set.add(&[to_array(batch)], "d").unwrap();
            model.extend(batch.iter().copied());
        }
        prop_assert_eq!(set.len(), model.len());
        let expected: Vec<bool> = data.iter().map(|v| model.contains(v)).collect();
        prop_assert_eq!(mask(&set, &[to_array(&data)]), expected);
    }

    /// Float keys compare as Java's `Double.compare`, alone (words) and with
    /// another column (encoded rows).
    #[test]
    fn float_keys_compare_as_java(
        deletes in proptest::collection::vec(float_value(), 0..12),
        data in proptest::collection::vec(float_value(), 0..30),
        with_second_column in any::<bool>(),
    ) {
        let model: HashSet<Option<u64>> =
            deletes.iter().map(|v| v.map(java_equal_bits)).collect();
        let floats = |v: &[Option<f64>]| -> ArrayRef { Arc::new(v.iter().copied().collect::<Float64Array>()) };
        let expected: Vec<bool> = data.iter().map(|v| model.contains(&v.map(java_equal_bits))).collect();
        if with_second_column {
            let ones = |n: usize| -> ArrayRef { Arc::new(Int32Array::from(vec![1; n])) };
            let mut set = EqualityDeleteSet::new(schema(&[("x", DataType::Float64), ("k", DataType::Int32)])).unwrap();
            set.add(&[floats(&deletes), ones(deletes.len())], "d").unwrap();
            prop_assert_eq!(set.len(), model.len());
            prop_assert_eq!(mask(&set, &[floats(&data), ones(data.len())]), expected);
        } else {
            let mut set = EqualityDeleteSet::new(schema(&[("x", DataType::Float64)])).unwrap();
            set.add(&[floats(&deletes)], "d").unwrap();
            prop_assert_eq!(set.len(), model.len());
            prop_assert_eq!(mask(&set, &[floats(&data)]), expected);
        }
    }
}
