//! One test per rule of the strict metrics evaluator.

use super::*;
use crate::expr::visitors::test_support::{data_files, filter, schema, File};
use crate::types::PrimitiveType as P;
use crate::values::Literal as L;

fn one(expr: &Bound, file: File) -> bool {
    let data = data_files(&[file], &[]);
    StrictMetricsEvaluator::new(expr, &schema())
        .unwrap()
        .eval(&FileMetrics::new(&data).unwrap())
        .unwrap()
        .value(0)
}

fn int_file(lower: i32, upper: i32, nulls: Option<i64>) -> File {
    File::rows(10).counts(4, Some(10), nulls, None).bounds(
        4,
        P::Int,
        Some(L::Int(lower)),
        Some(L::Int(upper)),
    )
}

#[test]
fn bounds_prove_ranges_when_there_is_no_null() {
    let f = || int_file(10, 20, Some(0));
    for (json, expected) in [
        (r#"{"type":"lt","term":"i","value":21}"#, true),
        (r#"{"type":"lt","term":"i","value":20}"#, false),
        (r#"{"type":"lt-eq","term":"i","value":20}"#, true),
        (r#"{"type":"gt","term":"i","value":9}"#, true),
        (r#"{"type":"gt","term":"i","value":10}"#, false),
        (r#"{"type":"gt-eq","term":"i","value":10}"#, true),
        (r#"{"type":"eq","term":"i","value":10}"#, false),
        (r#"{"type":"not-eq","term":"i","value":9}"#, true),
        (r#"{"type":"not-eq","term":"i","value":21}"#, true),
        (r#"{"type":"not-eq","term":"i","value":15}"#, false),
        (r#"{"type":"not-in","term":"i","values":[1,25]}"#, true),
        (r#"{"type":"not-in","term":"i","values":[1,15]}"#, false),
        (r#"{"type":"in","term":"i","values":[10,20]}"#, false),
        (r#"{"type":"not-null","term":"i"}"#, true),
        (r#"{"type":"is-null","term":"i"}"#, false),
        (
            r#"{"type":"not","child":{"type":"lt","term":"i","value":10}}"#,
            true,
        ),
        (
            r#"{"type":"or","left":{"type":"lt","term":"i","value":5},
                "right":{"type":"gt","term":"i","value":5}}"#,
            true,
        ),
    ] {
        assert_eq!(one(&filter(json), f()), expected, "{json}");
    }
    assert!(one(
        &filter(r#"{"type":"eq","term":"i","value":10}"#),
        int_file(10, 10, Some(0))
    ));
    assert!(one(
        &filter(r#"{"type":"in","term":"i","values":[3,10]}"#),
        int_file(10, 10, Some(0))
    ));
    assert!(!one(
        &filter(r#"{"type":"in","term":"i","values":[3,10]}"#),
        int_file(10, 11, Some(0))
    ));
}

#[test]
fn missing_or_positive_null_counts_prove_nothing() {
    for nulls in [None, Some(1)] {
        for json in [
            r#"{"type":"lt","term":"i","value":21}"#,
            r#"{"type":"not-eq","term":"i","value":9}"#,
            r#"{"type":"not-in","term":"i","values":[1,25]}"#,
            r#"{"type":"not-null","term":"i"}"#,
        ] {
            assert!(
                !one(&filter(json), int_file(10, 20, nulls)),
                "{json} {nulls:?}"
            );
        }
    }
    // A required column has no null, counts or not.
    let id_file = File::rows(3).bounds(1, P::Long, Some(L::Long(1)), Some(L::Long(3)));
    assert!(one(
        &filter(r#"{"type":"lt","term":"id","value":4}"#),
        id_file
    ));
}

#[test]
fn not_eq_and_not_in_need_bounds_not_nulls() {
    // iceberg-python #3521: values [null, 5], bounds 5..5.
    let mixed = || int_file(5, 5, Some(1));
    assert!(!one(
        &filter(r#"{"type":"not-eq","term":"i","value":5}"#),
        mixed()
    ));
    assert!(!one(
        &filter(r#"{"type":"not-in","term":"i","values":[5,6]}"#),
        mixed()
    ));
    // All null: under SQL semantics null != 5 is unknown, not true.
    let all_null = || File::rows(3).counts(4, Some(3), Some(3), None);
    assert!(!one(
        &filter(r#"{"type":"not-eq","term":"i","value":5}"#),
        all_null()
    ));
    assert!(one(&filter(r#"{"type":"is-null","term":"i"}"#), all_null()));
    assert!(one(
        &filter(r#"{"type":"not-nan","term":"f"}"#),
        File::rows(3).counts(3, Some(3), Some(3), None)
    ));
}

fn double_file(lower: Option<f64>, upper: Option<f64>, nans: Option<i64>, values: i64) -> File {
    File::rows(values)
        .counts(3, Some(values), Some(0), nans)
        .bounds(3, P::Double, lower.map(L::Double), upper.map(L::Double))
}

#[test]
fn nan_counts_must_be_known_zero_for_comparisons() {
    let lt = filter(r#"{"type":"lt","term":"f","value":3.0}"#);
    assert!(one(&lt, double_file(Some(1.0), Some(2.0), Some(0), 4)));
    assert!(!one(&lt, double_file(Some(1.0), Some(2.0), Some(1), 4)));
    // Unknown NaN count on a float column: a NaN row may fail `f < 3`.
    assert!(!one(&lt, double_file(Some(1.0), Some(2.0), None, 4)));
    // NaN != c holds.
    let ne = filter(r#"{"type":"not-eq","term":"f","value":3.0}"#);
    assert!(one(&ne, double_file(Some(1.0), Some(2.0), Some(1), 4)));
    assert!(one(&ne, double_file(None, None, Some(4), 4)));
    assert!(one(
        &filter(r#"{"type":"is-nan","term":"f"}"#),
        double_file(None, None, Some(4), 4)
    ));
    assert!(!one(
        &filter(r#"{"type":"is-nan","term":"f"}"#),
        double_file(None, None, Some(3), 4)
    ));
    assert!(one(
        &filter(r#"{"type":"not-nan","term":"f"}"#),
        double_file(Some(1.0), Some(1.0), Some(0), 4)
    ));
    // NOT (f < 1) holds for NaN rows and for values >= 1.
    let not_lt = filter(r#"{"type":"not","child":{"type":"lt","term":"f","value":1.0}}"#);
    assert!(one(&not_lt, double_file(None, None, Some(4), 4)));
    assert!(!one(&not_lt, double_file(Some(0.5), Some(2.0), Some(0), 4)));
}

#[test]
fn signed_zeros_compare_as_written() {
    // Bounds keep their sign (spec: -0.0 precedes +0.0; Java compares them
    // as written): [+0.0, +0.0] holds no -0.0, so every row is != -0.0 ...
    let ne = filter(r#"{"type":"not-eq","term":"f","value":-0.0}"#);
    assert!(one(&ne, double_file(Some(0.0), Some(0.0), Some(0), 2)));
    // ... but not when the lower bound is -0.0.
    assert!(!one(&ne, double_file(Some(-0.0), Some(0.0), Some(0), 2)));
    let gt = filter(r#"{"type":"gt","term":"f","value":-0.0}"#);
    assert!(one(&gt, double_file(Some(0.0), Some(1.0), Some(0), 2)));
    assert!(!one(&gt, double_file(Some(-0.0), Some(1.0), Some(0), 2)));
    assert!(one(&gt, double_file(Some(0.5), Some(1.0), Some(0), 2)));
}

#[test]
fn zero_rows_match_and_negative_counts_prove_nothing() {
    let lt = filter(r#"{"type":"lt","term":"i","value":0}"#);
    assert!(one(&lt, File::rows(0)));
    assert!(one(&filter("false"), File::rows(0)));
    assert!(!one(&lt, File::rows(-1)));
    assert!(!one(&filter("false"), File::rows(3)));
    assert!(one(&filter("true"), File::rows(3)));
}

#[test]
fn starts_with_proven_from_bounds() {
    let s = |lower: &str, upper: &str, nulls| {
        File::rows(4).counts(2, Some(4), nulls, None).raw_bounds(
            2,
            Some(lower.as_bytes().to_vec()),
            Some(upper.as_bytes().to_vec()),
        )
    };
    let sw = filter(r#"{"type":"starts-with","term":"s","value":"ab"}"#);
    let nsw = filter(r#"{"type":"not-starts-with","term":"s","value":"ab"}"#);
    assert!(one(&sw, s("abc", "abz", Some(0))));
    assert!(!one(&sw, s("abc", "ac", Some(0))));
    assert!(!one(&sw, s("abc", "abz", Some(1))));
    assert!(one(&nsw, s("ac", "b", Some(0))));
    assert!(one(&nsw, s("a", "aa", Some(0))));
    assert!(!one(&nsw, s("a", "ab", Some(0))));
    assert!(!one(&nsw, s("ac", "b", None)));
}

#[test]
fn nested_struct_and_transform_terms_prove_nothing() {
    let file = File::rows(3)
        .counts(8, Some(3), Some(0), None)
        .counts(7, Some(3), Some(0), None);
    assert!(!one(
        &filter(r#"{"type":"not-null","term":"st.a"}"#),
        file.clone()
    ));
    let st_not_null = crate::expr::visitors::test_support::pred(Op::NotNull, 7, P::Unknown, vec![]);
    assert!(!one(&st_not_null, file));
    let day = filter(
        r#"{"type":"lt","term":{"type":"transform","transform":"day","term":"ts"},"value":"2000-01-01"}"#,
    );
    let ts = File::rows(2).counts(9, Some(2), Some(0), None).bounds(
        9,
        P::Timestamp,
        Some(L::Timestamp(0)),
        Some(L::Timestamp(1)),
    );
    assert!(!one(&day, ts));
}

#[test]
fn an_absent_column_holds_its_initial_default() {
    // All null by counts: maybe a file from before column 11, holding 7.
    let all_null = || File::rows(3).counts(11, Some(3), Some(3), None);
    assert!(!one(
        &filter(r#"{"type":"is-null","term":"late"}"#),
        all_null()
    ));
    assert!(one(
        &filter(r#"{"type":"is-null","term":"i"}"#),
        File::rows(3).counts(4, Some(3), Some(3), None)
    ));
    let real = File::rows(3).counts(11, Some(3), Some(0), None).bounds(
        11,
        P::Int,
        Some(L::Int(1)),
        Some(L::Int(2)),
    );
    assert!(one(
        &filter(r#"{"type":"lt","term":"late","value":3}"#),
        real
    ));
}
