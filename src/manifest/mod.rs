//! Manifests and manifest lists (spec: "Manifests", "Manifest Lists",
//! "Sequence Number Inheritance", Appendix A and E), read into Arrow record
//! batches (one row per entry) and written from them.

pub mod list;
pub mod project;
pub mod reader;
pub mod schema;
pub mod summary;
pub mod writer;

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder};
use arrow_array::{
    ArrayRef, Int32Array, Int64Array, ListArray, RecordBatch, StringArray, StructArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Fields};
use rayon::prelude::*;

pub use list::{read_manifest_list, write_manifest_list, ListOptions};
pub use reader::{read_location, read_manifest, read_manifest_as, Inherit};
pub use writer::{write_manifest, ManifestOptions, ManifestStats};

use crate::error::Result;
use crate::io::FileIO;

/// Reads many manifests through `io` (each `(location, inherit)`): their
/// bytes are fetched together (object-store requests overlap their waits),
/// then decoded on `threads` workers.
pub fn read_manifests(
    io: &FileIO,
    manifests: &[(String, Option<Inherit>)],
    columns: Option<&[String]>,
    threads: usize,
) -> Result<Vec<RecordBatch>> {
    let locations: Vec<String> = manifests.iter().map(|(l, _)| l.clone()).collect();
    let contents = io.read_many(&locations, threads);
    let items: Vec<_> = manifests.iter().zip(contents).collect();
    let read_one = |((location, inherit), data): &(&(String, Option<Inherit>), Result<Vec<u8>>)| {
        let data = data.as_ref().map_err(Clone::clone)?;
        read_manifest(data, location, columns, *inherit)
    };
    if threads <= 1 {
        // On the calling thread: `par_iter` outside a pool would use rayon's
        // global pool, whatever `threads` says.
        return items.iter().map(read_one).collect();
    }
    crate::runtime::run(threads, || {
        items.par_iter().map(read_one).collect::<Result<Vec<_>>>()
    })?
}

/// The manifest-list entry (one row, in the read shape of
/// `schema::manifest_file_fields(None)`) describing a manifest just written.
/// Its sequence numbers are null: the manifest list assigns them.
pub fn manifest_file_row(
    path: &str,
    length: i64,
    spec_id: i32,
    deletes: bool,
    snapshot_id: Option<i64>,
    stats: &ManifestStats,
) -> Result<StructArray> {
    let summary_fields = Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, true),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Binary, true),
        Field::new("upper_bound", DataType::Binary, true),
    ]);
    let mut nulls = BooleanBuilder::new();
    let mut nans = BooleanBuilder::new();
    let mut lowers = BinaryBuilder::new();
    let mut uppers = BinaryBuilder::new();
    for s in &stats.partitions {
        nulls.append_value(s.contains_null);
        nans.append_value(s.contains_nan);
        lowers.append_option(s.lower_bound.as_deref());
        uppers.append_option(s.upper_bound.as_deref());
    }
    let summaries = StructArray::try_new(
        summary_fields.clone(),
        vec![
            Arc::new(nulls.finish()),
            Arc::new(nans.finish()),
            Arc::new(lowers.finish()),
            Arc::new(uppers.finish()),
        ],
        None,
    )
    .map_err(|e| crate::Error::Internal(e.to_string()))?;
    let partitions = ListArray::try_new(
        Arc::new(Field::new("item", DataType::Struct(summary_fields), true)),
        OffsetBuffer::from_lengths([stats.partitions.len()]),
        Arc::new(summaries),
        None,
    )
    .map_err(|e| crate::Error::Internal(e.to_string()))?;
    let i32s = |v: Option<i32>| -> ArrayRef { Arc::new(Int32Array::from(vec![v])) };
    let i64s = |v: Option<i64>| -> ArrayRef { Arc::new(Int64Array::from(vec![v])) };
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("manifest_path", Arc::new(StringArray::from(vec![path]))),
        ("manifest_length", i64s(Some(length))),
        ("partition_spec_id", i32s(Some(spec_id))),
        ("content", i32s(Some(i32::from(deletes)))),
        ("sequence_number", i64s(None)),
        ("min_sequence_number", i64s(stats.min_sequence_number)),
        ("added_snapshot_id", i64s(snapshot_id)),
        ("added_files_count", i32s(Some(stats.added_files))),
        ("existing_files_count", i32s(Some(stats.existing_files))),
        ("deleted_files_count", i32s(Some(stats.deleted_files))),
        ("added_rows_count", i64s(Some(stats.added_rows))),
        ("existing_rows_count", i64s(Some(stats.existing_rows))),
        ("deleted_rows_count", i64s(Some(stats.deleted_rows))),
        ("partitions", Arc::new(partitions)),
        (
            "key_metadata",
            Arc::new(arrow_array::BinaryArray::from(vec![None::<&[u8]>])),
        ),
        ("first_row_id", i64s(None)),
    ];
    let fields: Fields = columns
        .iter()
        .map(|(name, c)| Field::new(*name, c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns.into_iter().map(|(_, c)| c).collect(), None)
        .map_err(|e| crate::Error::Internal(e.to_string()))
}

#[cfg(test)]
mod tests;
