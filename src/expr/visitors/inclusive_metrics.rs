//! Inclusive metrics evaluation (spec: "Scan Planning", "Manifests"; Java's
//! `InclusiveMetricsEvaluator`): for every data file of a decoded manifest,
//! whether it might hold a row matching a filter bound to the table schema,
//! from its record count, value / null / NaN counts and lower / upper bounds.
//! A file answered `false` cannot hold a matching row and is skipped.
//!
//! Java's rules, with these corrections (each a pitfall in the notes):
//! - missing counts are unknown, never zero; a negative record count is
//!   unknown (Java: -1 from imported files), 0 rows match nothing;
//! - NOT is pushed down keeping NaN rows ([`rewrite_not`](super::rewrite_not::rewrite_not)), so
//!   `NOT (x < c)` keeps files whose NaN rows match it;
//! - struct columns have no counts (Parquet writes none): `s IS NOT NULL` is
//!   never pruned on them; columns inside lists and maps have no metrics;
//! - a leaf nested in structs whose value count is below the record count
//!   is null in the missing rows (Java's Parquet metrics leave out rows
//!   whose parent struct is null; Java then prunes `IS NULL` and `NOT NAN`
//!   wrongly);
//! - a column whose counts say every value is null may be missing from the
//!   file, whose rows then hold the column's initial-default (iceberg
//!   #16692): such a file might match when the default does;
//! - string bounds compare as bytes, with `STARTS WITH` on truncated bounds
//!   cutting each bound to the prefix's length; bounds of promoted columns
//!   are read in their old width ([`super::bounds`]).
//!
//! Value semantics: [`super::compare`].

use std::collections::HashMap;

use arrow_array::ArrayRef;
use arrow_buffer::BooleanBuffer;

use super::bounds::Side;
use super::compare::{predicate_holds, Column, PrefixTest};
use super::metrics::{
    and_not, referenced_ids, transform_bounds, visit, ColumnMetrics, EntryIndex, FieldInfo,
    FileMetrics, IN_PREDICATE_LIMIT,
};
use crate::error::Result;
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Op};
use crate::spec::schema::Schema;
use crate::transform::Transform;
use crate::types::PrimitiveType;
use crate::values::Literal;

/// Decides which files of a manifest might hold rows matching a filter.
#[derive(Debug, Clone)]
pub struct InclusiveMetricsEvaluator {
    expr: Bound,
    fields: HashMap<i32, FieldInfo>,
}

impl InclusiveMetricsEvaluator {
    /// `filter` is bound to `schema` (the table's current schema).
    pub fn new(filter: &Bound, schema: &Schema) -> Result<Self> {
        let expr = super::rewrite_not::rewrite_not(filter);
        let fields = referenced_ids(&expr)
            .into_iter()
            .map(|id| Ok((id, FieldInfo::of(schema, id)?)))
            .collect::<Result<_>>()?;
        Ok(InclusiveMetricsEvaluator { expr, fields })
    }

    /// One answer per file: set where the file might hold a matching row.
    pub fn eval(&self, files: &FileMetrics<'_>) -> Result<BooleanBuffer> {
        let n = files.len;
        let index = EntryIndex::new(*files, self.fields.keys().copied().collect());
        let metrics: HashMap<i32, ColumnMetrics<'_>> = self
            .fields
            .iter()
            .filter(|(_, field)| !field.in_repeated)
            .map(|(id, field)| (*id, ColumnMetrics::new(&index, *id, &field.name, field.ty)))
            .collect();
        let result = visit(&self.expr, n, &mut |p| {
            let field = &self.fields[&p.term().field_id()];
            match metrics.get(&p.term().field_id()) {
                None => Ok(BooleanBuffer::new_set(n)),
                Some(m) => might_match(p, field, m, n),
            }
        })?;
        let (empty, unknown) = files.empty_and_unknown_rows();
        Ok(&and_not(&result, &empty) | &unknown)
    }
}

/// The bounds of an order-preserving transform of the column, from the
/// column's bounds (`t(lower)` and `t(upper)`); None for other terms.
fn transformed_bounds(
    term: &BoundTerm,
    field: &FieldInfo,
    m: &ColumnMetrics<'_>,
) -> Result<Option<[ArrayRef; 2]>> {
    let BoundTerm::Transform { transform, .. } = term else {
        return Ok(None);
    };
    if *transform == Transform::Identity || !transform.preserves_order() {
        return Ok(None);
    }
    let (Some(lower), Some(upper), Some(source)) = (m.lower()?, m.upper()?, field.ty) else {
        return Ok(None);
    };
    Ok(Some([
        transform_bounds(*transform, lower, source)?,
        transform_bounds(*transform, upper, source)?,
    ]))
}

fn is_column(term: &BoundTerm) -> bool {
    matches!(
        term,
        BoundTerm::Reference(_)
            | BoundTerm::Transform {
                transform: Transform::Identity,
                ..
            }
    )
}

/// Set where the file might hold a row matching `p`.
fn might_match(
    p: &BoundPredicate,
    field: &FieldInfo,
    m: &ColumnMetrics<'_>,
    n: usize,
) -> Result<BooleanBuffer> {
    let all = || BooleanBuffer::new_set(n);
    let none = || BooleanBuffer::new_unset(n);
    let term = p.term();
    let Some(ty) = field.ty else {
        // A struct (list, map) column: no counts, no bounds.
        return Ok(all());
    };
    if ty == PrimitiveType::Unknown {
        // v3 `unknown`: always null, without a default.
        return Ok(if predicate_holds(p, None) {
            all()
        } else {
            none()
        });
    }
    let nulls_only = m.nulls_only();
    // Rows that may be files written before the column existed, holding
    // its initial-default: they might match when the default does.
    let default_rows = match &field.initial_default {
        Some(d) if !is_column(term) || predicate_holds(p, Some(d)) => nulls_only.clone(),
        _ => none(),
    };
    let cannot = match p {
        BoundPredicate::Unary { op, .. } => match op {
            // Every transform maps null to null; only order-preserving ones
            // keep non-null values non-null (Java: isNonNullPreserving).
            Op::IsNull if field.never_null => all(),
            Op::IsNull => match term {
                BoundTerm::Transform { transform, .. } if !transform.preserves_order() => none(),
                _ => no_nulls(field, m, n),
            },
            Op::NotNull => nulls_only,
            Op::IsNan if is_column(term) => &nulls_only | &m.no_nans(),
            Op::IsNan => nulls_only,
            // Rows left out of a nested leaf's counts are null, and null is not NaN.
            Op::NotNan if is_column(term) && field.nested => {
                &m.nans_only() & &no_nulls(field, m, n)
            }
            Op::NotNan if is_column(term) => m.nans_only(),
            _ => none(),
        },
        BoundPredicate::Literal { op, literal, .. } => {
            let transformed = transformed_bounds(term, field, m)?;
            let bound = |side: Side| term_bound(term, m, transformed.as_ref(), side);
            let v = &literal.value;
            match op {
                Op::NotEq => none(),
                // Truncate must be rewritten by binding; a transform's
                // values cannot be compared with a prefix (Java).
                Op::StartsWith if !is_column(term) => none(),
                Op::StartsWith | Op::NotStartsWith => {
                    let Literal::String(prefix) = v else {
                        return Ok(all());
                    };
                    let prefix = prefix.as_bytes();
                    let (lower, upper) = (bound(Side::Lower)?, bound(Side::Upper)?);
                    if *op == Op::StartsWith {
                        let mut cannot = nulls_only;
                        if let Some(lower) = lower {
                            cannot = &cannot | &lower.prefix_test(prefix, PrefixTest::CutAbove)?;
                        }
                        if let Some(upper) = upper {
                            cannot = &cannot | &upper.prefix_test(prefix, PrefixTest::CutBelow)?;
                        }
                        cannot
                    } else {
                        // Only when every value starts with the prefix: both
                        // bounds do, and there is no null (Java: mayContainNull).
                        match (lower, upper) {
                            (Some(lower), Some(upper)) => {
                                &(&no_nulls(field, m, n)
                                    & &lower.prefix_test(prefix, PrefixTest::StartsWith)?)
                                    & &upper.prefix_test(prefix, PrefixTest::StartsWith)?
                            }
                            _ => none(),
                        }
                    }
                }
                _ => {
                    let mut cannot = &nulls_only | &m.nans_only();
                    // x < c cannot match where lower >= c; x > c where
                    // upper <= c; x = c where either.
                    let tests: &[(Side, Op)] = match op {
                        Op::Lt => &[(Side::Lower, Op::GtEq)],
                        Op::LtEq => &[(Side::Lower, Op::Gt)],
                        Op::Gt => &[(Side::Upper, Op::LtEq)],
                        Op::GtEq => &[(Side::Upper, Op::Lt)],
                        Op::Eq => &[(Side::Lower, Op::Gt), (Side::Upper, Op::Lt)],
                        _ => &[],
                    };
                    for (side, test) in tests {
                        if let Some(b) = bound(*side)? {
                            cannot = &cannot | &b.compare(*test, v)?;
                        }
                    }
                    cannot
                }
            }
        }
        BoundPredicate::Set { op, literals, .. } => match op {
            Op::In => {
                let mut cannot = &nulls_only | &m.nans_only();
                if literals.len() <= IN_PREDICATE_LIMIT {
                    let transformed = transformed_bounds(term, field, m)?;
                    let bound = |side: Side| term_bound(term, m, transformed.as_ref(), side);
                    if let (Some(lower), Some(upper)) = (bound(Side::Lower)?, bound(Side::Upper)?) {
                        let set = lower.key_set(literals)?;
                        cannot = &cannot | &!&lower.any_in_range(&upper, &set);
                    }
                }
                cannot
            }
            _ => none(),
        },
    };
    Ok(&!&cannot | &default_rows)
}

/// The lower or upper bounds of the term's values, when known: the
/// column's own, or those `transformed` from them.
fn term_bound<'c>(
    term: &BoundTerm,
    m: &'c ColumnMetrics<'_>,
    transformed: Option<&'c [ArrayRef; 2]>,
    side: Side,
) -> Result<Option<Column<'c>>> {
    if let Some(arrays) = transformed {
        let array = &arrays[if side == Side::Lower { 0 } else { 1 }];
        return Column::new(array.as_ref()).map(Some);
    }
    if !is_column(term) {
        return Ok(None);
    }
    Ok(m.bound(side)?.cloned())
}

/// Set where the column is known to hold no null.
fn no_nulls(field: &FieldInfo, m: &ColumnMetrics<'_>, n: usize) -> BooleanBuffer {
    if field.never_null {
        BooleanBuffer::new_set(n)
    } else if field.nested {
        m.no_nulls_nested()
    } else {
        m.no_nulls()
    }
}

#[cfg(test)]
#[path = "inclusive_metrics_tests.rs"]
mod tests;
