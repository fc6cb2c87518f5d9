//! Anthropic Messages (`POST …/messages`).

use serde_json::{json, Value};

use super::{Answer, ErrorInfo, Event, Output, StreamEvents};

/// `{"type":"error","error":{"type","message"}}`, also the data of an in-stream `event: error`.
pub fn error_body(error: &ErrorInfo) -> Value {
    let kind = match error.status.as_u16() {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        _ if error.status.is_client_error() => "invalid_request_error",
        _ => "api_error",
    };
    let kind = error.kind.as_deref().unwrap_or(kind);
    json!({"type": "error", "error": {"type": kind, "message": error.message}})
}

fn id(answer: &Answer) -> String {
    format!("msg_baton{:08}", answer.serial)
}

fn tool_use_id(answer: &Answer) -> String {
    format!("toolu_baton{:08}", answer.serial)
}

fn stop_reason(answer: &Answer) -> &'static str {
    match answer.output {
        Output::Text { .. } => "end_turn",
        Output::ToolCall { .. } => "tool_use",
    }
}

fn message(answer: &Answer, content: Value, stop_reason: Value, output_tokens: u64) -> Value {
    json!({
        "id": id(answer),
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": {
            "input_tokens": answer.usage.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    })
}

pub fn whole(answer: &Answer) -> Value {
    let block = match &answer.output {
        Output::Text { text, .. } => json!({"type": "text", "text": text}),
        Output::ToolCall { name, input, .. } => {
            json!({"type": "tool_use", "id": tool_use_id(answer), "name": name, "input": input})
        }
    };
    message(answer, json!([block]), json!(stop_reason(answer)), answer.usage.output_tokens)
}

pub fn stream(answer: &Answer) -> StreamEvents {
    let block = match &answer.output {
        Output::Text { .. } => json!({"type": "text", "text": ""}),
        Output::ToolCall { name, .. } => {
            json!({"type": "tool_use", "id": tool_use_id(answer), "name": name, "input": {}})
        }
    };
    let content = answer
        .output
        .fragments()
        .iter()
        .map(|fragment| {
            let delta = match answer.output {
                Output::Text { .. } => json!({"type": "text_delta", "text": fragment}),
                Output::ToolCall { .. } => json!({"type": "input_json_delta", "partial_json": fragment}),
            };
            Event::named("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta}))
        })
        .collect();
    StreamEvents {
        preamble: vec![
            Event::named(
                "message_start",
                json!({"type": "message_start", "message": message(answer, json!([]), Value::Null, 1)}),
            ),
            Event::named(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": block}),
            ),
            Event::named("ping", json!({"type": "ping"})),
        ],
        content,
        closing: vec![
            Event::named("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
            Event::named(
                "message_delta",
                json!({
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason(answer), "stop_sequence": null},
                    "usage": {"output_tokens": answer.usage.output_tokens},
                }),
            ),
        ],
        marker: vec![Event::named("message_stop", json!({"type": "message_stop"}))],
    }
}
