//! The position delete index: building it from delete-file rows and
//! deletion vectors, and applying it at absolute positions.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    ArrayRef, DictionaryArray, Int32Array, Int64Array, LargeStringArray, StringArray,
    StringViewArray,
};
use arrow_schema::{Field, Schema};
use proptest::prelude::*;

use super::*;

fn batch(start: i64, length: usize) -> RecordBatch {
    let ids: Int64Array = (start..start + length as i64).collect();
    let names: StringArray = (0..length).map(|i| Some(format!("row{i}"))).collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ])),
        vec![Arc::new(ids), Arc::new(names)],
    )
    .unwrap()
}

fn ids(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column(0)
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

/// The positions `data_file` gets from a delete file of `paths` and
/// `positions`, read through `PositionDeletesByFile` as the reader does.
fn index_of(
    data_file: &str,
    paths: &dyn Array,
    positions: &dyn Array,
    source: &str,
) -> Result<PositionDeleteIndex> {
    let mut by_file = PositionDeletesByFile::new();
    by_file.add(paths, positions, source)?;
    let mut index = PositionDeleteIndex::new();
    index.add_position_file(&by_file, data_file);
    Ok(index)
}

#[test]
fn rows_of_other_files_are_ignored() {
    let paths = StringArray::from(vec!["a", "b", "a", "ab", "a"]);
    let positions = Int64Array::from(vec![3, 4, 1, 9, 3]);
    let mut by_file = PositionDeletesByFile::new();
    by_file.add(&paths, &positions, "d.parquet").unwrap();
    let mut index = PositionDeleteIndex::new();
    // Distinct positions: the duplicate row of 3 deletes one row.
    assert_eq!(index.add_position_file(&by_file, "a"), 2);
    assert_eq!(index.positions().iter().collect::<Vec<_>>(), vec![1, 3]);
    assert!(index.contains(3) && !index.contains(4) && !index.contains(-1));
    assert_eq!(index.len(), 2);
    assert_eq!(index.add_position_file(&by_file, "c"), 0);
    assert_eq!(index.len(), 2);
}

#[test]
fn a_wrongly_typed_column_is_refused_naming_it() {
    let positions = Int64Array::from(vec![1, 2, 3]);
    let wrong = Int32Array::from(vec![1, 2, 3]);
    assert!(matches!(
        index_of("x", &wrong, &positions, "d"),
        Err(Error::TypeMismatch(m)) if m.contains("file_path") && m.contains(" d:")
    ));
    assert!(matches!(
        index_of("x", &StringArray::from(vec!["x"; 3]), &wrong, "d"),
        Err(Error::TypeMismatch(m)) if m.contains("pos must be a long")
    ));
}

#[test]
fn a_bad_row_of_any_data_file_refuses_the_delete_file() {
    // A corrupt delete file is refused whole, also when the bad row names
    // another data file than the one being read.
    let mixed = StringArray::from(vec!["a", "b"]);
    match index_of("a", &mixed, &Int64Array::from(vec![0, -2]), "pd.parquet") {
        Err(Error::InvalidData(m)) => assert!(
            m.contains("pd.parquet") && m.contains("negative position -2 in row 1"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        index_of("a", &mixed, &Int64Array::from(vec![Some(1), None]), "pd"),
        Err(Error::InvalidData(m)) if m.contains("pos is null in row 1")
    ));
}

#[test]
fn deletion_vectors_and_rows_union() {
    let mut index = PositionDeleteIndex::new();
    index.add_deletion_vector(&[1u64, 2, 1 << 33].into_iter().collect());
    let mut by_file = PositionDeletesByFile::new();
    by_file
        .add(
            &StringArray::from(vec!["f", "g", "f"]),
            &Int64Array::from(vec![7, 8, 2]),
            "d",
        )
        .unwrap();
    assert_eq!(index.add_position_file(&by_file, "f"), 2);
    assert_eq!(
        index.positions().iter().collect::<Vec<_>>(),
        vec![1, 2, 7, 1 << 33]
    );
}

#[test]
fn apply_at_an_offset_and_edge_cases() {
    let index = PositionDeleteIndex::from_positions([10u64, 11, 15, 100].into_iter().collect());
    // Batch of positions 10..20.
    let kept = index.apply(&batch(10, 10), 10).unwrap();
    assert_eq!(ids(&kept), vec![12, 13, 14, 16, 17, 18, 19]);
    assert_eq!(kept.schema(), batch(0, 0).schema());
    // Nothing deleted in range: the very same batch.
    let untouched = batch(20, 50);
    assert_eq!(index.apply(&untouched, 20).unwrap(), untouched);
    // Everything deleted.
    assert_eq!(index.apply(&batch(10, 2), 10).unwrap().num_rows(), 0);
    assert_eq!(index.apply(&batch(0, 0), 5).unwrap().num_rows(), 0);
    let mask = index.deleted_mask(9, 4).unwrap();
    assert_eq!(
        mask.iter().collect::<Vec<_>>(),
        vec![Some(false), Some(true), Some(true), Some(false)]
    );
    assert!(matches!(
        index.apply(&batch(0, 3), u64::MAX - 1),
        Err(Error::InvalidValue(_))
    ));
}

#[test]
fn large_positions_apply() {
    let high = (5u64 << 32) + 3;
    let index = PositionDeleteIndex::from_positions([high, high + 2].into_iter().collect());
    let kept = index.apply(&batch(0, 5), high - 1).unwrap();
    assert_eq!(ids(&kept), vec![0, 2, 4]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn apply_keeps_exactly_the_rows_not_deleted(
        deleted in proptest::collection::btree_set(0u64..5_000, 0..800),
        runs in proptest::collection::vec((0u64..5_000, 1u64..600), 0..3),
        high in any::<bool>(),
        start in 0u64..5_000,
        length in 0usize..3_000,
    ) {
        // Optionally move everything above 2^32 to cross a bitmap key.
        let base = if high { (1u64 << 32) - 2_500 } else { 0 };
        let mut set: BTreeSet<u64> = deleted.iter().map(|p| p + base).collect();
        for (s, n) in runs {
            set.extend((s..s + n).map(|p| p + base));
        }
        let start = start + base;
        let index = PositionDeleteIndex::from_positions(set.iter().copied().collect());
        let input = batch(start as i64, length);
        let kept = index.apply(&input, start).unwrap();
        let expected: Vec<i64> = (start..start + length as u64)
            .filter(|p| !set.contains(p))
            .map(|p| p as i64)
            .collect();
        prop_assert_eq!(ids(&kept), expected);
        let names = kept.column(1).as_string::<i32>();
        for (row, id) in ids(&kept).iter().enumerate() {
            prop_assert_eq!(names.value(row), format!("row{}", *id as u64 - start));
        }
        let mask = index.deleted_mask(start, length).unwrap();
        let expected_mask: Vec<bool> = (start..start + length as u64).map(|p| set.contains(&p)).collect();
        prop_assert_eq!(mask.values().iter().collect::<Vec<_>>(), expected_mask);
        prop_assert_eq!(mask.null_count(), 0);
    }

    #[test]
    fn delete_file_rows_give_exactly_the_file_positions(
        rows in proptest::collection::vec((0usize..3, 0i64..10_000), 0..500),
        sort in any::<bool>(),
    ) {
        let mut rows = rows;
        if sort {
            rows.sort();
        }
        let names = ["f0", "f1", "f2"];
        let paths = StringArray::from(rows.iter().map(|(f, _)| names[*f]).collect::<Vec<_>>());
        let positions = Int64Array::from(rows.iter().map(|(_, p)| *p).collect::<Vec<_>>());
        let index = index_of("f1", &paths, &positions, "d").unwrap();
        let expected: BTreeSet<u64> = rows.iter().filter(|(f, _)| *f == 1).map(|(_, p)| *p as u64).collect();
        prop_assert_eq!(index.positions().iter().collect::<BTreeSet<_>>(), expected);
    }
}

#[test]
fn a_delete_file_by_data_file_reads_every_layout_and_refuses_bad_rows() {
    let positions = Int64Array::from(vec![1, 2, 3, 0]);
    let layouts: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec!["x", "y", "x", "x"])),
        Arc::new(LargeStringArray::from(vec!["x", "y", "x", "x"])),
        Arc::new(StringViewArray::from(vec!["x", "y", "x", "x"])),
        Arc::new(
            vec!["x", "y", "x", "x"]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>(),
        ),
    ];
    for paths in layouts {
        let mut by_file = PositionDeletesByFile::new();
        by_file.add(paths.as_ref(), &positions, "d").unwrap();
        assert_eq!(by_file.len(), 2);
        let mut index = PositionDeleteIndex::new();
        assert_eq!(index.add_position_file(&by_file, "x"), 3);
        assert_eq!(index.positions().iter().collect::<Vec<_>>(), vec![0, 1, 3]);
        assert_eq!(index.add_position_file(&by_file, "z"), 0);
    }
    // An empty dictionary-encoded column (an empty delete file read with
    // dictionary paths): arrow's normalized_keys would panic on it.
    let empty: DictionaryArray<Int32Type> = Vec::<&str>::new().into_iter().collect();
    let mut by_file = PositionDeletesByFile::new();
    by_file
        .add(&empty, &Int64Array::from(Vec::<i64>::new()), "d")
        .unwrap();
    assert!(by_file.is_empty());
    let mut index = PositionDeleteIndex::new();
    assert_eq!(index.add_position_file(&by_file, "x"), 0);
    let paths = StringArray::from(vec!["a", "b"]);
    let refused = |result: Result<()>, wanted: &str| match result {
        Err(Error::InvalidData(m)) | Err(Error::TypeMismatch(m)) => {
            assert!(m.contains("pd.parquet") && m.contains(wanted), "{m}")
        }
        other => panic!("{other:?}"),
    };
    // Any data file's bad row refuses the whole file: it is corrupt.
    refused(
        by_file.add(&paths, &Int64Array::from(vec![0, -2]), "pd.parquet"),
        "negative position -2 in row 1",
    );
    refused(
        by_file.add(&paths, &Int64Array::from(vec![Some(1), None]), "pd.parquet"),
        "pos is null in row 1",
    );
    refused(
        by_file.add(
            &StringArray::from(vec![Some("a"), None]),
            &Int64Array::from(vec![1, 2]),
            "pd.parquet",
        ),
        "file_path is null in row 1",
    );
    refused(
        by_file.add(&paths, &Int64Array::from(vec![1]), "pd.parquet"),
        "2 file paths but 1 positions",
    );
    refused(
        by_file.add(
            &Int32Array::from(vec![1, 2]),
            &Int64Array::from(vec![1, 2]),
            "pd.parquet",
        ),
        "file_path must be a string column",
    );
}

proptest! {
    /// Every data file's positions, whatever the row order and however the
    /// rows are split into batches, against a direct model.
    #[test]
    fn a_delete_file_by_data_file_holds_each_files_positions(
        rows in proptest::collection::vec((0usize..4, 0i64..100_000), 0..400),
        sort in any::<bool>(),
        dictionary in any::<bool>(),
        split in 0usize..400,
    ) {
        let mut rows = rows;
        if sort {
            rows.sort();
        }
        let names = ["s3://b/f0.parquet", "s3://b/f1.parquet", "f2", ""];
        let mut by_file = PositionDeletesByFile::new();
        let split = split.min(rows.len());
        for part in [&rows[..split], &rows[split..]] {
            let paths: ArrayRef = if dictionary {
                Arc::new(part.iter().map(|(f, _)| names[*f]).collect::<DictionaryArray<Int32Type>>())
            } else {
                Arc::new(StringArray::from(part.iter().map(|(f, _)| names[*f]).collect::<Vec<_>>()))
            };
            let positions = Int64Array::from(part.iter().map(|(_, p)| *p).collect::<Vec<_>>());
            by_file.add(paths.as_ref(), &positions, "d").unwrap();
        }
        for (f, name) in names.iter().enumerate() {
            let expected: BTreeSet<u64> =
                rows.iter().filter(|(g, _)| *g == f).map(|(_, p)| *p as u64).collect();
            let got: BTreeSet<u64> =
                by_file.get(name).map(|b| b.iter().collect()).unwrap_or_default();
            prop_assert_eq!(got, expected);
        }
    }
}
