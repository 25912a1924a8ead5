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

use crate::error::{Error, Result};

/// The deleted row positions of one data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PositionDeleteIndex {
    positions: RoaringTreemap,
}

/// Which rows of a string column equal a value, for the string layouts a
/// position delete file's `file_path` may be read as.
fn matching_rows(column: &dyn Array, data_file: &str, source: &str) -> Result<Vec<bool>> {
    let wanted = data_file.as_bytes();
    let null_path = |row: usize| {
        Error::InvalidData(format!(
            "position delete file {source}: file_path is null in row {row} (it is required)"
        ))
    };
    macro_rules! compare {
        ($array:expr) => {{
            let array = $array;
            (0..array.len())
                .map(|row| {
                    if array.is_null(row) {
                        Err(null_path(row))
                    } else {
                        Ok(array.value(row).as_bytes() == wanted)
                    }
                })
                .collect()
        }};
    }
    match column.data_type() {
        DataType::Utf8 => compare!(column.as_string::<i32>()),
        DataType::LargeUtf8 => compare!(column.as_string::<i64>()),
        DataType::Utf8View => compare!(column.as_string_view()),
        DataType::Dictionary(_, value_type)
            if matches!(
                value_type.as_ref(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            ) =>
        {
            // Compare each distinct path once, then map the keys.
            let dictionary = column
                .as_any_dictionary_opt()
                .ok_or_else(|| Error::Internal("dictionary column without a dictionary".into()))?;
            let values = matching_rows(dictionary.values().as_ref(), data_file, source)?;
            let keys = dictionary.normalized_keys();
            (0..column.len())
                .map(|row| {
                    if column.is_null(row) {
                        Err(null_path(row))
                    } else {
                        Ok(values.get(keys[row]).copied().unwrap_or(false))
                    }
                })
                .collect()
        }
        other => Err(Error::TypeMismatch(format!(
            "position delete file {source}: file_path must be a string column, not {other}"
        ))),
    }
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

    /// Adds the rows of a position delete file (its `file_path` and `pos`
    /// columns) that name `data_file`; other files' rows are ignored.
    /// Returns how many rows named `data_file`. A null or negative position
    /// of such a row, or columns of different lengths, are
    /// [`Error::InvalidData`] naming `source`.
    pub fn add_position_deletes(
        &mut self,
        data_file: &str,
        file_paths: &dyn Array,
        positions: &dyn Array,
        source: &str,
    ) -> Result<u64> {
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
        let matching = matching_rows(file_paths, data_file, source)?;
        let mut added = Vec::new();
        for (row, matches) in matching.into_iter().enumerate() {
            if !matches {
                continue;
            }
            if positions.is_null(row) {
                return Err(Error::InvalidData(format!(
                    "position delete file {source}: pos is null in row {row} (it is required)"
                )));
            }
            let pos = positions.value(row);
            let pos = u64::try_from(pos).map_err(|_| {
                Error::InvalidData(format!(
                    "position delete file {source}: negative position {pos} in row {row}"
                ))
            })?;
            added.push(pos);
        }
        let count = added.len() as u64;
        // Spec: rows are sorted by file_path then pos; sorted input appends
        // to the bitmap fastest, anything else still inserts correctly.
        if added.is_sorted() {
            added.dedup();
            let run = RoaringTreemap::from_sorted_iter(added).map_err(|e| {
                Error::Internal(format!("sorted positions refused by the bitmap: {e}"))
            })?;
            self.positions |= run;
        } else {
            self.positions.extend(added);
        }
        Ok(count)
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

#[cfg(test)]
mod tests;
