//! OpenAI Chat Completions (`POST …/chat/completions`), also spoken by most "OpenAI-compatible" APIs.

use serde_json::{json, Value};

use super::{token_logprobs, Answer, ErrorInfo, Event, EventData, Output, StreamEvents};

/// `{"error":{"message","type","param","code"}}`; the Responses API uses the same shape.
pub fn error_body(error: &ErrorInfo) -> Value {
    let (kind, code) = match error.status.as_u16() {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        404 => ("invalid_request_error", Some("model_not_found")),
        429 => ("requests", Some("rate_limit_exceeded")),
        _ if error.status.is_client_error() => ("invalid_request_error", None),
        _ => ("server_error", None),
    };
    let kind = error.kind.as_deref().unwrap_or(kind);
    json!({"error": {"message": error.message, "type": kind, "param": null, "code": code}})
}

fn id(answer: &Answer) -> String {
    format!("chatcmpl-baton{:08}", answer.serial)
}

fn call_id(answer: &Answer) -> String {
    format!("call_baton{:08}", answer.serial)
}

fn finish_reason(answer: &Answer) -> &'static str {
    match answer.output {
        Output::Text { .. } => "stop",
        Output::ToolCall { .. } => "tool_calls",
    }
}

fn usage(answer: &Answer) -> Value {
    usage_with(answer, answer.usage.output_tokens)
}

fn usage_with(answer: &Answer, completion_tokens: u64) -> Value {
    json!({
        "prompt_tokens": answer.usage.input_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": answer.usage.input_tokens.saturating_add(completion_tokens),
    })
}

pub fn whole(answer: &Answer) -> Value {
    let message = match &answer.output {
        Output::Text { text, .. } => {
            json!({"role": "assistant", "content": text, "refusal": null, "annotations": []})
        }
        Output::ToolCall { name, arguments, .. } => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": call_id(answer), "type": "function", "function": {"name": name, "arguments": arguments}}],
            "refusal": null,
            "annotations": [],
        }),
    };
    let logprobs = match (&answer.output, answer.top_logprobs) {
        (Output::Text { fragments, .. }, Some(top)) => {
            logprobs(fragments.iter().map(|f| token_logprobs(f, top)).collect())
        }
        _ => Value::Null,
    };
    json!({
        "id": id(answer),
        "object": "chat.completion",
        "created": answer.created,
        "model": answer.model,
        "choices": [{"index": 0, "message": message, "logprobs": logprobs, "finish_reason": finish_reason(answer)}],
        "usage": usage(answer),
        "service_tier": "default",
        "system_fingerprint": "fp_baton",
    })
}

/// A choice's `logprobs` object of these token entries.
fn logprobs(content: Vec<Value>) -> Value {
    json!({"content": content, "refusal": null})
}

pub fn stream(answer: &Answer) -> StreamEvents {
    let chunk = |choices: Value, usage: Value| {
        let mut chunk = json!({
            "id": id(answer),
            "object": "chat.completion.chunk",
            "created": answer.created,
            "model": answer.model,
            "service_tier": "default",
            "system_fingerprint": "fp_baton",
            "choices": choices,
        });
        // With include_usage every chunk carries `usage`: null, except the last one; with
        // usage per event (vLLM's continuous_usage_stats) every chunk carries the counts so far.
        if answer.include_usage || answer.usage_per_event {
            chunk["usage"] = usage;
        }
        Event::data(chunk)
    };
    let usage_so_far = |completion_tokens: u64| match answer.usage_per_event {
        true => usage_with(answer, completion_tokens),
        false => Value::Null,
    };
    let delta_with = |delta: Value, logprobs: Value, finish_reason: Value, usage: Value| {
        chunk(json!([{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish_reason}]), usage)
    };
    let delta = |delta: Value, finish_reason: Value, usage: Value| delta_with(delta, Value::Null, finish_reason, usage);

    let first = match &answer.output {
        Output::Text { .. } => json!({"role": "assistant", "content": "", "refusal": null}),
        Output::ToolCall { name, .. } => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"index": 0, "id": call_id(answer), "type": "function", "function": {"name": name, "arguments": ""}}],
            "refusal": null,
        }),
    };
    let content = answer
        .output
        .fragments()
        .iter()
        .zip(1..)
        .map(|(fragment, written)| {
            let (delta, logprobs) = match (&answer.output, answer.top_logprobs) {
                (Output::Text { .. }, Some(top)) => {
                    (json!({"content": fragment}), logprobs(vec![token_logprobs(fragment, top)]))
                }
                (Output::Text { .. }, None) => (json!({"content": fragment}), Value::Null),
                (Output::ToolCall { .. }, _) => {
                    (json!({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]}), Value::Null)
                }
            };
            delta_with(delta, logprobs, Value::Null, usage_so_far(written))
        })
        .collect();
    let finish_usage = if answer.usage_per_event { usage(answer) } else { Value::Null };
    let mut closing = vec![delta(json!({}), json!(finish_reason(answer)), finish_usage)];
    if answer.include_usage {
        closing.push(chunk(json!([]), usage(answer)));
    }
    StreamEvents {
        preamble: vec![delta(first, Value::Null, usage_so_far(0))],
        content,
        closing,
        marker: vec![Event { name: None, data: EventData::Literal("[DONE]") }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Usage;
    use hyper::StatusCode;

    #[test]
    fn rate_limit_errors_name_openai_type_and_code() {
        let error = ErrorInfo { status: StatusCode::TOO_MANY_REQUESTS, kind: None, message: "slow down".into() };
        assert_eq!(
            error_body(&error),
            json!({"error": {"message": "slow down", "type": "requests", "param": null, "code": "rate_limit_exceeded"}})
        );
    }

    #[test]
    fn usage_chunk_has_no_choices() {
        let answer = Answer {
            serial: 1,
            model: "m".into(),
            created: 0,
            output: Output::Text { text: "a b".into(), fragments: vec!["a".into(), " b".into()] },
            usage: Usage { input_tokens: 3, output_tokens: 2 },
            include_usage: true,
            usage_per_event: false,
            top_logprobs: None,
        };
        let events = stream(&answer);
        let EventData::Json(last) = &events.closing[1].data else { panic!("usage chunk is JSON") };
        assert_eq!(last["choices"], json!([]));
        assert_eq!(last["usage"]["total_tokens"], 5);
    }

    #[test]
    fn usage_per_event_counts_content_chunks_so_far() {
        let answer = Answer {
            serial: 1,
            model: "m".into(),
            created: 0,
            output: Output::Text { text: "a b".into(), fragments: vec!["a".into(), " b".into()] },
            usage: Usage { input_tokens: 3, output_tokens: 7 },
            include_usage: false,
            usage_per_event: true,
            top_logprobs: None,
        };
        let events = stream(&answer);
        let completion = |event: &Event| match &event.data {
            EventData::Json(chunk) => chunk["usage"]["completion_tokens"].as_u64(),
            EventData::Literal(_) => None,
        };
        let counts: Vec<_> =
            events.preamble.iter().chain(&events.content).chain(&events.closing).map(completion).collect();
        assert_eq!(counts, [Some(0), Some(1), Some(2), Some(7)], "role chunk, two content chunks, finish chunk");
        let EventData::Json(second) = &events.content[1].data else { panic!("content chunks are JSON") };
        assert_eq!(second["usage"], json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}));
    }
}
