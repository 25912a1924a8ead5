//! The manifest evaluator on hand-made partition field summaries.

use super::*;
use crate::expr::predicate::Expr;
use crate::expr::visitors::test_support::pred;
use crate::manifest::{manifest_file_row, ManifestStats};
use crate::types::{NestedField, PrimitiveType as P};
use crate::values::{self, Literal as L};

fn partition_type() -> Type {
    Type::Struct(vec![
        NestedField::optional(1000, "i", Type::Primitive(P::Int)),
        NestedField::optional(1001, "x", Type::Primitive(P::Double)),
        NestedField::optional(1002, "s", Type::Primitive(P::String)),
    ])
}

fn bytes(ty: P, v: L) -> Option<Vec<u8>> {
    Some(values::to_bytes(&ty, &v).unwrap())
}

fn summary(null: bool, nan: bool, lower: Option<Vec<u8>>, upper: Option<Vec<u8>>) -> FieldSummary {
    FieldSummary {
        contains_null: null,
        contains_nan: nan,
        lower_bound: lower,
        upper_bound: upper,
    }
}

fn ints(lower: i32, upper: i32) -> FieldSummary {
    summary(
        false,
        false,
        bytes(P::Int, L::Int(lower)),
        bytes(P::Int, L::Int(upper)),
    )
}

fn doubles(null: bool, nan: bool, bounds: Option<(f64, f64)>) -> FieldSummary {
    let (l, u) = match bounds {
        Some((l, u)) => (
            bytes(P::Double, L::Double(l)),
            bytes(P::Double, L::Double(u)),
        ),
        None => (None, None),
    };
    summary(null, nan, l, u)
}

fn strings(null: bool, lower: &str, upper: &str) -> FieldSummary {
    summary(
        null,
        false,
        Some(lower.as_bytes().to_vec()),
        Some(upper.as_bytes().to_vec()),
    )
}

fn eval(expr: &Bound, summaries: Vec<FieldSummary>) -> bool {
    ManifestEvaluator::new(expr, &partition_type())
        .unwrap()
        .eval(&summaries)
        .unwrap()
}

/// Summaries for the three fields, with `field` replaced.
fn with(position: usize, field: FieldSummary) -> Vec<FieldSummary> {
    let mut all = vec![
        ints(0, 9),
        doubles(false, false, Some((0.5, 1.5))),
        strings(false, "a", "c"),
    ];
    all[position] = field;
    all
}

fn i(op: Op, v: i32) -> Bound {
    pred(op, 1000, P::Int, vec![L::Int(v)])
}

fn x(op: Op, v: f64) -> Bound {
    pred(op, 1001, P::Double, vec![L::Double(v)])
}

#[test]
fn bounds_prune_ranges_equality_and_in() {
    let m = || with(0, ints(10, 20));
    assert!(!eval(&i(Op::Lt, 10), m()));
    assert!(eval(&i(Op::LtEq, 10), m()));
    assert!(!eval(&i(Op::Gt, 20), m()));
    assert!(eval(&i(Op::GtEq, 20), m()));
    assert!(!eval(&i(Op::Eq, 21), m()));
    assert!(eval(&i(Op::Eq, 15), m()));
    assert!(eval(&i(Op::NotEq, 15), m()));
    assert!(!eval(
        &pred(Op::In, 1000, P::Int, vec![L::Int(1), L::Int(30)]),
        m()
    ));
    assert!(eval(
        &pred(Op::In, 1000, P::Int, vec![L::Int(1), L::Int(11)]),
        m()
    ));
    assert!(eval(&pred(Op::NotIn, 1000, P::Int, vec![L::Int(10)]), m()));
    assert!(!eval(&Expr::and(i(Op::Gt, 5), i(Op::Lt, 10)), m()));
    assert!(eval(&Expr::or(i(Op::Gt, 25), i(Op::Lt, 11)), m()));
    assert!(!eval(&Expr::False, m()));
}

#[test]
fn in_with_more_than_200_values_might_match() {
    let literals = |n: i32| (100..100 + n).map(L::Int).collect::<Vec<_>>();
    assert!(!eval(
        &pred(Op::In, 1000, P::Int, literals(200)),
        with(0, ints(10, 20))
    ));
    assert!(eval(
        &pred(Op::In, 1000, P::Int, literals(201)),
        with(0, ints(10, 20))
    ));
    assert!(!eval(
        &pred(Op::In, 1000, P::Int, literals(201)),
        with(0, summary(true, false, None, None))
    ));
}

#[test]
fn null_checks_use_contains_null() {
    let is_null = pred(Op::IsNull, 1000, P::Int, vec![]);
    let not_null = pred(Op::NotNull, 1000, P::Int, vec![]);
    assert!(!eval(&is_null, with(0, ints(1, 2))));
    assert!(eval(
        &is_null,
        with(
            0,
            summary(
                true,
                false,
                bytes(P::Int, L::Int(1)),
                bytes(P::Int, L::Int(1))
            )
        )
    ));
    // All null: no bounds and contains_null.
    let all_null = || with(0, summary(true, false, None, None));
    assert!(!eval(&not_null, all_null()));
    assert!(eval(&is_null, all_null()));
    assert!(!eval(&i(Op::Eq, 1), all_null()));
    assert!(eval(&i(Op::NotEq, 1), all_null()));
}

#[test]
fn missing_summaries_and_bounds_might_match() {
    // No bounds, no null and no NaN: the bounds were not written (Java
    // would prune).
    assert!(eval(
        &i(Op::Eq, 1),
        with(0, summary(false, false, None, None))
    ));
    // A list without the field's summary.
    assert!(eval(&i(Op::Eq, 100), vec![]));
    assert!(eval(&x(Op::Eq, 100.0), vec![ints(0, 1)]));
}

#[test]
fn nan_summaries() {
    let is_nan = pred(Op::IsNan, 1001, P::Double, vec![]);
    let not_nan = pred(Op::NotNan, 1001, P::Double, vec![]);
    let not_null = pred(Op::NotNull, 1001, P::Double, vec![]);
    assert!(!eval(
        &is_nan,
        with(1, doubles(false, false, Some((1.0, 2.0))))
    ));
    assert!(eval(
        &is_nan,
        with(1, doubles(false, true, Some((1.0, 2.0))))
    ));
    // All NaN: contains_nan, no null, no bounds.
    let all_nan = || with(1, doubles(false, true, None));
    assert!(!eval(&not_nan, all_nan()));
    assert!(!eval(&x(Op::Lt, 1.0), all_nan()));
    assert!(eval(&x(Op::NotEq, 1.0), all_nan()));
    assert!(eval(&not_null, all_nan()));
    // Null and NaN: no bounds, but some value is not null.
    assert!(eval(&not_null, with(1, doubles(true, true, None))));
    assert!(!eval(&not_null, with(1, doubles(true, false, None))));
    // NOT (x < 1) holds for NaN: the manifest must be kept.
    let not_lt = Expr::Not(Box::new(x(Op::Lt, 1.0)));
    assert!(eval(
        &not_lt,
        with(1, doubles(false, true, Some((-1.0, 0.5))))
    ));
    assert!(!eval(
        &not_lt,
        with(1, doubles(false, false, Some((-1.0, 0.5))))
    ));
    assert!(!eval(
        &x(Op::GtEq, 1.0),
        with(1, doubles(false, true, Some((-1.0, 0.5))))
    ));
}

#[test]
fn negative_zero_lower_bounds() {
    // Values include -0.0: the lower bound is -0.0 and `x < 0.0` might match.
    assert!(eval(
        &x(Op::Lt, 0.0),
        with(1, doubles(false, false, Some((-0.0, 0.0))))
    ));
    assert!(!eval(
        &x(Op::Lt, -0.0),
        with(1, doubles(false, false, Some((-0.0, 0.0))))
    ));
    // Bounds keep the sign of zero as written (Java compares them so): a
    // lower bound +0.0 says no value is -0.0.
    assert!(!eval(
        &x(Op::Lt, 0.0),
        with(1, doubles(false, false, Some((0.0, 1.0))))
    ));
    assert!(!eval(
        &x(Op::Eq, -0.0),
        with(1, doubles(false, false, Some((0.0, 0.0))))
    ));
    assert!(!eval(
        &x(Op::Lt, 0.0),
        with(1, doubles(false, false, Some((0.5, 1.0))))
    ));
}

#[test]
fn starts_with_on_truncated_bounds() {
    let sw = |p: &str| pred(Op::StartsWith, 1002, P::String, vec![L::String(p.into())]);
    let nsw = |p: &str| {
        pred(
            Op::NotStartsWith,
            1002,
            P::String,
            vec![L::String(p.into())],
        )
    };
    let m = |null, l, u| with(2, strings(null, l, u));
    assert!(eval(&sw("abz"), m(false, "ab", "ac")));
    assert!(!eval(&sw("ad"), m(false, "ab", "ac")));
    assert!(!eval(&sw("aa"), m(false, "ab", "ac")));
    assert!(!eval(&sw("acb"), m(false, "aa", "ac")));
    assert!(!eval(&nsw("ab"), m(false, "abc", "abd")));
    assert!(eval(&nsw("ab"), m(true, "abc", "abd")));
    assert!(eval(&nsw("ab"), m(false, "ab", "ac")));
    assert!(eval(&nsw("abc"), m(false, "ab", "ab")));
}

#[test]
fn manifest_list_rows() {
    let row = |partitions: Vec<FieldSummary>| {
        let stats = ManifestStats {
            added_files: 1,
            existing_files: 0,
            deleted_files: 0,
            added_rows: 1,
            existing_rows: 0,
            deleted_rows: 0,
            min_sequence_number: None,
            partitions,
        };
        manifest_file_row("m.avro", 1, 0, false, None, &stats).unwrap()
    };
    let rows = [
        row(with(0, ints(0, 9))),
        row(with(0, ints(10, 19))),
        row(vec![]),
    ];
    let refs: Vec<&dyn Array> = rows.iter().map(|r| r as &dyn Array).collect();
    let all = arrow_select::concat::concat(&refs).unwrap();
    let batch = RecordBatch::from(all.as_struct().clone());
    let e = ManifestEvaluator::new(&i(Op::Eq, 12), &partition_type()).unwrap();
    assert_eq!(
        e.eval_list(&batch).unwrap().iter().collect::<Vec<_>>(),
        [false, true, true]
    );
    let without = batch.project(&[0]).unwrap();
    assert_eq!(
        e.eval_list(&without).unwrap().iter().collect::<Vec<_>>(),
        [true; 3]
    );
}

#[test]
fn errors_name_what_is_wrong() {
    assert!(matches!(
        ManifestEvaluator::new(&pred(Op::IsNull, 5, P::Int, vec![]), &partition_type()),
        Err(Error::UnknownField(m)) if m.contains("field id 5")
    ));
    let bad = with(
        0,
        summary(false, false, Some(vec![1, 2]), Some(vec![1, 2, 3, 4])),
    );
    let e = ManifestEvaluator::new(&i(Op::Eq, 1), &partition_type()).unwrap();
    assert!(matches!(e.eval(&bad), Err(Error::InvalidData(m)) if m.contains("\"i\"")));
}
