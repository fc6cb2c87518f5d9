//! SSE parser: no panic on any bytes, and the same items, error, retry and last id whether the
//! stream arrives whole, in arbitrary chunks (empty ones included) or byte by byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_baton::sse::{SseError, SseItem, SseParser};

type Outcome = (Vec<SseItem>, Option<SseError>, Option<u64>, Option<String>);

fn run<'a>(p: &mut SseParser, chunks: impl IntoIterator<Item = &'a [u8]>) -> Outcome {
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

fuzz_target!(|data: &[u8]| {
    // Byte 0 picks the line limit (small ones exercise the bounds), byte 1 seeds the chunk sizes.
    let [limit, seed, stream @ ..] = data else { return };
    let max = if *limit < 128 { usize::from(*limit) } else { 1 << 20 };

    let mut p = SseParser::with_max_line(max);
    let whole = run(&mut p, [stream]);

    let mut rng = u32::from(*seed) | 0x100;
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        let (chunk, tail) = rest.split_at((rng as usize % 17).min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    // The same parser after reset must behave as new.
    p.reset();
    assert_eq!(run(&mut p, chunks), whole, "random chunks");
    assert_eq!(run(&mut SseParser::with_max_line(max), stream.chunks(1)), whole, "byte by byte");
});
