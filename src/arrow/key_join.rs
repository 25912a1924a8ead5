//! The hash join of an upsert (MERGE): which rows of the target table match
//! which rows of the source (the upsert's input) by key columns.
//!
//! [`KeyIndex`] holds the source rows' keys, each mapped to its row; the
//! target's rows are probed against it ([`KeyIndex::probe`]), and the source
//! rows never matched ([`KeyIndex::unmatched`]) are the inserts. Keys
//! compare with SQL join equality, as Spark's joins do:
//! - a key holding a null (in any of its columns) matches nothing, not even
//!   an equal key with a null; such source rows are never duplicates and
//!   always unmatched;
//! - floats: every NaN equals every other NaN, and -0.0 equals 0.0 (Spark
//!   normalises join keys so);
//! - anything else by value; a dictionary-encoded column by its values.
//!
//! The source's keys must be unique: a second row with a non-null key
//! already present is an [`Error::Validation`] naming the key.
//!
//! How keys are held (as in `equality_deletes`, helpers in `keys`): one key
//! column of at most 64 bits (ids, dates, timestamps) as a machine word, with
//! no encoding; one string or binary column as its values' bytes; any other
//! key arrow-row encoded. The tables are open addressing with prefetching
//! (`table`), since a large index is probed at the speed of memory.
//!
//! [`rows_differ`] compares the rows of two column lists (an upsert's new
//! rows and the target rows they replace), so that unchanged rows need not
//! be rewritten.

use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, FixedSizeBinaryArray, LargeBinaryArray,
    LargeStringArray, StringArray, StringViewArray, UInt32Array,
};
use arrow_buffer::NullBuffer;
use arrow_row::{RowConverter, Rows, SortField};
use arrow_schema::DataType;

use super::keys::{canonical_floats, hash_bytes, is_word, with_words, FloatKeys};
use crate::error::{Error, Result};

mod columns;
mod diff;
mod display;
mod table;

use table::{ByteKeys, ByteSlot, SlotTable, WordSlot};

/// How many rows ahead the loops fetch the slot a row will look up.
const AHEAD: usize = 16;

pub use columns::ChunkedColumns;
pub use diff::{rows_differ, rows_differ_chunked};

/// The source rows' keys of a key join, each mapped to its row, and which
/// source rows probes have matched.
///
/// Probing takes `&self` and may run on several threads at once; the
/// matched rows are recorded in an atomic bitmap.
pub struct KeyIndex {
    source: String,
    types: Vec<DataType>,
    num_rows: usize,
    keys: Keys,
    /// Bit `r` set: source row `r` has matched a probe row.
    matched: Box<[AtomicU64]>,
}

enum Keys {
    /// One key column of at most 64 bits: key word -> source row.
    Words(SlotTable<WordSlot>),
    /// Any other key as bytes ([`Encoding`]): the non-null source keys in
    /// `keys`, indexed by the hash of their bytes.
    Bytes {
        encoding: Encoding,
        keys: ByteKeys,
        index: SlotTable<ByteSlot>,
    },
}

/// How a key that is not a word becomes bytes.
enum Encoding {
    /// One string or binary column (any layout): the values' own bytes.
    Raw,
    /// Any other key: arrow-row encoded (floats made canonical first).
    Rows(RowConverter),
}

impl Encoding {
    fn new(types: &[DataType], source: &str) -> Result<Self> {
        use DataType::*;
        if let [Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView
        | FixedSizeBinary(_)] = types
        {
            return Ok(Encoding::Raw);
        }
        let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
        let converter = RowConverter::new(fields).map_err(|e| {
            Error::TypeMismatch(format!("{source}: key columns cannot be encoded: {e}"))
        })?;
        Ok(Encoding::Rows(converter))
    }

    /// The keys of one chunk (floats already canonical).
    fn keys<'a>(&self, chunk: &'a [ArrayRef], source: &str) -> Result<ChunkKeys<'a>> {
        let converter = match self {
            Encoding::Rows(converter) => converter,
            Encoding::Raw => return Ok(ChunkKeys::raw(&chunk[0])),
        };
        converter
            .convert_columns(chunk)
            .map(ChunkKeys::Rows)
            .map_err(|e| Error::Internal(format!("{source}: encoding key columns: {e}")))
    }
}

/// The key bytes of each row of one chunk.
enum ChunkKeys<'a> {
    Rows(Rows),
    Utf8(&'a StringArray),
    LargeUtf8(&'a LargeStringArray),
    Utf8View(&'a StringViewArray),
    Binary(&'a BinaryArray),
    LargeBinary(&'a LargeBinaryArray),
    BinaryView(&'a BinaryViewArray),
    Fixed(&'a FixedSizeBinaryArray),
}

impl<'a> ChunkKeys<'a> {
    /// A string or binary column's values ([`Encoding::new`] chose it).
    fn raw(column: &'a ArrayRef) -> Self {
        match column.data_type() {
            DataType::Utf8 => ChunkKeys::Utf8(column.as_string()),
            DataType::LargeUtf8 => ChunkKeys::LargeUtf8(column.as_string()),
            DataType::Utf8View => ChunkKeys::Utf8View(column.as_string_view()),
            DataType::Binary => ChunkKeys::Binary(column.as_binary()),
            DataType::LargeBinary => ChunkKeys::LargeBinary(column.as_binary()),
            DataType::BinaryView => ChunkKeys::BinaryView(column.as_binary_view()),
            _ => ChunkKeys::Fixed(column.as_fixed_size_binary()),
        }
    }

    /// The key bytes of row `i` (a null's are never looked at).
    #[inline]
    fn get(&self, i: usize) -> &[u8] {
        match self {
            ChunkKeys::Rows(rows) => rows.row(i).data(),
            ChunkKeys::Utf8(a) => a.value(i).as_bytes(),
            ChunkKeys::LargeUtf8(a) => a.value(i).as_bytes(),
            ChunkKeys::Utf8View(a) => a.value(i).as_bytes(),
            ChunkKeys::Binary(a) => a.value(i),
            ChunkKeys::LargeBinary(a) => a.value(i),
            ChunkKeys::BinaryView(a) => a.value(i),
            ChunkKeys::Fixed(a) => a.value(i),
        }
    }

    /// The bytes of all keys (nulls' included), about.
    fn bytes(&self) -> usize {
        match self {
            ChunkKeys::Rows(rows) => rows.size(),
            ChunkKeys::Utf8(a) => a.value_data().len(),
            ChunkKeys::LargeUtf8(a) => a.value_data().len(),
            ChunkKeys::Utf8View(a) => a.get_buffer_memory_size(),
            ChunkKeys::Binary(a) => a.value_data().len(),
            ChunkKeys::LargeBinary(a) => a.value_data().len(),
            ChunkKeys::BinaryView(a) => a.get_buffer_memory_size(),
            ChunkKeys::Fixed(a) => a.value_data().len(),
        }
    }

    fn hashes(&self, len: usize) -> Vec<u64> {
        (0..len).map(|i| hash_bytes(self.get(i))).collect()
    }
}

/// The pairs of matching (probe row, source row) found so far.
#[derive(Default)]
struct Matches {
    probe_rows: Vec<u32>,
    source_rows: Vec<u32>,
}

impl Matches {
    #[inline]
    fn push(&mut self, probe: u32, source: u32) {
        self.probe_rows.push(probe);
        self.source_rows.push(source);
    }
}

/// The word keys of `columns` (one word column).
fn build_words(columns: &ChunkedColumns, duplicates: &mut Duplicates) -> SlotTable<WordSlot> {
    let valid: usize = columns
        .chunks()
        .map(|(_, chunk)| chunk[0].len() - chunk[0].null_count())
        .sum();
    let mut table = SlotTable::with_capacity(valid);
    for (start, chunk) in columns.chunks() {
        let column = &chunk[0];
        with_words!(column, FloatKeys::Join, |array, word| {
            let raw = array.values();
            let nulls = array.nulls();
            for (i, &v) in raw.iter().enumerate() {
                if let Some(&ahead) = raw.get(i + AHEAD) {
                    table.prefetch(word(ahead));
                }
                if nulls.is_some_and(|n| n.is_null(i)) {
                    continue;
                }
                let (key, row) = (word(v), (start + i) as u32);
                let slot = WordSlot { word: key, row };
                if let Some(earlier) = table.insert(key, slot, |s| s.word == key) {
                    duplicates.record(earlier.row, row);
                }
            }
        });
    }
    table
}

/// The byte keys of `columns`, and their index.
fn build_bytes(
    encoding: &Encoding,
    columns: &ChunkedColumns,
    source: &str,
    duplicates: &mut Duplicates,
) -> Result<(ByteKeys, SlotTable<ByteSlot>)> {
    let mut index = SlotTable::with_capacity(columns.num_rows());
    let mut keys = ByteKeys::default();
    for (start, chunk) in columns.chunks() {
        let chunk: Vec<ArrayRef> = chunk
            .iter()
            .map(|c| canonical_floats(c, FloatKeys::Join))
            .collect();
        let chunk_keys = encoding.keys(&chunk, source)?;
        let hashes = chunk_keys.hashes(chunk[0].len());
        keys.reserve(chunk_keys.bytes() + 4 * hashes.len());
        let valid = valid_keys(&chunk);
        for (i, &hash) in hashes.iter().enumerate() {
            if let Some(&ahead) = hashes.get(i + AHEAD) {
                index.prefetch(ahead);
            }
            if valid.as_ref().is_some_and(|v| v.is_null(i)) {
                continue;
            }
            let (tag, bytes, row) = (hash as u32, chunk_keys.get(i), (start + i) as u32);
            let same = |s: &ByteSlot| s.tag == tag && keys.equals(s.start, bytes);
            if let Some(earlier) = index.find(hash, same) {
                duplicates.record(earlier.row, row);
                continue;
            }
            let start = keys.push(bytes).ok_or_else(|| {
                Error::InvalidValue(format!("{source}: a key of 4 GiB or more (row {row})"))
            })?;
            index.insert(hash, ByteSlot { start, tag, row }, |_| false);
        }
    }
    Ok((keys, index))
}

/// Whether a column of `data_type` can be a key: the primitive types
/// Iceberg tables use (and their Arrow widths and layouts), and
/// dictionary-encoded columns of them.
fn is_key_type(data_type: &DataType) -> bool {
    use DataType::*;
    match data_type {
        Dictionary(_, values) => !matches!(**values, Dictionary(..)) && is_key_type(values),
        Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float32
        | Float64 | Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..) | Date32
        | Date64 | Time32(_) | Time64(_) | Timestamp(..) | Duration(_) | Utf8 | LargeUtf8
        | Utf8View | Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => true,
        _ => false,
    }
}

/// The rows of `columns` whose key has no null (`None`: every row).
fn valid_keys(columns: &[ArrayRef]) -> Option<NullBuffer> {
    columns.iter().fold(None, |valid, column| {
        NullBuffer::union(valid.as_ref(), column.logical_nulls().as_ref())
    })
}

fn row_number(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| {
        Error::InvalidValue(format!(
            "{what} has more than {} rows, the most a key join numbers",
            u32::MAX
        ))
    })
}

/// The first repeated key seen while building, and how many more rows repeat one.
#[derive(Default)]
struct Duplicates {
    first: Option<(u32, u32)>,
    more: usize,
}

impl Duplicates {
    fn record(&mut self, earlier: u32, row: u32) {
        match self.first {
            None => self.first = Some((earlier, row)),
            Some(_) => self.more += 1,
        }
    }

    fn check(&self, columns: &ChunkedColumns, source: &str) -> Result<()> {
        let Some((earlier, row)) = self.first else {
            return Ok(());
        };
        let key = match columns.locate(row as usize) {
            Some((chunk, i)) => display::key(chunk, i, columns.names()),
            None => "?".into(),
        };
        let more = match self.more {
            0 => String::new(),
            1 => "; 1 more row repeats a key".into(),
            n => format!("; {n} more rows repeat a key"),
        };
        Err(Error::Validation(format!(
            "duplicate key in {source}: {key} appears in rows {earlier} and {row}{more} \
             (the keys of the rows to upsert must be unique)"
        )))
    }
}

impl KeyIndex {
    /// The keys of the source rows `columns` (the key columns, in order; one
    /// chunk); `source` names them in errors.
    pub fn build(columns: &[ArrayRef], source: &str) -> Result<Self> {
        Self::build_chunked(&ChunkedColumns::new(columns)?, source)
    }

    /// [`KeyIndex::build`] over chunks of rows: source rows are numbered
    /// across the chunks, in order.
    pub fn build_chunked(columns: &ChunkedColumns, source: &str) -> Result<Self> {
        for (i, ty) in columns.types().iter().enumerate() {
            if !is_key_type(ty) {
                return Err(Error::TypeMismatch(format!(
                    "{source}: key column {i} is {ty}, which cannot be a join key \
                     (keys are primitive: numbers, decimals, dates, times, timestamps, \
                     strings, binary, or dictionaries of them)"
                )));
            }
        }
        let num_rows = columns.num_rows();
        row_number(num_rows, source)?;
        let mut duplicates = Duplicates::default();
        let keys = if columns.num_columns() == 1 && is_word(&columns.types()[0]) {
            Keys::Words(build_words(columns, &mut duplicates))
        } else {
            let encoding = Encoding::new(columns.types(), source)?;
            let (keys, index) = build_bytes(&encoding, columns, source, &mut duplicates)?;
            Keys::Bytes {
                encoding,
                keys,
                index,
            }
        };
        duplicates.check(columns, source)?;
        let matched = (0..num_rows.div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(KeyIndex {
            source: source.to_owned(),
            types: columns.types().to_vec(),
            num_rows,
            keys,
            matched,
        })
    }

    /// The number of source rows (null keys included).
    pub fn len(&self) -> usize {
        self.num_rows
    }

    pub fn is_empty(&self) -> bool {
        self.num_rows == 0
    }

    /// The number of source rows with a non-null key (the keys a probe can match).
    pub fn num_keys(&self) -> usize {
        match &self.keys {
            Keys::Words(table) => table.len(),
            Keys::Bytes { index, .. } => index.len(),
        }
    }

    /// The key columns' types.
    pub fn types(&self) -> &[DataType] {
        &self.types
    }

    /// The probe rows (`columns`: the key columns, in the index's order and
    /// types; one chunk) whose key matches a source row, in probe-row order,
    /// and that source row for each. Records the matched source rows.
    pub fn probe(&self, columns: &[ArrayRef]) -> Result<(UInt32Array, UInt32Array)> {
        self.probe_chunked(&ChunkedColumns::new(columns)?)
    }

    /// [`KeyIndex::probe`] over chunks of rows: probe rows are numbered
    /// across the chunks, in order.
    pub fn probe_chunked(&self, columns: &ChunkedColumns) -> Result<(UInt32Array, UInt32Array)> {
        self.check_types(columns)?;
        row_number(columns.num_rows(), "the probe")?;
        let mut out = Matches::default();
        for (start, chunk) in columns.chunks() {
            match &self.keys {
                Keys::Words(table) => self.probe_words(table, start, &chunk[0], &mut out),
                Keys::Bytes {
                    encoding,
                    keys,
                    index,
                } => {
                    let chunk: Vec<ArrayRef> = chunk
                        .iter()
                        .map(|c| canonical_floats(c, FloatKeys::Join))
                        .collect();
                    let probe = encoding.keys(&chunk, &self.source)?;
                    let hashes = probe.hashes(chunk[0].len());
                    let valid = valid_keys(&chunk);
                    for (i, &hash) in hashes.iter().enumerate() {
                        // Two stages ahead: the slot, then the bytes of the
                        // source key the slot names.
                        if let Some(&ahead) = hashes.get(i + 2 * AHEAD) {
                            index.prefetch(ahead);
                        }
                        if let Some(&ahead) = hashes.get(i + AHEAD) {
                            let tag = ahead as u32;
                            if let Some(slot) = index.find(ahead, |s| s.tag == tag) {
                                keys.prefetch(slot.start);
                            }
                        }
                        if valid.as_ref().is_some_and(|v| v.is_null(i)) {
                            continue;
                        }
                        let (tag, bytes) = (hash as u32, probe.get(i));
                        let same = |s: &ByteSlot| s.tag == tag && keys.equals(s.start, bytes);
                        if let Some(slot) = index.find(hash, same) {
                            out.push((start + i) as u32, slot.row);
                            self.mark(slot.row);
                        }
                    }
                }
            }
        }
        Ok((
            UInt32Array::from(out.probe_rows),
            UInt32Array::from(out.source_rows),
        ))
    }

    fn probe_words(
        &self,
        table: &SlotTable<WordSlot>,
        start: usize,
        column: &ArrayRef,
        out: &mut Matches,
    ) {
        with_words!(column, FloatKeys::Join, |array, word| {
            let raw = array.values();
            let nulls = array.nulls();
            for (i, &v) in raw.iter().enumerate() {
                if let Some(&ahead) = raw.get(i + AHEAD) {
                    table.prefetch(word(ahead));
                }
                if nulls.is_some_and(|n| n.is_null(i)) {
                    continue;
                }
                let key = word(v);
                if let Some(slot) = table.find(key, |s| s.word == key) {
                    out.push((start + i) as u32, slot.row);
                    self.mark(slot.row);
                }
            }
        })
    }

    #[inline]
    fn mark(&self, row: u32) {
        let word = &self.matched[(row >> 6) as usize];
        let bit = 1u64 << (row & 63);
        // Most matches of a popular row find its bit set: read before writing.
        if word.load(Ordering::Relaxed) & bit == 0 {
            word.fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// The source rows no probe has matched so far (those with a null key
    /// among them), in order: the inserts of a MERGE.
    pub fn unmatched(&self) -> UInt32Array {
        let mut rows = Vec::new();
        for (w, word) in self.matched.iter().enumerate() {
            let mut free = !word.load(Ordering::Relaxed);
            let base = w * 64;
            if base + 64 > self.num_rows {
                free &= (1u64 << (self.num_rows - base)) - 1;
            }
            while free != 0 {
                rows.push((base + free.trailing_zeros() as usize) as u32);
                free &= free - 1;
            }
        }
        UInt32Array::from(rows)
    }

    /// The number of distinct source rows probes have matched so far.
    pub fn matched_count(&self) -> usize {
        self.matched
            .iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }

    /// An error unless `columns` has the index's key types, in order.
    fn check_types(&self, columns: &ChunkedColumns) -> Result<()> {
        if columns.num_columns() != self.types.len() {
            return Err(Error::Validation(format!(
                "{} key columns given to probe, the index of {} has {}",
                columns.num_columns(),
                self.source,
                self.types.len()
            )));
        }
        for (i, (probe, source)) in columns.types().iter().zip(&self.types).enumerate() {
            if probe != source {
                return Err(Error::TypeMismatch(format!(
                    "key column {i} is {source} in {} but {probe} in the probe \
                     (cast the probe's keys to the source's types)",
                    self.source
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
