//! A continued answer's prefill, as each provider reads it: `ChatRequest::with_prefill` makes the
//! text shown so far the request's final assistant message, and every format must send that as
//! the last turn of its body, in the shape its provider takes as the start of the answer.

use llm_baton::chat::{ChatRequest, Message, Role};
use llm_baton::format::{Endpoint, Format};
use serde_json::{json, Value};

const ENDPOINT: Endpoint<'static> = Endpoint {
    base_url: "https://llm.example.com/v1",
    model: "m",
    cloud: None,
    api_key: None,
    headers: &[],
    extra_body: None,
};

/// The body's list of turns, and the last turn a prefill of `text` must be.
fn turns_and_prefill(format: Format, text: &str) -> (&'static str, Value) {
    match format {
        Format::OpenaiChat => ("messages", json!({"role": "assistant", "content": text})),
        Format::AnthropicMessages => ("messages", json!({"role": "assistant", "content": text})),
        // An EasyInputMessage: string content, which the Responses API takes for an assistant
        // turn (a list of parts would have to be `output_text`).
        Format::OpenaiResponses => ("input", json!({"role": "assistant", "content": text})),
        Format::Gemini => ("contents", json!({"role": "model", "parts": [{"text": text}]})),
        Format::BedrockConverse => ("messages", json!({"role": "assistant", "content": [{"text": text}]})),
    }
}

fn last_turns(format: Format, request: &ChatRequest, stream: bool) -> Vec<Value> {
    let body: Value = serde_json::from_str(&format.build_request(ENDPOINT, request, stream).body).expect("JSON body");
    let (turns, _) = turns_and_prefill(format, "");
    let turns = body[turns].as_array().unwrap_or_else(|| panic!("{format:?}: no {turns} in {body}"));
    turns.iter().rev().take(2).rev().cloned().collect()
}

#[test]
fn every_format_sends_the_prefill_as_the_last_turn() {
    let asked = ChatRequest {
        messages: vec![Message::new(Role::System, "Be brief."), Message::new(Role::User, "What is 6 x 7?")],
        ..Default::default()
    };
    let mut started = asked.clone();
    started.messages.push(Message::new(Role::Assistant, "Let me think. "));
    let cases = [
        ("after the user's turn", asked.with_prefill("The answer is"), "The answer is"),
        (
            "appended to the request's own assistant turn",
            started.with_prefill("The answer is"),
            "Let me think. The answer is",
        ),
    ];
    for format in Format::ALL {
        for (case, request, text) in &cases {
            for stream in [false, true] {
                let turns = last_turns(format, request, stream);
                let (_, prefill) = turns_and_prefill(format, text);
                assert_eq!(turns.last(), Some(&prefill), "{format:?} {case}");
                assert_eq!(turns[0]["role"], "user", "{format:?} {case}: the prefill is a turn of its own");
            }
        }
    }
}
