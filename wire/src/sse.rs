//! A push-based Server-Sent Events parser (WHATWG event stream rules), bounded in memory. It
//! lives in the wire crate, built for speed, since every byte of every stream passes through it;
//! `llm_baton::sse` is its public path.
//!
//! Why it looks like this:
//! - **Push-based**: the driver hands over whatever chunk the network produced and gets back the
//!   items that chunk completed. No reader, no I/O, no async; the same code runs natively and on
//!   wasm32, and every chunking of a stream yields the same items (tested for all splits).
//! - **Bytes, not strings**: chunks may cut a UTF-8 character or a CRLF in half. Bytes are kept
//!   until a line is complete and only then decoded (lossily: bad bytes become U+FFFD), so a
//!   split never corrupts text and no input can panic.
//! - **Bounded**: a line (even one still waiting for its end) and the data of one pending event
//!   may not exceed `max_line` bytes; past that, [`SseError`] instead of unbounded growth.
//! - **No copy it can avoid**: [`SseParser::feed_each`] lends each item to a callback and then
//!   takes the event's buffers back, so a long stream allocates nothing per event; `feed`
//!   collects owned items for callers that keep them.
//!
//! Departures from the browser `EventSource`, chosen for LLM streams:
//! - [`SseParser::finish`] dispatches a last event that lacks its blank line.
//! - [`SseEvent::id`] is the `id` field of that event's own block; the persistent value is
//!   [`SseParser::last_event_id`].
//! - Comments are reported, with one leading space removed like field values.

use std::borrow::Cow;
use std::fmt;
use std::mem;

/// One dispatched event. `event` is empty when the stream named none ("message" by default in
/// browsers).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
    pub id: Option<String>,
}

/// What a chunk completed: an event, or a comment line (text after the ':', one leading space
/// removed); comments are how servers send keep-alives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    Event(SseEvent),
    Comment(String),
    /// A whole line that is no SSE field (not `data`, `event`, `id`, `retry`, nor a comment),
    /// reported only by a parser made with [`SseParser::reporting_unframed`]. The spec ignores
    /// such lines; a provider may write its error there, outside the event stream (Gemini does).
    Unframed(String),
}

/// The stream broke a memory bound. The parser keeps returning it until [`SseParser::reset`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    /// A line, with or without its line end yet, is longer than `limit` bytes.
    LineTooLong { limit: usize },
    /// The data of one event (its `data` lines joined with "\n") is longer than `limit` bytes.
    EventTooLarge { limit: usize },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::LineTooLong { limit } => write!(f, "SSE line longer than {limit} bytes"),
            SseError::EventTooLarge { limit } => write!(f, "SSE event data longer than {limit} bytes"),
        }
    }
}

impl std::error::Error for SseError {}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The parser. Feed it chunks in order, then call [`finish`](Self::finish) at end of stream.
#[derive(Debug, Clone)]
pub struct SseParser {
    /// Bytes of the line still waiting for its end.
    line: Vec<u8>,
    /// At the start of a stream, still looking for a BOM; `bom_len` bytes of it matched so far.
    at_start: bool,
    bom_len: usize,
    /// The last line ended with CR at the end of a chunk: an LF starting the next chunk is the
    /// second half of that CRLF, not a blank line.
    after_cr: bool,
    failed: Option<SseError>,
    fields: Fields,
}

/// The field interpreter: everything that lives between lines.
#[derive(Debug, Clone)]
struct Fields {
    max: usize,
    /// Report lines that are no field as [`SseItem::Unframed`] rather than ignore them.
    report_unframed: bool,
    /// Spec form: each `data` value followed by "\n"; the last "\n" is dropped on dispatch.
    data: String,
    event: String,
    id: Option<String>,
    /// Empty means none (an empty `id` resets it, per spec).
    last_id: String,
    retry: Option<u64>,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SseParser {
    /// A parser with the default bound of 1 MiB per line and per event's data.
    pub fn new() -> Self {
        Self::with_max_line(1 << 20)
    }

    /// A parser that rejects lines, and event data, longer than `bytes`.
    pub fn with_max_line(bytes: usize) -> Self {
        SseParser {
            line: Vec::new(),
            at_start: true,
            bom_len: 0,
            after_cr: false,
            failed: None,
            fields: Fields {
                max: bytes,
                report_unframed: false,
                data: String::new(),
                event: String::new(),
                id: None,
                last_id: String::new(),
                retry: None,
            },
        }
    }

    /// The same parser, also reporting every line that is no SSE field as [`SseItem::Unframed`].
    pub fn reporting_unframed(mut self) -> Self {
        self.fields.report_unframed = true;
        self
    }

    /// Parses the next chunk, appending what it completed to `out`. On error, items completed
    /// before the offending line are still in `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseItem>) -> Result<(), SseError> {
        self.feed_to(chunk, &mut Sink::Collect(out))
    }

    /// [`feed`](Self::feed), lending each item to `each` in order instead of collecting it.
    pub fn feed_each(&mut self, chunk: &[u8], each: &mut dyn FnMut(&SseItem)) -> Result<(), SseError> {
        self.feed_to(chunk, &mut Sink::Each(each))
    }

    fn feed_to(&mut self, chunk: &[u8], out: &mut Sink) -> Result<(), SseError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let result = self.feed_inner(chunk, out);
        self.failed = result.err();
        result
    }

    /// End of stream: a last line without its line end is processed, then a pending event without
    /// its blank line is dispatched. The next `feed` starts a new stream (a BOM is stripped again);
    /// `retry_ms` and `last_event_id` are kept, as a reconnecting client needs them.
    pub fn finish(&mut self, out: &mut Vec<SseItem>) -> Result<(), SseError> {
        self.finish_to(&mut Sink::Collect(out))
    }

    /// [`finish`](Self::finish), lending each item to `each` in order instead of collecting it.
    pub fn finish_each(&mut self, each: &mut dyn FnMut(&SseItem)) -> Result<(), SseError> {
        self.finish_to(&mut Sink::Each(each))
    }

    fn finish_to(&mut self, out: &mut Sink) -> Result<(), SseError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        let result = self.finish_inner(out);
        self.failed = result.err();
        result
    }

    /// Forgets everything, including `retry_ms` and `last_event_id`; clears an error.
    pub fn reset(&mut self) {
        self.line.clear();
        self.at_start = true;
        self.bom_len = 0;
        self.after_cr = false;
        self.failed = None;
        let f = &mut self.fields;
        f.data.clear();
        f.event.clear();
        f.id = None;
        f.last_id.clear();
        f.retry = None;
    }

    /// The last valid `retry` field (ASCII digits only, fitting a u64), in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.fields.retry
    }

    /// The id of the last dispatched block that set one; `None` if none did or the last was empty.
    pub fn last_event_id(&self) -> Option<&str> {
        Some(self.fields.last_id.as_str()).filter(|id| !id.is_empty())
    }

    fn feed_inner(&mut self, mut rest: &[u8], out: &mut Sink) -> Result<(), SseError> {
        // Strip one BOM, only as the very first bytes of the stream, even if split across chunks.
        while self.at_start {
            let Some((&b, tail)) = rest.split_first() else { return Ok(()) };
            if BOM.get(self.bom_len) == Some(&b) {
                self.bom_len += 1;
                rest = tail;
                if self.bom_len == BOM.len() {
                    self.end_bom();
                }
            } else {
                // Not a BOM: what matched so far is ordinary line content (never a line end).
                self.line.extend_from_slice(&BOM[..self.bom_len]);
                self.end_bom();
            }
        }
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if let [b'\n', tail @ ..] = rest {
                rest = tail;
            }
        }
        while let Some(pos) = find_line_end(rest) {
            let (head, tail) = rest.split_at(pos);
            if self.line.is_empty() {
                self.check_line(head.len())?;
                self.fields.line(head, out)?;
            } else {
                self.check_line(self.line.len() + head.len())?;
                self.line.extend_from_slice(head);
                self.fields.line(&self.line, out)?;
                self.line.clear();
            }
            rest = match tail {
                [b'\r', b'\n', after @ ..] => after,
                [b'\r'] => {
                    self.after_cr = true;
                    &[]
                }
                [_, after @ ..] => after,
                [] => &[],
            };
        }
        self.check_line(self.line.len() + rest.len())?;
        self.line.extend_from_slice(rest);
        Ok(())
    }

    fn finish_inner(&mut self, out: &mut Sink) -> Result<(), SseError> {
        if self.at_start {
            self.line.extend_from_slice(&BOM[..self.bom_len]);
            self.check_line(self.line.len())?;
        }
        if !self.line.is_empty() {
            self.fields.line(&self.line, out)?;
            self.line.clear();
        }
        self.fields.dispatch(out);
        self.at_start = true;
        self.bom_len = 0;
        self.after_cr = false;
        Ok(())
    }

    fn end_bom(&mut self) {
        self.at_start = false;
        self.bom_len = 0;
    }

    fn check_line(&self, len: usize) -> Result<(), SseError> {
        if len > self.fields.max {
            return Err(SseError::LineTooLong { limit: self.fields.max });
        }
        Ok(())
    }
}

impl Fields {
    /// Interprets one complete line (without its line end).
    fn line(&mut self, line: &[u8], out: &mut Sink) -> Result<(), SseError> {
        let (name, value) = match line.iter().position(|&b| b == b':') {
            None if line.is_empty() => {
                self.dispatch(out);
                return Ok(());
            }
            None => (line, &[][..]),
            Some(0) => {
                out.put(SseItem::Comment(decode(strip_space(&line[1..])).into_owned()));
                return Ok(());
            }
            Some(colon) => (&line[..colon], strip_space(&line[colon + 1..])),
        };
        match name {
            b"data" => {
                let value = decode(value);
                // The dispatched data is the buffer (with its "\n"s) plus this value.
                if self.data.len() + value.len() > self.max {
                    return Err(SseError::EventTooLarge { limit: self.max });
                }
                if self.data.is_empty() {
                    // Exact fit for the usual one-line event: no regrowth for the "\n".
                    self.data.reserve_exact(value.len() + 1);
                }
                self.data.push_str(&value);
                self.data.push('\n');
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&decode(value));
            }
            b"id" if !value.contains(&0) => {
                let value = decode(value);
                match &mut self.id {
                    Some(id) => {
                        id.clear();
                        id.push_str(&value);
                    }
                    None => self.id = Some(value.into_owned()),
                }
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // Digits only, so the UTF-8 check cannot fail; a value past u64 is ignored.
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()) {
                    self.retry = Some(ms);
                }
            }
            b"id" | b"retry" => {}
            _ if self.report_unframed => {
                out.put(SseItem::Unframed(decode(line).into_owned()));
            }
            _ => {}
        }
        Ok(())
    }

    /// The blank-line step: records the block's id, then emits the event unless it had no data.
    fn dispatch(&mut self, out: &mut Sink) {
        let id = self.id.take();
        if let Some(id) = &id {
            self.last_id.clear();
            self.last_id.push_str(id);
        }
        if self.data.is_empty() {
            self.event.clear();
            return;
        }
        self.data.pop();
        let event = SseEvent { event: mem::take(&mut self.event), data: mem::take(&mut self.data), id };
        if let Some(SseItem::Event(mut lent)) = out.put(SseItem::Event(event)) {
            lent.data.clear();
            lent.event.clear();
            self.data = lent.data;
            self.event = lent.event;
        }
    }
}

/// Where completed items go: collected, or lent to a callback (and handed back for reuse).
enum Sink<'s> {
    Collect(&'s mut Vec<SseItem>),
    Each(&'s mut dyn FnMut(&SseItem)),
}

impl Sink<'_> {
    /// Hands `item` on; returns it when the receiver only borrowed it.
    fn put(&mut self, item: SseItem) -> Option<SseItem> {
        match self {
            Sink::Collect(out) => {
                out.push(item);
                None
            }
            Sink::Each(each) => {
                each(&item);
                Some(item)
            }
        }
    }
}

fn strip_space(value: &[u8]) -> &[u8] {
    value.strip_prefix(b" ").unwrap_or(value)
}

/// The text of a line's part; bad bytes become U+FFFD. `from_utf8` first: it checks valid text
/// much faster than the lossy decoder walks it.
fn decode(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Index of the first CR or LF: eight bytes at a time (SWAR), which is what keeps long data lines
/// cheap without a memchr dependency.
fn find_line_end(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    const CRS: u64 = u64::from_le_bytes([b'\r'; 8]);
    const LFS: u64 = u64::from_le_bytes([b'\n'; 8]);
    // High bit set in each zero byte; borrows can only mark bytes above the first zero, so the
    // lowest marked byte is exact.
    let zero_bytes = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut words = hay.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(word);
        let w = u64::from_le_bytes(bytes);
        let hits = zero_bytes(w ^ CRS) | zero_bytes(w ^ LFS);
        if hits != 0 {
            return Some(offset + (hits.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words.remainder().iter().position(|&b| b == b'\r' || b == b'\n').map(|i| offset + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<SseItem> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, &mut out).unwrap();
        }
        p.finish(&mut out).unwrap();
        out
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseItem {
        SseItem::Event(SseEvent { event: event.into(), data: data.into(), id: id.map(Into::into) })
    }

    #[test]
    fn basic_fields() {
        assert_eq!(parse(&[b"event: delta\nid: 7\ndata: {\"a\":1}\n\n"]), vec![ev("delta", "{\"a\":1}", Some("7"))]);
    }

    #[test]
    fn multi_line_data_and_comment() {
        assert_eq!(
            parse(&[b": keep-alive\ndata: a\ndata:b\n\n"]),
            vec![SseItem::Comment("keep-alive".into()), ev("", "a\nb", None)]
        );
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        assert_eq!(parse(&[b"data: a\r", b"\ndata: b\r\n\r", b"\n"]), vec![ev("", "a\nb", None)]);
    }

    #[test]
    fn empty_chunk_keeps_pending_cr() {
        assert_eq!(parse(&[b"data: a\r", b"", b"\ndata: b\n\n"]), vec![ev("", "a\nb", None)]);
    }

    #[test]
    fn bom_split_across_chunks() {
        assert_eq!(parse(&[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]), vec![ev("", "x", None)]);
    }

    #[test]
    fn utf8_split_across_chunks() {
        let s = "data: é😀\n\n".as_bytes();
        assert_eq!(parse(&[&s[..7], &s[7..10], &s[10..]]), vec![ev("", "é😀", None)]);
    }

    #[test]
    fn finish_dispatches_trailing_event() {
        assert_eq!(parse(&[b"data: last"]), vec![ev("", "last", None)]);
    }

    #[test]
    fn retry_and_last_event_id() {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.feed(b"retry: 1500\nretry: 9x\nid: 4\n\n", &mut out).unwrap();
        assert_eq!((p.retry_ms(), p.last_event_id()), (Some(1500), Some("4")));
        assert!(out.is_empty());
        p.feed(b"id\n\n", &mut out).unwrap();
        assert_eq!(p.last_event_id(), None);
        p.reset();
        assert_eq!((p.retry_ms(), p.last_event_id()), (None, None));
    }

    #[test]
    fn long_line_is_an_error_until_reset() {
        let mut p = SseParser::with_max_line(8);
        let mut out = Vec::new();
        let err = p.feed(b"data: 12345", &mut out).unwrap_err();
        assert_eq!(err.to_string(), "SSE line longer than 8 bytes");
        assert_eq!(p.feed(b"\n\n", &mut out), Err(err));
        assert_eq!(p.finish(&mut out), Err(err));
        p.reset();
        p.feed(b"data: 1\n\n", &mut out).unwrap();
        assert_eq!(out, vec![ev("", "1", None)]);
    }

    #[test]
    fn event_data_is_bounded() {
        let mut p = SseParser::with_max_line(8);
        let mut out = Vec::new();
        let err = p.feed(b"data:123\ndata:456\ndata:7\n", &mut out).unwrap_err();
        assert_eq!(err.to_string(), "SSE event data longer than 8 bytes");
    }

    #[test]
    fn unframed_lines_are_reported_only_when_asked() {
        let stream =
            b"data: {\"a\":1}\n\n{\"error\": {\n  \"code\": 499\n}}\nfoobar: x\nid: \x00\nretry: soon\n: ping\n";
        let mut p = SseParser::new().reporting_unframed();
        let mut out = Vec::new();
        p.feed(stream, &mut out).unwrap();
        p.finish(&mut out).unwrap();
        let unframed = |l: &str| SseItem::Unframed(l.into());
        assert_eq!(
            out,
            vec![
                ev("", "{\"a\":1}", None),
                unframed("{\"error\": {"),
                unframed("  \"code\": 499"),
                unframed("}}"),
                unframed("foobar: x"),
                SseItem::Comment("ping".into()),
            ]
        );
        assert_eq!(parse(&[stream]), vec![ev("", "{\"a\":1}", None), SseItem::Comment("ping".into())]);
    }

    #[test]
    fn find_line_end_matches_naive_search() {
        let naive = |h: &[u8]| h.iter().position(|&b| b == b'\r' || b == b'\n');
        for filler in 0..=255u8 {
            for len in 0..20 {
                let mut hay = vec![filler; len];
                assert_eq!(find_line_end(&hay), naive(&hay));
                for pos in 0..len {
                    for end in [b'\r', b'\n'] {
                        hay[pos] = end;
                        assert_eq!(find_line_end(&hay), naive(&hay), "{filler} {len} {pos}");
                        hay[pos] = filler;
                    }
                }
            }
        }
    }
}
