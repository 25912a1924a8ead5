//! Local-file behaviour of [`FileIO`]. Object stores are tested from Python
//! against a real S3 API (moto's server, tests/python/io).

use super::*;

use crate::io::test_dir::TempDir;

fn io() -> FileIO {
    FileIO::new(Vec::<(String, String)>::new()).unwrap()
}

#[test]
fn write_read_size_exists_delete() {
    let dir = TempDir::new("basic");
    let io = io();
    let loc = dir.path("a/b/c.bin");
    assert!(!io.exists(&loc).unwrap());
    io.write(&loc, b"hello world").unwrap();
    assert!(io.exists(&loc).unwrap());
    assert_eq!(io.read(&loc).unwrap(), b"hello world");
    assert_eq!(io.size(&loc).unwrap(), 11);
    assert_eq!(io.read_range(&loc, 6, 5).unwrap(), b"world");
    assert_eq!(io.read_range(&loc, 11, 0).unwrap(), b"");
    io.write(&loc, b"replaced").unwrap();
    assert_eq!(io.read(&loc).unwrap(), b"replaced");
    io.delete(&loc).unwrap();
    assert!(!io.exists(&loc).unwrap());
    // Deleting again is not an error.
    io.delete(&loc).unwrap();
    // No temporary files are left behind.
    assert!(io.list(&dir.path("")).unwrap().is_empty());
}

#[test]
fn file_uris_reach_the_same_file() {
    let dir = TempDir::new("uri dir");
    let io = io();
    let plain = dir.path("x y%.txt");
    io.write(&plain, b"1").unwrap();
    // The path goes into the URI verbatim (Java's HadoopFileIO and pyiceberg
    // take a file: URI's path literally; tests/interop/test_file_uri_parity.py).
    let uri = location::file_uri(&plain);
    assert_eq!(uri, format!("file://{plain}"));
    for form in [
        uri.clone(),
        uri.replacen("file://", "file:", 1),
        uri.replacen("file://", "file://localhost", 1),
    ] {
        assert_eq!(io.read(&form).unwrap(), b"1", "{form}");
    }
    let err = io
        .read(&uri.replacen("file://", "file://elsewhere", 1))
        .unwrap_err();
    assert!(matches!(err, Error::InvalidValue(m) if m.contains("elsewhere")));
}

#[test]
fn percent_escapes_in_file_uris_are_literal_names() {
    // A file named with `%C3%A9` is that file, not one named `é` (Java's
    // partition directories are spelled with URL-encoded values).
    let dir = TempDir::new("escapes");
    let io = io();
    let literal = dir.path("s=%C3%A9+1%2Fx%25/a%20b.txt");
    let decoded = dir.path("s=é 1/x%/a b.txt");
    io.write(&location::file_uri(&literal), b"literal").unwrap();
    io.write(&decoded, b"decoded").unwrap();
    assert!(std::path::Path::new(&literal).is_file());
    for form in [format!("file://{literal}"), format!("file:{literal}")] {
        assert_eq!(io.read(&form).unwrap(), b"literal", "{form}");
    }
    let listed = io
        .list(&location::file_uri(&dir.path("s=%C3%A9+1%2Fx%25")))
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].location, format!("file://{literal}"));
}

#[test]
fn missing_files_are_not_found_naming_the_location() {
    let dir = TempDir::new("missing");
    let io = io();
    let loc = dir.path("nope.avro");
    for err in [
        io.read(&loc).unwrap_err(),
        io.size(&loc).unwrap_err(),
        io.read_range(&loc, 0, 1).unwrap_err(),
    ] {
        assert!(
            matches!(&err, Error::NotFound(m) if m.contains(&loc)),
            "{err:?}"
        );
    }
    // A directory is not a file.
    assert!(matches!(io.size(&dir.path("")), Err(Error::NotFound(_))));
    assert!(!io.exists(&dir.path("")).unwrap());
}

#[test]
fn ranges_past_the_end_are_refused() {
    let dir = TempDir::new("range");
    let io = io();
    let loc = dir.path("f");
    io.write(&loc, b"0123").unwrap();
    for (start, len) in [(3, 2), (5, 0), (u64::MAX, 2)] {
        let err = io.read_range(&loc, start, len).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidValue(m) if m.contains(&loc)),
            "{err:?}"
        );
    }
}

#[test]
fn write_if_absent_writes_once() {
    let dir = TempDir::new("absent");
    let io = io();
    let loc = dir.path("v1.metadata.json");
    assert!(io.write_if_absent(&loc, b"first").unwrap());
    assert!(!io.write_if_absent(&loc, b"second").unwrap());
    assert_eq!(io.read(&loc).unwrap(), b"first");
    assert_eq!(io.list(&dir.path("")).unwrap().len(), 1);
}

#[test]
fn concurrent_write_if_absent_has_one_winner() {
    let dir = TempDir::new("race");
    let io = io();
    let loc = dir.path("v2.metadata.json");
    let winners: Vec<bool> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (io, loc) = (&io, &loc);
                s.spawn(move || io.write_if_absent(loc, format!("{i}").as_bytes()).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(winners.iter().filter(|w| **w).count(), 1);
    let winner = winners.iter().position(|w| *w).unwrap();
    assert_eq!(io.read(&loc).unwrap(), format!("{winner}").as_bytes());
}

#[test]
fn list_answers_in_the_prefix_form() {
    let dir = TempDir::new("list");
    let io = io();
    for name in ["a/1", "a/2", "a/b/3", "c"] {
        io.write(&dir.path(name), name.as_bytes()).unwrap();
    }
    let listed: Vec<String> = io
        .list(&dir.path("a"))
        .unwrap()
        .into_iter()
        .map(|f| f.location)
        .collect();
    assert_eq!(
        listed,
        vec![dir.path("a/1"), dir.path("a/2"), dir.path("a/b/3")]
    );
    let uri = location::file_uri(&dir.path("a"));
    let listed = io.list(&uri).unwrap();
    assert_eq!(listed[2].location, location::file_uri(&dir.path("a/b/3")));
    assert_eq!(listed[2].size, 5);
    assert!(io.list(&dir.path("none")).unwrap().is_empty());
}

#[test]
fn list_reports_modification_times() {
    let dir = TempDir::new("mtime");
    let io = io();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    io.write(&dir.path("f"), b"x").unwrap();
    let listed = io.list(&dir.path("")).unwrap();
    let modified = listed[0]
        .last_modified_ms
        .expect("local files have a modification time");
    // File systems may round times down to their own resolution (a second or two at worst).
    assert!((modified - before).abs() < 5_000, "{modified} vs {before}");
}

#[test]
fn read_many_keeps_order_and_errors_apart() {
    let dir = TempDir::new("many");
    let io = io();
    let mut locations = Vec::new();
    for i in 0..20 {
        let loc = dir.path(&format!("m{i}"));
        io.write(&loc, format!("{i}").as_bytes()).unwrap();
        locations.push(loc);
    }
    locations.insert(5, dir.path("missing"));
    locations.insert(7, "hdfs://nn/x".to_owned());
    for threads in [1, 2] {
        let results = io.read_many(&locations, threads);
        assert_eq!(results.len(), 22);
        assert!(matches!(&results[5], Err(Error::NotFound(m)) if m.contains("missing")));
        assert!(matches!(&results[7], Err(Error::InvalidValue(m)) if m.contains("hdfs")));
        assert_eq!(results[0].as_ref().unwrap(), b"0");
        assert_eq!(results[21].as_ref().unwrap(), b"19");
    }
}

#[test]
fn bad_properties_are_refused() {
    let err = FileIO::new([(CONCURRENT_REQUESTS_PROPERTY, "0")]).unwrap_err();
    assert!(matches!(err, Error::InvalidValue(m) if m.contains(CONCURRENT_REQUESTS_PROPERTY)));
    let io = FileIO::new([("s3.path-style-access", "maybe")]).unwrap();
    let err = io.read("s3://bucket/key").unwrap_err();
    assert!(matches!(err, Error::InvalidValue(m) if m.contains("s3.path-style-access")));
}

#[test]
fn object_keys_that_object_store_cannot_address_are_refused() {
    let io = FileIO::new([("s3.region", "us-east-1")]).unwrap();
    // A bucket or a "directory" is no object: it does not exist as one.
    for dir in ["s3://b", "s3://b/", "s3://b/t/", "gs://b/t/"] {
        assert!(!io.exists(dir).unwrap(), "{dir}");
    }
    for bad in [
        "s3://b/a//c",
        "s3://b//a",
        "s3://b/a/../c",
        "s3://b/",
        "s3://b",
    ] {
        let err = io.read(bad).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidValue(m) if m.contains(bad)),
            "{bad}: {err:?}"
        );
    }
}
