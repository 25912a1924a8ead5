//! Decimal helpers: minimum-length two's-complement bytes (spec: Appendix B
//! note 2 and Appendix D, binary) and the decimal text of Appendix D (JSON).
//!
//! Unscaled values are `i128`: 38 decimal digits, the spec's largest
//! precision, need 127 bits, so every valid decimal fits.

use crate::error::{Error, Result};

/// The largest unscaled magnitude for each precision: `10^p - 1`.
fn max_unscaled(precision: u32) -> Option<i128> {
    10i128.checked_pow(precision).map(|p| p - 1)
}

/// Checks that `unscaled` has at most `precision` digits.
pub fn check_precision(unscaled: i128, precision: u32) -> Result<()> {
    match max_unscaled(precision) {
        Some(max) if unscaled.unsigned_abs() <= max.unsigned_abs() => Ok(()),
        _ => Err(Error::InvalidValue(format!(
            "unscaled decimal {unscaled} has more than {precision} digits"
        ))),
    }
}

/// The minimum number of big-endian two's-complement bytes that hold
/// `unscaled` (Java's `BigInteger.toByteArray()`): a leading byte is dropped
/// while it only repeats the sign of the next one. `0` is one `0x00` byte,
/// `-1` is `0xFF`, `-128` is `0x80` and `128` is `0x00 0x80`.
pub fn to_min_bytes(unscaled: i128) -> Vec<u8> {
    let bytes = unscaled.to_be_bytes();
    let mut start = 0;
    while start < bytes.len() - 1 {
        let (lead, next) = (bytes[start], bytes[start + 1]);
        let redundant = (lead == 0x00 && next & 0x80 == 0) || (lead == 0xFF && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

/// Reads a big-endian two's-complement integer of 1 to 16 bytes, extending
/// its sign. Any length is accepted, not only the minimum, because writers
/// that pad to a fixed width (spec: Appendix A, Parquet fixed_len_byte_array)
/// produce valid values too.
pub fn from_be_bytes(bytes: &[u8]) -> Result<i128> {
    if bytes.is_empty() || bytes.len() > 16 {
        return Err(Error::InvalidValue(format!(
            "a decimal needs 1 to 16 bytes, got {}",
            bytes.len()
        )));
    }
    let fill = if bytes[0] & 0x80 != 0 { 0xFF } else { 0x00 };
    let mut full = [fill; 16];
    full[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(full))
}

/// The decimal text of Appendix D: for a scale of 0 or more, the plain
/// number with exactly `scale` fraction digits (`"14.20"`, `"-0.05"`, `"7"`);
/// for a negative scale, scientific notation whose exponent is the negated
/// scale (`"2E+20"` for unscaled 2 and scale -20). The spec fixes the
/// exponent, so this differs from Java's `BigDecimal.toString()`, which
/// normalises to one digit before the point (`"1.23E+4"` for 123E+2);
/// Iceberg's type grammar cannot express a negative scale, so neither ever
/// writes one for a valid type.
pub fn format(unscaled: i128, scale: i32) -> String {
    if scale < 0 {
        return format!("{unscaled}E+{}", -i64::from(scale));
    }
    let digits = unscaled.unsigned_abs().to_string();
    let sign = if unscaled < 0 { "-" } else { "" };
    let scale = scale as usize;
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (int_part, frac_part) = padded.split_at(padded.len() - scale);
    format!("{sign}{int_part}.{frac_part}")
}

/// Parses decimal text as Java's `new BigDecimal(text)` does: an optional
/// sign, digits with an optional point, and an optional exponent. Returns the
/// unscaled value and the scale the text expresses (`"14.20"` -> (1420, 2),
/// `"2E+20"` -> (2, -20), `"1.5e1"` -> (15, 0)).
pub fn parse(text: &str) -> Result<(i128, i32)> {
    let bad = |why: &str| Error::InvalidValue(format!("{text:?} is not a decimal number: {why}"));
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => {
            let exp_text = &text[at + 1..];
            let digits = exp_text.strip_prefix(['+', '-']).unwrap_or(exp_text);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad("malformed exponent"));
            }
            let exp: i64 = exp_text.parse().map_err(|_| bad("exponent out of range"))?;
            (&text[..at], exp)
        }
        None => (text, 0),
    };
    let (negative, unsigned) = match mantissa.as_bytes().first() {
        Some(b'-') => (true, &mantissa[1..]),
        Some(b'+') => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(bad("no digits"));
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return Err(bad("unexpected character"));
    }
    let mut unscaled: i128 = 0;
    for b in int_part.bytes().chain(frac_part.bytes()) {
        unscaled = unscaled
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(b - b'0')))
            .ok_or_else(|| bad("more than 38 digits"))?;
    }
    if negative {
        unscaled = -unscaled;
    }
    let scale = i64::try_from(frac_part.len())
        .ok()
        .and_then(|f| f.checked_sub(exponent))
        .and_then(|s| i32::try_from(s).ok())
        .ok_or_else(|| bad("scale out of range"))?;
    Ok((unscaled, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimum_bytes_match_java_biginteger() {
        // BigInteger.valueOf(v).toByteArray() for each v.
        let cases: &[(i128, &[u8])] = &[
            (0, &[0x00]),
            (1, &[0x01]),
            (-1, &[0xFF]),
            (127, &[0x7F]),
            (128, &[0x00, 0x80]),
            (-128, &[0x80]),
            (-129, &[0xFF, 0x7F]),
            (255, &[0x00, 0xFF]),
            (256, &[0x01, 0x00]),
            (1420, &[0x05, 0x8C]),
            (-32768, &[0x80, 0x00]),
            (32768, &[0x00, 0x80, 0x00]),
        ];
        for (value, bytes) in cases {
            assert_eq!(to_min_bytes(*value), bytes.to_vec(), "{value}");
            assert_eq!(from_be_bytes(bytes).unwrap(), *value);
        }
        let max = 10i128.pow(38) - 1;
        assert_eq!(to_min_bytes(max).len(), 16);
        assert_eq!(from_be_bytes(&to_min_bytes(max)).unwrap(), max);
        assert_eq!(from_be_bytes(&to_min_bytes(-max)).unwrap(), -max);
        assert_eq!(to_min_bytes(i128::MIN), i128::MIN.to_be_bytes().to_vec());
    }

    #[test]
    fn padded_bytes_sign_extend() {
        assert_eq!(from_be_bytes(&[0xFF, 0xFF, 0xFF, 0x80]).unwrap(), -128);
        assert_eq!(from_be_bytes(&[0x00, 0x00, 0x05, 0x8C]).unwrap(), 1420);
        assert_eq!(from_be_bytes(&[0xFF; 16]).unwrap(), -1);
        assert!(matches!(from_be_bytes(&[]), Err(Error::InvalidValue(_))));
        assert!(matches!(
            from_be_bytes(&[0; 17]),
            Err(Error::InvalidValue(_))
        ));
    }

    #[test]
    fn precision() {
        assert!(check_precision(999_999_999, 9).is_ok());
        assert!(check_precision(-999_999_999, 9).is_ok());
        assert!(check_precision(1_000_000_000, 9).is_err());
        assert!(check_precision(-1_000_000_000, 9).is_err());
        assert!(check_precision(10i128.pow(38) - 1, 38).is_ok());
        assert!(check_precision(10i128.pow(38), 38).is_err());
        assert!(check_precision(i128::MIN, 38).is_err());
    }

    #[test]
    fn text_forms() {
        assert_eq!(format(1420, 2), "14.20");
        assert_eq!(format(-1420, 2), "-14.20");
        assert_eq!(format(5, 2), "0.05");
        assert_eq!(format(-5, 3), "-0.005");
        assert_eq!(format(0, 2), "0.00");
        assert_eq!(format(7, 0), "7");
        assert_eq!(format(-7, 0), "-7");
        assert_eq!(format(2, -20), "2E+20");
        assert_eq!(format(-123, -2), "-123E+2");
        assert_eq!(
            format(i128::MIN, 2),
            "-1701411834604692317316873037158841057.28"
        );
    }

    #[test]
    fn parse_like_bigdecimal() {
        assert_eq!(parse("14.20").unwrap(), (1420, 2));
        assert_eq!(parse("-14.20").unwrap(), (-1420, 2));
        assert_eq!(parse("+0.05").unwrap(), (5, 2));
        assert_eq!(parse("2E+20").unwrap(), (2, -20));
        assert_eq!(parse("2e20").unwrap(), (2, -20));
        assert_eq!(parse("1.5E1").unwrap(), (15, 0));
        assert_eq!(parse("1.420E+1").unwrap(), (1420, 2));
        assert_eq!(parse("5.").unwrap(), (5, 0));
        assert_eq!(parse(".5").unwrap(), (5, 1));
        for bad in [
            "", "-", ".", "1.2.3", "abc", "1e", "1e+", "1,5", " 1", "1_000", "--1", "0x10",
        ] {
            assert!(matches!(parse(bad), Err(Error::InvalidValue(_))), "{bad:?}");
        }
        assert!(parse(&"9".repeat(40)).is_err());
    }

    proptest::proptest! {
        #[test]
        fn bytes_and_text_round_trip(unscaled in -i128::MAX..=i128::MAX, scale in -40i32..40) {
            let bytes = to_min_bytes(unscaled);
            proptest::prop_assert_eq!(from_be_bytes(&bytes).unwrap(), unscaled);
            if bytes.len() > 1 {
                // No redundant sign byte.
                let redundant = (bytes[0] == 0x00 && bytes[1] < 0x80) || (bytes[0] == 0xFF && bytes[1] >= 0x80);
                proptest::prop_assert!(!redundant);
            }
            proptest::prop_assert_eq!(parse(&format(unscaled, scale)).unwrap(), (unscaled, scale));
        }
    }
}
