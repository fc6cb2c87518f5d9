//! `usagePerEvent`: streams that report the usage so far on every chunk (vLLM's
//! continuous_usage_stats, Gemini's usageMetadata), and the formats that cannot.

use serde_json::{json, Value};

use crate::client::Provider;
use crate::turns::{Ending, Format};

#[test]
fn openai_chat_puts_the_usage_so_far_on_every_chunk() {
    let provider = Provider::start();
    provider.define("vllm", json!([{"usagePerEvent": true, "text": "one two three"}]));
    let body = r#"{"model":"m","stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}"#;
    let chunks = provider.post("/s/vllm/v1/chat/completions", body).event_json();
    let completion: Vec<_> = chunks.iter().map(|chunk| chunk["usage"]["completion_tokens"].clone()).collect();
    assert_eq!(
        completion,
        [json!(0), json!(1), json!(2), json!(3), json!(3), json!(3)],
        "role, 3 content, finish, usage"
    );
    assert_eq!(chunks[2]["usage"], json!({"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}));
    assert_eq!(chunks[2]["choices"][0]["delta"]["content"], " two");
    assert_eq!(chunks[5]["choices"], json!([]), "include_usage still ends with the usage-only chunk");

    let without_include = provider.post("/s/vllm/v1/chat/completions", r#"{"model":"m","stream":true}"#).event_json();
    assert_eq!(without_include.len(), 5, "no usage-only chunk");
    assert!(without_include.iter().all(|chunk| chunk["usage"].is_object()), "yet every chunk has usage");
}

#[test]
fn gemini_puts_the_candidates_so_far_on_every_chunk() {
    let provider = Provider::start();
    provider.define("gem", json!([{"usagePerEvent": true, "text": "one two three", "usage": {"inputTokens": 4}}]));
    let chunks = provider.post("/s/gem/v1beta/models/g:streamGenerateContent?alt=sse", "{}").event_json();
    let usage: Vec<Value> = chunks.iter().map(|chunk| chunk["usageMetadata"].clone()).collect();
    let expected: Vec<Value> = (1..=3)
        .chain([3])
        .map(|output| json!({"promptTokenCount": 4, "candidatesTokenCount": output, "totalTokenCount": 4 + output}))
        .collect();
    assert_eq!(usage, expected);
    assert_eq!(chunks[3]["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn a_cut_stream_reported_the_usage_of_what_it_sent() {
    let provider = Provider::start();
    provider.define("cut", json!([{"usagePerEvent": true, "stallAfterEvents": 2, "stallMs": 50}]));
    let chunks = provider.post("/s/cut/v1/chat/completions", r#"{"model":"m","stream":true}"#).event_json();
    let last = chunks.last().unwrap();
    assert_eq!((chunks.len(), &last["usage"]["completion_tokens"]), (3, &json!(2)));
}

#[test]
fn formats_that_report_output_only_at_the_end_refuse_it() {
    let provider = Provider::start();
    provider.define("end-only", json!([{"usagePerEvent": true}]));
    let cases = [
        (Format::AnthropicMessages, "anthropic_messages streams report output tokens only at the end (message_delta)"),
        (Format::OpenAiResponses, "openai_responses streams report output tokens only at the end (response.completed)"),
    ];
    for (format, reason) in cases {
        let answer = format.post(&provider, "end-only", true, Ending::User);
        assert_eq!(answer.status, 400, "{format:?}");
        assert_eq!(
            format.error_message(&answer),
            format!("usagePerEvent: {reason}; script it for openai_chat or gemini")
        );
        let whole = format.post(&provider, "end-only", false, Ending::User);
        assert_eq!(whole.status, 200, "{format:?}: a whole answer's usage is whole anyway");
    }
}

#[test]
fn steps_without_a_scripted_stream_refuse_it_at_definition() {
    let provider = Provider::start();
    for (step, field) in [(json!({"status": 503}), "status"), (json!({"raw": {"chunks": ["data: x\n\n"]}}), "raw")] {
        let mut step = step;
        step["usagePerEvent"] = json!(true);
        let answer = provider.request("PUT", "/_scenarios/bad", &[], &json!({"steps": [step]}).to_string());
        assert_eq!(answer.status, 400);
        assert_eq!(
            answer.json()["error"],
            format!("steps[0]: usagePerEvent shapes a scripted stream, and a {field} step sends none")
        );
    }
}
