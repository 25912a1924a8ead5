//! A bound filter evaluated on one row of values (Java's `Evaluator`): what
//! the residual evaluator asks of a partition tuple, and what tests ask of
//! rows.
//!
//! Semantics, shared with every projection and metrics evaluator:
//!
//! - a null value satisfies `IS NULL`, `IS NOT NAN` and the negative
//!   operations `!=`, `NOT IN`, `NOT STARTS WITH` (Java's evaluator computes
//!   those as the negation of `=`, `IN`, `STARTS WITH`); it satisfies no
//!   ordered comparison, `=`, `IN` or `STARTS WITH`. Java's evaluator orders
//!   nulls first, so that `null < 5` holds there; that is a bug not copied
//!   (iceberg-python #3817);
//! - `NOT` negates the operation beneath it (`NOT x < 5` is `x >= 5`),
//!   exactly as [`super::rewrite_not::rewrite_not`] rewrites it, so that an
//!   expression and its rewritten form always agree: a null `x` matches
//!   neither `x < 5` nor `NOT x < 5`, like SQL's unknown;
//! - values compare in Iceberg's order ([`Datum::cmp_value`]): NaN is above
//!   every number (`NaN > 5` holds, `NaN = NaN` too, as in Java and Spark),
//!   -0.0 is below 0.0, strings compare by code point.
//!
//! A value is promoted to its column's type where the spec allows (an old
//! `int` partition value of a column now `long`); any other type is refused.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundPredicate, BoundTerm, Expr, Op};
use crate::expr::Datum;
use crate::transform::scalar;
use crate::types::PrimitiveType;
use crate::values::Literal;

/// Whether `expr` holds for the row whose values `values` gives by field id
/// (`None` for null).
pub fn eval_row(expr: &Bound, values: &dyn Fn(i32) -> Option<Datum>) -> Result<bool> {
    eval(expr, values, false)
}

fn eval(expr: &Bound, values: &dyn Fn(i32) -> Option<Datum>, negated: bool) -> Result<bool> {
    Ok(match expr {
        Expr::True => !negated,
        Expr::False => negated,
        // NOT (a AND b) is NOT a OR NOT b, and so on down to the predicates.
        Expr::And(a, b) if negated => eval(a, values, true)? || eval(b, values, true)?,
        Expr::And(a, b) => eval(a, values, false)? && eval(b, values, false)?,
        Expr::Or(a, b) if negated => eval(a, values, true)? && eval(b, values, true)?,
        Expr::Or(a, b) => eval(a, values, false)? || eval(b, values, false)?,
        Expr::Not(a) => eval(a, values, !negated)?,
        Expr::Predicate(p) => {
            let value = term_value(p.term(), values)?;
            let op = if negated { p.op().negate() } else { p.op() };
            test(op, p, value.as_ref())?
        }
    })
}

/// The value of a term in the row: the column's value, promoted to its
/// type, or the transform of it.
pub fn term_value(
    term: &BoundTerm,
    values: &dyn Fn(i32) -> Option<Datum>,
) -> Result<Option<Datum>> {
    let reference = term.reference();
    let Some(value) = values(reference.field_id) else {
        return Ok(None);
    };
    let value = promote(value, reference.ty).map_err(|e| {
        Error::TypeMismatch(format!(
            "column {} (field {}): {e}",
            reference.name, reference.field_id
        ))
    })?;
    match term {
        BoundTerm::Reference(_) => Ok(Some(value)),
        BoundTerm::Transform { transform, .. } => scalar::apply(*transform, &value),
    }
}

/// `value` as a datum of `ty`: the same, or widened as the spec's type
/// promotion allows (int to long, float to double, a decimal's precision;
/// date and int are both day counts).
pub fn promote(value: Datum, ty: PrimitiveType) -> Result<Datum> {
    use PrimitiveType as P;
    if value.ty == ty || ty == P::Unknown {
        return Ok(value);
    }
    let literal = match (value.value, ty) {
        (Literal::Int(v), P::Long) => Literal::Long(v.into()),
        (Literal::Int(v), P::Date) => Literal::Date(v),
        (Literal::Date(v), P::Int) => Literal::Int(v),
        (Literal::Float(v), P::Double) => Literal::Double(v.into()),
        (Literal::Decimal(v), P::Decimal { scale, .. }) if matches!(value.ty, P::Decimal { scale: s, .. } if s == scale) => {
            Literal::Decimal(v)
        }
        (other, _) => {
            return Err(Error::TypeMismatch(format!(
                "a {} value ({other}) is not a value of type {ty}",
                value.ty
            )))
        }
    };
    Datum::new(ty, literal)
}

/// Whether `op` (the predicate's own, or its negation) holds for `value`
/// with the predicate's literals.
pub fn test(op: Op, predicate: &BoundPredicate, value: Option<&Datum>) -> Result<bool> {
    let literal = || match predicate {
        BoundPredicate::Literal { literal, .. } => Ok(literal),
        other => Err(Error::Internal(format!(
            "{} without a value: {other}",
            op.symbol()
        ))),
    };
    let in_set = |v: &Datum| match predicate {
        BoundPredicate::Set { literals, .. } => {
            Ok(literals.binary_search_by(|l| l.cmp_value(v)).is_ok())
        }
        // `x = 5` negated is `x != 5`, and the other way round.
        BoundPredicate::Literal { literal, .. } => Ok(literal.cmp_value(v).is_eq()),
        other => Err(Error::Internal(format!(
            "{} without values: {other}",
            op.symbol()
        ))),
    };
    let compare = |v: &Datum, accept: fn(Ordering) -> bool| -> Result<bool> {
        Ok(accept(v.cmp_value(literal()?)))
    };
    Ok(match (op, value) {
        (Op::IsNull, v) => v.is_none(),
        (Op::NotNull, v) => v.is_some(),
        (Op::IsNan, v) => v.is_some_and(Datum::is_nan),
        (Op::NotNan, v) => !v.is_some_and(Datum::is_nan),
        (Op::NotEq | Op::NotIn | Op::NotStartsWith, None) => true,
        (_, None) => false,
        (Op::Lt, Some(v)) => compare(v, Ordering::is_lt)?,
        (Op::LtEq, Some(v)) => compare(v, Ordering::is_le)?,
        (Op::Gt, Some(v)) => compare(v, Ordering::is_gt)?,
        (Op::GtEq, Some(v)) => compare(v, Ordering::is_ge)?,
        (Op::Eq | Op::In, Some(v)) => in_set(v)?,
        (Op::NotEq | Op::NotIn, Some(v)) => !in_set(v)?,
        (Op::StartsWith, Some(v)) => starts_with(v, literal()?)?,
        (Op::NotStartsWith, Some(v)) => !starts_with(v, literal()?)?,
    })
}

fn starts_with(value: &Datum, prefix: &Datum) -> Result<bool> {
    match (&value.value, &prefix.value) {
        (Literal::String(v), Literal::String(p)) => Ok(v.starts_with(p.as_str())),
        _ => Err(Error::TypeMismatch(format!(
            "STARTS WITH compares strings, not {value} with {prefix}"
        ))),
    }
}

#[cfg(test)]
#[path = "evaluator_tests.rs"]
mod tests;
