//! Filter expressions (spec: "Scan Planning"): the tree of predicates, its
//! literals and their order, binding to a schema, Java's expression JSON,
//! and the visitors (one a file) that project and evaluate filters.

pub mod bind;
pub mod json;
pub mod literal;
pub mod predicate;
pub mod visitors;

pub use bind::bind;
pub use literal::{Datum, UnboundLiteral};
pub use predicate::{
    Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op, Unbound, UnboundPredicate,
    UnboundTerm,
};
