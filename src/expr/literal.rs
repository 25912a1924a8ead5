//! Literals of filter expressions: unbound values as the user wrote them,
//! and [`Datum`]s, typed values in Iceberg's physical representation with
//! the comparison order Iceberg's evaluators use.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::PrimitiveType;
use crate::values::{self, Literal};

/// A literal before binding: what the user wrote, converted to the column's
/// type when bound ([`convert`]).
#[derive(Debug, Clone, PartialEq)]
pub enum UnboundLiteral {
    Boolean(bool),
    /// Any integer; i128 holds what Python ints in filters reasonably are,
    /// and out-of-range values are rewritten at binding, not refused.
    Int(i128),
    Float(f64),
    /// Text: a string value, or the text of a date, time, timestamp, decimal
    /// or UUID, parsed when bound to such a column (as Java's
    /// `StringLiteral.to` does). Against binary and fixed columns a string is
    /// refused: bytes come as [`UnboundLiteral::Binary`].
    String(String),
    /// Text in Appendix D JSON form for the column's type (a JSON string in
    /// Java's expression JSON): like `String`, but hexadecimal against binary
    /// and fixed columns.
    Json(String),
    Binary(Vec<u8>),
    /// A decimal's digits, e.g. `"-12.50"` (scale is the digit count after
    /// the point).
    Decimal(String),
    /// Days from 1970-01-01.
    Date(i32),
    /// Microseconds from midnight.
    Time(i64),
    /// Microseconds from 1970-01-01 00:00:00, no zone (a naive datetime).
    Timestamp(i64),
    /// Microseconds from 1970-01-01 00:00:00 UTC (an aware datetime).
    Timestamptz(i64),
    Uuid([u8; 16]),
}

impl fmt::Display for UnboundLiteral {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean(v) => write!(f, "{v}"),
            Self::Int(v) => write!(f, "{v}"),
            Self::Float(v) => write!(f, "{v:?}"),
            Self::String(v) | Self::Json(v) => write!(f, "{v:?}"),
            Self::Binary(v) => write!(f, "X'{}'", values::hex(v)),
            Self::Decimal(v) => write!(f, "{v}"),
            Self::Date(v) => write!(f, "date {}", values::datetime::format_date(*v)),
            Self::Time(v) => match values::datetime::format_time(*v) {
                Ok(text) => write!(f, "time {text}"),
                Err(_) => write!(f, "time {v}us"),
            },
            Self::Timestamp(v) => write!(
                f,
                "timestamp {}",
                values::datetime::format_timestamp(*v, false)
            ),
            Self::Timestamptz(v) => write!(
                f,
                "timestamptz {}",
                values::datetime::format_timestamp(*v, true)
            ),
            Self::Uuid(v) => write!(f, "uuid {}", values::uuid_string(v)),
        }
    }
}

/// A value of a primitive type: what bound predicates compare with.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    pub ty: PrimitiveType,
    pub value: Literal,
}

impl Datum {
    /// A datum, checking that `value` is of `ty`'s kind and in range.
    pub fn new(ty: PrimitiveType, value: Literal) -> Result<Self> {
        // The binary encoder checks kinds, ranges and lengths.
        values::to_bytes(&ty, &value)?;
        Ok(Datum { ty, value })
    }

    /// Decodes a bound or a partition summary value (Appendix D).
    pub fn from_bytes(ty: PrimitiveType, bytes: &[u8]) -> Result<Self> {
        Ok(Datum {
            ty,
            value: values::from_bytes(&ty, bytes)?,
        })
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        values::to_bytes(&self.ty, &self.value).expect("a datum is valid for its type")
    }

    /// The Appendix D JSON form.
    pub fn to_json(&self) -> Value {
        values::to_json(&crate::types::Type::Primitive(self.ty), &self.value)
            .expect("a datum is valid for its type")
    }

    pub fn is_nan(&self) -> bool {
        match self.value {
            Literal::Float(v) => v.is_nan(),
            Literal::Double(v) => v.is_nan(),
            _ => false,
        }
    }

    /// Iceberg's order of two values of the same type: numbers by value
    /// (floats as Java's `Float.compare`: -0.0 before 0.0, NaN last),
    /// strings by their UTF-8 bytes (code point order, the order Parquet's
    /// statistics use), UUIDs, fixed and binary as unsigned bytes
    /// (spec: UUIDs compare unsigned; Java 1.10 compares them signed).
    pub fn cmp_value(&self, other: &Datum) -> Ordering {
        compare(&self.value, &other.value)
    }
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.value, self.ty) {
            (Literal::String(s), _) => write!(f, "{s:?}"),
            (Literal::Binary(b) | Literal::Fixed(b), _) => write!(f, "X'{}'", values::hex(b)),
            _ => match self.to_json() {
                Value::String(s) => f.write_str(&s),
                other => write!(f, "{other}"),
            },
        }
    }
}

/// The order of [`Datum::cmp_value`] on two literals of the same kind.
/// Literals of different kinds (a bug) order by kind name.
pub fn compare(a: &Literal, b: &Literal) -> Ordering {
    use Literal as L;
    match (a, b) {
        (L::Boolean(x), L::Boolean(y)) => x.cmp(y),
        (L::Int(x), L::Int(y)) | (L::Date(x), L::Date(y)) => x.cmp(y),
        (L::Long(x), L::Long(y))
        | (L::Time(x), L::Time(y))
        | (L::Timestamp(x), L::Timestamp(y))
        | (L::Timestamptz(x), L::Timestamptz(y))
        | (L::TimestampNs(x), L::TimestampNs(y))
        | (L::TimestamptzNs(x), L::TimestamptzNs(y)) => x.cmp(y),
        (L::Float(x), L::Float(y)) => x.total_cmp(y).pipe_nan(*x, *y),
        (L::Double(x), L::Double(y)) => x.total_cmp(y).pipe_nan_f64(*x, *y),
        (L::Decimal(x), L::Decimal(y)) => x.cmp(y),
        (L::String(x), L::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (L::Uuid(x), L::Uuid(y)) => x.cmp(y),
        (L::Fixed(x), L::Fixed(y)) | (L::Binary(x), L::Binary(y)) => x.cmp(y),
        _ => a.kind().cmp(b.kind()),
    }
}

/// `total_cmp` orders negative NaNs first; Java's `Float.compare` puts every
/// NaN last and treats all NaNs as equal.
trait NanLast {
    fn pipe_nan(self, x: f32, y: f32) -> Ordering;
    fn pipe_nan_f64(self, x: f64, y: f64) -> Ordering;
}

impl NanLast for Ordering {
    fn pipe_nan(self, x: f32, y: f32) -> Ordering {
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self,
        }
    }
    fn pipe_nan_f64(self, x: f64, y: f64) -> Ordering {
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => self,
        }
    }
}

/// What binding a literal to a column type gives (Java's `Literal.to`, with
/// its `aboveMax` / `belowMin` markers).
#[derive(Debug, Clone, PartialEq)]
pub enum Converted {
    Exact(Datum),
    /// Larger than every value of the type.
    AboveMax,
    /// Smaller than every value of the type.
    BelowMin,
    /// Between two adjacent values of the type (3.5 for an int column,
    /// 1.234 for decimal(9,2)): `floor` is the largest value below it.
    Between {
        floor: Datum,
    },
}

fn mismatch(literal: &UnboundLiteral, ty: PrimitiveType) -> Error {
    Error::Validation(format!(
        "cannot compare a {} literal ({literal}) with a {ty} column",
        kind_name(literal)
    ))
}

fn kind_name(literal: &UnboundLiteral) -> &'static str {
    match literal {
        UnboundLiteral::Boolean(_) => "boolean",
        UnboundLiteral::Int(_) => "integer",
        UnboundLiteral::Float(_) => "floating-point",
        UnboundLiteral::String(_) | UnboundLiteral::Json(_) => "string",
        UnboundLiteral::Binary(_) => "binary",
        UnboundLiteral::Decimal(_) => "decimal",
        UnboundLiteral::Date(_) => "date",
        UnboundLiteral::Time(_) => "time",
        UnboundLiteral::Timestamp(_) => "timestamp",
        UnboundLiteral::Timestamptz(_) => "timestamptz",
        UnboundLiteral::Uuid(_) => "uuid",
    }
}

/// An exact integer (i128) in range of an integer-like type, or the marker.
fn integer_in(
    ty: PrimitiveType,
    v: i128,
    min: i128,
    max: i128,
    make: fn(i128) -> Literal,
) -> Converted {
    if v > max {
        Converted::AboveMax
    } else if v < min {
        Converted::BelowMin
    } else {
        Converted::Exact(Datum { ty, value: make(v) })
    }
}

fn decimal_max(precision: u32) -> i128 {
    10i128.pow(precision) - 1
}

/// A decimal given as (unscaled, scale) at the column's `precision` and
/// `target` scale: exact when it has no more fraction digits than the
/// column, else between two column values.
fn decimal_at(ty: PrimitiveType, unscaled: i128, scale: i32) -> Converted {
    if scale < 0 {
        // 2E+20: a whole number with trailing zeros.
        return match 10i128
            .checked_pow(scale.unsigned_abs())
            .and_then(|f| unscaled.checked_mul(f))
        {
            Some(v) => decimal_at(ty, v, 0),
            None if unscaled > 0 => Converted::AboveMax,
            None => Converted::BelowMin,
        };
    }
    let scale = scale.unsigned_abs();
    let PrimitiveType::Decimal {
        precision,
        scale: target,
    } = ty
    else {
        unreachable!("decimal_at is called for decimal columns");
    };
    let max = decimal_max(precision);
    let make = |v: i128| Datum {
        ty,
        value: Literal::Decimal(v),
    };
    if scale <= target {
        let factor = 10i128.checked_pow(target - scale);
        return match factor.and_then(|f| unscaled.checked_mul(f)) {
            Some(v) if v > max => Converted::AboveMax,
            Some(v) if v < -max => Converted::BelowMin,
            Some(v) => Converted::Exact(make(v)),
            None if unscaled > 0 => Converted::AboveMax,
            None => Converted::BelowMin,
        };
    }
    let divisor = 10i128.checked_pow(scale - target);
    let floor = match divisor {
        Some(d) => unscaled.div_euclid(d),
        // More fraction digits than i128 holds: the value is within one
        // unit of zero at the column's scale.
        None => {
            if unscaled < 0 {
                -1
            } else {
                0
            }
        }
    };
    let exact = divisor.is_some_and(|d| unscaled.rem_euclid(d) == 0);
    if floor > max {
        Converted::AboveMax
    } else if floor < -max {
        // floor < -max: the value lies below the smallest decimal, or just
        // above it (between -max-1 and -max).
        if floor == -max - 1 && !exact {
            Converted::Between { floor: make(floor) }
        } else {
            Converted::BelowMin
        }
    } else if exact {
        Converted::Exact(make(floor))
    } else {
        Converted::Between { floor: make(floor) }
    }
}

/// A finite double against an integer-like column: exact when integral.
fn float_to_integer(
    ty: PrimitiveType,
    v: f64,
    min: i128,
    max: i128,
    make: fn(i128) -> Literal,
) -> Converted {
    let floor = v.floor();
    if floor > max as f64 {
        return Converted::AboveMax;
    }
    if floor < min as f64 {
        return Converted::BelowMin;
    }
    let f = floor as i128;
    if floor == v {
        integer_in(ty, f, min, max, make)
    } else {
        Converted::Between {
            floor: Datum { ty, value: make(f) },
        }
    }
}

/// The digits of a finite double as a decimal (unscaled, scale): its
/// shortest round-trip text, as Java's `BigDecimal.valueOf(double)` uses.
fn double_as_decimal(v: f64) -> Result<(i128, i32)> {
    values::decimal::parse(&format!("{v:e}"))
}

const I32_MIN: i128 = i32::MIN as i128;
const I32_MAX: i128 = i32::MAX as i128;
const I64_MIN: i128 = i64::MIN as i128;
const I64_MAX: i128 = i64::MAX as i128;

/// Converts a literal to a column type (Java's `Literals.*.to`), extended
/// where Java refuses but the answer is unambiguous: a fractional number
/// against an integer or decimal column lies [`Converted::Between`] two
/// column values; an integral one converts exactly; a decimal with fewer
/// fraction digits than the column is padded. Incompatible kinds (a string
/// against an int column, a number against a string column) are
/// [`Error::Validation`].
pub fn convert(literal: &UnboundLiteral, ty: PrimitiveType) -> Result<Converted> {
    use PrimitiveType as P;
    use UnboundLiteral as U;
    let exact =
        |value: Literal| -> Result<Converted> { Ok(Converted::Exact(Datum::new(ty, value)?)) };
    let wrong = || Err(mismatch(literal, ty));
    match (literal, ty) {
        (U::Boolean(v), P::Boolean) => exact(Literal::Boolean(*v)),
        (U::Int(v), P::Int) => Ok(integer_in(ty, *v, I32_MIN, I32_MAX, |v| {
            Literal::Int(v as i32)
        })),
        (U::Int(v), P::Long) => Ok(integer_in(ty, *v, I64_MIN, I64_MAX, |v| {
            Literal::Long(v as i64)
        })),
        (U::Int(v), P::Date) => Ok(integer_in(ty, *v, I32_MIN, I32_MAX, |v| {
            Literal::Date(v as i32)
        })),
        (U::Int(v), P::Time) => match i64::try_from(*v) {
            Ok(m) if (0..values::MICROS_PER_DAY).contains(&m) => exact(Literal::Time(m)),
            _ if *v < 0 => Ok(Converted::BelowMin),
            _ => Ok(Converted::AboveMax),
        },
        // Java: a long against a timestamp is microseconds, also for
        // timestamp_ns (converted to nanoseconds).
        (U::Int(v), P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs) => {
            let scale: i128 = if ty.is_nanos() { 1000 } else { 1 };
            let make: fn(PrimitiveType, i64) -> Literal = |ty, v| timestamp_literal(ty, v);
            match v.checked_mul(scale).map(i64::try_from) {
                Some(Ok(n)) => exact(make(ty, n)),
                _ if *v < 0 => Ok(Converted::BelowMin),
                _ => Ok(Converted::AboveMax),
            }
        }
        (U::Int(v), P::Float) => exact(Literal::Float(*v as f32)),
        (U::Int(v), P::Double) => exact(Literal::Double(*v as f64)),
        (U::Int(v), P::Decimal { .. }) => Ok(decimal_at(ty, *v, 0)),
        (U::Float(v), _) if v.is_nan() => Err(Error::Validation(
            "NaN cannot be compared with a column: use IS NAN or IS NOT NAN".to_owned(),
        )),
        (U::Float(v), P::Float) => Ok(if *v > f64::from(f32::MAX) {
            Converted::AboveMax
        } else if *v < -f64::from(f32::MAX) {
            Converted::BelowMin
        } else {
            Converted::Exact(Datum::new(ty, Literal::Float(*v as f32))?)
        }),
        (U::Float(v), P::Double) => exact(Literal::Double(*v)),
        (U::Float(v), P::Int) if v.is_infinite() => Ok(infinite(*v)),
        (U::Float(v), P::Long) if v.is_infinite() => Ok(infinite(*v)),
        (U::Float(v), P::Decimal { .. }) if v.is_infinite() => Ok(infinite(*v)),
        (U::Float(v), P::Int) => Ok(float_to_integer(ty, *v, I32_MIN, I32_MAX, |v| {
            Literal::Int(v as i32)
        })),
        (U::Float(v), P::Long) => Ok(float_to_integer(ty, *v, I64_MIN, I64_MAX, |v| {
            Literal::Long(v as i64)
        })),
        (U::Float(v), P::Decimal { .. }) => {
            let (unscaled, scale) = double_as_decimal(*v)?;
            Ok(decimal_at(ty, unscaled, scale))
        }
        (U::Decimal(text), P::Decimal { .. }) => {
            let (unscaled, scale) = values::decimal::parse(text)?;
            Ok(decimal_at(ty, unscaled, scale))
        }
        (U::Decimal(text), P::Float | P::Double) => {
            let bad = || Error::InvalidValue(format!("{text:?} is not a decimal number"));
            // Rust's f64 parser also reads "inf" and "NaN", which are no decimals.
            if !text
                .bytes()
                .all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b))
            {
                return Err(bad());
            }
            let v: f64 = text.parse().map_err(|_| bad())?;
            if v.is_infinite() && ty == P::Double {
                // A finite decimal beyond the largest double (1e400) is not
                // infinity: it lies between the largest finite double and
                // infinity (or between -infinity and the smallest).
                let floor = if v > 0.0 { f64::MAX } else { f64::NEG_INFINITY };
                return Ok(Converted::Between {
                    floor: Datum {
                        ty,
                        value: Literal::Double(floor),
                    },
                });
            }
            convert(&U::Float(v), ty)
        }
        (U::Decimal(text), P::Int | P::Long) => {
            let (unscaled, scale) = values::decimal::parse(text)?;
            if scale < 0 {
                let whole = 10i128
                    .checked_pow(scale.unsigned_abs())
                    .and_then(|f| unscaled.checked_mul(f));
                return match whole {
                    Some(v) => convert(&U::Int(v), ty),
                    None if unscaled > 0 => Ok(Converted::AboveMax),
                    None => Ok(Converted::BelowMin),
                };
            }
            let Some(divisor) = 10i128.checked_pow(scale.unsigned_abs()) else {
                // More fraction digits than i128 holds: within 1 of zero.
                return convert(&U::Float(if unscaled < 0 { -0.5 } else { 0.5 }), ty);
            };
            let floor = unscaled.div_euclid(divisor);
            let (min, max, make): (i128, i128, fn(i128) -> Literal) = if ty == P::Int {
                (I32_MIN, I32_MAX, |v| Literal::Int(v as i32))
            } else {
                (I64_MIN, I64_MAX, |v| Literal::Long(v as i64))
            };
            Ok(match integer_in(ty, floor, min, max, make) {
                Converted::Exact(d) if unscaled.rem_euclid(divisor) != 0 => {
                    Converted::Between { floor: d }
                }
                other => other,
            })
        }
        (U::String(s) | U::Json(s), P::String) => exact(Literal::String(s.clone())),
        (U::String(s) | U::Json(s), P::Date) => {
            exact(Literal::Date(values::datetime::parse_date(s)?))
        }
        (U::String(s) | U::Json(s), P::Time) => {
            exact(Literal::Time(values::datetime::parse_time(s)?))
        }
        (U::String(s) | U::Json(s), P::Timestamp) => {
            exact(Literal::Timestamp(parse_timestamp_text(s, false, false)?))
        }
        (U::String(s) | U::Json(s), P::Timestamptz) => {
            exact(Literal::Timestamptz(parse_timestamp_text(s, true, false)?))
        }
        (U::String(s) | U::Json(s), P::TimestampNs) => {
            exact(Literal::TimestampNs(parse_timestamp_text(s, false, true)?))
        }
        (U::String(s) | U::Json(s), P::TimestamptzNs) => {
            exact(Literal::TimestamptzNs(parse_timestamp_text(s, true, true)?))
        }
        (U::String(s) | U::Json(s), P::Decimal { .. }) => {
            convert(&U::Decimal(s.trim().to_owned()), ty)
        }
        (U::String(s) | U::Json(s), P::Uuid) => {
            let value = values::from_json(
                &crate::types::Type::Primitive(P::Uuid),
                &Value::String(s.trim().to_ascii_lowercase()),
            )?;
            exact(value)
        }
        (U::Json(s), P::Binary | P::Fixed(_)) => {
            let value = values::from_json(
                &crate::types::Type::Primitive(ty),
                &Value::String(s.clone()),
            )?;
            exact(value)
        }
        (U::Binary(b), P::Binary) => exact(Literal::Binary(b.clone())),
        (U::Binary(b), P::Fixed(_)) => exact(Literal::Fixed(b.clone())),
        (U::Binary(b), P::Uuid) => {
            let bytes: [u8; 16] = b.clone().try_into().map_err(|_| {
                Error::Validation(format!(
                    "cannot compare a {}-byte binary literal with a uuid column (16 bytes)",
                    b.len()
                ))
            })?;
            exact(Literal::Uuid(bytes))
        }
        (U::Uuid(u), P::Uuid) => exact(Literal::Uuid(*u)),
        (U::Date(d), P::Date) => exact(Literal::Date(*d)),
        // A date against a timestamp column is midnight of that day (the
        // value a date promoted to a timestamp takes, spec: Schema Evolution).
        (U::Date(d), P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs) => {
            let per_day = i128::from(values::MICROS_PER_DAY) * if ty.is_nanos() { 1000 } else { 1 };
            match i64::try_from(i128::from(*d) * per_day) {
                Ok(v) => exact(timestamp_literal(ty, v)),
                Err(_) if *d < 0 => Ok(Converted::BelowMin),
                Err(_) => Ok(Converted::AboveMax),
            }
        }
        (U::Time(t), P::Time) => exact(Literal::Time(*t)),
        // A naive datetime against a timestamp column; an aware one against
        // a timestamptz column (already in UTC microseconds).
        (U::Timestamp(v), P::Timestamp | P::TimestampNs)
        | (U::Timestamptz(v), P::Timestamptz | P::TimestamptzNs) => {
            let scale: i128 = if ty.is_nanos() { 1000 } else { 1 };
            match i64::try_from(i128::from(*v) * scale) {
                Ok(n) => exact(timestamp_literal(ty, n)),
                Err(_) if *v < 0 => Ok(Converted::BelowMin),
                Err(_) => Ok(Converted::AboveMax),
            }
        }
        (U::Timestamp(_), P::Timestamptz | P::TimestamptzNs) => Err(Error::Validation(format!(
            "cannot compare {literal}, which has no time zone, with a {ty} column: give a \
             timezone-aware datetime or a string with an offset"
        ))),
        (U::Timestamptz(_), P::Timestamp | P::TimestampNs) => Err(Error::Validation(format!(
            "cannot compare {literal}, which has a time zone, with a {ty} column (no zone): \
             give a naive datetime"
        ))),
        // Java's TimestampLiteral.to(DATE): the day of the timestamp.
        (U::Timestamp(v), P::Date) => {
            let days = v.div_euclid(values::MICROS_PER_DAY);
            Ok(integer_in(ty, i128::from(days), I32_MIN, I32_MAX, |v| {
                Literal::Date(v as i32)
            }))
        }
        _ => wrong(),
    }
}

fn infinite(v: f64) -> Converted {
    if v > 0.0 {
        Converted::AboveMax
    } else {
        Converted::BelowMin
    }
}

fn timestamp_literal(ty: PrimitiveType, v: i64) -> Literal {
    match ty {
        PrimitiveType::Timestamp => Literal::Timestamp(v),
        PrimitiveType::Timestamptz => Literal::Timestamptz(v),
        PrimitiveType::TimestampNs => Literal::TimestampNs(v),
        _ => Literal::TimestamptzNs(v),
    }
}

/// A timestamp's text against a timestamp column. For `timestamptz`, an
/// offset is required and converted to UTC (Java: `OffsetDateTime.parse`);
/// for `timestamp`, an offset is refused (Java: `LocalDateTime.parse`).
fn parse_timestamp_text(text: &str, with_zone: bool, nanos: bool) -> Result<i64> {
    let text = text.trim();
    let (local, offset_seconds) = split_offset(text);
    match (with_zone, offset_seconds) {
        // Text that is no timestamp at all is reported as such, not as one lacking an
        // offset (`'2024-13-45'` is an invalid date; adding `+00:00` would not help).
        (true, None) => Err(match malformed_timestamp(text, nanos) {
            Some(error) => error,
            None => Error::Validation(format!(
                "timestamp {text:?} has no zone offset: a timestamptz column needs one (e.g. \
                 {text}+00:00)"
            )),
        }),
        (false, Some(_)) => Err(Error::Validation(format!(
            "timestamp {text:?} has a zone offset, but the column is a timestamp without zone"
        ))),
        (_, offset) => {
            let value = if nanos {
                values::datetime::parse_timestamp_nanos(local, false)?
            } else {
                values::datetime::parse_timestamp(local, false)?
            };
            let per_second: i64 = if nanos { 1_000_000_000 } else { 1_000_000 };
            let shift = i64::from(offset.unwrap_or(0)) * per_second;
            value
                .checked_sub(shift)
                .ok_or_else(|| Error::InvalidValue(format!("timestamp {text:?} is out of range")))
        }
    }
}

/// Why `text` (without an offset) is not a timestamp, or None when it is one: an
/// invalid date names the date; a valid date without a time shows the whole form.
fn malformed_timestamp(text: &str, nanos: bool) -> Option<Error> {
    let parsed = if nanos {
        values::datetime::parse_timestamp_nanos(text, false)
    } else {
        values::datetime::parse_timestamp(text, false)
    };
    let error = parsed.err()?;
    let date = text.split(['T', 't']).next().unwrap_or(text);
    Some(match values::datetime::parse_date(date) {
        Err(_) => Error::InvalidValue(format!(
            "timestamp {text:?}: {date:?} is not a valid date (yyyy-mm-dd)"
        )),
        Ok(_) if date == text => Error::InvalidValue(format!(
            "{text:?} is a date, not a timestamp: a timestamptz column needs a time and a zone \
             offset (e.g. {text}T00:00:00+00:00)"
        )),
        Ok(_) => error,
    })
}

/// Splits `2024-01-01T10:00:00+02:00` into the local part and the offset in
/// seconds (`Z` is 0); text without an offset gives `None`.
fn split_offset(text: &str) -> (&str, Option<i32>) {
    if let Some(local) = text.strip_suffix('Z').or_else(|| text.strip_suffix('z')) {
        return (local, Some(0));
    }
    // The offset's sign comes after the time part (after 'T').
    let Some(t) = text.find(['T', 't']) else {
        return (text, None);
    };
    let Some(at) = text[t..].rfind(['+', '-']).map(|i| i + t) else {
        return (text, None);
    };
    let (local, offset) = text.split_at(at);
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let parts: Vec<&str> = offset[1..].split(':').collect();
    let number = |s: Option<&&str>| s.and_then(|s| s.parse::<i32>().ok());
    match (number(parts.first()), number(parts.get(1)), parts.len()) {
        (Some(h), Some(m), 2) => (local, Some(sign * (h * 3600 + m * 60))),
        (Some(h), Some(m), 3) => match number(parts.get(2)) {
            Some(s) => (local, Some(sign * (h * 3600 + m * 60 + s))),
            None => (text, None),
        },
        _ => (text, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveType as P;
    use UnboundLiteral as U;

    fn exact(c: Result<Converted>) -> Literal {
        match c.unwrap() {
            Converted::Exact(d) => d.value,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn integers_convert_with_range_markers() {
        assert_eq!(exact(convert(&U::Int(5), P::Long)), Literal::Long(5));
        assert_eq!(
            convert(&U::Int(1 << 40), P::Int).unwrap(),
            Converted::AboveMax
        );
        assert_eq!(
            convert(&U::Int(-(1 << 40)), P::Int).unwrap(),
            Converted::BelowMin
        );
        assert_eq!(exact(convert(&U::Int(3), P::Double)), Literal::Double(3.0));
        assert_eq!(
            exact(convert(
                &U::Int(3),
                P::Decimal {
                    precision: 9,
                    scale: 2
                }
            )),
            Literal::Decimal(300)
        );
        assert_eq!(
            exact(convert(&U::Int(7), P::TimestampNs)),
            Literal::TimestampNs(7000)
        );
        assert!(matches!(
            convert(&U::Int(1), P::String),
            Err(Error::Validation(_))
        ));
    }

    #[test]
    fn fractions_lie_between_values() {
        let between = |c: Result<Converted>| match c.unwrap() {
            Converted::Between { floor } => floor.value,
            other => panic!("{other:?}"),
        };
        assert_eq!(between(convert(&U::Float(3.5), P::Int)), Literal::Int(3));
        assert_eq!(
            between(convert(&U::Float(-3.5), P::Long)),
            Literal::Long(-4)
        );
        assert_eq!(exact(convert(&U::Float(3.0), P::Int)), Literal::Int(3));
        let dec = P::Decimal {
            precision: 9,
            scale: 2,
        };
        assert_eq!(
            between(convert(&U::Decimal("1.234".into()), dec)),
            Literal::Decimal(123)
        );
        assert_eq!(
            between(convert(&U::Decimal("-1.234".into()), dec)),
            Literal::Decimal(-124)
        );
        assert_eq!(
            exact(convert(&U::Decimal("1.5".into()), dec)),
            Literal::Decimal(150)
        );
        assert_eq!(exact(convert(&U::Float(0.1), dec)), Literal::Decimal(10));
        assert_eq!(
            convert(&U::Decimal("1e10".into()), dec).unwrap(),
            Converted::AboveMax
        );
        assert_eq!(
            convert(&U::Float(-1e300), dec).unwrap(),
            Converted::BelowMin
        );
        assert_eq!(
            convert(&U::Int(10_000_000), dec).unwrap(),
            Converted::AboveMax
        );
        assert_eq!(
            convert(&U::Float(1e40), P::Float).unwrap(),
            Converted::AboveMax
        );
        assert_eq!(
            convert(&U::Float(-1e40), P::Float).unwrap(),
            Converted::BelowMin
        );
        assert_eq!(
            convert(&U::Float(f64::INFINITY), P::Int).unwrap(),
            Converted::AboveMax
        );
        assert!(convert(&U::Float(f64::NAN), P::Double).is_err());
    }

    #[test]
    fn decimals_beyond_the_doubles_are_not_infinite() {
        let between = |c: Result<Converted>| match c.unwrap() {
            Converted::Between { floor } => floor.value,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            between(convert(&U::Decimal("1e400".into()), P::Double)),
            Literal::Double(f64::MAX)
        );
        assert_eq!(
            between(convert(&U::Decimal("-1e400".into()), P::Double)),
            Literal::Double(f64::NEG_INFINITY)
        );
        assert_eq!(
            convert(&U::Decimal("1e400".into()), P::Float).unwrap(),
            Converted::AboveMax
        );
        assert_eq!(
            exact(convert(&U::Decimal("1.5e300".into()), P::Double)),
            Literal::Double(1.5e300)
        );
        for text in ["inf", "-Infinity", "NaN"] {
            assert!(
                convert(&U::Decimal(text.into()), P::Double).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn strings_parse_to_the_column_type() {
        assert_eq!(
            exact(convert(&U::String("2024-01-02".into()), P::Date)),
            Literal::Date(19724)
        );
        assert_eq!(
            exact(convert(
                &U::String("2024-01-02T01:00:00+01:00".into()),
                P::Timestamptz
            )),
            Literal::Timestamptz(19724 * 86_400_000_000)
        );
        assert_eq!(
            exact(convert(
                &U::String("2024-01-02T00:00:00Z".into()),
                P::Timestamptz
            )),
            Literal::Timestamptz(19724 * 86_400_000_000)
        );
        assert!(convert(&U::String("2024-01-02T00:00:00".into()), P::Timestamptz).is_err());
        let message = |text: &str| match convert(&U::String(text.into()), P::Timestamptz) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("{c:?}"),
        };
        assert!(message("2024-01-02T00:00:00").contains("no zone offset"));
        assert!(message("2024-13-45").contains("\"2024-13-45\" is not a valid date"));
        assert!(message("2024-02-30T10:00:00").contains("\"2024-02-30\" is not a valid date"));
        assert!(message("2024-01-02").contains("e.g. 2024-01-02T00:00:00+00:00"));
        assert!(!message("2024-13-45").contains("offset"));
        assert!(convert(&U::String("2024-01-02T00:00:00+01:00".into()), P::Timestamp).is_err());
        assert_eq!(
            exact(convert(
                &U::String("2024-01-02T00:00:00.000000001".into()),
                P::TimestampNs
            )),
            Literal::TimestampNs(19724 * 86_400_000_000_000 + 1)
        );
        assert_eq!(
            exact(convert(
                &U::String("F79C3E09-677C-4BBD-A479-3F349CB785E7".into()),
                P::Uuid
            )),
            Literal::Uuid([
                0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7,
                0x85, 0xE7
            ])
        );
        assert!(convert(&U::String("ab".into()), P::Binary).is_err());
        assert_eq!(
            exact(convert(&U::Json("0a1b".into()), P::Binary)),
            Literal::Binary(vec![10, 27])
        );
        assert!(convert(&U::String("x".into()), P::Int).is_err());
    }

    #[test]
    fn comparison_order() {
        let d = |v: f64| Literal::Double(v);
        assert_eq!(compare(&d(-0.0), &d(0.0)), Ordering::Less);
        assert_eq!(compare(&d(f64::NAN), &d(f64::INFINITY)), Ordering::Greater);
        assert_eq!(compare(&d(-f64::NAN), &d(1.0)), Ordering::Greater);
        assert_eq!(
            compare(&Literal::Uuid([0x80; 16]), &Literal::Uuid([0x7f; 16])),
            Ordering::Greater
        );
        assert_eq!(
            compare(
                &Literal::String("\u{E000}".into()),
                &Literal::String("\u{10000}".into())
            ),
            Ordering::Less
        );
    }
}
