//! Rows of a record batch reordered by an index array: the writer gathers the
//! rows of each partition together (a stable sort on partition codes gives the
//! order), so that each partition is one contiguous slice.
//!
//! arrow-rs `take` does the work, one column per task on the rayon pool.
//! Measured on the write bench (2 cores, loaded): 2.4x less CPU than
//! pyarrow's `take` at 1M rows, only ~15% less at 10M, where both are bound
//! by memory (each output row reads a new cache line of every column, from
//! 160 interleaved runs). Joining a chunked column first (`concat`) costs
//! up to a third of a string column's gather.

use arrow_array::{new_empty_array, Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, SchemaRef};
use arrow_select::concat::concat;
use arrow_select::take::{take, TakeOptions};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// The rows of `batches` (one table in pieces, all of `schema`) in the order
/// of `indices`: output row `i` is input row `indices[i]`, counting across the
/// pieces. `indices` is an integer array without nulls, every index below the
/// total row count. Columns are gathered on `threads` workers.
pub fn gather(
    batches: &[RecordBatch],
    schema: SchemaRef,
    indices: &dyn Array,
    threads: usize,
) -> Result<RecordBatch> {
    check_indices(indices)?;
    for batch in batches {
        if batch.schema().fields() != schema.fields() {
            return Err(Error::InvalidValue(format!(
                "gather: a batch has columns {:?}, the table has {:?}",
                batch.schema().fields(),
                schema.fields()
            )));
        }
    }
    let gather_column = |(position, field): (usize, &arrow_schema::FieldRef)| {
        let pieces: Vec<&dyn Array> = batches
            .iter()
            .map(|b| b.column(position).as_ref())
            .collect();
        gather_one(&pieces, field.data_type(), indices)
            .map_err(|e| Error::InvalidValue(format!("gather: column '{}': {e}", field.name())))
    };
    let fields: Vec<_> = schema.fields().iter().enumerate().collect();
    let columns = crate::runtime::run(threads, || {
        if threads <= 1 {
            fields
                .into_iter()
                .map(gather_column)
                .collect::<Result<Vec<ArrayRef>>>()
        } else {
            fields
                .into_par_iter()
                .map(gather_column)
                .collect::<Result<Vec<ArrayRef>>>()
        }
    })??;
    let options = RecordBatchOptions::new().with_row_count(Some(indices.len()));
    RecordBatch::try_new_with_options(schema, columns, &options)
        .map_err(|e| Error::Internal(format!("gather: assembling the gathered columns: {e}")))
}

fn check_indices(indices: &dyn Array) -> Result<()> {
    let integer = matches!(
        indices.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    );
    if !integer {
        return Err(Error::TypeMismatch(format!(
            "gather: indices must be integers, got Arrow type {}",
            indices.data_type()
        )));
    }
    if indices.null_count() > 0 {
        return Err(Error::InvalidValue(format!(
            "gather: indices must not be null ({} of {} are)",
            indices.null_count(),
            indices.len()
        )));
    }
    Ok(())
}

/// One column, its pieces joined first (a copy of the column, cheap beside
/// the gather itself) when there are several.
fn gather_one(
    pieces: &[&dyn Array],
    data_type: &DataType,
    indices: &dyn Array,
) -> std::result::Result<ArrayRef, String> {
    let joined: ArrayRef;
    let values: &dyn Array = match pieces {
        [one] => *one,
        [] => {
            joined = new_empty_array(data_type);
            joined.as_ref()
        }
        _ => {
            joined = concat(pieces).map_err(|e| e.to_string())?;
            joined.as_ref()
        }
    };
    let options = TakeOptions { check_bounds: true };
    take(values, indices, Some(options))
        .map_err(|e| format!("{e} (gathering from {} rows)", values.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, Int64Array, StringArray, UInt64Array};
    use arrow_schema::{Field, Schema};
    use std::sync::Arc;

    fn batch(ids: Vec<Option<i32>>, names: Vec<Option<&str>>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("name", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn gathers_across_pieces() {
        let a = batch(vec![Some(0), Some(1)], vec![Some("a"), None]);
        let b = batch(vec![None, Some(3)], vec![Some("c"), Some("d")]);
        let schema = a.schema();
        let indices = UInt64Array::from(vec![3, 0, 2, 1]);
        let got = gather(&[a, b], schema, &indices, 2).unwrap();
        let want = batch(
            vec![Some(3), Some(0), None, Some(1)],
            vec![Some("d"), Some("a"), Some("c"), None],
        );
        assert_eq!(got, want);
    }

    #[test]
    fn out_of_bounds_names_the_column() {
        let a = batch(vec![Some(0)], vec![Some("a")]);
        let schema = a.schema();
        let err = gather(&[a], schema, &Int64Array::from(vec![1]), 1).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("column 'id'") && text.contains("out of bounds"),
            "{text}"
        );
    }

    #[test]
    fn null_and_non_integer_indices_are_refused() {
        let a = batch(vec![Some(0)], vec![Some("a")]);
        let schema = a.schema();
        let nulls = Int64Array::from(vec![None, Some(0)]);
        assert!(gather(std::slice::from_ref(&a), schema.clone(), &nulls, 1)
            .unwrap_err()
            .to_string()
            .contains("null"));
        let strings = StringArray::from(vec!["0"]);
        assert!(gather(&[a], schema, &strings, 1)
            .unwrap_err()
            .to_string()
            .contains("integers"));
    }

    #[test]
    fn empty_table_with_no_indices_is_empty() {
        let a = batch(vec![], vec![]);
        let schema = a.schema();
        let got = gather(&[], schema, &UInt64Array::from(Vec::<u64>::new()), 1);
        assert_eq!(got.unwrap().num_rows(), 0);
    }
}
