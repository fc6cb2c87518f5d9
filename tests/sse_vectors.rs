//! SSE parser vectors: the edge cases of eventsource-parser's test suite (rexxars/eventsource-parser,
//! test/parse.test.ts), restated as input bytes -> expected items, plus our own bounds and byte
//! cases. Every vector must give the same result however its input is chunked.

use llm_baton::sse::{SseError, SseEvent, SseItem, SseParser};
use proptest::prelude::*;

/// Everything observable after a stream: items, the error that stopped it, retry and last id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    items: Vec<SseItem>,
    error: Option<SseError>,
    retry: Option<u64>,
    last_id: Option<String>,
}

struct Vector {
    name: &'static str,
    /// The chunks as the original test delivered them; the concatenation is the stream.
    chunks: Vec<Vec<u8>>,
    max: usize,
    expect: Outcome,
}

impl Vector {
    fn input(&self) -> Vec<u8> {
        self.chunks.concat()
    }
    fn items(mut self, items: Vec<SseItem>) -> Self {
        self.expect.items = items;
        self
    }
    fn retry(mut self, ms: u64) -> Self {
        self.expect.retry = Some(ms);
        self
    }
    fn last_id(mut self, id: &str) -> Self {
        self.expect.last_id = Some(id.into());
        self
    }
    fn max(mut self, max: usize) -> Self {
        self.max = max;
        self
    }
    fn error(mut self, error: SseError) -> Self {
        self.expect.error = Some(error);
        self
    }
}

const DEFAULT_MAX: usize = 1 << 20;

fn v(name: &'static str, chunks: &[&[u8]]) -> Vector {
    vb(name, chunks.iter().map(|c| c.to_vec()).collect())
}

fn vb(name: &'static str, chunks: Vec<Vec<u8>>) -> Vector {
    let expect = Outcome { items: vec![], error: None, retry: None, last_id: None };
    Vector { name, chunks, max: DEFAULT_MAX, expect }
}

/// An unnamed event.
fn d(data: &str) -> SseItem {
    ev("", data, None)
}

/// A named event.
fn n(event: &str, data: &str) -> SseItem {
    ev(event, data, None)
}

fn ev(event: &str, data: &str, id: Option<&str>) -> SseItem {
    SseItem::Event(SseEvent { event: event.into(), data: data.into(), id: id.map(Into::into) })
}

fn c(text: &str) -> SseItem {
    SseItem::Comment(text.into())
}

fn long_line_error(limit: usize) -> SseError {
    SseError::LineTooLong { limit }
}

fn vectors() -> Vec<Vector> {
    let x2049 = "x".repeat(2049);
    vec![
        // --- from eventsource-parser: plain streams ---
        v(
            "basic unnamed events",
            &[b"data: 0\n\n", b"data: 1\n\n", b"data: 2\n\n", "event: done\ndata: ✔\n\n".as_bytes()],
        )
        .items(vec![d("0"), d("1"), d("2"), n("done", "✔")]),
        v("named events", &[b"event: time\ndata: 2024-01-01T00:00:00.000Z\n\n", b"event: time\ndata: t2\n\n"])
            .items(vec![n("time", "2024-01-01T00:00:00.000Z"), n("time", "t2")]),
        v(
            "identified events with retry",
            &[b"event: tick\nid: 1337\nretry: 50\ndata: 1337\n\n", b"event: tick\nid: 1338\nretry: 50\ndata: 1338\n\n"],
        )
        .items(vec![ev("tick", "1337", Some("1337")), ev("tick", "1338", Some("1338"))])
        .retry(50)
        .last_id("1338"),
        v(
            "heartbeat comments between events",
            &[": ♥\n\n".as_bytes(), b"data: A\n\n", ": ♥\n\n".as_bytes(), b"data: B\n\n"],
        )
        .items(vec![c("♥"), d("A"), c("♥"), d("B")]),
        v(
            "multi-line data",
            &[
                b"event: stock\n",
                b"data: YHOO\n",
                b"data: +2\n",
                b"data: 10\n\n",
                b"event: stock\ndata: GOOG\ndata: -8\ndata: 1881\n\n",
            ],
        )
        .items(vec![n("stock", "YHOO\n+2\n10"), n("stock", "GOOG\n-8\n1881")]),
        v("multi-byte data split inside the line", &["id: 0\ndata:我現在".as_bytes(), "都看實況 😀 🦀\n\n".as_bytes()])
            .items(vec![ev("", "我現在都看實況 😀 🦀", Some("0"))])
            .last_id("0"),
        v(
            "multi-byte data after empty lines",
            &["\n\n\n\nid: 1\ndata: 我現在都看實況不玩遊戲\n\n".as_bytes(), "event: done\ndata: ✔\n\n".as_bytes()],
        )
        .items(vec![ev("", "我現在都看實況不玩遊戲", Some("1")), n("done", "✔")])
        .last_id("1"),
        // --- byte order marks ---
        v("leading BOM stripped", &[b"\xEF\xBB\xBFdata: bomful 1\n\n", b"data: bomless 2\n\n"])
            .items(vec![d("bomful 1"), d("bomless 2")]),
        v(
            "BOM later in stream makes the line an unknown field",
            &[b"\xEF\xBB\xBFdata: bomful 1\n\n", b"\xEF\xBB\xBFdata: bomful 2\n\n", b"data: bomless 3\n\n"],
        )
        .items(vec![d("bomful 1"), d("bomless 3")]),
        v("BOM not at stream start is kept", &[b"data: a\n\n\xEF\xBB\xBFdata: b\n\ndata: c\n\n"])
            .items(vec![d("a"), d("c")]),
        v("only the first of two leading BOMs is stripped", &[b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"])
            .items(vec![d("y")]),
        v("BOM split across three chunks", &[b"\xEF", b"\xBB", b"\xBFdata: x\n\n"]).items(vec![d("x")]),
        v("partial BOM is line content", &[b"\xEF\xBBdata: x\n\ndata: y\n\n"]).items(vec![d("y")]),
        v("partial BOM then line end", &[b"\xEF\n", b"data: y\n\n"]).items(vec![d("y")]),
        v("BOM alone", &[b"\xEF\xBB\xBF"]),
        v("BOM inside data kept", &[b"data: a\xEF\xBB\xBFb\n\n"]).items(vec![d("a\u{FEFF}b")]),
        // --- line ends ---
        v("CR line ends", &[b"data: dog\r", b"data: bark\r\r", b"data: cat\r", b"data: meow\r\r"])
            .items(vec![d("dog\nbark"), d("cat\nmeow")]),
        v("LF line ends", &[b"data: cow\n", b"data: moo\n\n", b"data: horse\n", b"data: neigh\n\n"])
            .items(vec![d("cow\nmoo"), d("horse\nneigh")]),
        v("CRLF line ends", &[b"data: sheep\r\n", b"data: bleat\r\n\r\n", b"data: pig\r\n", b"data: oink\r\n\r\n"])
            .items(vec![d("sheep\nbleat"), d("pig\noink")]),
        v("mixed line ends", &[b"data: a\rdata: b\ndata: c\r\n\r\ndata: d\n\r"]).items(vec![d("a\nb\nc"), d("d")]),
        v("CR at chunk end, LF at next chunk start", &[b"data: A\r\n", b"data: B\r", b"\n", b"data: C\r\n", b"\n"])
            .items(vec![d("A\nB\nC")]),
        v("blank CR line split from its LF dispatches once", &[b"data: one\r", b"\r", b"\n"]).items(vec![d("one")]),
        v("LF CR LF is two line ends", &[b"data: x\n\r\ndata: y\n\n"]).items(vec![d("x"), d("y")]),
        v("LF then CR dispatches", &[b"data: x\n\r"]).items(vec![d("x")]),
        v("blank lines only", &[b"\n\n\r\n\r\r"]),
        v("empty stream", &[]),
        // --- comments ---
        v("odd comments", &[b": Hello\n\n", ":".repeat(300).as_bytes(), b"\n", b"data: First\n\n"]).items(vec![
            c("Hello"),
            c(&":".repeat(299)),
            d("First"),
        ]),
        v(
            "comment built from split multi-byte chunks",
            &[": Первый".as_bytes(), ": 第二".as_bytes(), b"\n", b"data: Second\n\n"],
        )
        .items(vec![c("Первый: 第二"), d("Second")]),
        v("repeated comments", &[b": Moop \n: Moop \n", ":നാലാമത്തെ\n".as_bytes(), b"data: Fourth\n\n"]).items(vec![
            c("Moop "),
            c("Moop "),
            c("നാലാമത്തെ"),
            d("Fourth"),
        ]),
        v("empty comment", &[b":\n:\r\n"]).items(vec![c(""), c("")]),
        v("comment keeps a second space", &[b":  two\n"]).items(vec![c(" two")]),
        vb(
            "even more odd comments",
            vec![
                b"data:1\r\r:\0\n:\r\ndata:2\n\n:".to_vec(),
                x2049.clone().into_bytes(),
                b"\rdata:3\n\n:data:fail\r:".to_vec(),
                x2049.clone().into_bytes(),
                b"\ndata:4\n\n".to_vec(),
                b"data:5".to_vec(),
            ],
        )
        .items(vec![
            d("1"),
            c("\0"),
            c(""),
            d("2"),
            c(&x2049),
            d("3"),
            c("data:fail"),
            c(&x2049),
            d("4"),
            d("5"),
        ]),
        // --- fields ---
        v("empty event field", &[b"event:\ndata: Hello 1\n\n", b"event:\n\n", "event: done\ndata: ✔\n\n".as_bytes()])
            .items(vec![d("Hello 1"), n("done", "✔")]),
        v(
            "empty retry field ignored",
            &[
                "id: 1\nretry: 500\ndata: 🥌\n\n".as_bytes(),
                "id:2\nretry:\ndata:🧹\n\n".as_bytes(),
                "id: 3\ndata: ✅\n\n".as_bytes(),
            ],
        )
        .items(vec![ev("", "🥌", Some("1")), ev("", "🧹", Some("2")), ev("", "✅", Some("3"))])
        .retry(500)
        .last_id("3"),
        v("oddly shaped data fields", &[b"data:\n\ndata\ndata\n\ndata:test\n\n"]).items(vec![
            d(""),
            d("\n"),
            d("test"),
        ]),
        v("partially invalid retry", &[b"retry:1000\nretry:2000x\ndata:x\n\n"]).items(vec![d("x")]).retry(1000),
        v("invalid retry after valid one", &[b"\nretry: 500\n\ndata: first\n\nretry: 50x\n\ndata: second\n\n"])
            .items(vec![d("first"), d("second")])
            .retry(500),
        v(
            "retry must be ASCII digits only",
            &["retry: 7\nretry: +5\nretry: -5\nretry:  5\nretry: 5 \nretry: 1.5\nretry: ١٢\n".as_bytes()],
        )
        .retry(7),
        v("retry overflowing u64 ignored", &[b"retry: 42\nretry: 99999999999999999999999\n"]).retry(42),
        v("retry zero and leading zeros", &[b"retry: 0010\n"]).retry(10),
        v("id with NUL ignored", &[b"id: 123\nid: bad\0id\ndata: hello\n\n"])
            .items(vec![ev("", "hello", Some("123"))])
            .last_id("123"),
        v("id without data updates last id only", &[b"id: 42\n", b"\n"]).last_id("42"),
        v("id with NUL in block without data", &[b"id: 42\n\nid: bad\0id\n\n"]).last_id("42"),
        v("empty id resets last id", &[b"id: 42\n\nid:\n\n"]),
        v("empty id on an event", &[b"id: 42\n\nid:\ndata: x\n\n"]).items(vec![ev("", "x", Some(""))]),
        v("id belongs to its own block only", &[b"id: 1\ndata: a\n\ndata: b\n\n"])
            .items(vec![ev("", "a", Some("1")), d("b")])
            .last_id("1"),
        v("id block ended by CR", &[b"id: 42\r\r"]).last_id("42"),
        v("id block ended by CRLF", &[b"id: 42\r\n\r\n"]).last_id("42"),
        v(
            "unknown fields ignored",
            &[b"data:abc\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:123\n\n"],
        )
        .items(vec![c("thisisacommentyay"), d("abc\n\n123")]),
        v("comment line ended by CRLF split across chunks", &[b"data: one\n:", b"ignored\r", b"\ndata: two\n\n"])
            .items(vec![c("ignored"), d("one\ntwo")]),
        v("comment line ended by a bare CR at chunk end", &[b"data: one\n:", b"ignored\r", b"data: two\n\n"])
            .items(vec![c("ignored"), d("one\ntwo")]),
        v("bare field name ended by CR at chunk end", &[b"data: one\ndata\r", b"\ndata: two\n\n"])
            .items(vec![d("one\n\ntwo")]),
        v("garbage line ended by CR", &[b"garbage\r", b"data: ok\n\n"]).items(vec![d("ok")]),
        v("JSON body instead of SSE", &[br#"{"error":"Internal Server Error","message":"no"}"#]),
        v("JSON body line instead of SSE", &[b"{\"error\":\"x\"}\ndata: ok\n\n"]).items(vec![d("ok")]),
        v("one leading space removed", &[b"data:  two\n\ndata:none\n\ndata:\ttab\n\n"]).items(vec![
            d(" two"),
            d("none"),
            d("\ttab"),
        ]),
        v("space before colon makes another field", &[b"data : x\n\n data: y\n\n"]),
        v("field names are case-sensitive", &[b"DATA: x\n\nEvent: e\ndata: y\n\n"]).items(vec![d("y")]),
        v("colon inside value kept", &[b"data: a:b: c\n\n"]).items(vec![d("a:b: c")]),
        v("NUL inside data kept", &[b"data: a\0b\n\n"]).items(vec![d("a\0b")]),
        v("last event field wins", &[b"event: a\nevent: b\ndata: x\n\n"]).items(vec![n("b", "x")]),
        v("event without data not dispatched, name reset", &[b"event: ping\n\ndata: x\n\n"]).items(vec![d("x")]),
        // --- end of stream ---
        v("trailing event without blank line", &[b"data: a\n\ndata: last"]).items(vec![d("a"), d("last")]),
        v("trailing event after its line end", &[b"event: e\ndata: a\n"]).items(vec![n("e", "a")]),
        v("trailing CR before finish", &[b"data: x\r"]).items(vec![d("x")]),
        v("trailing id without data", &[b"id: 9"]).last_id("9"),
        // --- bytes ---
        v("UTF-8 split across chunks", &[b"data: \xF0\x9F", b"\x98\x80 \xC3", b"\xA9\n\n"]).items(vec![d("😀 é")]),
        v("invalid UTF-8 decoded lossily", &[b"data: \xFF\xFE ok\n\nevent: \xC3\ndata: \xE6\x88\n\n"])
            .items(vec![d("\u{FFFD}\u{FFFD} ok"), n("\u{FFFD}", "\u{FFFD}")]),
        v("invalid UTF-8 in comment", &[b":\x80\n"]).items(vec![c("\u{FFFD}")]),
        // --- bounds ---
        v("line at the limit", &[b"data: ab\n\n"]).max(8).items(vec![d("ab")]),
        v("line over the limit", &[b"data: abc\n\n"]).max(8).error(long_line_error(8)),
        v("unterminated line over the limit", &[b"data: ", b"abcdef"]).max(8).error(long_line_error(8)),
        v("events before a long line survive", &[b"data: a\n\n", b"data: 0123456789abcdef\n\n", b"data: b\n\n"])
            .max(16)
            .items(vec![d("a")])
            .error(long_line_error(16)),
        v("long comment is a long line", &[b":0123456789\n"]).max(4).error(long_line_error(4)),
        v("zero limit allows blank lines only", &[b"\n\r\n\r", b"d"]).max(0).error(long_line_error(0)),
        v("partial BOM counts at finish", &[b"\xEF\xBB"]).max(1).error(long_line_error(1)),
        v("event data at the limit", &[b"data:123\ndata:456\ndata:\n\n"]).max(8).items(vec![d("123\n456\n")]),
        v("event data over the limit", &[b"data:123\ndata:456\ndata:7\n\n"])
            .max(8)
            .error(SseError::EventTooLarge { limit: 8 }),
        vb("long line under the default limit", vec![format!("data: {}\n\n", "y".repeat(5000)).into_bytes()])
            .items(vec![d(&"y".repeat(5000))]),
    ]
}

fn run<'a>(max: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
    let mut p = SseParser::with_max_line(max);
    let mut items = Vec::new();
    let mut result = Ok(());
    for chunk in chunks {
        result = p.feed(chunk, &mut items);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = p.finish(&mut items);
    }
    Outcome { items, error: result.err(), retry: p.retry_ms(), last_id: p.last_event_id().map(Into::into) }
}

fn run_whole(max: usize, input: &[u8]) -> Outcome {
    run(max, [input])
}

#[test]
fn vectors_give_expected_outcome() {
    let all = vectors();
    assert!(all.len() >= 50, "{} vectors", all.len());
    for vec in &all {
        let chunked = run(vec.max, vec.chunks.iter().map(Vec::as_slice));
        assert_eq!(chunked, vec.expect, "vector {:?} (as chunked)", vec.name);
        assert_eq!(run_whole(vec.max, &vec.input()), vec.expect, "vector {:?} (whole)", vec.name);
    }
}

#[test]
fn vectors_are_split_invariant() {
    for vec in vectors() {
        let input = vec.input();
        let whole = run_whole(vec.max, &input);
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(run(vec.max, [a, b]), whole, "vector {:?} split at {at}", vec.name);
        }
        assert_eq!(run(vec.max, input.chunks(1)), whole, "vector {:?} byte by byte", vec.name);
        // Empty chunks between bytes change nothing either.
        let with_empty = input.chunks(1).flat_map(|b| [b, &[][..]]);
        assert_eq!(run(vec.max, with_empty), whole, "vector {:?} with empty chunks", vec.name);
    }
}

#[test]
fn error_messages() {
    assert_eq!(SseError::LineTooLong { limit: 1 << 20 }.to_string(), "SSE line longer than 1048576 bytes");
    assert_eq!(SseError::EventTooLarge { limit: 8 }.to_string(), "SSE event data longer than 8 bytes");
}

#[test]
fn reset_forgets_everything() {
    let mut p = SseParser::with_max_line(32);
    let mut out = Vec::new();
    p.feed(b"\xEF\xBB\xBFretry: 5\nid: 1\n\nevent: e\ndata: half", &mut out).unwrap();
    p.reset();
    assert_eq!((p.retry_ms(), p.last_event_id()), (None, None));
    // A fresh stream: a BOM is stripped again and nothing of the old block leaks in.
    p.feed(b"\xEF\xBB\xBFdata: new\n\n", &mut out).unwrap();
    assert_eq!(out, vec![d("new")]);
}

#[test]
fn finish_starts_a_new_stream_keeping_retry_and_id() {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.feed(b"retry: 5\nid: 1\ndata: a", &mut out).unwrap();
    p.finish(&mut out).unwrap();
    p.feed(b"\xEF\xBB\xBFdata: b\n\n", &mut out).unwrap();
    p.finish(&mut out).unwrap();
    assert_eq!(out, vec![ev("", "a", Some("1")), d("b")]);
    assert_eq!((p.retry_ms(), p.last_event_id()), (Some(5), Some("1")));
}

/// A deliberately naive reading of the spec, over the whole input at once, to check the
/// streaming parser against (lines split eagerly, no bounds).
fn reference(input: &[u8]) -> Outcome {
    let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'\r' || input[i] == b'\n' {
            lines.push(&input[start..i]);
            i += if input[i] == b'\r' && input.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
            start = i;
        } else {
            i += 1;
        }
    }
    if start < input.len() {
        lines.push(&input[start..]);
    }
    lines.push(b"");
    let mut out = Outcome { items: vec![], error: None, retry: None, last_id: None };
    let (mut data, mut event, mut id) = (None::<String>, String::new(), None::<String>);
    for line in lines {
        let line = String::from_utf8_lossy(line);
        if line.is_empty() {
            if let Some(id) = &id {
                out.last_id = Some(id.clone()).filter(|id| !id.is_empty());
            }
            match data.take() {
                Some(data) => out.items.push(SseItem::Event(SseEvent { event: event.clone(), data, id: id.take() })),
                None => id = None,
            }
            event.clear();
        } else if let Some(comment) = line.strip_prefix(':') {
            out.items.push(c(comment.strip_prefix(' ').unwrap_or(comment)));
        } else {
            let (name, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match name {
                "data" => data = Some(data.map_or(value.to_string(), |d| d + "\n" + value)),
                "event" => event = value.to_string(),
                "id" if !value.contains('\0') => id = Some(value.to_string()),
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    out.retry = value.parse().ok().or(out.retry)
                }
                _ => {}
            }
        }
    }
    out
}

/// Streams made of the pieces that matter to the grammar, so random inputs hit real cases.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let pieces: Vec<&'static [u8]> = vec![
        b"data",
        b"event",
        b"id",
        b"retry",
        b":",
        b": ",
        b" ",
        b"\r",
        b"\n",
        b"\r\n",
        b"x",
        b"42",
        b"9x",
        b"\0",
        b"\xEF\xBB\xBF",
        b"\xEF",
        b"\xBB",
        b"\xBF",
        "é".as_bytes(),
        "😀".as_bytes(),
        b"\xF0\x9F",
        b"\xFF",
    ];
    prop::collection::vec(prop::sample::select(pieces), 0..40).prop_map(|p| p.concat())
}

/// Cuts `input` at the given fractions (in 0..=1000), chunks possibly empty.
fn cut<'a>(input: &'a [u8], cuts: &[u16]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|&c| input.len() * usize::from(c.min(1000)) / 1000).collect();
    at.sort_unstable();
    let mut chunks = Vec::new();
    let mut prev = 0;
    for a in at {
        chunks.push(&input[prev..a]);
        prev = a;
    }
    chunks.push(&input[prev..]);
    chunks
}

proptest! {
    #[test]
    fn random_chunking_of_vectors(index in 0usize..1000, cuts in prop::collection::vec(0u16..=1000, 0..12)) {
        let all = vectors();
        let vec = &all[index % all.len()];
        let input = vec.input();
        prop_assert_eq!(run(vec.max, cut(&input, &cuts)), vec.expect.clone(), "vector {:?}", vec.name);
    }

    #[test]
    fn random_streams_match_reference_in_any_chunking(input in sse_bytes(), cuts in prop::collection::vec(0u16..=1000, 0..12)) {
        let expected = reference(&input);
        prop_assert_eq!(run_whole(DEFAULT_MAX, &input), expected.clone());
        prop_assert_eq!(run(DEFAULT_MAX, cut(&input, &cuts)), expected);
    }

    #[test]
    fn random_bytes_are_split_invariant(input in prop::collection::vec(any::<u8>(), 0..200), max in 0usize..64, cuts in prop::collection::vec(0u16..=1000, 0..12)) {
        prop_assert_eq!(run(max, cut(&input, &cuts)), run_whole(max, &input));
    }
}
