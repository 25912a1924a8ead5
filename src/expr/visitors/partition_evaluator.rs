//! Partition pruning of manifest entries (spec: "Scan Planning"): a
//! partition filter (a row filter projected onto the manifest's partition
//! spec, bound to its partition type: references are partition field ids)
//! evaluated on each entry's partition tuple, the decoded
//! `data_file.partition` struct (children in the order of the partition
//! type's fields).
//!
//! Each predicate is one typed loop over its column, giving a bitmap;
//! AND and OR combine bitmaps. Rows are judged exactly under the semantics
//! of [`super::compare`]: a null partition value satisfies `IS NULL`,
//! `IS NOT NAN` and the negative operations, and no ordered comparison
//! (Java's `Evaluator` orders nulls first and lets `null < 5` through); NaN
//! satisfies `!=`, `NOT IN` and `IS NAN` only.
//! NOT is pushed down keeping NaN rows ([`rewrite_not`](super::rewrite_not::rewrite_not)), so the
//! answer equals three-valued evaluation of the filter as written.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_buffer::BooleanBuffer;

use super::compare::{Column, PrefixTest};
use super::metrics::{and_not, referenced_ids, visit};
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Op};
use crate::transform::Transform;
use crate::types::Type;
use crate::values::Literal;

/// Evaluates a partition filter on partition tuples.
#[derive(Debug, Clone)]
pub struct PartitionEvaluator {
    expr: Bound,
    /// For each referenced partition field id, its position (child index).
    positions: Vec<(i32, usize)>,
    /// The number of partition fields.
    width: usize,
}

impl PartitionEvaluator {
    /// `partition_type` is the `Type::Struct` of the spec's partition fields.
    pub fn new(partition_filter: &Bound, partition_type: &Type) -> Result<Self> {
        let Type::Struct(fields) = partition_type else {
            return Err(Error::TypeMismatch(format!(
                "a partition type is a struct, got {partition_type}"
            )));
        };
        let expr = super::rewrite_not::rewrite_not(partition_filter);
        let positions = referenced_ids(&expr)
            .into_iter()
            .map(|id| {
                let position = fields.iter().position(|f| f.id == id).ok_or_else(|| {
                    Error::UnknownField(format!(
                        "the partition filter references field id {id}, which the partition \
                         type does not have"
                    ))
                })?;
                Ok((id, position))
            })
            .collect::<Result<_>>()?;
        Ok(PartitionEvaluator {
            expr,
            positions,
            width: fields.len(),
        })
    }

    /// One answer per entry of a manifest read by
    /// [`crate::manifest::read_manifest`] (its `data_file.partition`).
    pub fn eval_manifest(&self, batch: &RecordBatch) -> Result<BooleanBuffer> {
        let partition = batch
            .column_by_name("data_file")
            .and_then(|c| c.as_struct_opt())
            .and_then(|d| d.column_by_name("partition"))
            .ok_or_else(|| {
                Error::InvalidValue("the manifest has no data_file.partition column".to_owned())
            })?;
        let partition = partition.as_struct_opt().ok_or_else(|| {
            Error::TypeMismatch("data_file.partition must be a struct column".to_owned())
        })?;
        self.eval(partition)
    }

    /// One answer per partition tuple: set where it matches.
    pub fn eval(&self, partition: &StructArray) -> Result<BooleanBuffer> {
        let n = partition.len();
        if !self.positions.is_empty() && partition.num_columns() != self.width {
            return Err(Error::TypeMismatch(format!(
                "the partition tuples have {} fields, the partition type {}",
                partition.num_columns(),
                self.width
            )));
        }
        visit(&self.expr, n, &mut |p| {
            let id = p.term().field_id();
            let position = self
                .positions
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, at)| *at)
                .ok_or_else(|| Error::Internal(format!("no position for field {id}")))?;
            let column = partition.column(position);
            let transformed: ArrayRef;
            let values: &dyn Array = match p.term() {
                BoundTerm::Transform { transform, .. } if *transform != Transform::Identity => {
                    transformed = crate::transform::kernels::apply(*transform, column.as_ref())?;
                    transformed.as_ref()
                }
                _ => column.as_ref(),
            };
            let column = Column::new(values)?;
            // A null tuple (none is expected) has null fields.
            let valid = match partition.nulls() {
                Some(nulls) => column.valid() & nulls.inner(),
                None => column.valid().clone(),
            };
            matches(p, &column, &valid)
        })
    }
}

/// Set where the value satisfies `p`; a null satisfies the negative
/// operations (`!=`, `NOT IN`, `NOT STARTS WITH`), as the row semantics of
/// [`super::compare`] say.
fn matches(
    p: &BoundPredicate,
    column: &Column<'_>,
    valid: &BooleanBuffer,
) -> Result<BooleanBuffer> {
    let values = matches_values(p, column, valid)?;
    Ok(match p.op() {
        Op::NotEq | Op::NotIn | Op::NotStartsWith => &values | &!valid,
        _ => values,
    })
}

fn matches_values(
    p: &BoundPredicate,
    column: &Column<'_>,
    valid: &BooleanBuffer,
) -> Result<BooleanBuffer> {
    let n = valid.len();
    Ok(match p {
        BoundPredicate::Unary { op, .. } => match op {
            Op::IsNull => !valid,
            Op::NotNull => valid.clone(),
            Op::IsNan => valid & &column.is_nan(),
            Op::NotNan => and_not(&BooleanBuffer::new_set(n), &(valid & &column.is_nan())),
            _ => BooleanBuffer::new_unset(n),
        },
        BoundPredicate::Literal { op, literal, .. } => match op {
            Op::StartsWith | Op::NotStartsWith => {
                let Literal::String(prefix) = &literal.value else {
                    return Err(Error::TypeMismatch(format!(
                        "{} needs a string literal, got {literal}",
                        op.symbol()
                    )));
                };
                let starts = column.prefix_test(prefix.as_bytes(), PrefixTest::StartsWith)?;
                if *op == Op::StartsWith {
                    valid & &starts
                } else {
                    and_not(valid, &starts)
                }
            }
            _ => valid & &column.compare(*op, &literal.value)?,
        },
        BoundPredicate::Set { op, literals, .. } => {
            let found = column.is_in(&column.key_set(literals)?);
            if *op == Op::In {
                valid & &found
            } else {
                and_not(valid, &found)
            }
        }
    })
}

#[cfg(test)]
#[path = "partition_evaluator_tests.rs"]
mod tests;
