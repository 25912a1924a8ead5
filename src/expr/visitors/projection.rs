//! What inclusive and strict projection share (spec: "Scan Planning"; Java's
//! `Projections` and `ProjectionUtil`): the walk over a filter and a spec's
//! partition fields, building predicates on partition fields, transforming
//! literals, the one-step boundary adjustments of ordered comparisons, and
//! the compatibility fixes for time partitions written by old Java.

use super::rewrite_not::rewrite_not;
use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op};
use crate::expr::Datum;
use crate::spec::partition::{
    field_result_type, PartitionField, PartitionSpec, PartitionTransform,
};
use crate::spec::schema::Schema;
use crate::transform::{scalar, Transform};
use crate::types::PrimitiveType;
use crate::values::Literal;

/// A partition field that a predicate on its source column projects
/// through, seen as a column of the partition tuple.
#[derive(Debug, Clone)]
pub struct Target {
    pub transform: Transform,
    /// The partition field: its id, name and result type.
    pub reference: BoundReference,
    /// The source column's type.
    pub source: PrimitiveType,
}

/// The projection of one predicate through one partition field: `None`
/// when the transform allows none (inclusive: "might match"; strict: "not
/// known to match").
pub type Rule = fn(&BoundPredicate, &Target) -> Result<Option<Bound>>;

/// The partition fields of `spec` whose source is `source_id`, in spec
/// order; `None` for a transform frazil does not know (it projects nothing).
pub fn targets(
    spec: &PartitionSpec,
    schema: &Schema,
    source_id: i32,
) -> Result<Vec<Option<Target>>> {
    spec.fields
        .iter()
        .filter(|f| f.source_id == source_id)
        .map(|f| target(f, schema))
        .collect()
}

/// `field` as a projection target over `schema`.
pub fn target(field: &PartitionField, schema: &Schema) -> Result<Option<Target>> {
    let PartitionTransform::Known(transform) = &field.transform else {
        return Ok(None);
    };
    let source = schema.field(field.source_id).ok_or_else(|| {
        Error::Validation(format!(
            "partition field {:?} (id {}) has source column id {}, which the schema does not have",
            field.name, field.field_id, field.source_id
        ))
    })?;
    let result = field_result_type(field, &source.field_type)?;
    Ok(Some(Target {
        transform: *transform,
        reference: BoundReference {
            field_id: field.field_id,
            name: field.name.clone(),
            ty: result,
            required: false,
        },
        source: source
            .field_type
            .as_primitive()
            .unwrap_or(PrimitiveType::Unknown),
    }))
}

/// Projects every predicate of `expr` (NOT rewritten away first, so that
/// "cannot project" may stand for true or false) through the partition
/// fields of its column: inclusive joins the projections with AND starting
/// from true, strict with OR starting from false.
pub fn project(
    expr: &Bound,
    spec: &PartitionSpec,
    schema: &Schema,
    strict: bool,
    rule: Rule,
) -> Result<Bound> {
    rewrite_not(expr).try_map(&mut |p| project_predicate(p, spec, schema, strict, rule))
}

fn project_predicate(
    p: &BoundPredicate,
    spec: &PartitionSpec,
    schema: &Schema,
    strict: bool,
    rule: Rule,
) -> Result<Bound> {
    let mut result = if strict { Expr::False } else { Expr::True };
    for target in targets(spec, schema, p.term().field_id())?
        .into_iter()
        .flatten()
    {
        if let Some(projected) = rule(p, &target)? {
            result = if strict {
                Expr::or(result, projected)
            } else {
                Expr::and(result, projected)
            };
        }
    }
    Ok(result)
}

/// The predicate itself on the partition field: for identity, and for a
/// predicate on the very transform the field applies.
pub fn same(p: &BoundPredicate, t: &Target) -> Bound {
    let term = BoundTerm::Reference(t.reference.clone());
    Expr::Predicate(match p {
        BoundPredicate::Unary { op, .. } => BoundPredicate::Unary { op: *op, term },
        BoundPredicate::Literal { op, literal, .. } => BoundPredicate::Literal {
            op: *op,
            term,
            literal: literal.clone(),
        },
        BoundPredicate::Set { op, literals, .. } => BoundPredicate::Set {
            op: *op,
            term,
            literals: literals.clone(),
        },
    })
}

/// A predicate on a transform term (`bucket[16](id) = 3`) projects only
/// through a partition field with the same transform, where it is the same
/// predicate on the field (Java's `projectTransformPredicate`). `None` when
/// the term is a plain column.
pub fn on_transform_term(p: &BoundPredicate, t: &Target) -> Option<Option<Bound>> {
    match p.term() {
        BoundTerm::Reference(_) => None,
        BoundTerm::Transform { transform, .. } => {
            Some((*transform == t.transform).then(|| same(p, t)))
        }
    }
}

/// `IS NULL` and `IS NOT NULL` project through every transform but void
/// (null in, null out; nothing else maps to null); NaN checks only through
/// identity, which the callers handle first.
pub fn null_check(op: Op, t: &Target) -> Option<Bound> {
    matches!(op, Op::IsNull | Op::NotNull).then(|| {
        Expr::Predicate(BoundPredicate::Unary {
            op,
            term: BoundTerm::Reference(t.reference.clone()),
        })
    })
}

/// `op` on the partition field with these values: a set operation keeps a
/// sorted, distinct list, and one value makes it `=` / `!=`, as binding does.
pub fn build(op: Op, t: &Target, mut values: Vec<Datum>) -> Bound {
    let term = BoundTerm::Reference(t.reference.clone());
    if op.is_set() {
        values.sort_by(|a, b| a.cmp_value(b));
        values.dedup_by(|a, b| a.cmp_value(b).is_eq());
        if values.len() != 1 {
            return Expr::Predicate(BoundPredicate::Set {
                op,
                term,
                literals: values,
            });
        }
    }
    let op = match op {
        Op::In => Op::Eq,
        Op::NotIn => Op::NotEq,
        other => other,
    };
    match values.pop() {
        Some(literal) => Expr::Predicate(BoundPredicate::Literal { op, term, literal }),
        // No value: IN () is false, NOT IN () true (callers never build it).
        None if op == Op::Eq => Expr::False,
        None => Expr::True,
    }
}

/// `transform(value)`, or `None` when the result does not fit its type
/// (truncating near a type's minimum): no projection is then made, which
/// is always correct, where Java wraps around.
pub fn transformed(transform: Transform, value: &Datum) -> Result<Option<Datum>> {
    match scalar::apply(transform, value) {
        Ok(v) => Ok(v),
        Err(Error::InvalidValue(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Every value transformed, or `None` when one cannot be.
pub fn transformed_all(transform: Transform, values: &[Datum]) -> Result<Option<Vec<Datum>>> {
    let mut out = Vec::with_capacity(values.len());
    for v in values {
        match transformed(transform, v)? {
            Some(t) => out.push(t),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// The adjacent value above (`delta` 1) or below (-1) in an integer-like
/// type: turns `x < 15` into `x <= 14`. `None` past the type's range (`x <
/// MIN` holds for nothing, `x <= MAX` for every value: neither needs a
/// bound) or for types without adjacent values.
pub fn step(value: &Datum, delta: i32) -> Option<Datum> {
    let literal = match value.value {
        Literal::Int(v) => Literal::Int(v.checked_add(delta)?),
        Literal::Date(v) => Literal::Date(v.checked_add(delta)?),
        Literal::Long(v) => Literal::Long(v.checked_add(delta.into())?),
        Literal::Timestamp(v) => Literal::Timestamp(v.checked_add(delta.into())?),
        Literal::Timestamptz(v) => Literal::Timestamptz(v.checked_add(delta.into())?),
        Literal::TimestampNs(v) => Literal::TimestampNs(v.checked_add(delta.into())?),
        Literal::TimestamptzNs(v) => Literal::TimestamptzNs(v.checked_add(delta.into())?),
        Literal::Decimal(v) => Literal::Decimal(v.checked_add(delta.into())?),
        _ => return None,
    };
    // Decimals must stay within their precision.
    Datum::new(value.ty, literal).ok()
}

/// The inclusive projection of an ordered comparison through a transform
/// that preserves order and maps adjacent values together (truncate of
/// numbers, the time transforms): `x < b` becomes `t <= T(b - 1)`, `x > b`
/// `t >= T(b + 1)` (Java's `truncateInteger` / `truncateLong` /
/// `truncateDecimal`).
pub fn inclusive_range(op: Op, b: &Datum, transform: Transform) -> Result<Option<(Op, Datum)>> {
    let (op, bound) = match op {
        Op::Lt => (Op::LtEq, step(b, -1)),
        Op::LtEq => (Op::LtEq, Some(b.clone())),
        Op::Gt => (Op::GtEq, step(b, 1)),
        Op::GtEq => (Op::GtEq, Some(b.clone())),
        Op::Eq => (Op::Eq, Some(b.clone())),
        _ => return Ok(None),
    };
    let Some(bound) = bound else { return Ok(None) };
    Ok(transformed(transform, &bound)?.map(|v| (op, v)))
}

/// The strict projection of the same: `t < T(b)` guarantees `x < b`, `t <
/// T(b + 1)` guarantees `x <= b`, `t != T(b)` guarantees `x != b`; nothing
/// guarantees `x = b` (Java's `truncateIntegerStrict` and siblings).
pub fn strict_range(op: Op, b: &Datum, transform: Transform) -> Result<Option<(Op, Datum)>> {
    let (op, bound) = match op {
        Op::Lt => (Op::Lt, Some(b.clone())),
        Op::LtEq => (Op::Lt, step(b, 1)),
        Op::Gt => (Op::Gt, Some(b.clone())),
        Op::GtEq => (Op::Gt, step(b, -1)),
        Op::NotEq => (Op::NotEq, Some(b.clone())),
        _ => return Ok(None),
    };
    let Some(bound) = bound else { return Ok(None) };
    Ok(transformed(transform, &bound)?.map(|v| (op, v)))
}

/// A partition value of a time transform as its count (int, or date for
/// `day`), and back.
fn count(value: &Datum) -> Option<i32> {
    match value.value {
        Literal::Int(v) | Literal::Date(v) => Some(v),
        _ => None,
    }
}

fn with_count(value: &Datum, v: i32) -> Datum {
    let literal = match value.value {
        Literal::Date(_) => Literal::Date(v),
        _ => Literal::Int(v),
    };
    Datum {
        ty: value.ty,
        value: literal,
    }
}

/// Each negative value `v` together with `v + 1`.
fn with_successors_of_negatives(values: Vec<Datum>) -> Vec<Datum> {
    let mut out = values.clone();
    for v in &values {
        if let Some(n) = count(v).filter(|n| *n < 0) {
            out.push(with_count(v, n + 1));
        }
    }
    out
}

/// Java before 0.11 wrote pre-1970 day, month, year and hour partition
/// values one too large (it rounded towards zero): `day(1969-12-31
/// 10:00)` was 0. An inclusive projection widens to keep such files
/// (Java's `ProjectionUtil.fixInclusiveTimeProjection`): a negative upper
/// bound moves up by one, `= v` (v < 0) also matches v + 1; `!=` and `NOT
/// IN` have no inclusive projection.
pub fn fix_inclusive_time(op: Op, values: Vec<Datum>) -> Option<(Op, Vec<Datum>)> {
    let first = values.first().and_then(count);
    match (op, first) {
        (Op::Lt | Op::LtEq, Some(v)) if v < 0 => Some((op, vec![with_count(&values[0], v + 1)])),
        (Op::Eq, Some(v)) if v < 0 => {
            let both = vec![values[0].clone(), with_count(&values[0], v + 1)];
            Some((Op::In, both))
        }
        (Op::In, _) => Some((Op::In, with_successors_of_negatives(values))),
        (Op::NotEq | Op::NotIn, _) => None,
        _ => Some((op, values)),
    }
}

/// The strict counterpart (Java's `fixStrictTimeProjection`): a lower
/// bound at or below 0 moves up by one, since an old file in partition v
/// may hold values of v - 1; `!= v` (v < 0) must also exclude v + 1; `=`
/// and `IN` have no strict projection.
pub fn fix_strict_time(op: Op, values: Vec<Datum>) -> Option<(Op, Vec<Datum>)> {
    let first = values.first().and_then(count);
    match (op, first) {
        (Op::Gt | Op::GtEq, Some(v)) if v <= 0 => Some((op, vec![with_count(&values[0], v + 1)])),
        (Op::NotEq, Some(v)) if v < 0 => {
            let both = vec![values[0].clone(), with_count(&values[0], v + 1)];
            Some((Op::NotIn, both))
        }
        (Op::NotIn, _) => Some((Op::NotIn, with_successors_of_negatives(values))),
        (Op::Eq | Op::In, _) => None,
        _ => Some((op, values)),
    }
}

/// Whether the time transforms on this source need the pre-0.11 fixes:
/// all but `day` of a date, which was always the day count itself.
pub fn needs_time_fix(t: &Target) -> bool {
    !(t.transform == Transform::Day && t.source == PrimitiveType::Date)
}

#[cfg(test)]
#[path = "projection_tests.rs"]
mod tests;
