//! Strict metrics evaluation (Java's `StrictMetricsEvaluator`): for every
//! data file of a decoded manifest, whether every row matches a filter bound
//! to the table schema, as far as its metrics prove. `true` means all rows
//! match; `false` means some row might not.
//!
//! Unlike Java, rows are judged under SQL semantics ([`super::compare`]):
//! a null satisfies no comparison, so `x != c` and `x NOT IN (...)` hold for
//! every row only when the column has no null and the bounds exclude the
//! literals (iceberg-python #3521); an all-null column proves nothing for
//! them. Other corrections:
//! - missing null and NaN counts are unknown, not zero (iceberg-go #1091,
//!   iceberg-cpp #685); a float column needs a known NaN count of 0 before
//!   its bounds prove a comparison, since bounds never hold NaN;
//! - a required column (with required ancestors) has no null, counts or not;
//! - a column whose counts say every value is null may be missing from the
//!   file, its rows then holding the initial-default (iceberg #16692): the
//!   file matches only if the default does too;
//! - `STARTS WITH` and `NOT STARTS WITH` are proven from the bounds (Java
//!   never proves them);
//! - a file with 0 rows matches (vacuously); a negative record count proves
//!   nothing by itself (Java treats it as 0).
//!
//! Like Java, columns below the top level, transforms of columns and
//! columns without metrics prove nothing.

use std::collections::HashMap;

use arrow_buffer::BooleanBuffer;

use super::bounds::Side;
use super::compare::{predicate_holds, Column, PrefixTest};
use super::metrics::{
    and_not, referenced_ids, visit, ColumnMetrics, EntryIndex, FieldInfo, FileMetrics,
};
use crate::error::Result;
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Op};
use crate::spec::schema::Schema;
use crate::transform::Transform;
use crate::types::PrimitiveType;
use crate::values::Literal;

/// Decides which files of a manifest hold only rows matching a filter.
#[derive(Debug, Clone)]
pub struct StrictMetricsEvaluator {
    expr: Bound,
    fields: HashMap<i32, FieldInfo>,
}

impl StrictMetricsEvaluator {
    /// `filter` is bound to `schema` (the table's current schema).
    pub fn new(filter: &Bound, schema: &Schema) -> Result<Self> {
        // Rewriting NOT keeping NaN rows gives an equivalent filter; the
        // plain rewrite would give a stronger one, also sound here.
        let expr = super::rewrite_not::rewrite_not(filter);
        let fields = referenced_ids(&expr)
            .into_iter()
            .map(|id| Ok((id, FieldInfo::of(schema, id)?)))
            .collect::<Result<_>>()?;
        Ok(StrictMetricsEvaluator { expr, fields })
    }

    /// One answer per file: set where every row of the file matches.
    pub fn eval(&self, files: &FileMetrics<'_>) -> Result<BooleanBuffer> {
        let n = files.len;
        let index = EntryIndex::new(*files, self.fields.keys().copied().collect());
        let metrics: HashMap<i32, ColumnMetrics<'_>> = self
            .fields
            .iter()
            .filter(|(_, field)| !field.in_repeated && !field.nested)
            .map(|(id, field)| (*id, ColumnMetrics::new(&index, *id, &field.name, field.ty)))
            .collect();
        let result = visit(&self.expr, n, &mut |p| {
            let field = &self.fields[&p.term().field_id()];
            match metrics.get(&p.term().field_id()) {
                None => Ok(BooleanBuffer::new_unset(n)),
                Some(m) => must_match(p, field, m, n),
            }
        })?;
        let (empty, _) = files.empty_and_unknown_rows();
        Ok(&result | &empty)
    }
}

/// Set where every row of the file matches `p`.
fn must_match(
    p: &BoundPredicate,
    field: &FieldInfo,
    m: &ColumnMetrics<'_>,
    n: usize,
) -> Result<BooleanBuffer> {
    let all = || BooleanBuffer::new_set(n);
    let none = || BooleanBuffer::new_unset(n);
    let is_column = matches!(
        p.term(),
        BoundTerm::Reference(_)
            | BoundTerm::Transform {
                transform: Transform::Identity,
                ..
            }
    );
    let Some(ty) = field.ty.filter(|_| is_column) else {
        // A struct column has no counts; a transform's values are unknown.
        return Ok(none());
    };
    if ty == PrimitiveType::Unknown {
        // v3 `unknown`: always null, without a default.
        return Ok(if predicate_holds(p, None) {
            all()
        } else {
            none()
        });
    }
    let no_nulls = || {
        if field.never_null {
            all()
        } else if field.nested {
            m.no_nulls_nested()
        } else {
            m.no_nulls()
        }
    };
    let clean = || &no_nulls() & &m.no_nans();
    let column = |side: Side| -> Result<Option<Column<'_>>> { Ok(m.bound(side)?.cloned()) };
    let proven = match p {
        BoundPredicate::Unary { op, .. } => match op {
            Op::IsNull => m.nulls_only(),
            Op::NotNull => no_nulls(),
            Op::IsNan => m.nans_only(),
            Op::NotNan => &m.no_nans() | &m.nulls_only(),
            _ => none(),
        },
        BoundPredicate::Literal { op, literal, .. } => {
            let v = &literal.value;
            match op {
                // x < c for every row when upper < c; x > c when lower > c.
                Op::Lt | Op::LtEq | Op::Gt | Op::GtEq => {
                    let side = if matches!(op, Op::Lt | Op::LtEq) {
                        Side::Upper
                    } else {
                        Side::Lower
                    };
                    match column(side)? {
                        Some(bound) => &clean() & &bound.compare(*op, v)?,
                        None => none(),
                    }
                }
                _ => {
                    let (Some(lower), Some(upper)) = (column(Side::Lower)?, column(Side::Upper)?)
                    else {
                        return Ok(none());
                    };
                    match op {
                        Op::Eq => {
                            &(&clean() & &lower.compare(Op::Eq, v)?) & &upper.compare(Op::Eq, v)?
                        }
                        // NaN != c holds: only the non-NaN values, within
                        // the bounds, must differ from c.
                        Op::NotEq => {
                            let outside = &lower.compare(Op::Gt, v)? | &upper.compare(Op::Lt, v)?;
                            &no_nulls() & &(&outside | &m.nans_only())
                        }
                        Op::StartsWith | Op::NotStartsWith => {
                            let Literal::String(prefix) = v else {
                                return Ok(none());
                            };
                            let prefix = prefix.as_bytes();
                            // Values between two strings with the prefix have
                            // it too; values above a bound cut above it, or
                            // below one cut below it, do not.
                            let bounds = if *op == Op::StartsWith {
                                &lower.prefix_test(prefix, PrefixTest::StartsWith)?
                                    & &upper.prefix_test(prefix, PrefixTest::StartsWith)?
                            } else {
                                &lower.prefix_test(prefix, PrefixTest::CutAbove)?
                                    | &upper.prefix_test(prefix, PrefixTest::CutBelow)?
                            };
                            &no_nulls() & &bounds
                        }
                        _ => none(),
                    }
                }
            }
        }
        BoundPredicate::Set { op, literals, .. } => {
            let (Some(lower), Some(upper)) = (column(Side::Lower)?, column(Side::Upper)?) else {
                return Ok(none());
            };
            let set = lower.key_set(literals)?;
            match op {
                // Every value is in the set when both bounds are the same
                // literal of it.
                Op::In => {
                    let (l, u) = (lower.position_in(&set), upper.position_in(&set));
                    let same = super::compare::collect(n, |i| l[i].is_some() && l[i] == u[i]);
                    &clean() & &same
                }
                Op::NotIn => {
                    let outside = !&lower.any_in_range(&upper, &set);
                    &no_nulls() & &(&outside | &m.nans_only())
                }
                _ => none(),
            }
        }
    };
    // Files that may predate the column hold its default in every row.
    Ok(match &field.initial_default {
        Some(d) if !predicate_holds(p, Some(d)) => and_not(&proven, &m.nulls_only()),
        _ => proven,
    })
}

#[cfg(test)]
#[path = "strict_metrics_tests.rs"]
mod tests;
