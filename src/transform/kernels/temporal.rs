//! `year`, `month`, `day` and `hour` (spec: "Partition Transforms"): whole
//! years, months, days or hours since 1970-01-01 00:00 as int32, with floor
//! semantics so that one microsecond before the epoch is day -1, hour -1,
//! month -1 and year -1. A timestamp with a zone is stored in UTC and is
//! transformed as stored, never shifted to its zone.

use std::mem::MaybeUninit;
use std::sync::Arc;

use arrow_array::types::{
    Date32Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType, Int32Array, PrimitiveArray};
use arrow_schema::{DataType, TimeUnit};

use super::parallel::for_pieces;
use super::{
    downcast, first_bad_valid, has_avx2, map_pieces, map_values, map_values_plain, min_max,
    output_vec, unsupported, write_mapped,
};
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

/// 400-year eras added to a day count so that [`civil_fast`] works on
/// unsigned numbers.
const SHIFT_ERAS: u32 = 3_675;
/// Days from 0000-03-01 (the start of the March-based computational year)
/// to 1970-01-01, plus the shift.
const FAST_OFFSET: u32 = 719_468 + SHIFT_ERAS * 146_097;
/// The day counts [`civil_fast`] handles: about 1.47 million years either
/// side of 1970, where `4 * (days + FAST_OFFSET) + 3` fits a `u32`.
pub(crate) const FAST_MIN_DAYS: i32 = -(FAST_OFFSET as i32);
pub(crate) const FAST_MAX_DAYS: i32 = ((u32::MAX - 3) / 4 - FAST_OFFSET) as i32;

/// [`civil_year_month`] for `FAST_MIN_DAYS <= days <= FAST_MAX_DAYS` by
/// Neri and Schneider's algorithm ("Euclidean affine functions and their
/// application to calendar algorithms", 2022): two divisions by constants
/// and a 32x32->64-bit product, all of which vectorise, instead of seven
/// divisions and a 64-bit floor division.
#[inline(always)]
pub(crate) fn civil_fast(days: i32) -> (i32, i32) {
    let (computational_year, day_of_year, month) = march_based::<false>(days);
    // January and February close the March-based year: they belong to the
    // next calendar year.
    let january = day_of_year >= 306;
    let year = computational_year + i32::from(january);
    let month = if january { month - 12 } else { month };
    (year, month)
}

/// The March-based year, the day in it (0 = March 1st) and its month
/// (3 = March, ..., 14 = February).
///
/// `DAY_BY_SUBTRACTION` picks how the day of the year is found: both ways
/// give the same day (the unit tests check every day of a century), but
/// which one vectorises better depends on what the caller does with it.
#[inline(always)]
pub(crate) fn march_based<const DAY_BY_SUBTRACTION: bool>(days: i32) -> (i32, u32, i32) {
    let n = days.wrapping_add(FAST_OFFSET as i32) as u32;
    // Century, and day of the century.
    let n1 = 4 * n + 3;
    let century = n1 / 146_097;
    let nc = n1 % 146_097 / 4;
    // Year of the century, and day of the year.
    let p2 = 2_939_745 * u64::from(4 * nc + 3);
    let year_of_century = (p2 >> 32) as u32;
    let day_of_year = if DAY_BY_SUBTRACTION {
        // Only the month needs the day: multiplications by constants beat
        // the 32-bit division there.
        nc - 365 * year_of_century - year_of_century / 4
    } else {
        // The year needs only `day_of_year >= 306`, which the compiler folds
        // into a comparison of the remainder.
        (p2 as u32) / (4 * 2_939_745)
    };
    let month = (2_141 * day_of_year + 197_913) >> 16;
    let year = (100 * century + year_of_century) as i32 - (SHIFT_ERAS * 400) as i32;
    (year, day_of_year, month as i32)
}

#[inline(always)]
fn fast_years(days: i32) -> i32 {
    civil_fast(days).0 - 1970
}

#[inline(always)]
fn fast_months(days: i32) -> i32 {
    // 12 * (year + 1) + (month - 12) = 12 * year + month: the March-based
    // year and month give the month count without the January correction.
    let (year, _, month) = march_based::<true>(days);
    (year - 1970) * 12 + month - 1
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
            dates(array, fast_years, |d| years_from_days(i64::from(d)) as i32)
        }
        (Transform::Month, DataType::Date32) => dates(array, fast_months, |d| {
            months_from_days(i64::from(d)) as i32
        }),
        (_, DataType::Timestamp(unit, _)) => match unit {
            TimeUnit::Second => timestamps::<TimestampSecondType, 1>(transform, array),
            TimeUnit::Millisecond => {
                timestamps::<TimestampMillisecondType, 1_000>(transform, array)
            }
            TimeUnit::Microsecond => {
                timestamps::<TimestampMicrosecondType, 1_000_000>(transform, array)
            }
            TimeUnit::Nanosecond => {
                timestamps::<TimestampNanosecondType, 1_000_000_000>(transform, array)
            }
        },
        (_, other) => Err(unsupported(transform, other)),
    }
}

/// Year or month of dates: `fast` when every value is in its range, else
/// `slow`. Every Date32 gives a year and a month count that fit an int.
fn dates(
    array: &dyn Array,
    fast: impl Fn(i32) -> i32 + Copy + Sync,
    slow: impl Fn(i32) -> i32 + Copy + Sync,
) -> Result<ArrayRef> {
    let typed = downcast::<PrimitiveArray<Date32Type>>(array)?;
    let values = typed.values();
    let (min, max) = min_max(values).unwrap_or((0, 0));
    let out = if min >= FAST_MIN_DAYS && max <= FAST_MAX_DAYS {
        map_values(values, fast)
    } else {
        map_values(values, slow)
    };
    Ok(Arc::new(Int32Array::new(
        out.into(),
        typed.nulls().cloned(),
    )))
}

/// `floor(v / divisor)`, the day of `v` in units of `1 / PER_SECOND` s, for
/// every `i64` when [`exact_in_doubles`] holds for the divisor, in packed double arithmetic: a 64-bit division by a constant
/// needs the high half of a 64x64-bit product, which no x86 vector unit has,
/// whereas this whole function vectorises with AVX2.
///
/// `divisor = 2^s * odd`. The arithmetic shift gives `x = floor(v / 2^s)`
/// exactly, and `floor(x / odd)` is the wanted quotient. `|x| < 2^51`, so `x`
/// converts exactly by the magic-number trick (the bits of `x + 1.5 * 2^52`
/// are those of the integer plus a constant). The estimate `x * (1 / odd)` is
/// off by well under one; `q * odd` and `q * odd + odd` are below `2^52`, so
/// exact, and comparing them with `x` corrects `q` to the exact floor.
#[inline(always)]
pub(crate) fn days_by_doubles<const PER_SECOND: i64>(v: i64) -> i32 {
    const MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    let divisor = SECONDS_PER_DAY * PER_SECOND;
    let shift = divisor.trailing_zeros();
    let odd = (divisor >> shift) as f64;
    let x = v >> shift;
    let x = f64::from_bits((x as u64).wrapping_add(MAGIC.to_bits())) - MAGIC;
    let q = (x * (1.0 / odd)).floor();
    let below = q * odd;
    let q = if below > x { q - 1.0 } else { q };
    let q = if below + odd <= x { q + 1.0 } else { q };
    // Back to an integer by the same trick, since `as i32` saturates and
    // that does not vectorise: the low 32 bits of `q + 1.5 * 2^52` are `q`
    // in two's complement, and every quotient here fits an int.
    (q + MAGIC).to_bits() as i32
}

/// Whether [`days_by_doubles`] is exact for every `i64` divided by
/// `divisor`: true for days of microseconds and nanoseconds.
pub(crate) const fn exact_in_doubles(divisor: i64) -> bool {
    let shift = divisor.trailing_zeros();
    let odd = divisor >> shift;
    // The shifted values convert exactly, and every quotient times `odd`,
    // plus `odd`, stays an exact double.
    (i64::MAX >> shift) < (1 << 51) && odd < (1 << 31) && (i64::MAX >> shift) / odd < (1 << 31)
}

/// `PER_SECOND` is a const parameter so that every floor division below is by
/// a compile-time constant, which compiles to a multiplication instead of a
/// 64-bit `idiv` (tens of cycles) per value. The closures name the divisors
/// as constant expressions rather than capturing them: a captured divisor is
/// a load from the closure, and a loop the optimiser does not inline (as in
/// the parallel pieces) would then divide for real.
fn timestamps<T, const PER_SECOND: i64>(transform: Transform, array: &dyn Array) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let typed = downcast::<PrimitiveArray<T>>(array)?;
    if exact_in_doubles(SECONDS_PER_DAY * PER_SECOND) {
        // Every day count of these units is an int in the fast calendar's
        // range: no range check, one vectorised pass.
        let to_days = days_by_doubles::<PER_SECOND>;
        let out = match transform {
            Transform::Day => Some(map_values(typed.values(), to_days)),
            // Mixing the four-lane doubles with eight-lane ints in one loop
            // vectorises poorly: one pass per block each.
            Transform::Month => Some(days_then(typed.values(), true, to_days, fast_months)),
            Transform::Year => Some(days_then(typed.values(), true, to_days, fast_years)),
            _ => None,
        };
        if let Some(out) = out {
            return Ok(Arc::new(Int32Array::new(
                out.into(),
                typed.nulls().cloned(),
            )));
        }
    }
    let to_days = |v: i64| v.div_euclid(SECONDS_PER_DAY * PER_SECOND);
    match transform {
        Transform::Hour => map_checked(transform, typed, to_days, |v| {
            v.div_euclid(SECONDS_PER_HOUR * PER_SECOND)
        }),
        Transform::Day => map_checked(transform, typed, to_days, to_days),
        Transform::Month => map_checked(transform, typed, to_days, |v| {
            months_from_days(v.div_euclid(SECONDS_PER_DAY * PER_SECOND))
        }),
        Transform::Year => map_checked(transform, typed, to_days, |v| {
            years_from_days(v.div_euclid(SECONDS_PER_DAY * PER_SECOND))
        }),
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
    to_days: impl Fn(i64) -> i64 + Copy + Sync,
    f: impl Fn(i64) -> i64 + Copy + Sync,
) -> Result<ArrayRef>
where
    T: ArrowPrimitiveType<Native = i64>,
{
    let values = array.values();
    let fits = |r: i64| i32::try_from(r).is_ok();
    // `f` is monotonic: when even the images of i64's extremes fit an int (as
    // for days of microseconds), no value can overflow and the pass that finds
    // the input's range is skipped; on large arrays memory traffic dominates.
    let fast_calendar = |lo: i64, hi: i64| {
        to_days(lo) >= i64::from(FAST_MIN_DAYS) && to_days(hi) <= i64::from(FAST_MAX_DAYS)
    };
    let calendar = matches!(transform, Transform::Year | Transform::Month);
    let extremes_ok =
        fits(f(i64::MIN)) && fits(f(i64::MAX)) && (!calendar || fast_calendar(i64::MIN, i64::MAX));
    let (min, max, fused) = if extremes_ok {
        (i64::MIN, i64::MAX, None)
    } else if calendar {
        let (min, max) = min_max(values).unwrap_or((0, 0));
        (min, max, None)
    } else {
        // Day and hour: find the range in the same pass as the results and
        // check it afterwards, rather than reading the input twice.
        let (out, min, max) = map_with_range(values, move |v| f(v) as i32);
        (min, max, Some(out))
    };
    let all_fit = fits(f(min)) && fits(f(max));
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
    let out = match (fused, transform) {
        (Some(out), _) => out,
        // Every day count of an i64 timestamp in microseconds or finer is in
        // the fast calendar's range.
        (None, Transform::Year | Transform::Month) if fast_calendar(min, max) => {
            let to_days = move |v: i64| to_days(v) as i32;
            if transform == Transform::Year {
                days_then(values, false, to_days, fast_years)
            } else {
                days_then(values, false, to_days, fast_months)
            }
        }
        (None, _) => map_values_plain(values, move |v| f(v) as i32),
    };
    Ok(Arc::new(Int32Array::new(
        out.into(),
        array.nulls().cloned(),
    )))
}

/// `calendar(to_days(v))` for every value, in cache-sized blocks: the
/// division to days works on 64-bit lanes (or, for a 64-bit integer division,
/// does not vectorise) while the calendar arithmetic runs on 32-bit lanes,
/// and one loop doing both vectorises poorly. So each block is divided into
/// a small buffer that stays in L1 and then mapped, without a full-size
/// intermediate array.
///
/// `packed_days` compiles the division loop for AVX2 too: right for
/// [`days_by_doubles`], wrong for a 64-bit integer division, which LLVM
/// would emulate slowly in vector registers.
fn days_then(
    values: &[i64],
    packed_days: bool,
    to_days: impl Fn(i64) -> i32 + Copy + Sync,
    calendar: impl Fn(i32) -> i32 + Copy + Sync,
) -> Vec<i32> {
    const BLOCK: usize = 2048;
    let avx2 = has_avx2();
    map_pieces(values, move |piece, out| {
        let mut days = [MaybeUninit::<i32>::uninit(); BLOCK];
        for (chunk, out) in piece.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let block = &mut days[..chunk.len()];
            write_mapped(avx2 && packed_days, chunk, block, to_days);
            // SAFETY: `write_mapped` wrote every slot of the block.
            let block = unsafe { &*(block as *const [MaybeUninit<i32>] as *const [i32]) };
            write_mapped(avx2, block, out, calendar);
        }
    })
}

/// `values.map(f)` together with the smallest and largest input value
/// (`(0, 0)` when empty), in one pass.
fn map_with_range(values: &[i64], f: impl Fn(i64) -> i32 + Sync) -> (Vec<i32>, i64, i64) {
    let mut out = output_vec::<i32>(values.len());
    let ranges = for_pieces(
        values,
        &mut out.spare_capacity_mut()[..values.len()],
        |piece, out| {
            let (mut min, mut max) = match piece.first() {
                Some(&first) => (first, first),
                None => (0, 0),
            };
            for (slot, &v) in out.iter_mut().zip(piece) {
                min = min.min(v);
                max = max.max(v);
                slot.write(f(v));
            }
            (min, max)
        },
    );
    // SAFETY: the pieces cover the first values.len() slots, each written.
    unsafe { out.set_len(values.len()) };
    let (min, max) = ranges
        .into_iter()
        .reduce(|(lo, hi), (l, h)| (lo.min(l), hi.max(h)))
        .unwrap_or((0, 0));
    (out, min, max)
}
