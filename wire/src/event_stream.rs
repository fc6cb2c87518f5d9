//! AWS's binary event-stream framing (`application/vnd.amazon.eventstream`), which Amazon
//! Bedrock's ConverseStream answers in instead of SSE.
//!
//! A message is a 12-byte prelude (total length, headers length, both big-endian `u32`, and the
//! CRC32 of those 8 bytes), the headers, the payload, and the CRC32 of everything before it. A
//! header is a name (one length byte, then the bytes), a type byte and a typed value (AWS's
//! "Event stream encoding" in the Transcribe streaming docs, and `@smithy/eventstream-codec`,
//! which this reader is tested against end to end). Both CRCs are checked: a message whose bytes
//! changed on the way is a typed error, never a panic and never a wrong event.
//!
//! Bytes arrive in arbitrary pieces; [`EventStreamDecoder`] keeps at most one message's bytes,
//! and refuses a message longer than [`MAX_MESSAGE_BYTES`] from its prelude, before reading it.

use std::fmt;

/// AWS's own limit for one message (16 MiB), which no Bedrock event comes near.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The prelude and the message CRC: the smallest message is these 16 bytes.
const PRELUDE_BYTES: usize = 12;
const MIN_MESSAGE_BYTES: usize = PRELUDE_BYTES + 4;

/// The CRC-32 of IEEE 802.3 (zlib's), four bits at a time from a 16-entry table: event streams
/// are small, and the table costs 64 bytes where a byte-wise one costs a kilobyte.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(0, bytes)
}

fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    const fn table() -> [u32; 16] {
        let mut t = [0u32; 16];
        let mut i = 0;
        while i < 16 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 4 {
                c = if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    const TABLE: [u32; 16] = table();
    let mut c = !crc;
    for &b in bytes {
        c = TABLE[((c ^ u32::from(b)) & 15) as usize] ^ (c >> 4);
        c = TABLE[((c ^ (u32::from(b) >> 4)) & 15) as usize] ^ (c >> 4);
    }
    !c
}

/// A header's value, by its type byte (0 to 9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Bytes(Vec<u8>),
    String(String),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

/// One decoded message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Vec<u8>,
}

impl Message {
    /// A string header's value (`:event-type`, `:message-type`...), `None` when absent or not a string.
    pub fn string_header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).and_then(|(_, v)| match v {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
    }
}

/// Why a stream is not valid event-stream framing. The decoder keeps returning it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventStreamError {
    /// The prelude's CRC does not match its lengths.
    PreludeCrc { expected: u32, found: u32 },
    /// The message's CRC does not match its bytes.
    MessageCrc { expected: u32, found: u32 },
    /// The total length is below 16 bytes, over [`MAX_MESSAGE_BYTES`], or leaves no room for the headers.
    BadLength { total: u32, headers: u32 },
    /// A header runs past its section, has an unknown type or a string that is not UTF-8.
    BadHeader(&'static str),
    /// The stream ended inside a message.
    Truncated { have: usize },
}

impl fmt::Display for EventStreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventStreamError::PreludeCrc { expected, found } => {
                write!(f, "event-stream prelude CRC mismatch (expected {expected:08x}, found {found:08x})")
            }
            EventStreamError::MessageCrc { expected, found } => {
                write!(f, "event-stream message CRC mismatch (expected {expected:08x}, found {found:08x})")
            }
            EventStreamError::BadLength { total, headers } => write!(
                f,
                "event-stream message length {total} with {headers} header bytes is not a message \
                 (16 bytes to {MAX_MESSAGE_BYTES}, headers inside it)"
            ),
            EventStreamError::BadHeader(what) => write!(f, "event-stream header {what}"),
            EventStreamError::Truncated { have } => {
                write!(f, "event stream ended inside a message ({have} bytes of it arrived)")
            }
        }
    }
}

impl std::error::Error for EventStreamError {}

/// Reads messages from bytes that arrive in pieces.
#[derive(Debug, Default)]
pub struct EventStreamDecoder {
    buffer: Vec<u8>,
    failed: Option<EventStreamError>,
}

impl EventStreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads one piece, passing each message it completes to `each`, in order.
    pub fn feed_each(&mut self, chunk: &[u8], each: &mut dyn FnMut(&Message)) -> Result<(), EventStreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        self.buffer.extend_from_slice(chunk);
        let mut start = 0;
        let result = loop {
            match message_at(&self.buffer[start..]) {
                Ok(Some((message, used))) => {
                    start += used;
                    each(&message);
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.buffer.drain(..start);
        if let Err(e) = &result {
            self.failed = Some(e.clone());
            self.buffer = Vec::new();
        }
        result
    }

    /// The stream ended: an error if it ended inside a message.
    pub fn finish(&mut self) -> Result<(), EventStreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        match self.buffer.len() {
            0 => Ok(()),
            have => Err(EventStreamError::Truncated { have }),
        }
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The message at the start of `bytes` and its length, `None` while it has not all arrived. The
/// prelude is checked as soon as it is in, so a bad length fails before its bytes are awaited.
fn message_at(bytes: &[u8]) -> Result<Option<(Message, usize)>, EventStreamError> {
    if bytes.len() < PRELUDE_BYTES {
        return Ok(None);
    }
    let (total, headers_len) = (be32(bytes), be32(&bytes[4..]));
    let (expected, found) = (be32(&bytes[8..]), crc32(&bytes[..8]));
    if expected != found {
        return Err(EventStreamError::PreludeCrc { expected, found });
    }
    let size = total as usize;
    if !(MIN_MESSAGE_BYTES..=MAX_MESSAGE_BYTES).contains(&size) || headers_len as usize > size - MIN_MESSAGE_BYTES {
        return Err(EventStreamError::BadLength { total, headers: headers_len });
    }
    if bytes.len() < size {
        return Ok(None);
    }
    let (expected, found) = (be32(&bytes[size - 4..]), crc32_update(found, &bytes[8..size - 4]));
    if expected != found {
        return Err(EventStreamError::MessageCrc { expected, found });
    }
    let headers_end = PRELUDE_BYTES + headers_len as usize;
    let headers = read_headers(&bytes[PRELUDE_BYTES..headers_end])?;
    Ok(Some((Message { headers, payload: bytes[headers_end..size - 4].to_vec() }, size)))
}

fn read_headers(mut b: &[u8]) -> Result<Vec<(String, HeaderValue)>, EventStreamError> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Result<&'a [u8], EventStreamError> {
        if b.len() < n {
            return Err(EventStreamError::BadHeader("runs past the headers section"));
        }
        let (head, rest) = b.split_at(n);
        *b = rest;
        Ok(head)
    }
    fn text(bytes: &[u8]) -> Result<String, EventStreamError> {
        String::from_utf8(bytes.to_vec()).map_err(|_| EventStreamError::BadHeader("text is not UTF-8"))
    }
    let mut headers = Vec::new();
    while !b.is_empty() {
        let name_len = take(&mut b, 1)?[0] as usize;
        let name = text(take(&mut b, name_len)?)?;
        let long = |b: &mut &[u8]| take(b, 8).map(|v| i64::from_be_bytes(v.try_into().unwrap_or_default()));
        let value = match take(&mut b, 1)?[0] {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(take(&mut b, 1)?[0] as i8),
            3 => HeaderValue::Short(i16::from_be_bytes(take(&mut b, 2)?.try_into().unwrap_or_default())),
            4 => HeaderValue::Int(be32(take(&mut b, 4)?) as i32),
            5 => HeaderValue::Long(long(&mut b)?),
            t @ (6 | 7) => {
                let len = take(&mut b, 2)?;
                let value = take(&mut b, usize::from(u16::from_be_bytes([len[0], len[1]])))?;
                if t == 6 {
                    HeaderValue::Bytes(value.to_vec())
                } else {
                    HeaderValue::String(text(value)?)
                }
            }
            8 => HeaderValue::Timestamp(long(&mut b)?),
            9 => HeaderValue::Uuid(take(&mut b, 16)?.try_into().unwrap_or_default()),
            _ => return Err(EventStreamError::BadHeader("has an unknown value type")),
        };
        headers.push((name, value));
    }
    Ok(headers)
}

/// A message's bytes, for tests and fuzzing: string headers only.
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    let total = (MIN_MESSAGE_BYTES + h.len() + payload.len()) as u32;
    let mut m = Vec::with_capacity(total as usize);
    m.extend_from_slice(&total.to_be_bytes());
    m.extend_from_slice(&(h.len() as u32).to_be_bytes());
    m.extend_from_slice(&crc32(&m).to_be_bytes());
    m.extend_from_slice(&h);
    m.extend_from_slice(payload);
    m.extend_from_slice(&crc32(&m).to_be_bytes());
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(pieces: &[&[u8]]) -> (Vec<Message>, Result<(), EventStreamError>) {
        let mut d = EventStreamDecoder::new();
        let mut out = Vec::new();
        for p in pieces {
            if let Err(e) = d.feed_each(p, &mut |m| out.push(m.clone())) {
                return (out, Err(e));
            }
        }
        let end = d.finish();
        (out, end)
    }

    #[test]
    fn crc32_is_zlibs() {
        // The check value of CRC-32/ISO-HDLC, and zlib's crc32 of a pangram.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b"The quick brown fox jumps over the lazy dog"), 0x414F_A339);
        assert_eq!(crc32(b""), 0);
    }

    /// The vectors of `@smithy/eventstream-codec`'s test suite (its `TestVectors`), as bytes:
    /// an empty message, and one with an int header and a payload.
    #[test]
    fn smithy_vectors() {
        let empty = [0, 0, 0, 0x10, 0, 0, 0, 0, 0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff];
        let (messages, end) = decode_all(&[&empty]);
        assert_eq!((messages, end), (vec![Message::default()], Ok(())));
        let int_header = [
            0x00, 0x00, 0x00, 0x2d, 0x00, 0x00, 0x00, 0x10, 0x41, 0xc4, 0x24, 0xb8, 0x0a, 0x65, 0x76, 0x65, 0x6e, 0x74,
            0x2d, 0x74, 0x79, 0x70, 0x65, 0x04, 0x00, 0x00, 0xa0, 0x0c, 0x7b, 0x27, 0x66, 0x6f, 0x6f, 0x27, 0x3a, 0x27,
            0x62, 0x61, 0x72, 0x27, 0x7d, 0x36, 0xf4, 0x80, 0xa0,
        ];
        let (messages, end) = decode_all(&[&int_header]);
        assert_eq!(end, Ok(()));
        assert_eq!(messages[0].headers, vec![("event-type".to_string(), HeaderValue::Int(40972))]);
        assert_eq!(messages[0].payload, b"{'foo':'bar'}");
    }

    #[test]
    fn messages_split_anywhere_read_the_same() {
        let mut bytes =
            encode(&[(":event-type", "messageStart"), (":message-type", "event")], b"{\"role\":\"assistant\"}");
        bytes.extend(encode(&[(":event-type", "messageStop")], b"{}"));
        let (whole, end) = decode_all(&[&bytes]);
        assert_eq!(end, Ok(()));
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].string_header(":event-type"), Some("messageStart"));
        assert_eq!(whole[1].payload, b"{}");
        for cut in 0..bytes.len() {
            assert_eq!(decode_all(&[&bytes[..cut], &bytes[cut..]]).0, whole, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&bytewise).0, whole);
    }

    #[test]
    fn every_header_type_reads() {
        let mut h = vec![1, b'a', 0, 1, b'b', 1, 1, b'c', 2, 0xff, 1, b'd', 3, 0x01, 0x02, 1, b'e', 4, 0, 0, 0, 7];
        h.extend([1, b'f', 5, 0, 0, 0, 0, 0, 0, 0, 9, 1, b'g', 6, 0, 2, 0xde, 0xad, 1, b'h', 8]);
        h.extend(1_700_000_000_000i64.to_be_bytes());
        h.extend([1, b'i', 9]);
        h.extend([7u8; 16]);
        let total = (16 + h.len()) as u32;
        let mut m = total.to_be_bytes().to_vec();
        m.extend((h.len() as u32).to_be_bytes());
        m.extend(crc32(&m).to_be_bytes());
        m.extend(&h);
        m.extend(crc32(&m).to_be_bytes());
        let (messages, end) = decode_all(&[&m]);
        assert_eq!(end, Ok(()));
        let values: Vec<_> = messages[0].headers.iter().map(|(_, v)| v.clone()).collect();
        assert_eq!(
            values,
            [
                HeaderValue::Bool(true),
                HeaderValue::Bool(false),
                HeaderValue::Byte(-1),
                HeaderValue::Short(0x0102),
                HeaderValue::Int(7),
                HeaderValue::Long(9),
                HeaderValue::Bytes(vec![0xde, 0xad]),
                HeaderValue::Timestamp(1_700_000_000_000),
                HeaderValue::Uuid([7; 16]),
            ]
        );
    }

    #[test]
    fn hostile_inputs_are_typed_errors() {
        let good = encode(&[(":event-type", "x")], b"payload");
        let mut bad_prelude = good.clone();
        bad_prelude[9] ^= 1;
        assert!(matches!(decode_all(&[&bad_prelude]).1, Err(EventStreamError::PreludeCrc { .. })));
        let mut bad_payload = good.clone();
        bad_payload[good.len() - 6] ^= 1;
        let (messages, end) = decode_all(&[&bad_payload]);
        assert!(messages.is_empty());
        assert!(matches!(end, Err(EventStreamError::MessageCrc { .. })));
        // A huge length is refused from the prelude alone, before any of it is awaited.
        let mut huge = (u32::MAX).to_be_bytes().to_vec();
        huge.extend(0u32.to_be_bytes());
        huge.extend(crc32(&huge).to_be_bytes());
        assert_eq!(decode_all(&[&huge]).1, Err(EventStreamError::BadLength { total: u32::MAX, headers: 0 }));
        // Headers longer than the message.
        let mut over = 16u32.to_be_bytes().to_vec();
        over.extend(1u32.to_be_bytes());
        over.extend(crc32(&over).to_be_bytes());
        assert!(matches!(decode_all(&[&over]).1, Err(EventStreamError::BadLength { .. })));
        // A header whose string runs past the section, and an unknown type.
        for h in [&[1, b'a', 7, 0, 9, b'x'][..], &[1, b'a', 10]] {
            let mut m = ((16 + h.len()) as u32).to_be_bytes().to_vec();
            m.extend((h.len() as u32).to_be_bytes());
            m.extend(crc32(&m).to_be_bytes());
            m.extend(h);
            m.extend(crc32(&m).to_be_bytes());
            assert!(matches!(decode_all(&[&m]).1, Err(EventStreamError::BadHeader(_))));
        }
        // Cut short: inside the prelude and inside the message.
        assert_eq!(decode_all(&[&good[..5]]).1, Err(EventStreamError::Truncated { have: 5 }));
        assert_eq!(decode_all(&[&good[..20]]).1, Err(EventStreamError::Truncated { have: 20 }));
        // After an error the decoder keeps failing, even on good bytes.
        let mut d = EventStreamDecoder::new();
        assert!(d.feed_each(&bad_prelude, &mut |_| {}).is_err());
        assert!(d.feed_each(&good, &mut |_| panic!("no message after an error")).is_err());
    }
}
