//! Binary wire encodings, read side: base-128 varints (plain and zig-zag), little-endian
//! fixed-width values, length-prefixed bytes, and Avro's booleans and array/map blocks.
//! Avro and Protobuf both read through [`Cursor`]. Every read is bounds-checked and fails
//! with a sentence rather than panicking on truncated or hostile input.

/// A read position in one message.
#[derive(Debug)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    pub(crate) fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// A base-128 varint.
    pub(crate) fn varint(&mut self) -> Result<u64, String> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err("the message ends in the middle of a number".into());
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("a number is longer than 10 bytes".into())
    }

    /// A zig-zag varint (Avro's long, Protobuf's sint64).
    pub(crate) fn long(&mut self) -> Result<i64, String> {
        let value = self.varint()?;
        Ok((value >> 1) as i64 ^ -((value & 1) as i64))
    }

    /// A little-endian 32-bit value.
    pub(crate) fn fixed32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A little-endian 64-bit value.
    pub(crate) fn fixed64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A zig-zag varint int.
    pub(crate) fn int(&mut self) -> Result<i32, String> {
        let v = self.long()?;
        i32::try_from(v).map_err(|_| format!("{v} is out of range for an Avro int"))
    }

    /// A boolean byte.
    pub(crate) fn boolean(&mut self) -> Result<bool, String> {
        match self.take(1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            [b] => Err(format!("{b} is not a boolean (0 or 1)")),
            _ => Err("the message ends in the middle of a boolean".into()),
        }
    }

    /// A little-endian float.
    pub(crate) fn float(&mut self) -> Result<f32, String> {
        self.fixed32().map(f32::from_bits)
    }

    /// A little-endian double.
    pub(crate) fn double(&mut self) -> Result<f64, String> {
        self.fixed64().map(f64::from_bits)
    }

    /// Length-prefixed bytes (also strings).
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], String> {
        let len = self.long()?;
        let len = usize::try_from(len).map_err(|_| format!("a negative length ({len})"))?;
        self.take(len)
    }

    /// Exactly `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.remaining() {
            return Err(format!(
                "the message ends early: {n} bytes needed, {} left",
                self.remaining()
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// The item count of the next array or map block (0 ends it). `zero_sized` items take
    /// no bytes, so their count cannot be checked against the bytes left; it is capped.
    pub(crate) fn block_count(&mut self, zero_sized: bool) -> Result<usize, String> {
        let count = self.long()?;
        let count = if count < 0 {
            // A negative count is followed by the block's size in bytes.
            self.long()?;
            count.unsigned_abs()
        } else {
            count as u64
        };
        let limit = if zero_sized {
            MAX_ZERO_SIZED_ITEMS
        } else {
            self.remaining() as u64
        };
        if count > limit {
            return Err(format!(
                "a block claims {count} items, more than the message can hold"
            ));
        }
        Ok(count as usize)
    }
}

/// The most items of a zero-byte type (null, empty record) one block may claim.
const MAX_ZERO_SIZED_ITEMS: u64 = 1 << 20;

/// Two's-complement big-endian bytes (Avro decimals) as an i128.
pub(crate) fn be_i128(bytes: &[u8]) -> Result<i128, String> {
    if bytes.len() > 16 {
        // Wider encodings are allowed when the extra bytes are only sign extension.
        let (extra, rest) = bytes.split_at(bytes.len() - 16);
        let sign = if rest[0] & 0x80 != 0 { 0xff } else { 0 };
        if extra.iter().any(|b| *b != sign) {
            return Err("a decimal does not fit in 38 digits".into());
        }
        return be_i128(rest);
    }
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut buf = if negative { [0xffu8; 16] } else { [0u8; 16] };
    buf[16 - bytes.len()..].copy_from_slice(bytes);
    Ok(i128::from_be_bytes(buf))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_and_bounds() {
        let mut c = Cursor::new(&[0x00, 0x01, 0x02, 0x7f, 0x80, 0x01]);
        assert_eq!(c.long(), Ok(0));
        assert_eq!(c.long(), Ok(-1));
        assert_eq!(c.long(), Ok(1));
        assert_eq!(c.long(), Ok(-64));
        assert_eq!(c.long(), Ok(64));
        assert!(c.long().is_err());
        let mut c = Cursor::new(&[0x06, b'a', b'b']);
        assert!(c.bytes().unwrap_err().contains("3 bytes needed, 2 left"));
        let mut c = Cursor::new(&[0xff; 11]);
        assert!(c.long().is_err());
    }

    #[test]
    fn decimals_sign_extend() {
        assert_eq!(be_i128(&[0xff, 0x38]), Ok(-200));
        assert_eq!(be_i128(&[0x00, 0xc8]), Ok(200));
        assert_eq!(be_i128(&[]), Ok(0));
        let mut wide = vec![0xff; 4];
        wide.extend_from_slice(&[0xff; 16]);
        assert_eq!(be_i128(&wide), Ok(-1));
        assert!(be_i128(&[0x01; 17]).is_err());
    }
}
