//! Manifest pruning by partition field summaries (spec: "Manifest Lists",
//! `field_summary`; Java's `ManifestEvaluator`): whether a manifest might
//! list a file whose partition matches a partition filter (a row filter
//! already projected onto the manifest's partition spec, bound to its
//! partition type: references are partition field ids).
//!
//! Java's rules, with these corrections:
//! - a summary that is missing (no `partitions`, a shorter list, a null
//!   entry) means "might match"; so do missing bounds, unless the summary
//!   says the field holds nulls or NaN (then every value is null or NaN:
//!   Java prunes on missing bounds alone);
//! - bounds never hold NaN; NOT is pushed down keeping NaN rows
//!   ([`rewrite_not`](super::rewrite_not::rewrite_not)); zeros keep their
//!   sign as written (spec: note 2 of "Manifest Lists": -0.0 precedes
//!   +0.0, and a writer must not use +0.0 as a lower bound when -0.0 is a
//!   value);
//! - an `IN` with more than 200 literals answers "might match" (Java's
//!   `IN_PREDICATE_LIMIT`), `STARTS WITH` compares bounds cut to the
//!   prefix's length, `NOT STARTS WITH` prunes only when both bounds start
//!   with the prefix and there is no null.
//!
//! Manifests of several partition specs share a manifest list: evaluate each
//! spec's rows with that spec's evaluator (`partition_spec_id`).

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, ListArray, RecordBatch, StructArray};
use arrow_buffer::{BooleanBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields};

use super::bounds::{bound_column, Side};
use super::compare::{collect, Column, PrefixTest};
use super::metrics::{empty_binary, referenced_ids, visit, IN_PREDICATE_LIMIT, NO_ENTRY};
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Op};
use crate::manifest::summary::FieldSummary;
use crate::transform::Transform;
use crate::types::{PrimitiveType, Type};
use crate::values::Literal;

/// Decides which manifests of one partition spec might hold matching files.
#[derive(Debug, Clone)]
pub struct ManifestEvaluator {
    expr: Bound,
    /// For each referenced partition field id: its position in the
    /// partition type (and in the summaries), its name and type.
    fields: Vec<(i32, usize, String, PrimitiveType)>,
}

/// The summaries of one partition field in each manifest.
struct Summaries<'a> {
    /// Set where the manifest has a summary for the field.
    present: BooleanBuffer,
    /// contains_null, known and true / known and false.
    has_null: BooleanBuffer,
    no_null: BooleanBuffer,
    /// contains_nan, known and true / known and false.
    has_nan: BooleanBuffer,
    no_nan: BooleanBuffer,
    lower: Column<'a>,
    upper: Column<'a>,
}

impl ManifestEvaluator {
    /// `partition_type` is the `Type::Struct` of the spec's partition fields
    /// (ids, names, result types), as `PartitionSpec::partition_type` gives.
    pub fn new(partition_filter: &Bound, partition_type: &Type) -> Result<Self> {
        let Type::Struct(partition_fields) = partition_type else {
            return Err(Error::TypeMismatch(format!(
                "a partition type is a struct, got {partition_type}"
            )));
        };
        let expr = super::rewrite_not::rewrite_not(partition_filter);
        let fields = referenced_ids(&expr)
            .into_iter()
            .map(|id| {
                let position = partition_fields
                    .iter()
                    .position(|f| f.id == id)
                    .ok_or_else(|| {
                        Error::UnknownField(format!(
                            "the partition filter references field id {id}, which the \
                             partition type does not have"
                        ))
                    })?;
                let field = &partition_fields[position];
                let ty = field.field_type.as_primitive().ok_or_else(|| {
                    Error::TypeMismatch(format!(
                        "partition field {:?} has type {}, not a primitive type",
                        field.name, field.field_type
                    ))
                })?;
                Ok((id, position, field.name.clone(), ty))
            })
            .collect::<Result<_>>()?;
        Ok(ManifestEvaluator { expr, fields })
    }

    /// Whether a manifest with these partition field summaries (one per
    /// partition field, in order) might hold matching files.
    pub fn eval(&self, summaries: &[FieldSummary]) -> Result<bool> {
        let partitions = summaries_list(summaries)?;
        Ok(self.eval_partitions(&partitions)?.value(0))
    }

    /// One answer per manifest of a manifest list read by
    /// [`crate::manifest::read_manifest_list`] (its `partitions` column).
    pub fn eval_list(&self, list: &RecordBatch) -> Result<BooleanBuffer> {
        match list.column_by_name("partitions") {
            None => Ok(BooleanBuffer::new_set(list.num_rows())),
            Some(column) => {
                let partitions = column.as_list_opt::<i32>().ok_or_else(|| {
                    Error::TypeMismatch(format!(
                        "manifest list column partitions must be a list, got {}",
                        column.data_type()
                    ))
                })?;
                self.eval_partitions(partitions)
            }
        }
    }

    /// One answer per row of a `partitions` column
    /// (`list<struct<contains_null, contains_nan, lower_bound, upper_bound>>`).
    pub fn eval_partitions(&self, partitions: &ListArray) -> Result<BooleanBuffer> {
        let n = partitions.len();
        let entries = partitions.values().as_struct_opt().ok_or_else(|| {
            Error::TypeMismatch("manifest list partitions must hold structs".to_owned())
        })?;
        let offsets = partitions.value_offsets();
        // Where each field's summary is in the flattened entries.
        let positions: Vec<Vec<u32>> = self
            .fields
            .iter()
            .map(|(_, position, _, _)| {
                (0..n)
                    .map(|row| {
                        let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                        let at = start + position;
                        if partitions.is_valid(row) && at < end && entries.is_valid(at) {
                            at as u32
                        } else {
                            NO_ENTRY
                        }
                    })
                    .collect()
            })
            .collect();
        let no_entries = vec![NO_ENTRY; n];
        let mut summaries = Vec::with_capacity(self.fields.len());
        for ((id, _, name, ty), positions) in self.fields.iter().zip(&positions) {
            summaries.push((*id, gather(entries, positions, &no_entries, name, *ty)?));
        }
        visit(&self.expr, n, &mut |p| {
            let id = p.term().field_id();
            let s = summaries
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, s)| s)
                .ok_or_else(|| Error::Internal(format!("no summary gathered for {id}")))?;
            let ty = self.fields.iter().find(|f| f.0 == id).map(|f| f.3);
            might_match(p, s, ty.unwrap_or(PrimitiveType::Unknown), n)
        })
    }
}

/// The summaries of one partition field in every manifest: `positions`
/// are where they are in the flattened summary `entries`.
fn gather<'a>(
    entries: &'a StructArray,
    positions: &'a [u32],
    no_entries: &'a [u32],
    name: &str,
    ty: PrimitiveType,
) -> Result<Summaries<'a>> {
    let n = positions.len();
    let present = collect(n, |i| positions[i] != NO_ENTRY);
    let flag = |child: &str| -> Result<(BooleanBuffer, BooleanBuffer)> {
        let Some(column) = entries.column_by_name(child) else {
            return Ok((BooleanBuffer::new_unset(n), BooleanBuffer::new_unset(n)));
        };
        let flags = column
            .as_boolean_opt()
            .ok_or_else(|| Error::TypeMismatch(format!("field summary {child} must be boolean")))?;
        let known = |i: usize| {
            Some(positions[i] as usize).filter(|p| *p != NO_ENTRY as usize && flags.is_valid(*p))
        };
        Ok((
            collect(n, |i| known(i).is_some_and(|p| flags.value(p))),
            collect(n, |i| known(i).is_some_and(|p| !flags.value(p))),
        ))
    };
    let (has_null, no_null) = flag("contains_null")?;
    let (has_nan, no_nan) = flag("contains_nan")?;
    let bound = |child: &str, side: Side| -> Result<Column<'a>> {
        let (values, positions) = match entries.column_by_name(child) {
            None => (empty_binary(), no_entries),
            Some(c) => (
                c.as_binary_opt::<i32>().ok_or_else(|| {
                    Error::TypeMismatch(format!("field summary {child} must be binary"))
                })?,
                positions,
            ),
        };
        bound_column(values, positions, ty, side).map_err(|bad| {
            Error::InvalidData(format!(
                "manifest {}: partition field {name:?}: {}",
                bad.row, bad.error
            ))
        })
    };
    Ok(Summaries {
        present,
        has_null,
        no_null,
        has_nan,
        no_nan,
        lower: bound("lower_bound", Side::Lower)?,
        upper: bound("upper_bound", Side::Upper)?,
    })
}

/// Set where the manifest might hold a file whose partition matches `p`.
fn might_match(
    p: &BoundPredicate,
    s: &Summaries,
    ty: PrimitiveType,
    n: usize,
) -> Result<BooleanBuffer> {
    let none = || BooleanBuffer::new_unset(n);
    let is_column = matches!(
        p.term(),
        BoundTerm::Reference(_)
            | BoundTerm::Transform {
                transform: Transform::Identity,
                ..
            }
    );
    if !is_column {
        return Ok(BooleanBuffer::new_set(n));
    }
    let (lower, upper) = (&s.lower, &s.upper);
    // No bound while the summary says there are nulls or NaN: every value
    // is null or NaN, and no comparison holds.
    let nothing_comparable = &!lower.valid() & &(&s.has_null | &s.has_nan);
    let cannot = match p {
        BoundPredicate::Unary { op, .. } => match op {
            Op::IsNull => s.no_null.clone(),
            Op::NotNull | Op::IsNan => {
                // Every value is null: no bound, nulls, and (for floats) no NaN.
                let mut all_null = &!lower.valid() & &s.has_null;
                if ty.is_floating() {
                    all_null = &all_null & &s.no_nan;
                }
                if *op == Op::IsNan {
                    &all_null | &s.no_nan
                } else {
                    all_null
                }
            }
            // Every value is NaN.
            Op::NotNan => &(&s.has_nan & &s.no_null) & &!lower.valid(),
            _ => none(),
        },
        BoundPredicate::Literal { op, literal, .. } => {
            let v = &literal.value;
            match op {
                Op::Lt => &nothing_comparable | &lower.compare(Op::GtEq, v)?,
                Op::LtEq => &nothing_comparable | &lower.compare(Op::Gt, v)?,
                Op::Gt => &nothing_comparable | &upper.compare(Op::LtEq, v)?,
                Op::GtEq => &nothing_comparable | &upper.compare(Op::Lt, v)?,
                Op::Eq => {
                    &(&nothing_comparable | &lower.compare(Op::Gt, v)?)
                        | &upper.compare(Op::Lt, v)?
                }
                Op::StartsWith | Op::NotStartsWith => {
                    let Literal::String(prefix) = v else {
                        return Ok(BooleanBuffer::new_set(n));
                    };
                    let prefix = prefix.as_bytes();
                    if *op == Op::StartsWith {
                        &(&nothing_comparable | &lower.prefix_test(prefix, PrefixTest::CutAbove)?)
                            | &upper.prefix_test(prefix, PrefixTest::CutBelow)?
                    } else {
                        &(&s.no_null & &lower.prefix_test(prefix, PrefixTest::StartsWith)?)
                            & &upper.prefix_test(prefix, PrefixTest::StartsWith)?
                    }
                }
                _ => none(),
            }
        }
        BoundPredicate::Set {
            op: Op::In,
            literals,
            ..
        } => {
            if literals.len() > IN_PREDICATE_LIMIT {
                nothing_comparable
            } else {
                let set = lower.key_set(literals)?;
                &nothing_comparable | &!&lower.any_in_range(upper, &set)
            }
        }
        BoundPredicate::Set { .. } => none(),
    };
    // A missing summary might match anything.
    Ok(&!&cannot | &!&s.present)
}

/// A one-row `partitions` column holding `summaries`.
fn summaries_list(summaries: &[FieldSummary]) -> Result<ListArray> {
    let fields = Fields::from(vec![
        Field::new("contains_null", DataType::Boolean, true),
        Field::new("contains_nan", DataType::Boolean, true),
        Field::new("lower_bound", DataType::Binary, true),
        Field::new("upper_bound", DataType::Binary, true),
    ]);
    let mut nulls = BooleanBuilder::new();
    let mut nans = BooleanBuilder::new();
    let mut lowers = BinaryBuilder::new();
    let mut uppers = BinaryBuilder::new();
    for s in summaries {
        nulls.append_value(s.contains_null);
        nans.append_value(s.contains_nan);
        lowers.append_option(s.lower_bound.as_deref());
        uppers.append_option(s.upper_bound.as_deref());
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(nulls.finish()) as ArrayRef,
        Arc::new(nans.finish()),
        Arc::new(lowers.finish()),
        Arc::new(uppers.finish()),
    ];
    let entries = StructArray::try_new(fields.clone(), columns, None)
        .map_err(|e| Error::Internal(e.to_string()))?;
    ListArray::try_new(
        Arc::new(Field::new("item", DataType::Struct(fields), true)),
        OffsetBuffer::from_lengths([summaries.len()]),
        Arc::new(entries),
        None,
    )
    .map_err(|e| Error::Internal(e.to_string()))
}

#[cfg(test)]
#[path = "manifest_evaluator_tests.rs"]
mod tests;
