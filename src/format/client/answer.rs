//! What a client receives when the call is served: the whole answer as its JSON body, or the
//! stream as its SSE events, in the client's format.

use serde_json::Value;

use super::{ClientDialect, ClientFormat, GatewayError, StreamEncoding};
use crate::chat::{Answer, Delta, FinishReason, Usage};
use crate::format::anthropic_messages::{self, AnthropicMessages};
use crate::format::openai_chat::{self, OpenaiChat};
use crate::format::openai_responses::{self, OpenaiResponses};

/// What a response is about, for ids and the `model` field. The driver supplies the clock and
/// the randomness the core does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Unique per response, e.g. `chatcmpl-…`, `msg_…` or `resp_…`.
    pub id: String,
    /// Seconds since the Unix epoch (OpenAI's `created`, Responses' `created_at`).
    pub created: u64,
    /// Seconds since the Unix epoch when the answer ended (Responses' `completed_at`), once it has.
    pub completed: Option<u64>,
    /// The model that answered (the provider's word, else the target's configured model).
    pub model: String,
    /// The client's [`super::ClientCall::echo`].
    pub echo: Value,
}

/// A whole, non-streamed answer as the client's JSON body.
pub fn answer_body(format: ClientFormat, meta: &Meta, answer: &Answer) -> String {
    match format {
        ClientFormat::OpenaiChat => OpenaiChat::answer_body(meta, answer),
        ClientFormat::AnthropicMessages => AnthropicMessages::answer_body(meta, answer),
        ClientFormat::OpenaiResponses => OpenaiResponses::answer_body(meta, answer),
    }
}

/// Encodes a normalized stream as the client's SSE events: see [`StreamEncoding`].
#[derive(Debug)]
pub enum StreamEncoder {
    OpenaiChat(openai_chat::client::StreamEncoder),
    AnthropicMessages(anthropic_messages::client::StreamEncoder),
    OpenaiResponses(openai_responses::client::StreamEncoder),
}

impl StreamEncoder {
    pub fn new(format: ClientFormat, meta: Meta, include_usage: bool) -> StreamEncoder {
        match format {
            ClientFormat::OpenaiChat => StreamEncoder::OpenaiChat(OpenaiChat::stream_encoder(meta, include_usage)),
            ClientFormat::AnthropicMessages => {
                StreamEncoder::AnthropicMessages(AnthropicMessages::stream_encoder(meta, include_usage))
            }
            ClientFormat::OpenaiResponses => {
                StreamEncoder::OpenaiResponses(OpenaiResponses::stream_encoder(meta, include_usage))
            }
        }
    }

    fn encoding(&mut self) -> &mut dyn StreamEncoding {
        match self {
            StreamEncoder::OpenaiChat(e) => e,
            StreamEncoder::AnthropicMessages(e) => e,
            StreamEncoder::OpenaiResponses(e) => e,
        }
    }

    /// The model named in the stream, settled once the serving target is known (before any output).
    pub fn set_model(&mut self, model: &str) {
        self.encoding().meta_mut().model = model.to_string();
    }

    /// When the answer ended, in seconds since the Unix epoch: set before its end is encoded.
    pub fn set_completed(&mut self, seconds: u64) {
        self.encoding().meta_mut().completed = Some(seconds);
    }

    pub fn delta(&mut self, delta: &Delta, out: &mut String) {
        self.encoding().delta(delta, out)
    }

    pub fn finish(&mut self, finish_reason: &FinishReason, usage: Usage, out: &mut String) {
        self.encoding().finish(finish_reason, usage, out)
    }

    pub fn fail(&mut self, error: &GatewayError, out: &mut String) {
        self.encoding().fail(error, out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_usage_is_sent_as_zero_where_clients_need_a_number() {
        let meta = Meta { id: "x".into(), created: 1, completed: None, model: "m".into(), echo: Value::Null };
        let answer = Answer {
            logprobs: None,
            content_filter: None,
            text: "Hi".into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage { input_tokens: Some(7), output_tokens: None },
            model: None,
            reasoning_parts: Vec::new(),
        };
        let openai: Value = serde_json::from_str(&answer_body(ClientFormat::OpenaiChat, &meta, &answer)).unwrap();
        assert_eq!(openai["usage"], json!({"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7}));
        let anthropic: Value =
            serde_json::from_str(&answer_body(ClientFormat::AnthropicMessages, &meta, &answer)).unwrap();
        assert_eq!(anthropic["usage"], json!({"input_tokens": 7, "output_tokens": 0}));
    }
}
