//! The stream's first two layers on their own: SSE framing, and the formats' decoders; and
//! Bedrock's binary event stream through its whole body reader.

use llm_baton::body::StreamBody;
use llm_baton::chat::{Delta, Usage};
use llm_baton::format::{Cloud, Format};
use llm_baton::outcome::Failure;
use llm_baton::sse::{SseError, SseEvent, SseItem, SseParser};

use super::alloc_meter::bounded_by_input;

type SseOutcome = (Vec<SseItem>, Option<SseError>, Option<u64>, Option<String>);

fn parse_all<'a>(p: &mut SseParser, chunks: impl IntoIterator<Item = &'a [u8]>) -> SseOutcome {
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
    (items, result.err(), p.retry_ms(), p.last_event_id().map(Into::into))
}

/// SSE parser: no panic on any bytes, and the same items, error, retry and last id whether the
/// stream arrives whole, in arbitrary chunks (empty ones included) or byte by byte.
///
/// Byte 0 picks the line limit (small ones exercise the bounds), byte 1 seeds the chunk sizes.
pub fn sse(data: &[u8]) {
    let [limit, seed, stream @ ..] = data else { return };
    let max = if *limit < 128 { usize::from(*limit) } else { 1 << 20 };

    let mut p = SseParser::with_max_line(max);
    let whole = bounded_by_input(data.len(), || parse_all(&mut p, [stream]));

    let chunks = random_chunks(stream, *seed, 17);
    // The same parser after reset must behave as new.
    p.reset();
    assert_eq!(parse_all(&mut p, chunks), whole, "random chunks");
    assert_eq!(parse_all(&mut SseParser::with_max_line(max), stream.chunks(1)), whole, "byte by byte");
}

/// A Bedrock stream body (AWS event-stream framing, then the decoder of ConverseStream, and of
/// Anthropic on Bedrock's chunks) read whole, in arbitrary chunks and byte by byte: no panic, the
/// same deltas (adjacent texts joined, as a read joins them) and the same end every way. Byte 0
/// seeds the chunk sizes.
pub fn event_stream(data: &[u8]) {
    for format in [Format::BedrockConverse, Format::AnthropicMessages] {
        event_stream_as(format, data);
    }
}

fn event_stream_as(format: Format, data: &[u8]) {
    let [seed, stream @ ..] = data else { return };
    let whole = bounded_by_input(data.len(), || read_body(format, [stream]));
    let chunks = random_chunks(stream, *seed, 23);
    assert_eq!(read_body(format, chunks), whole, "{format:?}: random chunks");
    assert_eq!(read_body(format, stream.chunks(1)), whole, "{format:?}: byte by byte");
}

/// `stream` cut into chunks of 0 to `sizes - 1` bytes (empty ones included), the sizes drawn by
/// a xorshift generator from `seed`, so a failing input replays the same cuts.
fn random_chunks(stream: &[u8], seed: u8, sizes: usize) -> Vec<&[u8]> {
    let mut rng = u32::from(seed) | 0x100;
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        let (chunk, tail) = rest.split_at((rng as usize % sizes).min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

fn read_body<'a>(format: Format, chunks: impl IntoIterator<Item = &'a [u8]>) -> (Vec<Delta>, Result<(), Failure>) {
    let mut body = StreamBody::on(format, Some(Cloud::Bedrock));
    let mut deltas: Vec<Delta> = Vec::new();
    let mut out = Vec::new();
    for chunk in chunks {
        let fed = body.feed(chunk, &mut out);
        join_texts(&mut deltas, &mut out);
        if fed.is_err() {
            return (deltas, fed);
        }
    }
    let result = body.finish(&mut out);
    join_texts(&mut deltas, &mut out);
    (deltas, result)
}

fn join_texts(deltas: &mut Vec<Delta>, out: &mut Vec<Delta>) {
    for delta in out.drain(..) {
        match (deltas.last_mut(), delta) {
            (Some(Delta::Text { text }), Delta::Text { text: more }) => text.push_str(&more),
            (_, delta) => deltas.push(delta),
        }
    }
}

/// Format decoders: no panic on any input. The bytes are fed to all four stream decoders as SSE
/// events (one per line, `name<TAB>data` or bare data), then each decoder is finished: at most
/// one `Done`, and exactly one when nothing failed. The same bytes are also a whole answer body
/// and an error body for every format.
pub fn decoders(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let events: Vec<SseEvent> = text
        .split('\n')
        .map(|line| match line.split_once('\t') {
            Some((name, data)) => SseEvent { event: name.into(), data: data.into(), id: None },
            None => SseEvent { event: String::new(), data: line.into(), id: None },
        })
        .collect();
    for format in Format::ALL {
        bounded_by_input(data.len(), || {
            let mut decoder = format.stream_decoder();
            let mut out = Vec::new();
            let mut failed = false;
            for event in &events {
                // Keep feeding after an error too: a decoder must stay panic-free whatever the caller does.
                failed |= decoder.on_event(event, &mut out).is_err();
            }
            let finished = decoder.finish(&mut out);
            let dones = out.iter().filter(|d| matches!(d, Delta::Done { .. })).count();
            assert!(dones <= 1, "{format:?} emitted {dones} Done deltas");
            if !failed && finished.is_ok() {
                assert_eq!(dones, 1, "{format:?} finished without Done");
            }
            usage_reports_are_changes(format, &out);
            let _ = format.decode_answer(data);
            let _ = format.error_body(500, data).message;
        });
    }
}

/// Each `Delta::Usage` differs from the one before (the first from no counts at all). Where the
/// decoder's end reports its running counts (every format but Responses, whose end carries its
/// own), the `Done`'s usage is the last one reported: a cut stream has said what the end would.
fn usage_reports_are_changes(format: Format, out: &[Delta]) {
    let mut reported = Usage::default();
    for delta in out {
        match delta {
            Delta::Usage { usage } => {
                assert_ne!(*usage, reported, "{format:?} reported an unchanged usage");
                reported = *usage;
            }
            Delta::Done { usage, .. } if format != Format::OpenaiResponses => {
                assert_eq!(*usage, reported, "{format:?} ended with a usage it had not reported");
            }
            _ => {}
        }
    }
}
