//! Locations: what a string names, and which store serves it.
//!
//! This is the one place in frazil that parses a location. Iceberg stores
//! locations as written by the engine (spec: "File System Operations": a
//! location is a full URI or path, never resolved against another), so the
//! forms below are the ones Java and pyiceberg write:
//!
//! - a plain path (`/warehouse/t/metadata/v1.metadata.json`), used as is;
//! - a `file:` URI (`file:///p`, `file:/p`, `file://localhost/p`), whose path
//!   is taken verbatim, never percent-decoded: Java's HadoopFileIO (Hadoop's
//!   `Path`) and pyiceberg (`urlparse`, no unquote) read it literally, and
//!   Java's partition paths are URL-encoded values (`s=%C3%A9+1`) that name a
//!   directory spelled exactly so (tests/interop/test_file_uri_parity.py);
//!   `file://otherhost/p` names a remote host and is refused rather than read
//!   from the local disk;
//! - `s3://bucket/key`, with `s3a://` and `s3n://` (Hadoop's names) for the
//!   same bucket and key; `gs://bucket/key`;
//! - `abfs://container@account.dfs.core.windows.net/path` and `abfss://`.
//!
//! Object keys are taken verbatim (Java's `S3URI` does not decode them).

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// The kind of object store a location lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreKind {
    S3,
    Gcs,
    Azure,
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreKind::S3 => "s3",
            StoreKind::Gcs => "gs",
            StoreKind::Azure => "abfs",
        })
    }
}

/// Which store client serves a location: the store kind and its bucket
/// (S3, GCS) or container and account (Azure).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StoreId {
    pub kind: StoreKind,
    /// The S3 or GCS bucket, or the Azure container.
    pub bucket: String,
    /// The Azure storage account; None for S3 and GCS.
    pub account: Option<String>,
}

/// An object in (or a prefix of) an object store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectLocation {
    pub store: StoreId,
    /// The key, without a leading `/`; empty for the bucket itself.
    pub key: String,
    /// Everything before the key, as written (`s3a://bucket`,
    /// `abfss://c@acct.dfs.core.windows.net`), so listings answer in the
    /// caller's own form.
    pub root: String,
}

/// What a location string names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A local file. `uri` is true when it was written as a `file:` URI, so
    /// that listings answer with URIs too.
    Local {
        path: PathBuf,
        uri: bool,
    },
    Object(ObjectLocation),
}

/// Schemes frazil reads, for error messages.
const SUPPORTED: &str = "local paths, file:, s3://, s3a://, s3n://, gs://, abfs://, abfss://";

impl Location {
    /// Parses a location (see the module docs for the forms accepted).
    pub fn parse(location: &str) -> Result<Location> {
        if location.is_empty() {
            return Err(Error::InvalidValue("empty location".to_owned()));
        }
        let Some(scheme) = scheme_of(location) else {
            return Ok(Location::Local {
                path: PathBuf::from(location),
                uri: false,
            });
        };
        let rest = &location[scheme.len() + 1..];
        match scheme.to_ascii_lowercase().as_str() {
            "file" => parse_file(location, rest),
            "s3" | "s3a" | "s3n" => parse_bucket(location, scheme, rest, StoreKind::S3),
            "gs" => parse_bucket(location, scheme, rest, StoreKind::Gcs),
            "abfs" | "abfss" => parse_azure(location, scheme, rest),
            _ => Err(Error::InvalidValue(format!(
                "{location}: unsupported scheme {scheme:?} (frazil reads {SUPPORTED})"
            ))),
        }
    }

    /// The location of `key` in the same store and form as `self`
    /// (`key` relative to the store's root for objects, an absolute or
    /// relative path for local files).
    pub fn sibling(&self, key: &str) -> String {
        match self {
            Location::Local { uri: false, .. } => key.to_owned(),
            Location::Local { uri: true, .. } => file_uri(key),
            Location::Object(object) => format!("{}/{key}", object.root),
        }
    }
}

/// The scheme of a URI (RFC 3986: a letter, then letters, digits, `+-.`,
/// then `:`), or None for a plain path. A Windows drive letter (`C:\`) is one
/// letter long and is not taken for a scheme.
fn scheme_of(location: &str) -> Option<&str> {
    let colon = location.find(':')?;
    let scheme = &location[..colon];
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    (valid && scheme.len() > 1).then_some(scheme)
}

fn parse_file(location: &str, rest: &str) -> Result<Location> {
    // file:///p and file://localhost/p have an (empty or local) authority;
    // file:/p has none.
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let slash = authority_and_path
                .find('/')
                .unwrap_or(authority_and_path.len());
            let host = &authority_and_path[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return Err(Error::InvalidValue(format!(
                    "{location}: names the remote host {host:?}; frazil reads only local file \
                     URIs (file:///path or file://localhost/path)"
                )));
            }
            &authority_and_path[slash..]
        }
        None => rest,
    };
    if !path.starts_with('/') {
        return Err(Error::InvalidValue(format!(
            "{location}: a file URI needs an absolute path (file:///path)"
        )));
    }
    // Verbatim, as Java and pyiceberg take it (see the module docs).
    Ok(Location::Local {
        path: PathBuf::from(path),
        uri: true,
    })
}

fn parse_bucket(location: &str, scheme: &str, rest: &str, kind: StoreKind) -> Result<Location> {
    let Some(authority_and_key) = rest.strip_prefix("//") else {
        return Err(Error::InvalidValue(format!(
            "{location}: expected {scheme}://bucket/key"
        )));
    };
    let (bucket, key) = authority_and_key
        .split_once('/')
        .unwrap_or((authority_and_key, ""));
    if bucket.is_empty() {
        return Err(Error::InvalidValue(format!(
            "{location}: no bucket (expected {scheme}://bucket/key)"
        )));
    }
    Ok(Location::Object(ObjectLocation {
        store: StoreId {
            kind,
            bucket: bucket.to_owned(),
            account: None,
        },
        key: key.to_owned(),
        root: format!("{scheme}://{bucket}"),
    }))
}

fn parse_azure(location: &str, scheme: &str, rest: &str) -> Result<Location> {
    let expected = format!("expected {scheme}://container@account.dfs.core.windows.net/path");
    let Some(authority_and_key) = rest.strip_prefix("//") else {
        return Err(Error::InvalidValue(format!("{location}: {expected}")));
    };
    let (authority, key) = authority_and_key
        .split_once('/')
        .unwrap_or((authority_and_key, ""));
    let Some((container, host)) = authority.split_once('@') else {
        return Err(Error::InvalidValue(format!(
            "{location}: no container ({expected})"
        )));
    };
    // The account is the first label of the host (Java's ADLSLocation).
    let account = host.split('.').next().unwrap_or_default();
    if container.is_empty() || account.is_empty() {
        return Err(Error::InvalidValue(format!("{location}: {expected}")));
    }
    Ok(Location::Object(ObjectLocation {
        store: StoreId {
            kind: StoreKind::Azure,
            bucket: container.to_owned(),
            account: Some(account.to_owned()),
        },
        key: key.to_owned(),
        root: format!("{scheme}://{authority}"),
    }))
}

/// The `file://` URI of an absolute local path (the inverse of parsing one):
/// the path verbatim, not percent-encoded, as Java writes it.
pub fn file_uri(path: &str) -> String {
    format!("file://{path}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn local(location: &str) -> PathBuf {
        match Location::parse(location).unwrap() {
            Location::Local { path, .. } => path,
            other => panic!("{location} parsed as {other:?}"),
        }
    }

    fn object(location: &str) -> ObjectLocation {
        match Location::parse(location).unwrap() {
            Location::Object(o) => o,
            other => panic!("{location} parsed as {other:?}"),
        }
    }

    #[test]
    fn file_uri_forms_name_the_same_path() {
        for form in [
            "/tmp/a b/x.avro",
            "file:///tmp/a b/x.avro",
            "file:/tmp/a b/x.avro",
            "file://localhost/tmp/a b/x.avro",
            "FILE://LOCALHOST/tmp/a b/x.avro",
        ] {
            assert_eq!(local(form), PathBuf::from("/tmp/a b/x.avro"), "{form}");
        }
        // A colon later in a path is no scheme.
        assert_eq!(local("rel/x:y"), PathBuf::from("rel/x:y"));
        assert_eq!(local("/tmp/s3://x"), PathBuf::from("/tmp/s3://x"));
    }

    #[test]
    fn file_uri_paths_are_never_percent_decoded() {
        // Java's HadoopFileIO (Hadoop's Path) and pyiceberg (urlparse without
        // unquote) take the path literally, and Java writes a partition
        // directory named `s=%C3%A9+1%2Fx%25` as is
        // (tests/interop/test_file_uri_parity.py).
        for form in [
            "/tmp/s=%C3%A9+1%2Fx%25/a%20b",
            "file:///tmp/s=%C3%A9+1%2Fx%25/a%20b",
            "file:/tmp/s=%C3%A9+1%2Fx%25/a%20b",
            "file://localhost/tmp/s=%C3%A9+1%2Fx%25/a%20b",
        ] {
            assert_eq!(
                local(form),
                PathBuf::from("/tmp/s=%C3%A9+1%2Fx%25/a%20b"),
                "{form}"
            );
        }
        // Not an escape at all: still the literal path, no error.
        assert_eq!(local("file:///tmp/%ff%"), PathBuf::from("/tmp/%ff%"));
        assert_eq!(
            file_uri("/tmp/s=%C3%A9/a b"),
            "file:///tmp/s=%C3%A9/a b".to_owned()
        );
    }

    #[test]
    fn remote_and_malformed_file_uris_are_refused() {
        let err = Location::parse("file://otherhost/tmp/x").unwrap_err();
        assert!(
            matches!(&err, Error::InvalidValue(m) if m.contains("otherhost") && m.contains("file://otherhost/tmp/x")),
            "{err:?}"
        );
        assert!(Location::parse("file:relative").is_err());
        assert!(Location::parse("").is_err());
    }

    #[test]
    fn s3_aliases_name_the_same_object() {
        let a = object("s3://bucket/a/b.avro");
        for alias in ["s3a://bucket/a/b.avro", "s3n://bucket/a/b.avro"] {
            let b = object(alias);
            assert_eq!((&a.store, &a.key), (&b.store, &b.key));
        }
        assert_eq!(a.key, "a/b.avro");
        assert_eq!(object("s3a://bucket/x").root, "s3a://bucket");
        assert_eq!(object("s3://bucket").key, "");
        // Keys are verbatim: no percent-decoding.
        assert_eq!(object("s3://b/a%20b").key, "a%20b");
    }

    #[test]
    fn gcs_and_azure() {
        let g = object("gs://bkt/k/1");
        assert_eq!(
            (g.store.kind, g.store.bucket.as_str(), g.key.as_str()),
            (StoreKind::Gcs, "bkt", "k/1")
        );
        let a = object("abfss://cont@acct.dfs.core.windows.net/dir/f.avro");
        assert_eq!(a.store.kind, StoreKind::Azure);
        assert_eq!(a.store.bucket, "cont");
        assert_eq!(a.store.account.as_deref(), Some("acct"));
        assert_eq!(a.key, "dir/f.avro");
        assert_eq!(a.root, "abfss://cont@acct.dfs.core.windows.net");
        assert!(Location::parse("abfs://acct.dfs.core.windows.net/x").is_err());
    }

    #[test]
    fn unknown_schemes_and_missing_buckets_are_refused() {
        for bad in [
            "hdfs://nn/x",
            "http://h/x",
            "s3:///key",
            "s3:bucket/key",
            "gs://",
        ] {
            let err = Location::parse(bad).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidValue(m) if m.contains(bad)),
                "{bad}: {err:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn file_uris_round_trip(segments in proptest::collection::vec("[^/\u{0}]{1,12}", 1..5)) {
            let path = format!("/{}", segments.join("/"));
            let uri = file_uri(&path);
            prop_assert_eq!(local(&uri), PathBuf::from(&path));
            let listed = Location::parse("file:///x").unwrap().sibling(&path);
            prop_assert_eq!(listed, uri);
        }

        #[test]
        fn object_locations_round_trip(
            scheme in "(s3|s3a|s3n|gs)",
            bucket in "[a-z0-9][a-z0-9.-]{2,20}",
            key in "[^\u{0}]{0,40}",
        ) {
            let location = format!("{scheme}://{bucket}/{key}");
            let parsed = object(&location);
            prop_assert_eq!(&parsed.store.bucket, &bucket);
            prop_assert_eq!(&parsed.key, &key);
            prop_assert_eq!(Location::parse(&location).unwrap().sibling(&key), location);
        }
    }
}
