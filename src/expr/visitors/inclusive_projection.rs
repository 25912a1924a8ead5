//! Inclusive projection (spec: "Scan Planning"; Java's
//! `Projections.inclusive`): a filter on rows becomes a filter on partition
//! values that holds for the partition of every row the filter matches, so
//! that a partition it rejects holds no matching row.
//!
//! Each predicate goes through every partition field of its column, joined
//! with AND (`d = x` under `bucket[7](d)` and `bucket[5](d)` must match
//! both); a field that allows no projection contributes true, as does a
//! column with no partition field. Call it once per partition spec of the
//! table: each spec has its own partition tuples.

use super::projection::{
    build, fix_inclusive_time, inclusive_range, needs_time_fix, null_check, on_transform_term,
    project, same, transformed, transformed_all, Target,
};
use crate::error::Result;
use crate::expr::predicate::{Bound, BoundPredicate, Op};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::transform::scalar::code_points;
use crate::transform::Transform;
use crate::types::PrimitiveType;

/// The inclusive projection of the bound filter `expr` onto `spec`; the
/// predicates of the result reference partition fields (id, name, result
/// type).
pub fn inclusive_projection(expr: &Bound, spec: &PartitionSpec, schema: &Schema) -> Result<Bound> {
    project(expr, spec, schema, false, project_inclusive)
}

/// One predicate through one partition field; `None`: no projection.
pub fn project_inclusive(p: &BoundPredicate, t: &Target) -> Result<Option<Bound>> {
    if let Some(projected) = on_transform_term(p, t) {
        return Ok(projected);
    }
    match t.transform {
        // Identity keeps every predicate, NaN checks included.
        Transform::Identity => return Ok(Some(same(p, t))),
        // Void partitions hold only nulls: nothing to learn.
        Transform::Void => return Ok(None),
        _ => {}
    }
    if let BoundPredicate::Unary { op, .. } = p {
        return Ok(null_check(*op, t));
    }
    // IN through any other transform: the set of transformed values.
    if let BoundPredicate::Set {
        op: Op::In,
        literals,
        ..
    } = p
    {
        let Some(values) = transformed_all(t.transform, literals)? else {
            return Ok(None);
        };
        let projected = if is_time(t.transform) && needs_time_fix(t) {
            fix_inclusive_time(Op::In, values)
        } else {
            Some((Op::In, values))
        };
        return Ok(projected.map(|(op, values)| build(op, t, values)));
    }
    let BoundPredicate::Literal { op, literal, .. } = p else {
        // NOT IN projects through identity only.
        return Ok(None);
    };
    let (op, b) = (*op, literal);
    let projected = match t.transform {
        // A bucket says nothing about order or inequality.
        Transform::Bucket(_) if op == Op::Eq => transformed(t.transform, b)?.map(|v| (op, v)),
        Transform::Bucket(_) => None,
        Transform::Truncate(width) => match t.source {
            PrimitiveType::String if matches!(op, Op::StartsWith | Op::NotStartsWith) => {
                return starts_with(op, b, width, t)
            }
            PrimitiveType::String | PrimitiveType::Binary => prefix_range(op, b, t.transform)?,
            _ => inclusive_range(op, b, t.transform)?,
        },
        _ => {
            let projected = inclusive_range(op, b, t.transform)?;
            if needs_time_fix(t) {
                return Ok(projected
                    .and_then(|(op, v)| fix_inclusive_time(op, vec![v]))
                    .map(|(op, values)| build(op, t, values)));
            }
            projected
        }
    };
    Ok(projected.map(|(op, v)| build(op, t, vec![v])))
}

fn is_time(t: Transform) -> bool {
    matches!(
        t,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    )
}

/// Strings and binary under truncate: a prefix orders like its value but
/// has no adjacent values, so `x < b` becomes `t <= T(b)` (Java's
/// `truncateArray`).
fn prefix_range(
    op: Op,
    b: &crate::expr::Datum,
    transform: Transform,
) -> Result<Option<(Op, crate::expr::Datum)>> {
    let op = match op {
        Op::Lt | Op::LtEq => Op::LtEq,
        Op::Gt | Op::GtEq => Op::GtEq,
        Op::Eq => Op::Eq,
        _ => return Ok(None),
    };
    Ok(transformed(transform, b)?.map(|v| (op, v)))
}

/// `STARTS WITH` and `NOT STARTS WITH` under `truncate[W]`, by the prefix's
/// length in code points (Java counts UTF-16 units: a prefix with
/// characters beyond the BMP would be misjudged; pitfalls, iceberg-python
/// #3528):
/// - shorter than W: the partition value starts with it exactly when the
///   value does, so the predicate stays;
/// - exactly W: a value starting with it has it as its partition value:
///   `= prefix`, and `NOT STARTS WITH` becomes `!= prefix`;
/// - longer: values starting with it have `T(prefix)` as their partition
///   value's prefix; a value not starting with it may still have any
///   partition value, so `NOT STARTS WITH` has no projection.
fn starts_with(
    op: Op,
    prefix: &crate::expr::Datum,
    width: u32,
    t: &Target,
) -> Result<Option<Bound>> {
    let crate::values::Literal::String(text) = &prefix.value else {
        return Ok(None);
    };
    let length = code_points(text);
    let w = width as usize;
    let projected = match (op, length.cmp(&w)) {
        (_, std::cmp::Ordering::Less) => Some((op, prefix.clone())),
        (Op::StartsWith, std::cmp::Ordering::Equal) => Some((Op::Eq, prefix.clone())),
        (_, std::cmp::Ordering::Equal) => Some((Op::NotEq, prefix.clone())),
        (Op::StartsWith, std::cmp::Ordering::Greater) => {
            transformed(t.transform, prefix)?.map(|v| (Op::StartsWith, v))
        }
        (_, std::cmp::Ordering::Greater) => None,
    };
    Ok(projected.map(|(op, v)| build(op, t, vec![v])))
}
