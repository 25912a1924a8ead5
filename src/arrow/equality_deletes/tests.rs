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
