//! Key values as people read them, for error messages: `(id=5, region="eu")`.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{downcast_dictionary_array, Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::values::{self, datetime, decimal};

/// At most this many characters (or bytes, in hex) of a string or binary value.
const MAX_CHARS: usize = 64;

/// The key at `row` of `columns`: `(name=value, ...)`, or `(value, ...)`
/// without names.
pub fn key(columns: &[ArrayRef], row: usize, names: Option<&[String]>) -> String {
    let parts: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            let value = value(column.as_ref(), row);
            match names {
                Some(names) => format!("{}={value}", names[i]),
                None => value,
            }
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// One value of a key column (of a type `key_join` accepts).
pub fn value(array: &dyn Array, row: usize) -> String {
    if array.is_null(row) {
        return "null".into();
    }
    macro_rules! num {
        ($t:ty) => {
            array.as_primitive::<$t>().value(row).to_string()
        };
    }
    use DataType as D;
    match array.data_type() {
        D::Boolean => array.as_boolean().value(row).to_string(),
        D::Int8 => num!(Int8Type),
        D::Int16 => num!(Int16Type),
        D::Int32 => num!(Int32Type),
        D::Int64 => num!(Int64Type),
        D::UInt8 => num!(UInt8Type),
        D::UInt16 => num!(UInt16Type),
        D::UInt32 => num!(UInt32Type),
        D::UInt64 => num!(UInt64Type),
        D::Float32 => num!(Float32Type),
        D::Float64 => num!(Float64Type),
        D::Decimal32(_, s) => decimal::format(
            array.as_primitive::<Decimal32Type>().value(row).into(),
            (*s).into(),
        ),
        D::Decimal64(_, s) => decimal::format(
            array.as_primitive::<Decimal64Type>().value(row).into(),
            (*s).into(),
        ),
        D::Decimal128(_, s) => decimal::format(
            array.as_primitive::<Decimal128Type>().value(row),
            (*s).into(),
        ),
        D::Decimal256(_, s) => {
            let unscaled = array.as_primitive::<Decimal256Type>().value(row);
            match unscaled.to_i128() {
                Some(v) => decimal::format(v, (*s).into()),
                None => format!("{unscaled}E-{s}"),
            }
        }
        D::Date32 => datetime::format_date(array.as_primitive::<Date32Type>().value(row)),
        D::Date64 => {
            let millis = array.as_primitive::<Date64Type>().value(row);
            timestamp_micros(millis.checked_mul(1000), false).unwrap_or_else(|| millis.to_string())
        }
        D::Time32(unit) => {
            let v = i64::from(match unit {
                TimeUnit::Second => array.as_primitive::<Time32SecondType>().value(row),
                _ => array.as_primitive::<Time32MillisecondType>().value(row),
            });
            let micros = v * if *unit == TimeUnit::Second {
                1_000_000
            } else {
                1000
            };
            datetime::format_time(micros).unwrap_or_else(|_| v.to_string())
        }
        D::Time64(unit) => {
            let v = match unit {
                TimeUnit::Nanosecond => array.as_primitive::<Time64NanosecondType>().value(row),
                _ => array.as_primitive::<Time64MicrosecondType>().value(row),
            };
            let micros = if *unit == TimeUnit::Nanosecond && v % 1000 != 0 {
                None
            } else if *unit == TimeUnit::Nanosecond {
                Some(v / 1000)
            } else {
                Some(v)
            };
            micros
                .and_then(|m| datetime::format_time(m).ok())
                .unwrap_or_else(|| v.to_string())
        }
        D::Timestamp(unit, zone) => {
            let zoned = zone.is_some();
            match unit {
                TimeUnit::Nanosecond => datetime::format_timestamp_nanos(
                    array.as_primitive::<TimestampNanosecondType>().value(row),
                    zoned,
                ),
                TimeUnit::Microsecond => datetime::format_timestamp(
                    array.as_primitive::<TimestampMicrosecondType>().value(row),
                    zoned,
                ),
                TimeUnit::Millisecond => {
                    let v = array.as_primitive::<TimestampMillisecondType>().value(row);
                    timestamp_micros(v.checked_mul(1000), zoned).unwrap_or_else(|| v.to_string())
                }
                TimeUnit::Second => {
                    let v = array.as_primitive::<TimestampSecondType>().value(row);
                    timestamp_micros(v.checked_mul(1_000_000), zoned)
                        .unwrap_or_else(|| v.to_string())
                }
            }
        }
        D::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => num!(DurationSecondType),
                TimeUnit::Millisecond => num!(DurationMillisecondType),
                TimeUnit::Microsecond => num!(DurationMicrosecondType),
                TimeUnit::Nanosecond => num!(DurationNanosecondType),
            };
            let unit = match unit {
                TimeUnit::Second => "s",
                TimeUnit::Millisecond => "ms",
                TimeUnit::Microsecond => "us",
                TimeUnit::Nanosecond => "ns",
            };
            format!("{v}{unit}")
        }
        D::Utf8 => string(array.as_string::<i32>().value(row)),
        D::LargeUtf8 => string(array.as_string::<i64>().value(row)),
        D::Utf8View => string(array.as_string_view().value(row)),
        D::Binary => binary(array.as_binary::<i32>().value(row)),
        D::LargeBinary => binary(array.as_binary::<i64>().value(row)),
        D::BinaryView => binary(array.as_binary_view().value(row)),
        D::FixedSizeBinary(16) => {
            let bytes = array.as_fixed_size_binary().value(row);
            match <&[u8; 16]>::try_from(bytes) {
                Ok(uuid) => values::uuid_string(uuid),
                Err(_) => binary(bytes),
            }
        }
        D::FixedSizeBinary(_) => binary(array.as_fixed_size_binary().value(row)),
        D::Dictionary(_, _) => downcast_dictionary_array! {
            array => match array.key(row) {
                Some(key) => value(array.values().as_ref(), key),
                None => "null".into(),
            },
            _ => format!("<{}>", array.data_type()),
        },
        other => format!("<{other}>"),
    }
}

fn timestamp_micros(micros: Option<i64>, zoned: bool) -> Option<String> {
    micros.map(|m| datetime::format_timestamp(m, zoned))
}

/// A string quoted and escaped, cut after [`MAX_CHARS`] characters.
fn string(s: &str) -> String {
    match s.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{:?}...", &s[..cut]),
        None => format!("{s:?}"),
    }
}

/// Bytes as `X'0a1b'`, cut after [`MAX_CHARS`] bytes.
fn binary(bytes: &[u8]) -> String {
    if bytes.len() > MAX_CHARS {
        format!("X'{}'...", values::hex(&bytes[..MAX_CHARS]))
    } else {
        format!("X'{}'", values::hex(bytes))
    }
}
