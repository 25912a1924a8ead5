//! `deletion-vector-v1` blobs (Puffin spec, "Blob types"; table spec,
//! "Deletion Vectors"):
//!
//! ```text
//! length (u32 BE, of magic + vector) | magic D1 D3 39 64 | vector | CRC-32 (BE) of magic + vector
//! ```
//!
//! The vector is the portable 64-bit Roaring format: a u64 LE count of
//! 32-bit bitmaps, then for each, in ascending unsigned key order, its key
//! (the position's high 32 bits, u32 LE) and a 32-bit Roaring bitmap of the
//! low 32 bits in the standard portable layout (run containers included).
//! `roaring::RoaringTreemap::serialize_into` writes exactly this; reading
//! goes bitmap by bitmap here so that the checks Java makes (keys sorted,
//! below 2^31 - 1; no trailing bytes) give clear errors.

use std::io::Cursor;

use roaring::{RoaringBitmap, RoaringTreemap};

use super::reader::read_range;
use crate::error::{Error, Result};
use crate::io::FileIO;

/// The magic that starts a deletion vector's bitmap data.
pub const DELETION_VECTOR_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];

/// The largest position a deletion vector holds: Java's
/// `RoaringPositionBitmap.MAX_POSITION` (key 2^31 - 2, low word 2^31), so
/// that every vector frazil writes is readable by Java.
pub const MAX_POSITION: u64 = 0x7FFF_FFFE_8000_0000;

/// The largest key Java accepts when reading (`Integer.MAX_VALUE - 1`).
const MAX_KEY: u32 = 0x7FFF_FFFE;

const LENGTH_BYTES: usize = 4;
const CRC_BYTES: usize = 4;

fn invalid(what: &str, detail: impl std::fmt::Display) -> Error {
    Error::InvalidData(format!("{what}: {detail}"))
}

/// The positions of a `deletion-vector-v1` blob; `what` names the file and
/// blob in errors (a bad length, magic or CRC, or a corrupt bitmap).
pub fn decode_deletion_vector(blob: &[u8], what: &str) -> Result<RoaringTreemap> {
    let minimum = LENGTH_BYTES + DELETION_VECTOR_MAGIC.len() + CRC_BYTES;
    if blob.len() < minimum {
        return Err(invalid(
            what,
            format_args!(
                "a deletion vector blob has at least {minimum} bytes, this one {}",
                blob.len()
            ),
        ));
    }
    let length = u32::from_be_bytes(blob[..4].try_into().expect("4 bytes")) as usize;
    let expected = blob.len() - LENGTH_BYTES - CRC_BYTES;
    if length != expected {
        return Err(invalid(
            what,
            format_args!(
                "deletion vector length field says {length} bytes of magic and bitmap, \
                 but the blob's {} bytes hold {expected}",
                blob.len()
            ),
        ));
    }
    let data = &blob[LENGTH_BYTES..LENGTH_BYTES + length];
    if data[..4] != DELETION_VECTOR_MAGIC {
        return Err(invalid(
            what,
            format_args!(
                "deletion vector magic is {:02X?}, expected {DELETION_VECTOR_MAGIC:02X?}",
                &data[..4]
            ),
        ));
    }
    let stored_crc = u32::from_be_bytes(blob[LENGTH_BYTES + length..].try_into().expect("4 bytes"));
    let crc = crc32fast::hash(data);
    if crc != stored_crc {
        return Err(invalid(
            what,
            format_args!("deletion vector CRC-32 is {crc:#010x}, the blob says {stored_crc:#010x}"),
        ));
    }
    deserialize_positions(&data[4..], what)
}

/// Positions from the portable 64-bit Roaring format.
pub fn deserialize_positions(vector: &[u8], what: &str) -> Result<RoaringTreemap> {
    let mut cursor = Cursor::new(vector);
    let truncated = |e: std::io::Error| invalid(what, format_args!("corrupt Roaring bitmap: {e}"));
    let mut word = [0u8; 8];
    std::io::Read::read_exact(&mut cursor, &mut word).map_err(truncated)?;
    let count = u64::from_le_bytes(word);
    // Java refuses counts beyond Integer.MAX_VALUE; every bitmap takes at
    // least 12 bytes (key and header), which bounds the loop by the input.
    if count > (vector.len() as u64) / 12 {
        return Err(invalid(
            what,
            format_args!(
                "Roaring bitmap count {count} cannot fit in {} bytes",
                vector.len()
            ),
        ));
    }
    let mut bitmaps = Vec::with_capacity(count as usize);
    let mut last_key: Option<u32> = None;
    for _ in 0..count {
        let mut key = [0u8; 4];
        std::io::Read::read_exact(&mut cursor, &mut key).map_err(truncated)?;
        let key = u32::from_le_bytes(key);
        if key > MAX_KEY {
            return Err(invalid(
                what,
                format_args!("Roaring bitmap key {key} is too large (at most {MAX_KEY})"),
            ));
        }
        if last_key.is_some_and(|last| key <= last) {
            return Err(invalid(
                what,
                format_args!(
                    "Roaring bitmap keys are not in ascending order ({key} after {})",
                    last_key.unwrap_or(0)
                ),
            ));
        }
        last_key = Some(key);
        let bitmap = RoaringBitmap::deserialize_from(&mut cursor).map_err(truncated)?;
        // Java writes an empty bitmap for every key below the largest.
        if !bitmap.is_empty() {
            bitmaps.push((key, bitmap));
        }
    }
    let trailing = vector.len() as u64 - cursor.position();
    if trailing != 0 {
        return Err(invalid(
            what,
            format_args!("{trailing} bytes follow the Roaring bitmap"),
        ));
    }
    Ok(RoaringTreemap::from_bitmaps(bitmaps))
}

/// The portable 64-bit Roaring form of `positions`, run-length encoded
/// where that is smaller (as Java does before writing).
pub fn serialize_positions(positions: &RoaringTreemap) -> Result<Vec<u8>> {
    if let Some(max) = positions.max() {
        if max > MAX_POSITION {
            return Err(Error::InvalidValue(format!(
                "position {max} is too large for a deletion vector (at most {MAX_POSITION})"
            )));
        }
    }
    let mut optimized = positions.clone();
    optimized.optimize();
    let mut out = Vec::with_capacity(optimized.serialized_size());
    optimized
        .serialize_into(&mut out)
        .map_err(|e| Error::Internal(format!("cannot serialise a Roaring bitmap: {e}")))?;
    Ok(out)
}

/// A `deletion-vector-v1` blob of `positions`.
pub fn encode_deletion_vector(positions: &RoaringTreemap) -> Result<Vec<u8>> {
    let vector = serialize_positions(positions)?;
    let length = DELETION_VECTOR_MAGIC.len() + vector.len();
    // Java refuses blobs over 2 GB (the length is a signed int there).
    if LENGTH_BYTES + length + CRC_BYTES > i32::MAX as usize {
        return Err(Error::InvalidValue(format!(
            "a deletion vector of {length} bytes exceeds the 2 GB a blob may have"
        )));
    }
    let mut blob = Vec::with_capacity(LENGTH_BYTES + length + CRC_BYTES);
    blob.extend_from_slice(&(length as u32).to_be_bytes());
    blob.extend_from_slice(&DELETION_VECTOR_MAGIC);
    blob.extend_from_slice(&vector);
    let crc = crc32fast::hash(&blob[LENGTH_BYTES..]);
    blob.extend_from_slice(&crc.to_be_bytes());
    Ok(blob)
}

/// The deletion vector a delete-file entry points at: `content_size_in_bytes`
/// bytes at `content_offset` of the Puffin file at `location`. With
/// `record_count`, the vector must hold exactly that many positions (as Java
/// checks).
pub fn read_deletion_vector(
    io: &FileIO,
    location: &str,
    content_offset: i64,
    content_size_in_bytes: i64,
    record_count: Option<i64>,
) -> Result<RoaringTreemap> {
    let what = format!(
        "deletion vector at offset {content_offset} ({content_size_in_bytes} bytes) of Puffin file {location}"
    );
    let (Ok(offset), Ok(size)) = (
        u64::try_from(content_offset),
        u64::try_from(content_size_in_bytes),
    ) else {
        return Err(invalid(
            &what,
            "negative content_offset or content_size_in_bytes",
        ));
    };
    let blob = read_range(io, location, offset, size, &what)?;
    let positions = decode_deletion_vector(&blob, &what)?;
    if let Some(expected) = record_count {
        if i64::try_from(positions.len()).ok() != Some(expected) {
            return Err(invalid(
                &what,
                format_args!(
                    "holds {} positions but its delete file's record_count is {expected}",
                    positions.len()
                ),
            ));
        }
    }
    Ok(positions)
}
