//! Recorded provider streams decoded against golden normalized deltas.
//!
//! Each `tests/fixtures/{format}/{case}.sse` is a transcript as the provider sends it on the wire;
//! next to it, `{case}.golden.json` holds what the stream decodes to: the `Delta`s (as serialized
//! for the JS API) and how the stream ended (`"ok"`, or the error). A change to a decoder that
//! alters what a real transcript yields shows up here as a diff of plain JSON.
//!
//! To regenerate goldens after an intended change: `BLESS=1 cargo test --test format_golden`,
//! then review the diff.

use llm_baton_wire::write::ToJson;
use std::fs;
use std::path::{Path, PathBuf};

use llm_baton::chat::Delta;
use llm_baton::format::{DecodeError, FailureClass, Format};
use llm_baton::sse::{SseItem, SseParser};
use serde_json::{json, Value};

/// The cases every format must have a transcript for.
const REQUIRED_CASES: [&str; 4] = ["text", "tool_call", "error", "usage"];

/// The formats that stream SSE. Bedrock's ConverseStream is binary event-stream framing: its
/// streams are checked in src/format/bedrock_converse and against AWS's own codec end to end
/// (tests/e2e/bedrock.test.mjs).
fn sse_formats() -> impl Iterator<Item = Format> {
    Format::ALL.into_iter().filter(|f| *f != Format::BedrockConverse)
}

fn fixtures(format: Format) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format.as_str());
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sse"))
        .collect();
    files.sort();
    files
}

/// Parses a whole transcript, delivered in chunks of `chunk` bytes: its events, and the lines
/// outside SSE framing that the body reader hands the decoder too.
fn events(bytes: &[u8], chunk: usize) -> Vec<SseItem> {
    let mut parser = SseParser::new().reporting_unframed();
    let mut items = Vec::new();
    for piece in bytes.chunks(chunk) {
        parser.feed(piece, &mut items).expect("fixture is valid SSE");
    }
    parser.finish(&mut items).expect("fixture is valid SSE");
    items.retain(|item| !matches!(item, SseItem::Comment(_)));
    items
}

/// Feeds events as the body reader does: stop at the first error, else `finish` at the end.
/// Each event is decoded as a read of its own, so the goldens show each frame's deltas (within
/// one read, adjacent text fragments join into one delta).
fn decode(format: Format, events: &[SseItem]) -> (Vec<Delta>, Result<(), DecodeError>) {
    let mut decoder = format.stream_decoder();
    let mut out = Vec::new();
    for item in events {
        let mut read = Vec::new();
        let fed = match item {
            SseItem::Event(event) => decoder.on_event(event, &mut read),
            SseItem::Unframed(line) => decoder.on_unframed(line),
            SseItem::Comment(_) => Ok(()),
        };
        out.append(&mut read);
        if let Err(e) = fed {
            return (out, Err(e));
        }
    }
    let end = decoder.finish(&mut out);
    (out, end)
}

fn golden(deltas: &[Delta], end: &Result<(), DecodeError>) -> Value {
    let end = match end {
        Ok(()) => json!("ok"),
        Err(DecodeError::Provider { status, message, code, class }) => {
            json!({"provider": {"status": status, "message": message, "code": code, "class": class.map(FailureClass::as_str)}})
        }
        Err(DecodeError::Protocol(message)) => json!({"protocol": message}),
    };
    json!({"deltas": serde_json::from_str::<Value>(&deltas.to_json()).expect("JSON"), "end": end})
}

#[test]
fn transcripts_decode_to_their_goldens() {
    let bless = std::env::var_os("BLESS").is_some();
    let mut mismatches = Vec::new();
    for format in sse_formats() {
        let files = fixtures(format);
        for case in REQUIRED_CASES {
            assert!(
                files.iter().any(|f| f.file_stem().is_some_and(|s| s == case)),
                "tests/fixtures/{}/{case}.sse is missing",
                format.as_str()
            );
        }
        for sse in files {
            let bytes = fs::read(&sse).expect("fixture readable");
            let (deltas, end) = decode(format, &events(&bytes, bytes.len().max(1)));
            // Byte-by-byte delivery must not change what the stream means.
            assert_eq!(decode(format, &events(&bytes, 1)), (deltas.clone(), end.clone()), "{}", sse.display());
            let actual = golden(&deltas, &end);
            let golden_path = sse.with_extension("golden.json");
            if bless {
                let text = serde_json::to_string_pretty(&actual).expect("serializes") + "\n";
                fs::write(&golden_path, text).expect("golden written");
                continue;
            }
            let expected: Value = match fs::read_to_string(&golden_path) {
                Ok(text) => serde_json::from_str(&text).expect("golden is JSON"),
                Err(_) => {
                    mismatches.push(format!("{} has no golden (run with BLESS=1)", sse.display()));
                    continue;
                }
            };
            if expected != actual {
                mismatches.push(format!("{}\n  expected: {expected}\n  actual:   {actual}", sse.display()));
            }
        }
    }
    assert!(mismatches.is_empty(), "golden mismatches:\n{}", mismatches.join("\n"));
}

/// Every successful transcript, cut after each of its events: a cut before the event that says
/// how the answer finished (the success marker, or the finish reason that may stand in for it;
/// see docs/errors.md's "How a stream ends") is a protocol error naming the format, never a
/// success; a cut after it is a success with the same finish reason (usage sent later may be
/// missing).
#[test]
fn transcripts_cut_before_their_finish_fail_and_after_it_succeed() {
    let mut checked = 0;
    for format in sse_formats() {
        for sse in fixtures(format) {
            let events = events(&fs::read(&sse).expect("fixture readable"), usize::MAX);
            let (deltas, end) = decode(format, &events);
            if end.is_err() {
                continue;
            }
            let finish = |deltas: &[Delta]| match deltas.last() {
                Some(Delta::Done { finish_reason, .. }) => Some(finish_reason.clone()),
                _ => None,
            };
            let mut finished = false;
            for cut in 0..events.len() {
                let (cut_deltas, cut_end) = decode(format, &events[..cut]);
                match cut_end {
                    Ok(()) => {
                        finished = true;
                        assert_eq!(finish(&cut_deltas), finish(&deltas), "{} cut at {cut}", sse.display());
                    }
                    Err(DecodeError::Protocol(message)) => {
                        assert!(!finished, "{} cut at {cut}: failed after a shorter cut succeeded", sse.display());
                        assert!(message.starts_with(format.as_str()), "{}: {message}", sse.display());
                        assert!(finish(&cut_deltas).is_none(), "{}", sse.display());
                    }
                    other => panic!("{} cut at {cut} ended with {other:?}", sse.display()),
                }
            }
            let (_, empty) = decode(format, &[]);
            assert!(matches!(empty, Err(DecodeError::Protocol(_))), "{}", sse.display());
            checked += 1;
        }
    }
    assert!(checked >= 12, "only {checked} successful transcripts");
}

/// The normalized meaning of a transcript does not depend on the provider: each success ends with
/// exactly one `Done`, last, and nothing invisible is emitted except a tool call's opening, a
/// usage report, the reasoning state a provider issued and a content filter's results.
#[test]
fn transcripts_end_with_exactly_one_done_and_emit_no_empty_deltas() {
    for format in sse_formats() {
        for sse in fixtures(format) {
            let (deltas, end) = decode(format, &events(&fs::read(&sse).expect("fixture readable"), usize::MAX));
            let dones = deltas.iter().filter(|d| matches!(d, Delta::Done { .. })).count();
            if end.is_ok() {
                assert_eq!(dones, 1, "{}", sse.display());
                assert!(matches!(deltas.last(), Some(Delta::Done { .. })), "{}", sse.display());
            } else {
                assert_eq!(dones, 0, "{}", sse.display());
            }
            for d in &deltas {
                let opening = matches!(d, Delta::ToolCall { id: Some(_), name: Some(_), .. });
                let invisible = matches!(
                    d,
                    Delta::Done { .. }
                        | Delta::Usage { .. }
                        | Delta::ReasoningState { .. }
                        | Delta::ToolCallState { .. }
                        | Delta::ContentFilter { .. }
                );
                assert!(d.is_visible() || opening || invisible, "{}: {d:?}", sse.display());
            }
        }
    }
}
