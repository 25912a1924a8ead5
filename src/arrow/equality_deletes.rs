//! Equality deletes applied to Arrow batches (spec: "Equality Delete Files"):
//! a hash anti-join on the delete columns.
//!
//! The delete rows' key columns (in the order of the file's `equality_ids`)
//! are encoded with arrow-row into comparable byte strings and kept in a hash
//! set; a data row is deleted when its key columns encode to a member. The
//! encoding gives the spec's and Java's equality:
//! - a null equals a null ("a `null` value in a delete column matches a row
//!   if the row's value is `null`");
//! - floats compare as Java's `Float.compare` / `Double.compare` (the
//!   comparator Java's `StructLikeSet` uses): -0.0 and 0.0 differ, every NaN
//!   equals every other NaN (payloads are canonicalised before encoding). The
//!   spec forbids float delete columns; other writers' files still get Java's
//!   answer.
//!
//! Key columns must have exactly the set's types: the reader projects data
//! and delete files to the table schema before joining.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, BooleanArray, Float32Array, Float64Array, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, SchemaRef};
use rustc_hash::FxHashSet;

use crate::error::{Error, Result};

/// The delete keys of one set of equality field ids.
pub struct EqualityDeleteSet {
    schema: SchemaRef,
    converter: RowConverter,
    keys: FxHashSet<Box<[u8]>>,
}

impl EqualityDeleteSet {
    /// An empty set for key columns of `schema` (one field per delete column).
    pub fn new(schema: SchemaRef) -> Result<Self> {
        if schema.fields().is_empty() {
            return Err(Error::Validation(
                "an equality delete set needs at least one delete column".into(),
            ));
        }
        let fields = schema
            .fields()
            .iter()
            .map(|f| SortField::new(f.data_type().clone()))
            .collect();
        let converter = RowConverter::new(fields).map_err(|e| {
            Error::Validation(format!(
                "equality delete columns {:?} cannot be compared: {e}",
                column_names(&schema)
            ))
        })?;
        Ok(EqualityDeleteSet {
            schema,
            converter,
            keys: FxHashSet::default(),
        })
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The number of distinct delete keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Adds the rows of `columns` (the key columns, in the set's order) as
    /// delete keys; `source` names them in errors (the delete file).
    pub fn add(&mut self, columns: &[ArrayRef], source: &str) -> Result<()> {
        let columns = self.checked(columns, source)?;
        let rows = self.converter.convert_columns(&columns).map_err(|e| {
            Error::InvalidData(format!("{source}: cannot encode equality delete keys: {e}"))
        })?;
        self.keys.reserve(rows.num_rows());
        for row in rows.iter() {
            self.keys.insert(row.as_ref().into());
        }
        Ok(())
    }

    /// True for each row of `columns` (the data's key columns) that a delete
    /// key matches.
    pub fn deleted_mask(&self, columns: &[ArrayRef], source: &str) -> Result<BooleanArray> {
        let columns = self.checked(columns, source)?;
        let rows = self.converter.convert_columns(&columns).map_err(|e| {
            Error::InvalidData(format!("{source}: cannot encode equality keys: {e}"))
        })?;
        Ok(rows
            .iter()
            .map(|row| Some(self.keys.contains(row.as_ref())))
            .collect())
    }

    /// `batch` without the rows a delete key matches; `key_columns` are the
    /// indices of the key columns in `batch`, in the set's order.
    pub fn apply(
        &self,
        batch: &RecordBatch,
        key_columns: &[usize],
        source: &str,
    ) -> Result<RecordBatch> {
        if self.keys.is_empty() || batch.num_rows() == 0 {
            return Ok(batch.clone());
        }
        let columns = key_columns
            .iter()
            .map(|&i| {
                batch.columns().get(i).cloned().ok_or_else(|| {
                    Error::Validation(format!(
                        "{source}: key column index {i} is outside the batch's {} columns",
                        batch.num_columns()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let deleted = self.deleted_mask(&columns, source)?;
        if deleted.true_count() == 0 {
            return Ok(batch.clone());
        }
        let keep = arrow_arith_not(&deleted);
        arrow_select::filter::filter_record_batch(batch, &keep)
            .map_err(|e| Error::Internal(format!("{source}: filtering deleted rows: {e}")))
    }

    /// The columns with the set's types and NaNs canonicalised, or an error
    /// naming the column whose type differs.
    fn checked(&self, columns: &[ArrayRef], source: &str) -> Result<Vec<ArrayRef>> {
        if columns.len() != self.schema.fields().len() {
            return Err(Error::Validation(format!(
                "{source}: {} key columns given, the equality delete columns are {:?}",
                columns.len(),
                column_names(&self.schema)
            )));
        }
        columns
            .iter()
            .zip(self.schema.fields())
            .map(|(column, field)| {
                if column.data_type() != field.data_type() {
                    return Err(Error::TypeMismatch(format!(
                        "{source}: equality delete column {:?} is {}, the values given are {}",
                        field.name(),
                        field.data_type(),
                        column.data_type()
                    )));
                }
                Ok(canonical_nans(column))
            })
            .collect()
    }
}

fn column_names(schema: &SchemaRef) -> Vec<&str> {
    schema.fields().iter().map(|f| f.name().as_str()).collect()
}

/// Float columns with every NaN replaced by the canonical NaN, so that NaN
/// payloads do not make equal keys differ (Java: `floatToIntBits`).
fn canonical_nans(column: &ArrayRef) -> ArrayRef {
    match column.data_type() {
        DataType::Float32 => {
            let values = column.as_primitive::<Float32Type>();
            if !values.values().iter().any(|v| v.is_nan()) {
                return column.clone();
            }
            let fixed: Float32Array = values.unary(|v| if v.is_nan() { f32::NAN } else { v });
            Arc::new(fixed)
        }
        DataType::Float64 => {
            let values = column.as_primitive::<Float64Type>();
            if !values.values().iter().any(|v| v.is_nan()) {
                return column.clone();
            }
            let fixed: Float64Array = values.unary(|v| if v.is_nan() { f64::NAN } else { v });
            Arc::new(fixed)
        }
        _ => column.clone(),
    }
}

/// NOT of a mask without nulls (the deleted mask never holds one).
fn arrow_arith_not(mask: &BooleanArray) -> BooleanArray {
    BooleanArray::new(!mask.values(), None)
}

#[cfg(test)]
mod tests;
