//! Strict projection (spec: "Scan Planning"; Java's `Projections.strict`):
//! a filter on rows becomes a filter on partition values such that every
//! row of a partition it accepts matches the filter.
//!
//! Each predicate goes through every partition field of its column, joined
//! with OR (`ts > x` under `day(ts)` and `hour(ts)`: either guarantee is
//! enough); a field that allows no projection contributes false, as does a
//! column with no partition field. Call it once per partition spec.

use std::cmp::Ordering;

use super::projection::{
    build, fix_strict_time, needs_time_fix, null_check, on_transform_term, project, same,
    strict_range, transformed, transformed_all, Target,
};
use crate::error::Result;
use crate::expr::predicate::{Bound, BoundPredicate, Op};
use crate::expr::Datum;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::transform::scalar::code_points;
use crate::transform::Transform;
use crate::types::PrimitiveType;
use crate::values::Literal;

/// The strict projection of the bound filter `expr` onto `spec`; the
/// predicates of the result reference partition fields.
pub fn strict_projection(expr: &Bound, spec: &PartitionSpec, schema: &Schema) -> Result<Bound> {
    project(expr, spec, schema, true, project_strict)
}

/// One predicate through one partition field; `None`: no projection.
pub fn project_strict(p: &BoundPredicate, t: &Target) -> Result<Option<Bound>> {
    if let Some(projected) = on_transform_term(p, t) {
        return Ok(projected);
    }
    match t.transform {
        Transform::Identity => return Ok(Some(same(p, t))),
        // A void partition value is null whatever the row holds.
        Transform::Void => return Ok(None),
        _ => {}
    }
    let time = matches!(
        t.transform,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    );
    let fix = time && needs_time_fix(t);
    let finish = |projected: Option<(Op, Vec<Datum>)>| -> Option<Bound> {
        let projected = if fix {
            projected.and_then(|(op, values)| fix_strict_time(op, values))
        } else {
            projected
        };
        projected.map(|(op, values)| build(op, t, values))
    };
    match p {
        BoundPredicate::Unary { op, .. } => Ok(null_check(*op, t)),
        // A partition value outside the transformed set holds only values
        // outside the set.
        BoundPredicate::Set {
            op: Op::NotIn,
            literals,
            ..
        } => Ok(finish(
            transformed_all(t.transform, literals)?.map(|values| (Op::NotIn, values)),
        )),
        // Adjacent values share a partition: IN is never guaranteed.
        BoundPredicate::Set { .. } => Ok(None),
        BoundPredicate::Literal { op, literal, .. } => {
            let single = match t.transform {
                Transform::Bucket(_) if *op == Op::NotEq => {
                    transformed(t.transform, literal)?.map(|v| (Op::NotEq, v))
                }
                Transform::Bucket(_) => None,
                Transform::Truncate(width) => match t.source {
                    PrimitiveType::String if matches!(op, Op::StartsWith | Op::NotStartsWith) => {
                        starts_with(*op, literal, width, t.transform)?
                    }
                    PrimitiveType::String | PrimitiveType::Binary => {
                        prefix_range(*op, literal, t.transform)?
                    }
                    _ => strict_range(*op, literal, t.transform)?,
                },
                _ => strict_range(*op, literal, t.transform)?,
            };
            Ok(finish(single.map(|(op, v)| (op, vec![v]))))
        }
    }
}

/// Strings and binary under truncate (Java's `truncateArrayStrict`): a
/// partition value below `T(b)` holds only values below `b`.
fn prefix_range(op: Op, b: &Datum, transform: Transform) -> Result<Option<(Op, Datum)>> {
    let op = match op {
        Op::Lt | Op::LtEq => Op::Lt,
        Op::Gt | Op::GtEq => Op::Gt,
        Op::NotEq => Op::NotEq,
        _ => return Ok(None),
    };
    Ok(transformed(transform, b)?.map(|v| (op, v)))
}

/// `STARTS WITH` / `NOT STARTS WITH` under `truncate[W]`, by the prefix's
/// length in code points: shorter than W keeps the predicate, exactly W is
/// `=` / `!=`; a longer prefix cannot be guaranteed by a W-long partition
/// value, but a partition value not starting with `T(prefix)` holds no
/// value starting with the prefix.
fn starts_with(
    op: Op,
    prefix: &Datum,
    width: u32,
    transform: Transform,
) -> Result<Option<(Op, Datum)>> {
    let Literal::String(text) = &prefix.value else {
        return Ok(None);
    };
    Ok(match (op, code_points(text).cmp(&(width as usize))) {
        (_, Ordering::Less) => Some((op, prefix.clone())),
        (Op::StartsWith, Ordering::Equal) => Some((Op::Eq, prefix.clone())),
        (_, Ordering::Equal) => Some((Op::NotEq, prefix.clone())),
        (Op::StartsWith, Ordering::Greater) => None,
        (_, Ordering::Greater) => transformed(transform, prefix)?.map(|v| (Op::NotStartsWith, v)),
    })
}
