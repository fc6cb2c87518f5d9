//! The client side every dialect a gateway client speaks shares: the normalized client call,
//! the answer's metadata, the error a client is answered with, and the readers and writers the
//! dialects' `client` modules build on.

mod answer;
mod error;
pub(crate) mod field;
pub(crate) mod media;
mod request;
mod request_options;
mod write;

pub use answer::{answer_body, Meta, StreamEncoder};
pub use error::GatewayError;
pub(crate) use request::Conversation;
pub use request::{parse_request, ClientCall, PartOrigin};
pub(crate) use request_options::{check_tool_choice, json_schema_format, tool_choice_word};
pub(crate) use write::{sse, string_or_null, token_counts};

/// The wire format a client speaks to the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFormat {
    /// `POST /v1/chat/completions` (and `GET /v1/models`).
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
    /// `POST /v1/responses`.
    Responses,
}

impl ClientFormat {
    /// The name pkg/gateway.js carries in a plan, which [`ClientFormat::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientFormat::OpenAi => "openai",
            ClientFormat::Anthropic => "anthropic",
            ClientFormat::Responses => "responses",
        }
    }

    pub fn parse(name: &str) -> Option<ClientFormat> {
        match name {
            "openai" => Some(ClientFormat::OpenAi),
            "anthropic" => Some(ClientFormat::Anthropic),
            "responses" => Some(ClientFormat::Responses),
            _ => None,
        }
    }
}
