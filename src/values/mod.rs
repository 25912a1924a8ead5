//! Single values of Iceberg types: their binary and JSON serializations
//! (spec: Appendix D) and their 32-bit hash (spec: Appendix B).
//!
//! A [`Literal`] holds a value in Iceberg's physical representation (days,
//! microseconds, unscaled decimals, ...); the type it belongs to is always
//! passed next to it, because the representation alone does not carry the
//! decimal scale, the fixed length or the struct's field ids.
//!
//! - [`to_bytes`] / [`from_bytes`]: the binary form used for manifest bounds.
//! - [`to_json`] / [`from_json`]: the JSON form used for default values.
//! - [`hash`]: the Murmur3 hash that `bucket[N]` is built on.

mod binary;
pub mod datetime;
pub mod decimal;
mod hash;
mod json;

use std::fmt;

pub use binary::{from_bytes, to_bytes};
pub use hash::{hash, hash_bytes, hash_double, hash_long};
pub use json::{from_json, to_json};

use crate::error::Error;
use crate::types::PrimitiveType;

/// One value of an Iceberg type, in the type's physical representation.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Boolean(bool),
    /// 32-bit signed integer.
    Int(i32),
    /// 64-bit signed integer.
    Long(i64),
    Float(f32),
    Double(f64),
    /// The unscaled value; precision and scale come from the type, so
    /// `14.20` in `decimal(9,2)` is `Decimal(1420)`.
    Decimal(i128),
    /// Days from 1970-01-01.
    Date(i32),
    /// Microseconds from midnight, `0..86_400_000_000`.
    Time(i64),
    /// Microseconds from 1970-01-01 00:00:00, independent of any zone.
    Timestamp(i64),
    /// Microseconds from 1970-01-01 00:00:00 UTC.
    Timestamptz(i64),
    /// Nanoseconds from 1970-01-01 00:00:00 (v3 `timestamp_ns`).
    TimestampNs(i64),
    /// Nanoseconds from 1970-01-01 00:00:00 UTC (v3 `timestamptz_ns`).
    TimestamptzNs(i64),
    String(String),
    /// The 16 bytes of the UUID in big-endian (RFC 4122) order.
    Uuid([u8; 16]),
    Fixed(Vec<u8>),
    Binary(Vec<u8>),
    /// Field values by position in the struct type; `None` is null.
    Struct(Vec<Option<Literal>>),
    /// Elements; `None` is a null element.
    List(Vec<Option<Literal>>),
    /// Key-value pairs in order. Keys are never null (spec: "Nested Types").
    Map(Vec<(Literal, Option<Literal>)>),
}

impl Literal {
    /// The name of the kind of value, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Literal::Boolean(_) => "boolean",
            Literal::Int(_) => "int",
            Literal::Long(_) => "long",
            Literal::Float(_) => "float",
            Literal::Double(_) => "double",
            Literal::Decimal(_) => "decimal",
            Literal::Date(_) => "date",
            Literal::Time(_) => "time",
            Literal::Timestamp(_) => "timestamp",
            Literal::Timestamptz(_) => "timestamptz",
            Literal::TimestampNs(_) => "timestamp_ns",
            Literal::TimestamptzNs(_) => "timestamptz_ns",
            Literal::String(_) => "string",
            Literal::Uuid(_) => "uuid",
            Literal::Fixed(_) => "fixed",
            Literal::Binary(_) => "binary",
            Literal::Struct(_) => "struct",
            Literal::List(_) => "list",
            Literal::Map(_) => "map",
        }
    }
}

impl fmt::Display for Literal {
    /// A short human-readable form for error messages (not a serialization).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Boolean(v) => write!(f, "{v}"),
            Literal::Int(v) | Literal::Date(v) => write!(f, "{v}"),
            Literal::Long(v)
            | Literal::Time(v)
            | Literal::Timestamp(v)
            | Literal::Timestamptz(v)
            | Literal::TimestampNs(v)
            | Literal::TimestamptzNs(v) => {
                write!(f, "{v}")
            }
            Literal::Float(v) => write!(f, "{v}"),
            Literal::Double(v) => write!(f, "{v}"),
            Literal::Decimal(v) => write!(f, "{v} (unscaled)"),
            Literal::String(v) => write!(f, "{v:?}"),
            Literal::Uuid(v) => f.write_str(&uuid_string(v)),
            Literal::Fixed(v) | Literal::Binary(v) => write!(f, "0x{}", hex(v)),
            Literal::Struct(v) | Literal::List(v) => write!(f, "[{} values]", v.len()),
            Literal::Map(v) => write!(f, "{{{} entries}}", v.len()),
        }
    }
}

/// The error for a value whose kind does not belong to the type.
pub(crate) fn mismatch(ty: &dyn fmt::Display, value: &Literal) -> Error {
    Error::TypeMismatch(format!(
        "a {} value ({value}) is not a valid value of type {ty}",
        value.kind()
    ))
}

/// Microseconds in a day: the exclusive upper bound of a `time` value.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;

/// Checks that a time of day lies within the day (spec: "Primitive Types").
pub(crate) fn check_time(micros: i64) -> crate::Result<i64> {
    if (0..MICROS_PER_DAY).contains(&micros) {
        Ok(micros)
    } else {
        Err(Error::InvalidValue(format!(
            "time value {micros} is outside a day (0 to {} microseconds)",
            MICROS_PER_DAY - 1
        )))
    }
}

/// Checks that an unscaled decimal fits the type's precision.
pub(crate) fn check_decimal(ty: PrimitiveType, unscaled: i128) -> crate::Result<i128> {
    if let PrimitiveType::Decimal { precision, .. } = ty {
        decimal::check_precision(unscaled, precision).map_err(|_| {
            Error::InvalidValue(format!(
                "unscaled value {unscaled} has more than {precision} digits and does not fit {ty}"
            ))
        })?;
    }
    Ok(unscaled)
}

/// Lowercase hexadecimal digits of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// The canonical lowercase 8-4-4-4-12 form of a UUID (spec: Appendix D, JSON).
pub fn uuid_string(bytes: &[u8; 16]) -> String {
    let h = hex(bytes);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
