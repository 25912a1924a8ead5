//! ISO-8601 text of dates, times and timestamps (spec: Appendix D, JSON) on
//! the proleptic Gregorian calendar, as Java's `java.time` does.
//!
//! The text matches Java's `DateTimeUtil`, which formats with
//! `ISO_LOCAL_DATE` / `ISO_LOCAL_TIME` / `ISO_LOCAL_DATE_TIME`: seconds are
//! always written, the fraction only when non-zero and without trailing
//! zeros (`22:31:08`, `22:31:08.1`, `22:31:08.123456`), years beyond 9999 get
//! a `+` and years before 0 a `-` (`+10000-01-01`, `-0001-12-31`).

use crate::error::{Error, Result};

use super::MICROS_PER_DAY;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// `days_from_civil`). Valid for any year an `i64` day count can hold.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of a day count from 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn format_ymd(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    let year_text = if year > 9999 {
        format!("+{year}")
    } else if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    };
    format!("{year_text}-{month:02}-{day:02}")
}

/// `ISO_LOCAL_TIME` of a time of day in microseconds (must be within a day).
fn format_hms(micros: i64) -> String {
    let seconds = micros / MICROS_PER_SECOND;
    let fraction = micros % MICROS_PER_SECOND;
    let mut text = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    );
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
}

/// `2017-11-16` for a day count.
pub fn format_date(days: i32) -> String {
    format_ymd(i64::from(days))
}

/// `22:31:08.123456` for microseconds from midnight.
pub fn format_time(micros: i64) -> Result<String> {
    super::check_time(micros).map(format_hms)
}

/// `2017-11-16T22:31:08.123456` for microseconds from the epoch; with
/// `utc_offset`, `+00:00` is appended (spec: Appendix D, timestamptz).
pub fn format_timestamp(micros: i64, utc_offset: bool) -> String {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let time = micros.rem_euclid(MICROS_PER_DAY);
    let offset = if utc_offset { "+00:00" } else { "" };
    format!("{}T{}{offset}", format_ymd(days), format_hms(time))
}

/// `2017-11-16T22:31:08.123456789` for nanoseconds from the epoch (v3
/// `timestamp_ns`); with `utc_offset`, `+00:00` is appended.
pub fn format_timestamp_nanos(nanos: i64, utc_offset: bool) -> String {
    const NANOS_PER_DAY: i64 = MICROS_PER_DAY * 1000;
    let days = nanos.div_euclid(NANOS_PER_DAY);
    let time = nanos.rem_euclid(NANOS_PER_DAY);
    let offset = if utc_offset { "+00:00" } else { "" };
    let mut text = format!(
        "{}T{}",
        format_ymd(days),
        format_hms(time / 1000 / MICROS_PER_SECOND * MICROS_PER_SECOND)
    );
    let fraction = time % 1_000_000_000;
    if fraction != 0 {
        let digits = format!("{fraction:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push_str(offset);
    text
}

/// A cursor over ASCII text for the small ISO grammar below.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn bad(&self, what: &str) -> Error {
        Error::InvalidValue(format!("{:?} is not a valid ISO-8601 {what}", self.text))
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<()> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.bad(what))
        }
    }

    /// Between `min` and `max` ASCII digits, as a number.
    fn digits(&mut self, min: usize, max: usize, what: &str) -> Result<(i64, usize)> {
        let rest = &self.text.as_bytes()[self.at..];
        let count = rest
            .iter()
            .take(max)
            .take_while(|b| b.is_ascii_digit())
            .count();
        if count < min {
            return Err(self.bad(what));
        }
        let value = rest[..count]
            .iter()
            .fold(0i64, |acc, b| acc * 10 + i64::from(b - b'0'));
        self.at += count;
        Ok((value, count))
    }

    fn two_digits(&mut self, max: i64, what: &str) -> Result<i64> {
        let (value, _) = self.digits(2, 2, what)?;
        if value > max {
            return Err(self.bad(what));
        }
        Ok(value)
    }

    fn at_end(&self) -> bool {
        self.at == self.text.len()
    }

    /// `ISO_LOCAL_DATE`: `[+-]YYYY-MM-DD`; more than four year digits need a
    /// sign, as in Java.
    fn date(&mut self, what: &str) -> Result<i64> {
        let negative = self.eat(b'-');
        let signed = negative || self.eat(b'+');
        let (year, _) = if signed {
            self.digits(4, 10, what)?
        } else {
            self.digits(4, 4, what)?
        };
        let year = if negative { -year } else { year };
        self.expect(b'-', what)?;
        let month = self.two_digits(12, what)? as u32;
        self.expect(b'-', what)?;
        let day = self.two_digits(31, what)? as u32;
        if month == 0 || day == 0 || day > days_in_month(year, month) {
            return Err(self.bad(what));
        }
        Ok(days_from_civil(year, month, day))
    }

    /// `ISO_LOCAL_TIME`: `HH:MM[:SS[.fraction]]`, up to nine fraction
    /// digits, in nanoseconds from midnight.
    fn time_nanos(&mut self, what: &str) -> Result<i64> {
        let hour = self.two_digits(23, what)?;
        self.expect(b':', what)?;
        let minute = self.two_digits(59, what)?;
        let mut second = 0;
        let mut nanos = 0;
        if self.eat(b':') {
            second = self.two_digits(59, what)?;
            if self.eat(b'.') {
                let (fraction, count) = self.digits(1, 9, what)?;
                nanos = fraction * 10i64.pow(9 - count as u32);
            }
        }
        Ok(((hour * 60 + minute) * 60 + second) * MICROS_PER_SECOND * 1000 + nanos)
    }

    /// [`Self::time_nanos`] in microseconds. Iceberg stores microseconds, so
    /// digits beyond the sixth must be zero (Java would silently truncate
    /// them; refusing keeps the value exact).
    fn time(&mut self, what: &str) -> Result<i64> {
        let nanos = self.time_nanos(what)?;
        if nanos % 1000 != 0 {
            return Err(Error::InvalidValue(format!(
                "{:?} has more than microsecond precision",
                self.text
            )));
        }
        Ok(nanos / 1000)
    }

    /// A zone offset: `Z` or `[+-]HH:MM[:SS]`; returns it in seconds.
    fn offset(&mut self, what: &str) -> Result<i64> {
        if self.eat(b'Z') || self.eat(b'z') {
            return Ok(0);
        }
        let negative = if self.eat(b'-') {
            true
        } else {
            self.expect(b'+', what)?;
            false
        };
        let hours = self.two_digits(18, what)?;
        self.expect(b':', what)?;
        let minutes = self.two_digits(59, what)?;
        let seconds = if self.eat(b':') {
            self.two_digits(59, what)?
        } else {
            0
        };
        let total = (hours * 60 + minutes) * 60 + seconds;
        Ok(if negative { -total } else { total })
    }
}

/// Parses `2017-11-16` into days from 1970-01-01.
pub fn parse_date(text: &str) -> Result<i32> {
    let mut cursor = Cursor { text, at: 0 };
    let days = cursor.date("date")?;
    if !cursor.at_end() {
        return Err(cursor.bad("date"));
    }
    i32::try_from(days)
        .map_err(|_| Error::InvalidValue(format!("date {text:?} is out of range for a date")))
}

/// Parses `22:31:08[.123456]` into microseconds from midnight.
pub fn parse_time(text: &str) -> Result<i64> {
    let mut cursor = Cursor { text, at: 0 };
    let micros = cursor.time("time")?;
    if !cursor.at_end() {
        return Err(cursor.bad("time"));
    }
    Ok(micros)
}

/// Parses a timestamp into microseconds from the epoch. Without `with_zone`
/// the text must not carry an offset (spec: Appendix D, timestamp); with it,
/// an offset is required and must be zero (`+00:00`; `Z` and `-00:00` are
/// accepted as Java's parser does, and anything else is refused as in
/// Java's `SingleValueParser`, rather than converted).
pub fn parse_timestamp(text: &str, with_zone: bool) -> Result<i64> {
    parse_timestamp_in(text, with_zone, false)
}

/// [`parse_timestamp`] for v3 `timestamp_ns` / `timestamptz_ns`: nanoseconds
/// from the epoch, up to nine fraction digits.
pub fn parse_timestamp_nanos(text: &str, with_zone: bool) -> Result<i64> {
    parse_timestamp_in(text, with_zone, true)
}

fn parse_timestamp_in(text: &str, with_zone: bool, nanos: bool) -> Result<i64> {
    let what = match (with_zone, nanos) {
        (false, false) => "timestamp",
        (true, false) => "timestamptz",
        (false, true) => "timestamp_ns",
        (true, true) => "timestamptz_ns",
    };
    let mut cursor = Cursor { text, at: 0 };
    let days = cursor.date(what)?;
    if !(cursor.eat(b'T') || cursor.eat(b't')) {
        return Err(cursor.bad(what));
    }
    let time = if nanos {
        cursor.time_nanos(what)?
    } else {
        cursor.time(what)?
    };
    if with_zone {
        if cursor.at_end() {
            return Err(Error::InvalidValue(format!(
                "{what} {text:?} has no zone offset; it must end in +00:00"
            )));
        }
        if cursor.offset(what)? != 0 {
            return Err(Error::InvalidValue(format!(
                "{what} {text:?} must be in UTC: its offset must be +00:00"
            )));
        }
    } else if !cursor.at_end() && matches!(cursor.peek(), Some(b'+' | b'-' | b'Z' | b'z')) {
        return Err(Error::InvalidValue(
            format!("{what} {text:?} must not include a zone offset (use {what}tz)")
                .replace("timestamp_nstz", "timestamptz_ns"),
        ));
    }
    if !cursor.at_end() {
        return Err(cursor.bad(what));
    }
    // i128: the earliest representable day times a day overflows i64 even
    // though adding the time of day brings it back into range.
    let per_day = i128::from(MICROS_PER_DAY) * if nanos { 1000 } else { 1 };
    let value = i128::from(days) * per_day + i128::from(time);
    i64::try_from(value)
        .map_err(|_| Error::InvalidValue(format!("{what} {text:?} is out of range")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2017, 11, 16), 17486);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
        assert_eq!(days_from_civil(2000, 3, 1), 11017);
        assert_eq!(days_from_civil(0, 1, 1), -719_528);
        for days in (-1_000_000i64..1_000_000)
            .step_by(997)
            .chain([i64::from(i32::MIN), i64::from(i32::MAX)])
        {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn dates() {
        assert_eq!(format_date(17486), "2017-11-16");
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(-1), "1969-12-31");
        assert_eq!(format_date(-719_528), "0000-01-01");
        assert_eq!(format_date(-719_529), "-0001-12-31");
        assert_eq!(format_date(2_932_897), "+10000-01-01");
        assert_eq!(format_date(2_932_896), "9999-12-31");
        for days in [
            0,
            17486,
            -1,
            -719_529,
            2_932_897,
            i32::MIN,
            i32::MAX,
            11016,
            59,
        ] {
            assert_eq!(parse_date(&format_date(days)).unwrap(), days, "{days}");
        }
        assert_eq!(parse_date("2000-02-29").unwrap(), 11016);
        for bad in [
            "2017-11-31",
            "1900-02-29",
            "2017-13-01",
            "2017-00-10",
            "2017-1-16",
            "17-11-16",
            "2017-11-16T00:00",
            "20170-01-01",
            "+2017-11-1",
            "",
            "2017/11/16",
            "+99999999999-01-01",
        ] {
            assert!(
                matches!(parse_date(bad), Err(Error::InvalidValue(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn times() {
        assert_eq!(format_time(81_068_000_000).unwrap(), "22:31:08");
        assert_eq!(format_time(81_068_123_456).unwrap(), "22:31:08.123456");
        assert_eq!(format_time(81_068_100_000).unwrap(), "22:31:08.1");
        assert_eq!(format_time(81_068_000_120).unwrap(), "22:31:08.00012");
        assert_eq!(format_time(0).unwrap(), "00:00:00");
        assert_eq!(format_time(MICROS_PER_DAY - 1).unwrap(), "23:59:59.999999");
        assert!(format_time(MICROS_PER_DAY).is_err());
        assert!(format_time(-1).is_err());
        assert_eq!(parse_time("22:31:08.123456").unwrap(), 81_068_123_456);
        assert_eq!(parse_time("22:31:08").unwrap(), 81_068_000_000);
        assert_eq!(parse_time("22:31").unwrap(), 81_060_000_000);
        assert_eq!(parse_time("22:31:08.1").unwrap(), 81_068_100_000);
        assert_eq!(
            parse_time("23:59:59.999999000").unwrap(),
            MICROS_PER_DAY - 1
        );
        for bad in [
            "24:00:00",
            "23:60:00",
            "23:59:60",
            "22:31:08.1234567",
            "22:31:08.",
            "2:31:08",
            "22:31:08Z",
            "22:31:08+00:00",
            "",
            "22",
        ] {
            assert!(
                matches!(parse_time(bad), Err(Error::InvalidValue(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn timestamps() {
        let micros = 1_510_871_468_123_456;
        assert_eq!(
            format_timestamp(micros, false),
            "2017-11-16T22:31:08.123456"
        );
        assert_eq!(
            format_timestamp(micros, true),
            "2017-11-16T22:31:08.123456+00:00"
        );
        assert_eq!(format_timestamp(-1, false), "1969-12-31T23:59:59.999999");
        assert_eq!(format_timestamp(0, true), "1970-01-01T00:00:00+00:00");
        assert_eq!(
            parse_timestamp("2017-11-16T22:31:08.123456", false).unwrap(),
            micros
        );
        assert_eq!(
            parse_timestamp("2017-11-16T22:31:08.123456+00:00", true).unwrap(),
            micros
        );
        assert_eq!(
            parse_timestamp("2017-11-16T22:31:08.123456Z", true).unwrap(),
            micros
        );
        assert_eq!(
            parse_timestamp("2017-11-16T22:31:08.123456-00:00", true).unwrap(),
            micros
        );
        assert_eq!(
            parse_timestamp("1969-12-31T23:59:59.999999", false).unwrap(),
            -1
        );
        for m in [i64::MIN, i64::MAX, -1, 0, micros, -62_135_596_800_000_000] {
            assert_eq!(
                parse_timestamp(&format_timestamp(m, false), false).unwrap(),
                m
            );
            assert_eq!(
                parse_timestamp(&format_timestamp(m, true), true).unwrap(),
                m
            );
        }
        for (bad, zone) in [
            ("2017-11-16T22:31:08+00:00", false),
            ("2017-11-16T22:31:08Z", false),
            ("2017-11-16T22:31:08", true),
            ("2017-11-16T14:31:08-08:00", true),
            ("2017-11-16T22:31:08+01:00", true),
            ("2017-11-16 22:31:08", false),
            ("2017-11-16", false),
            ("+300000-01-01T00:00:00", false),
            ("2017-11-16T22:31:08+00:00[UTC]", true),
        ] {
            assert!(
                matches!(parse_timestamp(bad, zone), Err(Error::InvalidValue(_))),
                "{bad:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn any_timestamp_round_trips(micros in proptest::num::i64::ANY, zone: bool) {
            let text = format_timestamp(micros, zone);
            proptest::prop_assert_eq!(parse_timestamp(&text, zone).unwrap(), micros);
        }

        #[test]
        fn any_date_round_trips(days in proptest::num::i32::ANY) {
            proptest::prop_assert_eq!(parse_date(&format_date(days)).unwrap(), days);
        }

        #[test]
        fn any_time_round_trips(micros in 0..MICROS_PER_DAY) {
            proptest::prop_assert_eq!(parse_time(&format_time(micros).unwrap()).unwrap(), micros);
        }
    }
}
