//! Partition transforms applied to one value (spec: "Partition Transforms"):
//! what projections apply to a predicate's literal and what evaluators apply
//! to a transform term. The Arrow kernels ([`super::kernels`]) do the same
//! over arrays; a property test holds the two to the same answers.
//!
//! The hash is Appendix B's single-value reference ([`crate::values::hash`]),
//! the calendar [`crate::values::datetime::civil_from_days`]. Results that
//! do not fit their type (truncating an int near its minimum, the hour of a
//! timestamp far from 1970) are refused with [`Error::InvalidValue`], as the
//! kernels refuse them, rather than wrapped around as Java does.

use super::Transform;
use crate::error::{Error, Result};
use crate::expr::Datum;
use crate::types::PrimitiveType;
use crate::values::{self, Literal};

const SECONDS_PER_DAY: i64 = 86_400;
const SECONDS_PER_HOUR: i64 = 3_600;

/// `transform(value)`, a datum of the transform's result type; `None` for
/// `void` (whose values are always null).
pub fn apply(transform: Transform, value: &Datum) -> Result<Option<Datum>> {
    let result = transform.result_type(value.ty)?;
    let literal = match transform {
        Transform::Identity => return Ok(Some(value.clone())),
        Transform::Void => return Ok(None),
        Transform::Bucket(n) => {
            let hash = values::hash(&value.ty, &value.value)?;
            // n is positive and at most i32::MAX (Transform::bucket checks).
            let n = i32::try_from(n.max(1)).unwrap_or(i32::MAX);
            Literal::Int((hash & i32::MAX) % n)
        }
        Transform::Truncate(width) => truncate(width, value)?,
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            temporal(transform, value)?
        }
    };
    Ok(Some(Datum {
        ty: result,
        value: literal,
    }))
}

fn out_of_range(transform: Transform, value: &Datum, detail: &str) -> Error {
    Error::InvalidValue(format!("{transform} of {value} ({}) {detail}", value.ty))
}

/// `truncate[W]` (spec: "Truncate Transform Details"): numbers round down
/// to a multiple of W (towards negative infinity), a decimal's unscaled
/// value likewise; strings keep W code points, binary W bytes.
fn truncate(width: u32, value: &Datum) -> Result<Literal> {
    let transform = Transform::Truncate(width);
    let below =
        |what: &str| out_of_range(transform, value, &format!("is below the smallest {what}"));
    let w = i128::from(width.max(1));
    Ok(match (&value.value, value.ty) {
        (Literal::Int(v), _) => {
            let v = i128::from(*v);
            let r = v - v.rem_euclid(w);
            Literal::Int(i32::try_from(r).map_err(|_| below("int"))?)
        }
        (Literal::Long(v), _) => {
            let v = i128::from(*v);
            let r = v - v.rem_euclid(w);
            Literal::Long(i64::try_from(r).map_err(|_| below("long"))?)
        }
        (Literal::Decimal(v), PrimitiveType::Decimal { precision, .. }) => {
            // |v| < 10^38 < 2^127 - W: the subtraction cannot overflow.
            let r = v - v.rem_euclid(w);
            values::decimal::check_precision(r, precision).map_err(|_| {
                out_of_range(
                    transform,
                    value,
                    &format!("has more digits than the precision {precision} allows"),
                )
            })?;
            Literal::Decimal(r)
        }
        (Literal::String(s), _) => Literal::String(truncate_code_points(s, width).to_owned()),
        (Literal::Binary(b), _) => Literal::Binary(b[..b.len().min(width as usize)].to_vec()),
        _ => return Err(values_mismatch(transform, value)),
    })
}

/// The first `width` Unicode code points of `s` (spec: truncate note 3).
pub fn truncate_code_points(s: &str, width: u32) -> &str {
    match s.char_indices().nth(width as usize) {
        Some((end, _)) => &s[..end],
        None => s,
    }
}

/// The number of Unicode code points of `s`: what truncate's width counts
/// (Java counts UTF-16 units here, which differs beyond the BMP).
pub fn code_points(s: &str) -> usize {
    s.chars().count()
}

fn values_mismatch(transform: Transform, value: &Datum) -> Error {
    Error::TypeMismatch(format!(
        "{transform} cannot apply to a {} value ({value}) of type {}",
        value.value.kind(),
        value.ty
    ))
}

/// Years, months, days or hours from 1970-01-01 00:00 (UTC for zoned
/// timestamps, as stored), floored: one microsecond before 1970 is day -1.
fn temporal(transform: Transform, value: &Datum) -> Result<Literal> {
    let (days, hours) = match value.value {
        Literal::Date(d) => (i64::from(d), None),
        Literal::Timestamp(v) | Literal::Timestamptz(v) => per_second(v, 1_000_000),
        Literal::TimestampNs(v) | Literal::TimestamptzNs(v) => per_second(v, 1_000_000_000),
        _ => return Err(values_mismatch(transform, value)),
    };
    let count = match transform {
        Transform::Day => days,
        Transform::Hour => hours.ok_or_else(|| values_mismatch(transform, value))?,
        Transform::Year | Transform::Month => {
            let (year, month, _) = values::datetime::civil_from_days(days);
            if transform == Transform::Year {
                year - 1970
            } else {
                (year - 1970) * 12 + i64::from(month) - 1
            }
        }
        _ => return Err(values_mismatch(transform, value)),
    };
    let count = i32::try_from(count).map_err(|_| {
        out_of_range(
            transform,
            value,
            &format!("is {count}, which does not fit an int"),
        )
    })?;
    Ok(if transform == Transform::Day {
        Literal::Date(count)
    } else {
        Literal::Int(count)
    })
}

/// Floored days and hours of a timestamp in units of `1 / per_second` s.
fn per_second(v: i64, per_second: i64) -> (i64, Option<i64>) {
    (
        v.div_euclid(SECONDS_PER_DAY * per_second),
        Some(v.div_euclid(SECONDS_PER_HOUR * per_second)),
    )
}

#[cfg(test)]
#[path = "scalar_tests.rs"]
mod tests;
