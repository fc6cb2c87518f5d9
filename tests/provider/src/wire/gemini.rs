//! Gemini (`POST …/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`).
//!
//! A Gemini stream is a sequence of whole `GenerateContentResponse` chunks (`data:` lines only,
//! CRLF-separated as Google sends them); the last one carries `finishReason`. Gemini sends a
//! function call whole, so a tool-call stream has exactly one content event.

use serde_json::{json, Value};

use super::{Answer, ErrorInfo, Event, Output, StreamEvents};

/// `{"error":{"code","message","status"}}` with Google's canonical status names.
pub fn error_body(error: &ErrorInfo) -> Value {
    let status = match error.status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "UNIMPLEMENTED",
        503 | 529 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ if error.status.is_client_error() => "FAILED_PRECONDITION",
        _ => "UNKNOWN",
    };
    // A shared step names the error for Anthropic or OpenAI (`overloaded_error`); Gemini takes
    // only Google's own UPPER_SNAKE names from it and otherwise derives one from the status.
    let status = error.kind.as_deref().filter(|kind| is_canonical_name(kind)).unwrap_or(status);
    json!({"error": {"code": error.status.as_u16(), "message": error.message, "status": status}})
}

fn is_canonical_name(kind: &str) -> bool {
    !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
}

/// `candidates` is the output so far: `None` leaves it out, as Gemini does before the end.
fn chunk(answer: &Answer, parts: Value, finished: bool, candidates: Option<u64>) -> Value {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let input = answer.usage.input_tokens;
    let usage = match (finished, candidates) {
        (true, _) => {
            candidate["finishReason"] = json!("STOP");
            json!({
                "promptTokenCount": input,
                "candidatesTokenCount": answer.usage.output_tokens,
                "totalTokenCount": answer.usage.total(),
            })
        }
        (false, Some(output)) => json!({
            "promptTokenCount": input,
            "candidatesTokenCount": output,
            "totalTokenCount": input.saturating_add(output),
        }),
        (false, None) => json!({"promptTokenCount": input, "totalTokenCount": input}),
    };
    json!({
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": answer.model,
        "responseId": format!("baton{:08}", answer.serial),
    })
}

fn whole_parts(answer: &Answer) -> Value {
    match &answer.output {
        Output::Text { text, .. } => json!([{"text": text}]),
        Output::ToolCall { name, input, .. } => json!([{"functionCall": {"name": name, "args": input}}]),
    }
}

pub fn whole(answer: &Answer) -> Value {
    chunk(answer, whole_parts(answer), true, None)
}

pub fn stream(answer: &Answer) -> StreamEvents {
    let so_far = |written: u64| answer.usage_per_event.then_some(written);
    let content = match &answer.output {
        Output::Text { fragments, .. } => fragments
            .iter()
            .zip(1..)
            .map(|(fragment, written)| Event::data(chunk(answer, json!([{"text": fragment}]), false, so_far(written))))
            .collect(),
        Output::ToolCall { .. } => vec![Event::data(chunk(answer, whole_parts(answer), false, so_far(1)))],
    };
    StreamEvents {
        preamble: Vec::new(),
        content,
        closing: Vec::new(),
        marker: vec![Event::data(chunk(answer, json!([{"text": ""}]), true, None))],
    }
}
