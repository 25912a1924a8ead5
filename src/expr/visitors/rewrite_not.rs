//! Pushes NOT down to the predicates (Java's `RewriteNot`): the evaluators
//! and projections then see only AND, OR and predicates, whose negation is
//! the negated operation (`NOT x < 5` is `x >= 5`).
//!
//! One rule differs from Java: on float and double columns an ordered
//! comparison's negation also keeps NaN. `NOT (x < c)` holds for a NaN `x`
//! while `x >= c` does not (NaN satisfies no ordered comparison), so it
//! becomes `x >= c OR x IS NAN` (pitfalls: "Bounds and metrics"). Nulls need
//! nothing: under three-valued logic `NOT (x < c)` and `x >= c` are both
//! unknown for a null `x`.

use crate::expr::predicate::{Bound, BoundPredicate, Expr, Op};

pub fn rewrite_not(expr: &Bound) -> Bound {
    match expr {
        Expr::True | Expr::False | Expr::Predicate(_) => expr.clone(),
        Expr::And(items) => Expr::all(items.iter().map(rewrite_not)),
        Expr::Or(items) => Expr::any(items.iter().map(rewrite_not)),
        Expr::Not(inner) => negate(inner),
    }
}

/// The rewritten form of `NOT expr`.
fn negate(expr: &Bound) -> Bound {
    match expr {
        Expr::True => Expr::False,
        Expr::False => Expr::True,
        Expr::And(items) => Expr::any(items.iter().map(negate)),
        Expr::Or(items) => Expr::all(items.iter().map(negate)),
        Expr::Not(inner) => rewrite_not(inner),
        Expr::Predicate(p) => {
            let negated = Expr::Predicate(p.negate());
            match p {
                BoundPredicate::Literal { op, term, .. }
                    if matches!(op, Op::Lt | Op::LtEq | Op::Gt | Op::GtEq)
                        && term.ty().is_floating() =>
                {
                    Expr::or(
                        negated,
                        Expr::Predicate(BoundPredicate::Unary {
                            op: Op::IsNan,
                            term: term.clone(),
                        }),
                    )
                }
                _ => negated,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::bind::bind;
    use crate::expr::json::parse;
    use crate::spec::schema::Schema;

    fn rewritten(json: &str) -> String {
        let schema = Schema::parse(
            r#"{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int"},
            {"id":2,"name":"s","required":false,"type":"string"},
            {"id":3,"name":"f","required":false,"type":"double"}]}"#,
        )
        .unwrap();
        rewrite_not(&bind(&parse(json).unwrap(), &schema, true).unwrap()).to_string()
    }

    #[test]
    fn pushes_not_into_predicates() {
        assert_eq!(
            rewritten(
                r#"{"type":"not","child":{"type":"and","left":{"type":"lt","term":"a","value":5},
                "right":{"type":"not","child":{"type":"starts-with","term":"s","value":"x"}}}}"#
            ),
            "(a >= 5 OR s STARTS WITH \"x\")"
        );
    }

    #[test]
    fn keeps_nan_rows_when_negating_float_comparisons() {
        assert_eq!(
            rewritten(r#"{"type":"not","child":{"type":"lt","term":"f","value":1.5}}"#),
            "(f >= 1.5 OR f IS NAN)"
        );
        assert_eq!(
            rewritten(r#"{"type":"not","child":{"type":"eq","term":"f","value":1.5}}"#),
            "f != 1.5"
        );
    }
}
