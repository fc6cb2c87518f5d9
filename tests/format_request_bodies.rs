//! The exact bytes of every format's request body, for requests that use every field: bodies
//! are written by hand (llm_baton_wire::write), and a provider, a cache or a signature may see
//! the text itself, so its key order, spacing, escapes and numbers are the contract, not only
//! the JSON value. `BLESS=1 cargo test --test format_request_bodies` rewrites the files.

use std::fs;

use llm_baton::chat::ChatRequest;
use llm_baton::format::{Endpoint, Format};
use serde_json::{json, Map, Value};

/// Requests that together use every field and every kind of part, with text that needs escapes.
fn requests() -> Vec<Value> {
    let schema = json!({"type": "object", "properties": {"city": {"type": "string", "enum": ["Zürich", "\"q\""]}}});
    vec![
        json!({"messages": [{"role": "user", "content": "hi"}]}),
        json!({
            "messages": [
                {"role": "system", "content": "Be brief.\n\tAlways."},
                {"role": "system", "content": "Second \u{1} rule </script>"},
                {"role": "user", "content": [
                    {"type": "text", "text": "what are these? \u{7f}🦀"},
                    {"type": "image", "url": "https://x.example/cat.png"},
                    {"type": "image", "url": "https://x.example/dog", "mediaType": "image/jpeg"},
                    {"type": "image", "data": "iVBORw0KGgo=", "mediaType": "image/png"},
                    {"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf", "filename": "a \"b\".pdf"},
                    {"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf"},
                    {"type": "file", "url": "https://x.example/r.pdf", "mediaType": "application/pdf"},
                ]},
                {"role": "assistant", "content": "", "toolCalls": [
                    {"id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                    {"id": "call_2", "name": "noop", "arguments": " "},
                    {"id": "call_3", "name": "get_weather", "arguments": "[1, \"a\"]"},
                ]},
                {"role": "tool", "toolCallId": "call_1", "content": "{\"temp\": 21.5, \"unit\": \"C\"}"},
                {"role": "tool", "toolCallId": "call_2", "content": "[1, 2]"},
                {"role": "tool", "toolCallId": "call_3", "content": "plain text"},
                {"role": "assistant", "content": "Let me check.", "toolCalls": [
                    {"id": "call_4", "name": "get_weather", "arguments": "{}"},
                ]},
                {"role": "tool", "toolCallId": "call_4", "content": "sunny"},
                {"role": "user", "content": "thanks"},
                {"role": "assistant", "content": "You are"},
            ],
            "maxTokens": 300,
            "temperature": 0.7,
            "topP": 0.95,
            "seed": -42,
            "stop": ["\n\n", "END"],
            "tools": [
                {"name": "get_weather", "description": "The weather in a city", "parameters": schema},
                {"name": "noop"},
            ],
            "toolChoice": {"name": "get_weather"},
            "parallelToolCalls": false,
            "responseFormat": {"type": "json", "schema": schema, "name": "weather", "description": "d", "strict": true},
        }),
        json!({
            "messages": [{"role": "user", "content": "x"}],
            "temperature": 1,
            "topP": 1e-7,
            "tools": [{"name": "f", "parameters": {"type": "object", "properties": {}}}],
            "toolChoice": "required",
            "responseFormat": {"type": "json"},
        }),
        json!({
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "f", "parameters": {"type": "object"}}],
            "toolChoice": "none",
            "parallelToolCalls": true,
        }),
        json!({
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"name": "f"}],
            "toolChoice": "auto",
            "responseFormat": {"type": "json", "schema": {"type": "array"}},
        }),
        json!({"messages": [{"role": "user", "content": "x"}], "toolChoice": "auto", "parallelToolCalls": false}),
        // A tool loop's history holding every format's reasoning state: each format sends back
        // only what model "m" of its own format issued, and a state of another model nowhere.
        json!({
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": [
                    {"type": "reasoning", "text": "Think \"first\".", "state": {"format": "anthropic_messages", "model": "m", "signature": "sig-a"}},
                    {"type": "reasoning", "text": "", "state": {"format": "anthropic_messages", "model": "m", "redactedData": "red-a"}},
                    {"type": "reasoning", "text": "Old.", "state": {"format": "anthropic_messages", "model": "m-old", "signature": "sig-old"}},
                    {"type": "reasoning", "text": "\n\nSummary.", "state": {"format": "openai_responses", "model": "m", "id": "rs_1", "encryptedContent": "enc-r"}},
                    {"type": "reasoning", "text": "", "state": {"format": "gemini", "model": "m", "signature": "sig-g-text"}},
                    {"type": "reasoning", "text": "No state."},
                    {"type": "text", "text": "Checking."},
                ], "toolCalls": [
                    {"id": "call_1", "name": "f", "arguments": "{}", "state": {"format": "gemini", "model": "m", "signature": "sig-g"}},
                ]},
                {"role": "tool", "toolCallId": "call_1", "content": "sunny"},
            ],
            "tools": [{"name": "f"}],
            "maxTokens": 4000,
            "reasoning": {"effort": "high", "summary": true},
        }),
        json!({"messages": [{"role": "user", "content": "x"}], "reasoning": {"budgetTokens": 2000}}),
    ]
}

fn bodies(format: Format) -> String {
    let extra: Map<String, Value> =
        serde_json::from_value(json!({"user": "u-1", "metadata": {"b": 1, "a": [0.5]}})).expect("an object");
    let mut text = String::new();
    for (i, value) in requests().iter().enumerate() {
        let request = ChatRequest::from_value(value).expect("a valid request");
        for stream in [false, true] {
            for extra_body in [None, Some(&extra)] {
                let endpoint = Endpoint {
                    base_url: "https://api.example",
                    model: "m",
                    cloud: None,
                    api_key: None,
                    headers: &[],
                    extra_body,
                };
                let http = format.build_request(endpoint, &request, stream);
                let extra = if extra_body.is_some() { " extraBody" } else { "" };
                text += &format!("request {i} stream {stream}{extra}\n{}\n", http.body);
            }
        }
    }
    text
}

#[test]
fn request_bodies_are_byte_for_byte_as_recorded() {
    let bless = std::env::var_os("BLESS").is_some();
    for format in Format::ALL {
        let path = format!("{}/tests/fixtures/request_bodies/{}.txt", env!("CARGO_MANIFEST_DIR"), format.as_str());
        let actual = bodies(format);
        if bless {
            fs::write(&path, &actual).expect("written");
            continue;
        }
        let expected = fs::read_to_string(&path).expect("recorded (run with BLESS=1)");
        for (line, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
            assert_eq!(a, e, "{path}:{}", line + 1);
        }
        assert_eq!(actual.lines().count(), expected.lines().count(), "{path}");
    }
}
