//! Which rows of two equally long column lists differ: the check that lets
//! an upsert skip rewriting a target row its new row would not change.
//!
//! Values compare as stored data, not as join keys:
//! - null equals null, and null differs from every value;
//! - floats by their bits, except that every NaN equals every other NaN: so
//!   -0.0 differs from 0.0 (a change that must be written);
//! - nested values (struct, list, map, union, ...) by value, element by
//!   element; a map's entries in their order, so a map whose entries were
//!   reordered counts as changed (the row is rewritten, never wrongly kept);
//! - a dictionary-encoded column by its values.
//!
//! Flat columns are compared directly; any other column through arrow-row,
//! which encodes equal values (floats made canonical first) to equal bytes.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float16Type, Float32Type, Float64Type};
use arrow_array::{
    downcast_primitive_array, Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, BooleanArray,
    PrimitiveArray,
};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;

use super::columns::ChunkedColumns;
use crate::arrow::keys::{canonical_floats, f32_word, f64_word, FloatKeys};
use crate::error::{Error, Result};

/// For each row, whether any column of `left` differs from the same column
/// of `right` (one chunk each; as many columns, of equal types and length).
pub fn rows_differ(left: &[ArrayRef], right: &[ArrayRef]) -> Result<BooleanArray> {
    if left.len() != right.len() {
        return Err(column_counts(left.len(), right.len()));
    }
    rows_differ_chunked(&ChunkedColumns::new(left)?, &ChunkedColumns::new(right)?)
}

/// [`rows_differ`] over chunks of rows (chunked differently on each side or not).
pub fn rows_differ_chunked(left: &ChunkedColumns, right: &ChunkedColumns) -> Result<BooleanArray> {
    if left.num_columns() != right.num_columns() {
        return Err(column_counts(left.num_columns(), right.num_columns()));
    }
    for (i, (l, r)) in left.types().iter().zip(right.types()).enumerate() {
        if !l.equals_datatype(r) {
            return Err(Error::TypeMismatch(format!(
                "column {i} is {l} on the left but {r} on the right: rows of different types \
                 cannot be compared (cast one side first)"
            )));
        }
    }
    let (left, right) = left.aligned(right)?;
    let mut out = BooleanBufferBuilder::new(left.num_rows());
    for ((_, l), (_, r)) in left.chunks().zip(right.chunks()) {
        let mut differ: Option<BooleanBuffer> = None;
        for (i, (a, b)) in l.iter().zip(r).enumerate() {
            let column = column_differs(i, a, b)?;
            differ = Some(match differ {
                None => column,
                Some(d) => &d | &column,
            });
        }
        if let Some(differ) = differ {
            out.append_buffer(&differ);
        }
    }
    Ok(BooleanArray::new(out.finish(), None))
}

fn column_counts(left: usize, right: usize) -> Error {
    Error::Validation(format!(
        "{left} columns on the left but {right} on the right: rows cannot be compared"
    ))
}

/// Whether each row of `a` differs from the same row of `b` (column `i`).
fn column_differs(i: usize, a: &ArrayRef, b: &ArrayRef) -> Result<BooleanBuffer> {
    let len = a.len();
    let (l, r) = (a.as_ref(), b.as_ref());
    use DataType as D;
    // The values' differences, blind to nulls; `None`: not a flat column.
    let values = match l.data_type() {
        D::Boolean => Some(l.as_boolean().values() ^ r.as_boolean().values()),
        D::Float16 => Some(float_differs::<Float16Type>(l, r, |v| {
            if v.is_nan() {
                u64::MAX
            } else {
                u64::from(v.to_bits())
            }
        })),
        D::Float32 => Some(float_differs::<Float32Type>(l, r, |v| {
            f32_word(v, FloatKeys::Total)
        })),
        D::Float64 => Some(float_differs::<Float64Type>(l, r, |v| {
            f64_word(v, FloatKeys::Total)
        })),
        D::Utf8 => Some(bytes_differ(
            len,
            l.as_string::<i32>(),
            r.as_string::<i32>(),
        )),
        D::LargeUtf8 => Some(bytes_differ(
            len,
            l.as_string::<i64>(),
            r.as_string::<i64>(),
        )),
        D::Binary => Some(bytes_differ(
            len,
            l.as_binary::<i32>(),
            r.as_binary::<i32>(),
        )),
        D::LargeBinary => Some(bytes_differ(
            len,
            l.as_binary::<i64>(),
            r.as_binary::<i64>(),
        )),
        D::Utf8View => {
            let (x, y) = (l.as_string_view(), r.as_string_view());
            Some(BooleanBuffer::collect_bool(len, |i| {
                x.value(i) != y.value(i)
            }))
        }
        D::BinaryView => {
            let (x, y) = (l.as_binary_view(), r.as_binary_view());
            Some(BooleanBuffer::collect_bool(len, |i| {
                x.value(i) != y.value(i)
            }))
        }
        D::FixedSizeBinary(_) => {
            let (x, y) = (l.as_fixed_size_binary(), r.as_fixed_size_binary());
            Some(BooleanBuffer::collect_bool(len, |i| {
                x.value(i) != y.value(i)
            }))
        }
        t if t.is_primitive() => downcast_primitive_array!(
            l, r => { Some(primitive_differs(l, r)) }
            _ => None
        ),
        _ => None,
    };
    match values {
        Some(values) => Ok(with_nulls(values, l.nulls(), r.nulls())),
        None => encoded_differs(i, a, b),
    }
}

/// `values` (whether two valid values differ) combined with the two sides'
/// nulls: a null differs from a value and equals a null.
fn with_nulls(
    values: BooleanBuffer,
    left: Option<&arrow_buffer::NullBuffer>,
    right: Option<&arrow_buffer::NullBuffer>,
) -> BooleanBuffer {
    match (left, right) {
        (None, None) => values,
        (Some(n), None) | (None, Some(n)) => &!n.inner() | &values,
        (Some(x), Some(y)) => {
            let (x, y) = (x.inner(), y.inner());
            let both = x & y;
            &(x ^ y) | &(&both & &values)
        }
    }
}

fn primitive_differs<T: ArrowPrimitiveType>(
    l: &PrimitiveArray<T>,
    r: &PrimitiveArray<T>,
) -> BooleanBuffer {
    let (x, y) = (l.values(), r.values());
    BooleanBuffer::collect_bool(x.len(), |i| x[i].is_ne(y[i]))
}

/// Floats differ when their words (`word`: NaNs canonical) do.
fn float_differs<T: ArrowPrimitiveType>(
    l: &dyn Array,
    r: &dyn Array,
    word: impl Fn(T::Native) -> u64,
) -> BooleanBuffer {
    let (x, y) = (
        l.as_primitive::<T>().values(),
        r.as_primitive::<T>().values(),
    );
    BooleanBuffer::collect_bool(x.len(), |i| word(x[i]) != word(y[i]))
}

fn bytes_differ<T: arrow_array::types::ByteArrayType>(
    len: usize,
    x: &arrow_array::GenericByteArray<T>,
    y: &arrow_array::GenericByteArray<T>,
) -> BooleanBuffer {
    BooleanBuffer::collect_bool(len, |i| {
        let (a, b): (&[u8], &[u8]) = (x.value(i).as_ref(), y.value(i).as_ref());
        a != b
    })
}

/// Rows compared by their arrow-row encodings (nulls included), floats made
/// canonical first.
fn encoded_differs(i: usize, a: &ArrayRef, b: &ArrayRef) -> Result<BooleanBuffer> {
    let converter =
        RowConverter::new(vec![SortField::new(a.data_type().clone())]).map_err(|e| {
            Error::TypeMismatch(format!(
                "column {i} is {}, whose values frazil cannot compare: {e}",
                a.data_type()
            ))
        })?;
    let encode = |column: &ArrayRef| {
        converter
            .convert_columns(&[canonical_floats(column, FloatKeys::Total)])
            .map_err(|e| Error::Internal(format!("comparing column {i}: {e}")))
    };
    let (x, y) = (encode(a)?, encode(b)?);
    Ok(BooleanBuffer::collect_bool(a.len(), |row| {
        x.row(row) != y.row(row)
    }))
}
