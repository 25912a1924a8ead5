//! Round trips, inheritance, v1 defaults and every error case of the
//! manifest reader and writers.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, ListBuilder, MapBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, Int64Type};
use arrow_array::{Array, ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray, StructArray};
use arrow_schema::{DataType, Field, Fields};

use super::*;
use crate::avro::schema::Schema as AvroSchema;
use crate::avro::{container, Codec};
use crate::error::Error;

const SCHEMA: &str = r#"{"type":"struct","schema-id":3,"fields":[
    {"id":1,"name":"id","required":true,"type":"long"},
    {"id":2,"name":"category","required":false,"type":"string"},
    {"id":3,"name":"x","required":false,"type":"double"}]}"#;
const SPEC: &str = r#"{"spec-id":2,"fields":[
    {"name":"category","transform":"identity","source-id":2,"field-id":1000},
    {"name":"x","transform":"identity","source-id":3,"field-id":1001}]}"#;

struct Entry {
    status: i32,
    snapshot_id: Option<i64>,
    seq: Option<i64>,
    file_seq: Option<i64>,
    path: &'static str,
    category: Option<&'static str>,
    x: Option<f64>,
    records: i64,
}

fn struct_of(columns: Vec<(&str, ArrayRef)>) -> StructArray {
    let fields: Fields = columns
        .iter()
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns.into_iter().map(|(_, c)| c).collect(), None).unwrap()
}

fn entries(list: &[Entry]) -> StructArray {
    let n = list.len();
    let mut sizes = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
    let mut lowers = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
    let mut splits = ListBuilder::new(Int64Builder::new());
    for (i, _) in list.iter().enumerate() {
        for col in 1..=3 {
            sizes.keys().append_value(col);
            sizes.values().append_value(100 * col as i64 + i as i64);
        }
        sizes.append(true).unwrap();
        lowers.keys().append_value(1);
        lowers.values().append_value((i as i64).to_le_bytes());
        lowers.append(true).unwrap();
        splits.values().append_value(4);
        splits.append(true);
    }
    let partition = struct_of(vec![
        (
            "category",
            Arc::new(StringArray::from(
                list.iter().map(|e| e.category).collect::<Vec<_>>(),
            )),
        ),
        (
            "x",
            Arc::new(arrow_array::Float64Array::from(
                list.iter().map(|e| e.x).collect::<Vec<_>>(),
            )),
        ),
    ]);
    let data_file = struct_of(vec![
        (
            "file_path",
            Arc::new(StringArray::from(
                list.iter().map(|e| e.path).collect::<Vec<_>>(),
            )),
        ),
        (
            "file_format",
            Arc::new(StringArray::from(vec!["PARQUET"; n])),
        ),
        ("partition", Arc::new(partition)),
        (
            "record_count",
            Arc::new(Int64Array::from(
                list.iter().map(|e| e.records).collect::<Vec<_>>(),
            )),
        ),
        (
            "file_size_in_bytes",
            Arc::new(Int64Array::from(vec![1234; n])),
        ),
        ("column_sizes", Arc::new(sizes.finish())),
        ("lower_bounds", Arc::new(lowers.finish())),
        ("split_offsets", Arc::new(splits.finish())),
    ]);
    struct_of(vec![
        (
            "status",
            Arc::new(Int32Array::from(
                list.iter().map(|e| e.status).collect::<Vec<_>>(),
            )),
        ),
        (
            "snapshot_id",
            Arc::new(Int64Array::from(
                list.iter().map(|e| e.snapshot_id).collect::<Vec<_>>(),
            )),
        ),
        (
            "sequence_number",
            Arc::new(Int64Array::from(
                list.iter().map(|e| e.seq).collect::<Vec<_>>(),
            )),
        ),
        (
            "file_sequence_number",
            Arc::new(Int64Array::from(
                list.iter().map(|e| e.file_seq).collect::<Vec<_>>(),
            )),
        ),
        ("data_file", Arc::new(data_file)),
    ])
}

fn sample() -> Vec<Entry> {
    vec![
        Entry {
            status: 1,
            snapshot_id: None,
            seq: None,
            file_seq: None,
            path: "s3://b/a.parquet",
            category: Some("b"),
            x: Some(0.0),
            records: 10,
        },
        Entry {
            status: 1,
            snapshot_id: Some(9),
            seq: Some(2),
            file_seq: None,
            path: "s3://b/b.parquet",
            category: None,
            x: Some(-0.0),
            records: 20,
        },
        Entry {
            status: 0,
            snapshot_id: Some(4),
            seq: Some(3),
            file_seq: Some(3),
            path: "s3://b/c.parquet",
            category: Some("a"),
            x: Some(f64::NAN),
            records: 30,
        },
        Entry {
            status: 2,
            snapshot_id: Some(4),
            seq: Some(1),
            file_seq: Some(1),
            path: "s3://b/d.parquet",
            category: Some("c"),
            x: None,
            records: 40,
        },
    ]
}

fn options(version: u8) -> ManifestOptions {
    ManifestOptions {
        format_version: version,
        schema_json: SCHEMA.to_owned(),
        spec_json: SPEC.to_owned(),
        spec_id: 2,
        deletes: false,
        snapshot_id: Some(77),
        codec: Codec::Deflate,
    }
}

fn longs(batch: &RecordBatch, name: &str) -> Vec<Option<i64>> {
    batch
        .column_by_name(name)
        .unwrap()
        .as_primitive::<Int64Type>()
        .iter()
        .collect()
}

fn data_file(batch: &RecordBatch) -> StructArray {
    batch
        .column_by_name("data_file")
        .unwrap()
        .as_struct()
        .clone()
}

#[test]
fn v2_round_trip_with_inheritance() {
    let (file, stats) = write_manifest(&entries(&sample()), &options(2)).unwrap();
    let header = container::read_header(&file).unwrap();
    for key in [
        "schema",
        "schema-id",
        "partition-spec",
        "partition-spec-id",
        "format-version",
        "content",
    ] {
        assert!(header.meta_str(key).is_some(), "{key}");
    }
    assert_eq!(header.meta_str("schema-id"), Some("3"));
    assert_eq!(header.meta_str("format-version"), Some("2"));

    // Without a manifest-list entry, ADDED entries keep their nulls.
    let raw = read_manifest(&file, "m.avro", None, None).unwrap();
    assert_eq!(
        longs(&raw, "sequence_number"),
        [None, Some(2), Some(3), Some(1)]
    );
    assert_eq!(
        longs(&raw, "snapshot_id"),
        [Some(77), Some(9), Some(4), Some(4)]
    );

    let inherit = Inherit {
        snapshot_id: Some(5),
        sequence_number: 8,
        first_row_id: None,
    };
    let batch = read_manifest(&file, "m.avro", None, Some(inherit)).unwrap();
    assert_eq!(
        longs(&batch, "sequence_number"),
        [Some(8), Some(2), Some(3), Some(1)]
    );
    assert_eq!(
        longs(&batch, "file_sequence_number"),
        [Some(8), Some(8), Some(3), Some(1)]
    );
    let df = data_file(&batch);
    let paths: Vec<_> = df
        .column_by_name("file_path")
        .unwrap()
        .as_string::<i32>()
        .iter()
        .collect();
    assert_eq!(
        paths,
        [
            Some("s3://b/a.parquet"),
            Some("s3://b/b.parquet"),
            Some("s3://b/c.parquet"),
            Some("s3://b/d.parquet")
        ]
    );
    let content: Vec<_> = df
        .column_by_name("content")
        .unwrap()
        .as_primitive::<Int32Type>()
        .iter()
        .collect();
    assert_eq!(content, [Some(0); 4]);
    let sizes = df.column_by_name("column_sizes").unwrap().as_map();
    assert_eq!(sizes.value_length(1), 3);
    assert_eq!(sizes.values().as_primitive::<Int64Type>().value(4), 201);
    let partition = df.column_by_name("partition").unwrap().as_struct();
    assert_eq!(
        partition
            .column(0)
            .as_string::<i32>()
            .iter()
            .collect::<Vec<_>>(),
        [Some("b"), None, Some("a"), Some("c")]
    );

    assert_eq!(
        (stats.added_files, stats.existing_files, stats.deleted_files),
        (2, 1, 1)
    );
    assert_eq!(
        (stats.added_rows, stats.existing_rows, stats.deleted_rows),
        (30, 30, 40)
    );
    assert_eq!(stats.min_sequence_number, Some(2));
    assert!(stats.partitions[0].contains_null);
    assert_eq!(stats.partitions[0].lower_bound.as_deref(), Some(&b"a"[..]));
    assert_eq!(stats.partitions[0].upper_bound.as_deref(), Some(&b"c"[..]));
    assert!(stats.partitions[1].contains_nan && stats.partitions[1].contains_null);
    assert_eq!(
        stats.partitions[1].lower_bound,
        Some((-0.0f64).to_le_bytes().to_vec())
    );
    assert_eq!(
        stats.partitions[1].upper_bound,
        Some(0.0f64.to_le_bytes().to_vec())
    );
}

#[test]
fn v1_files_default_sequence_numbers_and_content_to_zero() {
    let mut list = sample();
    list[0].snapshot_id = Some(1);
    let (file, _) = write_manifest(&entries(&list), &options(1)).unwrap();
    let header = container::read_header(&file).unwrap();
    let AvroSchema::Record(entry) = &*header.schema else {
        panic!()
    };
    let names: Vec<&str> = entry.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["status", "snapshot_id", "data_file"]);
    let AvroSchema::Record(df) = &entry.fields[2].schema else {
        panic!()
    };
    assert!(df.fields.iter().any(|f| f.field_id == Some(105)));
    assert!(!df
        .fields
        .iter()
        .any(|f| f.field_id == Some(134) || f.field_id == Some(135)));
    let batch = read_manifest(&file, "m.avro", None, None).unwrap();
    assert_eq!(longs(&batch, "sequence_number"), [Some(0); 4]);
    assert_eq!(longs(&batch, "file_sequence_number"), [Some(0); 4]);
    let content = data_file(&batch)
        .column_by_name("content")
        .unwrap()
        .as_primitive::<Int32Type>()
        .clone();
    assert_eq!(content.iter().collect::<Vec<_>>(), [Some(0); 4]);
    let mut bad = options(1);
    bad.deletes = true;
    assert!(write_manifest(&entries(&list), &bad).is_err());
}

#[test]
fn projection_decodes_only_what_is_asked() {
    let (file, _) = write_manifest(&entries(&sample()), &options(2)).unwrap();
    let cols = vec![
        "data_file.file_path".to_owned(),
        "sequence_number".to_owned(),
    ];
    let inherit = Inherit {
        snapshot_id: None,
        sequence_number: 8,
        first_row_id: None,
    };
    let batch = read_manifest(&file, "m.avro", Some(&cols), Some(inherit)).unwrap();
    assert_eq!(batch.num_columns(), 2);
    assert_eq!(
        longs(&batch, "sequence_number"),
        [Some(8), Some(2), Some(3), Some(1)]
    );
    assert_eq!(data_file(&batch).num_columns(), 1);
    let none = read_manifest(&file, "m.avro", Some(&[]), None).unwrap();
    assert_eq!((none.num_columns(), none.num_rows()), (0, 4));
    assert!(matches!(
        read_manifest(&file, "m.avro", Some(&["data_file.nope".to_owned()]), None),
        Err(Error::InvalidValue(_))
    ));
}

#[test]
fn v3_first_row_ids_are_assigned_to_live_files() {
    let (file, _) = write_manifest(&entries(&sample()), &options(3)).unwrap();
    let inherit = Inherit {
        snapshot_id: None,
        sequence_number: 8,
        first_row_id: Some(1000),
    };
    let batch = read_manifest(&file, "m.avro", None, Some(inherit)).unwrap();
    let ids: Vec<_> = data_file(&batch)
        .column_by_name("first_row_id")
        .unwrap()
        .as_primitive::<Int64Type>()
        .iter()
        .collect();
    assert_eq!(ids, [Some(1000), Some(1010), Some(1030), None]);
}

#[test]
fn manifest_lists_round_trip_with_v1_defaults() {
    let (file, stats) = write_manifest(&entries(&sample()), &options(2)).unwrap();
    let row = manifest_file_row("m.avro", file.len() as i64, 2, false, Some(77), &stats).unwrap();
    for version in [1u8, 2, 3] {
        let opts = ListOptions {
            format_version: version,
            snapshot_id: 77,
            parent_snapshot_id: None,
            sequence_number: 12,
            first_row_id: Some(500),
            codec: Codec::Deflate,
        };
        let (list, next) = write_manifest_list(&row, &opts).unwrap();
        let batch = read_manifest_list(&list, "list.avro").unwrap();
        let expected_seq = if version == 1 { 0 } else { 12 };
        assert_eq!(longs(&batch, "sequence_number"), [Some(expected_seq)]);
        assert_eq!(
            longs(&batch, "min_sequence_number"),
            [Some(if version == 1 { 0 } else { 2 })]
        );
        assert_eq!(longs(&batch, "added_rows_count"), [Some(30)]);
        assert_eq!(longs(&batch, "added_snapshot_id"), [Some(77)]);
        let header = container::read_header(&list).unwrap();
        assert_eq!(header.meta_str("parent-snapshot-id"), Some("null"));
        assert_eq!(
            header.meta_str("format-version"),
            Some(version.to_string().as_str())
        );
        let partitions = batch.column_by_name("partitions").unwrap().as_list::<i32>();
        assert_eq!(partitions.value_length(0), 2);
        if version == 3 {
            assert_eq!(longs(&batch, "first_row_id"), [Some(500)]);
            assert_eq!(next, Some(560));
        }
    }
}

#[test]
fn corrupt_input_is_invalid_data_naming_the_file() {
    let (file, _) = write_manifest(&entries(&sample()), &options(2)).unwrap();
    let check = |data: &[u8]| match read_manifest(data, "bad.avro", None, None) {
        Err(Error::InvalidData(m)) => assert!(m.starts_with("bad.avro: "), "{m}"),
        other => panic!("expected InvalidData, got {other:?}"),
    };
    check(b"PAR1");
    check(b"");
    // Every cut but the one at the first block boundary (an empty manifest).
    let body_start = container::read_header(&file).unwrap().body_start;
    for cut in (0..file.len()).filter(|&c| c != body_start) {
        check(&file[..cut]);
    }
    // A writer schema without field ids.
    let schema =
        r#"{"type":"record","name":"manifest_entry","fields":[{"name":"status","type":"int"}]}"#;
    check(
        &container::Writer::new(schema, &[], Codec::Null)
            .finish()
            .unwrap(),
    );
    // An unknown codec.
    let mut w = container::Writer::new(schema, &[], Codec::Null)
        .finish()
        .unwrap();
    let at = w.windows(4).position(|s| s == b"null").unwrap();
    w[at..at + 4].copy_from_slice(b"lz4x");
    match read_manifest(&w, "bad.avro", None, None) {
        Err(Error::InvalidData(m)) => assert!(m.contains("codec"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Mutated bytes never panic.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut mutated = file.clone();
        let pos = (state as usize) % mutated.len();
        mutated[pos] = (state >> 32) as u8;
        let _ = read_manifest(&mutated, "bad.avro", None, None);
    }
}

#[test]
fn bounds_of_the_wrong_length_are_refused() {
    let mut e = entries(&sample()[..1]);
    let mut lowers = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
    lowers.keys().append_value(1);
    lowers.values().append_value([1u8, 2]);
    lowers.append(true).unwrap();
    let df = e.column_by_name("data_file").unwrap().as_struct().clone();
    let df = project::replace_child(&df, "lower_bounds", Arc::new(lowers.finish())).unwrap();
    e = project::replace_child(&e, "data_file", Arc::new(df)).unwrap();
    let (file, _) = write_manifest(&e, &options(2)).unwrap();
    match read_manifest(&file, "b.avro", None, None) {
        Err(Error::InvalidData(m)) => assert!(
            m.contains("lower_bounds of field 1 (long) has 2 bytes"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn writers_refuse_bad_entries() {
    let mut list = sample();
    list[0].status = 5;
    assert!(matches!(
        write_manifest(&entries(&list), &options(2)),
        Err(Error::InvalidValue(_))
    ));
    let e = entries(&sample());
    let (_, mut columns, _) = e.clone().into_parts();
    columns[0] = Arc::new(Int64Array::from(vec![1i64; 4]));
    let names = [
        "status",
        "snapshot_id",
        "sequence_number",
        "file_sequence_number",
        "data_file",
    ];
    let wrong_type = struct_of(names.into_iter().zip(columns).collect());
    assert!(write_manifest(&wrong_type, &options(2)).is_err());
    let no_type = struct_of(vec![(
        "status",
        Arc::new(Int32Array::from(vec![1])) as ArrayRef,
    )]);
    assert!(write_manifest(&no_type, &options(2)).is_err());
    assert_eq!(
        arrow_array::new_null_array(&DataType::Int32, 1).null_count(),
        1,
        "sanity of the arrow version in use"
    );
}

#[test]
fn metric_keys_keep_only_those_entries() {
    let (file, _) = write_manifest(&entries(&sample()), &options(2)).unwrap();
    let header = container::read_header(&file).unwrap();
    let partition_type = reader::manifest_partition_type(&header).unwrap();
    let cols = vec![
        "data_file.column_sizes".to_owned(),
        "data_file.lower_bounds".to_owned(),
        "data_file.file_path".to_owned(),
    ];
    let read = |keys: Option<&[i32]>| {
        read_manifest_as(&file, "m.avro", &partition_type, Some(&cols), None, keys).unwrap()
    };
    let map_keys = |batch: &RecordBatch, name: &str| -> Vec<Vec<i32>> {
        let map = data_file(batch)
            .column_by_name(name)
            .unwrap()
            .as_map()
            .clone();
        (0..map.len())
            .map(|i| {
                let entries = map.value(i);
                let keys = entries.column(0).as_primitive::<Int32Type>();
                keys.values().to_vec()
            })
            .collect()
    };
    let all = read(None);
    assert_eq!(map_keys(&all, "column_sizes"), vec![vec![1, 2, 3]; 4]);
    let some = read(Some(&[3, 40]));
    assert_eq!(map_keys(&some, "column_sizes"), vec![vec![3]; 4]);
    // The kept values are the right ones; other columns are untouched.
    let sizes = data_file(&some)
        .column_by_name("column_sizes")
        .unwrap()
        .as_map()
        .clone();
    let values: Vec<i64> = sizes.values().as_primitive::<Int64Type>().values().to_vec();
    assert_eq!(values, [300, 301, 302, 303]);
    assert_eq!(map_keys(&some, "lower_bounds"), vec![Vec::<i32>::new(); 4]);
    assert_eq!(
        data_file(&some)
            .column_by_name("file_path")
            .unwrap()
            .as_string::<i32>()
            .value(3),
        "s3://b/d.parquet"
    );
    let none = read(Some(&[]));
    assert_eq!(map_keys(&none, "column_sizes"), vec![Vec::<i32>::new(); 4]);
}

/// `file` with every copy of its sync marker (its last 16 bytes) zeroed.
fn without_sync(file: &[u8]) -> Vec<u8> {
    let sync = file[file.len() - 16..].to_vec();
    let mut out = file.to_vec();
    let mut i = 0;
    while i + 16 <= out.len() {
        if out[i..i + 16] == sync[..] {
            out[i..i + 16].fill(0);
            i += 16;
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn the_crate_writer_writes_what_the_hand_written_one_does() {
    use crate::avro::ContainerWriter::{Crate, HandWritten};
    use writer::write_manifest_using;
    let rows = entries(&sample());
    for version in [1u8, 2, 3] {
        for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
            let opts = ManifestOptions {
                codec,
                ..options(version)
            };
            let (hand, hand_stats) = write_manifest_using(&rows, &opts, HandWritten).unwrap();
            let (by_crate, crate_stats) = write_manifest_using(&rows, &opts, Crate).unwrap();
            assert_eq!(hand_stats, crate_stats);
            if codec == Codec::Null {
                // Same header, same records, same blocks: only the sync differs.
                assert_eq!(without_sync(&hand), without_sync(&by_crate), "v{version}");
            }
            let read = |file: &[u8]| read_manifest(file, "m.avro", None, None).unwrap();
            assert_eq!(read(&hand), read(&by_crate), "v{version} {codec:?}");
            let header = container::read_header(&by_crate).unwrap();
            assert_eq!(header.codec, codec);
            assert_eq!(header.meta_str("partition-spec-id"), Some("2"));
            assert_eq!(header.meta_str("content"), Some("data"));
        }
        let (_, stats) = write_manifest(&rows, &options(version)).unwrap();
        let row = manifest_file_row("m.avro", 10, 2, false, Some(77), &stats).unwrap();
        let opts = ListOptions {
            format_version: version,
            snapshot_id: 77,
            parent_snapshot_id: Some(5),
            sequence_number: 12,
            first_row_id: Some(500),
            codec: Codec::Null,
        };
        let (hand, _) = list::write_manifest_list_using(&row, &opts, HandWritten).unwrap();
        let (by_crate, _) = list::write_manifest_list_using(&row, &opts, Crate).unwrap();
        assert_eq!(
            without_sync(&hand),
            without_sync(&by_crate),
            "list v{version}"
        );
    }
}

#[test]
fn the_crate_writer_refuses_bad_entries_naming_them() {
    use crate::avro::ContainerWriter::Crate;
    use writer::write_manifest_using;
    let e = entries(&sample());
    let df = e.column_by_name("data_file").unwrap().as_struct().clone();
    // A required column that is null in entry 1.
    let formats = StringArray::from(vec![Some("PARQUET"), None, Some("ORC"), Some("AVRO")]);
    let df = project::replace_child(&df, "file_format", Arc::new(formats)).unwrap();
    let broken = project::replace_child(&e, "data_file", Arc::new(df)).unwrap();
    let err = write_manifest_using(&broken, &options(2), Crate).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m)
            if m.contains("manifest entry 1") && m.contains("file_format")),
        "{err:?}"
    );
}
