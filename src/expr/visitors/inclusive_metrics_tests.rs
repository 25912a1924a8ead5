//! One test per rule of the inclusive metrics evaluator (and per pitfall
//! under "Bounds and metrics" / "Metrics evaluation").

use super::*;
use crate::error::Error;
use crate::expr::visitors::test_support::{data_files, filter, pred, schema, File};
use crate::types::PrimitiveType as P;
use crate::values::Literal as L;

fn eval_files(expr: &Bound, files: &[File]) -> Vec<bool> {
    let data = data_files(files, &[]);
    let evaluator = InclusiveMetricsEvaluator::new(expr, &schema()).unwrap();
    evaluator
        .eval(&FileMetrics::new(&data).unwrap())
        .unwrap()
        .iter()
        .collect()
}

fn one(expr: &Bound, file: File) -> bool {
    eval_files(expr, &[file])[0]
}

fn long_file(lower: i64, upper: i64) -> File {
    File::rows(10).counts(1, Some(10), Some(0), None).bounds(
        1,
        P::Long,
        Some(L::Long(lower)),
        Some(L::Long(upper)),
    )
}

#[test]
fn bounds_prune_ranges_and_equality() {
    let f = || long_file(10, 20);
    for (json, expected) in [
        (r#"{"type":"lt","term":"id","value":10}"#, false),
        (r#"{"type":"lt","term":"id","value":11}"#, true),
        (r#"{"type":"lt-eq","term":"id","value":10}"#, true),
        (r#"{"type":"lt-eq","term":"id","value":9}"#, false),
        (r#"{"type":"gt","term":"id","value":20}"#, false),
        (r#"{"type":"gt","term":"id","value":19}"#, true),
        (r#"{"type":"gt-eq","term":"id","value":20}"#, true),
        (r#"{"type":"gt-eq","term":"id","value":21}"#, false),
        (r#"{"type":"eq","term":"id","value":9}"#, false),
        (r#"{"type":"eq","term":"id","value":15}"#, true),
        (r#"{"type":"eq","term":"id","value":21}"#, false),
        (r#"{"type":"not-eq","term":"id","value":15}"#, true),
        (r#"{"type":"in","term":"id","values":[1,2,30]}"#, false),
        (r#"{"type":"in","term":"id","values":[1,12,30]}"#, true),
        (r#"{"type":"not-in","term":"id","values":[10,20]}"#, true),
        (
            r#"{"type":"not","child":{"type":"gt-eq","term":"id","value":10}}"#,
            false,
        ),
        (
            r#"{"type":"and","left":{"type":"gt","term":"id","value":5},
                "right":{"type":"lt","term":"id","value":10}}"#,
            false,
        ),
        (
            r#"{"type":"or","left":{"type":"gt","term":"id","value":25},
                "right":{"type":"lt","term":"id","value":12}}"#,
            true,
        ),
    ] {
        assert_eq!(one(&filter(json), f()), expected, "{json}");
    }
}

#[test]
fn record_count_zero_matches_nothing_and_negative_is_unknown() {
    let t = filter("true");
    let prunable = filter(r#"{"type":"lt","term":"id","value":0}"#);
    assert!(!one(&t, File::rows(0)));
    assert!(one(&t, File::rows(1)));
    // -1 (imported files): unknown, every filter might match (Java).
    let negative = long_file(10, 20);
    let negative = File {
        record_count: Some(-1),
        ..negative
    };
    assert!(one(&prunable, negative));
    assert!(!one(&prunable, long_file(10, 20)));
}

#[test]
fn missing_counts_are_unknown_not_zero() {
    let is_null = filter(r#"{"type":"is-null","term":"i"}"#);
    let not_null = filter(r#"{"type":"not-null","term":"i"}"#);
    // No null count: nulls possible.
    assert!(one(&is_null, File::rows(5).counts(4, Some(5), None, None)));
    // A null count of 0 proves there is none.
    assert!(!one(
        &is_null,
        File::rows(5).counts(4, Some(5), Some(0), None)
    ));
    // All null needs both counts.
    assert!(one(&not_null, File::rows(5).counts(4, None, Some(5), None)));
    assert!(!one(
        &not_null,
        File::rows(5).counts(4, Some(5), Some(5), None)
    ));
    // Null maps (a file without metrics) and absent map columns.
    let bare = File {
        value_counts: None,
        null_counts: None,
        ..File::rows(5)
    };
    assert!(one(&is_null, bare));
    let data = data_files(
        &[File::rows(5).counts(4, Some(5), Some(0), None)],
        &["null_value_counts", "lower_bounds"],
    );
    let e = InclusiveMetricsEvaluator::new(&is_null, &schema()).unwrap();
    assert!(e.eval(&FileMetrics::new(&data).unwrap()).unwrap().value(0));
}

#[test]
fn all_null_columns_match_only_null_tests() {
    let file = || File::rows(3).counts(4, Some(3), Some(3), None);
    for (json, expected) in [
        (r#"{"type":"is-null","term":"i"}"#, true),
        (r#"{"type":"not-null","term":"i"}"#, false),
        (r#"{"type":"eq","term":"i","value":1}"#, false),
        (r#"{"type":"lt","term":"i","value":1}"#, false),
        (r#"{"type":"in","term":"i","values":[1,2]}"#, false),
        // Java keeps these (its rows evaluate null != 1 as true).
        (r#"{"type":"not-eq","term":"i","value":1}"#, true),
        (r#"{"type":"not-in","term":"i","values":[1,2]}"#, true),
    ] {
        assert_eq!(one(&filter(json), file()), expected, "{json}");
    }
}

fn double_file(lower: Option<f64>, upper: Option<f64>, nans: Option<i64>) -> File {
    File::rows(4).counts(3, Some(4), Some(0), nans).bounds(
        3,
        P::Double,
        lower.map(L::Double),
        upper.map(L::Double),
    )
}

#[test]
fn nan_rows_and_bounds() {
    let lt = filter(r#"{"type":"lt","term":"f","value":1.0}"#);
    let ge = filter(r#"{"type":"gt-eq","term":"f","value":1.0}"#);
    let not_lt = filter(r#"{"type":"not","child":{"type":"lt","term":"f","value":1.0}}"#);
    let ne = filter(r#"{"type":"not-eq","term":"f","value":0.5}"#);
    let is_nan = filter(r#"{"type":"is-nan","term":"f"}"#);
    let not_nan = filter(r#"{"type":"not-nan","term":"f"}"#);
    // All NaN: no bounds, every comparison but != fails.
    let all_nan = || double_file(None, None, Some(4));
    assert!(!one(&lt, all_nan()));
    assert!(!one(&ge, all_nan()));
    assert!(one(&ne, all_nan()));
    assert!(one(&is_nan, all_nan()));
    assert!(!one(&not_nan, all_nan()));
    // Values in [-1, 0.5] and a NaN: `f >= 1` cannot match, `NOT (f < 1)`
    // holds for the NaN row and must keep the file.
    let some_nan = || double_file(Some(-1.0), Some(0.5), Some(1));
    assert!(!one(&ge, some_nan()));
    assert!(one(&not_lt, some_nan()));
    assert!(one(&ne, double_file(Some(0.5), Some(0.5), Some(0))));
    // No NaN: NOT (f < 1) is f >= 1 and prunes.
    assert!(!one(&not_lt, double_file(Some(-1.0), Some(0.5), Some(0))));
    assert!(!one(&is_nan, double_file(Some(-1.0), Some(0.5), Some(0))));
    // Unknown NaN count: NOT (f < 1) keeps the file.
    assert!(one(&not_lt, double_file(Some(-1.0), Some(0.5), None)));
    // A NaN bound (old ORC writers) is no bound.
    assert!(one(
        &lt,
        double_file(Some(f64::NAN), Some(f64::NAN), Some(1))
    ));
}

#[test]
fn signed_zeros_in_bounds() {
    let lt0 = filter(r#"{"type":"lt","term":"f","value":0.0}"#);
    let gt0 = filter(r#"{"type":"gt","term":"f","value":0.0}"#);
    let ge0 = filter(r#"{"type":"gt-eq","term":"f","value":0.0}"#);
    let eq_neg0 = filter(r#"{"type":"eq","term":"f","value":-0.0}"#);
    // -0.0 sorts before 0.0: a file whose lower bound is -0.0 might hold
    // values below 0.0 ...
    assert!(one(&lt0, double_file(Some(-0.0), Some(0.0), Some(0))));
    // ... and one whose upper bound is a zero none above 0.0.
    assert!(!one(&gt0, double_file(Some(-0.0), Some(-0.0), Some(0))));
    assert!(!one(&gt0, double_file(Some(-1.0), Some(0.0), Some(0))));
    assert!(!one(&lt0, double_file(Some(0.5), Some(1.0), Some(0))));
    // Bounds are compared with the sign of zero as written, as Java does:
    // a lower bound +0.0 excludes -0.0, an upper bound -0.0 excludes +0.0.
    assert!(!one(&eq_neg0, double_file(Some(0.0), Some(0.0), Some(0))));
    assert!(!one(&lt0, double_file(Some(0.0), Some(1.0), Some(0))));
    assert!(!one(&ge0, double_file(Some(-1.0), Some(-0.0), Some(0))));
    assert!(one(&ge0, double_file(Some(-1.0), Some(0.0), Some(0))));
}

#[test]
fn in_with_more_than_200_values_might_match() {
    let values = |n: i64| {
        (100..100 + n)
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let f200 = filter(&format!(
        r#"{{"type":"in","term":"id","values":[{}]}}"#,
        values(200)
    ));
    let f201 = filter(&format!(
        r#"{{"type":"in","term":"id","values":[{}]}}"#,
        values(201)
    ));
    assert!(!one(&f200, long_file(10, 20)));
    assert!(one(&f201, long_file(10, 20)));
    // ... but an all-null column still cannot match.
    assert!(!one(&f201, File::rows(2).counts(1, Some(2), Some(2), None)));
}

fn string_file(lower: &str, upper: Option<&str>, nulls: Option<i64>) -> File {
    File::rows(5).counts(2, Some(5), nulls, None).raw_bounds(
        2,
        Some(lower.as_bytes().to_vec()),
        upper.map(|u| u.as_bytes().to_vec()),
    )
}

#[test]
fn starts_with_on_truncated_bounds() {
    let sw = |p: &str| {
        filter(&format!(
            r#"{{"type":"starts-with","term":"s","value":"{p}"}}"#
        ))
    };
    // Values "abz..." to "abz...", bounds truncated to 2: "ab" / "ac".
    let file = || string_file("ab", Some("ac"), Some(0));
    assert!(one(&sw("abz"), file()));
    assert!(one(&sw("ab"), file()));
    assert!(one(&sw("ac"), file()));
    assert!(!one(&sw("ad"), file()));
    assert!(!one(&sw("aa"), file()));
    assert!(!one(&sw("b"), file()));
    // An upper bound that is a prefix of the literal sorts below it.
    assert!(!one(&sw("acb"), string_file("aa", Some("ac"), Some(0))));
    // Empty-string bounds are real bounds.
    assert!(!one(&sw("a"), string_file("", Some(""), Some(0))));
    // Multi-byte code points compare by UTF-8 bytes (code point order).
    assert!(!one(
        &sw("\u{10000}"),
        string_file("a", Some("\u{E000}"), Some(0))
    ));
    assert!(one(
        &sw("\u{E000}"),
        string_file("a", Some("\u{10000}"), Some(0))
    ));
    // No upper bound (it could not be incremented): only the lower bound.
    assert!(one(&sw("zz"), string_file("ab", None, Some(0))));
}

#[test]
fn not_starts_with_only_when_bounds_prove_every_value_has_the_prefix() {
    let nsw = |p: &str| {
        filter(&format!(
            r#"{{"type":"not-starts-with","term":"s","value":"{p}"}}"#
        ))
    };
    assert!(!one(&nsw("ab"), string_file("abc", Some("abd"), Some(0))));
    // Nulls may be there (Java keeps the file).
    assert!(one(&nsw("ab"), string_file("abc", Some("abd"), None)));
    assert!(one(&nsw("ab"), string_file("abc", Some("abd"), Some(1))));
    // A truncated, incremented upper bound no longer has the prefix.
    assert!(one(&nsw("ab"), string_file("ab", Some("ac"), Some(0))));
    // Bounds shorter than the prefix.
    assert!(one(&nsw("abc"), string_file("ab", Some("ab"), Some(0))));
}

#[test]
fn struct_columns_have_no_counts_and_list_elements_no_metrics() {
    // The binder refuses null checks on structs; built by hand, they are
    // never pruned.
    let not_null = pred(Op::NotNull, 7, P::Unknown, vec![]);
    let is_null = pred(Op::IsNull, 7, P::Unknown, vec![]);
    // Counts under the struct's id (no writer should write them) are ignored.
    let file = || {
        File::rows(3)
            .counts(7, Some(3), Some(3), None)
            .counts(8, Some(3), Some(3), None)
    };
    assert!(one(&not_null, file()));
    assert!(one(
        &is_null,
        File::rows(3).counts(7, Some(3), Some(0), None)
    ));
    // A leaf in a struct uses its own counts (they count rows whose parent
    // struct is null as null).
    assert!(!one(
        &filter(r#"{"type":"not-null","term":"st.a"}"#),
        file()
    ));
    // Java's Parquet metrics leave out rows whose parent struct is null
    // (value count 2 of 3 rows, null count 0): IS NULL might still match,
    // NOT NULL is not proven by the strict evaluator.
    let hidden = || File::rows(3).counts(8, Some(2), Some(0), None);
    assert!(one(
        &filter(r#"{"type":"is-null","term":"st.a"}"#),
        hidden()
    ));
    assert!(!one(
        &filter(r#"{"type":"is-null","term":"st.a"}"#),
        File::rows(3).counts(8, Some(3), Some(0), None)
    ));
    // Columns inside lists have no metrics (the binder refuses them; a
    // predicate built by hand on element id 13 is not pruned).
    let element = pred(Op::Eq, 13, P::Int, vec![L::Int(1)]);
    let with_counts = File::rows(3).counts(13, Some(3), Some(3), None);
    assert!(one(&element, with_counts));
}

#[test]
fn an_absent_column_holds_its_initial_default() {
    // Counts say every value is null: the file may predate column 11,
    // whose rows then hold 7.
    let all_null = || File::rows(3).counts(11, Some(3), Some(3), None);
    assert!(one(
        &filter(r#"{"type":"eq","term":"late","value":7}"#),
        all_null()
    ));
    assert!(!one(
        &filter(r#"{"type":"eq","term":"late","value":8}"#),
        all_null()
    ));
    assert!(one(
        &filter(r#"{"type":"not-null","term":"late"}"#),
        all_null()
    ));
    assert!(one(
        &filter(r#"{"type":"is-null","term":"late"}"#),
        all_null()
    ));
    // Without any metrics for it, nothing is known.
    assert!(one(
        &filter(r#"{"type":"eq","term":"late","value":8}"#),
        File::rows(3)
    ));
    // The same counts on a column without a default prune.
    let no_default = File::rows(3).counts(4, Some(3), Some(3), None);
    assert!(!one(
        &filter(r#"{"type":"eq","term":"i","value":7}"#),
        no_default
    ));
}

#[test]
fn unknown_type_columns_are_always_null() {
    assert!(!one(
        &filter(r#"{"type":"not-null","term":"n"}"#),
        File::rows(3)
    ));
    assert!(one(
        &filter(r#"{"type":"is-null","term":"n"}"#),
        File::rows(3)
    ));
}

#[test]
fn promoted_columns_keep_their_old_bound_widths() {
    // A long column whose bounds were written while it was an int.
    let int_bounds = File::rows(4).counts(1, Some(4), Some(0), None).raw_bounds(
        1,
        Some(1i32.to_le_bytes().to_vec()),
        Some(5i32.to_le_bytes().to_vec()),
    );
    assert!(!one(
        &filter(r#"{"type":"gt","term":"id","value":5}"#),
        int_bounds.clone()
    ));
    assert!(one(
        &filter(r#"{"type":"gt","term":"id","value":4}"#),
        int_bounds
    ));
    // A double column with float bounds.
    let float_bounds = File::rows(4)
        .counts(3, Some(4), Some(0), Some(0))
        .raw_bounds(
            3,
            Some(1.5f32.to_le_bytes().to_vec()),
            Some(2.5f32.to_le_bytes().to_vec()),
        );
    assert!(!one(
        &filter(r#"{"type":"lt","term":"f","value":1.5}"#),
        float_bounds.clone()
    ));
    assert!(one(
        &filter(r#"{"type":"lt-eq","term":"f","value":1.5}"#),
        float_bounds
    ));
    // v3: a timestamp column promoted from date keeps 4-byte day bounds.
    let day_bounds = File::rows(4).counts(9, Some(4), Some(0), None).raw_bounds(
        9,
        Some(1i32.to_le_bytes().to_vec()),
        Some(2i32.to_le_bytes().to_vec()),
    );
    let ts = |op: &str, t: &str| filter(&format!(r#"{{"type":"{op}","term":"ts","value":"{t}"}}"#));
    assert!(!one(&ts("lt", "1970-01-02T00:00:00"), day_bounds.clone()));
    assert!(one(&ts("lt-eq", "1970-01-02T00:00:00"), day_bounds.clone()));
    assert!(!one(&ts("gt", "1970-01-03T00:00:00"), day_bounds));
}

#[test]
fn decimal_bounds_of_minimum_length() {
    // -1.28 is one byte (0x80), 1.27 one byte (0x7f).
    let file = File::rows(2).counts(5, Some(2), Some(0), None).raw_bounds(
        5,
        Some(vec![0x80]),
        Some(vec![0x7f]),
    );
    assert!(!one(
        &filter(r#"{"type":"lt","term":"d","value":"-1.28"}"#),
        file.clone()
    ));
    assert!(one(
        &filter(r#"{"type":"lt-eq","term":"d","value":"-1.28"}"#),
        file.clone()
    ));
    assert!(!one(
        &filter(r#"{"type":"gt","term":"d","value":"1.27"}"#),
        file.clone()
    ));
    assert!(one(
        &filter(r#"{"type":"eq","term":"d","value":"0.5"}"#),
        file
    ));
}

#[test]
fn uuid_bounds_compare_unsigned() {
    let file = File::rows(2).counts(6, Some(2), Some(0), None).raw_bounds(
        6,
        Some(vec![0x00; 16]),
        Some(vec![0x7f; 16]),
    );
    let eq = r#"{"type":"eq","term":"u","value":"80808080-8080-8080-8080-808080808080"}"#;
    let gt = r#"{"type":"gt","term":"u","value":"10101010-1010-1010-1010-101010101010"}"#;
    // Signed, 0x80.. would sort below 0x00.. and not be pruned here.
    assert!(!one(&filter(eq), file.clone()));
    assert!(one(&filter(gt), file));
}

#[test]
fn binary_bounds_compare_unsigned_bytes() {
    let file = File::rows(2).counts(10, Some(2), Some(0), None).raw_bounds(
        10,
        Some(vec![0x01]),
        Some(vec![0x7f, 0xff]),
    );
    assert!(!one(
        &filter(r#"{"type":"eq","term":"b","value":"80"}"#),
        file.clone()
    ));
    assert!(one(
        &filter(r#"{"type":"eq","term":"b","value":"7f00"}"#),
        file
    ));
}

#[test]
fn unreadable_bounds_are_errors_naming_file_and_column() {
    let bad = File::rows(2).raw_bounds(4, Some(vec![1, 2, 3]), Some(vec![1, 2, 3, 4]));
    let data = data_files(&[bad], &[]);
    let e =
        InclusiveMetricsEvaluator::new(&filter(r#"{"type":"lt","term":"i","value":1}"#), &schema())
            .unwrap();
    match e.eval(&FileMetrics::new(&data).unwrap()) {
        Err(Error::InvalidData(m)) => {
            assert!(
                m.contains("f.parquet") && m.contains("\"i\"") && m.contains("3 bytes"),
                "{m}"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn transforms_of_columns() {
    // day(ts) with bounds on ts: order-preserving, the bounds transform.
    let file = || {
        File::rows(2).counts(9, Some(2), Some(0), None).bounds(
            9,
            P::Timestamp,
            Some(L::Timestamp(86_400_000_000)),
            Some(L::Timestamp(2 * 86_400_000_000 + 5)),
        )
    };
    let day = |op: &str, d: &str| {
        filter(&format!(
            r#"{{"type":"{op}","term":{{"type":"transform","transform":"day","term":"ts"}},"value":"{d}"}}"#
        ))
    };
    assert!(!one(&day("gt", "1970-01-03"), file()));
    assert!(one(&day("eq", "1970-01-03"), file()));
    assert!(!one(&day("lt", "1970-01-02"), file()));
    // bucket does not preserve order: nothing is pruned by bounds.
    let bucket = filter(
        r#"{"type":"eq","term":{"type":"transform","transform":"bucket[4]","term":"id"},"value":9}"#,
    );
    assert!(one(&bucket, long_file(10, 20)));
    assert!(!one(&bucket, File::rows(0)));
}

#[test]
fn many_files_and_sliced_inputs() {
    let files: Vec<File> = (0..100).map(|i| long_file(i * 10, i * 10 + 9)).collect();
    let got = eval_files(&filter(r#"{"type":"eq","term":"id","value":555}"#), &files);
    let expected: Vec<bool> = (0..100).map(|i| i == 55).collect();
    assert_eq!(got, expected);
    let data = data_files(&files, &[]);
    let sliced = data.slice(50, 10);
    let e = InclusiveMetricsEvaluator::new(
        &filter(r#"{"type":"eq","term":"id","value":555}"#),
        &schema(),
    )
    .unwrap();
    let got: Vec<bool> = e
        .eval(&FileMetrics::new(&sliced).unwrap())
        .unwrap()
        .iter()
        .collect();
    assert_eq!(got, (50..60).map(|i| i == 55).collect::<Vec<_>>());
}

#[test]
fn not_nan_keeps_rows_left_out_of_a_nested_leafs_counts() {
    // Java's Parquet metrics count neither a value nor a null for a leaf
    // whose enclosing struct is null: 3 NaN values counted in 4 rows leave
    // a null row, and null is not NaN.
    let nested = Schema::parse(
        r#"{"type":"struct","schema-id":0,"fields":[
            {"id":1,"name":"id","required":true,"type":"long"},
            {"id":2,"name":"st","required":false,"type":{"type":"struct","fields":[
                {"id":3,"name":"x","required":false,"type":"double"}]}}]}"#,
    )
    .unwrap();
    let json = r#"{"type":"not-nan","term":"st.x"}"#;
    let not_nan =
        crate::expr::bind::bind(&crate::expr::json::parse(json).unwrap(), &nested, true).unwrap();
    let might = |file: File| {
        let data = data_files(&[file], &[]);
        let evaluator = InclusiveMetricsEvaluator::new(&not_nan, &nested).unwrap();
        evaluator
            .eval(&FileMetrics::new(&data).unwrap())
            .unwrap()
            .value(0)
    };
    assert!(might(File::rows(4).counts(3, Some(3), Some(0), Some(3))));
    // Every row counted, every value NaN: nothing matches.
    assert!(!might(File::rows(4).counts(3, Some(4), Some(0), Some(4))));
}
