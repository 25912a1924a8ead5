use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, ListArray, StringArray, StructArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::DataType;
use proptest::prelude::*;

use super::*;
use crate::avro::container::Writer;
use crate::avro::encode::{avro_schema, encode_struct};
use crate::types::PrimitiveType as P;

fn sample_fields() -> Vec<NestedField> {
    vec![
        NestedField::required(1, "id", Type::Primitive(P::Long)),
        NestedField::optional(2, "name", Type::Primitive(P::String)),
        NestedField::optional(
            3,
            "points",
            Type::List {
                element_id: 4,
                element_required: true,
                element: Box::new(Type::Struct(vec![NestedField::optional(
                    5,
                    "x",
                    Type::Primitive(P::Int),
                )])),
            },
        ),
    ]
}

/// A file of `rows` records of [`sample_fields`]; with `padded`, names of
/// 10 KB, so that the writer starts a block every few records.
fn sample_file(rows: usize, padded: bool) -> (Vec<u8>, StructArray) {
    let fields = sample_fields();
    let ids: ArrayRef = Arc::new(Int64Array::from_iter_values(0..rows as i64));
    let names: ArrayRef = Arc::new(StringArray::from_iter((0..rows).map(|i| {
        (i % 3 != 0).then(|| {
            format!(
                "n{i}{}",
                if padded {
                    "x".repeat(10_000)
                } else {
                    String::new()
                }
            )
        })
    })));
    let xs = Int32Array::from_iter((0..rows * 2).map(|i| (i % 5 != 0).then_some(i as i32)));
    let element_type = arrow_type(&fields[2].field_type);
    let DataType::List(element_field) = element_type else {
        unreachable!()
    };
    let DataType::Struct(element_fields) = element_field.data_type().clone() else {
        unreachable!()
    };
    let elements = StructArray::new(element_fields, vec![Arc::new(xs) as ArrayRef], None);
    let points: ArrayRef = Arc::new(ListArray::new(
        element_field,
        OffsetBuffer::from_lengths(std::iter::repeat_n(2, rows)),
        Arc::new(elements),
        None,
    ));
    let DataType::Struct(top) = arrow_type(&Type::Struct(fields.clone())) else {
        unreachable!()
    };
    let rows_array = StructArray::new(top, vec![ids, names, points], None);
    let schema = avro_schema(&fields, "table").to_string();
    let mut writer = Writer::new(&schema, &[], Codec::Deflate);
    for row in 0..rows {
        encode_struct(&fields, &rows_array, row, writer.record_buffer()).unwrap();
        writer.end_record().unwrap();
    }
    (writer.finish().unwrap(), rows_array)
}

#[test]
fn reads_fields_and_rows_by_id() {
    let (data, rows) = sample_file(10, false);
    let file = DataFile::open("mem://a.avro", data).unwrap();
    assert_eq!(file.fields(), sample_fields().as_slice());
    let schema = file.arrow_schema();
    assert_eq!(schema.field(0).metadata()[FIELD_ID_KEY], "1");
    let DataType::List(element) = schema.field(2).data_type() else {
        panic!("not a list")
    };
    assert_eq!(element.metadata()[FIELD_ID_KEY], "4");
    let (first, batch) = file.read(0, u64::MAX, None).unwrap();
    assert_eq!(first, 0);
    assert_eq!(batch.num_rows(), 10);
    for (i, column) in rows.columns().iter().enumerate() {
        assert_eq!(batch.column(i).to_data(), column.to_data(), "column {i}");
    }
    let (_, only) = file.read(0, u64::MAX, Some(&[3])).unwrap();
    assert_eq!(only.num_columns(), 1);
    assert_eq!(only.column(0).to_data(), rows.column(2).to_data());
    let error = file.read(0, u64::MAX, Some(&[99])).unwrap_err();
    assert!(error.to_string().contains("mem://a.avro"), "{error}");
}

#[test]
fn splits_own_the_blocks_whose_sync_marker_starts_in_them() {
    let (data, rows) = sample_file(40, true);
    let size = data.len() as u64;
    let file = DataFile::open("mem://a.avro", data).unwrap();
    let mut seen = Vec::new();
    for cut in [1, 7, size / 3, size / 2, size - 20] {
        let (first, a) = file.read(0, cut, None).unwrap();
        let (second, b) = file.read(cut, size - cut, None).unwrap();
        assert_eq!(first, 0);
        assert_eq!(second as usize, a.num_rows(), "cut at {cut}");
        assert_eq!(a.num_rows() + b.num_rows(), 40, "cut at {cut}");
        let ids =
            arrow_select::concat::concat(&[a.column(0).as_ref(), b.column(0).as_ref()]).unwrap();
        assert_eq!(ids.to_data(), rows.column(0).to_data());
        seen.push(a.num_rows());
    }
    assert!(seen.iter().any(|n| *n > 0 && *n < 40), "{seen:?}");
}

#[test]
fn refuses_files_without_ids_naming_them() {
    let schema = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}"#;
    let data = Writer::new(schema, &[], Codec::Null).finish().unwrap();
    let error = DataFile::open("s3://b/x.avro", data).err().unwrap();
    assert!(error.to_string().contains("s3://b/x.avro"), "{error}");
    assert!(error.to_string().contains("field-id"), "{error}");
}

#[test]
fn reads_java_shapes_of_logical_types() {
    // Named fixed types referred to by name, as Java's writer reuses them;
    // a map with int keys as an array of key/value records; a string map.
    let schema = r#"{"type":"record","name":"t","fields":[
      {"name":"d","type":["null",{"type":"fixed","name":"decimal_9_2","size":4,
        "logicalType":"decimal","precision":9,"scale":2}],"field-id":1},
      {"name":"e","type":"decimal_9_2","field-id":2},
      {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":true},"field-id":3},
      {"name":"lts","type":{"type":"long","logicalType":"timestamp-micros","adjust-to-utc":false},"field-id":4},
      {"name":"u","type":{"type":"fixed","name":"uuid_fixed","size":16,"logicalType":"uuid"},"field-id":5},
      {"name":"m","type":{"type":"array","logicalType":"map","items":{"type":"record","name":"k7_v8",
        "fields":[{"name":"key","type":"int","field-id":7},{"name":"value","type":["null","string"],"field-id":8}]}},"field-id":6},
      {"name":"s","type":{"type":"map","values":{"type":"int","logicalType":"date"},"key-id":10,"value-id":11},"field-id":9},
      {"name":"t","type":{"type":"long","logicalType":"time-micros"},"field-id":12},
      {"name":"x_x2Dy","iceberg-field-name":"x-y","type":"null","field-id":13},
      {"name":"extra","type":"int"}
    ]}"#;
    let fields = types::file_fields(schema).unwrap();
    let expected = vec![
        NestedField::optional(
            1,
            "d",
            Type::Primitive(P::Decimal {
                precision: 9,
                scale: 2,
            }),
        ),
        NestedField::required(
            2,
            "e",
            Type::Primitive(P::Decimal {
                precision: 9,
                scale: 2,
            }),
        ),
        NestedField::required(3, "ts", Type::Primitive(P::Timestamptz)),
        NestedField::required(4, "lts", Type::Primitive(P::Timestamp)),
        NestedField::required(5, "u", Type::Primitive(P::Uuid)),
        NestedField::required(
            6,
            "m",
            Type::Map {
                key_id: 7,
                key: Box::new(Type::Primitive(P::Int)),
                value_id: 8,
                value_required: false,
                value: Box::new(Type::Primitive(P::String)),
            },
        ),
        NestedField::required(
            9,
            "s",
            Type::Map {
                key_id: 10,
                key: Box::new(Type::Primitive(P::String)),
                value_id: 11,
                value_required: true,
                value: Box::new(Type::Primitive(P::Date)),
            },
        ),
        NestedField::required(12, "t", Type::Primitive(P::Time)),
        NestedField::optional(13, "x-y", Type::Primitive(P::Unknown)),
    ];
    assert_eq!(fields, expected);
}

fn arb_primitive() -> impl Strategy<Value = Type> {
    prop_oneof![
        Just(P::Boolean),
        Just(P::Int),
        Just(P::Long),
        Just(P::Float),
        Just(P::Double),
        (1u32..=38)
            .prop_flat_map(|p| (Just(p), 0..=p))
            .prop_map(|(precision, scale)| P::Decimal { precision, scale }),
        Just(P::Date),
        Just(P::Time),
        Just(P::Timestamp),
        Just(P::Timestamptz),
        Just(P::TimestampNs),
        Just(P::TimestamptzNs),
        Just(P::String),
        Just(P::Uuid),
        (1u64..40).prop_map(P::Fixed),
        Just(P::Binary),
    ]
    .prop_map(Type::Primitive)
}

/// Iceberg types with ids assigned later by [`renumber`].
fn arb_type() -> impl Strategy<Value = Type> {
    arb_primitive().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec((inner.clone(), any::<bool>()), 1..4).prop_map(|fields| {
                Type::Struct(
                    fields
                        .into_iter()
                        .enumerate()
                        .map(|(i, (ty, required))| {
                            NestedField::new(0, &format!("f{i}"), required, ty)
                        })
                        .collect(),
                )
            }),
            (inner.clone(), any::<bool>()).prop_map(|(element, element_required)| Type::List {
                element_id: 0,
                element_required,
                element: Box::new(element),
            }),
            (arb_primitive(), inner, any::<bool>()).prop_map(|(key, value, value_required)| {
                Type::Map {
                    key_id: 0,
                    key: Box::new(key),
                    value_id: 0,
                    value_required,
                    value: Box::new(value),
                }
            }),
        ]
    })
}

fn renumber(ty: &mut Type, next: &mut i32) {
    let mut take = || {
        *next += 1;
        *next
    };
    match ty {
        Type::Struct(fields) => {
            for f in fields.iter_mut() {
                f.id = take();
            }
            for f in fields.iter_mut() {
                renumber(&mut f.field_type, next);
            }
        }
        Type::List {
            element_id,
            element,
            ..
        } => {
            *element_id = take();
            renumber(element, next);
        }
        Type::Map {
            key_id,
            key,
            value_id,
            value,
            ..
        } => {
            *key_id = take();
            *value_id = take();
            renumber(key, next);
            renumber(value, next);
        }
        _ => {}
    }
}

proptest! {
    /// Any Iceberg schema written the way Java writes Avro reads back as itself.
    #[test]
    fn writer_schemas_read_back_as_the_iceberg_schema(
        types in prop::collection::vec((arb_type(), any::<bool>()), 1..5)
    ) {
        let mut top = Type::Struct(
            types
                .into_iter()
                .enumerate()
                .map(|(i, (ty, required))| NestedField::new(0, &format!("c{i}"), required, ty))
                .collect(),
        );
        renumber(&mut top, &mut 0);
        let Type::Struct(fields) = top else { unreachable!() };
        let schema = avro_schema(&fields, "table").to_string();
        prop_assert_eq!(types::file_fields(&schema).unwrap(), fields);
    }
}

#[test]
fn arrow_schema_matches_decoded_columns() {
    let (data, _) = sample_file(3, false);
    let file = DataFile::open("mem://a.avro", data).unwrap();
    let (_, batch) = file.read(0, u64::MAX, None).unwrap();
    let expected = file.arrow_schema();
    for (field, column) in expected.fields().iter().zip(batch.columns()) {
        assert!(field.data_type().equals_datatype(column.data_type()));
    }
}

/// A top-level optional field nesting `depth` types of `kind` (`struct`,
/// `list`, `map`: int keys, as an array of records in Avro, or `smap`:
/// string keys), everything optional: the deepest Avro shapes Java writes.
fn nested_fields(kind: &str, depth: usize) -> Vec<NestedField> {
    let mut ty = Type::Primitive(P::Long);
    let mut id = 1000;
    let mut next = || {
        id += 1;
        id
    };
    for level in 0..depth {
        ty = match kind {
            "struct" => Type::Struct(vec![NestedField::optional(
                next(),
                &format!("f{level}"),
                ty,
            )]),
            "list" => Type::List {
                element_id: next(),
                element_required: false,
                element: Box::new(ty),
            },
            _ => Type::Map {
                key_id: next(),
                key: Box::new(Type::Primitive(if kind == "map" {
                    P::Int
                } else {
                    P::String
                })),
                value_id: next(),
                value_required: false,
                value: Box::new(ty),
            },
        };
    }
    vec![NestedField::optional(1, "s", ty)]
}

#[test]
fn files_nested_as_deep_as_a_schema_may_nest_open() {
    use crate::types::MAX_NESTING_DEPTH;
    for kind in ["struct", "list", "map", "smap"] {
        let fields = nested_fields(kind, MAX_NESTING_DEPTH);
        let schema = avro_schema(&fields, "table").to_string();
        let writer = Writer::new(&schema, &[], Codec::Null);
        let file = DataFile::open("mem://deep.avro", writer.finish().unwrap())
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(file.fields(), fields.as_slice(), "{kind}");
    }
}
