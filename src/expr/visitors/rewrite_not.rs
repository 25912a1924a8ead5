//! Pushes NOT down to the predicates (Java's `RewriteNot`): the evaluators
//! and projections then see only AND, OR and predicates, whose negation is
//! the negated operation (`NOT x < 5` is `x >= 5`). Null handling is not
//! changed by this for projections and metrics, which answer "might match".

use crate::expr::predicate::{Bound, Expr};

pub fn rewrite_not(expr: &Bound) -> Bound {
    match expr {
        Expr::True | Expr::False | Expr::Predicate(_) => expr.clone(),
        Expr::And(a, b) => Expr::and(rewrite_not(a), rewrite_not(b)),
        Expr::Or(a, b) => Expr::or(rewrite_not(a), rewrite_not(b)),
        Expr::Not(inner) => negate(inner),
    }
}

/// The rewritten form of `NOT expr`.
fn negate(expr: &Bound) -> Bound {
    match expr {
        Expr::True => Expr::False,
        Expr::False => Expr::True,
        Expr::And(a, b) => Expr::or(negate(a), negate(b)),
        Expr::Or(a, b) => Expr::and(negate(a), negate(b)),
        Expr::Not(inner) => rewrite_not(inner),
        Expr::Predicate(p) => Expr::Predicate(p.negate()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::bind::bind;
    use crate::expr::json::parse;
    use crate::spec::schema::Schema;

    #[test]
    fn pushes_not_into_predicates() {
        let schema = Schema::parse(
            r#"{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int"},
            {"id":2,"name":"s","required":false,"type":"string"}]}"#,
        )
        .unwrap();
        let e = parse(
            r#"{"type":"not","child":{"type":"and","left":{"type":"lt","term":"a","value":5},
            "right":{"type":"not","child":{"type":"starts-with","term":"s","value":"x"}}}}"#,
        )
        .unwrap();
        let rewritten = rewrite_not(&bind(&e, &schema, true).unwrap());
        assert_eq!(rewritten.to_string(), "(a >= 5 OR s STARTS WITH \"x\")");
    }
}
