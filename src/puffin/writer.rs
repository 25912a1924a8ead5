//! Writing Puffin files in memory (Puffin spec, "File structure"), and a file
//! of deletion vectors laid out as Java's `BaseDVFileWriter` lays them out.

use std::collections::BTreeMap;

use roaring::RoaringTreemap;

use super::deletion_vector::encode_deletion_vector;
use super::{
    BlobMetadata, Codec, FileMetadata, DELETION_VECTOR_BLOB_TYPE, FLAG_FOOTER_COMPRESSED, MAGIC,
};
use crate::error::{Error, Result};

/// The reserved field id of `_pos` (spec: "Reserved Field IDs"), which a
/// deletion vector blob lists as its field.
pub const ROW_POSITION_FIELD_ID: i32 = 2147483545;

/// The blob property naming the data file a deletion vector applies to.
pub const REFERENCED_DATA_FILE_PROPERTY: &str = "referenced-data-file";
/// The blob property holding the number of positions of a deletion vector.
pub const CARDINALITY_PROPERTY: &str = "cardinality";

/// Builds a Puffin file in memory: blobs are appended as they are added,
/// the footer by [`PuffinWriter::finish`].
#[derive(Debug)]
pub struct PuffinWriter {
    data: Vec<u8>,
    blobs: Vec<BlobMetadata>,
    properties: BTreeMap<String, String>,
    compress_footer: bool,
}

impl Default for PuffinWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl PuffinWriter {
    pub fn new() -> PuffinWriter {
        let mut properties = BTreeMap::new();
        properties.insert(
            "created-by".to_owned(),
            concat!("frazil ", env!("CARGO_PKG_VERSION")).to_owned(),
        );
        PuffinWriter {
            data: MAGIC.to_vec(),
            blobs: Vec::new(),
            properties,
            compress_footer: false,
        }
    }

    /// Sets a file-level property (`created-by` is set by default).
    pub fn set_property(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.properties.insert(key.into(), value.into());
    }

    /// LZ4-compresses the footer payload (flag bit 0).
    pub fn compress_footer(&mut self, compress: bool) {
        self.compress_footer = compress;
    }

    /// Appends a blob (compressed with `codec`) and returns its metadata.
    #[allow(clippy::too_many_arguments)]
    pub fn add_blob(
        &mut self,
        blob_type: &str,
        fields: Vec<i32>,
        snapshot_id: i64,
        sequence_number: i64,
        content: &[u8],
        codec: Codec,
        properties: BTreeMap<String, String>,
    ) -> Result<BlobMetadata> {
        let stored = codec.compress(content)?;
        let blob = BlobMetadata {
            blob_type: blob_type.to_owned(),
            fields,
            snapshot_id,
            sequence_number,
            offset: self.data.len() as u64,
            length: stored.len() as u64,
            compression_codec: codec.name().map(str::to_owned),
            properties,
        };
        self.data.extend_from_slice(&stored);
        self.blobs.push(blob.clone());
        Ok(blob)
    }

    /// The whole file and its footer's metadata.
    pub fn finish(self) -> Result<(Vec<u8>, FileMetadata)> {
        let metadata = FileMetadata {
            blobs: self.blobs,
            properties: self.properties,
        };
        let json = serde_json::to_vec(&metadata.to_json())
            .map_err(|e| Error::Internal(format!("cannot serialise a Puffin footer: {e}")))?;
        let (payload, flags) = if self.compress_footer {
            (
                Codec::Lz4.compress(&json)?,
                [FLAG_FOOTER_COMPRESSED, 0, 0, 0],
            )
        } else {
            (json, [0; 4])
        };
        let payload_size = i32::try_from(payload.len()).map_err(|_| {
            Error::InvalidValue(format!(
                "a Puffin footer payload of {} bytes exceeds the 2 GiB the format allows",
                payload.len()
            ))
        })?;
        let mut data = self.data;
        data.extend_from_slice(&MAGIC);
        data.extend_from_slice(&payload);
        data.extend_from_slice(&payload_size.to_le_bytes());
        data.extend_from_slice(&flags);
        data.extend_from_slice(&MAGIC);
        Ok((data, metadata))
    }
}

/// Where [`write_deletion_vectors`] put one vector: the fields of its
/// delete-file entry (spec: `content_offset`, `content_size_in_bytes`,
/// `referenced_data_file`, `record_count`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenDeletionVector {
    pub referenced_data_file: String,
    pub content_offset: u64,
    pub content_size_in_bytes: u64,
    pub cardinality: u64,
}

/// A Puffin file with one `deletion-vector-v1` blob per `(data file,
/// positions)`, in the given order, with the blob metadata the Puffin spec
/// requires (snapshot id and sequence number -1, `referenced-data-file`,
/// `cardinality`, uncompressed).
pub fn write_deletion_vectors(
    vectors: &[(String, RoaringTreemap)],
) -> Result<(Vec<u8>, Vec<WrittenDeletionVector>)> {
    let mut writer = PuffinWriter::new();
    let mut written = Vec::with_capacity(vectors.len());
    let mut seen = std::collections::HashSet::new();
    for (data_file, positions) in vectors {
        // Spec, "Deletion Vectors": at most one vector per data file.
        if !seen.insert(data_file.as_str()) {
            return Err(Error::Validation(format!(
                "two deletion vectors for data file {data_file}: at most one is allowed"
            )));
        }
        let blob = encode_deletion_vector(positions)?;
        let properties = BTreeMap::from([
            (REFERENCED_DATA_FILE_PROPERTY.to_owned(), data_file.clone()),
            (CARDINALITY_PROPERTY.to_owned(), positions.len().to_string()),
        ]);
        let metadata = writer.add_blob(
            DELETION_VECTOR_BLOB_TYPE,
            vec![ROW_POSITION_FIELD_ID],
            -1,
            -1,
            &blob,
            Codec::None,
            properties,
        )?;
        written.push(WrittenDeletionVector {
            referenced_data_file: data_file.clone(),
            content_offset: metadata.offset,
            content_size_in_bytes: metadata.length,
            cardinality: positions.len(),
        });
    }
    let (data, _) = writer.finish()?;
    Ok((data, written))
}
