//! Tests of the JSON single-value form (spec: Appendix D).

use serde_json::{json, Value};

use super::*;

fn t(text: &str) -> Type {
    Type::parse(text).unwrap()
}

fn round_trip(ty: &str, value: Literal, expected: Value) {
    let ty = t(ty);
    assert_eq!(to_json(&ty, &value).unwrap(), expected, "{ty}");
    assert_eq!(from_json(&ty, &expected).unwrap(), value, "{ty}");
}

#[test]
fn appendix_d_examples() {
    round_trip("boolean", Literal::Boolean(true), json!(true));
    round_trip("int", Literal::Int(34), json!(34));
    round_trip("long", Literal::Long(34), json!(34));
    round_trip("float", Literal::Float(1.0), json!(1.0));
    round_trip("double", Literal::Double(1.0), json!(1.0));
    round_trip("decimal(9,2)", Literal::Decimal(1420), json!("14.20"));
    round_trip("date", Literal::Date(17486), json!("2017-11-16"));
    round_trip(
        "time",
        Literal::Time(81_068_123_456),
        json!("22:31:08.123456"),
    );
    round_trip(
        "timestamp",
        Literal::Timestamp(1_510_871_468_123_456),
        json!("2017-11-16T22:31:08.123456"),
    );
    round_trip(
        "timestamptz",
        Literal::Timestamptz(1_510_871_468_123_456),
        json!("2017-11-16T22:31:08.123456+00:00"),
    );
    round_trip(
        "string",
        Literal::String("iceberg".into()),
        json!("iceberg"),
    );
    let uuid = [
        0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7, 0x85,
        0xE7,
    ];
    round_trip(
        "uuid",
        Literal::Uuid(uuid),
        json!("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    );
    round_trip(
        "fixed[4]",
        Literal::Fixed(vec![0, 1, 2, 0xFF]),
        json!("000102ff"),
    );
    round_trip(
        "binary",
        Literal::Binary(vec![0, 1, 2, 0xFF]),
        json!("000102ff"),
    );
}

#[test]
fn nested_examples() {
    let ty = r#"{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":"int"},
        {"id":2,"name":"b","required":false,"type":"string"}]}"#;
    round_trip(
        ty,
        Literal::Struct(vec![
            Some(Literal::Int(1)),
            Some(Literal::String("bar".into())),
        ]),
        json!({"1": 1, "2": "bar"}),
    );
    // Null fields are left out, and missing or unknown keys read as null / ignored.
    round_trip(
        ty,
        Literal::Struct(vec![Some(Literal::Int(1)), None]),
        json!({"1": 1}),
    );
    assert_eq!(
        from_json(&t(ty), &json!({"1": 1, "2": null, "99": "x"})).unwrap(),
        Literal::Struct(vec![Some(Literal::Int(1)), None])
    );
    let list = r#"{"type":"list","element-id":3,"element-required":false,"element":"int"}"#;
    round_trip(
        list,
        Literal::List(vec![Some(Literal::Int(1)), None, Some(Literal::Int(3))]),
        json!([1, null, 3]),
    );
    let map = r#"{"type":"map","key-id":4,"key":"string","value-id":5,"value-required":false,"value":"long"}"#;
    round_trip(
        map,
        Literal::Map(vec![
            (Literal::String("a".into()), Some(Literal::Long(1))),
            (Literal::String("b".into()), Some(Literal::Long(2))),
        ]),
        json!({"keys": ["a", "b"], "values": [1, 2]}),
    );
    // Null map values are read, but not written: Java cannot read them.
    let with_null = Literal::Map(vec![
        (Literal::String("a".into()), Some(Literal::Long(1))),
        (Literal::String("b".into()), None),
    ]);
    assert_eq!(
        from_json(&t(map), &json!({"keys": ["a", "b"], "values": [1, null]})).unwrap(),
        with_null
    );
    assert!(matches!(
        to_json(&t(map), &with_null),
        Err(Error::InvalidValue(_))
    ));
    let nested = r#"{"type":"list","element-id":1,"element-required":true,"element":
        {"type":"map","key-id":2,"key":"date","value-id":3,"value-required":true,"value":
        {"type":"struct","fields":[{"id":4,"name":"d","required":true,"type":"decimal(5,1)"}]}}}"#;
    round_trip(
        nested,
        Literal::List(vec![Some(Literal::Map(vec![(
            Literal::Date(0),
            Some(Literal::Struct(vec![Some(Literal::Decimal(-15))])),
        )]))]),
        json!([{"keys": ["1970-01-01"], "values": [{"4": "-1.5"}]}]),
    );
}

#[test]
fn nested_refusals() {
    let map = t(
        r#"{"type":"map","key-id":4,"key":"string","value-id":5,"value-required":false,"value":"long"}"#,
    );
    for (bad, invalid) in [
        (json!({"keys": ["a"], "values": []}), true),
        (json!({"keys": ["a", "a"], "values": [1, 2]}), true),
        (json!({"keys": [null], "values": [1]}), true),
        (json!({"keys": ["a"]}), false),
        (json!([["a", 1]]), false),
    ] {
        match (from_json(&map, &bad), invalid) {
            (Err(Error::InvalidValue(_)), true) | (Err(Error::TypeMismatch(_)), false) => {}
            (other, _) => panic!("{bad}: {other:?}"),
        }
    }
    let st = t(r#"{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":"int"}]}"#);
    assert!(matches!(
        from_json(&st, &json!([1])),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        from_json(&st, &json!({"1": "x"})),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        to_json(&st, &Literal::Struct(vec![])),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        to_json(&st, &Literal::List(vec![])),
        Err(Error::TypeMismatch(_))
    ));
}

#[test]
fn decimals() {
    round_trip("decimal(9,2)", Literal::Decimal(-1420), json!("-14.20"));
    round_trip("decimal(9,2)", Literal::Decimal(5), json!("0.05"));
    round_trip("decimal(9,0)", Literal::Decimal(-7), json!("-7"));
    round_trip(
        "decimal(38,0)",
        Literal::Decimal(10i128.pow(38) - 1),
        json!("9".repeat(38)),
    );
    let ty = t("decimal(9,2)");
    // Java reads a decimal only with exactly the type's scale.
    for bad in ["14.2", "14.200", "14", "1.5E+1"] {
        assert!(
            matches!(from_json(&ty, &json!(bad)), Err(Error::InvalidValue(_))),
            "{bad}"
        );
    }
    // Same scale written with an exponent, as BigDecimal reads it.
    assert_eq!(
        from_json(&ty, &json!("1.420E+1")).unwrap(),
        Literal::Decimal(1420)
    );
    assert!(matches!(
        from_json(&ty, &json!("12345678.90")),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        from_json(&ty, &json!("abc")),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        from_json(&ty, &json!(14.2)),
        Err(Error::TypeMismatch(_))
    ));
}

#[test]
fn negative_scale_text() {
    // The type grammar has no negative scale, so Appendix D's "2E+20" example
    // is checked on the text helpers.
    assert_eq!(decimal::format(2, -20), "2E+20");
    assert_eq!(decimal::parse("2E+20").unwrap(), (2, -20));
}

#[test]
fn times_and_timestamps() {
    round_trip("time", Literal::Time(81_068_000_000), json!("22:31:08"));
    round_trip(
        "time",
        Literal::Time(86_399_999_999),
        json!("23:59:59.999999"),
    );
    round_trip("time", Literal::Time(0), json!("00:00:00"));
    round_trip(
        "timestamp",
        Literal::Timestamp(-1),
        json!("1969-12-31T23:59:59.999999"),
    );
    round_trip(
        "timestamp",
        Literal::Timestamp(-62_135_596_800_000_000),
        json!("0001-01-01T00:00:00"),
    );
    round_trip(
        "timestamptz",
        Literal::Timestamptz(-1_000_000),
        json!("1969-12-31T23:59:59+00:00"),
    );
    round_trip("date", Literal::Date(-719_529), json!("-0001-12-31"));
    assert_eq!(
        from_json(&t("timestamptz"), &json!("2017-11-16T22:31:08Z")).unwrap(),
        Literal::Timestamptz(1_510_871_468_000_000)
    );
    for (ty, bad) in [
        ("timestamptz", "2017-11-16T14:31:08-08:00"),
        ("timestamptz", "2017-11-16T22:31:08"),
        ("timestamp", "2017-11-16T22:31:08+00:00"),
        ("date", "2017-02-29"),
        ("time", "24:00:00"),
    ] {
        assert!(
            matches!(from_json(&t(ty), &json!(bad)), Err(Error::InvalidValue(_))),
            "{ty} {bad}"
        );
    }
    assert!(matches!(
        to_json(&t("time"), &Literal::Time(-1)),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        from_json(&t("date"), &json!(17486)),
        Err(Error::TypeMismatch(_))
    ));
}

#[test]
fn floats() {
    // The shortest text of the f32, as Java's Float.toString.
    assert_eq!(
        to_json(&t("float"), &Literal::Float(0.1)).unwrap(),
        json!(0.1)
    );
    assert_eq!(
        from_json(&t("float"), &json!(0.1)).unwrap(),
        Literal::Float(0.1)
    );
    round_trip("double", Literal::Double(-0.0), json!(-0.0));
    round_trip("double", Literal::Double(f64::INFINITY), json!("Infinity"));
    round_trip(
        "float",
        Literal::Float(f32::NEG_INFINITY),
        json!("-Infinity"),
    );
    for ty in ["float", "double"] {
        assert_eq!(
            to_json(
                &t(ty),
                &match ty {
                    "float" => Literal::Float(f32::NAN),
                    _ => Literal::Double(f64::NAN),
                }
            )
            .unwrap(),
            json!("NaN")
        );
        match from_json(&t(ty), &json!("NaN")).unwrap() {
            Literal::Float(v) => assert!(v.is_nan()),
            Literal::Double(v) => assert!(v.is_nan()),
            other => panic!("{other:?}"),
        }
        // "JSON number": an integer literal is a number too.
        assert!(from_json(&t(ty), &json!(1)).is_ok());
        assert!(matches!(
            from_json(&t(ty), &json!("1.0")),
            Err(Error::TypeMismatch(_))
        ));
    }
    assert!(matches!(
        from_json(&t("float"), &json!(1e300)),
        Err(Error::InvalidValue(_))
    ));
}

#[test]
fn integers_and_others() {
    round_trip("int", Literal::Int(i32::MIN), json!(i32::MIN));
    round_trip("long", Literal::Long(i64::MAX), json!(i64::MAX));
    assert!(matches!(
        from_json(&t("int"), &json!(2_147_483_648i64)),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        from_json(&t("long"), &json!(u64::MAX)),
        Err(Error::InvalidValue(_))
    ));
    assert!(matches!(
        from_json(&t("int"), &json!(1.0)),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        from_json(&t("int"), &json!("1")),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        from_json(&t("int"), &json!(true)),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        from_json(&t("boolean"), &json!(1)),
        Err(Error::TypeMismatch(_))
    ));
    assert!(matches!(
        from_json(&t("int"), &Value::Null),
        Err(Error::InvalidValue(_))
    ));
    round_trip(
        "string",
        Literal::String("\u{1D11E}\"\\".into()),
        json!("\u{1D11E}\"\\"),
    );
    // Upper-case hex (Java writes it) and upper-case UUIDs are read.
    assert_eq!(
        from_json(&t("binary"), &json!("00AB")).unwrap(),
        Literal::Binary(vec![0, 0xAB])
    );
    assert_eq!(
        from_json(&t("uuid"), &json!("F79C3E09-677C-4BBD-A479-3F349CB785E7")).unwrap(),
        from_json(&t("uuid"), &json!("f79c3e09-677c-4bbd-a479-3f349cb785e7")).unwrap()
    );
    round_trip("binary", Literal::Binary(vec![]), json!(""));
    for (ty, bad) in [
        ("binary", "0"),
        ("binary", "zz"),
        ("binary", "+1"),
        ("fixed[2]", "00"),
        ("fixed[2]", "000000"),
        ("uuid", "f79c3e09677c4bbda4793f349cb785e7"),
        ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e"),
        ("uuid", "g79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ] {
        assert!(
            matches!(from_json(&t(ty), &json!(bad)), Err(Error::InvalidValue(_))),
            "{ty} {bad}"
        );
    }
}
