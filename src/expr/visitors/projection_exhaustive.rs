//! Exhaustive checks over small ranges: for every value in the range (and
//! null), every predicate of a battery, every transform:
//! - inclusive: if the predicate holds for a value, its projection holds
//!   for the value's partition;
//! - strict: if the projection holds for a partition, the predicate holds
//!   for every value of the range in that partition;
//! - residual: for a value, the residual of its partition gives the same
//!   answer as the filter;
//! - the pre-1970 fixes: a partition value written one too large by Java
//!   before 0.11 is still found (inclusive) and never over-claimed (strict).

use std::collections::HashMap;

use super::{schema, spec};
use crate::expr::predicate::{Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op};
use crate::expr::visitors::evaluator::eval_row;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::residual::ResidualEvaluator;
use crate::expr::visitors::strict_projection::strict_projection;
use crate::expr::Datum;
use crate::transform::{scalar, Transform};
use crate::types::PrimitiveType;
use crate::values::Literal;

const PARTITION_ID: i32 = 1000;

/// Every predicate of the battery on `column`, each also under NOT.
pub(crate) fn battery(column: &BoundReference, literals: &[Datum]) -> Vec<Bound> {
    let term = || BoundTerm::Reference(column.clone());
    let mut out = vec![];
    for op in [Op::IsNull, Op::NotNull] {
        out.push(Expr::Predicate(BoundPredicate::Unary { op, term: term() }));
    }
    let mut ops = vec![Op::Lt, Op::LtEq, Op::Gt, Op::GtEq, Op::Eq, Op::NotEq];
    if column.ty == PrimitiveType::String {
        ops.extend([Op::StartsWith, Op::NotStartsWith]);
    }
    for literal in literals {
        for op in &ops {
            out.push(Expr::Predicate(BoundPredicate::Literal {
                op: *op,
                term: term(),
                literal: literal.clone(),
            }));
        }
    }
    for window in literals.windows(3).step_by(2) {
        let mut set = window.to_vec();
        set.sort_by(|a, b| a.cmp_value(b));
        set.dedup_by(|a, b| a.cmp_value(b).is_eq());
        if set.len() < 2 {
            continue;
        }
        for op in [Op::In, Op::NotIn] {
            out.push(Expr::Predicate(BoundPredicate::Set {
                op,
                term: term(),
                literals: set.clone(),
            }));
        }
    }
    let negated: Vec<Bound> = out.iter().map(|p| Expr::Not(Box::new(p.clone()))).collect();
    out.extend(negated);
    out
}

fn key(value: &Option<Datum>) -> String {
    value.as_ref().map_or("null".into(), |d| format!("{d:?}"))
}

fn is_time(t: Transform) -> bool {
    matches!(
        t,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour
    )
}

/// The partition values Java before 0.11 may have written for `value`:
/// the right one, and one more when it is negative (it rounded towards
/// zero); day of a date was always right.
fn legacy(t: Transform, source: PrimitiveType, part: &Option<Datum>) -> Vec<Option<Datum>> {
    let mut out = vec![part.clone()];
    if is_time(t) && !(t == Transform::Day && source == PrimitiveType::Date) {
        if let Some(d) = part {
            let bumped = match d.value {
                Literal::Int(v) if v < 0 => Some(Literal::Int(v + 1)),
                Literal::Date(v) if v < 0 => Some(Literal::Date(v + 1)),
                _ => None,
            };
            if let Some(value) = bumped {
                out.push(Some(Datum { ty: d.ty, value }));
            }
        }
    }
    out
}

fn run(column: &str, transforms: &[&str], values: &[Datum], literals: &[Datum]) {
    let schema = schema();
    let field_id = schema.find_id(column, true).unwrap().unwrap();
    let source = schema
        .field(field_id)
        .unwrap()
        .field_type
        .as_primitive()
        .unwrap();
    let reference = BoundReference {
        field_id,
        name: column.into(),
        ty: source,
        required: false,
    };
    let mut all: Vec<Option<Datum>> = values.iter().cloned().map(Some).collect();
    all.push(None);
    for text in transforms {
        let transform = Transform::parse(text).unwrap();
        let spec = spec(&[(column, text, "p")]);
        let parts: Vec<Option<Datum>> = all
            .iter()
            .map(|v| {
                v.as_ref()
                    .and_then(|v| scalar::apply(transform, v).unwrap())
            })
            .collect();
        let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, part) in parts.iter().enumerate() {
            groups.entry(key(part)).or_default().push(i);
        }
        for filter in battery(&reference, literals) {
            let inclusive = inclusive_projection(&filter, &spec, &schema).unwrap();
            let strict = strict_projection(&filter, &spec, &schema).unwrap();
            let residuals = ResidualEvaluator::new(&spec, &schema, &filter).unwrap();
            let row = |v: &Option<Datum>| {
                let v = v.clone();
                eval_row(&filter, &move |id| {
                    if id == field_id {
                        v.clone()
                    } else {
                        None
                    }
                })
                .unwrap()
            };
            let on_partition = |e: &Bound, p: &Option<Datum>| {
                let p = p.clone();
                eval_row(e, &move |id| {
                    if id == PARTITION_ID {
                        p.clone()
                    } else {
                        None
                    }
                })
                .unwrap()
            };
            let matches: Vec<bool> = all.iter().map(row).collect();
            let context = |i: usize| format!("{filter} under {text}, value {:?}", all[i]);
            for (i, part) in parts.iter().enumerate() {
                for written in legacy(transform, source, part) {
                    if matches[i] {
                        assert!(
                            on_partition(&inclusive, &written),
                            "inclusive {inclusive} rejects {written:?}: {}",
                            context(i)
                        );
                    }
                    if on_partition(&strict, &written) {
                        assert!(
                            matches[i],
                            "strict {strict} accepts {written:?}: {}",
                            context(i)
                        );
                    }
                }
                let residual = residuals.residual_for(std::slice::from_ref(part)).unwrap();
                assert_eq!(
                    row_of(&residual, field_id, &all[i]),
                    matches[i],
                    "residual {residual}: {}",
                    context(i)
                );
            }
            for members in groups.values() {
                let part = &parts[members[0]];
                if on_partition(&strict, part) {
                    for &i in members {
                        assert!(
                            matches[i],
                            "strict {strict} accepts {part:?}: {}",
                            context(i)
                        );
                    }
                }
            }
        }
    }
}

fn row_of(expr: &Bound, field_id: i32, value: &Option<Datum>) -> bool {
    let value = value.clone();
    eval_row(expr, &move |id| {
        if id == field_id {
            value.clone()
        } else {
            None
        }
    })
    .unwrap()
}

fn ints(range: impl Iterator<Item = i32>) -> Vec<Datum> {
    range
        .map(|v| Datum {
            ty: PrimitiveType::Int,
            value: Literal::Int(v),
        })
        .collect()
}

#[test]
fn ints_through_every_transform() {
    let transforms = [
        "identity",
        "void",
        "bucket[1]",
        "bucket[2]",
        "bucket[3]",
        "bucket[5]",
        "truncate[1]",
        "truncate[2]",
        "truncate[3]",
        "truncate[7]",
        "truncate[10]",
    ];
    run("i", &transforms, &ints(-60..=60), &ints(-15..=15));
}

#[test]
fn ints_at_the_edges_of_the_type() {
    let edges: Vec<i32> = vec![
        i32::MIN + 7,
        i32::MIN + 8,
        i32::MIN + 9,
        i32::MIN + 20,
        i32::MAX - 1,
        i32::MAX,
    ];
    let values: Vec<Datum> = ints(edges.iter().copied().chain(-3..=3));
    // Only values whose truncation fits: the others cannot be partitioned.
    let truncatable: Vec<Datum> = values
        .iter()
        .filter(|v| scalar::apply(Transform::Truncate(10), v).is_ok())
        .cloned()
        .collect();
    run(
        "i",
        &["identity", "bucket[4]"],
        &values,
        &ints(edges.iter().copied().chain([i32::MIN])),
    );
    run(
        "i",
        &["truncate[10]"],
        &truncatable,
        &ints(edges.iter().copied().chain([i32::MIN])),
    );
}

#[test]
fn dates_through_the_time_transforms() {
    let date = |v: i32| Datum {
        ty: PrimitiveType::Date,
        value: Literal::Date(v),
    };
    let values: Vec<Datum> = (-400..=400)
        .chain([-731, -732, 730, 731])
        .map(date)
        .collect();
    let literals: Vec<Datum> = [
        -731, -366, -365, -62, -61, -32, -31, -30, -2, -1, 0, 1, 30, 31, 59, 365, 366,
    ]
    .into_iter()
    .map(date)
    .collect();
    run(
        "d",
        &["year", "month", "day", "identity", "bucket[3]"],
        &values,
        &literals,
    );
}

#[test]
fn timestamps_through_the_time_transforms() {
    const HOUR: i64 = 3_600_000_000;
    for column in ["ts", "ns"] {
        let unit = if column == "ns" { 1000 } else { 1 };
        let ty = if column == "ns" {
            PrimitiveType::TimestampNs
        } else {
            PrimitiveType::Timestamp
        };
        let at = |micros: i64| Datum {
            ty,
            value: if column == "ns" {
                Literal::TimestampNs(micros * unit)
            } else {
                Literal::Timestamp(micros)
            },
        };
        let mut values = vec![];
        for h in (-800..=800).step_by(7) {
            for offset in [-1, 0, 1, HOUR / 2] {
                values.push(at(h * HOUR + offset));
            }
        }
        // Month and year boundaries before and after 1970.
        for day in [-366i64, -365, -31, -30, 31, 365] {
            for offset in [-1, 0, 1] {
                values.push(at(day * 24 * HOUR + offset));
            }
        }
        let literals: Vec<Datum> = [
            -731 * 24 * HOUR,
            -32 * 24 * HOUR,
            -25 * HOUR,
            -HOUR - 1,
            -HOUR,
            -1,
            0,
            1,
            HOUR,
            30 * HOUR + 5,
        ]
        .into_iter()
        .map(at)
        .collect();
        run(
            column,
            &["year", "month", "day", "hour", "bucket[4]"],
            &values,
            &literals,
        );
    }
}

#[test]
fn strings_through_truncate() {
    let s = |v: &str| Datum {
        ty: PrimitiveType::String,
        value: Literal::String(v.into()),
    };
    let alphabet = [
        "",
        "a",
        "b",
        "😀",
        "ab",
        "aa",
        "ba",
        "a😀",
        "😀a",
        "abc",
        "abd",
        "aab",
        "a😀b",
        "abcd",
        "abca",
        "b😀😀",
    ];
    let mut values: Vec<Datum> = alphabet.iter().map(|v| s(v)).collect();
    for x in ["a", "b", "😀"] {
        for y in ["a", "b", "😀"] {
            for z in ["", "a", "😀", "ab"] {
                values.push(s(&format!("{x}{y}{z}")));
            }
        }
    }
    let literals: Vec<Datum> = ["", "a", "ab", "a😀", "abc", "abd", "😀😀", "abcd", "b"]
        .iter()
        .map(|v| s(v))
        .collect();
    run(
        "s",
        &[
            "truncate[1]",
            "truncate[2]",
            "truncate[3]",
            "identity",
            "bucket[3]",
        ],
        &values,
        &literals,
    );
}
