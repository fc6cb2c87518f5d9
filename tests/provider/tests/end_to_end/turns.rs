//! Requests whose conversation ends with a given turn, in each format, and the text a stream carried.

use serde_json::{json, Value};

use crate::client::{Answer, Provider};

#[derive(Clone, Copy, Debug)]
pub enum Format {
    OpenAiChat,
    AnthropicMessages,
    OpenAiResponses,
    Gemini,
}

pub const FORMATS: [Format; 4] =
    [Format::OpenAiChat, Format::AnthropicMessages, Format::OpenAiResponses, Format::Gemini];

/// How the conversation ends.
#[derive(Clone, Copy)]
pub enum Ending<'a> {
    /// With the user's question.
    User,
    /// With an assistant (Gemini: model) turn holding this text, the way each format's client
    /// sends a prefill (Anthropic and Responses as text parts, to exercise the joining).
    Prefill(&'a str),
}

impl Format {
    pub fn path(self, scenario: &str, stream: bool) -> String {
        match (self, stream) {
            (Format::OpenAiChat, _) => format!("/s/{scenario}/v1/chat/completions"),
            (Format::AnthropicMessages, _) => format!("/s/{scenario}/v1/messages"),
            (Format::OpenAiResponses, _) => format!("/s/{scenario}/v1/responses"),
            (Format::Gemini, true) => format!("/s/{scenario}/v1beta/models/g:streamGenerateContent?alt=sse"),
            (Format::Gemini, false) => format!("/s/{scenario}/v1beta/models/g:generateContent"),
        }
    }

    pub fn body(self, stream: bool, ending: Ending) -> String {
        let question = "Say hello";
        let body = match (self, ending) {
            (Format::Gemini, ending) => {
                let mut contents = vec![json!({"role": "user", "parts": [{"text": question}]})];
                if let Ending::Prefill(text) = ending {
                    contents.push(json!({"role": "model", "parts": [{"text": text}]}));
                }
                json!({"contents": contents})
            }
            (_, ending) => {
                let list = if matches!(self, Format::OpenAiResponses) { "input" } else { "messages" };
                let mut turns = vec![json!({"role": "user", "content": question})];
                match (self, ending) {
                    (_, Ending::User) => {}
                    (Format::AnthropicMessages, Ending::Prefill(text)) => {
                        turns.push(json!({"role": "assistant", "content": [{"type": "text", "text": text}]}));
                    }
                    (Format::OpenAiResponses, Ending::Prefill(text)) => turns.push(
                        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}),
                    ),
                    (_, Ending::Prefill(text)) => turns.push(json!({"role": "assistant", "content": text})),
                }
                json!({"model": "m", "stream": stream, "max_tokens": 50, list: turns})
            }
        };
        body.to_string()
    }

    pub fn post(self, provider: &Provider, scenario: &str, stream: bool, ending: Ending) -> Answer {
        provider.post(&self.path(scenario, stream), &self.body(stream, ending))
    }

    /// The text of each content event of a stream.
    pub fn streamed_texts(self, answer: &Answer) -> Vec<String> {
        let events = answer.event_json();
        let text = |event: &Value| -> Option<String> {
            let text = match self {
                Format::OpenAiChat => &event["choices"][0]["delta"]["content"],
                Format::AnthropicMessages => &event["delta"]["text"],
                Format::OpenAiResponses if event["type"] == "response.output_text.delta" => &event["delta"],
                Format::OpenAiResponses => &Value::Null,
                Format::Gemini => &event["candidates"][0]["content"]["parts"][0]["text"],
            };
            text.as_str().filter(|text| !text.is_empty()).map(str::to_owned)
        };
        events.iter().filter_map(text).collect()
    }

    /// The text of a whole answer.
    pub fn whole_text(self, answer: &Answer) -> String {
        let body = answer.json();
        let text = match self {
            Format::OpenAiChat => &body["choices"][0]["message"]["content"],
            Format::AnthropicMessages => &body["content"][0]["text"],
            Format::OpenAiResponses => &body["output"][0]["content"][0]["text"],
            Format::Gemini => &body["candidates"][0]["content"]["parts"][0]["text"],
        };
        text.as_str().unwrap_or_else(|| panic!("no text in {body}")).to_owned()
    }

    /// The message of an error answer.
    pub fn error_message(self, answer: &Answer) -> String {
        let body = answer.json();
        body["error"]["message"].as_str().unwrap_or_else(|| panic!("no error message in {body}")).to_owned()
    }
}
