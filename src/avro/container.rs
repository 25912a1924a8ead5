//! Avro object container files (spec: Appendix A; Avro specification "Object
//! Container Files"): the header with its key-value metadata and sync marker,
//! then blocks of `count, size, data, sync`, each compressed with the codec.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::sync::Arc;

use super::binary::{write_bytes, write_long, Cursor};
use super::schema::Schema;
use crate::error::{Error, Result};
use crate::memo::Memo;

const MAGIC: &[u8; 4] = b"Obj\x01";

/// The compression of a container file's blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Null,
    Deflate,
    Snappy,
    Zstandard,
}

impl Codec {
    pub fn parse(name: &str) -> Result<Codec> {
        match name {
            "null" => Ok(Codec::Null),
            "deflate" => Ok(Codec::Deflate),
            "snappy" => Ok(Codec::Snappy),
            "zstandard" => Ok(Codec::Zstandard),
            other => Err(Error::InvalidData(format!("unknown Avro codec {other:?}"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::Null => "null",
            Codec::Deflate => "deflate",
            Codec::Snappy => "snappy",
            Codec::Zstandard => "zstandard",
        }
    }

    /// Decompresses one block into `out` (cleared first).
    pub fn decompress(self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let n = self.decompress_into(data, out)?;
        out.truncate(n);
        Ok(())
    }

    /// Decompresses one block into the front of `buffer`, which is kept and
    /// reused across blocks (deflate does not zero it again); returns the
    /// decompressed length.
    pub fn decompress_into(self, data: &[u8], buffer: &mut Vec<u8>) -> Result<usize> {
        if self == Codec::Deflate {
            return inflate(data, buffer)
                .map_err(|e| Error::InvalidData(format!("corrupt deflate block: {e}")));
        }
        let out = buffer;
        out.clear();
        let corrupt = |e: &dyn std::fmt::Display| {
            Error::InvalidData(format!("corrupt {} block: {e}", self.name()))
        };
        match self {
            Codec::Null => out.extend_from_slice(data),
            Codec::Deflate => unreachable_deflate()?,
            // Raw snappy followed by the big-endian CRC32 of the uncompressed data.
            Codec::Snappy => {
                let split = data
                    .len()
                    .checked_sub(4)
                    .ok_or_else(|| corrupt(&"block shorter than its checksum"))?;
                let (body, crc) = data.split_at(split);
                let len = snap::raw::decompress_len(body).map_err(|e| corrupt(&e))?;
                if len > MAX_BLOCK {
                    return Err(corrupt(&"block decompresses to more than 256 MiB"));
                }
                out.resize(len, 0);
                snap::raw::Decoder::new()
                    .decompress(body, out)
                    .map_err(|e| corrupt(&e))?;
                let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
                if crc32fast::hash(out) != expected {
                    return Err(corrupt(&"checksum mismatch"));
                }
            }
            Codec::Zstandard => {
                zstd::stream::read::Decoder::new(data)
                    .and_then(|d| d.take(MAX_BLOCK as u64 + 1).read_to_end(out))
                    .map_err(|e| corrupt(&e))?;
                if out.len() > MAX_BLOCK {
                    return Err(corrupt(&"block decompresses to more than 256 MiB"));
                }
            }
        }
        Ok(out.len())
    }

    pub fn compress(self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        out.clear();
        let failed = |e: &dyn std::fmt::Display| {
            Error::Internal(format!("{} compression failed: {e}", self.name()))
        };
        match self {
            Codec::Null => out.extend_from_slice(data),
            Codec::Deflate => {
                let mut encoder = flate2::write::DeflateEncoder::new(
                    std::mem::take(out),
                    flate2::Compression::default(),
                );
                encoder.write_all(data).map_err(|e| failed(&e))?;
                *out = encoder.finish().map_err(|e| failed(&e))?;
            }
            Codec::Snappy => {
                *out = snap::raw::Encoder::new()
                    .compress_vec(data)
                    .map_err(|e| failed(&e))?;
                out.extend_from_slice(&crc32fast::hash(data).to_be_bytes());
            }
            Codec::Zstandard => {
                *out = zstd::bulk::compress(data, 3).map_err(|e| failed(&e))?;
            }
        }
        Ok(())
    }
}

/// The largest decompressed block accepted: far above what writers produce
/// (Java flushes at about 64 KB), and a bound on what a corrupt block costs.
const MAX_BLOCK: usize = 256 << 20;

fn unreachable_deflate() -> Result<()> {
    Err(Error::Internal(
        "deflate is handled by decompress_into".to_owned(),
    ))
}

/// Raw deflate (RFC 1951, Avro's "deflate" has no zlib framing) with
/// libdeflate, whole-buffer, about twice as fast as streaming zlib. Avro
/// blocks do not record their decompressed size: `buffer` grows until the
/// block fits, and keeps its size for the next block.
fn inflate(data: &[u8], buffer: &mut Vec<u8>) -> std::result::Result<usize, String> {
    use libdeflater::{DecompressionError, Decompressor};
    thread_local! {
        static INFLATER: std::cell::RefCell<Decompressor> =
            std::cell::RefCell::new(Decompressor::new());
    }
    INFLATER.with(|cell| {
        let inflater = &mut *cell.borrow_mut();
        let guess = data.len().saturating_mul(8).clamp(64 * 1024, MAX_BLOCK);
        if buffer.len() < guess {
            buffer.resize(guess, 0);
        }
        loop {
            match inflater.deflate_decompress(data, buffer) {
                Ok(n) => return Ok(n),
                Err(DecompressionError::InsufficientSpace) if buffer.len() < MAX_BLOCK => {
                    let grown = buffer.len().saturating_mul(4).min(MAX_BLOCK);
                    buffer.resize(grown, 0);
                }
                Err(DecompressionError::InsufficientSpace) => {
                    return Err("block decompresses to more than 256 MiB".to_owned());
                }
                Err(DecompressionError::BadData) => return Err("invalid deflate data".to_owned()),
            }
        }
    })
}

/// A container file's header and the position of its first block.
pub struct Header {
    pub metadata: HashMap<String, Vec<u8>>,
    /// The writer schema, parsed once per distinct `schema_json`.
    pub schema: Arc<Schema>,
    pub schema_json: String,
    pub codec: Codec,
    pub sync: [u8; 16],
    pub body_start: usize,
}

impl Header {
    pub fn meta_str(&self, key: &str) -> Option<&str> {
        self.metadata
            .get(key)
            .and_then(|v| std::str::from_utf8(v).ok())
    }
}

/// Writer schemas parsed so far: the manifests of a table share a few.
static SCHEMAS: Memo<String, Arc<Schema>> = Memo::new(16);

/// Parses the header of a container file held in `data`.
pub fn read_header(data: &[u8]) -> Result<Header> {
    if data.len() < 4 || &data[..4] != MAGIC {
        return Err(Error::InvalidData(
            "not an Avro container file (wrong magic)".to_owned(),
        ));
    }
    let mut cursor = Cursor::new(&data[4..]);
    let mut metadata = HashMap::new();
    loop {
        let (count, _) = cursor.read_block_count()?;
        if count == 0 {
            break;
        }
        for _ in 0..count {
            let key = cursor.read_bytes()?;
            let key = std::str::from_utf8(key)
                .map_err(|_| Error::InvalidData("Avro metadata key is not UTF-8".to_owned()))?;
            let value = cursor.read_bytes()?;
            metadata.insert(key.to_owned(), value.to_vec());
        }
    }
    let sync_bytes = cursor.read_fixed(16)?;
    let mut sync = [0u8; 16];
    sync.copy_from_slice(sync_bytes);
    let schema_json = metadata
        .get("avro.schema")
        .ok_or_else(|| Error::InvalidData("Avro header has no avro.schema".to_owned()))?;
    let schema_json = String::from_utf8(schema_json.clone())
        .map_err(|_| Error::InvalidData("avro.schema is not UTF-8".to_owned()))?;
    let schema = SCHEMAS.get_or_try_insert(schema_json.clone(), |json| {
        Schema::parse(json).map(Arc::new)
    })?;
    let codec = match metadata.get("avro.codec") {
        None => Codec::Null,
        Some(name) => Codec::parse(&String::from_utf8_lossy(name))?,
    };
    Ok(Header {
        body_start: 4 + cursor.position(),
        metadata,
        schema,
        schema_json,
        codec,
        sync,
    })
}

/// Iterates over the blocks of a container file: `(record count, compressed bytes)`.
pub struct Blocks<'a> {
    cursor: Cursor<'a>,
    sync: [u8; 16],
}

impl<'a> Blocks<'a> {
    pub fn new(data: &'a [u8], header: &Header) -> Self {
        Blocks {
            cursor: Cursor::new(data.get(header.body_start..).unwrap_or(&[])),
            sync: header.sync,
        }
    }

    pub fn next_block(&mut self) -> Result<Option<(usize, &'a [u8])>> {
        if self.cursor.is_empty() {
            return Ok(None);
        }
        let count = self.cursor.read_long()?;
        let size = self.cursor.read_long()?;
        let count = usize::try_from(count)
            .map_err(|_| Error::InvalidData(format!("negative Avro block count {count}")))?;
        let size = usize::try_from(size)
            .map_err(|_| Error::InvalidData(format!("negative Avro block size {size}")))?;
        let data = self.cursor.read_fixed(size)?;
        if self.cursor.read_fixed(16)? != self.sync {
            return Err(Error::InvalidData(
                "Avro sync marker mismatch (corrupt block)".to_owned(),
            ));
        }
        Ok(Some((count, data)))
    }
}

/// Writes a container file: header, then blocks of about `block_size` bytes.
pub struct Writer {
    out: Vec<u8>,
    block: Vec<u8>,
    scratch: Vec<u8>,
    count: usize,
    codec: Codec,
    sync: [u8; 16],
    block_size: usize,
}

/// Java's Avro writer flushes blocks at about 64 KB (pitfalls: one block per
/// entry is slow to read).
pub const DEFAULT_BLOCK_SIZE: usize = 64 * 1024;

impl Writer {
    pub fn new(schema_json: &str, metadata: &[(String, String)], codec: Codec) -> Writer {
        let (out, sync) = header(schema_json, metadata, codec);
        Writer {
            out,
            block: Vec::with_capacity(DEFAULT_BLOCK_SIZE + 4096),
            scratch: Vec::new(),
            count: 0,
            codec,
            sync,
            block_size: DEFAULT_BLOCK_SIZE,
        }
    }

    /// The buffer to encode the next record into; call [`Writer::end_record`] after.
    pub fn record_buffer(&mut self) -> &mut Vec<u8> {
        &mut self.block
    }

    pub fn end_record(&mut self) -> Result<()> {
        self.count += 1;
        if self.block.len() >= self.block_size {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        self.codec.compress(&self.block, &mut self.scratch)?;
        write_long(&mut self.out, self.count as i64);
        write_long(&mut self.out, self.scratch.len() as i64);
        self.out.extend_from_slice(&self.scratch);
        self.out.extend_from_slice(&self.sync);
        self.block.clear();
        self.count = 0;
        Ok(())
    }

    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.flush()?;
        Ok(self.out)
    }
}

/// A container file's header (magic, `avro.schema`, `avro.codec`, then
/// `metadata` in order) and its sync marker. The schema JSON is written as
/// given, with every attribute Iceberg readers use.
pub fn header(
    schema_json: &str,
    metadata: &[(String, String)],
    codec: Codec,
) -> (Vec<u8>, [u8; 16]) {
    let mut out = Vec::with_capacity(DEFAULT_BLOCK_SIZE);
    out.extend_from_slice(MAGIC);
    let mut entries: Vec<(&str, &[u8])> = vec![
        ("avro.schema", schema_json.as_bytes()),
        ("avro.codec", codec.name().as_bytes()),
    ];
    for (k, v) in metadata {
        entries.push((k, v.as_bytes()));
    }
    write_long(&mut out, entries.len() as i64);
    for (k, v) in entries {
        write_bytes(&mut out, k.as_bytes());
        write_bytes(&mut out, v);
    }
    write_long(&mut out, 0);
    let sync = sync_marker(schema_json);
    out.extend_from_slice(&sync);
    (out, sync)
}

/// A sync marker that differs between files without needing a random source.
fn sync_marker(seed: &str) -> [u8; 16] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let state = RandomState::new();
    let mut out = [0u8; 16];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = state.build_hasher();
        h.write(seed.as_bytes());
        h.write_usize(i);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        h.write_u128(nanos);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_round_trip_and_detect_corruption() {
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [Codec::Null, Codec::Deflate, Codec::Snappy, Codec::Zstandard] {
            let mut packed = Vec::new();
            codec.compress(&data, &mut packed).unwrap();
            let mut unpacked = Vec::new();
            codec.decompress(&packed, &mut unpacked).unwrap();
            assert_eq!(unpacked, data, "{codec:?}");
            if codec != Codec::Null {
                let mut broken = packed.clone();
                broken.truncate(packed.len() / 2);
                assert!(
                    codec.decompress(&broken, &mut unpacked).is_err(),
                    "{codec:?}"
                );
            }
        }
        assert!(Codec::parse("lz4").is_err());
    }

    #[test]
    fn writes_and_reads_a_container() {
        let schema =
            r#"{"type":"record","name":"r","fields":[{"name":"a","type":"long","field-id":1}]}"#;
        let mut w = Writer::new(schema, &[("k".to_owned(), "v".to_owned())], Codec::Deflate);
        for i in 0..5 {
            write_long(w.record_buffer(), i);
            w.end_record().unwrap();
        }
        let file = w.finish().unwrap();
        let header = read_header(&file).unwrap();
        assert_eq!(header.meta_str("k"), Some("v"));
        assert_eq!(header.codec, Codec::Deflate);
        let mut blocks = Blocks::new(&file, &header);
        let (count, data) = blocks.next_block().unwrap().unwrap();
        assert_eq!(count, 5);
        let mut plain = Vec::new();
        header.codec.decompress(data, &mut plain).unwrap();
        assert_eq!(plain, vec![0, 2, 4, 6, 8]);
        assert!(blocks.next_block().unwrap().is_none());
        assert!(read_header(b"Obj\x02").is_err());
        let mut bad_sync = file.clone();
        let last = bad_sync.len() - 1;
        bad_sync[last] ^= 0xff;
        let mut blocks = Blocks::new(&bad_sync, &header);
        assert!(blocks.next_block().is_err());
    }
}
