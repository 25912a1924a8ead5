//! Position deletes of one data file (spec: "Position Delete Files",
//! "Deletion Vectors"): every deletion vector and position-delete row that
//! names the file, unioned into one bitmap of row positions, and applied to
//! the Arrow batches read from the file.
//!
//! Positions are absolute in the data file: a batch is applied with the
//! position of its first row, so skipping row groups keeps them right.

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use arrow_schema::DataType;
use roaring::RoaringTreemap;
use rustc_hash::FxHashMap;

use crate::error::{Error, Result};

/// The deleted row positions of one data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PositionDeleteIndex {
    positions: RoaringTreemap,
}

impl PositionDeleteIndex {
    pub fn new() -> PositionDeleteIndex {
        PositionDeleteIndex::default()
    }

    pub fn from_positions(positions: RoaringTreemap) -> PositionDeleteIndex {
        PositionDeleteIndex { positions }
    }

    /// Adds the positions of a deletion vector.
    pub fn add_deletion_vector(&mut self, positions: &RoaringTreemap) {
        self.positions |= positions;
    }

    /// Adds what a position delete file deletes in `data_file`; returns how
    /// many positions that is.
    pub fn add_position_file(&mut self, deletes: &PositionDeletesByFile, data_file: &str) -> u64 {
        match deletes.get(data_file) {
            Some(positions) => {
                self.positions |= positions;
                positions.len()
            }
            None => 0,
        }
    }

    /// How many positions are deleted.
    pub fn len(&self) -> u64 {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Whether the row at `position` is deleted (never for a negative one).
    pub fn contains(&self, position: i64) -> bool {
        u64::try_from(position).is_ok_and(|p| self.positions.contains(p))
    }

    pub fn positions(&self) -> &RoaringTreemap {
        &self.positions
    }

    fn end(start: u64, length: usize) -> Result<u64> {
        start.checked_add(length as u64).ok_or_else(|| {
            Error::InvalidValue(format!(
                "rows {start} to {start} + {length} overflow a 64-bit position"
            ))
        })
    }

    /// Sets to `value` the bits of `builder` (all `!value` before) at the
    /// deleted positions in `[start, end)`; walks the bitmap's positions in
    /// that range only, not every row.
    fn mark_deleted(&self, builder: &mut BooleanBufferBuilder, start: u64, end: u64, value: bool) {
        let mut deleted = self.positions.iter();
        deleted.advance_to(start);
        for position in deleted.take_while(|p| *p < end) {
            builder.set_bit((position - start) as usize, value);
        }
    }

    /// For `length` rows from absolute position `start`: true where the row
    /// is kept; `None` when no row of the range is deleted.
    pub fn keep_mask(&self, start: u64, length: usize) -> Result<Option<BooleanBuffer>> {
        let end = Self::end(start, length)?;
        if self.positions.range_cardinality(start..end) == 0 {
            return Ok(None);
        }
        let mut builder = BooleanBufferBuilder::new(length);
        builder.append_n(length, true);
        self.mark_deleted(&mut builder, start, end, false);
        Ok(Some(builder.finish()))
    }

    /// For `length` rows from absolute position `start`: true where the row
    /// is deleted (the `_deleted` metadata column).
    pub fn deleted_mask(&self, start: u64, length: usize) -> Result<BooleanArray> {
        let end = Self::end(start, length)?;
        let mut builder = BooleanBufferBuilder::new(length);
        builder.append_n(length, false);
        self.mark_deleted(&mut builder, start, end, true);
        Ok(BooleanArray::new(builder.finish(), None))
    }

    /// The rows of `batch` not deleted, its first row being at absolute
    /// position `start` of the data file.
    pub fn apply(&self, batch: &RecordBatch, start: u64) -> Result<RecordBatch> {
        match self.keep_mask(start, batch.num_rows())? {
            None => Ok(batch.clone()),
            Some(keep) => {
                let kept = keep.count_set_bits();
                if kept == 0 {
                    return Ok(batch.slice(0, 0));
                }
                arrow_select::filter::filter_record_batch(batch, &BooleanArray::new(keep, None))
                    .map_err(|e| Error::Internal(format!("filtering deleted rows failed: {e}")))
            }
        }
    }
}

/// The positions a position delete file deletes, by the data file each row
/// names: read once and shared by every data file the delete file applies
/// to (a partition-scoped file names many). Built in one pass over the
/// `file_path` and `pos` columns: the spec sorts rows by file_path then pos,
/// so each run of one path goes into its bitmap as a sorted batch.
#[derive(Debug, Default)]
pub struct PositionDeletesByFile {
    files: FxHashMap<String, RoaringTreemap>,
}

impl PositionDeletesByFile {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the rows of `file_paths` and `positions` (a string column in any
    /// Arrow string layout, incl. dictionary-encoded, and an int64 column).
    /// A null path or position, a negative position, or columns of different
    /// lengths are [`Error::InvalidData`] naming `source`.
    pub fn add(
        &mut self,
        file_paths: &dyn Array,
        positions: &dyn Array,
        source: &str,
    ) -> Result<()> {
        if file_paths.len() != positions.len() {
            return Err(Error::InvalidData(format!(
                "position delete file {source}: {} file paths but {} positions",
                file_paths.len(),
                positions.len()
            )));
        }
        let positions = positions.as_primitive_opt::<Int64Type>().ok_or_else(|| {
            Error::TypeMismatch(format!(
                "position delete file {source}: pos must be a long (int64) column, not {}",
                positions.data_type()
            ))
        })?;
        if let Some(row) = first_null(positions) {
            return Err(Error::InvalidData(format!(
                "position delete file {source}: pos is null in row {row} (it is required)"
            )));
        }
        if let Some(row) = first_null(file_paths) {
            return Err(Error::InvalidData(format!(
                "position delete file {source}: file_path is null in row {row} (it is required)"
            )));
        }
        if file_paths.is_empty() {
            // (arrow's normalized_keys refuses a dictionary without values)
            return Ok(());
        }
        let paths = PathColumn::new(file_paths, source)?;
        let values = positions.values();
        let mut start = 0;
        while start < values.len() {
            let mut end = start + 1;
            while end < values.len() && paths.same(start, end) {
                end += 1;
            }
            let run = &values[start..end];
            let bitmap = self.files.entry(paths.path(start).to_owned()).or_default();
            add_run(bitmap, run, start, source)?;
            start = end;
        }
        Ok(())
    }

    /// The positions deleted in `data_file`, if any row names it.
    pub fn get(&self, data_file: &str) -> Option<&RoaringTreemap> {
        self.files.get(data_file)
    }

    /// How many data files the rows name.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

fn first_null(array: &dyn Array) -> Option<usize> {
    let nulls = array.logical_nulls()?;
    (0..array.len()).find(|&row| nulls.is_null(row))
}

/// Positions `run` (rows from `first_row` of the delete file) added to
/// `bitmap`: sorted runs as one batch, the fastest way into a treemap.
fn add_run(bitmap: &mut RoaringTreemap, run: &[i64], first_row: usize, source: &str) -> Result<()> {
    if let Some(offset) = run.iter().position(|&p| p < 0) {
        return Err(Error::InvalidData(format!(
            "position delete file {source}: negative position {} in row {}",
            run[offset],
            first_row + offset
        )));
    }
    if run.is_sorted() {
        let mut sorted = run.iter().map(|&p| p as u64).collect::<Vec<_>>();
        sorted.dedup();
        let batch = RoaringTreemap::from_sorted_iter(sorted)
            .map_err(|e| Error::Internal(format!("sorted positions refused by the bitmap: {e}")))?;
        *bitmap |= batch;
    } else {
        bitmap.extend(run.iter().map(|&p| p as u64));
    }
    Ok(())
}

/// A `file_path` column in one of the string layouts it may be read as.
enum PathColumn<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    /// Dictionary-encoded: rows compared by key, each path read once.
    Dictionary {
        keys: Vec<usize>,
        values: Box<PathColumn<'a>>,
    },
}

impl<'a> PathColumn<'a> {
    fn new(column: &'a dyn Array, source: &str) -> Result<Self> {
        Ok(match column.data_type() {
            DataType::Utf8 => PathColumn::Utf8(column.as_string::<i32>()),
            DataType::LargeUtf8 => PathColumn::LargeUtf8(column.as_string::<i64>()),
            DataType::Utf8View => PathColumn::View(column.as_string_view()),
            DataType::Dictionary(_, _) => {
                let dictionary = column.as_any_dictionary_opt().ok_or_else(|| {
                    Error::Internal("dictionary column without a dictionary".into())
                })?;
                let values = PathColumn::new(dictionary.values().as_ref(), source)?;
                if matches!(values, PathColumn::Dictionary { .. }) {
                    return Err(Error::TypeMismatch(format!(
                        "position delete file {source}: file_path is a nested dictionary"
                    )));
                }
                PathColumn::Dictionary {
                    keys: dictionary.normalized_keys(),
                    values: Box::new(values),
                }
            }
            other => {
                return Err(Error::TypeMismatch(format!(
                    "position delete file {source}: file_path must be a string column, not {other}"
                )))
            }
        })
    }

    fn path(&self, row: usize) -> &'a str {
        match self {
            PathColumn::Utf8(a) => a.value(row),
            PathColumn::LargeUtf8(a) => a.value(row),
            PathColumn::View(a) => a.value(row),
            PathColumn::Dictionary { keys, values } => values.path(keys[row]),
        }
    }

    fn same(&self, a: usize, b: usize) -> bool {
        match self {
            PathColumn::Utf8(x) => x.value(a) == x.value(b),
            PathColumn::LargeUtf8(x) => x.value(a) == x.value(b),
            PathColumn::View(x) => x.value(a) == x.value(b),
            PathColumn::Dictionary { keys, values } => {
                keys[a] == keys[b] || values.same(keys[a], keys[b])
            }
        }
    }
}

#[cfg(test)]
mod tests;
