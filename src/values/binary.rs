//! Binary single-value serialization (spec: Appendix D), the form of the
//! lower and upper bounds in manifests.

use crate::error::{Error, Result};
use crate::types::PrimitiveType;

use super::{check_decimal, check_time, decimal, mismatch, Literal};

/// Serializes a value of a primitive type to its Appendix D bytes.
///
/// Fixed-width values are little-endian (except UUIDs, big-endian), strings
/// their UTF-8, decimals the minimum-length two's-complement big-endian bytes
/// of the unscaled value. Fails with [`Error::TypeMismatch`] when the value is
/// not of the type's kind and with [`Error::InvalidValue`] when it is out of
/// range (a decimal beyond its precision, a time outside the day, a fixed
/// value of the wrong length).
pub fn to_bytes(ty: &PrimitiveType, value: &Literal) -> Result<Vec<u8>> {
    use PrimitiveType as T;
    Ok(match (ty, value) {
        (T::Boolean, Literal::Boolean(v)) => vec![u8::from(*v)],
        (T::Int, Literal::Int(v)) | (T::Date, Literal::Date(v)) => v.to_le_bytes().to_vec(),
        (T::Long, Literal::Long(v))
        | (T::Timestamp, Literal::Timestamp(v))
        | (T::Timestamptz, Literal::Timestamptz(v))
        | (T::TimestampNs, Literal::TimestampNs(v))
        | (T::TimestamptzNs, Literal::TimestamptzNs(v)) => v.to_le_bytes().to_vec(),
        (T::Time, Literal::Time(v)) => check_time(*v)?.to_le_bytes().to_vec(),
        (T::Float, Literal::Float(v)) => v.to_le_bytes().to_vec(),
        (T::Double, Literal::Double(v)) => v.to_le_bytes().to_vec(),
        (T::Decimal { .. }, Literal::Decimal(v)) => decimal::to_min_bytes(check_decimal(*ty, *v)?),
        (T::String, Literal::String(v)) => v.as_bytes().to_vec(),
        (T::Uuid, Literal::Uuid(v)) => v.to_vec(),
        (T::Fixed(length), Literal::Fixed(v)) => {
            check_fixed_length(*length, v.len())?;
            v.clone()
        }
        (T::Binary, Literal::Binary(v)) => v.clone(),
        _ => return Err(mismatch(ty, value)),
    })
}

fn check_fixed_length(length: u64, actual: usize) -> Result<()> {
    if u64::try_from(actual).ok() == Some(length) {
        Ok(())
    } else {
        Err(Error::InvalidValue(format!(
            "a fixed[{length}] value must be exactly {length} bytes, got {actual}"
        )))
    }
}

fn wrong_length(ty: &PrimitiveType, expected: &str, bytes: &[u8]) -> Error {
    Error::InvalidValue(format!(
        "a binary {ty} value must be {expected}, got {} bytes",
        bytes.len()
    ))
}

/// Reads exactly `N` bytes.
fn exact<const N: usize>(ty: &PrimitiveType, bytes: &[u8]) -> Result<[u8; N]> {
    bytes
        .try_into()
        .map_err(|_| wrong_length(ty, &format!("{N} bytes"), bytes))
}

/// Deserializes Appendix D bytes of a primitive type.
///
/// Lengths are checked strictly, with the exceptions that schema evolution
/// requires (spec: "Schema Evolution"): a `long` also reads 4 bytes (bounds
/// written while the column was an `int`), a `double` 4 bytes (written as a
/// `float`), and the timestamps 4 bytes (v3: written as a `date`, read as
/// midnight of that day). Java's `Conversions.fromByteBuffer` is laxer: it
/// ignores trailing bytes of an `int`, `float` or `boolean` and reads 4
/// bytes for `time` too. No valid promotion produces those, so here they are
/// [`Error::InvalidValue`] rather than a guess.
pub fn from_bytes(ty: &PrimitiveType, bytes: &[u8]) -> Result<Literal> {
    use PrimitiveType as T;
    Ok(match ty {
        // Appendix D: 0x00 is false and any other byte is true.
        T::Boolean => Literal::Boolean(exact::<1>(ty, bytes)?[0] != 0),
        T::Int => Literal::Int(i32::from_le_bytes(exact(ty, bytes)?)),
        T::Date => Literal::Date(i32::from_le_bytes(exact(ty, bytes)?)),
        T::Long => match bytes.len() {
            4 => Literal::Long(i64::from(i32::from_le_bytes(exact(ty, bytes)?))),
            _ => Literal::Long(i64::from_le_bytes(bytes.try_into().map_err(|_| {
                wrong_length(ty, "8 bytes (or 4, written as an int)", bytes)
            })?)),
        },
        T::Time => Literal::Time(check_time(i64::from_le_bytes(exact(ty, bytes)?))?),
        T::Timestamp => Literal::Timestamp(timestamp_from_bytes(ty, bytes, 1)?),
        T::Timestamptz => Literal::Timestamptz(timestamp_from_bytes(ty, bytes, 1)?),
        T::TimestampNs => Literal::TimestampNs(timestamp_from_bytes(ty, bytes, 1000)?),
        T::TimestamptzNs => Literal::TimestamptzNs(timestamp_from_bytes(ty, bytes, 1000)?),
        T::Unknown => {
            return Err(Error::InvalidValue(
                "type unknown has no values (it is always null)".to_owned(),
            ))
        }
        T::Float => Literal::Float(f32::from_le_bytes(exact(ty, bytes)?)),
        T::Double => match bytes.len() {
            4 => Literal::Double(f64::from(f32::from_le_bytes(exact(ty, bytes)?))),
            _ => Literal::Double(f64::from_le_bytes(bytes.try_into().map_err(|_| {
                wrong_length(ty, "8 bytes (or 4, written as a float)", bytes)
            })?)),
        },
        T::Decimal { .. } => {
            let unscaled = decimal::from_be_bytes(bytes)
                .map_err(|_| wrong_length(ty, "1 to 16 bytes", bytes))?;
            Literal::Decimal(check_decimal(*ty, unscaled)?)
        }
        T::String => Literal::String(String::from_utf8(bytes.to_vec()).map_err(|e| {
            Error::InvalidValue(format!(
                "a binary string value must be valid UTF-8: {e} (bytes 0x{})",
                super::hex(bytes)
            ))
        })?),
        T::Uuid => Literal::Uuid(exact(ty, bytes)?),
        T::Fixed(length) => {
            check_fixed_length(*length, bytes.len())?;
            Literal::Fixed(bytes.to_vec())
        }
        T::Binary => Literal::Binary(bytes.to_vec()),
    })
}

/// A timestamp's 8 bytes, or 4 bytes of a `date` that v3 promoted to a
/// timestamp (spec: "Schema Evolution": date to timestamp or timestamp_ns):
/// bounds written before the promotion keep the date's width, and a day
/// count becomes midnight of that day. `per_micro` is 1000 for nanoseconds.
fn timestamp_from_bytes(ty: &PrimitiveType, bytes: &[u8], per_micro: i64) -> Result<i64> {
    if bytes.len() == 4 {
        let days = i64::from(i32::from_le_bytes(exact(ty, bytes)?));
        return days
            .checked_mul(super::MICROS_PER_DAY * per_micro)
            .ok_or_else(|| Error::InvalidValue(format!("date {days} is out of range for {ty}")));
    }
    Ok(i64::from_le_bytes(bytes.try_into().map_err(|_| {
        wrong_length(ty, "8 bytes (or 4, written as a date)", bytes)
    })?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> PrimitiveType {
        PrimitiveType::parse(text).unwrap()
    }

    fn round_trip(ty: &str, value: Literal, bytes: &[u8]) {
        let t = p(ty);
        assert_eq!(to_bytes(&t, &value).unwrap(), bytes, "{ty} {value}");
        assert_eq!(from_bytes(&t, bytes).unwrap(), value, "{ty} {bytes:?}");
    }

    #[test]
    fn fixed_width_little_endian() {
        round_trip("boolean", Literal::Boolean(false), &[0x00]);
        round_trip("boolean", Literal::Boolean(true), &[0x01]);
        round_trip("int", Literal::Int(34), &[34, 0, 0, 0]);
        round_trip("int", Literal::Int(-1), &[0xFF; 4]);
        round_trip("int", Literal::Int(i32::MIN), &[0, 0, 0, 0x80]);
        round_trip("int", Literal::Int(0x0102_0304), &[4, 3, 2, 1]);
        round_trip("long", Literal::Long(34), &[34, 0, 0, 0, 0, 0, 0, 0]);
        round_trip(
            "long",
            Literal::Long(i64::MIN),
            &[0, 0, 0, 0, 0, 0, 0, 0x80],
        );
        round_trip(
            "long",
            Literal::Long(i64::MAX),
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
        );
        round_trip("float", Literal::Float(1.0), &[0, 0, 0x80, 0x3F]);
        round_trip("float", Literal::Float(-0.0), &[0, 0, 0, 0x80]);
        round_trip(
            "double",
            Literal::Double(1.0),
            &[0, 0, 0, 0, 0, 0, 0xF0, 0x3F],
        );
        round_trip(
            "double",
            Literal::Double(-0.0),
            &[0, 0, 0, 0, 0, 0, 0, 0x80],
        );
        round_trip(
            "double",
            Literal::Double(f64::INFINITY),
            &[0, 0, 0, 0, 0, 0, 0xF0, 0x7F],
        );
        // 2017-11-16 is day 17486 = 0x444E.
        round_trip("date", Literal::Date(17486), &[0x4E, 0x44, 0, 0]);
        round_trip("date", Literal::Date(-1), &[0xFF; 4]);
        // 22:31:08 is 81068000000 microseconds = 0x12_E007_8300.
        round_trip(
            "time",
            Literal::Time(81_068_000_000),
            &[0x00, 0x83, 0x07, 0xE0, 0x12, 0, 0, 0],
        );
        round_trip(
            "time",
            Literal::Time(86_399_999_999),
            &86_399_999_999i64.to_le_bytes(),
        );
        round_trip("timestamp", Literal::Timestamp(-1), &[0xFF; 8]);
        round_trip(
            "timestamptz",
            Literal::Timestamptz(1_510_871_468_000_000),
            &1_510_871_468_000_000i64.to_le_bytes(),
        );
        // Pre-1970: 1969-12-31T00:00:00 is -86400000000.
        round_trip(
            "timestamp",
            Literal::Timestamp(-86_400_000_000),
            &(-86_400_000_000i64).to_le_bytes(),
        );
    }

    #[test]
    fn nan_keeps_its_bits() {
        let nan = f64::from_bits(0x7FF0_0000_0000_0001);
        let bytes = to_bytes(&p("double"), &Literal::Double(nan)).unwrap();
        assert_eq!(bytes, 0x7FF0_0000_0000_0001u64.to_le_bytes());
        match from_bytes(&p("double"), &bytes).unwrap() {
            Literal::Double(v) => assert_eq!(v.to_bits(), 0x7FF0_0000_0000_0001),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn any_non_zero_byte_is_true() {
        for b in [1u8, 2, 0x80, 0xFF] {
            assert_eq!(
                from_bytes(&p("boolean"), &[b]).unwrap(),
                Literal::Boolean(true)
            );
        }
    }

    #[test]
    fn promoted_bounds_read_as_the_wider_type() {
        assert_eq!(
            from_bytes(&p("long"), &(-5i32).to_le_bytes()).unwrap(),
            Literal::Long(-5)
        );
        assert_eq!(
            from_bytes(&p("double"), &1.5f32.to_le_bytes()).unwrap(),
            Literal::Double(1.5)
        );
    }

    #[test]
    fn timestamps_read_date_bounds_written_before_a_v3_promotion() {
        let day = 19_000i32.to_le_bytes();
        let micros = 19_000 * 86_400_000_000i64;
        assert_eq!(
            from_bytes(&p("timestamp"), &day).unwrap(),
            Literal::Timestamp(micros)
        );
        assert_eq!(
            from_bytes(&p("timestamptz_ns"), &(-1i32).to_le_bytes()).unwrap(),
            Literal::TimestamptzNs(-86_400_000_000_000)
        );
        round_trip(
            "timestamp_ns",
            Literal::TimestampNs(-1),
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        );
    }

    #[test]
    fn wrong_lengths_are_invalid() {
        for (ty, len) in [
            ("boolean", 0),
            ("boolean", 2),
            ("int", 3),
            ("int", 8),
            ("long", 7),
            ("long", 9),
            ("long", 0),
            ("float", 8),
            ("double", 5),
            ("date", 8),
            ("time", 4),
            ("timestamp", 5),
            ("timestamptz", 9),
            ("timestamp_ns", 7),
            ("uuid", 15),
            ("uuid", 17),
            ("fixed[4]", 3),
            ("fixed[4]", 5),
            ("decimal(9,2)", 0),
            ("decimal(38,0)", 17),
        ] {
            match from_bytes(&p(ty), &vec![0u8; len]) {
                Err(Error::InvalidValue(message)) => {
                    assert!(message.contains(&len.to_string()), "{message}");
                }
                other => panic!("{ty} with {len} bytes: {other:?}"),
            }
        }
        match to_bytes(&p("fixed[4]"), &Literal::Fixed(vec![1, 2, 3])) {
            Err(Error::InvalidValue(message)) => {
                assert!(message.contains('4') && message.contains('3'), "{message}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strings_and_bytes() {
        round_trip("string", Literal::String("iceberg".into()), b"iceberg");
        round_trip("string", Literal::String(String::new()), b"");
        // U+1D11E MUSICAL SYMBOL G CLEF, four UTF-8 bytes.
        round_trip(
            "string",
            Literal::String("\u{1D11E}".into()),
            &[0xF0, 0x9D, 0x84, 0x9E],
        );
        round_trip("binary", Literal::Binary(vec![0, 1, 2, 3]), &[0, 1, 2, 3]);
        round_trip("binary", Literal::Binary(vec![]), &[]);
        round_trip("fixed[4]", Literal::Fixed(vec![0, 1, 2, 3]), &[0, 1, 2, 3]);
        let uuid = [
            0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7,
            0x85, 0xE7,
        ];
        round_trip("uuid", Literal::Uuid(uuid), &uuid);
        for bad in [
            &[0xFFu8][..],
            &[0xC3, 0x28],
            &[0xED, 0xA0, 0x80],
            &[0xF0, 0x9D, 0x84],
        ] {
            assert!(
                matches!(from_bytes(&p("string"), bad), Err(Error::InvalidValue(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn decimals_use_minimum_bytes() {
        round_trip("decimal(9,2)", Literal::Decimal(1420), &[0x05, 0x8C]);
        round_trip("decimal(9,2)", Literal::Decimal(-128), &[0x80]);
        round_trip("decimal(9,2)", Literal::Decimal(-1), &[0xFF]);
        round_trip("decimal(9,2)", Literal::Decimal(0), &[0x00]);
        round_trip("decimal(9,2)", Literal::Decimal(128), &[0x00, 0x80]);
        round_trip(
            "decimal(9,2)",
            Literal::Decimal(999_999_999),
            &[0x3B, 0x9A, 0xC9, 0xFF],
        );
        round_trip(
            "decimal(9,2)",
            Literal::Decimal(-999_999_999),
            &[0xC4, 0x65, 0x36, 0x01],
        );
        let max = 10i128.pow(38) - 1;
        round_trip(
            "decimal(38,10)",
            Literal::Decimal(max),
            &decimal::to_min_bytes(max),
        );
        round_trip(
            "decimal(38,10)",
            Literal::Decimal(-max),
            &decimal::to_min_bytes(-max),
        );
        // Padded encodings (as in a Parquet fixed_len_byte_array) read back too.
        assert_eq!(
            from_bytes(&p("decimal(9,2)"), &[0xFF, 0xFF, 0xFF, 0x80]).unwrap(),
            Literal::Decimal(-128)
        );
        // More digits than the precision.
        for (ty, v) in [("decimal(9,2)", 1_000_000_000i128), ("decimal(2,0)", -100)] {
            assert!(matches!(
                to_bytes(&p(ty), &Literal::Decimal(v)),
                Err(Error::InvalidValue(_))
            ));
            let bytes = decimal::to_min_bytes(v);
            assert!(matches!(
                from_bytes(&p(ty), &bytes),
                Err(Error::InvalidValue(_))
            ));
        }
    }

    #[test]
    fn times_outside_the_day_are_invalid() {
        for v in [-1i64, 86_400_000_000, i64::MAX] {
            assert!(matches!(
                to_bytes(&p("time"), &Literal::Time(v)),
                Err(Error::InvalidValue(_))
            ));
            assert!(matches!(
                from_bytes(&p("time"), &v.to_le_bytes()),
                Err(Error::InvalidValue(_))
            ));
        }
    }

    #[test]
    fn kinds_must_match() {
        for (ty, value) in [
            ("int", Literal::Long(1)),
            ("long", Literal::Int(1)),
            ("date", Literal::Int(1)),
            ("timestamp", Literal::Timestamptz(1)),
            ("fixed[1]", Literal::Binary(vec![1])),
            ("string", Literal::Binary(vec![])),
            ("double", Literal::Float(1.0)),
            ("boolean", Literal::Int(1)),
            ("int", Literal::List(vec![])),
        ] {
            match to_bytes(&p(ty), &value) {
                Err(Error::TypeMismatch(message)) => assert!(message.contains(ty), "{message}"),
                other => panic!("{ty}: {other:?}"),
            }
        }
    }
}
