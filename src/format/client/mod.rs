//! The client side of the dialects: what a gateway client sends and is sent, in the dialect it
//! speaks. [`ClientDialect`] states the parts each such dialect has (reading a request, and
//! writing its error, its whole answer or its stream), as [`super::ProviderDialect`] does for the provider
//! side; the dialect's unit type implements both (`openai_chat::OpenaiChat`...), each in its own
//! folder's `client.rs`, and [`ClientFormat`] dispatches to them through a plain `match`.
//!
//! This sits in the dialects' layer, below config and the gateway, because none of it needs more
//! than the chat model and the failures: the gateway's decisions (endpoint, CORS, key, deadline)
//! use it, and it knows nothing of them. Here too: the normalized client call ([`ClientCall`]),
//! the answer's [`Meta`], the [`GatewayError`] a client is answered with, and the readers and
//! writers the dialects' client modules share.

mod answer;
mod error;
pub(crate) mod field;
pub(crate) mod media;
mod request;
mod request_options;
pub(crate) mod state_id;
mod write;

use llm_baton_wire::write::JsonWriter;
use serde_json::Value;

use crate::chat::{Answer, Delta, FinishReason, Usage};
use crate::value::FieldError;

pub use answer::{answer_body, Meta, StreamEncoder};
pub use error::GatewayError;
pub(crate) use request::Conversation;
pub use request::{parse_request, ClientCall, PartOrigin};
pub(crate) use request_options::{check_tool_choice, json_schema_format, tool_choice_word};
pub(crate) use write::{sse, string_or_null, token_counts};

/// The parts every dialect a gateway client speaks has. Implemented by the dialect's unit type
/// (the one that implements [`super::ProviderDialect`] too); [`ClientFormat`] picks one.
pub trait ClientDialect {
    /// Writes this dialect's stream.
    type StreamEncoder: StreamEncoding;

    /// Reads a client's request body, a JSON object. A mistake names the field; the gateway
    /// answers it with a 400.
    fn parse_request(body: &Value) -> Result<ClientCall, FieldError>;

    /// The error body a client of this dialect reads, as the next value of `w`.
    fn write_error(error: &GatewayError, w: &mut JsonWriter);

    /// A whole, non-streamed answer as the client's JSON body.
    fn answer_body(meta: &Meta, answer: &Answer) -> String;

    /// The stream's encoder; `include_usage` is OpenAI Chat's `stream_options.include_usage`.
    fn stream_encoder(meta: Meta, include_usage: bool) -> Self::StreamEncoder;
}

/// A dialect's stream writer: `delta` for each delivered delta, then exactly one of `finish`
/// (the success marker included) or `fail` (an error event, and no success marker, so no client
/// can mistake a broken stream for a short answer).
pub trait StreamEncoding {
    /// What the stream is about; its model is settled once the serving target is known.
    fn meta_mut(&mut self) -> &mut Meta;

    fn delta(&mut self, delta: &Delta, out: &mut String);

    fn finish(&mut self, finish_reason: &FinishReason, usage: Usage, out: &mut String);

    fn fail(&mut self, error: &GatewayError, out: &mut String);
}

/// The wire format a client speaks to the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFormat {
    /// `POST /v1/chat/completions` (and `GET /v1/models`).
    OpenaiChat,
    /// `POST /v1/messages`.
    AnthropicMessages,
    /// `POST /v1/responses`.
    OpenaiResponses,
}

impl ClientFormat {
    /// The name pkg/gateway.js carries in a plan, which [`ClientFormat::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientFormat::OpenaiChat => "openai",
            ClientFormat::AnthropicMessages => "anthropic",
            ClientFormat::OpenaiResponses => "responses",
        }
    }

    /// The top-level request fields this format's reader reads (maps into the request, or
    /// refuses); any other field goes on unchanged to a member of the same format
    /// (docs/parameters.md lists them all).
    pub fn read_fields(self) -> &'static [&'static str] {
        match self {
            ClientFormat::OpenaiChat => super::openai_chat::client::READ,
            ClientFormat::AnthropicMessages => super::anthropic_messages::client::READ,
            ClientFormat::OpenaiResponses => super::openai_responses::client::READ,
        }
    }

    pub fn parse(name: &str) -> Option<ClientFormat> {
        match name {
            "openai" => Some(ClientFormat::OpenaiChat),
            "anthropic" => Some(ClientFormat::AnthropicMessages),
            "responses" => Some(ClientFormat::OpenaiResponses),
            _ => None,
        }
    }
}

/// What each dialect's client side writes, its provider side reads back as it was meant: a
/// gateway chained behind another, or a client library that reads what llm-baton wrote.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;
    use crate::format::Format;
    use crate::outcome::{Failure, FailureClass};

    const DIALECTS: [(ClientFormat, Format); 3] = [
        (ClientFormat::OpenaiChat, Format::OpenaiChat),
        (ClientFormat::AnthropicMessages, Format::AnthropicMessages),
        (ClientFormat::OpenaiResponses, Format::OpenaiResponses),
    ];

    #[test]
    fn finish_reasons_written_to_a_client_read_back() {
        let meta = Meta { id: "x".into(), created: 1, completed: None, model: "m".into(), echo: Value::Null };
        for finish in [FinishReason::Stop, FinishReason::Length, FinishReason::ToolCalls, FinishReason::ContentFilter] {
            let tool_calls = match finish {
                FinishReason::ToolCalls => {
                    vec![ToolCall { id: "c".into(), name: "f".into(), arguments: "{}".into(), state: None }]
                }
                _ => Vec::new(),
            };
            let answer = Answer {
                logprobs: None,
                content_filter: None,
                text: "Hi".into(),
                reasoning: String::new(),
                reasoning_parts: Vec::new(),
                tool_calls,
                finish_reason: finish.clone(),
                usage: Usage::default(),
                model: None,
            };
            for (client, provider) in DIALECTS {
                let body = answer_body(client, &meta, &answer);
                let read = provider.decode_answer(body.as_bytes()).map(|a| a.finish_reason);
                assert_eq!(read, Ok(finish.clone()), "{client:?}: {body}");
            }
        }
    }

    #[test]
    fn failure_classes_written_to_a_client_read_back() {
        use FailureClass::*;
        // Anthropic has no type for a prompt too long or filtered: its words carry the first.
        let cases = [
            (ContextLength, [Some(ContextLength), None, Some(ContextLength)]),
            (ContentFilter, [Some(ContentFilter), None, Some(ContentFilter)]),
            (Quota, [Some(Quota); 3]),
            (RateLimit, [Some(RateLimit); 3]),
            (Overloaded, [Some(Overloaded); 3]),
        ];
        for (class, read_back) in cases {
            let failure = Failure::Http {
                status: 400,
                message: "the provider's reason".into(),
                code: None,
                class: Some(class),
                retry_after_ms: None,
                should_retry: None,
                in_stream: false,
                content_filter: None,
            };
            let e = GatewayError::from_failure(&failure, None);
            for ((client, provider), expected) in DIALECTS.into_iter().zip(read_back) {
                let said = provider.error_body(e.status, e.body(client).as_bytes());
                assert_eq!(
                    (said.class, said.message.as_str()),
                    (expected, "the provider's reason"),
                    "{class:?} {client:?}"
                );
            }
        }
    }
}
