//! Murmur3 x86 32-bit, seed 0: the hash behind `bucket[N]` (spec: "Bucket
//! Transform Details", Appendix B).
//!
//! [`hash_bytes`] hashes any byte slice; the other functions are fixed-width
//! fast paths that hash exactly the bytes Appendix B prescribes for a type
//! without materialising them. Results are `i32`, as Java's `Hashing.murmur3_32`
//! reports them and as the spec's test values are written.

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1(k1: u32) -> u32 {
    k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn mix_h1(h1: u32, k1: u32) -> u32 {
    (h1 ^ mix_k1(k1))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn finish(h1: u32, len: u32) -> i32 {
    let mut h = h1 ^ len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    h as i32
}

/// Murmur3 x86_32 (seed 0) of `data`.
#[inline]
pub fn hash_bytes(data: &[u8]) -> i32 {
    let mut h1 = 0u32;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        h1 = mix_h1(h1, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k1 = 0u32;
        for (i, &byte) in tail.iter().enumerate() {
            k1 |= u32::from(byte) << (8 * i);
        }
        h1 ^= mix_k1(k1);
    }
    // The length is mixed in modulo 2^32, as in the reference implementation.
    finish(h1, data.len() as u32)
}

/// `hashLong`: the 8 little-endian bytes of `value` (Appendix B: long, time,
/// timestamp, timestamptz; int and date are widened to long first).
#[inline(always)]
pub fn hash_long(value: i64) -> i32 {
    let bits = value as u64;
    let h1 = mix_h1(0, bits as u32);
    let h1 = mix_h1(h1, (bits >> 32) as u32);
    finish(h1, 8)
}

/// `hashInt`: an int hashes exactly like the same value as a long
/// (Appendix B note 1), so that int -> long promotion keeps every bucket.
#[inline(always)]
pub fn hash_int(value: i32) -> i32 {
    hash_long(i64::from(value))
}

/// The minimum-length two's-complement big-endian bytes of a decimal's
/// unscaled value (Appendix B note 2), as Java's `BigInteger.toByteArray`:
/// returns a 16-byte buffer and the index where the value's bytes start.
/// 0 is `00`, -1 is `FF`, -128 is `80`, 128 is `00 80`.
#[inline(always)]
pub fn decimal_min_bytes(unscaled: i128) -> ([u8; 16], usize) {
    // Bits needed besides the sign bit: for a negative value count the
    // leading ones instead of the leading zeros.
    let magnitude_bits = 128
        - if unscaled < 0 {
            (!unscaled).leading_zeros()
        } else {
            unscaled.leading_zeros()
        };
    let len = magnitude_bits as usize / 8 + 1;
    (unscaled.to_be_bytes(), 16 - len)
}

/// Appendix B `decimal(P,S)`: the minimum-length big-endian two's-complement
/// bytes of the unscaled value; the scale does not take part.
#[inline]
pub fn hash_decimal(unscaled: i128) -> i32 {
    let (bytes, start) = decimal_min_bytes(unscaled);
    hash_bytes(&bytes[start..])
}

/// Appendix B second table, `double`: `hashLong(doubleToLongBits(v))` with
/// every NaN canonicalised to `0x7ff8000000000000` and -0.0 to 0.0 (note 4).
#[inline]
pub fn hash_double(value: f64) -> i32 {
    let bits = if value.is_nan() {
        0x7ff8_0000_0000_0000u64
    } else if value == 0.0 {
        0
    } else {
        value.to_bits()
    };
    hash_long(bits as i64)
}

/// Appendix B second table, `float`: hashed as the float widened to double so
/// that float -> double promotion keeps the hash.
#[inline]
pub fn hash_float(value: f32) -> i32 {
    hash_double(f64::from(value))
}

/// Appendix B second table, `boolean`: `hashInt(0)` or `hashInt(1)`.
#[inline]
pub fn hash_bool(value: bool) -> i32 {
    hash_int(i32::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Cursor;

    /// The independent reference: the `murmur3` crate.
    fn reference(data: &[u8]) -> i32 {
        murmur3::murmur3_32(&mut Cursor::new(data), 0).expect("reading from memory") as i32
    }

    /// Minimum-length two's-complement bytes, computed differently from
    /// `decimal_min_bytes`: strip redundant sign bytes from the 16-byte form.
    fn min_bytes_by_stripping(value: i128) -> Vec<u8> {
        let mut bytes = value.to_be_bytes().to_vec();
        while bytes.len() > 1 {
            let redundant = (bytes[0] == 0x00 && bytes[1] & 0x80 == 0)
                || (bytes[0] == 0xff && bytes[1] & 0x80 != 0);
            if !redundant {
                break;
            }
            bytes.remove(0);
        }
        bytes
    }

    #[test]
    fn appendix_b_test_values() {
        assert_eq!(hash_int(34), 2017239379);
        assert_eq!(hash_long(34), 2017239379);
        // 14.20 as decimal(4,2): unscaled 1420.
        assert_eq!(hash_decimal(1420), -500754589);
        // 2017-11-16 is day 17486.
        assert_eq!(hash_int(17486), -653330422);
        // 22:31:08 in microseconds from midnight.
        assert_eq!(hash_long((22 * 3600 + 31 * 60 + 8) * 1_000_000), -662762989);
        // 2017-11-16T22:31:08 (and 14:31:08-08:00) in microseconds from the epoch.
        assert_eq!(hash_long(1_510_871_468_000_000), -2047944441);
        assert_eq!(hash_bytes(b"iceberg"), 1210000089);
        let uuid = [
            0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7,
            0x85, 0xe7,
        ];
        assert_eq!(hash_bytes(&uuid), 1488055340);
        assert_eq!(hash_bytes(&[0, 1, 2, 3]), -188683207);
        assert_eq!(hash_bool(true), 1392991556);
        assert_eq!(hash_float(1.0), -142385009);
        assert_eq!(hash_double(1.0), -142385009);
        assert_eq!(hash_float(0.0), 1669671676);
        assert_eq!(hash_float(-0.0), 1669671676);
        assert_eq!(hash_double(0.0), 1669671676);
        assert_eq!(hash_double(-0.0), 1669671676);
    }

    #[test]
    fn nan_is_canonical() {
        let canonical = hash_long(0x7ff8_0000_0000_0000);
        assert_eq!(hash_double(f64::NAN), canonical);
        assert_eq!(
            hash_double(f64::from_bits(0x7ff0_0000_0000_0001)),
            canonical
        );
        assert_eq!(
            hash_double(f64::from_bits(0xfff8_0000_0000_0000)),
            canonical
        );
        assert_eq!(hash_float(f32::from_bits(0x7fc0_0001)), canonical);
        assert_eq!(hash_float(-f32::NAN), canonical);
    }

    #[test]
    fn decimal_bytes_are_minimal() {
        let cases: [(i128, &[u8]); 9] = [
            (0, &[0x00]),
            (-1, &[0xff]),
            (1, &[0x01]),
            (127, &[0x7f]),
            (-128, &[0x80]),
            (128, &[0x00, 0x80]),
            (-129, &[0xff, 0x7f]),
            (1420, &[0x05, 0x8c]),
            (
                i128::MIN,
                &[0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ),
        ];
        for (value, expected) in cases {
            let (bytes, start) = decimal_min_bytes(value);
            assert_eq!(&bytes[start..], expected, "{value}");
            assert_eq!(hash_decimal(value), reference(expected), "{value}");
        }
        // The classic bug: hashing -128 as two bytes or as 16 sign-extended bytes.
        assert_ne!(hash_decimal(-128), reference(&[0xff, 0x80]));
        assert_ne!(hash_decimal(-128), reference(&(-128i128).to_be_bytes()));
    }

    #[test]
    fn every_tail_length() {
        let data: Vec<u8> = (0u8..=40).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..data.len() {
            assert_eq!(
                hash_bytes(&data[..len]),
                reference(&data[..len]),
                "length {len}"
            );
        }
    }

    proptest! {
        #[test]
        fn bytes_match_the_murmur3_crate(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            prop_assert_eq!(hash_bytes(&data), reference(&data));
        }

        #[test]
        fn long_and_int_match(v in any::<i64>(), i in any::<i32>()) {
            prop_assert_eq!(hash_long(v), reference(&v.to_le_bytes()));
            prop_assert_eq!(hash_int(i), reference(&i64::from(i).to_le_bytes()));
            prop_assert_eq!(hash_int(i), hash_long(i64::from(i)));
        }

        #[test]
        fn decimals_match(v in any::<i128>(), small in any::<i64>(), tiny in any::<i16>()) {
            for value in [v, i128::from(small), i128::from(tiny)] {
                prop_assert_eq!(hash_decimal(value), reference(&min_bytes_by_stripping(value)));
            }
        }

        #[test]
        fn floats_match(d in any::<f64>(), f in any::<f32>()) {
            let canonical = |x: f64| if x.is_nan() { 0x7ff8_0000_0000_0000u64 } else if x == 0.0 { 0 } else { x.to_bits() };
            prop_assert_eq!(hash_double(d), reference(&canonical(d).to_le_bytes()));
            let widened = f64::from(f);
            prop_assert_eq!(hash_float(f), reference(&canonical(widened).to_le_bytes()));
        }
    }
}
