//! year, month, day, hour: floor semantics, units, ranges.

use std::sync::Arc;

use arrow_array::*;
use proptest::prelude::*;

use super::*;
use crate::transform::kernels::temporal::{
    civil_fast, civil_year_month, days_by_doubles, exact_in_doubles, march_based, FAST_MAX_DAYS,
    FAST_MIN_DAYS,
};

const MICROS_PER_DAY: i64 = 86_400_000_000;
const NANOS_PER_DAY: i64 = 86_400_000_000_000;

/// Values where a floor division goes wrong first: the extremes, and every
/// multiple of the divisor near them, near zero and in between, with its
/// neighbours.
fn division_edges(divisor: i64) -> Vec<i64> {
    let mut values = vec![i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1, -1, 0, 1];
    let last = i64::MAX / divisor;
    for k in (-last..=last)
        .step_by((last / 5_000).max(1) as usize)
        .chain([-last, last])
    {
        let multiple = k * divisor;
        for delta in [-2, -1, 0, 1, 2] {
            values.extend(multiple.checked_add(delta));
        }
    }
    values
}

/// Year and month by walking the calendar from 1970: slow but obviously right.
fn walk_year_month(days: i64) -> (i64, i64) {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let year_len = |y: i64| if leap(y) { 366 } else { 365 };
    let (mut year, mut rest) = (1970, days);
    while rest < 0 {
        year -= 1;
        rest += year_len(year);
    }
    while rest >= year_len(year) {
        rest -= year_len(year);
        year += 1;
    }
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut month = 1;
    for len in lengths {
        if rest < len {
            break;
        }
        rest -= len;
        month += 1;
    }
    (year, month)
}

#[test]
fn days_by_doubles_are_exact_floor_divisions() {
    assert!(exact_in_doubles(MICROS_PER_DAY) && exact_in_doubles(NANOS_PER_DAY));
    // Milliseconds and seconds keep the integer division.
    assert!(!exact_in_doubles(86_400_000) && !exact_in_doubles(86_400));
    for v in division_edges(MICROS_PER_DAY) {
        assert_eq!(
            i64::from(days_by_doubles::<1_000_000>(v)),
            v.div_euclid(MICROS_PER_DAY),
            "{v} us"
        );
    }
    for v in division_edges(NANOS_PER_DAY) {
        assert_eq!(
            i64::from(days_by_doubles::<1_000_000_000>(v)),
            v.div_euclid(NANOS_PER_DAY),
            "{v} ns"
        );
    }
}

proptest! {
    #[test]
    fn days_by_doubles_match_integer_division(v in any::<i64>()) {
        prop_assert_eq!(i64::from(days_by_doubles::<1_000_000>(v)), v.div_euclid(MICROS_PER_DAY));
        prop_assert_eq!(
            i64::from(days_by_doubles::<1_000_000_000>(v)),
            v.div_euclid(NANOS_PER_DAY)
        );
    }

    #[test]
    fn civil_dates_match_a_calendar_walk(days in -200_000i64..200_000) {
        prop_assert_eq!(civil_year_month(days), walk_year_month(days));
    }

    #[test]
    fn fast_civil_dates_match(days in FAST_MIN_DAYS..=FAST_MAX_DAYS) {
        let (year, month) = civil_year_month(i64::from(days));
        prop_assert_eq!(civil_fast(days), (year as i32, month as i32));
        let months = temporal(Transform::Month, &Date32Array::from(vec![days]));
        prop_assert_eq!(months, vec![Some(((year - 1970) * 12 + month - 1) as i32)]);
    }
}

#[test]
fn fast_civil_dates_match_on_every_day_of_two_eras() {
    // Two eras hold every day of every kind of century, so both ways of
    // finding the day of the year are checked on all of them.
    for days in -146_097 * 2..146_097 * 2 {
        let (year, month) = civil_year_month(i64::from(days));
        assert_eq!(civil_fast(days), (year as i32, month as i32), "{days}");
        assert_eq!(
            march_based::<true>(days),
            march_based::<false>(days),
            "{days}"
        );
    }
}

fn temporal(t: Transform, array: &dyn Array) -> Vec<Option<i32>> {
    ints(&apply(t, array).expect("temporal"))
}

#[test]
fn temporal_floor_semantics_before_1970() {
    let micros = TimestampMicrosecondArray::from(vec![-1, 0, TS_MICROS]);
    assert_eq!(temporal(Transform::Year, &micros), [-1, 0, 47].map(Some));
    assert_eq!(
        temporal(Transform::Month, &micros),
        [-1, 0, 47 * 12 + 10].map(Some)
    );
    assert_eq!(temporal(Transform::Day, &micros), [-1, 0, 17486].map(Some));
    assert_eq!(
        temporal(Transform::Hour, &micros),
        [-1, 0, 17486 * 24 + 22].map(Some)
    );
    let dates = Date32Array::from(vec![-1, 0, 17486, -365, -366, 59, 58]);
    assert_eq!(
        temporal(Transform::Year, &dates),
        [-1, 0, 47, -1, -2, 0, 0].map(Some)
    );
    assert_eq!(
        temporal(Transform::Month, &dates),
        [-1, 0, 574, -12, -13, 2, 1].map(Some)
    );
    assert_eq!(
        temporal(Transform::Day, &dates),
        [-1, 0, 17486, -365, -366, 59, 58].map(Some)
    );
    // Every unit gives the same answer for the same instant, zone or not.
    let instants = [-1i64, -DAY_MICROS, -DAY_MICROS - 1, TS_MICROS, -HOUR_MICROS];
    for t in [
        Transform::Year,
        Transform::Month,
        Transform::Day,
        Transform::Hour,
    ] {
        let want = temporal(t, &TimestampMicrosecondArray::from(instants.to_vec()));
        let nanos = TimestampNanosecondArray::from(instants.map(|v| v * 1000).to_vec())
            .with_timezone("+05:30");
        assert_eq!(temporal(t, &nanos), want, "{t}");
        let millis = TimestampMillisecondArray::from(instants.map(|v| v.div_euclid(1000)).to_vec());
        assert_eq!(temporal(t, &millis), want, "{t}");
        let secs = TimestampSecondArray::from(instants.map(|v| v.div_euclid(1_000_000)).to_vec());
        assert_eq!(temporal(t, &secs), want, "{t}");
    }
}

#[test]
fn temporal_extremes() {
    // Hours from i64::MAX microseconds do not fit an int; days do.
    let err = apply(
        Transform::Hour,
        &TimestampMicrosecondArray::from(vec![0, i64::MAX]),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidValue(m) if m.contains(&i64::MAX.to_string())),
        "{err:?}"
    );
    let days = temporal(
        Transform::Day,
        &TimestampMicrosecondArray::from(vec![i64::MIN, i64::MAX]),
    );
    assert_eq!(
        days,
        vec![
            Some(i64::MIN.div_euclid(DAY_MICROS) as i32),
            Some((i64::MAX / DAY_MICROS) as i32)
        ]
    );
    let err = apply(Transform::Day, &TimestampSecondArray::from(vec![i64::MIN])).unwrap_err();
    assert!(matches!(err, Error::InvalidValue(_)));
    let years = temporal(
        Transform::Year,
        &Date32Array::from(vec![i32::MIN, i32::MAX]),
    );
    let (lo, _) = walk_year_month(i64::from(i32::MIN) / 1000);
    assert!(years[0].unwrap() < (lo - 1970) as i32 && years[1].unwrap() > 5_000_000);
}

#[test]
fn temporal_refusals() {
    for (t, array) in [
        (
            Transform::Hour,
            Arc::new(Date32Array::from(vec![1])) as ArrayRef,
        ),
        (Transform::Day, Arc::new(Int64Array::from(vec![1]))),
        (
            Transform::Year,
            Arc::new(StringArray::from(vec!["2017-11-16"])),
        ),
        (
            Transform::Month,
            Arc::new(Time64MicrosecondArray::from(vec![1])),
        ),
    ] {
        let err = apply(t, array.as_ref()).unwrap_err();
        assert!(
            matches!(err, Error::UnsupportedTransform { .. }),
            "{t}: {err:?}"
        );
    }
}
