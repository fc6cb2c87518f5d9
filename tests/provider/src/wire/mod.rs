//! The four providers' wire formats: what a healthy answer, an error body and a stream look like.
//!
//! The builders here are pure: they turn an [`Answer`] (what the model "said") into JSON values and
//! SSE events. Timing and faults (delays, stalls, in-stream errors, a missing success marker) are
//! applied by `script`, which splices the events that [`Format::stream`] returns; splitting a
//! stream into preamble / content / closing / marker is what makes that splicing format-agnostic.

mod anthropic_messages;
mod gemini;
mod openai_chat;
mod openai_responses;
pub mod reasoning;

use bytes::Bytes;
use hyper::StatusCode;
use serde_json::{json, Value};

/// The provider API a request was addressed to, chosen by the path's suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    OpenAiChat,
    AnthropicMessages,
    OpenAiResponses,
    Gemini,
}

/// What the scripted model answers, already decided by the step.
pub struct Answer {
    /// Unique per server run; makes the ids (`chatcmpl-…`, `msg_…`) distinct.
    pub serial: u64,
    pub model: String,
    /// Unix seconds, for the `created` fields.
    pub created: u64,
    pub output: Output,
    pub usage: Usage,
    /// OpenAI Chat only: the request asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// Streams (OpenAI Chat, Gemini): cumulative usage on every chunk, output one per content event.
    pub usage_per_event: bool,
    /// OpenAI Chat and Responses: the request asked for token log probabilities, with this many
    /// alternatives for each token (`top_logprobs`).
    pub top_logprobs: Option<u64>,
}

/// The log probability entry (Chat's and Responses' alike) of one content event's text (one made-up token per event):
/// each names its token, a logprob, its bytes and `top` alternatives, the token first.
pub fn token_logprobs(fragment: &str, top: u64) -> Value {
    let logprob = -(fragment.len() as f64) / 10.0;
    let entry = |token: &str, logprob: f64| json!({"token": token, "logprob": logprob, "bytes": token.as_bytes()});
    let alternatives: Vec<Value> = (0..top)
        .map(|i| if i == 0 { entry(fragment, logprob) } else { entry(&format!("alt{i}"), logprob - i as f64) })
        .collect();
    let mut token = entry(fragment, logprob);
    token["top_logprobs"] = Value::Array(alternatives);
    token
}

pub enum Output {
    /// Plain text, and the pieces it is streamed in (one content event each).
    Text { text: String, fragments: Vec<String> },
    /// One function call; `arguments` is JSON object text, streamed in `fragments`.
    ToolCall { name: String, arguments: String, input: Value, fragments: Vec<String> },
}

#[derive(Clone, Copy)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// How a request's conversation ends, which is where a provider reads a prefill.
#[derive(Debug, PartialEq, Eq)]
pub enum LastTurn {
    /// An assistant turn (Gemini: `model`) at `at` (`messages[2]`); `text` is its text joined, or
    /// `None` when it holds something else (a tool call, an image).
    Assistant { at: String, text: Option<String> },
    /// Anything else, said with where: `messages[1].role is "user"`, `the request has no contents`.
    Other(String),
}

/// An error to report, in an HTTP error body or as an in-stream error event.
pub struct ErrorInfo {
    pub status: StatusCode,
    /// Overrides the error type that the format derives from `status` (Gemini: its `status`
    /// string, and only when this is an UPPER_SNAKE name such as `RESOURCE_EXHAUSTED`).
    pub kind: Option<String>,
    pub message: String,
}

/// One server-sent event before framing.
pub struct Event {
    pub name: Option<&'static str>,
    pub data: EventData,
}

pub enum EventData {
    Json(Value),
    /// A non-JSON payload: OpenAI Chat's `[DONE]`.
    Literal(&'static str),
}

impl Event {
    fn data(data: Value) -> Self {
        Event { name: None, data: EventData::Json(data) }
    }

    fn named(name: &'static str, data: Value) -> Self {
        Event { name: Some(name), data: EventData::Json(data) }
    }
}

/// A whole stream, split so that faults can be spliced in between the content events.
pub struct StreamEvents {
    /// Non-content events sent with the headers (role chunk, `message_start`, `ping`, `response.created`…).
    pub preamble: Vec<Event>,
    /// One event per text fragment or tool-argument fragment.
    pub content: Vec<Event>,
    /// Events after the content that are not the success marker (finish chunk, `message_delta`…).
    pub closing: Vec<Event>,
    /// The success marker: `[DONE]`, `message_stop`, `response.completed` or Gemini's `finishReason` chunk.
    pub marker: Vec<Event>,
}

impl Format {
    /// The name used in the scenario log.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAiChat => "openai_chat",
            Format::AnthropicMessages => "anthropic_messages",
            Format::OpenAiResponses => "openai_responses",
            Format::Gemini => "gemini",
        }
    }

    /// The JSON body of an HTTP error response.
    pub fn error_body(self, error: &ErrorInfo) -> Value {
        match self {
            Format::OpenAiChat | Format::OpenAiResponses => openai_chat::error_body(error),
            Format::AnthropicMessages => anthropic_messages::error_body(error),
            Format::Gemini => gemini::error_body(error),
        }
    }

    /// The whole non-streamed answer.
    pub fn whole(self, answer: &Answer) -> Value {
        match self {
            Format::OpenAiChat => openai_chat::whole(answer),
            Format::AnthropicMessages => anthropic_messages::whole(answer),
            Format::OpenAiResponses => openai_responses::whole(answer),
            Format::Gemini => gemini::whole(answer),
        }
    }

    pub fn stream(self, answer: &Answer) -> StreamEvents {
        match self {
            Format::OpenAiChat => openai_chat::stream(answer),
            Format::AnthropicMessages => anthropic_messages::stream(answer),
            Format::OpenAiResponses => openai_responses::stream(answer),
            Format::Gemini => gemini::stream(answer),
        }
    }

    /// The text of the request's last user turn (`messages`, Responses `input` also as a plain
    /// string, Gemini `contents`), joined from its text parts; `None` without one.
    pub fn last_user_text(self, body: &Value) -> Option<String> {
        let list = match self {
            Format::OpenAiChat | Format::AnthropicMessages => "messages",
            Format::OpenAiResponses => "input",
            Format::Gemini => "contents",
        };
        let items = match body.get(list)? {
            Value::String(text) if self == Format::OpenAiResponses => return Some(text.clone()),
            Value::Array(items) => items,
            _ => return None,
        };
        let last = items.iter().rev().find(|item| item.get("role").and_then(Value::as_str) == Some("user"))?;
        match self {
            Format::Gemini => last["parts"].as_array().and_then(|parts| {
                parts.iter().map(|part| part.get("text").and_then(Value::as_str)).collect::<Option<String>>()
            }),
            Format::OpenAiResponses => joined_text(&last["content"], &["input_text"]),
            Format::OpenAiChat | Format::AnthropicMessages => joined_text(&last["content"], &["text"]),
        }
    }

    /// How the request's conversation ends: its last `messages` (Responses: `input`, Gemini:
    /// `contents`) item, and whether that is an assistant turn with text.
    pub fn last_turn(self, body: &Value) -> LastTurn {
        let (list, assistant) = match self {
            Format::OpenAiChat | Format::AnthropicMessages => ("messages", "assistant"),
            Format::OpenAiResponses => ("input", "assistant"),
            Format::Gemini => ("contents", "model"),
        };
        let items = match body.get(list) {
            Some(Value::Array(items)) => items,
            Some(Value::String(_)) => return LastTurn::Other(format!("{list} is a string (one user message)")),
            _ => return LastTurn::Other(format!("the request has no {list} array")),
        };
        let Some(last) = items.last() else {
            return LastTurn::Other(format!("{list} is empty"));
        };
        let at = format!("{list}[{}]", items.len() - 1);
        match last.get("role").and_then(Value::as_str) {
            Some(role) if role == assistant => {}
            Some(role) => return LastTurn::Other(format!("{at}.role is {role:?}")),
            None => {
                let kind = last.get("type").and_then(Value::as_str).map(|kind| format!(" (type {kind:?})"));
                return LastTurn::Other(format!("{at} has no role{}", kind.unwrap_or_default()));
            }
        }
        let text = match self {
            Format::OpenAiChat
                if last.get("tool_calls").and_then(Value::as_array).is_some_and(|calls| !calls.is_empty()) =>
            {
                None
            }
            Format::OpenAiChat => joined_text(&last["content"], &["text"]),
            Format::AnthropicMessages => joined_text(&last["content"], &["text"]),
            Format::OpenAiResponses => joined_text(&last["content"], &["output_text", "input_text"]),
            Format::Gemini => last["parts"].as_array().and_then(|parts| {
                parts.iter().map(|part| part.get("text").and_then(Value::as_str)).collect::<Option<String>>()
            }),
        };
        LastTurn::Assistant { at, text }
    }

    /// The event a provider sends when it fails in the middle of a stream.
    pub fn stream_error(self, error: &ErrorInfo) -> Event {
        match self {
            Format::OpenAiChat => Event::data(openai_chat::error_body(error)),
            Format::AnthropicMessages => Event::named("error", anthropic_messages::error_body(error)),
            Format::OpenAiResponses => openai_responses::stream_error(error),
            Format::Gemini => Event::data(gemini::error_body(error)),
        }
    }

    /// Serializes events in order. The Responses API numbers its events (`sequence_number`), so
    /// numbering happens here, after faults were spliced in; Gemini ends its events with CRLF.
    pub fn frame(self, events: impl IntoIterator<Item = Event>) -> Vec<Bytes> {
        events
            .into_iter()
            .enumerate()
            .map(|(sequence, event)| {
                let data = match event.data {
                    EventData::Json(mut value) => {
                        if let (Format::OpenAiResponses, Some(object)) = (self, value.as_object_mut()) {
                            object.insert("sequence_number".into(), json!(sequence));
                        }
                        value.to_string()
                    }
                    EventData::Literal(text) => text.to_owned(),
                };
                let end = if self == Format::Gemini { "\r\n\r\n" } else { "\n\n" };
                Bytes::from(match event.name {
                    Some(name) => format!("event: {name}\ndata: {data}{end}"),
                    None => format!("data: {data}{end}"),
                })
            })
            .collect()
    }
}

/// A message's content as text: a string, or a list of parts all of the given types, joined.
fn joined_text(content: &Value, part_types: &[&str]) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => parts
            .iter()
            .map(|part| {
                let typed = part.get("type").and_then(Value::as_str).is_some_and(|kind| part_types.contains(&kind));
                typed.then(|| part.get("text").and_then(Value::as_str)).flatten()
            })
            .collect(),
        _ => None,
    }
}

impl Output {
    /// The content events' fragments (Gemini sends a function call whole, as one event).
    fn fragments(&self) -> &[String] {
        match self {
            Output::Text { fragments, .. } | Output::ToolCall { fragments, .. } => fragments,
        }
    }
}

impl Usage {
    fn total(self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(at: &str, text: Option<&str>) -> LastTurn {
        LastTurn::Assistant { at: at.into(), text: text.map(str::to_owned) }
    }

    #[test]
    fn the_last_turn_is_read_where_each_format_puts_a_prefill() {
        let other = |why: &str| LastTurn::Other(why.into());
        let user = json!({"role": "user", "content": "hi"});
        let cases = [
            (
                Format::OpenAiChat,
                json!({"messages": [user, {"role": "assistant", "content": "Hel"}]}),
                assistant("messages[1]", Some("Hel")),
            ),
            (
                Format::OpenAiChat,
                json!({"messages": [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}),
                assistant("messages[0]", Some("ab")),
            ),
            (
                Format::OpenAiChat,
                json!({"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]}]}),
                assistant("messages[0]", None),
            ),
            (Format::OpenAiChat, json!({"messages": [user]}), other(r#"messages[0].role is "user""#)),
            (Format::OpenAiChat, json!({"messages": []}), other("messages is empty")),
            (
                Format::AnthropicMessages,
                json!({"messages": [user, {"role": "assistant", "content": [{"type": "text", "text": "He"}, {"type": "text", "text": "llo"}]}]}),
                assistant("messages[1]", Some("Hello")),
            ),
            (
                Format::AnthropicMessages,
                json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]}]}),
                assistant("messages[0]", None),
            ),
            (Format::AnthropicMessages, json!({"model": "m"}), other("the request has no messages array")),
            (Format::OpenAiResponses, json!({"input": "hi"}), other("input is a string (one user message)")),
            (
                Format::OpenAiResponses,
                json!({"input": [user, {"role": "assistant", "content": "x y"}]}),
                assistant("input[1]", Some("x y")),
            ),
            (
                Format::OpenAiResponses,
                json!({"input": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "o"}, {"type": "input_text", "text": "i"}]}]}),
                assistant("input[0]", Some("oi")),
            ),
            (
                Format::OpenAiResponses,
                json!({"input": [{"type": "function_call_output", "output": "{}"}]}),
                other(r#"input[0] has no role (type "function_call_output")"#),
            ),
            (
                Format::Gemini,
                json!({"contents": [{"role": "user", "parts": [{"text": "q"}]}, {"role": "model", "parts": [{"text": "A "}, {"text": "b"}]}]}),
                assistant("contents[1]", Some("A b")),
            ),
            (
                Format::Gemini,
                json!({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "f"}}]}]}),
                assistant("contents[0]", None),
            ),
            (Format::Gemini, json!({"contents": [{"parts": [{"text": "q"}]}]}), other("contents[0] has no role")),
        ];
        for (format, body, expected) in cases {
            assert_eq!(format.last_turn(&body), expected, "{} {body}", format.name());
        }
    }
}
