//! Reading Puffin files: the footer (Puffin spec, "Footer structure") and
//! blobs by offset and length. Every inconsistency (a missing magic, a
//! payload size that does not fit the file, an unknown flag, a blob outside
//! the blob area) is [`Error::InvalidData`] naming the file.

use super::{
    BlobMetadata, Codec, FileMetadata, FLAG_FOOTER_COMPRESSED, FOOTER_STRUCT_LENGTH, MAGIC,
};
use crate::error::{Error, Result};
use crate::io::FileIO;

/// The smallest Puffin file: the leading magic and a footer with an empty
/// payload (magic, payload size, flags, magic).
const MIN_FILE_LENGTH: u64 = (MAGIC.len() + MAGIC.len() + FOOTER_STRUCT_LENGTH) as u64;

fn invalid(location: &str, detail: impl std::fmt::Display) -> Error {
    Error::InvalidData(format!("Puffin file {location}: {detail}"))
}

fn check_magic(bytes: &[u8], location: &str, where_: &str) -> Result<()> {
    if bytes != MAGIC {
        return Err(invalid(
            location,
            format_args!("expected magic {MAGIC:02X?} {where_}, found {bytes:02X?}"),
        ));
    }
    Ok(())
}

/// The footer of a Puffin file of `file_size` bytes, reading ranges through
/// `read(offset, length)`.
fn footer(
    file_size: u64,
    location: &str,
    read: &mut dyn FnMut(u64, u64) -> Result<Vec<u8>>,
) -> Result<FileMetadata> {
    if file_size < MIN_FILE_LENGTH {
        return Err(invalid(
            location,
            format_args!("{file_size} bytes is too short (truncated?): a Puffin file has at least {MIN_FILE_LENGTH}"),
        ));
    }
    let tail = read(
        file_size - FOOTER_STRUCT_LENGTH as u64,
        FOOTER_STRUCT_LENGTH as u64,
    )?;
    check_magic(
        &tail[8..12],
        location,
        "at the end of the file (truncated?)",
    )?;
    let payload_size = i32::from_le_bytes(tail[0..4].try_into().expect("4 bytes"));
    let flags = &tail[4..8];
    let payload_size = u64::try_from(payload_size).map_err(|_| {
        invalid(
            location,
            format_args!("negative footer payload size {payload_size}"),
        )
    })?;
    let footer_size = MAGIC.len() as u64 + payload_size + FOOTER_STRUCT_LENGTH as u64;
    // The footer follows at least the leading magic.
    if footer_size > file_size - MAGIC.len() as u64 {
        return Err(invalid(
            location,
            format_args!(
                "footer payload size {payload_size} does not fit in a {file_size}-byte file"
            ),
        ));
    }
    if flags[0] & !FLAG_FOOTER_COMPRESSED != 0 || flags[1..].iter().any(|b| *b != 0) {
        return Err(invalid(
            location,
            format_args!("unknown footer flags {flags:02X?}"),
        ));
    }
    let footer_start = file_size - footer_size;
    // One read when the footer follows the leading magic directly (no blobs).
    let (head, footer_bytes) = if footer_start == MAGIC.len() as u64 {
        let all = read(0, file_size - FOOTER_STRUCT_LENGTH as u64)?;
        (all[..4].to_vec(), all[4..].to_vec())
    } else {
        (
            read(0, MAGIC.len() as u64)?,
            read(footer_start, footer_size - FOOTER_STRUCT_LENGTH as u64)?,
        )
    };
    check_magic(&head, location, "at the start of the file")?;
    check_magic(
        &footer_bytes[..4],
        location,
        &format!("at the start of the footer (offset {footer_start})"),
    )?;
    let payload = &footer_bytes[4..];
    let codec = if flags[0] & FLAG_FOOTER_COMPRESSED != 0 {
        Codec::Lz4
    } else {
        Codec::None
    };
    let what = format!("Puffin file {location}, footer");
    let json = codec.decompress(payload, &what)?;
    let metadata = FileMetadata::from_json_bytes(&json, &format!("Puffin file {location}"))?;
    for (index, blob) in metadata.blobs.iter().enumerate() {
        let end = blob.offset.checked_add(blob.length);
        if blob.offset < MAGIC.len() as u64 || end.is_none_or(|end| end > footer_start) {
            return Err(invalid(
                location,
                format_args!(
                    "blob {index} ({}) at offset {} with length {} lies outside the blob area \
                     [{}, {footer_start})",
                    blob.blob_type,
                    blob.offset,
                    blob.length,
                    MAGIC.len()
                ),
            ));
        }
        Codec::parse(blob.compression_codec.as_deref()).map_err(|e| {
            invalid(
                location,
                format_args!("blob {index} ({}): {e}", blob.blob_type),
            )
        })?;
    }
    Ok(metadata)
}

/// The footer of a whole Puffin file held in memory.
pub fn parse_footer(file: &[u8], location: &str) -> Result<FileMetadata> {
    footer(file.len() as u64, location, &mut |offset, length| {
        Ok(file[offset as usize..(offset + length) as usize].to_vec())
    })
}

/// The footer of the Puffin file at `location`, reading only its ends.
pub fn read_file_metadata(io: &FileIO, location: &str) -> Result<FileMetadata> {
    let size = io.size(location)?;
    footer(size, location, &mut |offset, length| {
        io.read_range(location, offset, length)
    })
}

/// The uncompressed content of `blob`, read from the file at `location`.
pub fn read_blob(io: &FileIO, location: &str, blob: &BlobMetadata) -> Result<Vec<u8>> {
    let what = format!(
        "Puffin file {location}, blob {} at offset {}",
        blob.blob_type, blob.offset
    );
    let codec = Codec::parse(blob.compression_codec.as_deref())
        .map_err(|e| Error::InvalidData(format!("{what}: {e}")))?;
    let stored = read_range(io, location, blob.offset, blob.length, &what)?;
    codec.decompress(&stored, &what)
}

/// The uncompressed content of `blob` of a whole file held in memory.
pub fn blob_from_bytes(file: &[u8], location: &str, blob: &BlobMetadata) -> Result<Vec<u8>> {
    let what = format!(
        "Puffin file {location}, blob {} at offset {}",
        blob.blob_type, blob.offset
    );
    let codec = Codec::parse(blob.compression_codec.as_deref())
        .map_err(|e| Error::InvalidData(format!("{what}: {e}")))?;
    let range = usize::try_from(blob.offset)
        .ok()
        .zip(usize::try_from(blob.length).ok())
        .and_then(|(start, len)| Some(start..start.checked_add(len)?))
        .filter(|range| range.end <= file.len())
        .ok_or_else(|| {
            Error::InvalidData(format!(
                "{what}: {} bytes do not fit in the {}-byte file",
                blob.length,
                file.len()
            ))
        })?;
    codec.decompress(&file[range], &what)
}

/// `length` bytes at `offset`, a range past the end of the file being
/// [`Error::InvalidData`] about `what` (the manifest pointed outside the file).
pub(super) fn read_range(
    io: &FileIO,
    location: &str,
    offset: u64,
    length: u64,
    what: &str,
) -> Result<Vec<u8>> {
    io.read_range(location, offset, length)
        .map_err(|e| match e {
            Error::InvalidValue(detail) => Error::InvalidData(format!("{what}: {detail}")),
            other => other,
        })
}
