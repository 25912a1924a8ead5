//! Inclusive metrics evaluation (spec: "Scan Planning", "Manifests"; Java's
//! `InclusiveMetricsEvaluator`): for every data file of a decoded manifest,
//! whether it might hold a row matching a filter bound to the table schema,
//! from its record count, value / null / NaN counts and lower / upper bounds.
//! A file answered `false` cannot hold a matching row and is skipped.
//!
//! Java's rules, with these corrections (each a pitfall in the notes):
//! - missing counts are unknown, never zero; a negative record count is
//!   unknown (Java: -1 from imported files), 0 rows match nothing;
//! - NOT is pushed down keeping NaN rows ([`rewrite_not_keep_nan`]), so
//!   `NOT (x < c)` keeps files whose NaN rows match it;
//! - struct columns have no counts (Parquet writes none): `s IS NOT NULL` is
//!   never pruned on them; columns inside lists and maps have no metrics;
//! - a column whose counts say every value is null may be missing from the
//!   file, whose rows then hold the column's initial-default (iceberg
//!   #16692): such a file might match when the default does;
//! - string bounds compare as bytes, with `STARTS WITH` on truncated bounds
//!   cutting each bound to the prefix's length; bounds of promoted columns
//!   are read in their old width ([`super::metrics::decode_bounds`]).
//!
//! Value semantics: [`super::compare`].

use std::collections::HashMap;

use arrow_buffer::BooleanBuffer;

use super::compare::{predicate_holds, Column, PrefixTest};
use super::metrics::{
    and_not, referenced_ids, rewrite_not_keep_nan, transform_bounds, visit, ColumnMetrics,
    FieldInfo, FileMetrics, IN_PREDICATE_LIMIT,
};
use crate::error::Result;
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Op};
use crate::spec::schema::Schema;
use crate::transform::Transform;
use crate::types::PrimitiveType;

/// Decides which files of a manifest might hold rows matching a filter.
#[derive(Debug, Clone)]
pub struct InclusiveMetricsEvaluator {
    expr: Bound,
    fields: HashMap<i32, FieldInfo>,
}

impl InclusiveMetricsEvaluator {
    /// `filter` is bound to `schema` (the table's current schema).
    pub fn new(filter: &Bound, schema: &Schema) -> Result<Self> {
        let expr = rewrite_not_keep_nan(filter);
        let fields = referenced_ids(&expr)
            .into_iter()
            .map(|id| Ok((id, FieldInfo::of(schema, id)?)))
            .collect::<Result<_>>()?;
        Ok(InclusiveMetricsEvaluator { expr, fields })
    }

    /// One answer per file: set where the file might hold a matching row.
    pub fn eval(&self, files: &FileMetrics<'_>) -> Result<BooleanBuffer> {
        let n = files.len;
        let mut metrics = HashMap::with_capacity(self.fields.len());
        for (id, field) in &self.fields {
            if field.in_repeated {
                continue;
            }
            let ty = field.ty.filter(|_| self.needs_bounds(*id));
            metrics.insert(*id, ColumnMetrics::gather(files, *id, &field.name, ty)?);
        }
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

    fn needs_bounds(&self, field_id: i32) -> bool {
        self.expr
            .predicates()
            .iter()
            .any(|p| p.term().field_id() == field_id && !p.op().is_unary())
    }
}

/// The bounds of the term's values, when they can be known: a column's own
/// bounds, or those of an order-preserving transform of it.
fn term_bounds(
    term: &BoundTerm,
    field: &FieldInfo,
    m: &ColumnMetrics,
) -> Result<Option<(arrow_array::ArrayRef, arrow_array::ArrayRef)>> {
    let (Some(lower), Some(upper)) = (&m.lower, &m.upper) else {
        return Ok(None);
    };
    match term {
        BoundTerm::Reference(_)
        | BoundTerm::Transform {
            transform: Transform::Identity,
            ..
        } => Ok(Some((lower.clone(), upper.clone()))),
        BoundTerm::Transform { transform, .. } if transform.preserves_order() => {
            let source = field.ty.unwrap_or(PrimitiveType::Unknown);
            Ok(Some((
                transform_bounds(*transform, lower, source)?,
                transform_bounds(*transform, upper, source)?,
            )))
        }
        BoundTerm::Transform { .. } => Ok(None),
    }
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
    m: &ColumnMetrics,
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
                _ => no_nulls(field, m),
            },
            Op::NotNull => nulls_only,
            Op::IsNan if is_column(term) => &nulls_only | &m.no_nans(),
            Op::IsNan => nulls_only,
            Op::NotNan if is_column(term) => m.nans_only(),
            _ => none(),
        },
        BoundPredicate::Literal { op, literal, .. } => {
            let bounds = term_bounds(term, field, m)?;
            let cols = match &bounds {
                Some((l, u)) => Some((Column::new(l.as_ref())?, Column::new(u.as_ref())?)),
                None => None,
            };
            match op {
                Op::NotEq => none(),
                // Truncate must be rewritten by binding; a transform's
                // values cannot be compared with a prefix (Java).
                Op::StartsWith if !is_column(term) => none(),
                Op::StartsWith => {
                    let crate::values::Literal::String(prefix) = &literal.value else {
                        return Ok(all());
                    };
                    let mut cannot = nulls_only;
                    if let Some((lower, upper)) = &cols {
                        let prefix = prefix.as_bytes();
                        cannot = &cannot | &lower.prefix_test(prefix, PrefixTest::CutAbove)?;
                        cannot = &cannot | &upper.prefix_test(prefix, PrefixTest::CutBelow)?;
                    }
                    cannot
                }
                Op::NotStartsWith => {
                    // Only when every value starts with the prefix: both
                    // bounds do, and there is no null (Java: mayContainNull).
                    let crate::values::Literal::String(prefix) = &literal.value else {
                        return Ok(all());
                    };
                    match &cols {
                        Some((lower, upper)) => {
                            let prefix = prefix.as_bytes();
                            &(&no_nulls(field, m)
                                & &lower.prefix_test(prefix, PrefixTest::StartsWith)?)
                                & &upper.prefix_test(prefix, PrefixTest::StartsWith)?
                        }
                        None => none(),
                    }
                }
                _ => {
                    let mut cannot = &nulls_only | &m.nans_only();
                    if let Some((lower, upper)) = &cols {
                        let v = &literal.value;
                        let out = match op {
                            Op::Lt => lower.compare(Op::GtEq, v)?,
                            Op::LtEq => lower.compare(Op::Gt, v)?,
                            Op::Gt => upper.compare(Op::LtEq, v)?,
                            Op::GtEq => upper.compare(Op::Lt, v)?,
                            Op::Eq => &lower.compare(Op::Gt, v)? | &upper.compare(Op::Lt, v)?,
                            _ => none(),
                        };
                        cannot = &cannot | &out;
                    }
                    cannot
                }
            }
        }
        BoundPredicate::Set { op, literals, .. } => match op {
            Op::In => {
                let mut cannot = &nulls_only | &m.nans_only();
                if literals.len() <= IN_PREDICATE_LIMIT {
                    if let Some((l, u)) = term_bounds(term, field, m)? {
                        let (lower, upper) = (Column::new(l.as_ref())?, Column::new(u.as_ref())?);
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

/// Set where the column is known to hold no null.
fn no_nulls(field: &FieldInfo, m: &ColumnMetrics) -> BooleanBuffer {
    if field.never_null {
        BooleanBuffer::new_set(m.null_counts.len())
    } else {
        m.no_nulls()
    }
}

#[cfg(test)]
#[path = "inclusive_metrics_tests.rs"]
mod tests;
