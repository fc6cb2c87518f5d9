//! OpenAI Responses (`POST …/responses`): typed, numbered stream events around output items.

use serde_json::{json, Value};

use super::{openai_chat, token_logprobs, Answer, ErrorInfo, Event, Output, StreamEvents};

/// The stream's `error` event: `{"type":"error","code","message","param"}` (numbered when framed).
pub fn stream_error(error: &ErrorInfo) -> Event {
    let body = openai_chat::error_body(error);
    Event::named(
        "error",
        json!({"type": "error", "code": body["error"]["type"], "message": error.message, "param": null}),
    )
}

fn item_id(answer: &Answer) -> String {
    match answer.output {
        Output::Text { .. } => format!("msg_baton{:08}", answer.serial),
        Output::ToolCall { .. } => format!("fc_baton{:08}", answer.serial),
    }
}

fn response(answer: &Answer, status: &str, output: Value, usage: Value) -> Value {
    json!({
        "id": format!("resp_baton{:08}", answer.serial),
        "object": "response",
        "created_at": answer.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "model": answer.model,
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
        "metadata": {},
    })
}

fn usage(answer: &Answer) -> Value {
    json!({
        "input_tokens": answer.usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": answer.usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": answer.usage.total(),
    })
}

fn text_part(text: &str, logprobs: Value) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": logprobs})
}

/// The entries of `fragments`, one each, when the request asked for them; else none.
fn logprobs<'a>(answer: &Answer, fragments: impl IntoIterator<Item = &'a String>) -> Value {
    match answer.top_logprobs {
        Some(top) => fragments.into_iter().map(|f| token_logprobs(f, top)).collect(),
        None => json!([]),
    }
}

/// The output item, either finished or as first announced (empty, `in_progress`).
fn item(answer: &Answer, done: bool) -> Value {
    let status = if done { "completed" } else { "in_progress" };
    match &answer.output {
        Output::Text { text, fragments } => {
            let content = if done { json!([text_part(text, logprobs(answer, fragments))]) } else { json!([]) };
            json!({"id": item_id(answer), "type": "message", "status": status, "role": "assistant", "content": content})
        }
        Output::ToolCall { name, arguments, .. } => json!({
            "id": item_id(answer),
            "type": "function_call",
            "status": status,
            "arguments": if done { arguments.as_str() } else { "" },
            "call_id": format!("call_baton{:08}", answer.serial),
            "name": name,
        }),
    }
}

pub fn whole(answer: &Answer) -> Value {
    response(answer, "completed", json!([item(answer, true)]), usage(answer))
}

pub fn stream(answer: &Answer) -> StreamEvents {
    let item_id = item_id(answer);
    let started = response(answer, "in_progress", json!([]), Value::Null);
    let mut preamble = vec![
        Event::named("response.created", json!({"type": "response.created", "response": started})),
        Event::named("response.in_progress", json!({"type": "response.in_progress", "response": started})),
        Event::named(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": 0, "item": item(answer, false)}),
        ),
    ];
    let mut closing = Vec::new();
    let content;
    match &answer.output {
        Output::Text { text, fragments } => {
            preamble.push(Event::named(
                "response.content_part.added",
                json!({
                    "type": "response.content_part.added",
                    "item_id": item_id, "output_index": 0, "content_index": 0, "part": text_part("", json!([])),
                }),
            ));
            content = fragments
                .iter()
                .map(|fragment| {
                    Event::named(
                        "response.output_text.delta",
                        json!({
                            "type": "response.output_text.delta",
                            "item_id": item_id, "output_index": 0, "content_index": 0,
                            "delta": fragment, "logprobs": logprobs(answer, [fragment]),
                        }),
                    )
                })
                .collect();
            closing.push(Event::named(
                "response.output_text.done",
                json!({
                    "type": "response.output_text.done",
                    "item_id": item_id, "output_index": 0, "content_index": 0, "text": text,
                    "logprobs": logprobs(answer, fragments),
                }),
            ));
            closing.push(Event::named(
                "response.content_part.done",
                json!({
                    "type": "response.content_part.done",
                    "item_id": item_id, "output_index": 0, "content_index": 0,
                    "part": text_part(text, logprobs(answer, fragments)),
                }),
            ));
        }
        Output::ToolCall { arguments, fragments, .. } => {
            content = fragments
                .iter()
                .map(|fragment| {
                    Event::named(
                        "response.function_call_arguments.delta",
                        json!({
                            "type": "response.function_call_arguments.delta",
                            "item_id": item_id, "output_index": 0, "delta": fragment,
                        }),
                    )
                })
                .collect();
            closing.push(Event::named(
                "response.function_call_arguments.done",
                json!({
                    "type": "response.function_call_arguments.done",
                    "item_id": item_id, "output_index": 0, "arguments": arguments,
                }),
            ));
        }
    }
    closing.push(Event::named(
        "response.output_item.done",
        json!({"type": "response.output_item.done", "output_index": 0, "item": item(answer, true)}),
    ));
    StreamEvents {
        preamble,
        content,
        closing,
        marker: vec![Event::named(
            "response.completed",
            json!({"type": "response.completed", "response": whole(answer)}),
        )],
    }
}
