//! Properties of the evaluators for random values, random metrics computed
//! from them as writers compute them (truncated string bounds with the
//! increment rule, bounds in a promoted column's old width, NaN, -0.0, a
//! writer ignoring the sign of zero, missing counts and bounds, unknown
//! record counts, columns missing from files and read as their initial
//! default) and random filters (AND, OR, NOT over every predicate):
//! - the inclusive metrics evaluator never rejects a file holding a row
//!   that matches;
//! - the strict metrics evaluator accepts a file only when every row
//!   matches;
//! - the partition evaluator agrees with three-valued evaluation of the
//!   filter on each tuple;
//! - the manifest evaluator never rejects a manifest holding a matching
//!   partition tuple, with summaries from the manifest writer's code;
//! - all of these hold for long filters too (hundreds to thousands of
//!   predicates in flat AND / OR chains, as generated filters are), whose
//!   row answer is that of their predicates combined.

use std::sync::Arc;

use arrow_array::builder::{
    Decimal128Builder, FixedSizeBinaryBuilder, Float64Builder, Int32Builder, Int64Builder,
    StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, StructArray};
use arrow_schema::{Field, Fields};
use proptest::prelude::*;

use super::inclusive_metrics::InclusiveMetricsEvaluator;
use super::manifest_evaluator::ManifestEvaluator;
use super::metrics::FileMetrics;
use super::partition_evaluator::PartitionEvaluator;
use super::strict_metrics::StrictMetricsEvaluator;
use super::test_support::{bounds_of, data_files, eval_row, pred, File, Writer};
use crate::expr::predicate::{Bound, Expr, Op};
use crate::manifest::summary::summarize;
use crate::spec::schema::Schema;
use crate::types::{NestedField, PrimitiveType as P, Type};
use crate::values::{Literal as L, MICROS_PER_DAY};

/// The column kinds: their type, and whether bounds may be written narrow.
const KINDS: [P; 7] = [
    P::Int,
    P::Long,
    P::Double,
    P::String,
    P::Decimal {
        precision: 9,
        scale: 2,
    },
    P::Uuid,
    P::Timestamp,
];
/// The column (by position) that has an initial default, and the default.
const DEFAULTED: usize = 0;
const DEFAULT: i32 = 1;

fn value(kind: usize) -> BoxedStrategy<L> {
    match KINDS[kind] {
        P::Int => (-3i32..=3).prop_map(L::Int).boxed(),
        P::Long => (-3i64..=3).prop_map(L::Long).boxed(),
        P::Double => prop::sample::select(vec![
            -1.5,
            -0.0,
            0.0,
            1.0,
            2.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ])
        .prop_map(L::Double)
        .boxed(),
        P::String => prop::collection::vec(
            prop::sample::select(vec!['a', 'b', 'é', '\u{D7FF}', '\u{E000}', '\u{10FFFF}']),
            0..=3,
        )
        .prop_map(|c| L::String(c.into_iter().collect()))
        .boxed(),
        P::Decimal { .. } => (-300i128..=300).prop_map(L::Decimal).boxed(),
        P::Uuid => (
            prop::sample::select(vec![0x00u8, 0x7f, 0x80, 0xff]),
            any::<bool>(),
        )
            .prop_map(|(b, low)| {
                let mut u = [b; 16];
                u[15] = u8::from(low);
                L::Uuid(u)
            })
            .boxed(),
        _ => (-2i64..=2)
            .prop_map(|d| L::Timestamp(d * MICROS_PER_DAY))
            .boxed(),
    }
}

fn literal(kind: usize) -> BoxedStrategy<L> {
    value(kind)
        .prop_filter(
            "NaN is never a literal",
            |v| !matches!(v, L::Double(d) if d.is_nan()),
        )
        .boxed()
}

/// A predicate on column `kind` (field id `base + kind`).
fn leaf(base: i32) -> BoxedStrategy<Bound> {
    (0..KINDS.len())
        .prop_flat_map(move |kind| {
            let ty = KINDS[kind];
            let mut ops = vec![
                Op::IsNull,
                Op::NotNull,
                Op::Lt,
                Op::LtEq,
                Op::Gt,
                Op::GtEq,
                Op::Eq,
                Op::NotEq,
                Op::In,
                Op::NotIn,
            ];
            if ty.is_floating() {
                ops.extend([Op::IsNan, Op::NotNan]);
            }
            if ty == P::String {
                ops.extend([Op::StartsWith, Op::NotStartsWith]);
            }
            (
                prop::sample::select(ops),
                prop::collection::vec(literal(kind), 1..=4),
            )
                .prop_map(move |(op, literals)| {
                    let literals = if op.is_unary() {
                        vec![]
                    } else if op.is_set() {
                        literals
                    } else {
                        literals[..1].to_vec()
                    };
                    pred(op, base + kind as i32, ty, literals)
                })
        })
        .boxed()
}

fn expr(base: i32) -> impl Strategy<Value = Bound> {
    leaf(base).prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            // Raw nodes of two to four operands, nested ANDs and constants
            // included: the visitors must not depend on the canonical form.
            prop::collection::vec(inner.clone(), 2..5).prop_map(Expr::And),
            prop::collection::vec(inner.clone(), 2..5).prop_map(Expr::Or),
            inner.prop_map(|a| Expr::Not(Box::new(a))),
        ]
    })
}

/// A long filter: an OR of ANDs or an AND of ORs over 300 to 3,000
/// predicates, maybe negated, with its groups of predicates.
#[derive(Debug, Clone)]
struct LongFilter {
    groups: Vec<Vec<Bound>>,
    or_of_ands: bool,
    negated: bool,
}

impl LongFilter {
    fn expr(&self) -> Bound {
        let groups = self.groups.iter().map(|g| {
            if self.or_of_ands {
                Expr::all(g.clone())
            } else {
                Expr::any(g.clone())
            }
        });
        let e = if self.or_of_ands {
            Expr::any(groups)
        } else {
            Expr::all(groups)
        };
        if self.negated {
            Expr::negation(e)
        } else {
            e
        }
    }

    /// The filter's answer for a row from its predicates' answers alone.
    fn matches(&self, row: &Row, base: i32) -> bool {
        let leaf = |p: &Bound| {
            let p = if self.negated {
                Expr::negation(p.clone())
            } else {
                p.clone()
            };
            matches(&p, row, base) == Some(true)
        };
        // NOT (a OR b) is NOT a AND NOT b: negation swaps the junctions.
        let outer_any = self.or_of_ands != self.negated;
        let group = |g: &Vec<Bound>| {
            if outer_any {
                g.iter().all(leaf)
            } else {
                g.iter().any(leaf)
            }
        };
        if outer_any {
            self.groups.iter().any(group)
        } else {
            self.groups.iter().all(group)
        }
    }
}

fn long_filter(base: i32) -> impl Strategy<Value = LongFilter> {
    (1usize..=4)
        .prop_flat_map(move |width| {
            (
                prop::collection::vec(
                    prop::collection::vec(leaf(base), width),
                    300 / width..=3000 / width,
                ),
                any::<bool>(),
                prop::bool::weighted(0.3),
            )
        })
        .prop_map(|(groups, or_of_ands, negated)| LongFilter {
            groups,
            or_of_ands,
            negated,
        })
}

type Row = Vec<Option<L>>;

fn row() -> impl Strategy<Value = Row> {
    (0..KINDS.len())
        .map(|k| prop::option::weighted(0.8, value(k)))
        .collect::<Vec<_>>()
}

/// How one file's metrics of one column were written.
#[derive(Debug, Clone)]
struct ColumnWriter {
    drop: [bool; 4],
    writer: Writer,
}

fn column_writer() -> impl Strategy<Value = ColumnWriter> {
    (
        prop::array::uniform4(prop::bool::weighted(0.15)),
        prop::option::of(1usize..=3),
        any::<bool>(),
    )
        .prop_map(|(drop, truncate, narrow)| ColumnWriter {
            drop,
            writer: Writer { truncate, narrow },
        })
}

/// A data file: its rows, how its metrics were written, whether its record
/// count is unknown (-1), and whether the defaulted column is missing from
/// it (its rows then hold the default) and with which counts.
#[derive(Debug, Clone)]
struct DataFile {
    rows: Vec<Row>,
    writers: Vec<ColumnWriter>,
    unknown_count: bool,
    missing_column: Option<bool>,
}

fn data_file() -> impl Strategy<Value = DataFile> {
    (
        prop::collection::vec(row(), 0..6),
        prop::collection::vec(column_writer(), KINDS.len()),
        prop::bool::weighted(0.1),
        prop::option::weighted(0.2, any::<bool>()),
    )
        .prop_map(|(rows, writers, unknown_count, missing_column)| DataFile {
            rows,
            writers,
            unknown_count,
            missing_column,
        })
}

impl DataFile {
    /// The rows as a reader sees them (the default filled in).
    fn read_rows(&self) -> Vec<Row> {
        let mut rows = self.rows.clone();
        if self.missing_column.is_some() {
            for r in &mut rows {
                r[DEFAULTED] = Some(L::Int(DEFAULT));
            }
        }
        rows
    }

    fn metrics(&self) -> File {
        let n = self.rows.len() as i64;
        let mut file = File::rows(if self.unknown_count { -1 } else { n });
        for (kind, ty) in KINDS.iter().enumerate() {
            let id = kind as i32 + 1;
            if kind == DEFAULTED {
                match self.missing_column {
                    // No metrics for a column the file does not have ...
                    Some(false) => continue,
                    // ... or counts saying every value is null.
                    Some(true) => {
                        file = file.counts(id, Some(n), Some(n), None);
                        continue;
                    }
                    None => {}
                }
            }
            let values: Vec<Option<L>> = self.rows.iter().map(|r| r[kind].clone()).collect();
            let w = &self.writers[kind];
            let nulls = values.iter().filter(|v| v.is_none()).count() as i64;
            let nans = values
                .iter()
                .filter(|v| matches!(v, Some(L::Double(d)) if d.is_nan()))
                .count() as i64;
            file = file.counts(
                id,
                (!w.drop[0]).then_some(n),
                (!w.drop[1]).then_some(nulls),
                (ty.is_floating() && !w.drop[2]).then_some(nans),
            );
            if !w.drop[3] {
                let (lower, upper) = bounds_of(*ty, &values, w.writer);
                file = file.raw_bounds(id, lower, upper);
            }
        }
        file
    }
}

fn table_schema() -> Schema {
    let fields = KINDS
        .iter()
        .enumerate()
        .map(|(k, ty)| {
            let mut f = NestedField::optional(k as i32 + 1, &format!("c{k}"), Type::Primitive(*ty));
            if k == DEFAULTED {
                f.initial_default = Some(serde_json::json!(DEFAULT));
            }
            f
        })
        .collect();
    Schema::new(0, fields).unwrap()
}

fn matches(expr: &Bound, row: &Row, base: i32) -> Option<bool> {
    eval_row(expr, &|id| row[(id - base) as usize].as_ref())
}

/// The rows as partition tuples (children in the order of KINDS).
fn tuples(rows: &[Row]) -> StructArray {
    let column = |kind: usize| -> ArrayRef {
        let values = rows.iter().map(|r| r[kind].clone());
        match KINDS[kind] {
            P::Int => {
                let mut b = Int32Builder::new();
                values.for_each(|v| b.append_option(v.map(|v| as_i64(&v) as i32)));
                Arc::new(b.finish())
            }
            P::Long => {
                let mut b = Int64Builder::new();
                values.for_each(|v| b.append_option(v.map(|v| as_i64(&v))));
                Arc::new(b.finish())
            }
            P::Double => {
                let mut b = Float64Builder::new();
                values.for_each(|v| {
                    b.append_option(v.map(|v| match v {
                        L::Double(d) => d,
                        _ => unreachable!(),
                    }))
                });
                Arc::new(b.finish())
            }
            P::String => {
                let mut b = StringBuilder::new();
                values.for_each(|v| match v {
                    Some(L::String(s)) => b.append_value(s),
                    _ => b.append_null(),
                });
                Arc::new(b.finish())
            }
            P::Decimal { .. } => {
                let mut b = Decimal128Builder::new()
                    .with_precision_and_scale(9, 2)
                    .unwrap();
                values.for_each(|v| {
                    b.append_option(v.map(|v| match v {
                        L::Decimal(d) => d,
                        _ => unreachable!(),
                    }))
                });
                Arc::new(b.finish())
            }
            P::Uuid => {
                let mut b = FixedSizeBinaryBuilder::new(16);
                values.for_each(|v| match v {
                    Some(L::Uuid(u)) => b.append_value(u).unwrap(),
                    _ => b.append_null(),
                });
                Arc::new(b.finish())
            }
            _ => {
                let mut b = TimestampMicrosecondBuilder::new();
                values.for_each(|v| b.append_option(v.map(|v| as_i64(&v))));
                Arc::new(b.finish())
            }
        }
    };
    let columns: Vec<ArrayRef> = (0..KINDS.len()).map(column).collect();
    let fields: Fields = columns
        .iter()
        .enumerate()
        .map(|(k, c)| Field::new(format!("c{k}"), c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns, None).unwrap()
}

fn as_i64(v: &L) -> i64 {
    match v {
        L::Int(i) => i64::from(*i),
        L::Long(i) | L::Timestamp(i) => *i,
        _ => unreachable!(),
    }
}

fn partition_type() -> Type {
    Type::Struct(
        KINDS
            .iter()
            .enumerate()
            .map(|(k, ty)| {
                NestedField::optional(1000 + k as i32, &format!("p{k}"), Type::Primitive(*ty))
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn metrics_evaluators_are_sound(
        files in prop::collection::vec(data_file(), 1..5),
        filter in expr(1),
    ) {
        let schema = table_schema();
        let data = data_files(&files.iter().map(DataFile::metrics).collect::<Vec<_>>(), &[]);
        let metrics = FileMetrics::new(&data).unwrap();
        let inclusive = InclusiveMetricsEvaluator::new(&filter, &schema).unwrap().eval(&metrics).unwrap();
        let strict = StrictMetricsEvaluator::new(&filter, &schema).unwrap().eval(&metrics).unwrap();
        for (i, file) in files.iter().enumerate() {
            let rows = file.read_rows();
            let any = rows.iter().any(|r| matches(&filter, r, 1) == Some(true));
            let all = rows.iter().all(|r| matches(&filter, r, 1) == Some(true));
            prop_assert!(!any || inclusive.value(i), "inclusive rejected file {i}: {filter} {file:?}");
            prop_assert!(!strict.value(i) || all, "strict accepted file {i}: {filter} {file:?}");
        }
    }

    #[test]
    fn partition_and_manifest_evaluators_agree_with_rows(
        manifests in prop::collection::vec(prop::collection::vec(row(), 0..6), 1..5),
        filter in expr(1000),
        truncate in prop::option::of(1usize..=3),
        drop_bounds in prop::bool::weighted(0.15),
        drop_summaries in prop::bool::weighted(0.1),
    ) {
        let ty = partition_type();
        let partitions = PartitionEvaluator::new(&filter, &ty).unwrap();
        let manifest = ManifestEvaluator::new(&filter, &ty).unwrap();
        for rows in &manifests {
            let tuples = tuples(rows);
            let got = partitions.eval(&tuples).unwrap();
            let mut summaries = Vec::new();
            for (k, kind) in KINDS.iter().enumerate() {
                let mut s = summarize(tuples.column(k).as_ref()).unwrap();
                let values: Vec<Option<L>> = rows.iter().map(|r| r[k].clone()).collect();
                let writer = Writer { truncate, narrow: false };
                let (lower, upper) = bounds_of(*kind, &values, writer);
                // Bounds left out by a writer, where the summary does not
                // then claim that every value is null or NaN (spec: a
                // missing bound with nulls or NaN means just that).
                if drop_bounds && !s.contains_null && !s.contains_nan {
                    (s.lower_bound, s.upper_bound) = (None, None);
                } else if s.lower_bound.is_some() {
                    (s.lower_bound, s.upper_bound) = (lower, upper);
                }
                summaries.push(s);
            }
            if drop_summaries {
                summaries.truncate(1);
            }
            let mut any = false;
            for (i, r) in rows.iter().enumerate() {
                let expected = matches(&filter, r, 1000) == Some(true);
                prop_assert_eq!(got.value(i), expected, "row {}: {} {:?}", i, filter, r);
                any |= expected;
            }
            prop_assert!(!any || manifest.eval(&summaries).unwrap(), "manifest rejected: {} {:?}", filter, rows);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn long_filters_evaluate_as_their_predicates(
        files in prop::collection::vec(data_file(), 1..4),
        long in long_filter(1),
        partition_rows in prop::collection::vec(row(), 1..12),
        partition_long in long_filter(1000),
    ) {
        let filter = long.expr();
        let schema = table_schema();
        let data = data_files(&files.iter().map(DataFile::metrics).collect::<Vec<_>>(), &[]);
        let metrics = FileMetrics::new(&data).unwrap();
        let inclusive = InclusiveMetricsEvaluator::new(&filter, &schema).unwrap().eval(&metrics).unwrap();
        let strict = StrictMetricsEvaluator::new(&filter, &schema).unwrap().eval(&metrics).unwrap();
        for (i, file) in files.iter().enumerate() {
            let rows = file.read_rows();
            for r in &rows {
                let by_row = super::evaluator::eval_row(&filter, &|id| {
                    r[(id - 1) as usize].clone().map(|value| crate::expr::Datum { ty: KINDS[(id - 1) as usize], value })
                }).unwrap();
                prop_assert_eq!(by_row, long.matches(r, 1));
                prop_assert_eq!(matches(&filter, r, 1), Some(long.matches(r, 1)));
            }
            let any = rows.iter().any(|r| long.matches(r, 1));
            let all = rows.iter().all(|r| long.matches(r, 1));
            prop_assert!(!any || inclusive.value(i), "inclusive rejected file {i}");
            prop_assert!(!strict.value(i) || all, "strict accepted file {i}");
        }
        let filter = partition_long.expr();
        let ty = partition_type();
        let got = PartitionEvaluator::new(&filter, &ty).unwrap().eval(&tuples(&partition_rows)).unwrap();
        for (i, r) in partition_rows.iter().enumerate() {
            prop_assert_eq!(got.value(i), partition_long.matches(r, 1000), "tuple {}", i);
        }
        let summaries: Vec<_> = (0..KINDS.len())
            .map(|k| summarize(tuples(&partition_rows).column(k).as_ref()).unwrap())
            .collect();
        let any = partition_rows.iter().any(|r| partition_long.matches(r, 1000));
        prop_assert!(!any || ManifestEvaluator::new(&filter, &ty).unwrap().eval(&summaries).unwrap());
    }
}
