//! The rows of a table moved to their partition's slice of one output table
//! (a counting sort, see `group.rs`): each column is read once, in order,
//! and each value written at its group's cursor.
//!
//! A gather (`take` by sorted indices) reads each output row from a new
//! place in every column: at 10M rows in 160 partitions that is a fresh cache
//! line per value, and the gather was bound by memory. Here the reads are
//! sequential and the writes go to one stream per group, which stay in
//! cache. Fixed-width values (integers, floats, dates, times, timestamps,
//! decimals, fixed binary), booleans, strings and binary of either offset
//! width, and structs of those are scattered; other types (lists, maps,
//! dictionaries, views) are gathered with arrow-rs `take`.

use std::sync::{Arc, OnceLock};

use arrow_array::cast::AsArray;
use arrow_array::types::{ByteArrayType, GenericBinaryType, GenericStringType};
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, GenericByteArray, OffsetSizeTrait, RecordBatch,
    RecordBatchOptions, StructArray, UInt64Array,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer,
};
use arrow_data::ArrayData;
use arrow_schema::{DataType, FieldRef, SchemaRef};
use arrow_select::concat::concat;
use arrow_select::take::take;
use rayon::prelude::*;

use super::group::Grouping;
use crate::error::{Error, Result};

/// The rows of `batches` (one table in pieces, all of `schema`) reordered
/// by `grouping`, as one batch; columns on `threads` workers.
pub fn scatter(
    batches: &[RecordBatch],
    schema: SchemaRef,
    grouping: &Grouping,
    threads: usize,
) -> Result<RecordBatch> {
    for batch in batches {
        if batch.schema().fields() != schema.fields() {
            return Err(Error::InvalidValue(format!(
                "partitioning: a batch has columns {:?}, the table has {:?}",
                batch.schema().fields(),
                schema.fields()
            )));
        }
    }
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    if rows != grouping.rows() {
        return Err(Error::InvalidValue(format!(
            "partitioning: the table has {rows} rows, the keys {}",
            grouping.rows()
        )));
    }
    let order = OnceLock::new();
    let scatter_column = |(position, field): (usize, &FieldRef)| {
        let pieces: Vec<ArrayRef> = batches.iter().map(|b| b.column(position).clone()).collect();
        Column::new(grouping, &order)
            .scatter(&pieces, field.data_type())
            .map_err(|e| {
                Error::InvalidValue(format!("partitioning: column '{}': {e}", field.name()))
            })
    };
    let fields: Vec<_> = schema.fields().iter().enumerate().collect();
    let columns = crate::runtime::run(threads, || {
        if threads <= 1 {
            fields
                .into_iter()
                .map(scatter_column)
                .collect::<Result<Vec<ArrayRef>>>()
        } else {
            fields
                .into_par_iter()
                .map(scatter_column)
                .collect::<Result<Vec<ArrayRef>>>()
        }
    })??;
    let options = RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(schema, columns, &options)
        .map_err(|e| Error::Internal(format!("partitioning: assembling the columns: {e}")))
}

type ColumnResult<T> = std::result::Result<T, String>;

/// One column's pieces moved by a grouping; `order` (the input row of each
/// output row) is built once, for the columns `take` gathers.
struct Column<'a> {
    grouping: &'a Grouping,
    order: &'a OnceLock<UInt64Array>,
}

/// Walks the input rows in order, giving each its output row.
struct Cursors<'a> {
    group_of_row: &'a [u32],
    cursor: Vec<usize>,
    next_row: usize,
}

impl<'a> Cursors<'a> {
    fn new(grouping: &'a Grouping) -> Self {
        Self {
            group_of_row: &grouping.group_of_row,
            cursor: grouping.starts.clone(),
            next_row: 0,
        }
    }

    /// `visit(row in the piece, output row, group)` for the next `len` rows.
    #[inline(always)]
    fn piece(&mut self, len: usize, mut visit: impl FnMut(usize, usize, usize)) {
        let groups = &self.group_of_row[self.next_row..self.next_row + len];
        for (row, &group) in groups.iter().enumerate() {
            let slot = &mut self.cursor[group as usize];
            visit(row, *slot, group as usize);
            *slot += 1;
        }
        self.next_row += len;
    }
}

impl<'a> Column<'a> {
    fn new(grouping: &'a Grouping, order: &'a OnceLock<UInt64Array>) -> Self {
        Self { grouping, order }
    }

    fn rows(&self) -> usize {
        self.grouping.rows()
    }

    fn scatter(&self, pieces: &[ArrayRef], data_type: &DataType) -> ColumnResult<ArrayRef> {
        for piece in pieces {
            if piece.data_type() != data_type {
                return Err(format!(
                    "a piece is of Arrow type {}, the column of {data_type}",
                    piece.data_type()
                ));
            }
        }
        match data_type {
            DataType::Null => Ok(new_null_array(data_type, self.rows())),
            DataType::Boolean => self.booleans(pieces),
            DataType::Utf8 => self.bytes::<GenericStringType<i32>>(pieces),
            DataType::LargeUtf8 => self.bytes::<GenericStringType<i64>>(pieces),
            DataType::Binary => self.bytes::<GenericBinaryType<i32>>(pieces),
            DataType::LargeBinary => self.bytes::<GenericBinaryType<i64>>(pieces),
            DataType::Struct(fields) => self.structs(pieces, fields),
            DataType::FixedSizeBinary(width) => {
                let width = usize::try_from(*width).map_err(|e| e.to_string())?;
                self.fixed(pieces, data_type, width)
            }
            t => match t.primitive_width() {
                Some(width) => self.fixed(pieces, data_type, width),
                None => self.take(pieces, data_type),
            },
        }
    }

    /// The validity of the output; None when no input value is null.
    fn nulls(&self, pieces: &[ArrayRef]) -> Option<NullBuffer> {
        if pieces.iter().all(|p| p.logical_null_count() == 0) {
            return None;
        }
        let mut bits = MutableBuffer::from_len_zeroed(self.rows().div_ceil(8));
        let out = bits.as_slice_mut();
        let mut cursors = Cursors::new(self.grouping);
        for piece in pieces {
            match piece.logical_nulls() {
                None => cursors.piece(piece.len(), |_, r, _| out[r >> 3] |= 1 << (r & 7)),
                Some(nulls) => cursors.piece(piece.len(), |j, r, _| {
                    out[r >> 3] |= u8::from(nulls.is_valid(j)) << (r & 7)
                }),
            }
        }
        Some(NullBuffer::new(BooleanBuffer::new(
            bits.into(),
            0,
            self.rows(),
        )))
    }

    fn fixed(
        &self,
        pieces: &[ArrayRef],
        data_type: &DataType,
        width: usize,
    ) -> ColumnResult<ArrayRef> {
        let values = match width {
            1 => self.fixed_values::<1>(pieces),
            2 => self.fixed_values::<2>(pieces),
            4 => self.fixed_values::<4>(pieces),
            8 => self.fixed_values::<8>(pieces),
            16 => self.fixed_values::<16>(pieces),
            32 => self.fixed_values::<32>(pieces),
            _ => self.any_width_values(pieces, width),
        }?;
        let data = ArrayData::builder(data_type.clone())
            .len(self.rows())
            .add_buffer(values)
            .nulls(self.nulls(pieces))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(make_array(data))
    }

    /// The values of `width`-byte pieces, copied as byte arrays (no
    /// alignment needed).
    fn fixed_values<const W: usize>(&self, pieces: &[ArrayRef]) -> ColumnResult<Buffer> {
        let mut buffer = MutableBuffer::from_len_zeroed(self.rows() * W);
        let (out, _) = buffer.as_slice_mut().as_chunks_mut::<W>();
        let mut cursors = Cursors::new(self.grouping);
        for piece in pieces {
            let data = piece.to_data();
            let bytes = value_bytes(&data, W)?;
            let (values, _) = bytes.as_chunks::<W>();
            cursors.piece(piece.len(), |j, r, _| out[r] = values[j]);
        }
        Ok(buffer.into())
    }

    fn any_width_values(&self, pieces: &[ArrayRef], width: usize) -> ColumnResult<Buffer> {
        let mut buffer = MutableBuffer::from_len_zeroed(self.rows() * width);
        let out = buffer.as_slice_mut();
        let mut cursors = Cursors::new(self.grouping);
        for piece in pieces {
            let data = piece.to_data();
            let values = value_bytes(&data, width)?;
            cursors.piece(piece.len(), |j, r, _| {
                out[r * width..(r + 1) * width].copy_from_slice(&values[j * width..(j + 1) * width])
            });
        }
        Ok(buffer.into())
    }

    fn booleans(&self, pieces: &[ArrayRef]) -> ColumnResult<ArrayRef> {
        let mut bits = MutableBuffer::from_len_zeroed(self.rows().div_ceil(8));
        let out = bits.as_slice_mut();
        let mut cursors = Cursors::new(self.grouping);
        for piece in pieces {
            let values = piece.as_boolean().values();
            cursors.piece(piece.len(), |j, r, _| {
                out[r >> 3] |= u8::from(values.value(j)) << (r & 7)
            });
        }
        let values = BooleanBuffer::new(bits.into(), 0, self.rows());
        Ok(Arc::new(arrow_array::BooleanArray::new(
            values,
            self.nulls(pieces),
        )))
    }

    /// Strings or binary: each group's bytes are placed after the bytes of
    /// the groups before it, so the offsets are counted per group first.
    fn bytes<T: ByteArrayType>(&self, pieces: &[ArrayRef]) -> ColumnResult<ArrayRef>
    where
        T::Offset: OffsetSizeTrait,
    {
        let grouping = self.grouping;
        let typed: Vec<&GenericByteArray<T>> = pieces.iter().map(|p| p.as_bytes::<T>()).collect();
        let mut group_bytes = vec![0usize; grouping.groups()];
        let mut next_row = 0;
        for piece in &typed {
            let offsets = piece.value_offsets();
            let groups = &grouping.group_of_row[next_row..next_row + piece.len()];
            for (pair, &group) in offsets.windows(2).zip(groups) {
                group_bytes[group as usize] += (pair[1] - pair[0]).as_usize();
            }
            next_row += piece.len();
        }
        let mut byte_cursor = Vec::with_capacity(group_bytes.len());
        let mut total = 0usize;
        for bytes in &group_bytes {
            byte_cursor.push(total);
            total += bytes;
        }
        let too_long = || {
            format!(
                "{total} bytes of values do not fit the offsets of Arrow type {}",
                T::DATA_TYPE
            )
        };
        T::Offset::from_usize(total).ok_or_else(too_long)?;
        let mut offsets = vec![T::Offset::usize_as(0); self.rows() + 1];
        let mut values = MutableBuffer::from_len_zeroed(total);
        let out = values.as_slice_mut();
        let mut cursors = Cursors::new(grouping);
        for piece in &typed {
            let piece_offsets = piece.value_offsets();
            let piece_values = piece.value_data();
            cursors.piece(piece.len(), |j, r, group| {
                let start = piece_offsets[j].as_usize();
                let end = piece_offsets[j + 1].as_usize();
                let at = byte_cursor[group];
                let next = at + (end - start);
                out[at..next].copy_from_slice(&piece_values[start..end]);
                byte_cursor[group] = next;
                offsets[r + 1] = T::Offset::usize_as(next);
            });
        }
        // SAFETY: the offsets start at 0 and never fall: groups are laid out
        // in order, and each value ends where the next of its group starts.
        let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) };
        // SAFETY: every value is a whole value of a valid input array of the
        // same type, so strings stay UTF-8.
        let array = unsafe {
            GenericByteArray::<T>::new_unchecked(offsets, values.into(), self.nulls(pieces))
        };
        Ok(Arc::new(array))
    }

    fn structs(
        &self,
        pieces: &[ArrayRef],
        fields: &arrow_schema::Fields,
    ) -> ColumnResult<ArrayRef> {
        let children = fields
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let child_pieces: Vec<ArrayRef> = pieces
                    .iter()
                    .map(|p| p.as_struct().column(i).clone())
                    .collect();
                self.scatter(&child_pieces, field.data_type())
                    .map_err(|e| format!("field '{}': {e}", field.name()))
            })
            .collect::<ColumnResult<Vec<_>>>()?;
        let nulls = self.nulls(pieces);
        let array = StructArray::try_new_with_length(fields.clone(), children, nulls, self.rows())
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(array))
    }

    /// Other types: the pieces joined, then gathered by the grouping's order.
    fn take(&self, pieces: &[ArrayRef], data_type: &DataType) -> ColumnResult<ArrayRef> {
        let joined = match pieces {
            [] => return Ok(arrow_array::new_empty_array(data_type)),
            [one] => one.clone(),
            _ => {
                let parts: Vec<&dyn Array> = pieces.iter().map(|p| p.as_ref()).collect();
                concat(&parts).map_err(|e| e.to_string())?
            }
        };
        let order = self
            .order
            .get_or_init(|| UInt64Array::from(self.grouping.order()));
        take(joined.as_ref(), order, None).map_err(|e| e.to_string())
    }
}

/// The bytes of a fixed-width array's values (its offset applied).
fn value_bytes(data: &ArrayData, width: usize) -> ColumnResult<&[u8]> {
    let buffer = data
        .buffers()
        .first()
        .ok_or_else(|| format!("an array of {} has no values buffer", data.data_type()))?;
    let start = data.offset() * width;
    let end = start + data.len() * width;
    buffer.as_slice().get(start..end).ok_or_else(|| {
        format!(
            "an array of {} has {} bytes of values for {} rows",
            data.data_type(),
            buffer.len(),
            data.offset() + data.len()
        )
    })
}
