//! The RabbitMQ stream protocol's frames, as far as the client needs them: big-endian
//! integers, `int16`-prefixed strings, the osiris chunks that deliveries carry, and the
//! AMQP 1.0 sections that wrap each message's body (read, and written as one data
//! section).

use thiserror::Error;

/// Command keys (a response sets the top bit of its request's key).
pub(crate) mod key {
    pub const DECLARE_PUBLISHER: u16 = 0x0001;
    pub const PUBLISH: u16 = 0x0002;
    pub const PUBLISH_CONFIRM: u16 = 0x0003;
    pub const PUBLISH_ERROR: u16 = 0x0004;
    pub const SUBSCRIBE: u16 = 0x0007;
    pub const DELIVER: u16 = 0x0008;
    pub const CREDIT: u16 = 0x0009;
    pub const METADATA: u16 = 0x000f;
    pub const PEER_PROPERTIES: u16 = 0x0011;
    pub const SASL_HANDSHAKE: u16 = 0x0012;
    pub const SASL_AUTHENTICATE: u16 = 0x0013;
    pub const TUNE: u16 = 0x0014;
    pub const OPEN: u16 = 0x0015;
    pub const CLOSE: u16 = 0x0016;
    pub const HEARTBEAT: u16 = 0x0017;
    pub const RESPONSE: u16 = 0x8000;
}

/// The response codes the client can meet.
pub(crate) mod code {
    pub const OK: u16 = 0x01;
    pub const STREAM_DOES_NOT_EXIST: u16 = 0x02;
    pub const STREAM_NOT_AVAILABLE: u16 = 0x06;
    pub const SASL_MECHANISM_NOT_SUPPORTED: u16 = 0x07;
    pub const AUTHENTICATION_FAILURE: u16 = 0x08;
    pub const SASL_ERROR: u16 = 0x09;
    pub const AUTHENTICATION_FAILURE_LOOPBACK: u16 = 0x0b;
    pub const VIRTUAL_HOST_ACCESS_FAILURE: u16 = 0x0c;
    pub const ACCESS_REFUSED: u16 = 0x10;
}

/// The name of a response code, for messages.
pub(crate) fn code_name(code: u16) -> String {
    let name = match code {
        0x01 => "ok",
        0x02 => "stream does not exist",
        0x03 => "subscription id already exists",
        0x04 => "subscription id does not exist",
        0x05 => "stream already exists",
        0x06 => "stream not available",
        0x07 => "SASL mechanism not supported",
        0x08 => "authentication failure",
        0x09 => "SASL error",
        0x0a => "SASL challenge",
        0x0b => "authentication failure (loopback only)",
        0x0c => "virtual host access failure",
        0x0d => "unknown frame",
        0x0e => "frame too large",
        0x0f => "internal error",
        0x10 => "access refused",
        0x11 => "precondition failed",
        0x12 => "publisher does not exist",
        0x13 => "no offset",
        _ => return format!("response code {code:#06x}"),
    };
    format!("{name} ({code:#04x})")
}

/// A frame that does not read as the protocol says.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("malformed stream protocol frame: {0}")]
pub(crate) struct WireError(pub String);

/// A request or reply being written; [`Frame::finish`] puts the size in front.
pub(crate) struct Frame(Vec<u8>);

impl Frame {
    /// A frame of command `key`, version 1.
    pub fn new(key: u16) -> Self {
        let mut f = Frame(vec![0; 4]);
        f.u16(key).u16(1);
        f
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// A string: its length as `int16`, then its bytes.
    pub fn str(&mut self, v: &str) -> &mut Self {
        let len = u16::try_from(v.len()).unwrap_or(u16::MAX);
        self.u16(len);
        self.0.extend_from_slice(&v.as_bytes()[..usize::from(len)]);
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Bytes: their length as `int32`, then the bytes.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
        self
    }
    /// The frame with its size in front.
    pub fn finish(&mut self) -> Vec<u8> {
        let size = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&size.to_be_bytes());
        std::mem::take(&mut self.0)
    }
}

/// A cursor over a received frame (without its size).
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len());
        let Some(end) = end else {
            return Err(WireError(format!(
                "{n} byte(s) wanted at {}, {} left",
                self.pos,
                self.buf.len() - self.pos
            )));
        };
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Result<u16, WireError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_be_bytes(a))
    }
    /// A string; length -1 is the null string, read as empty.
    pub fn str(&mut self) -> Result<String, WireError> {
        let len = self.u16()? as i16;
        if len < 0 {
            return Ok(String::new());
        }
        let b = self.take(len as usize)?;
        String::from_utf8(b.to_vec()).map_err(|_| WireError("a string is not UTF-8".into()))
    }
    /// An array's element count.
    pub fn count(&mut self) -> Result<usize, WireError> {
        let n = self.u32()? as i32;
        usize::try_from(n).map_err(|_| WireError(format!("negative array length {n}")))
    }
    /// A `key → value` map of strings.
    pub fn map(&mut self) -> Result<Vec<(String, String)>, WireError> {
        let n = self.count()?;
        let mut out = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            out.push((self.str()?, self.str()?));
        }
        Ok(out)
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }
}

/// The message bodies of one delivered osiris chunk. Only user chunks (type 0) hold
/// messages; tracking chunks give none. Uncompressed sub-batches are unpacked; a
/// compressed one is an error, since the test does not carry the codecs.
pub(crate) fn chunk_messages(r: &mut Reader<'_>) -> Result<Vec<Vec<u8>>, WireError> {
    let magic_version = r.u8()?;
    if magic_version >> 4 != 0x5 {
        return Err(WireError(format!(
            "chunk magic {magic_version:#04x} is not osiris's"
        )));
    }
    let chunk_type = r.u8()?;
    let entries = r.u16()?;
    let _records = r.u32()?;
    let _timestamp = r.u64()?;
    let _epoch = r.u64()?;
    let _first_offset = r.u64()?;
    let _crc = r.u32()?;
    let data_length = r.u32()? as usize;
    let _trailer_length = r.u32()?;
    let _reserved = r.u32()?;
    let mut data = Reader::new(r.take(data_length)?);
    let mut out = Vec::new();
    if chunk_type != 0 {
        return Ok(out);
    }
    for _ in 0..entries {
        let first = data.u8()?;
        if first & 0x80 == 0 {
            // A simple entry: a 31-bit size, then the message.
            let rest = data.take(3)?;
            let size = u32::from_be_bytes([first, rest[0], rest[1], rest[2]]) as usize;
            out.push(amqp_body(data.take(size)?));
        } else {
            let compression = (first >> 4) & 0x7;
            let records = data.u16()?;
            let _uncompressed = data.u32()?;
            let length = data.u32()? as usize;
            let mut batch = Reader::new(data.take(length)?);
            if compression != 0 {
                return Err(WireError(format!(
                    "a sub-batch is compressed (codec {compression}), which the test cannot read"
                )));
            }
            for _ in 0..records {
                let size = batch.u32()? as usize;
                out.push(amqp_body(batch.take(size)?));
            }
        }
    }
    Ok(out)
}

/// `payload` as an AMQP 1.0 message of one data section, as every stream client reads it.
pub(crate) fn amqp_message(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 8);
    // Described type 0x00, descriptor smallulong (0x53) 0x75 (data), then vbin32.
    out.extend_from_slice(&[0x00, 0x53, 0x75, 0xb0]);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The application data of an AMQP 1.0 message: its data sections joined, or its
/// amqp-value when that is binary or a string. Bytes that are not AMQP 1.0 sections are
/// returned as they are, so that the format's decoder shows them to the user.
pub(crate) fn amqp_body(message: &[u8]) -> Vec<u8> {
    sections_body(message).unwrap_or_else(|| message.to_vec())
}

const DATA: u64 = 0x75;
const AMQP_VALUE: u64 = 0x77;

fn sections_body(message: &[u8]) -> Option<Vec<u8>> {
    let mut r = Reader::new(message);
    let mut body: Option<Vec<u8>> = None;
    while !r.is_empty() {
        if r.u8().ok()? != 0x00 {
            return None;
        }
        let descriptor = match r.u8().ok()? {
            0x53 => u64::from(r.u8().ok()?),
            0x80 => r.u64().ok()?,
            0x44 => 0,
            other => {
                skip_value(&mut r, other)?;
                u64::MAX
            }
        };
        let constructor = r.u8().ok()?;
        match (descriptor, constructor) {
            (DATA | AMQP_VALUE, 0xa0 | 0xa1) => {
                let n = r.u8().ok()? as usize;
                body.get_or_insert_with(Vec::new)
                    .extend_from_slice(r.take(n).ok()?);
            }
            (DATA | AMQP_VALUE, 0xb0 | 0xb1) => {
                let n = r.u32().ok()? as usize;
                body.get_or_insert_with(Vec::new)
                    .extend_from_slice(r.take(n).ok()?);
            }
            _ => skip_value(&mut r, constructor)?,
        }
    }
    body
}

/// Skip one AMQP 1.0 value whose constructor byte is `c`: the top nibble gives the width
/// (fixed, or a one- or four-byte size in front).
fn skip_value(r: &mut Reader<'_>, c: u8) -> Option<()> {
    match c {
        0x00 => {
            let d = r.u8().ok()?;
            skip_value(r, d)?;
            let v = r.u8().ok()?;
            skip_value(r, v)
        }
        _ => {
            let n = match c >> 4 {
                0x4 => 0,
                0x5 => 1,
                0x6 => 2,
                0x7 => 4,
                0x8 => 8,
                0x9 => 16,
                0xa | 0xc | 0xe => r.u8().ok()? as usize,
                0xb | 0xd | 0xf => r.u32().ok()? as usize,
                _ => return None,
            };
            r.take(n).ok().map(|_| ())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simple AMQP 1.0 message: a properties section (a list), then one data section.
    fn amqp(body: &[u8]) -> Vec<u8> {
        let mut m = vec![0x00, 0x53, 0x73, 0xc0, 0x02, 0x01, 0x40];
        m.extend_from_slice(&[0x00, 0x53, 0x75, 0xa0, body.len() as u8]);
        m.extend_from_slice(body);
        m
    }

    fn chunk(entries: &[Vec<u8>], chunk_type: u8) -> Vec<u8> {
        let mut data = Vec::new();
        for e in entries {
            data.extend_from_slice(&(e.len() as u32).to_be_bytes());
            data.extend_from_slice(e);
        }
        let mut c = vec![0x50, chunk_type];
        c.extend_from_slice(&(entries.len() as u16).to_be_bytes());
        c.extend_from_slice(&(entries.len() as u32).to_be_bytes());
        c.extend_from_slice(&[0; 8 + 8 + 8 + 4]);
        c.extend_from_slice(&(data.len() as u32).to_be_bytes());
        c.extend_from_slice(&[0; 8]);
        c.extend_from_slice(&data);
        c
    }

    #[test]
    fn data_sections_are_the_body_and_other_sections_are_skipped() {
        assert_eq!(amqp_body(&amqp(b"{\"id\": 1}")), b"{\"id\": 1}");
        // An amqp-value string (str32) is a body too.
        let mut m = vec![0x00, 0x53, 0x77, 0xb1, 0, 0, 0, 2];
        m.extend_from_slice(b"hi");
        assert_eq!(amqp_body(&m), b"hi");
        // Two data sections are joined.
        let mut two = amqp(b"ab");
        two.extend_from_slice(&[0x00, 0x53, 0x75, 0xa0, 1, b'c']);
        assert_eq!(amqp_body(&two), b"abc");
    }

    #[test]
    fn bytes_that_are_not_amqp_sections_are_kept_as_they_are() {
        assert_eq!(amqp_body(b"{\"id\": 1}"), b"{\"id\": 1}");
        // Cut short inside a section.
        let cut = &amqp(b"abcdef")[..9];
        assert_eq!(amqp_body(cut), cut);
    }

    #[test]
    fn user_chunks_give_their_messages_and_tracking_chunks_none() {
        let c = chunk(&[amqp(b"one"), amqp(b"two")], 0);
        let got = chunk_messages(&mut Reader::new(&c)).unwrap();
        assert_eq!(got, vec![b"one".to_vec(), b"two".to_vec()]);
        let t = chunk(&[b"tracking".to_vec()], 1);
        assert!(chunk_messages(&mut Reader::new(&t)).unwrap().is_empty());
    }

    #[test]
    fn damaged_chunks_are_errors_not_panics() {
        let c = chunk(&[amqp(b"one")], 0);
        for cut in 0..c.len() {
            let _ = chunk_messages(&mut Reader::new(&c[..cut]));
        }
        let mut bad = c.clone();
        bad[0] = 0x10;
        assert!(
            chunk_messages(&mut Reader::new(&bad))
                .unwrap_err()
                .0
                .contains("not osiris")
        );
        assert!(chunk_messages(&mut Reader::new(&c[..20])).is_err());
    }

    #[test]
    fn frames_carry_their_size_and_strings_their_length() {
        let mut f = Frame::new(key::OPEN);
        let bytes = f.u32(7).str("/").finish();
        assert_eq!(bytes, [0, 0, 0, 11, 0, 0x15, 0, 1, 0, 0, 0, 7, 0, 1, b'/']);
        let mut r = Reader::new(&bytes[4..]);
        assert_eq!(r.u16().unwrap(), key::OPEN);
        assert_eq!(r.u16().unwrap(), 1);
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(r.str().unwrap(), "/");
        assert!(r.is_empty());
        assert_eq!(code_name(0x08), "authentication failure (0x08)");
        assert_eq!(code_name(0x99), "response code 0x0099");
    }

    #[test]
    fn written_messages_read_back_as_their_payload() {
        assert_eq!(amqp_body(&amqp_message(b"{\"id\":1}")), b"{\"id\":1}");
        assert_eq!(amqp_body(&amqp_message(b"")), b"");
    }
}
