//! Puffin files and deletion vectors: round trips, bytes built by hand from
//! the spec (so the layout is checked independently of the `roaring` crate's
//! writer), and every kind of corruption refused with a message naming it.

use std::collections::BTreeMap;

use proptest::prelude::*;
use roaring::RoaringTreemap;

use super::deletion_vector::{deserialize_positions, serialize_positions, MAX_POSITION};
use super::reader::blob_from_bytes;
use super::*;
use crate::io::FileIO;

use crate::io::test_dir::TempDir;

fn io() -> FileIO {
    FileIO::new(Vec::<(String, String)>::new()).unwrap()
}

fn invalid_data(result: Result<impl std::fmt::Debug>) -> String {
    match result {
        Err(Error::InvalidData(message)) => message,
        other => panic!("expected InvalidData, got {other:?}"),
    }
}

fn sample_file(compress_footer: bool) -> (Vec<u8>, FileMetadata) {
    let mut writer = PuffinWriter::new();
    writer.compress_footer(compress_footer);
    writer.set_property("note", "hello");
    writer
        .add_blob(
            "some-blob",
            vec![1, 2],
            7,
            3,
            b"plain bytes",
            Codec::None,
            BTreeMap::from([("k".to_owned(), "v".to_owned())]),
        )
        .unwrap();
    let repeated = b"abcabcabc".repeat(100);
    writer
        .add_blob(
            "lz4-blob",
            vec![],
            -1,
            -1,
            &repeated,
            Codec::Lz4,
            BTreeMap::new(),
        )
        .unwrap();
    writer
        .add_blob(
            "zstd-blob",
            vec![5],
            1,
            1,
            &repeated,
            Codec::Zstd,
            BTreeMap::new(),
        )
        .unwrap();
    writer.finish().unwrap()
}

#[test]
fn file_round_trips_with_plain_and_compressed_footers() {
    for compress in [false, true] {
        let (data, written) = sample_file(compress);
        assert_eq!(&data[..4], &MAGIC);
        assert_eq!(&data[data.len() - 4..], &MAGIC);
        assert_eq!(data[data.len() - 8], u8::from(compress));
        let read = parse_footer(&data, "mem.puffin").unwrap();
        assert_eq!(read, written);
        assert_eq!(read.blobs[0].offset, 4);
        assert_eq!(read.blobs[1].compression_codec.as_deref(), Some("lz4"));
        assert_eq!(read.properties["note"], "hello");
        assert!(read.properties["created-by"].starts_with("frazil "));
        let contents: Vec<Vec<u8>> = read
            .blobs
            .iter()
            .map(|b| blob_from_bytes(&data, "mem.puffin", b).unwrap())
            .collect();
        assert_eq!(contents[0], b"plain bytes");
        assert_eq!(contents[1], b"abcabcabc".repeat(100));
        assert_eq!(contents[2], b"abcabcabc".repeat(100));
        // Compression did something.
        assert!(read.blobs[1].length < 900 && read.blobs[2].length < 900);
    }
}

#[test]
fn footer_json_has_the_spec_field_names() {
    let (data, _) = sample_file(false);
    let size = i32::from_le_bytes(data[data.len() - 12..data.len() - 8].try_into().unwrap());
    let end = data.len() - 12;
    let payload = &data[end - size as usize..end];
    let json: serde_json::Value = serde_json::from_slice(payload).unwrap();
    let blob = &json["blobs"][0];
    assert_eq!(blob["type"], "some-blob");
    assert_eq!(blob["fields"], serde_json::json!([1, 2]));
    assert_eq!(blob["snapshot-id"], 7);
    assert_eq!(blob["sequence-number"], 3);
    assert_eq!(blob["offset"], 4);
    assert_eq!(blob["length"], 11);
    assert!(blob.get("compression-codec").is_none());
    assert_eq!(blob["properties"]["k"], "v");
    assert_eq!(json["blobs"][2]["compression-codec"], "zstd");
}

#[test]
fn empty_file_has_a_footer_only() {
    let (data, metadata) = PuffinWriter::new().finish().unwrap();
    assert!(metadata.blobs.is_empty());
    assert_eq!(parse_footer(&data, "x").unwrap(), metadata);
}

#[test]
fn reads_through_file_io() {
    let dir = TempDir::new("io");
    let location = dir.path("a.puffin");
    let (data, written) = sample_file(true);
    let io = io();
    io.write(&location, &data).unwrap();
    let read = read_file_metadata(&io, &location).unwrap();
    assert_eq!(read, written);
    assert_eq!(
        read_blob(&io, &location, &read.blobs[2]).unwrap(),
        b"abcabcabc".repeat(100)
    );
    // Footer without blobs: one read covers magic and footer.
    let (empty, _) = PuffinWriter::new().finish().unwrap();
    io.write(&location, &empty).unwrap();
    assert!(read_file_metadata(&io, &location).unwrap().blobs.is_empty());
}

/// Replaces the footer payload of `data` by `json` (uncompressed).
fn with_footer(data: &[u8], json: &str) -> Vec<u8> {
    let size = i32::from_le_bytes(data[data.len() - 12..data.len() - 8].try_into().unwrap());
    let footer_start = data.len() - 12 - size as usize - 4;
    let mut out = data[..footer_start].to_vec();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(&(json.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&MAGIC);
    out
}

#[test]
fn corrupt_files_are_refused_naming_the_file() {
    let (data, _) = sample_file(false);
    let check = |bytes: &[u8], expected: &str| {
        let message = invalid_data(parse_footer(bytes, "s3://b/f.puffin"));
        assert!(message.contains("s3://b/f.puffin"), "{message}");
        assert!(message.contains(expected), "{message} lacks {expected:?}");
    };
    let mut bad = data.clone();
    bad[0] = b'X';
    check(&bad, "at the start of the file");
    let mut bad = data.clone();
    let n = bad.len();
    bad[n - 1] = 0;
    check(&bad, "at the end of the file");
    // Truncated anywhere: the tail magic is gone or the payload size is off.
    for cut in [1, 5, 13, data.len() / 2, data.len() - 3] {
        let message = invalid_data(parse_footer(&data[..data.len() - cut], "t.puffin"));
        assert!(message.contains("t.puffin"), "{message}");
    }
    check(&data[..10], "too short");
    let mut bad = data.clone();
    bad[n - 12..n - 8].copy_from_slice(&(n as i32).to_le_bytes());
    check(&bad, "does not fit");
    bad[n - 12..n - 8].copy_from_slice(&(-5i32).to_le_bytes());
    check(&bad, "negative footer payload size");
    let mut bad = data.clone();
    bad[n - 8] = 0x02;
    check(&bad, "unknown footer flags");
    let mut bad = data.clone();
    bad[n - 6] = 0x01;
    check(&bad, "unknown footer flags");
    // A payload size that points inside the JSON: the footer magic is missing.
    let size = i32::from_le_bytes(data[n - 12..n - 8].try_into().unwrap());
    let mut bad = data.clone();
    bad[n - 12..n - 8].copy_from_slice(&(size - 3).to_le_bytes());
    check(&bad, "at the start of the footer");
    // Compressed flag on a plain payload.
    let mut bad = data.clone();
    bad[n - 8] = 0x01;
    check(&bad, "corrupt");
}

#[test]
fn bad_footer_json_is_refused() {
    let (data, _) = sample_file(false);
    let blob = |extra: &str| {
        format!(
            r#"{{"blobs":[{{"type":"t","fields":[1],"snapshot-id":1,"sequence-number":1,{extra}}}]}}"#
        )
    };
    let cases = [
        ("not json", "not valid JSON".to_owned()),
        (r#"{"properties":{}}"#, "no \"blobs\" list".to_owned()),
        (
            &blob(r#""offset":4,"length":1000000"#) as &str,
            "outside the blob area".to_owned(),
        ),
        (
            &blob(r#""offset":0,"length":2"#),
            "outside the blob area".to_owned(),
        ),
        (
            &blob(r#""offset":4,"length":2,"compression-codec":"snappy""#),
            "snappy".to_owned(),
        ),
        (&blob(r#""offset":4"#), "\"length\"".to_owned()),
        (&blob(r#""offset":-4,"length":2"#), "\"offset\"".to_owned()),
        (
            &blob(r#""offset":4,"length":2,"properties":{"a":1}"#),
            "property \"a\"".to_owned(),
        ),
    ];
    for (json, expected) in cases {
        let message = invalid_data(parse_footer(&with_footer(&data, json), "f.puffin"));
        assert!(message.contains("f.puffin"), "{message}");
        assert!(message.contains(&expected), "{message} lacks {expected:?}");
    }
    // A valid replacement still parses.
    let ok = parse_footer(&with_footer(&data, &blob(r#""offset":4,"length":2"#)), "f").unwrap();
    assert_eq!(ok.blobs[0].length, 2);
}

#[test]
fn corrupt_compressed_blob_is_refused() {
    let (mut data, metadata) = sample_file(false);
    let lz4 = &metadata.blobs[1];
    let at = lz4.offset as usize + 2;
    data[at] ^= 0xFF;
    data[at + 1] ^= 0xFF;
    let message = invalid_data(blob_from_bytes(&data, "c.puffin", lz4));
    assert!(
        message.contains("c.puffin") && message.contains("lz4-blob"),
        "{message}"
    );
}

// ---- deletion vectors ----

fn treemap(positions: &[u64]) -> RoaringTreemap {
    positions.iter().copied().collect()
}

/// The portable bytes of {1..=100} (one run container, key 0) and
/// {2^32 + 7} (one array container, key 1), built by hand from the
/// RoaringFormatSpec layout.
fn hand_built_vector() -> Vec<u8> {
    let mut v = Vec::new();
    v.extend_from_slice(&2u64.to_le_bytes()); // two 32-bit bitmaps
    v.extend_from_slice(&0u32.to_le_bytes()); // key 0
    v.extend_from_slice(&[0x3B, 0x30, 0x00, 0x00]); // run cookie, one container
    v.push(0x01); // container 0 is a run container
    v.extend_from_slice(&0u16.to_le_bytes()); // container key
    v.extend_from_slice(&99u16.to_le_bytes()); // cardinality - 1
    v.extend_from_slice(&1u16.to_le_bytes()); // one run
    v.extend_from_slice(&1u16.to_le_bytes()); // starting at 1
    v.extend_from_slice(&99u16.to_le_bytes()); // length - 1
    v.extend_from_slice(&1u32.to_le_bytes()); // key 1
    v.extend_from_slice(&12346u32.to_le_bytes()); // no-run cookie
    v.extend_from_slice(&1u32.to_le_bytes()); // one container
    v.extend_from_slice(&0u16.to_le_bytes());
    v.extend_from_slice(&0u16.to_le_bytes()); // one value
    v.extend_from_slice(&16u32.to_le_bytes()); // its offset
    v.extend_from_slice(&7u16.to_le_bytes());
    v
}

fn blob_of(vector: &[u8]) -> Vec<u8> {
    let mut blob = ((vector.len() + 4) as u32).to_be_bytes().to_vec();
    blob.extend_from_slice(&[0xD1, 0xD3, 0x39, 0x64]);
    blob.extend_from_slice(vector);
    let crc = crc32fast::hash(&blob[4..]);
    blob.extend_from_slice(&crc.to_be_bytes());
    blob
}

#[test]
fn hand_built_vector_with_run_container_decodes() {
    let mut expected: RoaringTreemap = (1..=100).collect();
    expected.insert((1 << 32) + 7);
    let decoded = decode_deletion_vector(&blob_of(&hand_built_vector()), "dv").unwrap();
    assert_eq!(decoded, expected);
    // And the encoder writes exactly these bytes (run-length encoded as Java does).
    assert_eq!(serialize_positions(&expected).unwrap(), hand_built_vector());
    assert_eq!(
        encode_deletion_vector(&expected).unwrap(),
        blob_of(&hand_built_vector())
    );
}

#[test]
fn empty_bitmaps_as_java_writes_them_are_accepted() {
    // Java's dense layout: keys 0 and 1 present, key 0 empty.
    let mut v = 2u64.to_le_bytes().to_vec();
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&12346u32.to_le_bytes());
    v.extend_from_slice(&0u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&12346u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&[0, 0, 0, 0]);
    v.extend_from_slice(&16u32.to_le_bytes());
    v.extend_from_slice(&9u16.to_le_bytes());
    let decoded = decode_deletion_vector(&blob_of(&v), "dv").unwrap();
    assert_eq!(decoded, treemap(&[(1 << 32) + 9]));
    // Normalised: equal to a treemap built by inserting.
    assert_eq!(decoded.iter().collect::<Vec<_>>(), vec![(1u64 << 32) + 9]);
}

#[test]
fn corrupt_deletion_vectors_are_refused() {
    let good = encode_deletion_vector(&treemap(&[1, 5, 1 << 33])).unwrap();
    let check = |blob: &[u8], expected: &str| {
        let message = invalid_data(decode_deletion_vector(blob, "dv in f.puffin"));
        assert!(message.contains("dv in f.puffin"), "{message}");
        assert!(message.contains(expected), "{message} lacks {expected:?}");
    };
    let mut bad = good.clone();
    bad[3] += 1;
    check(&bad, "length field says");
    check(&good[..good.len() - 1], "length field says");
    check(&good[..6], "at least 12 bytes");
    let mut bad = good.clone();
    bad[4] = 0xD2;
    check(&bad, "magic");
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    check(&bad, "CRC-32");
    let mut bad = good.clone();
    bad[12] ^= 0x40; // inside the bitmap: the CRC catches it
    check(&bad, "CRC-32");
    // Bitmaps that pass the CRC but break the format.
    let vector = serialize_positions(&treemap(&[3])).unwrap();
    let mut trailing = vector.clone();
    trailing.extend_from_slice(&[0, 0]);
    check(&blob_of(&trailing), "2 bytes follow");
    check(
        &blob_of(&vector[..vector.len() - 1]),
        "corrupt Roaring bitmap",
    );
    let mut count = vector.clone();
    count[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    check(&blob_of(&count), "cannot fit");
    let mut key = vector.clone();
    key[8..12].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
    check(&blob_of(&key), "too large");
    let mut cookie = vector.clone();
    cookie[12] = 0;
    check(&blob_of(&cookie), "cookie");
    // Keys out of order.
    let two = serialize_positions(&treemap(&[1, (1 << 32) + 1])).unwrap();
    let half = (two.len() - 8) / 2;
    let (first, second) = two[8..].split_at(half);
    let mut swapped = two[..8].to_vec();
    swapped.extend_from_slice(second);
    swapped.extend_from_slice(first);
    check(&blob_of(&swapped), "ascending order");
}

#[test]
fn positions_beyond_java_limit_are_refused_on_write() {
    assert!(encode_deletion_vector(&treemap(&[MAX_POSITION])).is_ok());
    match encode_deletion_vector(&treemap(&[MAX_POSITION + 1])) {
        Err(Error::InvalidValue(message)) => assert!(message.contains("too large"), "{message}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn deletion_vectors_file_round_trips() {
    let vectors = vec![
        ("s3://b/data/a.parquet".to_owned(), treemap(&[0, 2, 4])),
        ("s3://b/data/b.parquet".to_owned(), treemap(&[])),
        (
            "s3://b/data/c.parquet".to_owned(),
            (0..70_000).chain([1 << 40]).collect(),
        ),
    ];
    let (data, written) = write_deletion_vectors(&vectors).unwrap();
    let metadata = parse_footer(&data, "dv.puffin").unwrap();
    assert_eq!(metadata.blobs.len(), 3);
    let dir = TempDir::new("dv");
    let location = dir.path("dv.puffin");
    let io = io();
    io.write(&location, &data).unwrap();
    for ((path, positions), (blob, entry)) in
        vectors.iter().zip(metadata.blobs.iter().zip(&written))
    {
        assert_eq!(blob.blob_type, DELETION_VECTOR_BLOB_TYPE);
        assert_eq!(blob.fields, vec![2147483545]);
        assert_eq!((blob.snapshot_id, blob.sequence_number), (-1, -1));
        assert_eq!(blob.compression_codec, None);
        assert_eq!(blob.properties["referenced-data-file"], *path);
        assert_eq!(blob.properties["cardinality"], positions.len().to_string());
        assert_eq!(
            (entry.content_offset, entry.content_size_in_bytes),
            (blob.offset, blob.length)
        );
        let read = read_deletion_vector(
            &io,
            &location,
            entry.content_offset as i64,
            entry.content_size_in_bytes as i64,
            Some(positions.len() as i64),
        )
        .unwrap();
        assert_eq!(&read, positions);
    }
    let first = &written[0];
    let message = invalid_data(read_deletion_vector(
        &io,
        &location,
        first.content_offset as i64,
        first.content_size_in_bytes as i64,
        Some(4),
    ));
    assert!(
        message.contains(&location) && message.contains("record_count is 4"),
        "{message}"
    );
    let message = invalid_data(read_deletion_vector(
        &io,
        &location,
        data.len() as i64 - 4,
        40,
        None,
    ));
    assert!(
        message.contains(&location) && message.contains("cannot read"),
        "{message}"
    );
    let message = invalid_data(read_deletion_vector(&io, &location, -1, 40, None));
    assert!(message.contains("negative"), "{message}");
    // A size off by one: the length field disagrees.
    let message = invalid_data(read_deletion_vector(
        &io,
        &location,
        first.content_offset as i64,
        first.content_size_in_bytes as i64 + 1,
        None,
    ));
    assert!(message.contains("length field says"), "{message}");
    assert!(matches!(
        write_deletion_vectors(&[vectors[0].clone(), vectors[0].clone()]),
        Err(Error::Validation(_))
    ));
}

fn position_sets() -> impl Strategy<Value = Vec<u64>> {
    let position = prop_oneof![
        4 => 0u64..200_000,
        2 => (0u64..4, 0u64..70_000).prop_map(|(hi, lo)| (hi << 32) | lo),
        1 => 0u64..=MAX_POSITION,
    ];
    let runs = (0u64..(1 << 34), 1u64..5_000).prop_map(|(s, n)| (s..s + n).collect::<Vec<_>>());
    (
        proptest::collection::vec(position, 0..300),
        proptest::collection::vec(runs, 0..3),
    )
        .prop_map(|(mut v, runs)| {
            v.extend(runs.into_iter().flatten());
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn deletion_vector_round_trips(positions in position_sets()) {
        let set = treemap(&positions);
        let blob = encode_deletion_vector(&set).unwrap();
        let decoded = decode_deletion_vector(&blob, "dv").unwrap();
        prop_assert_eq!(&decoded, &set);
        prop_assert_eq!(decoded.len(), set.len());
        // The vector re-reads from its portable bytes alone too.
        let vector = &blob[8..blob.len() - 4];
        prop_assert_eq!(deserialize_positions(vector, "v").unwrap(), set);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_deletion_vector(&bytes, "dv");
        let _ = deserialize_positions(&bytes, "v");
        let _ = parse_footer(&bytes, "p");
        // With valid framing around random content.
        let _ = decode_deletion_vector(&blob_of(&bytes), "dv");
    }
}
