//! Timings of the evaluators on a realistic manifest: 1,000 entries with
//! metrics on 10 columns, and a 3-predicate filter. The test checks the
//! answers and prints the CPU time per manifest; for meaningful numbers run it
//! optimized: `cargo test --release --lib evaluator_timing -- --nocapture`.

use std::sync::Arc;
use std::time::Duration;

use arrow_array::{ArrayRef, Int32Array, StructArray};
use arrow_schema::{Field, Fields};

use super::inclusive_metrics::InclusiveMetricsEvaluator;
use super::metrics::FileMetrics;
use super::partition_evaluator::PartitionEvaluator;
use super::strict_metrics::StrictMetricsEvaluator;
use super::test_support::{data_files, pred, File};
use crate::expr::bind::bind;
use crate::expr::json::parse;
use crate::expr::predicate::{Expr, Op};
use crate::spec::schema::Schema;
use crate::types::{NestedField, PrimitiveType as P, Type};
use crate::values::Literal as L;

const ENTRIES: i64 = 1000;

fn schema() -> Schema {
    let mut fields = vec![
        NestedField::optional(1, "id", Type::Primitive(P::Long)),
        NestedField::optional(2, "price", Type::Primitive(P::Double)),
        NestedField::optional(3, "name", Type::Primitive(P::String)),
    ];
    for id in 4..=10 {
        fields.push(NestedField::optional(
            id,
            &format!("c{id}"),
            Type::Primitive(P::Long),
        ));
    }
    Schema::new(0, fields).unwrap()
}

/// File i holds ids [100 i, 100 i + 99], prices [i, i + 1], names
/// "name-{i:04}" to "name-{i:04}z" (and NaN prices in odd files).
fn manifest() -> StructArray {
    let files: Vec<File> = (0..ENTRIES)
        .map(|i| {
            let mut f = File::rows(100)
                .counts(1, Some(100), Some(0), None)
                .bounds(
                    1,
                    P::Long,
                    Some(L::Long(100 * i)),
                    Some(L::Long(100 * i + 99)),
                )
                .counts(2, Some(100), Some(0), Some(i % 2))
                .bounds(
                    2,
                    P::Double,
                    Some(L::Double(i as f64)),
                    Some(L::Double(i as f64 + 1.0)),
                )
                .counts(3, Some(100), Some(1), None)
                .bounds(
                    3,
                    P::String,
                    Some(L::String(format!("name-{i:04}"))),
                    Some(L::String(format!("name-{i:04}z"))),
                );
            for id in 4..=10 {
                f = f.counts(id, Some(100), Some(0), None).bounds(
                    id,
                    P::Long,
                    Some(L::Long(0)),
                    Some(L::Long(i)),
                );
            }
            f
        })
        .collect();
    data_files(&files, &[])
}

/// The CPU time of this thread: on a loaded machine, wall-clock time
/// mostly measures the other processes.
fn thread_cpu_time() -> Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The CPU time of one call of `f`: the least mean over batches of 10
/// calls (after one warm-up call), the least disturbed by other processes.
fn time<T>(rounds: u32, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut out = f();
    let mut best = Duration::MAX;
    for _ in 0..rounds.div_ceil(10) {
        let start = thread_cpu_time();
        for _ in 0..10 {
            out = f();
        }
        best = best.min((thread_cpu_time() - start) / 10);
    }
    (out, best)
}

#[test]
fn three_predicates_over_1000_entries() {
    let schema = schema();
    let data = manifest();
    let filter = bind(
        &parse(
            r#"{"type":"and","left":{"type":"and",
                "left":{"type":"gt-eq","term":"id","value":25000},
                "right":{"type":"lt","term":"price","value":300.5}},
                "right":{"type":"starts-with","term":"name","value":"name-02"}}"#,
        )
        .unwrap(),
        &schema,
        true,
    )
    .unwrap();
    let inclusive = InclusiveMetricsEvaluator::new(&filter, &schema).unwrap();
    let (answer, per_manifest) = time(200, || {
        inclusive.eval(&FileMetrics::new(&data).unwrap()).unwrap()
    });
    // ids >= 25000: files 250..; price < 300.5: files ..=300; names
    // "name-02xx": files 200..=299.
    let expected: Vec<bool> = (0..ENTRIES).map(|i| (250..=299).contains(&i)).collect();
    assert_eq!(answer.iter().collect::<Vec<_>>(), expected);
    println!("inclusive metrics, 3 predicates, {ENTRIES} entries: {per_manifest:?}");

    let strict = StrictMetricsEvaluator::new(&filter, &schema).unwrap();
    let (answer, per_manifest) = time(200, || {
        strict.eval(&FileMetrics::new(&data).unwrap()).unwrap()
    });
    // Names have nulls: no file proves every row matches.
    assert_eq!(answer.count_set_bits(), 0);
    println!("strict metrics, 3 predicates, {ENTRIES} entries: {per_manifest:?}");

    let ranges = bind(
        &parse(
            r#"{"type":"and","left":{"type":"gt-eq","term":"id","value":25000},
                "right":{"type":"lt","term":"c4","value":270}}"#,
        )
        .unwrap(),
        &schema,
        true,
    )
    .unwrap();
    let strict = StrictMetricsEvaluator::new(&ranges, &schema).unwrap();
    let answer = strict.eval(&FileMetrics::new(&data).unwrap()).unwrap();
    let expected: Vec<bool> = (0..ENTRIES).map(|i| (250..270).contains(&i)).collect();
    assert_eq!(answer.iter().collect::<Vec<_>>(), expected);
}

#[test]
fn partition_evaluator_over_1000_tuples() {
    let ty = Type::Struct(vec![
        NestedField::optional(1000, "day", Type::Primitive(P::Int)),
        NestedField::optional(1001, "bucket", Type::Primitive(P::Int)),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from_iter_values(
            (0..ENTRIES as i32).map(|i| i / 10),
        )),
        Arc::new(Int32Array::from_iter_values(
            (0..ENTRIES as i32).map(|i| i % 16),
        )),
    ];
    let fields: Fields = ["day", "bucket"]
        .iter()
        .map(|n| Field::new(*n, arrow_schema::DataType::Int32, true))
        .collect();
    let tuples = StructArray::try_new(fields, columns, None).unwrap();
    let filter = Expr::and(
        Expr::and(
            pred(Op::GtEq, 1000, P::Int, vec![L::Int(20)]),
            pred(Op::Lt, 1000, P::Int, vec![L::Int(40)]),
        ),
        pred(Op::In, 1001, P::Int, vec![L::Int(3), L::Int(5)]),
    );
    let evaluator = PartitionEvaluator::new(&filter, &ty).unwrap();
    let (answer, per_manifest) = time(200, || evaluator.eval(&tuples).unwrap());
    let expected = (0..ENTRIES as i32)
        .filter(|i| (20..40).contains(&(i / 10)) && [3, 5].contains(&(i % 16)))
        .count();
    assert_eq!(answer.count_set_bits(), expected);
    println!("partition, 3 predicates, {ENTRIES} tuples: {per_manifest:?}");
}

/// Each predicate alone, and a reference loop to tell how fast this machine
/// runs a plain pass over 1,000 values (other processes slow it down).
#[test]
fn single_predicates_and_a_reference_loop() {
    let schema = schema();
    let data = manifest();
    let values: Vec<i64> = (0..ENTRIES).collect();
    let (bits, t) = time(2000, || {
        let v = std::hint::black_box(&values);
        arrow_buffer::BooleanBuffer::collect_bool(v.len(), |i| v[i] > 500)
    });
    assert_eq!(bits.count_set_bits(), 499);
    println!("reference: one comparison pass over {ENTRIES} values: {t:?}");
    for (json, matching) in [
        ("true", ENTRIES as usize),
        (r#"{"type":"gt-eq","term":"id","value":25000}"#, 750),
        (r#"{"type":"lt","term":"price","value":300.5}"#, 301),
        (
            r#"{"type":"starts-with","term":"name","value":"name-02"}"#,
            100,
        ),
        (r#"{"type":"not-null","term":"id"}"#, ENTRIES as usize),
    ] {
        let f = bind(&parse(json).unwrap(), &schema, true).unwrap();
        let e = InclusiveMetricsEvaluator::new(&f, &schema).unwrap();
        let (answer, t) = time(200, || e.eval(&FileMetrics::new(&data).unwrap()).unwrap());
        assert_eq!(answer.count_set_bits(), matching, "{json}");
        println!("inclusive metrics, {json}: {t:?}");
    }
}
