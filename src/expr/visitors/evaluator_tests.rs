//! Row evaluation: Java's `Evaluator` answers, except that a null never
//! satisfies an ordered comparison (Java orders nulls first), and that NOT
//! negates the operation beneath it.

use super::*;
use crate::expr::bind::bind;
use crate::expr::json::parse;
use crate::spec::schema::Schema;

const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"x","required":false,"type":"long"},
    {"id":2,"name":"f","required":false,"type":"double"},
    {"id":3,"name":"s","required":false,"type":"string"}]}"#;

fn filter(json: &str) -> Bound {
    bind(&parse(json).unwrap(), &Schema::parse(SCHEMA).unwrap(), true).unwrap()
}

fn row(x: Option<Literal>, f: Option<f64>, s: Option<&str>) -> impl Fn(i32) -> Option<Datum> {
    let x = x.map(|v| Datum {
        ty: PrimitiveType::Long,
        value: v,
    });
    let f = f.map(|v| Datum {
        ty: PrimitiveType::Double,
        value: Literal::Double(v),
    });
    let s = s.map(|v| Datum {
        ty: PrimitiveType::String,
        value: Literal::String(v.into()),
    });
    move |id| match id {
        1 => x.clone(),
        2 => f.clone(),
        3 => s.clone(),
        _ => None,
    }
}

fn eval(json: &str, values: &dyn Fn(i32) -> Option<Datum>) -> bool {
    eval_row(&filter(json), values).unwrap()
}

fn not(json: &str) -> String {
    format!(r#"{{"type":"not","child":{json}}}"#)
}

#[test]
fn nulls_match_only_null_checks_and_negative_operations() {
    let null = row(None, None, None);
    let cases = [
        (r#"{"type":"lt","term":"x","value":5}"#, false),
        (r#"{"type":"lt-eq","term":"x","value":5}"#, false),
        (r#"{"type":"gt","term":"x","value":5}"#, false),
        (r#"{"type":"gt-eq","term":"x","value":5}"#, false),
        (r#"{"type":"eq","term":"x","value":5}"#, false),
        (r#"{"type":"not-eq","term":"x","value":5}"#, true),
        (r#"{"type":"in","term":"x","values":[5,6]}"#, false),
        (r#"{"type":"not-in","term":"x","values":[5,6]}"#, true),
        (r#"{"type":"is-null","term":"x"}"#, true),
        (r#"{"type":"not-null","term":"x"}"#, false),
        (r#"{"type":"is-nan","term":"f"}"#, false),
        (r#"{"type":"not-nan","term":"f"}"#, true),
        (r#"{"type":"starts-with","term":"s","value":"a"}"#, false),
        (r#"{"type":"not-starts-with","term":"s","value":"a"}"#, true),
    ];
    for (json, expected) in cases {
        assert_eq!(eval(json, &null), expected, "{json}");
    }
    // NOT negates the operation: NOT x < 5 is x >= 5, false for null like
    // x < 5 itself (Java: nulls first makes x < 5 true, NOT of it false).
    assert!(!eval(&not(cases[0].0), &null));
    assert!(!eval(&not(cases[2].0), &null));
    // NOT x = 5 is x != 5, NOT x != 5 is x = 5 (Java: !eq and !!eq).
    assert!(eval(&not(cases[4].0), &null));
    assert!(!eval(&not(cases[5].0), &null));
    assert!(eval(&not(cases[12].0), &null));
    assert!(!eval(&not(cases[13].0), &null));
    assert!(eval(&not(cases[10].0), &null));
    // NOT over AND / OR: De Morgan, then the operations negated.
    let both = r#"{"type":"and","left":{"type":"lt","term":"x","value":5},"right":{"type":"is-null","term":"s"}}"#;
    assert!(!eval(&not(both), &null));
    assert!(eval(&not(both), &row(Some(Literal::Long(7)), None, None)));
}

#[test]
fn values_compare_in_iceberg_order() {
    let x = |v: i64| row(Some(Literal::Long(v)), None, None);
    assert!(eval(r#"{"type":"lt","term":"x","value":5}"#, &x(4)));
    assert!(!eval(r#"{"type":"lt","term":"x","value":5}"#, &x(5)));
    assert!(eval(r#"{"type":"in","term":"x","values":[9,5,7]}"#, &x(7)));
    assert!(!eval(
        r#"{"type":"not-in","term":"x","values":[9,5,7]}"#,
        &x(7)
    ));
    let f = |v: f64| row(None, Some(v), None);
    // NaN satisfies no ordered comparison (as the metrics evaluators,
    // Java's included, assume), but their negations.
    assert!(!eval(
        r#"{"type":"gt","term":"f","value":1e300}"#,
        &f(f64::NAN)
    ));
    assert!(eval(
        r#"{"type":"not","child":{"type":"gt","term":"f","value":1e300}}"#,
        &f(f64::NAN)
    ));
    assert!(!eval(
        r#"{"type":"lt","term":"f","value":1e300}"#,
        &f(f64::NAN)
    ));
    assert!(eval(r#"{"type":"is-nan","term":"f"}"#, &f(f64::NAN)));
    assert!(!eval(r#"{"type":"not-nan","term":"f"}"#, &f(f64::NAN)));
    // -0.0 is below 0.0.
    assert!(!eval(r#"{"type":"eq","term":"f","value":0.0}"#, &f(-0.0)));
    assert!(eval(r#"{"type":"lt","term":"f","value":0.0}"#, &f(-0.0)));
    // Strings by code point: U+E000 is below U+10000 (in UTF-16 it is above).
    let s = |v: &'static str| row(None, None, Some(v));
    assert!(eval(
        r#"{"type":"lt","term":"s","value":"\ud800\udc00"}"#,
        &s("\u{E000}")
    ));
    assert!(eval(
        r#"{"type":"starts-with","term":"s","value":"ab"}"#,
        &s("abc")
    ));
    assert!(!eval(
        r#"{"type":"starts-with","term":"s","value":"abc"}"#,
        &s("ab")
    ));
}

#[test]
fn transform_terms_apply_the_transform() {
    // bucket[16](34) = 3 (Appendix B: hash(34) = 2017239379).
    let json = r#"{"type":"eq","term":{"type":"transform","transform":"bucket[16]","term":"x"},"value":3}"#;
    assert!(eval(json, &row(Some(Literal::Long(34)), None, None)));
    assert!(!eval(json, &row(Some(Literal::Long(35)), None, None)));
    assert!(!eval(json, &row(None, None, None)));
    let trunc = r#"{"type":"eq","term":{"type":"transform","transform":"truncate[2]","term":"s"},"value":"ab"}"#;
    assert!(eval(trunc, &row(None, None, Some("abc"))));
}

#[test]
fn values_are_promoted_or_refused() {
    // An old int partition value of a column now long.
    let int = |id: i32| {
        (id == 1).then_some(Datum {
            ty: PrimitiveType::Int,
            value: Literal::Int(4),
        })
    };
    assert!(eval(r#"{"type":"lt","term":"x","value":5}"#, &int));
    let wrong = |id: i32| {
        (id == 1).then(|| Datum {
            ty: PrimitiveType::String,
            value: Literal::String("4".into()),
        })
    };
    let e = eval_row(&filter(r#"{"type":"lt","term":"x","value":5}"#), &wrong).unwrap_err();
    assert!(matches!(e, Error::TypeMismatch(_)), "{e}");
    assert!(
        e.to_string().contains('x') && e.to_string().contains("long"),
        "{e}"
    );
    assert!(eval_row(&Expr::True, &wrong).unwrap());
    assert!(!eval_row(&Expr::Not(Box::new(Expr::True)), &wrong).unwrap());
}
