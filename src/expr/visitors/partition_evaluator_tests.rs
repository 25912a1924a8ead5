//! The partition evaluator on hand-made partition tuples.

use std::sync::Arc;

use arrow_array::{Date32Array, FixedSizeBinaryArray, Float64Array, Int32Array, StringArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{Field, Fields};

use super::*;
use crate::expr::predicate::Expr;
use crate::expr::visitors::test_support::pred;
use crate::types::{NestedField, PrimitiveType as P};
use crate::values::Literal as L;

fn partition_type() -> Type {
    Type::Struct(vec![
        NestedField::optional(1000, "cat", Type::Primitive(P::String)),
        NestedField::optional(1001, "x", Type::Primitive(P::Double)),
        NestedField::optional(1002, "day", Type::Primitive(P::Date)),
        NestedField::optional(1003, "u", Type::Primitive(P::Uuid)),
    ])
}

/// Rows: ("a", 1.0, 10, 0x00..), (null, NaN, null, 0x80..), ("ab", -0.0, 11, null),
/// ("b", null, 12, 0xff..).
fn tuples() -> StructArray {
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "cat",
            Arc::new(StringArray::from(vec![
                Some("a"),
                None,
                Some("ab"),
                Some("b"),
            ])),
        ),
        (
            "x",
            Arc::new(Float64Array::from(vec![
                Some(1.0),
                Some(f64::NAN),
                Some(-0.0),
                None,
            ])),
        ),
        (
            "day",
            Arc::new(Date32Array::from(vec![Some(10), None, Some(11), Some(12)])),
        ),
        (
            "u",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some([0u8; 16]), Some([0x80; 16]), None, Some([0xff; 16])].into_iter(),
                    16,
                )
                .unwrap(),
            ),
        ),
    ];
    struct_of(columns, None)
}

fn struct_of(columns: Vec<(&str, ArrayRef)>, nulls: Option<NullBuffer>) -> StructArray {
    let fields: Fields = columns
        .iter()
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns.into_iter().map(|(_, c)| c).collect(), nulls).unwrap()
}

fn eval(expr: &Bound) -> Vec<bool> {
    PartitionEvaluator::new(expr, &partition_type())
        .unwrap()
        .eval(&tuples())
        .unwrap()
        .iter()
        .collect()
}

fn s(v: &str) -> L {
    L::String(v.to_owned())
}

fn not(e: Bound) -> Bound {
    Expr::Not(Box::new(e))
}

#[test]
fn nulls_satisfy_null_tests_and_negative_operations_only() {
    // A null satisfies !=, NOT IN and NOT STARTS WITH (as Java's evaluator
    // computes them: negations), never an ordered comparison, = or IN.
    assert_eq!(
        eval(&pred(Op::IsNull, 1000, P::String, vec![])),
        [false, true, false, false]
    );
    assert_eq!(
        eval(&pred(Op::NotNull, 1000, P::String, vec![])),
        [true, false, true, true]
    );
    assert_eq!(
        eval(&pred(Op::NotEq, 1000, P::String, vec![s("a")])),
        [false, true, true, true]
    );
    assert_eq!(
        eval(&not(pred(Op::Eq, 1000, P::String, vec![s("a")]))),
        [false, true, true, true]
    );
    assert_eq!(
        eval(&pred(Op::Lt, 1000, P::String, vec![s("b")])),
        [true, false, true, false]
    );
    assert_eq!(
        eval(&pred(Op::NotIn, 1000, P::String, vec![s("a")])),
        [false, true, true, true]
    );
    assert_eq!(
        eval(&pred(Op::NotStartsWith, 1000, P::String, vec![s("a")])),
        [false, true, false, true]
    );
    assert_eq!(
        eval(&pred(Op::StartsWith, 1000, P::String, vec![s("a")])),
        [true, false, true, false]
    );
    // IS NOT NAN holds for null (iceberg-python #3689), IS NAN does not.
    assert_eq!(
        eval(&pred(Op::NotNan, 1001, P::Double, vec![])),
        [true, false, true, true]
    );
    assert_eq!(
        eval(&not(pred(Op::IsNan, 1001, P::Double, vec![]))),
        [true, false, true, true]
    );
    assert_eq!(
        eval(&pred(Op::IsNan, 1001, P::Double, vec![])),
        [false, true, false, false]
    );
}

#[test]
fn nan_fails_comparisons_but_not_their_negations() {
    let x = |op, v: f64| pred(op, 1001, P::Double, vec![L::Double(v)]);
    assert_eq!(eval(&x(Op::Gt, 0.5)), [true, false, false, false]);
    assert_eq!(eval(&x(Op::NotEq, 1.0)), [false, true, true, true]);
    // NOT (x < 0.5): true for 1.0 and NaN, unknown for null.
    assert_eq!(eval(&not(x(Op::Lt, 0.5))), [true, true, false, false]);
    assert_eq!(
        eval(&pred(
            Op::In,
            1001,
            P::Double,
            vec![L::Double(1.0), L::Double(f64::INFINITY)]
        )),
        [true, false, false, false]
    );
    assert_eq!(
        eval(&pred(Op::NotIn, 1001, P::Double, vec![L::Double(1.0)])),
        [false, true, true, true]
    );
}

#[test]
fn negative_zero_sorts_before_zero() {
    let x = |op, v: f64| pred(op, 1001, P::Double, vec![L::Double(v)]);
    assert_eq!(eval(&x(Op::Eq, 0.0)), [false, false, false, false]);
    assert_eq!(eval(&x(Op::Eq, -0.0)), [false, false, true, false]);
    assert_eq!(eval(&x(Op::Lt, 0.0)), [false, false, true, false]);
}

#[test]
fn dates_uuids_and_boolean_combinations() {
    let day = |op, v| pred(op, 1002, P::Date, vec![L::Date(v)]);
    assert_eq!(eval(&day(Op::GtEq, 11)), [false, false, true, true]);
    // UUIDs compare as unsigned bytes.
    let u = |op, b: u8| pred(op, 1003, P::Uuid, vec![L::Uuid([b; 16])]);
    assert_eq!(eval(&u(Op::Gt, 0x7f)), [false, true, false, true]);
    let e = Expr::or(
        Expr::and(day(Op::Lt, 12), pred(Op::IsNull, 1000, P::String, vec![])),
        u(Op::Eq, 0),
    );
    assert_eq!(eval(&e), [true, false, false, false]);
    assert_eq!(eval(&Expr::True), [true; 4]);
    assert_eq!(eval(&Expr::False), [false; 4]);
}

#[test]
fn null_tuples_have_null_fields() {
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("cat", Arc::new(StringArray::from(vec!["a", "a"]))),
        ("x", Arc::new(Float64Array::from(vec![1.0, 1.0]))),
        ("day", Arc::new(Date32Array::from(vec![1, 1]))),
        (
            "u",
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(vec![[0u8; 16], [0u8; 16]].into_iter())
                    .unwrap(),
            ),
        ),
    ];
    let tuples = struct_of(columns, Some(NullBuffer::from(vec![true, false])));
    let e = PartitionEvaluator::new(
        &pred(Op::IsNull, 1000, P::String, vec![]),
        &partition_type(),
    )
    .unwrap();
    assert_eq!(
        e.eval(&tuples).unwrap().iter().collect::<Vec<_>>(),
        [false, true]
    );
}

#[test]
fn errors_name_what_is_wrong() {
    let unknown = PartitionEvaluator::new(&pred(Op::IsNull, 9, P::Int, vec![]), &partition_type());
    assert!(matches!(unknown, Err(Error::UnknownField(m)) if m.contains("field id 9")));
    let wrong = pred(Op::Eq, 1002, P::Int, vec![L::Timestamp(1)]);
    let e = PartitionEvaluator::new(&wrong, &partition_type()).unwrap();
    assert!(matches!(e.eval(&tuples()), Err(Error::TypeMismatch(_))));
    let narrow = struct_of(
        vec![("cat", Arc::new(StringArray::from(vec!["a"])) as ArrayRef)],
        None,
    );
    let e = PartitionEvaluator::new(
        &pred(Op::IsNull, 1000, P::String, vec![]),
        &partition_type(),
    )
    .unwrap();
    assert!(matches!(e.eval(&narrow), Err(Error::TypeMismatch(_))));
}

#[test]
fn int_partitions_and_manifest_batches() {
    let ty = Type::Struct(vec![NestedField::optional(
        1000,
        "b",
        Type::Primitive(P::Int),
    )]);
    let partition = struct_of(
        vec![(
            "b",
            Arc::new(Int32Array::from(vec![Some(0), Some(3), None])) as ArrayRef,
        )],
        None,
    );
    let data_file = struct_of(vec![("partition", Arc::new(partition) as ArrayRef)], None);
    let batch =
        RecordBatch::try_from_iter(vec![("data_file", Arc::new(data_file) as ArrayRef)]).unwrap();
    let e = PartitionEvaluator::new(&pred(Op::In, 1000, P::Int, vec![L::Int(3), L::Int(4)]), &ty)
        .unwrap();
    assert_eq!(
        e.eval_manifest(&batch).unwrap().iter().collect::<Vec<_>>(),
        [false, true, false]
    );
}
