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
