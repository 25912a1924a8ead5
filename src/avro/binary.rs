//! Avro's binary encoding of primitives: zig-zag varints, little-endian
//! floats, length-prefixed bytes. Every read is bounds-checked and reports
//! truncation as an error, never a panic.

use crate::error::{Error, Result};

/// A read position in a byte slice.
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

#[cold]
fn truncated() -> Error {
    Error::InvalidData("truncated Avro data".to_owned())
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, pos: 0 }
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// A zig-zag varint of at most 10 bytes.
    #[inline(always)]
    pub fn read_long(&mut self) -> Result<i64> {
        let rest = self.data.get(self.pos..).unwrap_or(&[]);
        // Fast path: one byte, the common case for counts, ids and flags.
        if let Some(&b) = rest.first() {
            if b & 0x80 == 0 {
                self.pos += 1;
                let v = u64::from(b);
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        // Up to eight bytes at once: find the last byte by its clear high bit
        // and gather the 7-bit groups with three shift-and-mask steps.
        if let Some(word) = rest.get(..8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let stops = !word & 0x8080_8080_8080_8080;
            if stops != 0 {
                let len = (stops.trailing_zeros() as usize + 1) / 8;
                let kept = if len == 8 {
                    u64::MAX
                } else {
                    (1u64 << (8 * len)) - 1
                };
                let x = word & kept & 0x7f7f_7f7f_7f7f_7f7f;
                let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
                let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
                let value = (x & 0x0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
                self.pos += len;
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
        }
        let mut value: u64 = 0;
        let mut shift = 0u32;
        for (i, &b) in rest.iter().enumerate() {
            if shift >= 64 {
                return Err(Error::InvalidData(
                    "Avro varint longer than 10 bytes".to_owned(),
                ));
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                self.pos += i + 1;
                return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
            }
            shift += 7;
        }
        Err(truncated())
    }

    #[inline(always)]
    pub fn read_int(&mut self) -> Result<i32> {
        let v = self.read_long()?;
        i32::try_from(v).map_err(|_| Error::InvalidData(format!("Avro int out of range: {v}")))
    }

    #[inline(always)]
    pub fn read_fixed(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or_else(truncated)?;
        let out = self.data.get(self.pos..end).ok_or_else(truncated)?;
        self.pos = end;
        Ok(out)
    }

    #[inline(always)]
    pub fn read_bytes(&mut self) -> Result<&'a [u8]> {
        let len = self.read_long()?;
        let len = usize::try_from(len)
            .map_err(|_| Error::InvalidData(format!("negative Avro length {len}")))?;
        self.read_fixed(len)
    }

    #[inline(always)]
    pub fn read_bool(&mut self) -> Result<bool> {
        match self.read_fixed(1)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(Error::InvalidData(format!("invalid Avro boolean byte {b}"))),
        }
    }

    #[inline(always)]
    pub fn read_f32(&mut self) -> Result<f32> {
        let b = self.read_fixed(4)?;
        Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline(always)]
    pub fn read_f64(&mut self) -> Result<f64> {
        let b = self.read_fixed(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_le_bytes(a))
    }

    /// Skips a varint without decoding it.
    #[inline(always)]
    pub fn skip_long(&mut self) -> Result<()> {
        match self.data.get(self.pos) {
            Some(&b) if b & 0x80 == 0 => {
                self.pos += 1;
                Ok(())
            }
            _ => self.skip_longs(1),
        }
    }

    /// Skips `n` varints: a varint ends at each byte whose high bit is
    /// clear, so whole 8-byte words are counted at once.
    #[inline]
    pub fn skip_longs(&mut self, mut n: usize) -> Result<()> {
        while n > 0 {
            let rest = self.data.get(self.pos..).unwrap_or(&[]);
            if rest.len() < 8 {
                self.read_long()?;
                n -= 1;
                continue;
            }
            let mut word = [0u8; 8];
            word.copy_from_slice(&rest[..8]);
            let stops = !u64::from_le_bytes(word) & 0x8080_8080_8080_8080;
            let count = stops.count_ones() as usize;
            if count == 0 {
                // Inside a varint longer than 8 bytes (at most 10 are valid).
                self.pos += 8;
            } else if count <= n {
                self.pos += (63 - stops.leading_zeros() as usize) / 8 + 1;
                n -= count;
            } else {
                let mut s = stops;
                for _ in 1..n {
                    s &= s - 1;
                }
                self.pos += s.trailing_zeros() as usize / 8 + 1;
                n = 0;
            }
        }
        Ok(())
    }

    #[inline(always)]
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.read_fixed(n).map(|_| ())
    }

    /// The item count of the next array or map block; a negative count is
    /// followed by the block's size in bytes, which is returned too.
    #[inline(always)]
    pub fn read_block_count(&mut self) -> Result<(usize, Option<usize>)> {
        let count = self.read_long()?;
        if count >= 0 {
            let count = usize::try_from(count).map_err(|_| truncated())?;
            return Ok((count, None));
        }
        let size = self.read_long()?;
        let size = usize::try_from(size)
            .map_err(|_| Error::InvalidData(format!("negative Avro block size {size}")))?;
        let count = count
            .checked_neg()
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| Error::InvalidData("invalid Avro block count".to_owned()))?;
        Ok((count, Some(size)))
    }
}

pub fn write_long(out: &mut Vec<u8>, value: i64) {
    let mut v = ((value << 1) ^ (value >> 63)) as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub fn write_bytes(out: &mut Vec<u8>, value: &[u8]) {
    write_long(out, value.len() as i64);
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            1 << 40,
            i64::MAX,
            i64::MIN,
            i32::MIN as i64,
        ] {
            let mut out = Vec::new();
            write_long(&mut out, v);
            let mut c = Cursor::new(&out);
            assert_eq!(c.read_long().unwrap(), v);
            assert!(c.is_empty());
        }
    }

    #[test]
    fn varints_of_every_length_decode_with_bytes_after_them() {
        // Followed by other bytes, varints of up to eight bytes take the
        // whole-word path; longer ones and those at the end the byte loop.
        for shift in 0..64 {
            for base in [1i64 << shift, (1i64 << shift).wrapping_sub(1)] {
                for v in [base, base.wrapping_neg(), !base] {
                    let mut out = Vec::new();
                    write_long(&mut out, v);
                    let len = out.len();
                    for tail in [&[][..], &[0x00], &[0xff; 12]] {
                        let mut data = out.clone();
                        data.extend_from_slice(tail);
                        let mut c = Cursor::new(&data);
                        assert_eq!(c.read_long().unwrap(), v, "{v} with {tail:?}");
                        assert_eq!(c.position(), len, "{v} with {tail:?}");
                        let mut s = Cursor::new(&data);
                        s.skip_long().unwrap();
                        assert_eq!(s.position(), len, "{v} with {tail:?}");
                    }
                }
            }
        }
        // A non-minimal encoding (zero in two bytes) decodes like the loop does.
        let mut c = Cursor::new(&[0x80, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(c.read_long().unwrap(), 0);
        assert_eq!(c.position(), 2);
    }

    #[test]
    fn skipping_many_varints_lands_where_decoding_does() {
        let values: Vec<i64> = (0..200).map(|i| (i * 7919) << (i % 50)).collect();
        let mut out = Vec::new();
        for v in &values {
            write_long(&mut out, *v);
        }
        for n in 0..values.len() {
            let mut a = Cursor::new(&out);
            let mut b = Cursor::new(&out);
            a.skip_longs(n).unwrap();
            for _ in 0..n {
                b.read_long().unwrap();
            }
            assert_eq!(a.position(), b.position(), "{n}");
        }
        assert!(Cursor::new(&out).skip_longs(values.len() + 1).is_err());
    }

    #[test]
    fn truncation_and_overlong_varints_are_errors() {
        assert!(Cursor::new(&[0x80]).read_long().is_err());
        assert!(Cursor::new(&[0xff; 11]).read_long().is_err());
        assert!(Cursor::new(&[0x02]).read_bytes().is_err());
        assert!(Cursor::new(&[0x01]).read_bytes().is_err());
        assert!(Cursor::new(&[0x02]).read_bool().is_err());
        let mut out = Vec::new();
        write_long(&mut out, i64::from(i32::MAX) + 1);
        assert!(Cursor::new(&out).read_int().is_err());
    }
}
