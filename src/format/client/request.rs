//! A client's request, normalized: what every client format's reader produces, and where each
//! part came from, so a refusal names the client's own field.

use serde_json::Value;

use super::{ClientDialect, ClientFormat, GatewayError};
use crate::chat::{ChatRequest, Message};
use crate::format::anthropic_messages::AnthropicMessages;
use crate::format::openai_chat::OpenaiChat;
use crate::format::openai_responses::OpenaiResponses;
use crate::value::{parse_json, wrong, FieldError};

/// A client's request, normalized: the route it names, whether it streams, and the chat.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientCall {
    /// The client's `model`, which names a route (or a target) of the config.
    pub model: String,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`: end the stream with a usage-only chunk.
    pub include_usage: bool,
    pub request: ChatRequest,
    /// The request's settings a response object repeats back (Responses' `instructions`,
    /// `tools`, `temperature`…), for [`super::Meta::echo`]; null for the formats that repeat none.
    pub echo: Value,
    /// Where each of `request.messages` came from in the client's body.
    pub origins: Vec<PartOrigin>,
}

/// Where a normalized message's parts came from in the client's body, so a refusal of one
/// part names it as the client wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartOrigin {
    /// The client's field that held the content: `messages[2].content`, `input[0].content`,
    /// `system`.
    pub path: String,
    /// For content given as a list, the list index of each part; `None` for a string.
    pub indices: Option<Vec<usize>>,
}

impl ClientCall {
    /// A part some target of the route cannot carry ([`crate::config::Config::check_request`]
    /// names it `request.messages[i].content[j]`), as a 400 naming the part by the client's path.
    pub fn uncarried(&self, e: &FieldError) -> GatewayError {
        let part = |path: &str| {
            let (i, j) = path.strip_prefix("request.messages[")?.strip_suffix(']')?.split_once("].content[")?;
            let origin = self.origins.get(i.parse::<usize>().ok()?)?;
            let j: usize = j.parse().ok()?;
            Some(match &origin.indices {
                Some(indices) => format!("{}[{}]", origin.path, indices.get(j)?),
                None => origin.path.clone(),
            })
        };
        // The message starts with the path it names.
        match (part(&e.path), e.message.strip_prefix(e.path.as_str())) {
            (Some(subject), Some(rest)) => GatewayError::invalid(format!("{subject}{rest}")),
            _ => GatewayError::invalid(e.message.clone()),
        }
    }
}

/// A client's conversation as normalized messages, each with its [`PartOrigin`].
#[derive(Debug, Default)]
pub(crate) struct Conversation {
    pub messages: Vec<Message>,
    pub origins: Vec<PartOrigin>,
}

impl Conversation {
    pub fn push(&mut self, message: Message, path: impl Into<String>, indices: Option<Vec<usize>>) {
        self.messages.push(message);
        self.origins.push(PartOrigin { path: path.into(), indices });
    }
}

/// Parses a client's request body in its format. A mistake is a 400 naming the field.
pub fn parse_request(format: ClientFormat, body: &str) -> Result<ClientCall, GatewayError> {
    let value = parse_json(body, "the request body")?;
    if !value.is_object() {
        return Err(wrong("the request body", "a JSON object", &value).into());
    }
    let call = match format {
        ClientFormat::OpenaiChat => OpenaiChat::parse_request(&value),
        ClientFormat::AnthropicMessages => AnthropicMessages::parse_request(&value),
        ClientFormat::OpenaiResponses => OpenaiResponses::parse_request(&value),
    };
    call.map_err(GatewayError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_are_not_objects() {
        for format in [ClientFormat::OpenaiChat, ClientFormat::AnthropicMessages, ClientFormat::OpenaiResponses] {
            let e = parse_request(format, "{").unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.message.starts_with("the request body is not valid JSON"), "{}", e.message);
            let e = parse_request(format, "[1]").unwrap_err();
            assert_eq!(e.message, "the request body must be a JSON object (got a list)");
        }
    }
}
