use std::collections::HashMap as StdHashMap;
use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, ListBuilder, MapBuilder, StringBuilder, StringDictionaryBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    BinaryArray, BooleanArray, Date32Array, Decimal128Array, DictionaryArray, FixedSizeBinaryArray,
    Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray,
    LargeStringArray, ListArray, StringArray, StringViewArray, StructArray, Time64MicrosecondArray,
    TimestampMicrosecondArray, TimestampMillisecondArray, TimestampNanosecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{Field, Fields};
use proptest::prelude::*;

use super::*;

fn arc(array: impl Array + 'static) -> ArrayRef {
    Arc::new(array)
}

fn values(array: &UInt32Array) -> Vec<u32> {
    array.values().to_vec()
}

fn probe(index: &KeyIndex, columns: &[ArrayRef]) -> (Vec<u32>, Vec<u32>) {
    let (p, s) = index.probe(columns).unwrap();
    (values(&p), values(&s))
}

fn differ(left: &[ArrayRef], right: &[ArrayRef]) -> Vec<bool> {
    let mask = rows_differ(left, right).unwrap();
    assert_eq!(mask.null_count(), 0);
    mask.values().iter().collect()
}

// ------------------------------------------------------------------ KeyIndex

#[test]
fn probe_finds_each_matching_row_in_order() {
    let index = KeyIndex::build(&[arc(Int64Array::from(vec![10, 20, 30]))], "src").unwrap();
    let (p, s) = probe(&index, &[arc(Int64Array::from(vec![30, 5, 10, 30, 40]))]);
    assert_eq!(p, [0, 2, 3]);
    assert_eq!(s, [2, 0, 2]);
    assert_eq!(values(&index.unmatched()), [1]);
    assert_eq!(index.matched_count(), 2);
    assert_eq!((index.len(), index.num_keys()), (3, 3));
}

#[test]
fn a_null_key_matches_nothing_and_is_never_a_duplicate() {
    for multi in [false, true] {
        let mut source: Vec<ArrayRef> = vec![arc(Int64Array::from(vec![None, Some(1), None]))];
        let mut data: Vec<ArrayRef> = vec![arc(Int64Array::from(vec![None, Some(1)]))];
        if multi {
            source.push(arc(StringArray::from(vec!["a", "a", "a"])));
            data.push(arc(StringArray::from(vec!["a", "a"])));
        }
        let index = KeyIndex::build(&source, "src").unwrap();
        assert_eq!(index.num_keys(), 1);
        assert_eq!(probe(&index, &data), (vec![1], vec![1]));
        assert_eq!(values(&index.unmatched()), [0, 2]);
    }
    // A null in any one column of a key.
    let index = KeyIndex::build(
        &[
            arc(Int32Array::from(vec![Some(1), Some(1)])),
            arc(StringArray::from(vec![None, Some("x")])),
        ],
        "src",
    )
    .unwrap();
    let (p, s) = probe(
        &index,
        &[
            arc(Int32Array::from(vec![Some(1), Some(1), None])),
            arc(StringArray::from(vec![None, Some("x"), Some("x")])),
        ],
    );
    assert_eq!((p, s), (vec![1], vec![1]));
}

#[test]
fn floats_join_as_spark_normalises_them() {
    let other_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    let negative_nan = f64::from_bits(0xfff8_0000_0000_0000);
    for multi in [false, true] {
        let with = |v: Vec<f64>| -> Vec<ArrayRef> {
            let n = v.len();
            let mut columns = vec![arc(Float64Array::from(v))];
            if multi {
                columns.push(arc(Int8Array::from(vec![7; n])));
            }
            columns
        };
        let index = KeyIndex::build(&with(vec![-0.0, other_nan, 1.5]), "src").unwrap();
        let (p, s) = probe(&index, &with(vec![0.0, f64::NAN, negative_nan, -0.0, 2.0]));
        assert_eq!(
            (p, s),
            (vec![0, 1, 2, 3], vec![0, 1, 1, 0]),
            "multi={multi}"
        );
        // 0.0 and -0.0 are one key, as are two NaNs.
        let error = KeyIndex::build(&with(vec![0.0, -0.0]), "src")
            .err()
            .unwrap();
        assert!(matches!(error, Error::Validation(_)), "{error}");
        assert!(KeyIndex::build(&with(vec![f64::NAN, other_nan]), "src").is_err());
    }
    let index = KeyIndex::build(&[arc(Float32Array::from(vec![-0.0f32, f32::NAN]))], "s").unwrap();
    let (p, _) = probe(
        &index,
        &[arc(Float32Array::from(vec![0.0f32, -f32::NAN, 1.0]))],
    );
    assert_eq!(p, [0, 1]);
}

#[test]
fn a_duplicate_key_is_refused_naming_it() {
    let ids = Int64Array::from(vec![1, 2, 3, 5, 4, 6, 5, 2]);
    let regions = StringArray::from(vec!["eu", "us", "eu", "eu", "eu", "eu", "eu", "us"]);
    let columns = ChunkedColumns::new(&[arc(ids), arc(regions)])
        .unwrap()
        .with_names(vec!["id".into(), "region".into()])
        .unwrap();
    let error = KeyIndex::build_chunked(&columns, "upsert input")
        .err()
        .unwrap();
    let Error::Validation(message) = &error else {
        panic!("{error:?}")
    };
    assert!(
        message.starts_with(
            "duplicate key in upsert input: (id=5, region=\"eu\") appears in rows 3 and 6; \
             1 more row repeats a key"
        ),
        "{message}"
    );
    // Words, without names, across chunks.
    let columns = ChunkedColumns::from_columns(vec![(
        DataType::Int32,
        vec![
            arc(Int32Array::from(vec![1, 2])),
            arc(Int32Array::from(vec![3, 2])),
        ],
    )])
    .unwrap();
    let message = KeyIndex::build_chunked(&columns, "src")
        .err()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("duplicate key in src: (2) appears in rows 1 and 3 "),
        "{message}"
    );
}

#[test]
fn probe_columns_must_have_the_index_types() {
    let index = KeyIndex::build(
        &[
            arc(Int64Array::from(vec![1])),
            arc(StringArray::from(vec!["a"])),
        ],
        "src",
    )
    .unwrap();
    let error = index
        .probe(&[
            arc(Int64Array::from(vec![1])),
            arc(LargeStringArray::from(vec!["a"])),
        ])
        .unwrap_err();
    let Error::TypeMismatch(message) = &error else {
        panic!("{error:?}")
    };
    assert!(
        message.contains("key column 1")
            && message.contains("Utf8")
            && message.contains("LargeUtf8"),
        "{message}"
    );
    let error = index.probe(&[arc(Int64Array::from(vec![1]))]).unwrap_err();
    assert!(matches!(error, Error::Validation(_)), "{error}");
    let error = index
        .probe(&[
            arc(Int64Array::from(vec![1])),
            arc(StringArray::from(vec!["a", "b"])),
        ])
        .unwrap_err();
    assert!(error.to_string().contains("different lengths"), "{error}");
}

#[test]
fn nested_and_float16_keys_are_refused() {
    let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
    let error = KeyIndex::build(&[arc(list)], "src").err().unwrap();
    assert!(
        matches!(&error, Error::TypeMismatch(m) if m.contains("key column 0")),
        "{error}"
    );
    assert!(KeyIndex::build(&[], "src").is_err());
}

/// Arrays of each accepted key type, holding `[a, b, a-equivalent]`-shaped
/// values: the first two distinct, the third equal to the first.
fn typed_columns() -> Vec<ArrayRef> {
    let dictionary: DictionaryArray<Int32Type> = vec!["x", "y", "x"].into_iter().collect();
    vec![
        arc(BooleanArray::from(vec![true, false, true])),
        arc(Int8Array::from(vec![1, -1, 1])),
        arc(Int16Array::from(vec![1, -1, 1])),
        arc(Int32Array::from(vec![1, -1, 1])),
        arc(Int64Array::from(vec![1, -1, 1])),
        arc(UInt8Array::from(vec![1, 255, 1])),
        arc(UInt16Array::from(vec![1, 2, 1])),
        arc(UInt32Array::from(vec![1, 2, 1])),
        arc(UInt64Array::from(vec![1, u64::MAX, 1])),
        arc(Float32Array::from(vec![0.5, -0.5, 0.5])),
        arc(Float64Array::from(vec![0.5, -0.5, 0.5])),
        arc(Decimal128Array::from(vec![105, -105, 105])
            .with_precision_and_scale(9, 2)
            .unwrap()),
        arc(Date32Array::from(vec![0, -1, 0])),
        arc(Time64MicrosecondArray::from(vec![1, 2, 1])),
        arc(TimestampMicrosecondArray::from(vec![1, 2, 1]).with_timezone("UTC")),
        arc(TimestampNanosecondArray::from(vec![1, 2, 1])),
        arc(TimestampMillisecondArray::from(vec![1, 2, 1]).with_timezone("+01:00")),
        arc(StringArray::from(vec!["é", "e", "é"])),
        arc(LargeStringArray::from(vec!["é", "e", "é"])),
        arc(StringViewArray::from(vec![
            "a string longer than twelve bytes",
            "a string longer than twelve bytez",
            "a string longer than twelve bytes",
        ])),
        arc(BinaryArray::from(vec![&b"\x00"[..], b"", b"\x00"])),
        arc(LargeBinaryArray::from(vec![&b"\x00"[..], b"", b"\x00"])),
        arc(
            FixedSizeBinaryArray::try_from_iter(vec![[1u8; 16], [2u8; 16], [1u8; 16]].into_iter())
                .unwrap(),
        ),
        arc(dictionary),
    ]
}

#[test]
fn every_key_type_joins_by_value() {
    for column in typed_columns() {
        let ty = column.data_type().clone();
        let source = column.slice(0, 2);
        let index = KeyIndex::build(std::slice::from_ref(&source), "src").unwrap();
        assert_eq!(
            probe(&index, std::slice::from_ref(&column)),
            (vec![0, 1, 2], vec![0, 1, 0]),
            "{ty}"
        );
        assert!(
            KeyIndex::build(std::slice::from_ref(&column), "src").is_err(),
            "{ty}"
        );
        // Paired with a second column (encoded rows).
        let ones = |n| arc(Int32Array::from(vec![1; n]));
        let index = KeyIndex::build(&[source, ones(2)], "src").unwrap();
        assert_eq!(
            probe(&index, &[column, ones(3)]),
            (vec![0, 1, 2], vec![0, 1, 0]),
            "{ty}"
        );
    }
}

#[test]
fn dictionaries_match_by_value_whatever_their_dictionaries() {
    let source: DictionaryArray<Int32Type> = vec!["a", "b", "c"].into_iter().collect();
    let mut builder = StringDictionaryBuilder::<Int32Type>::new();
    for v in [Some("c"), None, Some("z"), Some("a")] {
        builder.append_option(v);
    }
    let index = KeyIndex::build(&[arc(source)], "src").unwrap();
    assert_eq!(
        probe(&index, &[arc(builder.finish())]),
        (vec![0, 3], vec![2, 0])
    );
    // A key pointing at a null dictionary value is a null key.
    let keys = Int32Array::from(vec![0, 1]);
    let dict = DictionaryArray::new(keys, arc(StringArray::from(vec![Some("a"), None])));
    let (p, _) = probe(&index, &[arc(dict)]);
    assert_eq!(p, [0]);
}

#[test]
fn chunked_input_numbers_rows_across_chunks() {
    let source = ChunkedColumns::from_columns(vec![
        (
            DataType::Int64,
            vec![
                arc(Int64Array::from(vec![1, 2])),
                arc(Int64Array::from(Vec::<i64>::new())),
                arc(Int64Array::from(vec![3, 4, 5])),
            ],
        ),
        (
            DataType::Utf8,
            vec![
                arc(StringArray::from(vec!["a"])),
                arc(StringArray::from(vec!["a", "a", "a", "b"])),
            ],
        ),
    ])
    .unwrap();
    assert_eq!(source.num_rows(), 5);
    let starts: Vec<(usize, usize)> = source.chunks().map(|(s, c)| (s, c[0].len())).collect();
    assert_eq!(starts, [(0, 1), (1, 1), (2, 3)]);
    let index = KeyIndex::build_chunked(&source, "src").unwrap();
    let probe_columns = ChunkedColumns::from_batches(
        vec![DataType::Int64, DataType::Utf8],
        vec![
            vec![
                arc(Int64Array::from(vec![5, 1])),
                arc(StringArray::from(vec!["b", "a"])),
            ],
            vec![
                arc(Int64Array::from(vec![4])),
                arc(StringArray::from(vec!["a"])),
            ],
        ],
    )
    .unwrap();
    let (p, s) = index.probe_chunked(&probe_columns).unwrap();
    assert_eq!((values(&p), values(&s)), (vec![0, 1, 2], vec![4, 0, 3]));
    assert_eq!(values(&index.unmatched()), [1, 2]);
    let error = ChunkedColumns::from_columns(vec![
        (DataType::Int64, vec![arc(Int64Array::from(vec![1]))]),
        (DataType::Int64, vec![arc(Int64Array::from(vec![1, 2]))]),
    ])
    .unwrap_err();
    assert!(error.to_string().contains("different lengths"), "{error}");
    let error = ChunkedColumns::from_columns(vec![(
        DataType::Int64,
        vec![arc(Int32Array::from(vec![1]))],
    )])
    .unwrap_err();
    assert!(matches!(error, Error::TypeMismatch(_)), "{error}");
}

#[test]
fn an_empty_source_matches_nothing() {
    let columns =
        ChunkedColumns::from_batches(vec![DataType::Utf8, DataType::Int32], vec![]).unwrap();
    let index = KeyIndex::build_chunked(&columns, "src").unwrap();
    assert!(index.is_empty());
    let (p, _) = probe(
        &index,
        &[
            arc(StringArray::from(vec!["a"])),
            arc(Int32Array::from(vec![1])),
        ],
    );
    assert!(p.is_empty());
    assert_eq!(index.unmatched().len(), 0);
}

#[test]
fn concurrent_probes_record_the_union_of_matches() {
    let n = 10_000i64;
    let index = KeyIndex::build(&[arc(Int64Array::from_iter_values(0..n))], "src").unwrap();
    let parts: Vec<ArrayRef> = (0..4)
        .map(|t| arc(Int64Array::from_iter_values((0..n).filter(|v| v % 7 == t))))
        .collect();
    let results: Vec<(Vec<u32>, Vec<u32>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .iter()
            .map(|part| scope.spawn(|| probe(&index, std::slice::from_ref(part))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (part, (p, s)) in parts.iter().zip(&results) {
        assert_eq!(p.len(), part.len());
        let part = part.as_primitive::<arrow_array::types::Int64Type>();
        assert!(s
            .iter()
            .zip(part.values())
            .all(|(&s, &v)| i64::from(s) == v));
    }
    let unmatched = values(&index.unmatched());
    let expected: Vec<u32> = (0..n).filter(|v| v % 7 >= 4).map(|v| v as u32).collect();
    assert_eq!(unmatched, expected);
    assert_eq!(index.matched_count(), n as usize - expected.len());
}

#[test]
fn unmatched_handles_every_bitmap_edge() {
    for n in [0usize, 1, 63, 64, 65, 128, 130] {
        let index =
            KeyIndex::build(&[arc(UInt64Array::from_iter_values(0..n as u64))], "src").unwrap();
        let evens = UInt64Array::from_iter_values((0..n as u64).filter(|v| v % 2 == 0));
        probe(&index, &[arc(evens)]);
        let expected: Vec<u32> = (0..n as u32).filter(|v| v % 2 == 1).collect();
        assert_eq!(values(&index.unmatched()), expected, "n={n}");
        assert_eq!(index.matched_count(), n - expected.len());
    }
}

#[test]
fn key_values_read_well_in_messages() {
    let row = |array: ArrayRef| display::value(array.as_ref(), 0);
    assert_eq!(row(arc(Date32Array::from(vec![19_000]))), "2022-01-08");
    assert_eq!(
        row(arc(
            TimestampMicrosecondArray::from(vec![1_500_000]).with_timezone("UTC")
        )),
        "1970-01-01T00:00:01.5+00:00"
    );
    assert_eq!(
        row(arc(Decimal128Array::from(vec![-5])
            .with_precision_and_scale(9, 2)
            .unwrap())),
        "-0.05"
    );
    assert_eq!(
        row(arc(FixedSizeBinaryArray::try_from_iter(
            vec![[0xabu8; 16]].into_iter()
        )
        .unwrap())),
        "abababab-abab-abab-abab-abababababab"
    );
    assert_eq!(
        row(arc(BinaryArray::from(vec![&b"\x01\xff"[..]]))),
        "X'01ff'"
    );
    assert_eq!(row(arc(StringArray::from(vec!["a\"b"]))), "\"a\\\"b\"");
    let long = "é".repeat(100);
    assert_eq!(
        row(arc(StringArray::from(vec![long]))),
        format!("{:?}...", "é".repeat(64))
    );
    assert_eq!(row(arc(Int32Array::from(vec![None]))), "null");
    let dict: DictionaryArray<Int32Type> = vec!["eu"].into_iter().collect();
    assert_eq!(row(arc(dict)), "\"eu\"");
}

// ------------------------------------------------------------- rows_differ

#[test]
fn nulls_and_floats_differ_as_stored_values() {
    let other_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    let left = arc(Float64Array::from(vec![
        Some(0.0),
        Some(f64::NAN),
        None,
        None,
        Some(1.0),
        Some(1.0),
    ]));
    let right = arc(Float64Array::from(vec![
        Some(-0.0),
        Some(other_nan),
        None,
        Some(1.0),
        None,
        Some(1.0),
    ]));
    assert_eq!(
        differ(&[left], &[right]),
        [true, false, false, true, true, false]
    );
    let left = arc(Int32Array::from(vec![Some(1), None, Some(3)]));
    let right = arc(Int32Array::from(vec![Some(1), None, Some(4)]));
    let strings = arc(StringArray::from(vec![Some("a"), None, Some("b")]));
    let strings2 = arc(StringArray::from(vec![Some("a"), Some("x"), Some("b")]));
    assert_eq!(
        differ(
            &[left.clone(), strings.clone()],
            &[right.clone(), strings.clone()]
        ),
        [false, false, true]
    );
    assert_eq!(
        differ(&[left.clone(), strings], &[left, strings2]),
        [false, true, false]
    );
}

#[test]
fn every_flat_type_compares_by_value() {
    for column in typed_columns() {
        let ty = column.data_type().clone();
        // Rows 0 and 2 hold equal values, row 1 another.
        let left = column.slice(0, 2);
        let right = column.slice(1, 2);
        assert_eq!(
            differ(std::slice::from_ref(&left), &[right]),
            [true, true],
            "{ty}"
        );
        let shifted =
            arc(arrow_select::concat::concat(&[&column.slice(2, 1), &column.slice(1, 1)]).unwrap());
        assert_eq!(differ(&[left], &[shifted]), [false, false], "{ty}");
    }
}

#[test]
fn structs_compare_by_value_ignoring_children_under_a_null() {
    let fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Float64, true),
    ]);
    let build = |a: Vec<Option<i32>>, b: Vec<Option<f64>>, valid: Vec<bool>| -> ArrayRef {
        arc(StructArray::new(
            fields.clone(),
            vec![arc(Int32Array::from(a)), arc(Float64Array::from(b))],
            Some(NullBuffer::from(valid)),
        ))
    };
    let left = build(
        vec![Some(1), Some(1), Some(1), Some(2), None],
        vec![Some(0.0), Some(f64::NAN), Some(0.0), Some(5.0), None],
        vec![true, true, true, false, true],
    );
    let right = build(
        vec![Some(1), Some(1), Some(1), Some(3), Some(0)],
        vec![Some(-0.0), Some(-f64::NAN), Some(0.0), Some(6.0), None],
        vec![true, true, false, false, true],
    );
    assert_eq!(differ(&[left], &[right]), [true, false, true, false, true]);
}

#[test]
fn lists_and_maps_compare_element_by_element() {
    let list = |rows: Vec<Option<Vec<Option<i32>>>>| -> ArrayRef {
        arc(ListArray::from_iter_primitive::<Int32Type, _, _>(rows))
    };
    let left = list(vec![
        Some(vec![Some(1), None]),
        Some(vec![]),
        None,
        Some(vec![Some(1), Some(2)]),
    ]);
    let right = list(vec![
        Some(vec![Some(1), None]),
        None,
        None,
        Some(vec![Some(2), Some(1)]),
    ]);
    assert_eq!(differ(&[left], &[right]), [false, true, false, true]);
    // A null list slot whose offsets span values equals another null.
    let values = arc(Int32Array::from(vec![1, 2, 3]));
    let field = Arc::new(Field::new_list_field(DataType::Int32, true));
    let spanning = ListArray::new(
        field.clone(),
        OffsetBuffer::new(vec![0, 2, 3].into()),
        values.clone(),
        Some(NullBuffer::from(vec![false, true])),
    );
    let empty = ListArray::new(
        field,
        OffsetBuffer::new(vec![0, 0, 1].into()),
        arc(Int32Array::from(vec![3])),
        Some(NullBuffer::from(vec![false, true])),
    );
    assert_eq!(differ(&[arc(spanning)], &[arc(empty)]), [false, false]);

    type Entries<'a> = &'a [(&'a str, Option<i32>)];
    let map = |rows: &[Option<Entries>]| -> ArrayRef {
        let mut builder = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
        for row in rows {
            match row {
                Some(entries) => {
                    for (k, v) in entries.iter() {
                        builder.keys().append_value(k);
                        builder.values().append_option(*v);
                    }
                    builder.append(true).unwrap();
                }
                None => builder.append(false).unwrap(),
            }
        }
        arc(builder.finish())
    };
    let left = map(&[
        Some(&[("a", Some(1)), ("b", None)]),
        Some(&[("a", Some(1))]),
        None,
        Some(&[("a", Some(1)), ("b", Some(2))]),
    ]);
    let right = map(&[
        Some(&[("a", Some(1)), ("b", None)]),
        Some(&[("a", Some(2))]),
        None,
        Some(&[("b", Some(2)), ("a", Some(1))]),
    ]);
    assert_eq!(differ(&[left], &[right]), [false, true, false, true]);
}

#[test]
fn nested_floats_compare_as_stored_values() {
    let list = |rows: Vec<Option<Vec<Option<f64>>>>| -> ArrayRef {
        arc(ListArray::from_iter_primitive::<
            arrow_array::types::Float64Type,
            _,
            _,
        >(rows))
    };
    let other_nan = f64::from_bits(0x7ff8_0000_0000_0001);
    let left = list(vec![Some(vec![Some(f64::NAN)]), Some(vec![Some(0.0)])]);
    let right = list(vec![Some(vec![Some(other_nan)]), Some(vec![Some(-0.0)])]);
    assert_eq!(differ(&[left], &[right]), [false, true]);
}

#[test]
fn dictionaries_compare_by_value() {
    let left: DictionaryArray<Int32Type> = vec!["a", "b", "c"].into_iter().collect();
    let right: DictionaryArray<Int32Type> = vec!["c", "b", "a"].into_iter().collect();
    assert_eq!(differ(&[arc(left)], &[arc(right)]), [true, false, true]);
}

#[test]
fn rows_differ_refuses_mismatched_inputs() {
    let error = rows_differ(
        &[arc(Int32Array::from(vec![1]))],
        &[arc(Int64Array::from(vec![1]))],
    )
    .unwrap_err();
    assert!(
        matches!(&error, Error::TypeMismatch(m) if m.contains("column 0") && m.contains("Int32") && m.contains("Int64")),
        "{error}"
    );
    assert!(rows_differ(
        &[arc(Int32Array::from(vec![1]))],
        &[arc(Int32Array::from(vec![1, 2]))]
    )
    .is_err());
    assert!(rows_differ(&[arc(Int32Array::from(vec![1]))], &[]).is_err());
}

#[test]
fn rows_differ_pairs_differently_chunked_sides() {
    let left = ChunkedColumns::from_columns(vec![(
        DataType::Utf8,
        vec![
            arc(StringArray::from(vec!["a", "b", "c"])),
            arc(StringArray::from(vec!["d"])),
        ],
    )])
    .unwrap();
    let right = ChunkedColumns::from_columns(vec![(
        DataType::Utf8,
        vec![
            arc(StringArray::from(vec!["a"])),
            arc(StringArray::from(vec!["x", "c", "d"])),
        ],
    )])
    .unwrap();
    let mask = rows_differ_chunked(&left, &right).unwrap();
    assert_eq!(
        mask.values().iter().collect::<Vec<_>>(),
        [false, true, false, false]
    );
}

#[test]
fn booleans_with_offsets_compare_by_value() {
    let mut builder = BooleanBuilder::new();
    builder.append_slice(&[true, true, false, true]);
    let all = arc(builder.finish());
    let left = all.slice(1, 3);
    let right = all.slice(0, 3);
    assert_eq!(differ(&[left], &[right]), [false, true, true]);
    let mut lists = ListBuilder::new(BooleanBuilder::new());
    lists.values().append_value(true);
    lists.append(true);
    let lists = arc(lists.finish());
    assert_eq!(
        differ(std::slice::from_ref(&lists), std::slice::from_ref(&lists)),
        [false]
    );
}

// --------------------------------------------------------------- the model

/// One key column shape of the property tests: builds typed columns from
/// small ints (`None`: null), and says which ints are equal join keys and
/// equal stored values.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Long,
    Double,
    Text,
    LargeText,
    ViewText,
    Dictionary,
    Float,
}

const SHAPES: [Shape; 7] = [
    Shape::Long,
    Shape::Double,
    Shape::Text,
    Shape::LargeText,
    Shape::ViewText,
    Shape::Dictionary,
    Shape::Float,
];

/// The float each small int stands for: -0.0 and 0.0, NaNs of several payloads.
const DOUBLES: [f64; 6] = [0.0, -0.0, f64::NAN, 1.5, -1.5, f64::INFINITY];
/// Strings with multi-byte characters; two share a prefix.
const TEXTS: [&str; 6] = [
    "",
    "a",
    "é",
    "日本",
    "a longer string, past twelve bytes",
    "é\u{1F9CA}",
];

fn double(v: u8) -> f64 {
    if v == 6 {
        f64::from_bits(0xfff8_0000_0000_0001) // another NaN
    } else {
        DOUBLES[v as usize % DOUBLES.len()]
    }
}

impl Shape {
    fn column(self, values: &[Option<u8>]) -> ArrayRef {
        let it = values.iter().copied();
        match self {
            Shape::Long => arc(it
                .map(|v| v.map(|v| i64::from(v) - 3))
                .collect::<Int64Array>()),
            Shape::Double => arc(it.map(|v| v.map(double)).collect::<Float64Array>()),
            Shape::Float => arc(it
                .map(|v| v.map(|v| double(v) as f32))
                .collect::<Float32Array>()),
            Shape::Text => arc(it.map(|v| v.map(text)).collect::<StringArray>()),
            Shape::LargeText => arc(it.map(|v| v.map(text)).collect::<LargeStringArray>()),
            Shape::ViewText => arc(it.map(|v| v.map(text)).collect::<StringViewArray>()),
            Shape::Dictionary => arc(it
                .map(|v| v.map(text))
                .collect::<DictionaryArray<Int32Type>>()),
        }
    }

    /// The class of equal join keys `v` belongs to.
    fn join_class(self, v: u8) -> u64 {
        match self {
            Shape::Double | Shape::Float => {
                let x = double(v);
                if x.is_nan() {
                    u64::MAX
                } else if x == 0.0 {
                    0
                } else {
                    x.to_bits()
                }
            }
            _ => self.stored_class(v),
        }
    }

    /// The class of equal stored values `v` belongs to.
    fn stored_class(self, v: u8) -> u64 {
        match self {
            Shape::Double | Shape::Float => {
                let x = double(v);
                if x.is_nan() {
                    u64::MAX
                } else {
                    x.to_bits()
                }
            }
            Shape::Long => u64::from(v),
            _ => u64::from(v) % TEXTS.len() as u64,
        }
    }
}

fn text(v: u8) -> &'static str {
    TEXTS[v as usize % TEXTS.len()]
}

/// A small int of the model, 0..=6 (6: a second NaN for floats).
fn small() -> impl Strategy<Value = Option<u8>> {
    proptest::option::weighted(0.85, 0u8..7)
}

/// Rows of `width` small ints.
fn rows(width: usize, max: usize) -> impl Strategy<Value = Vec<Vec<Option<u8>>>> {
    proptest::collection::vec(proptest::collection::vec(small(), width), 0..max)
}

/// The rows as chunked columns cut at `cuts` (fractions of the length).
fn chunked(shapes: &[Shape], rows: &[Vec<Option<u8>>], cuts: &[usize]) -> ChunkedColumns {
    let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (rows.len() + 1)).collect();
    bounds.push(0);
    bounds.push(rows.len());
    bounds.sort_unstable();
    bounds.dedup();
    let chunks = bounds
        .windows(2)
        .map(|w| {
            shapes
                .iter()
                .enumerate()
                .map(|(c, shape)| {
                    let column: Vec<Option<u8>> = rows[w[0]..w[1]].iter().map(|r| r[c]).collect();
                    shape.column(&column)
                })
                .collect()
        })
        .collect();
    let types = shapes
        .iter()
        .map(|s| s.column(&[]).data_type().clone())
        .collect();
    ChunkedColumns::from_batches(types, chunks).unwrap()
}

/// The join key of a row in the model; `None` when it holds a null.
fn model_key(shapes: &[Shape], row: &[Option<u8>]) -> Option<Vec<u64>> {
    shapes
        .iter()
        .zip(row)
        .map(|(shape, v)| v.map(|v| shape.join_class(v)))
        .collect()
}

fn shapes_strategy() -> impl Strategy<Value = Vec<Shape>> {
    proptest::collection::vec(proptest::sample::select(SHAPES.to_vec()), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// build, probe, unmatched and matched_count against a HashMap over the
    /// model's keys, for one to three key columns of several types, with
    /// nulls, NaNs, -0.0, multi-byte strings and chunked inputs.
    #[test]
    fn the_join_matches_a_model(
        shapes in shapes_strategy(),
        source in rows(3, 30),
        probes in rows(3, 60),
        source_cuts in proptest::collection::vec(0usize..64, 0..3),
        probe_cuts in proptest::collection::vec(0usize..64, 0..3),
        unique in any::<bool>(),
    ) {
        let width = shapes.len();
        let mut source: Vec<Vec<Option<u8>>> = source.into_iter().map(|r| r[..width].to_vec()).collect();
        let probes: Vec<Vec<Option<u8>>> = probes.into_iter().map(|r| r[..width].to_vec()).collect();
        if unique {
            let mut seen = std::collections::HashSet::new();
            source.retain(|row| model_key(&shapes, row).is_none_or(|k| seen.insert(k)));
        }
        let mut model: StdHashMap<Vec<u64>, u32> = StdHashMap::new();
        let mut duplicate = false;
        for (r, row) in source.iter().enumerate() {
            if let Some(key) = model_key(&shapes, row) {
                duplicate |= model.insert(key, r as u32).is_some();
            }
        }
        let built = KeyIndex::build_chunked(&chunked(&shapes, &source, &source_cuts), "src");
        let index = match built {
            Err(Error::Validation(m)) => {
                prop_assert!(duplicate, "{}", m);
                prop_assert!(m.starts_with("duplicate key in src: ("), "{}", m);
                return Ok(());
            }
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
            Ok(index) => {
                prop_assert!(!duplicate);
                index
            }
        };
        prop_assert_eq!(index.len(), source.len());
        prop_assert_eq!(index.num_keys(), model.len());
        let (p, s) = index.probe_chunked(&chunked(&shapes, &probes, &probe_cuts)).unwrap();
        let (mut want_p, mut want_s) = (Vec::new(), Vec::new());
        for (r, row) in probes.iter().enumerate() {
            if let Some(&s) = model_key(&shapes, row).and_then(|k| model.get(&k)) {
                want_p.push(r as u32);
                want_s.push(s);
            }
        }
        prop_assert_eq!(values(&p), want_p);
        prop_assert_eq!(values(&s), want_s.clone());
        let matched: std::collections::BTreeSet<u32> = want_s.into_iter().collect();
        let unmatched: Vec<u32> = (0..source.len() as u32).filter(|r| !matched.contains(r)).collect();
        prop_assert_eq!(values(&index.unmatched()), unmatched);
        prop_assert_eq!(index.matched_count(), matched.len());
    }

    /// rows_differ against the model's stored-value equality (null equal to
    /// null, NaN to NaN, -0.0 apart from 0.0), each side chunked its own way.
    #[test]
    fn rows_differ_matches_a_model(
        shapes in shapes_strategy(),
        pairs in proptest::collection::vec((proptest::collection::vec(small(), 3), proptest::collection::vec(small(), 3)), 0..40),
        left_cuts in proptest::collection::vec(0usize..64, 0..3),
        right_cuts in proptest::collection::vec(0usize..64, 0..3),
        nest in any::<bool>(),
    ) {
        let width = shapes.len();
        let left: Vec<Vec<Option<u8>>> = pairs.iter().map(|(l, _)| l[..width].to_vec()).collect();
        let right: Vec<Vec<Option<u8>>> = pairs.iter().map(|(_, r)| r[..width].to_vec()).collect();
        let expected: Vec<bool> = left
            .iter()
            .zip(&right)
            .map(|(l, r)| {
                shapes.iter().enumerate().any(|(c, shape)| {
                    l[c].map(|v| shape.stored_class(v)) != r[c].map(|v| shape.stored_class(v))
                })
            })
            .collect();
        let (l, r) = (chunked(&shapes, &left, &left_cuts), chunked(&shapes, &right, &right_cuts));
        let mask = if nest {
            // The same columns as the fields of one struct column (arrow-row).
            let as_struct = |c: &ChunkedColumns| -> ArrayRef {
                let columns: Vec<ArrayRef> = (0..width)
                    .map(|i| {
                        let parts: Vec<&dyn Array> = c.chunks().map(|(_, ch)| ch[i].as_ref()).collect();
                        if parts.is_empty() {
                            shapes[i].column(&[])
                        } else {
                            arrow_select::concat::concat(&parts).unwrap()
                        }
                    })
                    .collect();
                let fields: Fields = columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Field::new(format!("f{i}"), c.data_type().clone(), true))
                    .collect();
                arc(StructArray::new(fields, columns, None))
            };
            rows_differ(&[as_struct(&l)], &[as_struct(&r)]).unwrap()
        } else {
            rows_differ_chunked(&l, &r).unwrap()
        };
        prop_assert_eq!(mask.values().iter().collect::<Vec<_>>(), expected);
    }
}

/// Build 1M keys, probe 10M rows (half of them matching, in chunks of 2^20
/// rows), one thread:
/// `cargo test --profile ci --lib key_join::tests::timing -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing() {
    use std::time::Instant;
    let n = 1_000_000u64;
    let m = 10_000_000u64;
    // Keys in no order: a multiplicative scramble (another constant than the table's).
    let scramble = |i: u64| (i.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 11) as i64;
    let source_ids: Vec<i64> = (0..n).map(scramble).collect();
    let probe_ids: Vec<i64> = (0..m).map(|i| scramble((i * 7919) % (2 * n))).collect();
    let longs = |ids: &[i64]| arc(Int64Array::from(ids.to_vec()));
    let texts = |ids: &[i64]| {
        arc(ids
            .iter()
            .map(|&v| Some(format!("{:016x}", v as u64)))
            .collect::<StringArray>())
    };
    let cases: Vec<(&str, Vec<ArrayRef>, Vec<ArrayRef>)> = vec![
        ("int64", vec![longs(&source_ids)], vec![longs(&probe_ids)]),
        (
            "string16",
            vec![texts(&source_ids)],
            vec![texts(&probe_ids)],
        ),
        (
            "int64+string16 (arrow-row)",
            vec![longs(&source_ids), texts(&source_ids)],
            vec![longs(&probe_ids), texts(&probe_ids)],
        ),
    ];
    for (name, source, probes) in cases {
        let len = probes[0].len();
        let chunks: Vec<Vec<ArrayRef>> = (0..len)
            .step_by(1 << 20)
            .map(|s| {
                let rows = (1 << 20).min(len - s);
                probes.iter().map(|c| c.slice(s, rows)).collect()
            })
            .collect();
        let types = probes.iter().map(|c| c.data_type().clone()).collect();
        let columns = ChunkedColumns::from_batches(types, chunks).unwrap();
        for _ in 0..3 {
            let start = Instant::now();
            let index = KeyIndex::build(&source, "bench").unwrap();
            let built = start.elapsed();
            let start = Instant::now();
            let (p, _) = index.probe_chunked(&columns).unwrap();
            let probed = start.elapsed();
            assert_eq!((p.len(), index.unmatched().len()), (5_000_000, 0));
            println!("{name}: build {built:?}, probe {probed:?}");
        }
    }
}
