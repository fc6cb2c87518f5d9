//! Base64 (RFC 4648), for the two places that meet it: the `Basic` credentials the redactor
//! looks for in what a provider echoes (the standard alphabet, padded), and the gateway's tool
//! call ids that carry reasoning state (base64url, unpadded, so an id stays `[A-Za-z0-9_-]`).
//! One encoder and one decoder serve both; each caller says which alphabet and how strict.

/// Which two characters stand for 62 and 63.
#[derive(Clone, Copy)]
pub enum Alphabet {
    /// `+` and `/` (RFC 4648 section 4).
    Standard,
    /// `-` and `_` (section 5, safe in URLs and ids).
    Url,
}

impl Alphabet {
    fn char_of(self, value: u32) -> char {
        match (value, self) {
            (0..=25, _) => (b'A' + value as u8) as char,
            (26..=51, _) => (b'a' + (value - 26) as u8) as char,
            (52..=61, _) => (b'0' + (value - 52) as u8) as char,
            (62, Alphabet::Standard) => '+',
            (62, Alphabet::Url) => '-',
            (_, Alphabet::Standard) => '/',
            (_, Alphabet::Url) => '_',
        }
    }

    /// A character's value, in constant time (an id may be 16 KiB).
    fn value_of(self, c: u8) -> Option<u32> {
        let value = match (c, self) {
            (b'A'..=b'Z', _) => c - b'A',
            (b'a'..=b'z', _) => c - b'a' + 26,
            (b'0'..=b'9', _) => c - b'0' + 52,
            (b'+', Alphabet::Standard) | (b'-', Alphabet::Url) => 62,
            (b'/', Alphabet::Standard) | (b'_', Alphabet::Url) => 63,
            _ => return None,
        };
        Some(u32::from(value))
    }
}

/// `bytes` in `alphabet`, with `=` padding to a multiple of four when `padded`.
pub fn encode(bytes: &[u8], alphabet: Alphabet, padded: bool) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(alphabet.char_of(n >> (18 - 6 * i) & 63));
        }
        if padded {
            out.extend(std::iter::repeat_n('=', 3 - chunk.len()));
        }
    }
    out
}

/// What `decode` read.
pub struct Decoded {
    pub bytes: Vec<u8>,
    /// The text is the one encoding of these bytes: no length that no encoding has (a lone
    /// last character), and the bits past the last byte all zero.
    pub canonical: bool,
}

/// The bytes of unpadded text in `alphabet` (strip any `=` first), or `None` for a character
/// outside it. A partial last group gives the whole bytes it holds; `canonical` says whether the
/// text is the one encoding of them.
pub fn decode(text: &str, alphabet: Alphabet) -> Option<Decoded> {
    let mut bytes = Vec::with_capacity(text.len() * 3 / 4);
    let (mut bits, mut held) = (0u32, 0u32);
    for &c in text.as_bytes() {
        bits = bits << 6 | alphabet.value_of(c)?;
        held += 6;
        if held >= 8 {
            held -= 8;
            bytes.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    Some(Decoded { bytes, canonical: held < 6 && bits == 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_round_trips_in_both_alphabets() {
        let bytes: Vec<u8> = (0..=255u8).rev().collect();
        for alphabet in [Alphabet::Standard, Alphabet::Url] {
            for len in 0..40 {
                for padded in [false, true] {
                    let text = encode(&bytes[..len], alphabet, padded);
                    let expected = if padded { len.div_ceil(3) * 4 } else { (len * 4).div_ceil(3) };
                    assert_eq!(text.len(), expected);
                    let read = decode(text.trim_end_matches('='), alphabet).unwrap();
                    assert_eq!(read.bytes, &bytes[..len]);
                    assert!(read.canonical, "{text}");
                }
            }
        }
    }

    #[test]
    fn the_alphabets_differ_in_62_and_63_only() {
        assert_eq!(encode(b"user:pass", Alphabet::Standard, true), "dXNlcjpwYXNz");
        assert_eq!(encode(&[0xfb, 0xff], Alphabet::Standard, true), "+/8=");
        assert_eq!(encode(&[0xfb, 0xff], Alphabet::Url, false), "-_8");
        assert!(decode("+/8", Alphabet::Url).is_none());
        assert!(decode("-_8", Alphabet::Standard).is_none());
        assert!(decode("a=", Alphabet::Standard).is_none());
        assert!(decode("not base64!", Alphabet::Standard).is_none());
        let text = encode("user:pässword".as_bytes(), Alphabet::Standard, true);
        assert_eq!(decode(text.trim_end_matches('='), Alphabet::Standard).unwrap().bytes, "user:pässword".as_bytes());
    }

    #[test]
    fn a_text_no_encoding_has_is_read_but_not_canonical() {
        // A lone last character, and bits set past the last byte.
        let lone = decode("QUJDR", Alphabet::Url).unwrap();
        assert_eq!((lone.bytes.as_slice(), lone.canonical), (&b"ABC"[..], false));
        let stray = decode("QR", Alphabet::Url).unwrap();
        assert_eq!((stray.bytes.as_slice(), stray.canonical), (&b"A"[..], false));
    }
}
