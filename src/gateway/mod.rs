//! The edge gateway: client wire formats in, client wire formats out, and every decision about a
//! request.
//!
//! A gateway serves clients that already speak OpenAI Chat Completions, OpenAI Responses or
//! Anthropic Messages (the official SDKs, curl, chat UIs, agent frameworks) from any route,
//! whatever format its targets speak. So it translates twice, always through the normalized
//! types of [`crate::chat`]: a client's request body becomes a [`crate::chat::ChatRequest`]
//! ([`parse_request`]), and the normalized answer, deltas and failures become the client's JSON
//! body, SSE events and error shape ([`StreamEncoder`], [`answer_body`],
//! [`GatewayError::from_failure`]). Before that, [`decide`] settles the endpoint, CORS, the
//! gateway key, the body cap and the deadline from the request's head, in one call.
//!
//! Like the rest of the core this is pure: no clock (ids and timestamps come in as [`Meta`]), no
//! I/O. The wasm driver and `pkg/gateway.js` only perform what is decided here: read the body,
//! run the call, hold the status until the route commits, build the `Response`.

pub mod anthropic;
pub mod openai;
pub mod responses;

mod access;
mod answer;
mod deadline;
mod decision;
mod error;
pub(crate) mod field;
pub(crate) mod media;
mod models;
mod reply;
mod request;
mod request_options;
mod write;

pub use access::{authorized, cors_origin};
pub use answer::{answer_body, Meta, StreamEncoder};
pub use deadline::{parse_deadline_header, requested_deadline, DEADLINE_HEADER, SDK_TIMEOUT_HEADER};
pub use decision::{decide, BodyRead, Caller, Decision, Head, Listing, Plan, Site};
pub use error::GatewayError;
pub use models::models_body;
pub use reply::{write_headers, Reply, SSE};
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
