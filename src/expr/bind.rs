//! Binding filters to a schema (Java's `Binder` and `UnboundPredicate.bind`):
//! names become field ids, literals are converted to the column's type, and
//! what the types already decide becomes a constant:
//!
//! - `IS NULL` on a required column is false, `IS NOT NULL` true;
//! - a literal beyond the type's range decides the comparison (`x < 1e40`
//!   on a float column is true, `x = 1e40` false), as Java's `aboveMax` /
//!   `belowMin`;
//! - a literal between two values of the column's type (3.5 for an int
//!   column, 1.234 for decimal(9,2)) is rewritten onto its floor: `=` is
//!   false, `!=` true, `< 3.5` is `<= 3`, `> 3.5` is `> 3` (Java refuses
//!   such literals);
//! - `IN` drops literals no value can equal, and becomes `=` with one left
//!   or false with none.
//!
//! Comparisons that cannot mean anything (a string with an int column,
//! `IS NAN` on a string) are [`Error::Validation`] naming the column, its
//! type and the literal.

use super::literal::{convert, Converted, Datum, UnboundLiteral};
use super::predicate::{
    Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op, Unbound, UnboundPredicate,
    UnboundTerm,
};
use crate::error::{Error, Result};
use crate::spec::schema::Schema;
use crate::types::{PrimitiveType, Type};

/// Binds `expr` to `schema`; names match case-insensitively on request.
pub fn bind(expr: &Unbound, schema: &Schema, case_sensitive: bool) -> Result<Bound> {
    expr.try_map(&mut |p| bind_predicate(p, schema, case_sensitive))
}

/// Finds a column by name and checks that a predicate can use it.
pub fn bind_reference(
    name: &str,
    schema: &Schema,
    case_sensitive: bool,
) -> Result<(BoundReference, Type)> {
    let id = schema.find_id(name, case_sensitive)?.ok_or_else(|| {
        Error::UnknownField(format!(
            "cannot find column {name:?} in the schema{}",
            if case_sensitive {
                " (names are case-sensitive)"
            } else {
                ""
            }
        ))
    })?;
    let info = schema
        .field_info(id)
        .ok_or_else(|| Error::Internal(format!("field {id} is indexed but not found")))?;
    if info.in_repeated {
        return Err(Error::Validation(format!(
            "column {:?} is inside a list or map: filters apply to columns outside lists and maps",
            info.name
        )));
    }
    let ty = info.field.field_type.clone();
    let reference = BoundReference {
        field_id: id,
        name: info.name.clone(),
        // Nested columns only get unary null checks; they carry a
        // placeholder type that no comparison uses.
        ty: ty.as_primitive().unwrap_or(PrimitiveType::Unknown),
        required: info.field.required,
    };
    Ok((reference, ty))
}

fn bind_predicate(p: &UnboundPredicate, schema: &Schema, case_sensitive: bool) -> Result<Bound> {
    let (reference, column_type) = bind_reference(p.term.name(), schema, case_sensitive)?;
    let term = match &p.term {
        UnboundTerm::Reference(_) => BoundTerm::Reference(reference.clone()),
        UnboundTerm::Transform(transform, _) => {
            let source = column_type.as_primitive().ok_or_else(|| {
                Error::Validation(format!(
                    "cannot apply {transform} to column {:?} of type {column_type}",
                    reference.name
                ))
            })?;
            BoundTerm::Transform {
                transform: *transform,
                result: transform.result_type(source)?,
                reference: reference.clone(),
            }
        }
    };
    if p.op.is_unary() {
        return bind_unary(p.op, term, &column_type);
    }
    if column_type.as_primitive().is_none()
        || column_type.as_primitive() == Some(PrimitiveType::Unknown)
    {
        return Err(Error::Validation(format!(
            "cannot compare column {:?} of type {column_type} with a value",
            reference.name
        )));
    }
    if p.op.is_set() {
        return bind_set(p, term);
    }
    let literal = match p.literals.as_slice() {
        [one] => one,
        other => {
            return Err(Error::Validation(format!(
                "{} takes one value, got {}",
                p.op.symbol(),
                other.len()
            )))
        }
    };
    if matches!(p.op, Op::StartsWith | Op::NotStartsWith) && term.ty() != PrimitiveType::String {
        return Err(Error::Validation(format!(
            "{} needs a string column, but {term} is {}",
            p.op.symbol(),
            term.ty()
        )));
    }
    match converted(literal, &term)? {
        Converted::Exact(datum) => Ok(Expr::Predicate(BoundPredicate::Literal {
            op: p.op,
            term,
            literal: datum,
        })),
        Converted::AboveMax => Ok(match p.op {
            Op::Lt | Op::LtEq | Op::NotEq => Expr::True,
            _ => Expr::False,
        }),
        Converted::BelowMin => Ok(match p.op {
            Op::Gt | Op::GtEq | Op::NotEq => Expr::True,
            _ => Expr::False,
        }),
        Converted::Between { floor } => {
            let literal = |op: Op| {
                Expr::Predicate(BoundPredicate::Literal {
                    op,
                    term: term.clone(),
                    literal: floor.clone(),
                })
            };
            Ok(match p.op {
                Op::Eq => Expr::False,
                Op::NotEq => Expr::True,
                Op::Lt | Op::LtEq => literal(Op::LtEq),
                Op::Gt | Op::GtEq => literal(Op::Gt),
                other => {
                    return Err(Error::Internal(format!(
                        "{} with a numeric literal",
                        other.symbol()
                    )))
                }
            })
        }
    }
}

fn converted(literal: &UnboundLiteral, term: &BoundTerm) -> Result<Converted> {
    convert(literal, term.ty()).map_err(|e| {
        let detail = match e {
            Error::Validation(m) | Error::InvalidValue(m) | Error::TypeMismatch(m) => m,
            other => other.to_string(),
        };
        Error::Validation(format!(
            "cannot bind {literal} to column {term} of type {}: {detail}",
            term.ty()
        ))
    })
}

fn bind_unary(op: Op, term: BoundTerm, column_type: &Type) -> Result<Bound> {
    let reference = term.reference();
    match op {
        Op::IsNull if reference.required => Ok(Expr::False),
        Op::NotNull if reference.required => Ok(Expr::True),
        Op::IsNull | Op::NotNull if column_type.is_nested() => Err(Error::Validation(format!(
            "{} on column {:?} of type {column_type}: null checks on structs, lists and maps \
             are not supported; test one of its fields",
            op.symbol(),
            reference.name
        ))),
        Op::IsNan | Op::NotNan if !term.ty().is_floating() || column_type.is_nested() => {
            Err(Error::Validation(format!(
                "{} needs a float or double column, but {term} is {column_type}",
                op.symbol()
            )))
        }
        _ => Ok(Expr::Predicate(BoundPredicate::Unary { op, term })),
    }
}

fn bind_set(p: &UnboundPredicate, term: BoundTerm) -> Result<Bound> {
    let mut literals: Vec<Datum> = Vec::with_capacity(p.literals.len());
    for literal in &p.literals {
        if let Converted::Exact(datum) = converted(literal, &term)? {
            literals.push(datum);
        }
    }
    literals.sort_by(|a, b| a.cmp_value(b));
    literals.dedup_by(|a, b| a.cmp_value(b).is_eq());
    let single = |op: Op, literal: Datum| {
        Ok(Expr::Predicate(BoundPredicate::Literal {
            op,
            term: term.clone(),
            literal,
        }))
    };
    match (p.op, literals.len()) {
        (Op::In, 0) => Ok(Expr::False),
        (Op::NotIn, 0) => Ok(Expr::True),
        (Op::In, 1) => single(Op::Eq, literals.remove(0)),
        (Op::NotIn, 1) => single(Op::NotEq, literals.remove(0)),
        (op, _) => Ok(Expr::Predicate(BoundPredicate::Set { op, term, literals })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Literal;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"f","required":false,"type":"float"},
        {"id":3,"name":"i","required":false,"type":"int"},
        {"id":4,"name":"s","required":false,"type":"string"},
        {"id":5,"name":"loc","required":false,"type":{"type":"struct","fields":[
            {"id":6,"name":"City","required":false,"type":"string"}]}},
        {"id":7,"name":"tags","required":false,"type":{"type":"list","element-id":8,
            "element-required":false,"element":"string"}}]}"#;

    fn pred(op: Op, name: &str, literals: Vec<UnboundLiteral>) -> Unbound {
        Expr::Predicate(UnboundPredicate {
            op,
            term: UnboundTerm::Reference(name.into()),
            literals,
        })
    }

    fn bound(e: &Unbound) -> Result<Bound> {
        bind(e, &Schema::parse(SCHEMA).unwrap(), true)
    }

    #[test]
    fn binds_names_and_converts_literals() {
        let b = bound(&pred(Op::Lt, "id", vec![UnboundLiteral::Int(5)])).unwrap();
        let Expr::Predicate(BoundPredicate::Literal { term, literal, .. }) = b else {
            panic!("{b:?}")
        };
        assert_eq!(term.field_id(), 1);
        assert_eq!(literal.value, Literal::Long(5));
        let nested = bind(
            &pred(Op::Eq, "LOC.city", vec![UnboundLiteral::String("x".into())]),
            &Schema::parse(SCHEMA).unwrap(),
            false,
        )
        .unwrap();
        assert_eq!(nested.predicates()[0].term().field_id(), 6);
        assert_eq!(nested.predicates()[0].term().reference().name, "loc.City");
    }

    #[test]
    fn rewrites_what_the_types_decide() {
        let float_lt = pred(Op::Lt, "f", vec![UnboundLiteral::Float(1e40)]);
        assert_eq!(bound(&float_lt).unwrap(), Expr::True);
        let float_eq = pred(Op::Eq, "f", vec![UnboundLiteral::Float(1e40)]);
        assert_eq!(bound(&float_eq).unwrap(), Expr::False);
        assert_eq!(
            bound(&pred(Op::Eq, "i", vec![UnboundLiteral::Float(3.5)])).unwrap(),
            Expr::False
        );
        assert_eq!(
            bound(&pred(Op::NotEq, "i", vec![UnboundLiteral::Float(3.5)])).unwrap(),
            Expr::True
        );
        let lt = bound(&pred(Op::Lt, "i", vec![UnboundLiteral::Float(3.5)])).unwrap();
        assert_eq!(lt.to_string(), "i <= 3");
        assert_eq!(bound(&pred(Op::IsNull, "id", vec![])).unwrap(), Expr::False);
        assert_eq!(bound(&pred(Op::NotNull, "id", vec![])).unwrap(), Expr::True);
        let set = pred(
            Op::In,
            "i",
            vec![
                UnboundLiteral::Int(2),
                UnboundLiteral::Float(2.5),
                UnboundLiteral::Int(1 << 40),
                UnboundLiteral::Int(2),
            ],
        );
        assert_eq!(bound(&set).unwrap().to_string(), "i = 2");
        let none = pred(Op::NotIn, "i", vec![UnboundLiteral::Float(2.5)]);
        assert_eq!(bound(&none).unwrap(), Expr::True);
    }

    #[test]
    fn refuses_impossible_comparisons() {
        let message = |e: Unbound| bound(&e).unwrap_err().to_string();
        let m = message(pred(Op::Eq, "i", vec![UnboundLiteral::String("a".into())]));
        assert!(
            m.contains("\"a\"") && m.contains("int") && m.contains('i'),
            "{m}"
        );
        let m = message(pred(Op::IsNan, "s", vec![]));
        assert!(m.contains("IS NAN") && m.contains("string"), "{m}");
        assert!(matches!(
            bound(&pred(Op::Eq, "nope", vec![UnboundLiteral::Int(1)])),
            Err(Error::UnknownField(_))
        ));
        assert!(matches!(
            bound(&pred(
                Op::Eq,
                "tags.element",
                vec![UnboundLiteral::String("a".into())]
            )),
            Err(Error::Validation(_))
        ));
        let m = message(pred(
            Op::StartsWith,
            "i",
            vec![UnboundLiteral::String("a".into())],
        ));
        assert!(m.contains("string column"), "{m}");
        assert!(bound(&pred(Op::Eq, "id", vec![UnboundLiteral::Float(f64::NAN)])).is_err());
    }
}
