//! Healthy answers, error bodies and tool calls in each provider's wire format.

use serde_json::{json, Value};

use crate::client::Provider;

const TEXT: &str = "Hello from the scripted provider.";

fn concat(values: impl IntoIterator<Item = Value>) -> String {
    values.into_iter().filter_map(|value| value.as_str().map(str::to_owned)).collect()
}

#[test]
fn openai_chat_stream_has_role_chunk_content_finish_usage_and_done() {
    let provider = Provider::start();
    let answer = provider
        .post("/v1/chat/completions", r#"{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true}}"#);
    assert_eq!(answer.status, 200);
    assert!(answer.header("content-type").is_some_and(|value| value.starts_with("text/event-stream")));
    let events = answer.events();
    assert!(events.iter().all(|(name, _)| name.is_none()), "OpenAI sends data lines only");
    assert_eq!(events.last().map(|(_, data)| data.as_str()), Some("[DONE]"));
    let chunks = answer.event_json();
    assert!(chunks.iter().all(|chunk| chunk["object"] == "chat.completion.chunk" && chunk["model"] == "gpt-test"));
    assert!(chunks.iter().all(|chunk| chunk["id"] == chunks[0]["id"]));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[0]["choices"][0]["delta"]["content"], "");
    assert_eq!(concat(chunks.iter().map(|chunk| chunk["choices"][0]["delta"]["content"].clone())), TEXT);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"], json!({"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}));
}

#[test]
fn openai_chat_stream_without_include_usage_has_no_usage() {
    let provider = Provider::start();
    let answer = provider.post("/v1/chat/completions", r#"{"model":"m","stream":true}"#);
    assert!(answer.event_json().iter().all(|chunk| chunk.get("usage").is_none()));
}

#[test]
fn anthropic_stream_has_the_messages_event_sequence() {
    let provider = Provider::start();
    let answer = provider.post("/v1/messages", r#"{"model":"claude-test","stream":true,"max_tokens":10}"#);
    assert_eq!(answer.status, 200);
    let events = answer.events();
    let names: Vec<_> = events.iter().map(|(name, _)| name.clone().unwrap_or_default()).collect();
    let mut expected = vec!["message_start", "content_block_start", "ping"];
    expected.extend(["content_block_delta"; 5]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names, expected);
    let data = answer.event_json();
    assert!(data.iter().zip(&names).all(|(value, name)| value["type"] == name.as_str()));
    assert_eq!(data[0]["message"]["model"], "claude-test");
    assert_eq!(data[0]["message"]["role"], "assistant");
    assert_eq!(data[1]["content_block"], json!({"type": "text", "text": ""}));
    assert!(data[3..8].iter().all(|event| event["delta"]["type"] == "text_delta"));
    assert_eq!(concat(data[3..8].iter().map(|event| event["delta"]["text"].clone())), TEXT);
    assert_eq!(data[9]["delta"]["stop_reason"], "end_turn");
    assert_eq!(data[9]["usage"]["output_tokens"], 5);
}

#[test]
fn responses_stream_has_numbered_typed_events_and_completes_with_usage() {
    let provider = Provider::start();
    let answer = provider.post("/v1/responses", r#"{"model":"gpt-resp","stream":true,"input":"hi"}"#);
    let events = answer.events();
    let names: Vec<_> = events.iter().map(|(name, _)| name.clone().unwrap_or_default()).collect();
    assert_eq!(
        names[..4],
        ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]
    );
    assert_eq!(
        names[names.len() - 4..],
        ["response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]
    );
    let data = answer.event_json();
    for (index, (event, name)) in data.iter().zip(&names).enumerate() {
        assert_eq!(event["type"], name.as_str());
        assert_eq!(event["sequence_number"], index);
    }
    let deltas = data.iter().filter(|event| event["type"] == "response.output_text.delta");
    assert_eq!(concat(deltas.map(|event| event["delta"].clone())), TEXT);
    let completed = &data[data.len() - 1]["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], TEXT);
    assert_eq!(completed["usage"]["input_tokens"], 3);
    assert_eq!(completed["usage"]["output_tokens"], 5);
}

#[test]
fn gemini_stream_is_data_lines_ending_with_finish_reason() {
    let provider = Provider::start();
    let answer = provider.post("/v1beta/models/gemini-test:streamGenerateContent?alt=sse", r#"{"contents":[]}"#);
    assert_eq!(answer.status, 200);
    assert!(answer.text().contains("\r\n\r\n"), "Google separates events with CRLF");
    assert!(answer.events().iter().all(|(name, _)| name.is_none()));
    let chunks = answer.event_json();
    let text = concat(chunks.iter().map(|chunk| chunk["candidates"][0]["content"]["parts"][0]["text"].clone()));
    assert_eq!(text, TEXT);
    let last = &chunks[chunks.len() - 1];
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["promptTokenCount"], 3);
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 5);
    assert!(chunks[..chunks.len() - 1].iter().all(|chunk| chunk["candidates"][0].get("finishReason").is_none()));
}

#[test]
fn whole_answers_in_each_format() {
    let provider = Provider::start();
    provider.define("whole", json!([{"text": "One two three", "usage": {"inputTokens": 7}}]));

    let chat = provider.post("/s/whole/v1/chat/completions", r#"{"model":"m1"}"#);
    assert_eq!(chat.header("content-type"), Some("application/json"));
    assert_eq!(chat.header("content-length"), Some(chat.body.len().to_string().as_str()));
    let chat = chat.json();
    assert_eq!(chat["object"], "chat.completion");
    assert_eq!(chat["model"], "m1");
    assert_eq!(
        chat["choices"][0]["message"],
        json!({"role": "assistant", "content": "One two three", "refusal": null, "annotations": []})
    );
    assert_eq!(chat["choices"][0]["finish_reason"], "stop");
    assert_eq!(chat["usage"], json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}));

    let message = provider.post("/s/whole/v1/messages", r#"{"model":"m2","stream":false}"#).json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["content"], json!([{"type": "text", "text": "One two three"}]));
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(message["usage"]["input_tokens"], 7);
    assert_eq!(message["usage"]["output_tokens"], 3);

    let response = provider.post("/s/whole/v1/responses", r#"{"model":"m3"}"#).json();
    assert_eq!(response["object"], "response");
    assert_eq!(response["status"], "completed");
    assert_eq!(response["output"][0]["type"], "message");
    assert_eq!(
        response["output"][0]["content"][0],
        json!({"type": "output_text", "text": "One two three", "annotations": [], "logprobs": []})
    );
    assert_eq!(response["usage"]["total_tokens"], 10);

    let gemini = provider.post("/s/whole/v1beta/models/m4:generateContent", "{}").json();
    assert_eq!(gemini["candidates"][0]["content"], json!({"parts": [{"text": "One two three"}], "role": "model"}));
    assert_eq!(gemini["candidates"][0]["finishReason"], "STOP");
    assert_eq!(
        gemini["usageMetadata"],
        json!({"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10})
    );
    assert_eq!(gemini["modelVersion"], "m4");
}

#[test]
fn a_503_step_answers_each_formats_error_body() {
    let provider = Provider::start();
    provider.define("down", json!([{"status": 503}]));
    let chat = provider.post("/s/down/v1/chat/completions", r#"{"model":"m","stream":true}"#);
    assert_eq!(chat.status, 503);
    assert_eq!(chat.header("content-type"), Some("application/json"));
    assert_eq!(
        chat.json(),
        json!({"error": {"message": "scripted 503", "type": "server_error", "param": null, "code": null}})
    );
    let anthropic = provider.post("/s/down/v1/messages", r#"{"model":"m","stream":true}"#);
    assert_eq!(anthropic.status, 503);
    assert_eq!(anthropic.json(), json!({"type": "error", "error": {"type": "api_error", "message": "scripted 503"}}));
    let responses = provider.post("/s/down/v1/responses", r#"{"model":"m"}"#);
    assert_eq!(responses.status, 503);
    assert_eq!(responses.json()["error"]["message"], "scripted 503");
    let gemini = provider.post("/s/down/v1beta/models/g:streamGenerateContent?alt=sse", "{}");
    assert_eq!(gemini.status, 503);
    assert_eq!(gemini.json(), json!({"error": {"code": 503, "message": "scripted 503", "status": "UNAVAILABLE"}}));
}

#[test]
fn error_message_and_type_can_be_scripted() {
    let provider = Provider::start();
    provider.define("busy", json!([{"status": 529, "message": "Overloaded", "errorType": "overloaded_error"}]));
    let answer = provider.post("/s/busy/v1/messages", r#"{"model":"m"}"#);
    assert_eq!(answer.status, 529);
    assert_eq!(answer.json(), json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
}

#[test]
fn tool_calls_stream_as_argument_fragments_in_each_format() {
    let provider = Provider::start();
    let arguments = r#"{"city":"Paris","unit":"celsius"}"#;
    provider.define("tool", json!([{"toolCall": {"name": "get_weather", "arguments": arguments}, "chunks": 4}]));

    let chat = provider.post("/s/tool/v1/chat/completions", r#"{"model":"m","stream":true}"#).event_json();
    let start = &chat[0]["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(start["function"]["name"], "get_weather");
    assert!(start["id"].as_str().is_some_and(|id| id.starts_with("call_")));
    let fragments: Vec<_> = chat[1..5]
        .iter()
        .map(|chunk| chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].clone())
        .collect();
    assert_eq!(concat(fragments), arguments);
    assert_eq!(chat[5]["choices"][0]["finish_reason"], "tool_calls");

    let anthropic = provider.post("/s/tool/v1/messages", r#"{"model":"m","stream":true}"#).event_json();
    assert_eq!(anthropic[1]["content_block"]["type"], "tool_use");
    assert_eq!(anthropic[1]["content_block"]["name"], "get_weather");
    let partial = anthropic.iter().filter(|event| event["delta"]["type"] == "input_json_delta");
    assert_eq!(concat(partial.map(|event| event["delta"]["partial_json"].clone())), arguments);
    assert!(anthropic.iter().any(|event| event["delta"]["stop_reason"] == "tool_use"));

    let responses = provider.post("/s/tool/v1/responses", r#"{"model":"m","stream":true}"#).event_json();
    let deltas = responses.iter().filter(|event| event["type"] == "response.function_call_arguments.delta");
    assert_eq!(concat(deltas.map(|event| event["delta"].clone())), arguments);
    let done = responses.iter().find(|event| event["type"] == "response.output_item.done").unwrap();
    assert_eq!(done["item"]["type"], "function_call");
    assert_eq!(done["item"]["arguments"], arguments);

    let gemini = provider.post("/s/tool/v1beta/models/g:streamGenerateContent?alt=sse", "{}").event_json();
    assert_eq!(
        gemini[0]["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "get_weather", "args": {"city": "Paris", "unit": "celsius"}})
    );

    let whole = provider.post("/s/tool/v1/messages", r#"{"model":"m"}"#).json();
    assert_eq!(whole["content"][0]["input"], json!({"city": "Paris", "unit": "celsius"}));
    assert_eq!(whole["stop_reason"], "tool_use");
}
