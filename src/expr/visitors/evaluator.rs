//! A bound filter evaluated on one row of values: what the residual
//! evaluator asks of a partition tuple, and what tests ask of rows.
//!
//! Semantics, shared with every evaluator frazil runs (the vectorized
//! kernels of [`super::compare`] and their single-value reference
//! [`super::compare::predicate_holds`], which decides each predicate here):
//!
//! - a null value satisfies `IS NULL`, `IS NOT NAN` and the negative
//!   operations `!=`, `NOT IN`, `NOT STARTS WITH` (Java's evaluator computes
//!   those as the negation of `=`, `IN`, `STARTS WITH`; pitfalls: `NOT
//!   NaN(null)` is true, NOT STARTS WITH is the negation of STARTS WITH); it
//!   satisfies no ordered comparison, `=`, `IN` or `STARTS WITH`. Java's
//!   evaluator orders nulls first, so that `null < 5` holds there; that is a
//!   bug not copied (iceberg-python #3817);
//! - `NOT` negates the operation beneath it (`NOT x < 5` is `x >= 5`), as
//!   [`super::rewrite_not::rewrite_not`] rewrites it, so that an expression
//!   and its rewritten form always agree: a null `x` matches neither `x < 5`
//!   nor `NOT x < 5`, like SQL's unknown;
//! - NaN satisfies no ordered comparison, no `=` and no `IN` (the metrics
//!   evaluators, Java's included, prune on that), but `!=` and `NOT IN`, and
//!   so `NOT x < 5` (which [`super::rewrite_not::rewrite_not`] keeps as
//!   `x >= 5 OR x IS NAN`); -0.0 is below 0.0; strings compare by code point.
//!
//! A value is promoted to its column's type where the spec allows (an old
//! `int` partition value of a column now `long`); any other type is refused.

use crate::error::{Error, Result};
use crate::expr::predicate::{Bound, BoundTerm, Expr};
use crate::expr::Datum;
use crate::transform::scalar;
use crate::types::PrimitiveType;
use crate::values::Literal;

use super::compare::predicate_holds;

/// Whether `expr` holds for the row whose values `values` gives by field id
/// (`None` for null).
pub fn eval_row(expr: &Bound, values: &dyn Fn(i32) -> Option<Datum>) -> Result<bool> {
    eval(expr, values, false)
}

fn eval(expr: &Bound, values: &dyn Fn(i32) -> Option<Datum>, negated: bool) -> Result<bool> {
    Ok(match expr {
        Expr::True => !negated,
        Expr::False => negated,
        // NOT (a AND b) is NOT a OR NOT b, and so on down to the predicates:
        // under NOT, AND holds when any operand's negation does.
        Expr::And(items) => any_or_all(items, values, negated, !negated)?,
        Expr::Or(items) => any_or_all(items, values, negated, negated)?,
        Expr::Not(a) => eval(a, values, !negated)?,
        Expr::Predicate(p) => match term_value(p.term(), values)? {
            // A null satisfies the negated operation or not by the rule for
            // nulls; a value satisfies the negation exactly when it does not
            // satisfy the predicate (NaN included).
            None if negated => predicate_holds(&p.negate(), None),
            None => predicate_holds(p, None),
            Some(v) => predicate_holds(p, Some(&v.value)) != negated,
        },
    })
}

/// Whether all (`all`) or any of `items` hold (each negated when `negated`),
/// stopping at the first operand that decides.
fn any_or_all(
    items: &[Bound],
    values: &dyn Fn(i32) -> Option<Datum>,
    negated: bool,
    all: bool,
) -> Result<bool> {
    for item in items {
        if eval(item, values, negated)? != all {
            return Ok(!all);
        }
    }
    Ok(all)
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

#[cfg(test)]
#[path = "evaluator_tests.rs"]
mod tests;
