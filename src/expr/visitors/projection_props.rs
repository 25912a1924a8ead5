//! Random rows, random specs (one to three fields over two columns, any
//! transform that applies), random filters (AND / OR / NOT over predicates
//! whose literals are drawn near the row's values):
//! - the inclusive projection holds for the row's partition when the
//!   filter holds for the row;
//! - when the strict projection holds for the partition, the filter holds
//!   for the row and for every other drawn row with the same partition;
//! - the residual for the partition, evaluated on any of those rows, gives
//!   the filter's answer.

use proptest::prelude::*;

use super::{schema, spec};
use crate::expr::predicate::{Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op};
use crate::expr::visitors::evaluator::eval_row;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::projection::step;
use crate::expr::visitors::residual::ResidualEvaluator;
use crate::expr::visitors::strict_projection::strict_projection;
use crate::expr::Datum;
use crate::transform::{scalar, Transform};
use crate::types::PrimitiveType;
use crate::values::Literal;

/// Columns of the test schema with the types the transforms take.
const COLUMNS: [&str; 10] = ["i", "id", "dec", "s", "d", "ts", "ns", "b", "f", "u"];

fn column(name: &str) -> BoundReference {
    let schema = schema();
    let id = schema.find_id(name, true).unwrap().unwrap();
    BoundReference {
        field_id: id,
        name: name.into(),
        ty: schema.field(id).unwrap().field_type.as_primitive().unwrap(),
        required: false,
    }
}

const HOUR: i64 = 3_600_000_000;

/// Values from narrow ranges, so that rows share partitions often.
fn value(ty: PrimitiveType) -> BoxedStrategy<Datum> {
    let datum = move |value: Literal| Datum { ty, value };
    match ty {
        PrimitiveType::Int => (-60i32..60)
            .prop_map(move |v| datum(Literal::Int(v)))
            .boxed(),
        PrimitiveType::Long => prop_oneof![-60i64..60, -1_000_000i64..1_000_000]
            .prop_map(move |v| datum(Literal::Long(v)))
            .boxed(),
        PrimitiveType::Decimal { .. } => (-3000i128..3000)
            .prop_map(move |v| datum(Literal::Decimal(v)))
            .boxed(),
        PrimitiveType::String => "[ab😀é]{0,5}"
            .prop_map(move |v| datum(Literal::String(v)))
            .boxed(),
        PrimitiveType::Date => (-800i32..800)
            .prop_map(move |v| datum(Literal::Date(v)))
            .boxed(),
        PrimitiveType::Timestamp => prop_oneof![
            (-100i64..100).prop_map(|h| h * HOUR),
            (-800i64..800, -1i64..=1).prop_map(|(d, e)| d * 24 * HOUR + e),
            -1000 * 24 * HOUR..1000 * 24 * HOUR,
        ]
        .prop_map(move |v| datum(Literal::Timestamp(v)))
        .boxed(),
        PrimitiveType::TimestampNs => prop_oneof![
            (-100i64..100, -1i64..=1).prop_map(|(h, e)| h * HOUR * 1000 + e),
            -400 * 24 * HOUR * 1000..400 * 24 * HOUR * 1000,
        ]
        .prop_map(move |v| datum(Literal::TimestampNs(v)))
        .boxed(),
        PrimitiveType::Binary => {
            proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(255)], 0..4)
                .prop_map(move |v| datum(Literal::Binary(v)))
                .boxed()
        }
        PrimitiveType::Double => prop_oneof![
            Just(f64::NAN),
            Just(-0.0),
            Just(0.0),
            Just(f64::INFINITY),
            -5.0f64..5.0,
        ]
        .prop_map(move |v| datum(Literal::Double(v)))
        .boxed(),
        _ => prop_oneof![Just([0u8; 16]), Just([0x80; 16]), any::<[u8; 16]>()]
            .prop_map(move |v| datum(Literal::Uuid(v)))
            .boxed(),
    }
}

fn maybe_value(ty: PrimitiveType) -> BoxedStrategy<Option<Datum>> {
    prop_oneof![1 => Just(None), 6 => value(ty).prop_map(Some)].boxed()
}

/// A literal near `row`'s value: the value, a neighbour, a prefix, or any.
fn literal(ty: PrimitiveType, row: Option<Datum>) -> BoxedStrategy<Datum> {
    let Some(v) = row.filter(|v| !v.is_nan()) else {
        return value(ty)
            .prop_filter("no NaN literals", |d| !d.is_nan())
            .boxed();
    };
    let mut near = vec![v.clone()];
    near.extend([step(&v, 1), step(&v, -1)].into_iter().flatten());
    if let Literal::String(s) = &v.value {
        for w in 0..4 {
            near.push(Datum {
                ty,
                value: Literal::String(scalar::truncate_code_points(s, w).into()),
            });
        }
        near.push(Datum {
            ty,
            value: Literal::String(format!("{s}a")),
        });
    }
    for t in [Transform::Truncate(10), Transform::Truncate(3)] {
        if let Ok(Some(d)) = scalar::apply(t, &v) {
            near.push(d);
        }
    }
    prop_oneof![3 => proptest::sample::select(near), 1 => value(ty).prop_filter("no NaN literals", |d| !d.is_nan())].boxed()
}

fn predicate(c: BoundReference, row: Option<Datum>) -> BoxedStrategy<Bound> {
    let term = BoundTerm::Reference(c.clone());
    let mut ops = vec![
        Op::Lt,
        Op::LtEq,
        Op::Gt,
        Op::GtEq,
        Op::Eq,
        Op::NotEq,
        Op::In,
        Op::NotIn,
        Op::IsNull,
        Op::NotNull,
    ];
    if c.ty == PrimitiveType::String {
        ops.extend([Op::StartsWith, Op::NotStartsWith]);
    }
    if c.ty.is_floating() {
        ops.extend([Op::IsNan, Op::NotNan]);
    }
    let literals = proptest::collection::vec(literal(c.ty, row), 2..4);
    (proptest::sample::select(ops), literals)
        .prop_map(move |(op, mut literals)| {
            let term = term.clone();
            Expr::Predicate(if op.is_unary() {
                BoundPredicate::Unary { op, term }
            } else if op.is_set() {
                literals.sort_by(|a, b| a.cmp_value(b));
                literals.dedup_by(|a, b| a.cmp_value(b).is_eq());
                if literals.len() == 1 {
                    let op = if op == Op::In { Op::Eq } else { Op::NotEq };
                    BoundPredicate::Literal {
                        op,
                        term,
                        literal: literals.remove(0),
                    }
                } else {
                    BoundPredicate::Set { op, term, literals }
                }
            } else {
                BoundPredicate::Literal {
                    op,
                    term,
                    literal: literals.remove(0),
                }
            })
        })
        .boxed()
}

fn filter(columns: [BoundReference; 2], row: [Option<Datum>; 2]) -> BoxedStrategy<Bound> {
    let leaf = prop_oneof![
        predicate(columns[0].clone(), row[0].clone()),
        predicate(columns[1].clone(), row[1].clone()),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            // Raw nodes of two to four operands, nested ANDs and constants
            // included: the visitors must not depend on the canonical form.
            prop::collection::vec(inner.clone(), 2..5).prop_map(Expr::And),
            prop::collection::vec(inner.clone(), 2..5).prop_map(Expr::Or),
            inner.prop_map(|a| Expr::Not(Box::new(a))),
        ]
    })
    .boxed()
}

fn transforms_for(ty: PrimitiveType) -> Vec<Transform> {
    let all = [
        Transform::Identity,
        Transform::Void,
        Transform::Bucket(1),
        Transform::Bucket(3),
        Transform::Bucket(16),
        Transform::Truncate(1),
        Transform::Truncate(2),
        Transform::Truncate(3),
        Transform::Truncate(10),
        Transform::Year,
        Transform::Month,
        Transform::Day,
        Transform::Hour,
    ];
    all.into_iter().filter(|t| t.can_transform(ty)).collect()
}

#[derive(Debug, Clone)]
struct Case {
    columns: [BoundReference; 2],
    fields: Vec<(usize, Transform)>,
    row: [Option<Datum>; 2],
    others: Vec<[Option<Datum>; 2]>,
    filter: Bound,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::sample::select(COLUMNS.to_vec()),
        proptest::sample::select(COLUMNS.to_vec()),
    )
        .prop_filter("two columns", |(a, b)| a != b)
        .prop_flat_map(|(a, b)| {
            let columns = [column(a), column(b)];
            let (ta, tb) = (columns[0].ty, columns[1].ty);
            let field = move |i: usize| {
                let ty = if i == 0 { ta } else { tb };
                proptest::sample::select(transforms_for(ty)).prop_map(move |t| (i, t))
            };
            let fields = proptest::collection::vec((0usize..2).prop_flat_map(field), 1..4);
            let row = (maybe_value(ta), maybe_value(tb));
            let others = proptest::collection::vec((maybe_value(ta), maybe_value(tb)), 0..40);
            (Just(columns), fields, row, others)
        })
        .prop_flat_map(|(columns, fields, (a, b), others)| {
            let row = [a, b];
            let f = filter(columns.clone(), row.clone());
            let others: Vec<[Option<Datum>; 2]> = others.into_iter().map(|(a, b)| [a, b]).collect();
            (Just(columns), Just(fields), Just(row), Just(others), f)
        })
        .prop_map(|(columns, fields, row, others, filter)| Case {
            columns,
            fields,
            row,
            others,
            filter,
        })
}

fn partition(case: &Case, row: &[Option<Datum>; 2]) -> Vec<Option<Datum>> {
    case.fields
        .iter()
        .map(|(i, t)| row[*i].as_ref().and_then(|v| scalar::apply(*t, v).unwrap()))
        .collect()
}

/// Equal partition tuples in Iceberg's order (NaN equals NaN, -0.0 is
/// not 0.0: identity partitions keep them apart).
fn same_partition(a: &[Option<Datum>], b: &[Option<Datum>]) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => x.cmp_value(y).is_eq(),
        (None, None) => true,
        _ => false,
    })
}

fn holds(expr: &Bound, ids: &[i32], values: &[Option<Datum>]) -> bool {
    eval_row(expr, &|id| {
        ids.iter()
            .position(|x| *x == id)
            .and_then(|i| values[i].clone())
    })
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn projections_and_residuals_are_sound(case in case()) {
        let names: Vec<(String, String, String)> = case
            .fields
            .iter()
            .enumerate()
            .map(|(k, (i, t))| (case.columns[*i].name.clone(), t.to_string(), format!("p{k}")))
            .collect();
        let refs: Vec<(&str, &str, &str)> = names.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
        let spec = spec(&refs);
        let schema = schema();
        let inclusive = inclusive_projection(&case.filter, &spec, &schema).unwrap();
        let strict = strict_projection(&case.filter, &spec, &schema).unwrap();
        let residuals = ResidualEvaluator::new(&spec, &schema, &case.filter).unwrap();
        let column_ids = [case.columns[0].field_id, case.columns[1].field_id];
        let partition_ids: Vec<i32> = (0..case.fields.len() as i32).map(|k| 1000 + k).collect();

        let part = partition(&case, &case.row);
        let matches = holds(&case.filter, &column_ids, &case.row);
        if matches {
            prop_assert!(holds(&inclusive, &partition_ids, &part), "inclusive {} rejects {:?}", inclusive, part);
        }
        let guaranteed = holds(&strict, &partition_ids, &part);
        let residual = residuals.residual_for(&part).unwrap();
        for row in std::iter::once(&case.row).chain(case.others.iter()) {
            if !same_partition(&partition(&case, row), &part) {
                continue;
            }
            let matches = holds(&case.filter, &column_ids, row);
            if guaranteed {
                prop_assert!(matches, "strict {} holds for {:?} but not the filter for {:?}", strict, part, row);
            }
            prop_assert_eq!(holds(&residual, &column_ids, row), matches, "residual {} for {:?}", residual, row);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// The row evaluator gives a filter and its NOT-rewritten form the same
    /// answer, nulls and NaN included: what lets projections and metrics
    /// evaluators work on the rewritten form.
    #[test]
    fn rewriting_not_keeps_the_row_semantics(case in case()) {
        let ids = [case.columns[0].field_id, case.columns[1].field_id];
        let rewritten = crate::expr::visitors::rewrite_not::rewrite_not(&case.filter);
        for row in std::iter::once(&case.row).chain(case.others.iter()) {
            prop_assert_eq!(holds(&case.filter, &ids, row), holds(&rewritten, &ids, row), "{} vs {}", case.filter, rewritten);
        }
    }
}
