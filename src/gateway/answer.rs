//! What a client receives when the call is served: the whole answer as its JSON body, or the
//! stream as its SSE events, in the client's format.

use serde_json::Value;

use super::{anthropic, openai, responses, ClientFormat, GatewayError};
use crate::chat::{Answer, Delta, FinishReason, Usage};

/// What a response is about, for ids and the `model` field. The driver supplies the clock and
/// the randomness the core does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Unique per response, e.g. `chatcmpl-…`, `msg_…` or `resp_…`.
    pub id: String,
    /// Seconds since the Unix epoch (OpenAI's `created`, Responses' `created_at`).
    pub created: u64,
    /// The model that answered (the provider's word, else the target's configured model).
    pub model: String,
    /// The client's [`ClientCall::echo`].
    pub echo: Value,
}

/// A whole, non-streamed answer as the client's JSON body.
pub fn answer_body(format: ClientFormat, meta: &Meta, answer: &Answer) -> String {
    match format {
        ClientFormat::OpenAi => openai::answer_body(meta, answer),
        ClientFormat::Anthropic => anthropic::answer_body(meta, answer),
        ClientFormat::Responses => responses::answer_body(meta, answer),
    }
}

/// Encodes a normalized stream as the client's SSE events. `delta` for each delivered delta,
/// then exactly one of `finish` (the success marker included) or `fail` (an error event, and no
/// success marker, so no client can mistake a broken stream for a short answer).
#[derive(Debug)]
pub enum StreamEncoder {
    OpenAi(openai::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Responses(responses::StreamEncoder),
}

impl StreamEncoder {
    pub fn new(format: ClientFormat, meta: Meta, include_usage: bool) -> StreamEncoder {
        match format {
            ClientFormat::OpenAi => StreamEncoder::OpenAi(openai::StreamEncoder::new(meta, include_usage)),
            ClientFormat::Anthropic => StreamEncoder::Anthropic(anthropic::StreamEncoder::new(meta)),
            ClientFormat::Responses => StreamEncoder::Responses(responses::StreamEncoder::new(meta)),
        }
    }

    /// The model named in the stream, settled once the serving target is known (before any output).
    pub fn set_model(&mut self, model: &str) {
        match self {
            StreamEncoder::OpenAi(e) => e.meta.model = model.to_string(),
            StreamEncoder::Anthropic(e) => e.meta.model = model.to_string(),
            StreamEncoder::Responses(e) => e.meta.model = model.to_string(),
        }
    }

    pub fn delta(&mut self, delta: &Delta, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.delta(delta, out),
            StreamEncoder::Anthropic(e) => e.delta(delta, out),
            StreamEncoder::Responses(e) => e.delta(delta, out),
        }
    }

    pub fn finish(&mut self, finish_reason: &FinishReason, usage: Usage, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.finish(finish_reason, usage, out),
            StreamEncoder::Anthropic(e) => e.finish(finish_reason, usage, out),
            StreamEncoder::Responses(e) => e.finish(finish_reason, usage, out),
        }
    }

    pub fn fail(&mut self, error: &GatewayError, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.fail(error, out),
            StreamEncoder::Anthropic(e) => e.fail(error, out),
            StreamEncoder::Responses(e) => e.fail(error, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unknown_usage_is_sent_as_zero_where_clients_need_a_number() {
        let meta = Meta { id: "x".into(), created: 1, model: "m".into(), echo: Value::Null };
        let answer = Answer {
            text: "Hi".into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage { input_tokens: Some(7), output_tokens: None },
            model: None,
            reasoning_parts: Vec::new(),
        };
        let openai: Value = serde_json::from_str(&answer_body(ClientFormat::OpenAi, &meta, &answer)).unwrap();
        assert_eq!(openai["usage"], json!({"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7}));
        let anthropic: Value = serde_json::from_str(&answer_body(ClientFormat::Anthropic, &meta, &answer)).unwrap();
        assert_eq!(anthropic["usage"], json!({"input_tokens": 7, "output_tokens": 0}));
    }
}
