//! Puffin files (Puffin spec, "Format specification"): blobs of table
//! statistics and, for v3 tables, deletion vectors, described by a JSON
//! footer.
//!
//! ```text
//! Magic Blob1 ... BlobN Footer
//! Footer = Magic FooterPayload FooterPayloadSize(i32 LE) Flags(4 bytes) Magic
//! ```
//!
//! [`reader`] parses the footer and reads blobs (through [`crate::io::FileIO`]
//! or from bytes in memory), [`writer`] builds a file in memory, and
//! [`deletion_vector`] encodes and decodes `deletion-vector-v1` blobs.

pub mod deletion_vector;
pub mod reader;
pub mod writer;

use std::collections::BTreeMap;
use std::io::{Read, Write};

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

pub use deletion_vector::{
    decode_deletion_vector, encode_deletion_vector, read_deletion_vector, DELETION_VECTOR_MAGIC,
};
pub use reader::{parse_footer, read_blob, read_file_metadata};
pub use writer::{write_deletion_vectors, PuffinWriter, WrittenDeletionVector};

/// The four bytes at both ends of a Puffin file and of its footer: "PFA1".
pub const MAGIC: [u8; 4] = [0x50, 0x46, 0x41, 0x31];

/// The fixed tail of the footer: payload size, flags and magic.
pub const FOOTER_STRUCT_LENGTH: usize = 12;

/// Flags byte 0, bit 0: the footer payload is LZ4-compressed.
pub const FLAG_FOOTER_COMPRESSED: u8 = 0x01;

/// The blob type of a deletion vector (Puffin spec, "Blob types").
pub const DELETION_VECTOR_BLOB_TYPE: &str = "deletion-vector-v1";

/// How a blob or the footer payload is compressed (Puffin spec,
/// "Compression codecs"): a single LZ4 or Zstandard frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Lz4,
    Zstd,
}

impl Codec {
    /// The codec of a blob's `compression-codec` (absent: uncompressed).
    pub fn parse(name: Option<&str>) -> Result<Codec> {
        match name {
            None => Ok(Codec::None),
            Some("lz4") => Ok(Codec::Lz4),
            Some("zstd") => Ok(Codec::Zstd),
            Some(other) => Err(Error::InvalidData(format!(
                "unknown Puffin compression codec {other:?} (known: lz4, zstd)"
            ))),
        }
    }

    /// The name written in blob metadata; `None` for uncompressed blobs.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Codec::None => None,
            Codec::Lz4 => Some("lz4"),
            Codec::Zstd => Some("zstd"),
        }
    }

    pub fn compress(self, data: &[u8]) -> Result<Vec<u8>> {
        match self {
            Codec::None => Ok(data.to_vec()),
            Codec::Lz4 => {
                // The spec asks for a single frame with the content size present.
                let info = lz4_flex::frame::FrameInfo::new().content_size(Some(data.len() as u64));
                let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
                encoder
                    .write_all(data)
                    .map_err(|e| Error::Internal(format!("LZ4 compression failed: {e}")))?;
                encoder
                    .finish()
                    .map_err(|e| Error::Internal(format!("LZ4 compression failed: {e}")))
            }
            Codec::Zstd => zstd::bulk::compress(data, 3)
                .map_err(|e| Error::Internal(format!("Zstandard compression failed: {e}"))),
        }
    }

    /// Decompresses `data`; a corrupt frame is [`Error::InvalidData`] with
    /// `what` (the file and blob) in the message.
    pub fn decompress(self, data: &[u8], what: &str) -> Result<Vec<u8>> {
        let corrupt =
            |e: std::io::Error| Error::InvalidData(format!("{what}: corrupt {self:?} data: {e}"));
        match self {
            Codec::None => Ok(data.to_vec()),
            Codec::Lz4 => {
                let mut out = Vec::new();
                lz4_flex::frame::FrameDecoder::new(data)
                    .read_to_end(&mut out)
                    .map_err(corrupt)?;
                Ok(out)
            }
            Codec::Zstd => zstd::stream::decode_all(data).map_err(corrupt),
        }
    }
}

/// One blob's entry in the footer (Puffin spec, "BlobMetadata").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMetadata {
    pub blob_type: String,
    pub fields: Vec<i32>,
    pub snapshot_id: i64,
    pub sequence_number: i64,
    /// From the start of the file.
    pub offset: u64,
    /// As stored (after compression).
    pub length: u64,
    pub compression_codec: Option<String>,
    pub properties: BTreeMap<String, String>,
}

/// The footer payload (Puffin spec, "FileMetadata").
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMetadata {
    pub blobs: Vec<BlobMetadata>,
    pub properties: BTreeMap<String, String>,
}

fn string_map(value: Option<&Value>, what: &str) -> Result<BTreeMap<String, String>> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let object = value
        .as_object()
        .ok_or_else(|| Error::InvalidData(format!("{what}: properties must be a JSON object")))?;
    object
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => Ok((k.clone(), s.to_owned())),
            None => Err(Error::InvalidData(format!(
                "{what}: property {k:?} must be a string, not {v}"
            ))),
        })
        .collect()
}

fn map_to_json(map: &BTreeMap<String, String>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect::<Map<String, Value>>(),
    )
}

impl BlobMetadata {
    fn from_json(value: &Value, what: &str) -> Result<BlobMetadata> {
        let bad = |field: &str, expected: &str| {
            Error::InvalidData(format!(
                "{what}: blob field {field:?} must be {expected}, got {}",
                value
                    .get(field)
                    .map_or("nothing".to_owned(), Value::to_string)
            ))
        };
        let long = |field: &str| {
            value
                .get(field)
                .and_then(Value::as_i64)
                .ok_or_else(|| bad(field, "a long"))
        };
        let unsigned = |field: &str| {
            value
                .get(field)
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(field, "a non-negative long"))
        };
        let blob_type = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("type", "a string"))?
            .to_owned();
        let fields = value
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("fields", "a list of ints"))?
            .iter()
            .map(|f| {
                f.as_i64()
                    .and_then(|id| i32::try_from(id).ok())
                    .ok_or_else(|| bad("fields", "a list of ints"))
            })
            .collect::<Result<Vec<i32>>>()?;
        let compression_codec = match value.get("compression-codec") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad("compression-codec", "a string")),
        };
        Ok(BlobMetadata {
            blob_type,
            fields,
            snapshot_id: long("snapshot-id")?,
            sequence_number: long("sequence-number")?,
            offset: unsigned("offset")?,
            length: unsigned("length")?,
            compression_codec,
            properties: string_map(value.get("properties"), what)?,
        })
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), json!(self.blob_type));
        out.insert("fields".into(), json!(self.fields));
        out.insert("snapshot-id".into(), json!(self.snapshot_id));
        out.insert("sequence-number".into(), json!(self.sequence_number));
        out.insert("offset".into(), json!(self.offset));
        out.insert("length".into(), json!(self.length));
        if let Some(codec) = &self.compression_codec {
            out.insert("compression-codec".into(), json!(codec));
        }
        if !self.properties.is_empty() {
            out.insert("properties".into(), map_to_json(&self.properties));
        }
        Value::Object(out)
    }
}

impl FileMetadata {
    /// Parses the footer payload's JSON; `what` names the file in errors.
    pub fn from_json_bytes(payload: &[u8], what: &str) -> Result<FileMetadata> {
        let value: Value = serde_json::from_slice(payload).map_err(|e| {
            Error::InvalidData(format!("{what}: footer payload is not valid JSON: {e}"))
        })?;
        let blobs = value
            .get("blobs")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::InvalidData(format!("{what}: footer has no \"blobs\" list")))?
            .iter()
            .enumerate()
            .map(|(i, blob)| BlobMetadata::from_json(blob, &format!("{what}, blob {i}")))
            .collect::<Result<Vec<_>>>()?;
        Ok(FileMetadata {
            blobs,
            properties: string_map(value.get("properties"), what)?,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert(
            "blobs".into(),
            Value::Array(self.blobs.iter().map(BlobMetadata::to_json).collect()),
        );
        if !self.properties.is_empty() {
            out.insert("properties".into(), map_to_json(&self.properties));
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests;
