//! Filter expressions: a tree of `and`, `or`, `not` and constants over
//! predicates, unbound (column names, literals as written) or bound to a
//! schema (field ids, typed [`Datum`]s). The operations are Java's
//! `Expression.Operation` for row filters.

use std::fmt;

use super::literal::{Datum, UnboundLiteral};
use crate::transform::Transform;
use crate::types::PrimitiveType;

/// A predicate operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    IsNull,
    NotNull,
    IsNan,
    NotNan,
    Lt,
    LtEq,
    Gt,
    GtEq,
    Eq,
    NotEq,
    StartsWith,
    NotStartsWith,
    In,
    NotIn,
}

impl Op {
    /// The operation that is true exactly when this one is false (for
    /// non-null operands; Java's `Operation.negate`).
    pub fn negate(self) -> Op {
        use Op::*;
        match self {
            IsNull => NotNull,
            NotNull => IsNull,
            IsNan => NotNan,
            NotNan => IsNan,
            Lt => GtEq,
            LtEq => Gt,
            Gt => LtEq,
            GtEq => Lt,
            Eq => NotEq,
            NotEq => Eq,
            StartsWith => NotStartsWith,
            NotStartsWith => StartsWith,
            In => NotIn,
            NotIn => In,
        }
    }

    /// The name in Java's expression JSON (`"lt-eq"`, `"not-starts-with"`).
    pub fn json_name(self) -> &'static str {
        use Op::*;
        match self {
            IsNull => "is-null",
            NotNull => "not-null",
            IsNan => "is-nan",
            NotNan => "not-nan",
            Lt => "lt",
            LtEq => "lt-eq",
            Gt => "gt",
            GtEq => "gt-eq",
            Eq => "eq",
            NotEq => "not-eq",
            StartsWith => "starts-with",
            NotStartsWith => "not-starts-with",
            In => "in",
            NotIn => "not-in",
        }
    }

    pub fn from_json_name(name: &str) -> Option<Op> {
        use Op::*;
        Some(match name.to_ascii_lowercase().replace('_', "-").as_str() {
            "is-null" => IsNull,
            "not-null" => NotNull,
            "is-nan" => IsNan,
            "not-nan" => NotNan,
            "lt" => Lt,
            "lt-eq" => LtEq,
            "gt" => Gt,
            "gt-eq" => GtEq,
            "eq" => Eq,
            "not-eq" => NotEq,
            "starts-with" => StartsWith,
            "not-starts-with" => NotStartsWith,
            "in" => In,
            "not-in" => NotIn,
            _ => return None,
        })
    }

    pub fn is_unary(self) -> bool {
        matches!(self, Op::IsNull | Op::NotNull | Op::IsNan | Op::NotNan)
    }

    pub fn is_set(self) -> bool {
        matches!(self, Op::In | Op::NotIn)
    }

    /// The operator in the text form of filters.
    pub fn symbol(self) -> &'static str {
        use Op::*;
        match self {
            IsNull => "IS NULL",
            NotNull => "IS NOT NULL",
            IsNan => "IS NAN",
            NotNan => "IS NOT NAN",
            Lt => "<",
            LtEq => "<=",
            Gt => ">",
            GtEq => ">=",
            Eq => "=",
            NotEq => "!=",
            StartsWith => "STARTS WITH",
            NotStartsWith => "NOT STARTS WITH",
            In => "IN",
            NotIn => "NOT IN",
        }
    }
}

/// An expression over predicates of type `P`.
///
/// AND and OR are n-ary: a chain of any length (`a AND b AND ... AND z`,
/// thousands of terms in generated filters) is one node, so that every
/// visitor recurses only as deep as the expression nests, never as long as
/// it is. The constructors ([`Expr::and`], [`Expr::all`], ...) keep the
/// form canonical: two or more operands, none a constant or a node of the
/// same kind (they are spliced in). Java's expression JSON, which is binary,
/// is written as a balanced tree (`json::to_json`).
#[derive(Debug, Clone, PartialEq)]
pub enum Expr<P> {
    True,
    False,
    And(Vec<Expr<P>>),
    Or(Vec<Expr<P>>),
    Not(Box<Expr<P>>),
    Predicate(P),
}

impl<P> Expr<P> {
    /// `a AND b`, simplified when either side is a constant.
    pub fn and(a: Expr<P>, b: Expr<P>) -> Expr<P> {
        Self::all([a, b])
    }

    /// `a OR b`, simplified when either side is a constant.
    pub fn or(a: Expr<P>, b: Expr<P>) -> Expr<P> {
        Self::any([a, b])
    }

    /// The AND of `operands`: nested ANDs spliced in, TRUE dropped, FALSE
    /// if any is; TRUE when none is left.
    pub fn all(operands: impl IntoIterator<Item = Expr<P>>) -> Expr<P> {
        Self::junction(operands, true)
    }

    /// The OR of `operands`: nested ORs spliced in, FALSE dropped, TRUE if
    /// any is; FALSE when none is left.
    pub fn any(operands: impl IntoIterator<Item = Expr<P>>) -> Expr<P> {
        Self::junction(operands, false)
    }

    fn junction(operands: impl IntoIterator<Item = Expr<P>>, and: bool) -> Expr<P> {
        let mut out: Vec<Expr<P>> = Vec::new();
        for operand in operands {
            match (operand, and) {
                (Expr::False, true) => return Expr::False,
                (Expr::True, false) => return Expr::True,
                (Expr::True, true) | (Expr::False, false) => {}
                (Expr::And(items), true) | (Expr::Or(items), false) => {
                    // Folding a chain one operand at a time (`and(acc, x)`)
                    // takes the accumulated vector over rather than copying it.
                    if out.is_empty() {
                        out = items;
                    } else {
                        out.extend(items);
                    }
                }
                (other, _) => out.push(other),
            }
        }
        match out.len() {
            0 => {
                if and {
                    Expr::True
                } else {
                    Expr::False
                }
            }
            1 => out.pop().expect("one operand"),
            _ if and => Expr::And(out),
            _ => Expr::Or(out),
        }
    }

    /// `NOT a`, simplified for constants and double negation.
    pub fn negation(a: Expr<P>) -> Expr<P> {
        match a {
            Expr::True => Expr::False,
            Expr::False => Expr::True,
            Expr::Not(inner) => *inner,
            other => Expr::Not(Box::new(other)),
        }
    }

    /// The same tree with every predicate mapped (and simplified). `f` sees
    /// every predicate, left to right, even where a constant decides the
    /// result.
    pub fn try_map<Q, E>(
        &self,
        f: &mut impl FnMut(&P) -> Result<Expr<Q>, E>,
    ) -> Result<Expr<Q>, E> {
        Ok(match self {
            Expr::True => Expr::True,
            Expr::False => Expr::False,
            Expr::And(items) => Expr::all(
                items
                    .iter()
                    .map(|e| e.try_map(f))
                    .collect::<Result<Vec<_>, E>>()?,
            ),
            Expr::Or(items) => Expr::any(
                items
                    .iter()
                    .map(|e| e.try_map(f))
                    .collect::<Result<Vec<_>, E>>()?,
            ),
            Expr::Not(a) => Expr::negation(a.try_map(f)?),
            Expr::Predicate(p) => f(p)?,
        })
    }

    /// Every predicate of the tree, left to right.
    pub fn predicates(&self) -> Vec<&P> {
        fn walk<'a, P>(e: &'a Expr<P>, out: &mut Vec<&'a P>) {
            match e {
                Expr::And(items) | Expr::Or(items) => {
                    for item in items {
                        walk(item, out);
                    }
                }
                Expr::Not(a) => walk(a, out),
                Expr::Predicate(p) => out.push(p),
                Expr::True | Expr::False => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }
}

/// A term before binding: a column by name, or a transform of one.
#[derive(Debug, Clone, PartialEq)]
pub enum UnboundTerm {
    Reference(String),
    Transform(Transform, String),
}

impl UnboundTerm {
    pub fn name(&self) -> &str {
        match self {
            UnboundTerm::Reference(n) | UnboundTerm::Transform(_, n) => n,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct UnboundPredicate {
    pub op: Op,
    pub term: UnboundTerm,
    /// None for unary operations, one for comparisons, any number for IN.
    pub literals: Vec<UnboundLiteral>,
}

/// A column bound by field id. For predicates projected onto a partition
/// spec, the "column" is a partition field (id, name and result type).
#[derive(Debug, Clone, PartialEq)]
pub struct BoundReference {
    pub field_id: i32,
    /// The full dotted name, as filters and residuals print it.
    pub name: String,
    pub ty: PrimitiveType,
    pub required: bool,
}

/// A bound term: a column, or a transform of a column (whose values have
/// the transform's result type).
#[derive(Debug, Clone, PartialEq)]
pub enum BoundTerm {
    Reference(BoundReference),
    Transform {
        transform: Transform,
        reference: BoundReference,
        result: PrimitiveType,
    },
}

impl BoundTerm {
    /// The type of the term's values.
    pub fn ty(&self) -> PrimitiveType {
        match self {
            BoundTerm::Reference(r) => r.ty,
            BoundTerm::Transform { result, .. } => *result,
        }
    }

    pub fn reference(&self) -> &BoundReference {
        match self {
            BoundTerm::Reference(r) | BoundTerm::Transform { reference: r, .. } => r,
        }
    }

    pub fn field_id(&self) -> i32 {
        self.reference().field_id
    }
}

/// A predicate bound to a schema. Set literals are sorted by
/// [`Datum::cmp_value`] and free of duplicates.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundPredicate {
    Unary {
        op: Op,
        term: BoundTerm,
    },
    Literal {
        op: Op,
        term: BoundTerm,
        literal: Datum,
    },
    Set {
        op: Op,
        term: BoundTerm,
        literals: Vec<Datum>,
    },
}

impl BoundPredicate {
    pub fn op(&self) -> Op {
        match self {
            BoundPredicate::Unary { op, .. }
            | BoundPredicate::Literal { op, .. }
            | BoundPredicate::Set { op, .. } => *op,
        }
    }

    pub fn term(&self) -> &BoundTerm {
        match self {
            BoundPredicate::Unary { term, .. }
            | BoundPredicate::Literal { term, .. }
            | BoundPredicate::Set { term, .. } => term,
        }
    }

    /// The predicate that holds exactly when this one does not (on
    /// non-null values): NOT pushed into the operation.
    pub fn negate(&self) -> BoundPredicate {
        match self {
            BoundPredicate::Unary { op, term } => BoundPredicate::Unary {
                op: op.negate(),
                term: term.clone(),
            },
            BoundPredicate::Literal { op, term, literal } => BoundPredicate::Literal {
                op: op.negate(),
                term: term.clone(),
                literal: literal.clone(),
            },
            BoundPredicate::Set { op, term, literals } => BoundPredicate::Set {
                op: op.negate(),
                term: term.clone(),
                literals: literals.clone(),
            },
        }
    }
}

pub type Unbound = Expr<UnboundPredicate>;
pub type Bound = Expr<BoundPredicate>;

impl fmt::Display for UnboundTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnboundTerm::Reference(n) => f.write_str(n),
            UnboundTerm::Transform(t, n) => write!(f, "{t}({n})"),
        }
    }
}

impl fmt::Display for BoundTerm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundTerm::Reference(r) => f.write_str(&r.name),
            BoundTerm::Transform {
                transform,
                reference,
                ..
            } => write!(f, "{transform}({})", reference.name),
        }
    }
}

fn write_predicate<T: fmt::Display, L: fmt::Display>(
    f: &mut fmt::Formatter<'_>,
    op: Op,
    term: &T,
    literals: &[L],
) -> fmt::Result {
    if op.is_unary() {
        return write!(f, "{term} {}", op.symbol());
    }
    if op.is_set() {
        write!(f, "{term} {} (", op.symbol())?;
        for (i, l) in literals.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{l}")?;
        }
        return f.write_str(")");
    }
    match literals.first() {
        Some(l) => write!(f, "{term} {} {l}", op.symbol()),
        None => write!(f, "{term} {} ?", op.symbol()),
    }
}

impl fmt::Display for UnboundPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_predicate(f, self.op, &self.term, &self.literals)
    }
}

impl fmt::Display for BoundPredicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoundPredicate::Unary { op, term } => write_predicate::<_, Datum>(f, *op, term, &[]),
            BoundPredicate::Literal { op, term, literal } => {
                write_predicate(f, *op, term, std::slice::from_ref(literal))
            }
            BoundPredicate::Set { op, term, literals } => write_predicate(f, *op, term, literals),
        }
    }
}

impl<P: fmt::Display> fmt::Display for Expr<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::True => f.write_str("TRUE"),
            Expr::False => f.write_str("FALSE"),
            Expr::And(items) | Expr::Or(items) => {
                let word = if matches!(self, Expr::And(_)) {
                    " AND "
                } else {
                    " OR "
                };
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(word)?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str(")")
            }
            Expr::Not(a) => write!(f, "NOT {a}"),
            Expr::Predicate(p) => p.fmt(f),
        }
    }
}
