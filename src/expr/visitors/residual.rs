//! Residuals (spec: "Scan Planning", Appendix C's `residual-filter`; Java's
//! `ResidualEvaluator`): for a data file's partition tuple, the part of the
//! filter its partition does not already decide, which the reader must
//! still apply to the file's rows.
//!
//! Per predicate and partition field of its column: when the strict
//! projection holds for the partition value, every row matches and the
//! predicate is true; when the inclusive projection fails, no row matches
//! and it is false; otherwise it stays. The tree is then simplified. NOT is
//! rewritten into the predicates first: with nulls, `NOT x < 5` is not the
//! complement of `x < 5` for a null identity partition (neither holds),
//! but it is exactly `x >= 5` (see [`super::evaluator`]), so deciding the
//! rewritten predicates is right where negating a decided one would not be.
//!
//! The projections depend only on the filter and the spec, so they are
//! computed once; each tuple then only evaluates them.

use arrow_array::StructArray;

use super::evaluator::eval_row;
use super::inclusive_projection::project_inclusive;
use super::projection::{targets, Target};
use super::rewrite_not::rewrite_not;
use super::strict_projection::project_strict;
use crate::arrow::datum_at;
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, Expr};
use crate::expr::Datum;
use crate::spec::partition::{PartitionSpec, PartitionTransform};
use crate::spec::schema::Schema;
use crate::types::PrimitiveType;

/// The projections of one predicate through one partition field.
struct Projections {
    strict: Option<Bound>,
    inclusive: Option<Bound>,
}

/// Computes residuals of one filter for the partition tuples of one spec.
pub struct ResidualEvaluator {
    filter: Bound,
    /// `None` for an unpartitioned spec: the residual is the filter.
    partitioned: Option<Partitioned>,
}

struct Partitioned {
    rewritten: Bound,
    /// Per predicate of `rewritten`, left to right: its projections through
    /// each partition field of its column.
    projections: Vec<Vec<Projections>>,
    /// Partition field ids, in spec order (the order of tuple values).
    field_ids: Vec<i32>,
    /// The type each tuple value is read as (`unknown` where no
    /// projection reads it).
    types: Vec<PrimitiveType>,
}

impl ResidualEvaluator {
    pub fn new(spec: &PartitionSpec, schema: &Schema, filter: &Bound) -> Result<Self> {
        if spec.is_unpartitioned() {
            // No fields, or only void ones: no partition value decides anything.
            return Ok(Self {
                filter: filter.clone(),
                partitioned: None,
            });
        }
        let rewritten = rewrite_not(filter);
        let mut projections = Vec::new();
        for p in rewritten.predicates() {
            let mut per_field = Vec::new();
            for target in targets(spec, schema, p.term().field_id())?
                .into_iter()
                .flatten()
            {
                per_field.push(Projections {
                    strict: project_strict(p, &target)?,
                    inclusive: project_inclusive(p, &target)?,
                });
            }
            projections.push(per_field);
        }
        let mut types = Vec::with_capacity(spec.fields.len());
        for field in &spec.fields {
            let ty = match &field.transform {
                PartitionTransform::Known(_) => match super::projection::target(field, schema) {
                    Ok(Some(Target { reference, .. })) => reference.ty,
                    // A field whose source column is gone is never projected.
                    _ => PrimitiveType::Unknown,
                },
                PartitionTransform::Unknown(_) => PrimitiveType::Unknown,
            };
            types.push(ty);
        }
        Ok(Self {
            filter: filter.clone(),
            partitioned: Some(Partitioned {
                rewritten,
                projections,
                field_ids: spec.fields.iter().map(|f| f.field_id).collect(),
                types,
            }),
        })
    }

    /// The residual for a partition tuple: values in partition-field order,
    /// `None` for null.
    pub fn residual_for(&self, partition: &[Option<Datum>]) -> Result<Bound> {
        let Some(p) = &self.partitioned else {
            return Ok(self.filter.clone());
        };
        if partition.len() != p.field_ids.len() {
            return Err(Error::Validation(format!(
                "a partition tuple of {} values for a spec of {} fields",
                partition.len(),
                p.field_ids.len()
            )));
        }
        let values = |field_id: i32| {
            p.field_ids
                .iter()
                .position(|id| *id == field_id)
                .and_then(|i| partition[i].clone())
        };
        let mut next = 0;
        p.rewritten.try_map(&mut |predicate: &BoundPredicate| {
            let index = next;
            next += 1;
            for projection in &p.projections[index] {
                if let Some(strict) = &projection.strict {
                    if eval_row(strict, &values)? {
                        return Ok(Expr::True);
                    }
                }
                if let Some(inclusive) = &projection.inclusive {
                    if !eval_row(inclusive, &values)? {
                        return Ok(Expr::False);
                    }
                }
            }
            Ok(Expr::Predicate(predicate.clone()))
        })
    }

    /// The residual for row `row` of a decoded `partition` struct column
    /// (one child per partition field, in spec order).
    pub fn residual_for_row(&self, partition: &StructArray, row: usize) -> Result<Bound> {
        let Some(p) = &self.partitioned else {
            return Ok(self.filter.clone());
        };
        if partition.num_columns() != p.types.len() {
            return Err(Error::Validation(format!(
                "a partition struct of {} columns for a spec of {} fields",
                partition.num_columns(),
                p.types.len()
            )));
        }
        let mut tuple = Vec::with_capacity(p.types.len());
        for (column, ty) in partition.columns().iter().zip(&p.types) {
            tuple.push(if *ty == PrimitiveType::Unknown {
                None
            } else {
                datum_at(column.as_ref(), row, *ty)?
            });
        }
        self.residual_for(&tuple)
    }
}

#[cfg(test)]
#[path = "residual_tests.rs"]
mod tests;
