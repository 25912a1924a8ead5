//! Inclusive and strict projection, transform by transform. The expected
//! projections are Java 1.10's (`Projections`, `ProjectionUtil` and each
//! transform's `project` / `projectStrict`), worked out by hand from its
//! rules; where frazil deliberately differs the test says why. Exhaustive
//! checks over small ranges follow; random ones are in `projection_props`.

use super::*;
use crate::expr::bind::bind;
use crate::expr::json::parse;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::strict_projection::strict_projection;
use crate::expr::Expr;
use crate::values::{hash, Literal};

pub(crate) const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"id","required":false,"type":"long"},
    {"id":2,"name":"i","required":false,"type":"int"},
    {"id":3,"name":"s","required":false,"type":"string"},
    {"id":4,"name":"d","required":false,"type":"date"},
    {"id":5,"name":"ts","required":false,"type":"timestamp"},
    {"id":6,"name":"tz","required":false,"type":"timestamptz"},
    {"id":7,"name":"ns","required":false,"type":"timestamp_ns"},
    {"id":8,"name":"dec","required":false,"type":"decimal(9,2)"},
    {"id":9,"name":"b","required":false,"type":"binary"},
    {"id":10,"name":"f","required":false,"type":"double"},
    {"id":11,"name":"u","required":false,"type":"uuid"},
    {"id":12,"name":"req","required":true,"type":"int"}]}"#;

pub(crate) fn schema() -> Schema {
    Schema::parse(SCHEMA).unwrap()
}

/// A spec from `(source column, transform, partition field name)`.
pub(crate) fn spec(fields: &[(&str, &str, &str)]) -> PartitionSpec {
    let schema = schema();
    let fields: Vec<serde_json::Value> = fields
        .iter()
        .enumerate()
        .map(|(i, (column, transform, name))| {
            serde_json::json!({
                "source-id": schema.find_id(column, true).unwrap().unwrap(),
                "field-id": 1000 + i,
                "name": name,
                "transform": transform,
            })
        })
        .collect();
    PartitionSpec::from_json(&serde_json::json!({"spec-id": 0, "fields": fields}), 0).unwrap()
}

pub(crate) fn filter(json: &str) -> Bound {
    bind(&parse(json).unwrap(), &schema(), true).unwrap()
}

/// (inclusive, strict) projections of `json` onto a one-field spec, as text.
fn both(json: &str, column: &str, transform: &str) -> (String, String) {
    let spec = spec(&[(column, transform, "p")]);
    let f = filter(json);
    (
        inclusive_projection(&f, &spec, &schema())
            .unwrap()
            .to_string(),
        strict_projection(&f, &spec, &schema()).unwrap().to_string(),
    )
}

fn check(json: &str, column: &str, transform: &str, inclusive: &str, strict: &str) {
    let (i, s) = both(json, column, transform);
    assert_eq!(
        (i.as_str(), s.as_str()),
        (inclusive, strict),
        "{json} under {transform}"
    );
}

fn lt(term: &str, value: &str) -> String {
    format!(r#"{{"type":"lt","term":"{term}","value":{value}}}"#)
}

fn pred(op: &str, term: &str, value: &str) -> String {
    format!(r#"{{"type":"{op}","term":"{term}","value":{value}}}"#)
}

fn set(op: &str, term: &str, values: &str) -> String {
    format!(r#"{{"type":"{op}","term":"{term}","values":[{values}]}}"#)
}

fn unary(op: &str, term: &str) -> String {
    format!(r#"{{"type":"{op}","term":"{term}"}}"#)
}

fn bucket(n: i32, value: Literal, ty: &str) -> i32 {
    let h = hash(&PrimitiveType::parse(ty).unwrap(), &value).unwrap();
    (h & i32::MAX) % n
}

#[test]
fn identity_keeps_every_predicate() {
    check(&lt("id", "5"), "id", "identity", "p < 5", "p < 5");
    check(
        &unary("is-nan", "f"),
        "f",
        "identity",
        "p IS NAN",
        "p IS NAN",
    );
    check(
        &unary("not-nan", "f"),
        "f",
        "identity",
        "p IS NOT NAN",
        "p IS NOT NAN",
    );
    check(
        &set("not-in", "id", "3, 1"),
        "id",
        "identity",
        "p NOT IN (1, 3)",
        "p NOT IN (1, 3)",
    );
    check(
        &pred("not-starts-with", "s", r#""ab""#),
        "s",
        "identity",
        r#"p NOT STARTS WITH "ab""#,
        r#"p NOT STARTS WITH "ab""#,
    );
    // NOT is pushed into the predicate before projecting.
    let not = format!(r#"{{"type":"not","child":{}}}"#, lt("id", "5"));
    check(&not, "id", "identity", "p >= 5", "p >= 5");
}

#[test]
fn bucket_projects_equality_inclusively_and_inequality_strictly() {
    // Appendix B: hash(34) = 2017239379, so bucket[16](34) = 3.
    check(
        &pred("eq", "id", "34"),
        "id",
        "bucket[16]",
        "p = 3",
        "FALSE",
    );
    check(
        &pred("not-eq", "id", "34"),
        "id",
        "bucket[16]",
        "TRUE",
        "p != 3",
    );
    let (b1, b2) = (
        bucket(16, Literal::Long(1), "long"),
        bucket(16, Literal::Long(34), "long"),
    );
    let (lo, hi) = (b1.min(b2), b1.max(b2));
    check(
        &set("in", "id", "1, 34"),
        "id",
        "bucket[16]",
        &format!("p IN ({lo}, {hi})"),
        "FALSE",
    );
    check(
        &set("not-in", "id", "1, 34"),
        "id",
        "bucket[16]",
        "TRUE",
        &format!("p NOT IN ({lo}, {hi})"),
    );
    check(&lt("id", "5"), "id", "bucket[16]", "TRUE", "FALSE");
    check(
        &unary("is-null", "id"),
        "id",
        "bucket[16]",
        "p IS NULL",
        "p IS NULL",
    );
    check(
        &unary("not-null", "id"),
        "id",
        "bucket[16]",
        "p IS NOT NULL",
        "p IS NOT NULL",
    );
    // "iceberg" hashes to 1210000089 (Appendix B).
    let b = 1210000089 % 7;
    check(
        &pred("eq", "s", r#""iceberg""#),
        "s",
        "bucket[7]",
        &format!("p = {b}"),
        "FALSE",
    );
    check(
        &pred("starts-with", "s", r#""ice""#),
        "s",
        "bucket[7]",
        "TRUE",
        "FALSE",
    );
    // timestamp_ns buckets its floored microseconds.
    let ns = bucket(9, Literal::Timestamp(-1), "timestamp");
    check(
        &pred("eq", "ns", r#""1969-12-31T23:59:59.999999999""#),
        "ns",
        "bucket[9]",
        &format!("p = {ns}"),
        "FALSE",
    );
}

#[test]
fn truncate_ints_adjust_open_bounds() {
    // Java: x < 15 is x <= 14, whose partition is at most truncate(14).
    check(&lt("i", "15"), "i", "truncate[10]", "p <= 10", "p < 10");
    check(
        &pred("lt-eq", "i", "15"),
        "i",
        "truncate[10]",
        "p <= 10",
        "p < 10",
    );
    check(
        &pred("gt", "i", "15"),
        "i",
        "truncate[10]",
        "p >= 10",
        "p > 10",
    );
    check(
        &pred("gt-eq", "i", "15"),
        "i",
        "truncate[10]",
        "p >= 10",
        "p > 10",
    );
    check(&lt("i", "10"), "i", "truncate[10]", "p <= 0", "p < 10");
    check(
        &pred("lt-eq", "i", "19"),
        "i",
        "truncate[10]",
        "p <= 10",
        "p < 20",
    );
    check(
        &pred("gt-eq", "i", "10"),
        "i",
        "truncate[10]",
        "p >= 10",
        "p > 0",
    );
    check(
        &pred("gt", "i", "9"),
        "i",
        "truncate[10]",
        "p >= 10",
        "p > 0",
    );
    check(&lt("i", "-5"), "i", "truncate[10]", "p <= -10", "p < -10");
    check(
        &pred("eq", "i", "15"),
        "i",
        "truncate[10]",
        "p = 10",
        "FALSE",
    );
    // Strict != stays !=, never = (iceberg-python #1422).
    check(
        &pred("not-eq", "i", "15"),
        "i",
        "truncate[10]",
        "TRUE",
        "p != 10",
    );
    check(
        &set("in", "i", "15, 25, 16"),
        "i",
        "truncate[10]",
        "p IN (10, 20)",
        "FALSE",
    );
    check(
        &set("in", "i", "15, 16"),
        "i",
        "truncate[10]",
        "p = 10",
        "FALSE",
    );
    check(
        &set("not-in", "i", "15, 25"),
        "i",
        "truncate[10]",
        "TRUE",
        "p NOT IN (10, 20)",
    );
    check(
        &unary("is-null", "i"),
        "i",
        "truncate[10]",
        "p IS NULL",
        "p IS NULL",
    );
    check(
        &pred("gt-eq", "id", "100"),
        "id",
        "truncate[10]",
        "p >= 100",
        "p > 90",
    );
}

#[test]
fn truncate_at_the_edges_of_the_type_projects_nothing_rather_than_wrapping() {
    // Java computes MIN - 1 and MAX + 1 in int arithmetic and wraps; the
    // truncation of a value near MIN wraps too (to a large positive number,
    // which makes Java's strict projection claim rows it does not hold).
    check(
        &lt("i", "-2147483648"),
        "i",
        "truncate[10]",
        "TRUE",
        "FALSE",
    );
    check(
        &pred("lt-eq", "i", "2147483647"),
        "i",
        "truncate[10]",
        "p <= 2147483640",
        "FALSE",
    );
    check(
        &pred("gt-eq", "i", "-2147483648"),
        "i",
        "truncate[10]",
        "TRUE",
        "FALSE",
    );
    check(
        &pred("gt", "i", "-2147483647"),
        "i",
        "truncate[10]",
        "TRUE",
        "FALSE",
    );
    check(
        &pred("gt", "id", "9223372036854775807"),
        "id",
        "truncate[10]",
        "TRUE",
        "p > 9223372036854775800",
    );
}

#[test]
fn truncate_decimals_step_by_one_unscaled_unit() {
    check(
        &lt("dec", r#""10.05""#),
        "dec",
        "truncate[10]",
        "p <= 10.00",
        "p < 10.00",
    );
    check(
        &pred("gt", "dec", r#""10.05""#),
        "dec",
        "truncate[10]",
        "p >= 10.00",
        "p > 10.00",
    );
    check(
        &pred("lt-eq", "dec", r#""10.09""#),
        "dec",
        "truncate[10]",
        "p <= 10.00",
        "p < 10.10",
    );
    check(
        &pred("eq", "dec", r#""-0.01""#),
        "dec",
        "truncate[10]",
        "p = -0.10",
        "FALSE",
    );
    // 9999999.99 is the largest decimal(9,2): x <= it holds for every value.
    check(
        &pred("lt-eq", "dec", r#""9999999.99""#),
        "dec",
        "truncate[10]",
        "p <= 9999999.90",
        "FALSE",
    );
}

#[test]
fn truncate_strings_and_binary() {
    check(
        &pred("eq", "s", r#""abcdef""#),
        "s",
        "truncate[3]",
        r#"p = "abc""#,
        "FALSE",
    );
    check(
        &lt("s", r#""abcdef""#),
        "s",
        "truncate[3]",
        r#"p <= "abc""#,
        r#"p < "abc""#,
    );
    check(
        &pred("lt-eq", "s", r#""abcdef""#),
        "s",
        "truncate[3]",
        r#"p <= "abc""#,
        r#"p < "abc""#,
    );
    check(
        &pred("gt", "s", r#""ab""#),
        "s",
        "truncate[3]",
        r#"p >= "ab""#,
        r#"p > "ab""#,
    );
    check(
        &pred("not-eq", "s", r#""abcdef""#),
        "s",
        "truncate[3]",
        "TRUE",
        r#"p != "abc""#,
    );
    check(
        &set("in", "s", r#""abcd", "abce", "x""#),
        "s",
        "truncate[3]",
        r#"p IN ("abc", "x")"#,
        "FALSE",
    );
    check(
        &pred("eq", "b", r#""010203""#),
        "b",
        "truncate[2]",
        "p = X'0102'",
        "FALSE",
    );
    check(
        &lt("b", r#""010203""#),
        "b",
        "truncate[2]",
        "p <= X'0102'",
        "p < X'0102'",
    );
    check(
        &pred("not-eq", "b", r#""010203""#),
        "b",
        "truncate[2]",
        "TRUE",
        "p != X'0102'",
    );
}

#[test]
fn truncate_starts_with_by_prefix_length() {
    let sw = |v: &str| pred("starts-with", "s", &format!("{v:?}"));
    let nsw = |v: &str| pred("not-starts-with", "s", &format!("{v:?}"));
    check(
        &sw("ab"),
        "s",
        "truncate[3]",
        r#"p STARTS WITH "ab""#,
        r#"p STARTS WITH "ab""#,
    );
    check(
        &sw("abc"),
        "s",
        "truncate[3]",
        r#"p = "abc""#,
        r#"p = "abc""#,
    );
    check(
        &sw("abcd"),
        "s",
        "truncate[3]",
        r#"p STARTS WITH "abc""#,
        "FALSE",
    );
    // Shorter than W keeps NOT STARTS WITH, exactly W becomes !=, longer
    // has no inclusive projection (pitfalls: iceberg-python #3528).
    check(
        &nsw("ab"),
        "s",
        "truncate[3]",
        r#"p NOT STARTS WITH "ab""#,
        r#"p NOT STARTS WITH "ab""#,
    );
    check(
        &nsw("abc"),
        "s",
        "truncate[3]",
        r#"p != "abc""#,
        r#"p != "abc""#,
    );
    check(
        &nsw("abcd"),
        "s",
        "truncate[3]",
        "TRUE",
        r#"p NOT STARTS WITH "abc""#,
    );
}

#[test]
fn truncate_counts_code_points_not_utf16_units() {
    let sw = |v: &str| pred("starts-with", "s", &format!("{v:?}"));
    let nsw = |v: &str| pred("not-starts-with", "s", &format!("{v:?}"));
    // "a😀" is 2 code points but 3 UTF-16 units. Java takes it as exactly W
    // = 3 long and projects `= "a😀"`, pruning partitions like "a😀b" that
    // hold matching rows; it is shorter than W, so the predicate stays.
    check(
        &sw("a😀"),
        "s",
        "truncate[3]",
        r#"p STARTS WITH "a😀""#,
        r#"p STARTS WITH "a😀""#,
    );
    check(
        &nsw("a😀"),
        "s",
        "truncate[3]",
        r#"p NOT STARTS WITH "a😀""#,
        r#"p NOT STARTS WITH "a😀""#,
    );
    // Three emoji are exactly W = 3 code points (Java: 6 units, "longer").
    check(
        &sw("😀😀😀"),
        "s",
        "truncate[3]",
        r#"p = "😀😀😀""#,
        r#"p = "😀😀😀""#,
    );
    check(
        &nsw("😀😀😀"),
        "s",
        "truncate[3]",
        r#"p != "😀😀😀""#,
        r#"p != "😀😀😀""#,
    );
    check(
        &pred("eq", "s", r#""😀😀😀😀""#),
        "s",
        "truncate[3]",
        r#"p = "😀😀😀""#,
        "FALSE",
    );
}

#[test]
fn time_projections_widen_for_pre_1970_values_of_old_writers() {
    // 1969-12-31T10:00:00 is day -1; Java before 0.11 wrote day 0 for it.
    let before = r#""1969-12-31T10:00:00""#;
    check(
        &lt("ts", r#""1970-01-01T00:00:00""#),
        "ts",
        "day",
        "p <= 1970-01-01",
        "p < 1970-01-01",
    );
    check(
        &pred("gt", "ts", before),
        "ts",
        "day",
        "p >= 1969-12-31",
        "p > 1970-01-01",
    );
    check(
        &pred("gt-eq", "ts", before),
        "ts",
        "day",
        "p >= 1969-12-31",
        "p > 1970-01-01",
    );
    check(
        &pred("eq", "ts", before),
        "ts",
        "day",
        "p IN (1969-12-31, 1970-01-01)",
        "FALSE",
    );
    check(
        &pred("not-eq", "ts", before),
        "ts",
        "day",
        "TRUE",
        "p NOT IN (1969-12-31, 1970-01-01)",
    );
    check(
        &set("in", "ts", &format!(r#"{before}, "2017-11-16T22:31:08""#)),
        "ts",
        "day",
        "p IN (1969-12-31, 1970-01-01, 2017-11-16)",
        "FALSE",
    );
    check(
        &set(
            "not-in",
            "ts",
            &format!(r#"{before}, "2017-11-16T22:31:08""#),
        ),
        "ts",
        "day",
        "TRUE",
        "p NOT IN (1969-12-31, 1970-01-01, 2017-11-16)",
    );
    // After 1970 nothing changes.
    check(
        &pred("eq", "ts", r#""2017-11-16T22:31:08""#),
        "ts",
        "day",
        "p = 2017-11-16",
        "FALSE",
    );
    check(
        &pred("gt-eq", "tz", r#""2017-01-01T00:00:00+00:00""#),
        "tz",
        "year",
        "p >= 47",
        "p > 46",
    );
    check(&lt("d", r#""1970-01-01""#), "d", "month", "p <= 0", "p < 0");
    check(
        &lt("d", r#""1969-12-01""#),
        "d",
        "month",
        "p <= -1",
        "p < -1",
    );
    // 1969-10-31 is in month -3; an old file in partition -2 may hold it.
    check(
        &pred("gt", "d", r#""1969-10-31""#),
        "d",
        "month",
        "p >= -2",
        "p > -2",
    );
    check(
        &lt("ns", r#""1970-01-01T00:00:00""#),
        "ns",
        "hour",
        "p <= 0",
        "p < 0",
    );
    // day of a date was always the day count: no widening (Java: Dates.DAY).
    check(
        &lt("d", r#""1969-12-31""#),
        "d",
        "day",
        "p <= 1969-12-30",
        "p < 1969-12-31",
    );
    check(
        &pred("eq", "d", r#""1969-12-31""#),
        "d",
        "day",
        "p = 1969-12-31",
        "FALSE",
    );
    check(
        &pred("starts-with", "s", r#""a""#),
        "s",
        "identity",
        r#"p STARTS WITH "a""#,
        r#"p STARTS WITH "a""#,
    );
    check(
        &unary("not-null", "ts"),
        "ts",
        "hour",
        "p IS NOT NULL",
        "p IS NOT NULL",
    );
}

#[test]
fn void_unknown_and_unpartitioned_columns() {
    for json in [
        pred("eq", "id", "5"),
        unary("is-null", "id"),
        unary("not-null", "id"),
    ] {
        check(&json, "id", "void", "TRUE", "FALSE");
        check(&json, "id", "zorder", "TRUE", "FALSE");
        check(&json, "i", "identity", "TRUE", "FALSE");
    }
}

#[test]
fn several_fields_on_one_column_combine() {
    let spec = spec(&[
        ("ts", "day", "ts_day"),
        ("ts", "hour", "ts_hour"),
        ("id", "bucket[7]", "b7"),
        ("id", "bucket[5]", "b5"),
    ]);
    let f = filter(&pred("gt", "ts", r#""2019-01-01T01:00:00""#));
    let day = 17897; // 2019-01-01
    let hour = day * 24 + 1;
    assert_eq!(
        inclusive_projection(&f, &spec, &schema())
            .unwrap()
            .to_string(),
        format!("(ts_day >= 2019-01-01 AND ts_hour >= {hour})")
    );
    assert_eq!(
        strict_projection(&f, &spec, &schema()).unwrap().to_string(),
        format!("(ts_day > 2019-01-01 OR ts_hour > {hour})")
    );
    let f = filter(&pred("eq", "id", "34"));
    let (b7, b5) = (2017239379 % 7, 2017239379 % 5);
    assert_eq!(
        inclusive_projection(&f, &spec, &schema())
            .unwrap()
            .to_string(),
        format!("(b7 = {b7} AND b5 = {b5})")
    );
    // And over predicates: each projected, the tree kept and simplified.
    let f = filter(&format!(
        r#"{{"type":"or","left":{},"right":{{"type":"and","left":{},"right":{}}}}}"#,
        pred("eq", "id", "34"),
        unary("is-null", "i"),
        lt("ts", r#""2019-01-01T00:00:00""#)
    ));
    assert_eq!(
        inclusive_projection(&f, &spec, &schema())
            .unwrap()
            .to_string(),
        format!(
            "((b7 = {b7} AND b5 = {b5}) OR (ts_day <= 2018-12-31 AND ts_hour <= {}))",
            day * 24 - 1
        )
    );
    // Nothing guarantees id = 34 or (with i unpartitioned) the AND.
    assert_eq!(
        strict_projection(&f, &spec, &schema()).unwrap(),
        Expr::False
    );
}

#[test]
fn predicates_on_transforms_project_through_the_same_transform() {
    let on_bucket = r#"{"type":"eq","term":{"type":"transform","transform":"bucket[16]","term":"id"},"value":3}"#;
    check(on_bucket, "id", "bucket[16]", "p = 3", "p = 3");
    check(on_bucket, "id", "bucket[8]", "TRUE", "FALSE");
    // Java would project `p = 3` onto an identity field of id (it ignores
    // the transform there), losing rows; frazil does not project.
    check(on_bucket, "id", "identity", "TRUE", "FALSE");
    let on_day = r#"{"type":"lt","term":{"type":"transform","transform":"day","term":"ts"},"value":"2019-01-01"}"#;
    check(on_day, "ts", "day", "p < 2019-01-01", "p < 2019-01-01");
    check(on_day, "ts", "hour", "TRUE", "FALSE");
}

#[test]
fn projected_predicates_reference_partition_fields() {
    let spec = spec(&[("s", "truncate[2]", "s_trunc")]);
    let p = inclusive_projection(&filter(&pred("eq", "s", r#""abc""#)), &spec, &schema()).unwrap();
    let Expr::Predicate(BoundPredicate::Literal { term, .. }) = p else {
        panic!("{p}")
    };
    assert_eq!(
        term,
        crate::expr::BoundTerm::Reference(crate::expr::BoundReference {
            field_id: 1000,
            name: "s_trunc".into(),
            ty: PrimitiveType::String,
            required: false,
        })
    );
    let spec = spec_day();
    let p = inclusive_projection(
        &filter(&pred("eq", "ts", r#""2019-01-01T00:00:00""#)),
        &spec,
        &schema(),
    )
    .unwrap();
    assert_eq!(p.predicates()[0].term().ty(), PrimitiveType::Date);
}

fn spec_day() -> PartitionSpec {
    spec(&[("ts", "day", "ts_day")])
}

#[test]
fn fields_over_other_columns_are_ignored_and_invalid_ones_refused() {
    let bad = PartitionSpec::parse(
        r#"[{"source-id":99,"field-id":1000,"name":"x","transform":"identity"}]"#,
        0,
    )
    .unwrap();
    // Only predicates on the missing column would need it: none exist, but
    // a filter on a present column still projects.
    assert_eq!(
        inclusive_projection(&filter(&lt("id", "5")), &bad, &schema()).unwrap(),
        Expr::True
    );
    let wrong = PartitionSpec::parse(
        r#"[{"source-id":10,"field-id":1000,"name":"x","transform":"bucket[4]"}]"#,
        0,
    )
    .unwrap();
    let e = inclusive_projection(&filter(&lt("f", "5")), &wrong, &schema()).unwrap_err();
    assert!(
        matches!(e, crate::error::Error::UnsupportedTransform { .. }),
        "{e}"
    );
}

#[path = "projection_exhaustive.rs"]
mod exhaustive;
#[path = "projection_props.rs"]
mod props;
