//! Single-value transforms: the spec's examples (Appendix B hashes, the
//! truncate table), floors before 1970, refusals, and a property test that
//! the scalar function and the Arrow kernels agree on random values.

use proptest::prelude::*;

use super::*;
use crate::arrow::{array_from_datums, datum_at};
use crate::transform::kernels;

fn d(ty: &str, value: Literal) -> Datum {
    Datum::new(PrimitiveType::parse(ty).unwrap(), value).unwrap()
}

fn apply_ok(t: &str, value: Datum) -> Option<Literal> {
    apply(Transform::parse(t).unwrap(), &value)
        .unwrap()
        .map(|d| d.value)
}

/// `(hash & Integer.MAX_VALUE) % n` of a hash Appendix B lists.
fn bucket_of(hash: i32, n: i32) -> Literal {
    Literal::Int((hash & i32::MAX) % n)
}

/// 2017-11-16T22:31:08 UTC (Appendix B).
const TS: i64 = 1_510_871_468_000_000;

#[test]
fn bucket_uses_the_appendix_b_hashes() {
    assert_eq!(
        apply_ok("bucket[16]", d("int", Literal::Int(34))),
        Some(bucket_of(2017239379, 16))
    );
    assert_eq!(
        apply_ok("bucket[16]", d("long", Literal::Long(34))),
        Some(bucket_of(2017239379, 16))
    );
    assert_eq!(
        apply_ok("bucket[7]", d("string", Literal::String("iceberg".into()))),
        Some(bucket_of(1210000089, 7))
    );
    assert_eq!(
        apply_ok("bucket[100]", d("decimal(9,2)", Literal::Decimal(1420))),
        Some(bucket_of(-500754589, 100))
    );
    assert_eq!(
        apply_ok("bucket[3]", d("date", Literal::Date(17486))),
        Some(bucket_of(-653330422, 3))
    );
    assert_eq!(
        apply_ok("bucket[5]", d("timestamptz", Literal::Timestamptz(TS))),
        Some(bucket_of(-2047944441, 5))
    );
    // timestamp_ns buckets by its microseconds, floored (Java's BucketUtil):
    // 999 ns past the Appendix B instant is still that microsecond.
    assert_eq!(
        apply_ok(
            "bucket[5]",
            d("timestamp_ns", Literal::TimestampNs(TS * 1000 + 999))
        ),
        Some(bucket_of(-2047944441, 5))
    );
    // One nanosecond before 1970 is microsecond -1, not 0.
    assert_eq!(
        apply_ok(
            "bucket[1000]",
            d("timestamptz_ns", Literal::TimestamptzNs(-1))
        ),
        apply_ok("bucket[1000]", d("timestamp", Literal::Timestamp(-1)))
    );
    assert_ne!(
        apply_ok("bucket[1000]", d("timestamp", Literal::Timestamp(-1))),
        apply_ok("bucket[1000]", d("timestamp", Literal::Timestamp(0)))
    );
    let uuid = d(
        "uuid",
        Literal::Uuid([
            0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7,
            0x85, 0xE7,
        ]),
    );
    assert_eq!(
        apply_ok("bucket[16]", uuid),
        Some(bucket_of(1488055340, 16))
    );
    assert_eq!(
        apply_ok(
            "bucket[16]",
            d("fixed[4]", Literal::Fixed(vec![0, 1, 2, 3]))
        ),
        Some(bucket_of(-188683207, 16))
    );
    assert_eq!(
        apply_ok("bucket[16]", d("time", Literal::Time(81_068_000_000))),
        Some(bucket_of(-662762989, 16))
    );
}

#[test]
fn truncate_follows_the_spec_table() {
    let t = |w: &str, v: Datum| apply_ok(&format!("truncate[{w}]"), v);
    assert_eq!(t("10", d("int", Literal::Int(1))), Some(Literal::Int(0)));
    assert_eq!(t("10", d("int", Literal::Int(-1))), Some(Literal::Int(-10)));
    assert_eq!(
        t("10", d("long", Literal::Long(-10))),
        Some(Literal::Long(-10))
    );
    assert_eq!(
        t("10", d("long", Literal::Long(-11))),
        Some(Literal::Long(-20))
    );
    // 10.65 in decimal(9,2) with W = 50 is 10.50.
    assert_eq!(
        t("50", d("decimal(9,2)", Literal::Decimal(1065))),
        Some(Literal::Decimal(1050))
    );
    assert_eq!(
        t("50", d("decimal(9,2)", Literal::Decimal(-1))),
        Some(Literal::Decimal(-50))
    );
    assert_eq!(
        t("3", d("string", Literal::String("iceberg".into()))),
        Some(Literal::String("ice".into()))
    );
    // Code points, not bytes nor UTF-16 units: each emoji is one.
    assert_eq!(
        t("2", d("string", Literal::String("😀😀😀".into()))),
        Some(Literal::String("😀😀".into()))
    );
    assert_eq!(
        t("5", d("string", Literal::String("ab".into()))),
        Some(Literal::String("ab".into()))
    );
    assert_eq!(
        t("2", d("binary", Literal::Binary(vec![0, 1, 2]))),
        Some(Literal::Binary(vec![0, 1]))
    );
    assert_eq!(code_points("a😀é"), 3);
}

#[test]
fn truncate_refuses_results_below_the_type() {
    // Java wraps truncate[10](Integer.MIN_VALUE) to a large positive number.
    for (ty, v) in [
        ("int", Literal::Int(i32::MIN)),
        ("long", Literal::Long(i64::MIN)),
        ("decimal(2,0)", Literal::Decimal(-99)),
    ] {
        let e = apply(Transform::Truncate(10), &d(ty, v)).unwrap_err();
        assert!(matches!(e, Error::InvalidValue(_)), "{e}");
        assert!(e.to_string().contains("truncate[10]"), "{e}");
    }
    assert_eq!(
        apply_ok("truncate[10]", d("int", Literal::Int(i32::MIN + 8))),
        Some(Literal::Int(i32::MIN + 8))
    );
}

#[test]
fn temporal_transforms_floor_before_1970() {
    // 2017-11-16 is day 17486: year 47, month 47 * 12 + 10.
    assert_eq!(
        apply_ok("year", d("date", Literal::Date(17486))),
        Some(Literal::Int(47))
    );
    assert_eq!(
        apply_ok("month", d("date", Literal::Date(17486))),
        Some(Literal::Int(574))
    );
    assert_eq!(
        apply_ok("day", d("date", Literal::Date(17486))),
        Some(Literal::Date(17486))
    );
    assert_eq!(
        apply_ok("hour", d("timestamptz", Literal::Timestamptz(TS))),
        Some(Literal::Int(419686))
    );
    assert_eq!(
        apply_ok("day", d("timestamp_ns", Literal::TimestampNs(TS * 1000))),
        Some(Literal::Date(17486))
    );
    for (t, expected) in [("year", -1), ("month", -1), ("hour", -1)] {
        assert_eq!(
            apply_ok(t, d("timestamp", Literal::Timestamp(-1))),
            Some(Literal::Int(expected)),
            "{t}"
        );
    }
    assert_eq!(
        apply_ok("day", d("timestamptz_ns", Literal::TimestamptzNs(-1))),
        Some(Literal::Date(-1))
    );
    assert_eq!(
        apply_ok("month", d("date", Literal::Date(-31))),
        Some(Literal::Int(-1))
    );
    assert_eq!(
        apply_ok("month", d("date", Literal::Date(-32))),
        Some(Literal::Int(-2))
    );
    // The hour of the largest microsecond timestamp does not fit an int.
    assert!(matches!(
        apply(
            Transform::Hour,
            &d("timestamp", Literal::Timestamp(i64::MAX))
        ),
        Err(Error::InvalidValue(_))
    ));
}

#[test]
fn identity_void_and_refusals() {
    let v = d("double", Literal::Double(f64::NAN));
    let same = apply(Transform::Identity, &v).unwrap().unwrap();
    assert_eq!((same.ty, same.to_bytes()), (v.ty, v.to_bytes()));
    assert_eq!(apply(Transform::Void, &v).unwrap(), None);
    assert!(matches!(
        apply(Transform::Bucket(4), &v),
        Err(Error::UnsupportedTransform { .. })
    ));
    assert!(matches!(
        apply(Transform::Truncate(4), &d("uuid", Literal::Uuid([0; 16]))),
        Err(Error::UnsupportedTransform { .. })
    ));
    assert!(matches!(
        apply(Transform::Hour, &d("date", Literal::Date(0))),
        Err(Error::UnsupportedTransform { .. })
    ));
}

// --- agreement with the Arrow kernels ------------------------------------------------

fn decimal_type() -> impl Strategy<Value = PrimitiveType> {
    (1u32..=38).prop_flat_map(|precision| {
        (0..=precision).prop_map(move |scale| PrimitiveType::Decimal { precision, scale })
    })
}

fn mk(ty: PrimitiveType, value: Literal) -> Datum {
    Datum { ty, value }
}

/// A random value of a random type the kernels take.
pub(crate) fn any_datum() -> impl Strategy<Value = Datum> {
    prop_oneof![
        any::<bool>().prop_map(|v| mk(PrimitiveType::Boolean, Literal::Boolean(v))),
        prop_oneof![any::<i32>(), -100i32..100, Just(i32::MIN), Just(i32::MAX)]
            .prop_map(|v| mk(PrimitiveType::Int, Literal::Int(v))),
        prop_oneof![any::<i64>(), -1000i64..1000, Just(i64::MIN)]
            .prop_map(|v| mk(PrimitiveType::Long, Literal::Long(v))),
        any::<f64>().prop_map(|v| mk(PrimitiveType::Double, Literal::Double(v))),
        decimal_type().prop_flat_map(|ty| {
            let PrimitiveType::Decimal { precision, .. } = ty else {
                unreachable!()
            };
            let max = 10i128.pow(precision) - 1;
            prop_oneof![-max..=max, Just(-max), -1000i128..1000]
                .prop_map(move |v| mk(ty, Literal::Decimal(v.clamp(-max, max))))
        }),
        any::<i32>().prop_map(|v| mk(PrimitiveType::Date, Literal::Date(v))),
        (0..crate::values::MICROS_PER_DAY).prop_map(|v| mk(PrimitiveType::Time, Literal::Time(v))),
        prop_oneof![any::<i64>(), -10_000_000_000_000i64..10_000_000_000_000]
            .prop_map(|v| mk(PrimitiveType::Timestamp, Literal::Timestamp(v))),
        any::<i64>().prop_map(|v| mk(PrimitiveType::Timestamptz, Literal::Timestamptz(v))),
        any::<i64>().prop_map(|v| mk(PrimitiveType::TimestampNs, Literal::TimestampNs(v))),
        any::<i64>().prop_map(|v| mk(PrimitiveType::TimestamptzNs, Literal::TimestamptzNs(v))),
        "\\PC{0,10}".prop_map(|v| mk(PrimitiveType::String, Literal::String(v))),
        proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(|v| mk(PrimitiveType::Binary, Literal::Binary(v))),
        any::<[u8; 16]>().prop_map(|v| mk(PrimitiveType::Uuid, Literal::Uuid(v))),
        proptest::collection::vec(any::<u8>(), 1..6)
            .prop_map(|v| mk(PrimitiveType::Fixed(v.len() as u64), Literal::Fixed(v))),
    ]
}

pub(crate) fn any_transform() -> impl Strategy<Value = Transform> {
    prop_oneof![
        Just(Transform::Identity),
        Just(Transform::Void),
        prop_oneof![1u32..20, Just(i32::MAX as u32)].prop_map(Transform::Bucket),
        prop_oneof![1u32..12, Just(1000), Just(i32::MAX as u32)].prop_map(Transform::Truncate),
        Just(Transform::Year),
        Just(Transform::Month),
        Just(Transform::Day),
        Just(Transform::Hour),
    ]
}

/// A value and a transform that applies to its type.
pub(crate) fn applicable() -> impl Strategy<Value = (Datum, Transform)> {
    (any_datum(), any_transform()).prop_filter("the transform applies to the type", |(v, t)| {
        t.can_transform(v.ty)
    })
}

/// What the kernel gives for one value, read back as a datum of the
/// transform's result type.
fn kernel(transform: Transform, value: &Datum) -> Result<Option<Datum>> {
    let result = transform.result_type(value.ty)?;
    let array = array_from_datums(value.ty, &[Some(value.clone())])?;
    let out = kernels::apply(transform, array.as_ref())?;
    datum_at(out.as_ref(), 0, result)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn scalar_agrees_with_the_kernels((value, transform) in applicable()) {
        let scalar = apply(transform, &value);
        let expected = match (transform, value.value.clone()) {
            // The kernels take nanosecond timestamps for bucket only through
            // their floored microseconds, which is what the spec hashes.
            (Transform::Bucket(_), Literal::TimestampNs(v) | Literal::TimestamptzNs(v)) => {
                let micros = Datum { ty: PrimitiveType::Timestamp, value: Literal::Timestamp(v.div_euclid(1000)) };
                kernel(transform, &micros)
            }
            _ => kernel(transform, &value),
        };
        match (scalar, expected) {
            (Ok(Some(a)), Ok(Some(b))) => {
                prop_assert_eq!(a.ty, b.ty);
                prop_assert!(a.cmp_value(&b).is_eq(), "{} vs {}", a, b);
            }
            (Ok(None), Ok(None)) => {}
            // Both refuse the same values (results out of range).
            (Err(Error::InvalidValue(_)), Err(Error::InvalidValue(_))) => {}
            (a, b) => prop_assert!(false, "{transform} of {value}: scalar {a:?}, kernel {b:?}"),
        }
    }
}
