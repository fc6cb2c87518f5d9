//! How long native code takes to decode the 10 MB OpenAI stream that bench/cost.mjs section 3
//! times in wasm: `cargo run --release --example stream_decode_speed`. The same bytes, fed in
//! 16 KiB reads through `StreamBody` (SSE framing and the format's decoder), p50 of 15 runs.

use std::time::Instant;

use llm_baton::body::StreamBody;
use llm_baton::chat::Delta;
use llm_baton::format::Format;

fn stream() -> Vec<u8> {
    let frame = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\"scripted-model\",\"choices\":[{{\"index\":0,\"delta\":{{{delta}}},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let mut sse = String::new();
    let mut k = 0;
    while sse.len() < 10 << 20 {
        sse.push_str(&frame(&format!("\"content\":\" token{}\"", k % 977), "null"));
        k += 1;
    }
    sse.push_str(&frame("", "\"stop\""));
    sse.push_str("data: [DONE]\n\n");
    sse.into_bytes()
}

fn decode(sse: &[u8]) -> usize {
    let mut body = StreamBody::new(Format::OpenaiChat);
    let mut out = Vec::new();
    let mut chars = 0;
    let mut count = |out: &mut Vec<Delta>| {
        for delta in out.drain(..) {
            if let Delta::Text { text } = delta {
                chars += text.len();
            }
        }
    };
    for read in sse.chunks(16 << 10) {
        body.feed(read, &mut out).expect("a well-formed stream");
        count(&mut out);
    }
    body.finish(&mut out).expect("a whole stream");
    count(&mut out);
    chars
}

fn main() {
    let sse = stream();
    let chars = decode(&sse);
    let mut times: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            assert_eq!(decode(&sse), chars);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{} bytes, {chars} text bytes: p50 {:.1} ms", sse.len(), times[times.len() / 2]);
}
