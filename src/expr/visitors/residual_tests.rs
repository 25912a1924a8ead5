//! Residuals per partition tuple, with the pitfalls of other
//! implementations: null identity partitions (iceberg-python #3689,
//! #3817), NOT STARTS WITH (#3503) and Java's nulls-first order.

use std::sync::Arc;

use arrow_array::{ArrayRef, StructArray};
use arrow_schema::{Field, Fields};

use super::*;
use crate::arrow::array_from_datums;
use crate::expr::bind::bind;
use crate::expr::json::parse;
use crate::values::Literal;

const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"i","required":false,"type":"int"},
    {"id":2,"name":"f","required":false,"type":"double"},
    {"id":3,"name":"s","required":false,"type":"string"},
    {"id":4,"name":"ts","required":false,"type":"timestamp"},
    {"id":5,"name":"id","required":false,"type":"long"}]}"#;

fn schema() -> Schema {
    Schema::parse(SCHEMA).unwrap()
}

fn spec(json: &str) -> PartitionSpec {
    PartitionSpec::parse(json, 0).unwrap()
}

fn residual(spec_json: &str, filter_json: &str, tuple: &[Option<Datum>]) -> String {
    let filter = bind(&parse(filter_json).unwrap(), &schema(), true).unwrap();
    ResidualEvaluator::new(&spec(spec_json), &schema(), &filter)
        .unwrap()
        .residual_for(tuple)
        .unwrap()
        .to_string()
}

fn int(v: i32) -> Option<Datum> {
    Some(Datum {
        ty: PrimitiveType::Int,
        value: Literal::Int(v),
    })
}

fn date(v: i32) -> Option<Datum> {
    Some(Datum {
        ty: PrimitiveType::Date,
        value: Literal::Date(v),
    })
}

fn string(v: &str) -> Option<Datum> {
    Some(Datum {
        ty: PrimitiveType::String,
        value: Literal::String(v.into()),
    })
}

const IDENTITY_I: &str = r#"[{"source-id":1,"field-id":1000,"name":"i","transform":"identity"}]"#;
const IDENTITY_F: &str = r#"[{"source-id":2,"field-id":1000,"name":"f","transform":"identity"}]"#;
const IDENTITY_S: &str = r#"[{"source-id":3,"field-id":1000,"name":"s","transform":"identity"}]"#;

#[test]
fn identity_partitions_decide_their_predicates() {
    let f = r#"{"type":"and","left":{"type":"lt","term":"i","value":5},"right":{"type":"eq","term":"s","value":"a"}}"#;
    assert_eq!(residual(IDENTITY_I, f, &[int(3)]), r#"s = "a""#);
    assert_eq!(residual(IDENTITY_I, f, &[int(7)]), "FALSE");
    let or = r#"{"type":"or","left":{"type":"lt","term":"i","value":5},"right":{"type":"eq","term":"s","value":"a"}}"#;
    assert_eq!(residual(IDENTITY_I, or, &[int(3)]), "TRUE");
    assert_eq!(residual(IDENTITY_I, or, &[int(7)]), r#"s = "a""#);
}

#[test]
fn null_identity_partitions() {
    // Ordered comparisons with null are false; Java's residual evaluator
    // orders nulls first and would answer TRUE for `i < 5`.
    for op in ["lt", "lt-eq", "gt", "gt-eq", "eq"] {
        let f = format!(r#"{{"type":"{op}","term":"i","value":5}}"#);
        assert_eq!(residual(IDENTITY_I, &f, &[None]), "FALSE", "{op}");
    }
    // ... and so are their negations: NOT i < 5 is i >= 5.
    let not_lt = r#"{"type":"not","child":{"type":"lt","term":"i","value":5}}"#;
    assert_eq!(residual(IDENTITY_I, not_lt, &[None]), "FALSE");
    assert_eq!(
        residual(
            IDENTITY_I,
            r#"{"type":"not-eq","term":"i","value":5}"#,
            &[None]
        ),
        "TRUE"
    );
    assert_eq!(
        residual(
            IDENTITY_I,
            r#"{"type":"not-in","term":"i","values":[5,6]}"#,
            &[None]
        ),
        "TRUE"
    );
    assert_eq!(
        residual(IDENTITY_I, r#"{"type":"is-null","term":"i"}"#, &[None]),
        "TRUE"
    );
    assert_eq!(
        residual(IDENTITY_I, r#"{"type":"not-null","term":"i"}"#, &[None]),
        "FALSE"
    );
    // NOT NaN of null is true (null is not NaN), IS NaN false.
    assert_eq!(
        residual(IDENTITY_F, r#"{"type":"not-nan","term":"f"}"#, &[None]),
        "TRUE"
    );
    assert_eq!(
        residual(IDENTITY_F, r#"{"type":"is-nan","term":"f"}"#, &[None]),
        "FALSE"
    );
    let nan = Some(Datum {
        ty: PrimitiveType::Double,
        value: Literal::Double(f64::NAN),
    });
    assert_eq!(
        residual(
            IDENTITY_F,
            r#"{"type":"is-nan","term":"f"}"#,
            std::slice::from_ref(&nan)
        ),
        "TRUE"
    );
    assert_eq!(
        residual(IDENTITY_F, r#"{"type":"not-nan","term":"f"}"#, &[nan]),
        "FALSE"
    );
}

#[test]
fn not_starts_with_is_the_negation_of_starts_with() {
    let nsw = r#"{"type":"not-starts-with","term":"s","value":"ab"}"#;
    let not_sw = r#"{"type":"not","child":{"type":"starts-with","term":"s","value":"ab"}}"#;
    let sw = r#"{"type":"starts-with","term":"s","value":"ab"}"#;
    for (tuple, starts) in [
        (string("abc"), true),
        (string("xab"), false),
        (string("a"), false),
        (None, false),
    ] {
        let t = std::slice::from_ref(&tuple);
        let expected_sw = if starts { "TRUE" } else { "FALSE" };
        assert_eq!(residual(IDENTITY_S, sw, t), expected_sw, "{tuple:?}");
        // Decided by the negation of STARTS WITH's answer; a null value
        // matches NOT STARTS WITH (Java: !startsWith), in both spellings.
        let expected_nsw = if starts { "FALSE" } else { "TRUE" };
        assert_eq!(residual(IDENTITY_S, nsw, t), expected_nsw, "{tuple:?}");
        assert_eq!(residual(IDENTITY_S, not_sw, t), expected_nsw, "{tuple:?}");
    }
}

#[test]
fn transformed_partitions_keep_what_they_cannot_decide() {
    let trunc = r#"[{"source-id":1,"field-id":1000,"name":"i_trunc","transform":"truncate[10]"}]"#;
    let lt15 = r#"{"type":"lt","term":"i","value":15}"#;
    assert_eq!(residual(trunc, lt15, &[int(0)]), "TRUE");
    assert_eq!(residual(trunc, lt15, &[int(10)]), "i < 15");
    assert_eq!(residual(trunc, lt15, &[int(20)]), "FALSE");
    assert_eq!(residual(trunc, lt15, &[None]), "FALSE");
    let bucket = r#"[{"source-id":5,"field-id":1000,"name":"b","transform":"bucket[16]"}]"#;
    // bucket[16](34) = 3 (Appendix B).
    assert_eq!(
        residual(bucket, r#"{"type":"eq","term":"id","value":34}"#, &[int(3)]),
        "id = 34"
    );
    assert_eq!(
        residual(bucket, r#"{"type":"eq","term":"id","value":34}"#, &[int(4)]),
        "FALSE"
    );
    assert_eq!(
        residual(
            bucket,
            r#"{"type":"not-eq","term":"id","value":34}"#,
            &[int(4)]
        ),
        "TRUE"
    );
    let days = r#"[{"source-id":4,"field-id":1000,"name":"d","transform":"day"},
        {"source-id":4,"field-id":1001,"name":"h","transform":"hour"}]"#;
    let ge = r#"{"type":"gt-eq","term":"ts","value":"2019-01-01T12:00:00"}"#;
    let day = 17897; // 2019-01-01
    assert_eq!(
        residual(days, ge, &[date(day + 1), int((day + 1) * 24)]),
        "TRUE"
    );
    assert_eq!(
        residual(days, ge, &[date(day), int(day * 24 + 11)]),
        "FALSE"
    );
    assert_eq!(residual(days, ge, &[date(day), int(day * 24 + 12)]), "TRUE");
    // Day alone cannot decide within the day.
    let day_only = r#"[{"source-id":4,"field-id":1000,"name":"d","transform":"day"}]"#;
    assert_eq!(
        residual(day_only, ge, &[date(day)]),
        "ts >= 2019-01-01T12:00:00"
    );
    assert_eq!(residual(day_only, ge, &[date(day + 1)]), "TRUE");
    assert_eq!(residual(day_only, ge, &[date(day - 1)]), "FALSE");
}

#[test]
fn unpartitioned_specs_keep_the_filter_as_given() {
    let f = r#"{"type":"not","child":{"type":"lt","term":"i","value":5}}"#;
    assert_eq!(residual("[]", f, &[]), "NOT i < 5");
    let void = r#"[{"source-id":1,"field-id":1000,"name":"i","transform":"void"}]"#;
    assert_eq!(residual(void, f, &[None]), "NOT i < 5");
    let unknown = r#"[{"source-id":1,"field-id":1000,"name":"i","transform":"zorder"}]"#;
    assert_eq!(residual(unknown, f, &[string("x")]), "i >= 5");
}

#[test]
fn tuples_must_fit_the_spec() {
    let filter = bind(
        &parse(r#"{"type":"lt","term":"i","value":5}"#).unwrap(),
        &schema(),
        true,
    )
    .unwrap();
    let evaluator = ResidualEvaluator::new(&spec(IDENTITY_I), &schema(), &filter).unwrap();
    assert!(matches!(
        evaluator.residual_for(&[]),
        Err(Error::Validation(_))
    ));
    assert!(matches!(
        evaluator.residual_for(&[string("x")]),
        Err(Error::TypeMismatch(_))
    ));
}

#[test]
fn rows_of_a_decoded_partition_column() {
    let spec_json = r#"[{"source-id":1,"field-id":1000,"name":"i","transform":"identity"},
        {"source-id":4,"field-id":1001,"name":"d","transform":"day"}]"#;
    let filter = bind(
        &parse(r#"{"type":"and","left":{"type":"gt","term":"i","value":1},"right":{"type":"lt","term":"ts","value":"2019-01-01T12:00:00"}}"#).unwrap(),
        &schema(),
        true,
    )
    .unwrap();
    let evaluator = ResidualEvaluator::new(&spec(spec_json), &schema(), &filter).unwrap();
    let tuples = [
        [int(2), date(17896)],
        [int(2), date(17897)],
        [None, date(17896)],
        [int(1), None],
    ];
    let i = array_from_datums(
        PrimitiveType::Int,
        &tuples.iter().map(|t| t[0].clone()).collect::<Vec<_>>(),
    )
    .unwrap();
    let d = array_from_datums(
        PrimitiveType::Date,
        &tuples.iter().map(|t| t[1].clone()).collect::<Vec<_>>(),
    )
    .unwrap();
    let fields = Fields::from(vec![
        Field::new("i", i.data_type().clone(), true),
        Field::new("d", d.data_type().clone(), true),
    ]);
    let column = StructArray::new(fields, vec![i, d] as Vec<ArrayRef>, None);
    let expected = ["TRUE", "ts < 2019-01-01T12:00:00", "FALSE", "FALSE"];
    for (row, tuple) in tuples.iter().enumerate() {
        assert_eq!(
            evaluator.residual_for(tuple).unwrap().to_string(),
            expected[row]
        );
        assert_eq!(
            evaluator
                .residual_for_row(&column, row)
                .unwrap()
                .to_string(),
            expected[row]
        );
    }
    let narrow = StructArray::new(
        Fields::from(vec![Field::new("i", arrow_schema::DataType::Int32, true)]),
        vec![Arc::new(arrow_array::Int32Array::from(vec![1])) as ArrayRef],
        None,
    );
    assert!(matches!(
        evaluator.residual_for_row(&narrow, 0),
        Err(Error::Validation(_))
    ));
}

/// `{"type": kind, "left": .., "right": ..}` over `items` as a balanced tree.
fn chain_json(kind: &str, items: &[String]) -> String {
    if items.len() == 1 {
        return items[0].clone();
    }
    let (left, right) = items.split_at(items.len().div_ceil(2));
    format!(
        r#"{{"type":"{kind}","left":{},"right":{}}}"#,
        chain_json(kind, left),
        chain_json(kind, right)
    )
}

#[test]
fn long_chains_keep_only_what_the_partition_leaves_open() {
    // 10,000 terms: `i = 0 OR ... OR i = 4999 OR id = 0 OR ... OR id = 4999`.
    let terms: Vec<String> = (0..5000)
        .flat_map(|k| {
            [
                format!(r#"{{"type":"eq","term":"i","value":{k}}}"#),
                format!(r#"{{"type":"eq","term":"id","value":{k}}}"#),
            ]
        })
        .collect();
    let or = chain_json("or", &terms);
    assert_eq!(residual(IDENTITY_I, &or, &[int(17)]), "TRUE");
    let rest = residual(IDENTITY_I, &or, &[int(-1)]);
    assert_eq!(rest.matches(" OR ").count(), 4999, "{}", &rest[..200]);
    assert!(
        rest.starts_with("(id = 0 OR id = 1 OR "),
        "{}",
        &rest[..200]
    );
    // NOT of the chain: an AND of 10,000 negations, decided the same way.
    let not = format!(r#"{{"type":"not","child":{or}}}"#);
    assert_eq!(residual(IDENTITY_I, &not, &[int(17)]), "FALSE");
    let rest = residual(IDENTITY_I, &not, &[int(-1)]);
    assert!(
        rest.starts_with("(id != 0 AND id != 1 AND "),
        "{}",
        &rest[..200]
    );
    assert_eq!(rest.matches(" AND ").count(), 4999);
    // The residual as JSON: Java's binary nodes, balanced (13 levels).
    let filter = bind(&parse(&not).unwrap(), &schema(), true).unwrap();
    let evaluator = ResidualEvaluator::new(&spec(IDENTITY_I), &schema(), &filter).unwrap();
    let json = crate::expr::json::to_json(&evaluator.residual_for(&[int(-1)]).unwrap());
    let mut node = &json;
    let mut levels = 0;
    while node["type"] == "and" {
        node = &node["left"];
        levels += 1;
    }
    assert_eq!((levels, node["type"].as_str()), (13, Some("not-eq")));
}
