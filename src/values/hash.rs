//! The 32-bit hash of a single value (spec: Appendix B): Murmur3 x86 32-bit
//! with seed 0 over a byte form of the value.
//!
//! This is the reference, one value at a time; the Arrow kernels use the fast
//! `crate::murmur3` and are tested against it.

use std::io::Cursor;

use crate::error::{Error, Result};
use crate::types::PrimitiveType;

use super::{check_decimal, check_time, decimal, mismatch, Literal};

/// The canonical NaN of Appendix B note 4.
const CANONICAL_NAN: u64 = 0x7ff8_0000_0000_0000;

/// Murmur3 x86 32-bit, seed 0, as a signed int like Java's `HashCode.asInt()`.
pub fn hash_bytes(bytes: &[u8]) -> i32 {
    // Reading from an in-memory cursor cannot fail.
    let hash = murmur3::murmur3_32(&mut Cursor::new(bytes), 0).unwrap_or_default();
    hash as i32
}

/// `hashLong`: the hash of the 8 little-endian bytes.
pub fn hash_long(value: i64) -> i32 {
    hash_bytes(&value.to_le_bytes())
}

/// `hashLong(doubleToLongBits(v))` with NaN and -0.0 canonicalised
/// (Appendix B note 4), so that equal values hash equally.
pub fn hash_double(value: f64) -> i32 {
    let bits = if value.is_nan() {
        CANONICAL_NAN
    } else if value == 0.0 {
        0
    } else {
        value.to_bits()
    };
    hash_long(bits as i64)
}

/// The Appendix B hash of a value of a primitive type.
///
/// - `int` and `date` hash as the widened `long` (note 1: promotion from
///   `int` to `long` must not move a row to another bucket; Java's
///   `BucketUtil.hash(int)` does the same for dates);
/// - `boolean` hashes as the int 0 or 1, widened likewise (second table);
/// - `float` is widened to `double` (note 4);
/// - `decimal` hashes its minimum-length big-endian unscaled bytes (note 2).
pub fn hash(ty: &PrimitiveType, value: &Literal) -> Result<i32> {
    use PrimitiveType as T;
    Ok(match (ty, value) {
        (T::Boolean, Literal::Boolean(v)) => hash_long(i64::from(*v)),
        (T::Int, Literal::Int(v)) | (T::Date, Literal::Date(v)) => hash_long(i64::from(*v)),
        (T::Long, Literal::Long(v))
        | (T::Timestamp, Literal::Timestamp(v))
        | (T::Timestamptz, Literal::Timestamptz(v)) => hash_long(*v),
        // Appendix B: nanosecond timestamps hash as their microseconds
        // (floored, as Java's BucketUtil does), so that bucket is the same
        // for a value stored at either precision.
        (T::TimestampNs, Literal::TimestampNs(v))
        | (T::TimestamptzNs, Literal::TimestamptzNs(v)) => hash_long(v.div_euclid(1000)),
        (T::Time, Literal::Time(v)) => hash_long(check_time(*v)?),
        (T::Float, Literal::Float(v)) => hash_double(f64::from(*v)),
        (T::Double, Literal::Double(v)) => hash_double(*v),
        (T::Decimal { .. }, Literal::Decimal(v)) => {
            hash_bytes(&decimal::to_min_bytes(check_decimal(*ty, *v)?))
        }
        (T::String, Literal::String(v)) => hash_bytes(v.as_bytes()),
        (T::Uuid, Literal::Uuid(v)) => hash_bytes(v),
        (T::Fixed(length), Literal::Fixed(v)) => {
            if u64::try_from(v.len()).ok() != Some(*length) {
                return Err(Error::InvalidValue(format!(
                    "a fixed[{length}] value must be exactly {length} bytes, got {}",
                    v.len()
                )));
            }
            hash_bytes(v)
        }
        (T::Binary, Literal::Binary(v)) => hash_bytes(v),
        _ => return Err(mismatch(ty, value)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(ty: &str, value: Literal) -> i32 {
        hash(&PrimitiveType::parse(ty).unwrap(), &value).unwrap()
    }

    #[test]
    fn appendix_b_examples() {
        assert_eq!(h("int", Literal::Int(34)), 2017239379);
        assert_eq!(h("long", Literal::Long(34)), 2017239379);
        assert_eq!(h("decimal(9,2)", Literal::Decimal(1420)), -500754589);
        assert_eq!(h("date", Literal::Date(17486)), -653330422);
        assert_eq!(h("time", Literal::Time(81_068_000_000)), -662762989);
        assert_eq!(
            h("timestamp", Literal::Timestamp(1_510_871_468_000_000)),
            -2047944441
        );
        // 2017-11-16T14:31:08-08:00 is 22:31:08 UTC.
        assert_eq!(
            h("timestamptz", Literal::Timestamptz(1_510_871_468_000_000)),
            -2047944441
        );
        assert_eq!(h("string", Literal::String("iceberg".into())), 1210000089);
        let uuid = [
            0xF7, 0x9C, 0x3E, 0x09, 0x67, 0x7C, 0x4B, 0xBD, 0xA4, 0x79, 0x3F, 0x34, 0x9C, 0xB7,
            0x85, 0xE7,
        ];
        assert_eq!(h("uuid", Literal::Uuid(uuid)), 1488055340);
        assert_eq!(h("fixed[4]", Literal::Fixed(vec![0, 1, 2, 3])), -188683207);
        assert_eq!(h("binary", Literal::Binary(vec![0, 1, 2, 3])), -188683207);
    }

    #[test]
    fn appendix_b_second_table() {
        assert_eq!(h("boolean", Literal::Boolean(true)), 1392991556);
        assert_eq!(h("float", Literal::Float(1.0)), -142385009);
        assert_eq!(h("float", Literal::Float(0.0)), 1669671676);
        assert_eq!(h("float", Literal::Float(-0.0)), 1669671676);
        assert_eq!(h("double", Literal::Double(1.0)), -142385009);
        assert_eq!(h("double", Literal::Double(0.0)), 1669671676);
        assert_eq!(h("double", Literal::Double(-0.0)), 1669671676);
    }

    #[test]
    fn all_nans_hash_alike() {
        let canonical = h("double", Literal::Double(f64::from_bits(CANONICAL_NAN)));
        assert_eq!(canonical, hash_long(CANONICAL_NAN as i64));
        for bits in [
            0x7FF0_0000_0000_0001u64,
            0xFFF8_0000_0000_0000,
            0x7FFF_FFFF_FFFF_FFFF,
        ] {
            assert_eq!(
                h("double", Literal::Double(f64::from_bits(bits))),
                canonical
            );
        }
        for bits in [0x7FC0_0000u32, 0xFFC0_0000, 0x7F80_0001, 0x7FFF_FFFF] {
            assert_eq!(h("float", Literal::Float(f32::from_bits(bits))), canonical);
        }
    }

    #[test]
    fn int_like_types_hash_as_long() {
        for v in [0i32, 1, -1, 34, i32::MIN, i32::MAX] {
            let expected = h("long", Literal::Long(i64::from(v)));
            assert_eq!(h("int", Literal::Int(v)), expected);
            assert_eq!(h("date", Literal::Date(v)), expected);
        }
        assert_eq!(
            h("boolean", Literal::Boolean(false)),
            h("long", Literal::Long(0))
        );
    }

    #[test]
    fn decimal_hash_uses_minimum_bytes() {
        // -128 is the single byte 0x80, -1 the single byte 0xFF.
        assert_eq!(
            h("decimal(9,0)", Literal::Decimal(-128)),
            hash_bytes(&[0x80])
        );
        assert_eq!(h("decimal(9,0)", Literal::Decimal(-1)), hash_bytes(&[0xFF]));
        assert_eq!(
            h("decimal(9,0)", Literal::Decimal(128)),
            hash_bytes(&[0x00, 0x80])
        );
        assert_ne!(
            h("decimal(9,0)", Literal::Decimal(-128)),
            hash_bytes(&[0xFF, 0x80])
        );
        // The scale is not part of the hash.
        assert_eq!(
            h("decimal(9,2)", Literal::Decimal(1420)),
            h("decimal(9,4)", Literal::Decimal(1420))
        );
    }

    #[test]
    fn refusals() {
        let t = PrimitiveType::parse("int").unwrap();
        assert!(matches!(
            hash(&t, &Literal::Long(1)),
            Err(Error::TypeMismatch(_))
        ));
        let t = PrimitiveType::parse("fixed[2]").unwrap();
        assert!(matches!(
            hash(&t, &Literal::Fixed(vec![1])),
            Err(Error::InvalidValue(_))
        ));
        let t = PrimitiveType::parse("decimal(2,0)").unwrap();
        assert!(matches!(
            hash(&t, &Literal::Decimal(100)),
            Err(Error::InvalidValue(_))
        ));
    }
}
