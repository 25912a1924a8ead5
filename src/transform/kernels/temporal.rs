//! `year`, `month`, `day` and `hour` (spec: "Partition Transforms"): whole
//! years, months, days or hours since 1970-01-01 00:00 as int32, with floor
//! semantics so that one microsecond before the epoch is day -1, hour -1,
//! month -1 and year -1. A timestamp with a zone is stored in UTC and is
//! transformed as stored, never shifted to its zone.

use std::sync::Arc;

use arrow_array::types::{
    Date32Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int32Array, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

use super::{downcast, first_bad_valid, unsupported};
use crate::error::{Error, Result};
use crate::transform::Transform;

const SECONDS_PER_DAY: i64 = 86_400;
const SECONDS_PER_HOUR: i64 = 3_600;

/// Year and month (1..=12) of the proleptic Gregorian date `days` after
/// 1970-01-01. Howard Hinnant's `civil_from_days`: a 400-year era, then
/// branch-free arithmetic on a year that starts on March 1st so that the leap
/// day falls last. All divisions are by constants and become multiplications.
#[inline(always)]
pub(crate) fn civil_year_month(days: i64) -> (i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    // Day of era, year of era, day of (March-based) year: small non-negative
    // numbers, so 32-bit unsigned arithmetic is exact and cheaper.
    let doe = (z - era * 146_097) as u32;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = i64::from(yoe) + era * 400 + i64::from(month <= 2);
    (year, i64::from(month))
}

#[inline(always)]
fn years_from_days(days: i64) -> i64 {
    civil_year_month(days).0 - 1970
}

#[inline(always)]
fn months_from_days(days: i64) -> i64 {
    let (year, month) = civil_year_month(days);
    (year - 1970) * 12 + month - 1
}

pub(super) fn temporal(transform: Transform, array: &dyn Array) -> Result<ArrayRef> {
    match (transform, array.data_type()) {
        (Transform::Day, DataType::Date32) => {
            // A date already is its day count: share the buffer.
            let dates = downcast::<PrimitiveArray<Date32Type>>(array)?;
            Ok(Arc::new(Int32Array::new(
                dates.values().clone(),
                dates.nulls().cloned(),
            )))
        }
        (Transform::Year, DataType::Date32) => {
            dates(array, |d| years_from_days(i64::from(d)) as i32)
        }
        (Transform::Month, DataType::Date32) => {
            dates(array, |d| months_from_days(i64::from(d)) as i32)
        }
        (_, DataType::Timestamp(unit, _)) => {
            let per_second = match unit {
                TimeUnit::Second => 1,
                TimeUnit::Millisecond => 1_000,
                TimeUnit::Microsecond => 1_000_000,
                TimeUnit::Nanosecond => 1_000_000_000,
            };
            match unit {
                TimeUnit::Second => timestamps::<TimestampSecondType>(transform, array, per_second),
                TimeUnit::Millisecond => {
                    timestamps::<TimestampMillisecondType>(transform, array, per_second)
                }
                TimeUnit::Microsecond => {
                    timestamps::<TimestampMicrosecondType>(transform, array, per_second)
                }
                TimeUnit::Nanosecond => {
                    timestamps::<TimestampNanosecondType>(transform, array, per_second)
                }
            }
        }
        (_, other) => Err(unsupported(transform, other)),
    }
}

fn dates(array: &dyn Array, f: impl Fn(i32) -> i32) -> Result<ArrayRef> {
    // Every Date32 gives a year and a month count that fit an int.
    let typed = downcast::<PrimitiveArray<Date32Type>>(array)?;
    let out: Vec<i32> = typed.values().iter().map(|&d| f(d)).collect();
    Ok(Arc::new(Int32Array::new(
        out.into(),
        typed.nulls().cloned(),
    )))
}

fn timestamps<T>(transform: Transform, array: &dyn Array, per_second: i64) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let typed = downcast::<PrimitiveArray<T>>(array)?;
    let per_day = SECONDS_PER_DAY * per_second;
    let per_hour = SECONDS_PER_HOUR * per_second;
    // Monomorphised per granularity so each loop divides by a constant.
    match transform {
        Transform::Hour => map_checked(transform, typed, |v| v.div_euclid(per_hour)),
        Transform::Day => map_checked(transform, typed, |v| v.div_euclid(per_day)),
        Transform::Month => map_checked(transform, typed, |v| {
            months_from_days(v.div_euclid(per_day))
        }),
        Transform::Year => {
            map_checked(transform, typed, |v| years_from_days(v.div_euclid(per_day)))
        }
        _ => Err(unsupported(transform, array.data_type())),
    }
}

/// Applies a monotonic `f` to every slot. Results must fit an int: since `f`
/// is monotonic, checking the images of the smallest and largest values is
/// enough, and only when one of them does not fit are the valid slots
/// searched for the culprit (null slots may hold anything).
#[inline(always)]
fn map_checked<T>(
    transform: Transform,
    array: &PrimitiveArray<T>,
    f: impl Fn(i64) -> i64,
) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let values = array.values();
    let fits = |r: i64| i32::try_from(r).is_ok();
    let (min, max) = values
        .iter()
        .fold((i64::MAX, i64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let all_fit = values.is_empty() || (fits(f(min)) && fits(f(max)));
    if !all_fit {
        if let Some(i) = first_bad_valid(array, |i| !fits(f(values[i]))) {
            return Err(Error::InvalidValue(format!(
                "{transform} of {} (Arrow type {}) is {}, which does not fit an int",
                values[i],
                array.data_type(),
                f(values[i])
            )));
        }
    }
    let out: Vec<i32> = values.iter().map(|&v| f(v) as i32).collect();
    Ok(Arc::new(Int32Array::new(
        out.into(),
        array.nulls().cloned(),
    )))
}
