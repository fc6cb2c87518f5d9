//! `continueFrom`: a step that continues the prefill the request ends with, or says why it cannot.

use serde_json::json;

use crate::client::Provider;
use crate::turns::{Ending, Format, FORMATS};

const FULL: &str = "Hello from the scripted provider, continued.";
/// What a client sends after showing "Hello from ": the shown text, trailing whitespace trimmed.
const PREFILL: &str = "Hello from";

#[test]
fn each_format_streams_the_rest_after_its_prefill_word_by_word() {
    let provider = Provider::start();
    provider.define("cont", json!([{"continueFrom": FULL}]));
    for format in FORMATS {
        let answer = format.post(&provider, "cont", true, Ending::Prefill(PREFILL));
        assert_eq!(answer.status, 200, "{format:?}: {}", answer.text());
        assert_eq!(
            format.streamed_texts(&answer),
            [" the", " scripted", " provider,", " continued."],
            "{format:?} keeps the space before each word"
        );
    }
    assert_eq!(provider.scenario("cont")["completed"], 4);
}

#[test]
fn whole_answers_are_the_rest_in_one_piece() {
    let provider = Provider::start();
    provider.define("cont", json!([{"continueFrom": FULL}]));
    for format in FORMATS {
        let answer = format.post(&provider, "cont", false, Ending::Prefill(PREFILL));
        assert_eq!(answer.status, 200, "{format:?}: {}", answer.text());
        assert_eq!(format.whole_text(&answer), " the scripted provider, continued.", "{format:?}");
    }
}

#[test]
fn the_steps_other_fields_apply_to_the_rest() {
    let provider = Provider::start();
    provider.define(
        "shaped",
        json!([
            {"continueFrom": "abcdef", "chunks": 2, "usage": {"inputTokens": 9}},
            {"continueFrom": FULL, "stallAfterEvents": 1, "stallMs": 50},
        ]),
    );
    let chat = Format::OpenAiChat;
    let chunked = provider.post(
        &chat.path("shaped", true),
        r#"{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"assistant","content":"ab"}]}"#,
    );
    assert_eq!(chat.streamed_texts(&chunked), ["cd", "ef"]);
    let chunks = chunked.event_json();
    assert_eq!(chunks.last().unwrap()["usage"]["prompt_tokens"], 9);

    let cut = Format::AnthropicMessages.post(&provider, "shaped", true, Ending::Prefill(PREFILL));
    assert_eq!(Format::AnthropicMessages.streamed_texts(&cut), [" the"], "one content event, then the cut");
    assert_eq!(provider.scenario("shaped")["log"][1]["outcome"], "reset");
}

#[test]
fn a_prefill_equal_to_the_full_text_leaves_nothing_to_stream() {
    let provider = Provider::start();
    provider.define("all-shown", json!([{"continueFrom": "Done."}]));
    let answer = Format::Gemini.post(&provider, "all-shown", true, Ending::Prefill("Done."));
    assert_eq!(answer.status, 200);
    assert!(Format::Gemini.streamed_texts(&answer).is_empty());
    assert_eq!(answer.event_json().last().unwrap()["candidates"][0]["finishReason"], "STOP");
}

#[test]
fn a_request_without_a_prefill_gets_a_400_that_says_where_it_ends() {
    let provider = Provider::start();
    provider.define("no-prefill", json!([{"continueFrom": FULL}]));
    let expected = [
        (Format::OpenAiChat, r#"messages[0].role is "user""#),
        (Format::AnthropicMessages, r#"messages[0].role is "user""#),
        (Format::OpenAiResponses, r#"input[0].role is "user""#),
        (Format::Gemini, r#"contents[0].role is "user""#),
    ];
    for (format, where_it_ends) in expected {
        let answer = format.post(&provider, "no-prefill", true, Ending::User);
        assert_eq!(answer.status, 400, "{format:?}");
        let message = format.error_message(&answer);
        assert!(message.starts_with("continueFrom: the request must end with an assistant turn"), "{message}");
        assert!(message.ends_with(where_it_ends), "{format:?}: {message}");
    }
    let anthropic = Format::AnthropicMessages.post(&provider, "no-prefill", false, Ending::User).json();
    assert_eq!(anthropic["error"]["type"], "invalid_request_error");
    let chat = provider.post(&Format::OpenAiChat.path("no-prefill", false), r#"{"model":"m"}"#);
    assert!(Format::OpenAiChat.error_message(&chat).ends_with("but the request has no messages array"));
}

#[test]
fn a_prefill_that_is_not_a_prefix_gets_a_400_showing_both_starts() {
    let provider = Provider::start();
    provider.define("mismatch", json!([{"continueFrom": FULL}]));
    let answer = Format::OpenAiResponses.post(&provider, "mismatch", true, Ending::Prefill("Hello form"));
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["error"]["type"], "invalid_request_error");
    assert_eq!(
        Format::OpenAiResponses.error_message(&answer),
        "continueFrom: the prefill in input[1] is not a prefix of the scripted text (they differ at character 7): \
         prefill \"Hello form\", scripted \"Hello from the scripted provider, contin…\""
    );
    let longer = format!("{FULL} And more.");
    let gemini = Format::Gemini.post(&provider, "mismatch", true, Ending::Prefill(&longer));
    let message = Format::Gemini.error_message(&gemini);
    assert!(message.contains("in contents[1] is not a prefix"), "{message}");
    assert!(message.contains("(they differ at character 44)"), "a prefill longer than the text: {message}");
    let spaced = Format::Gemini.post(&provider, "mismatch", true, Ending::Prefill("Hello from "));
    assert_eq!(Format::Gemini.streamed_texts(&spaced)[0], "the", "an untrimmed prefill still matches exactly");
}

#[test]
fn a_prefill_holding_a_tool_call_is_not_text() {
    let provider = Provider::start();
    provider.define("tool", json!([{"continueFrom": FULL}]));
    let body = r#"{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}"#;
    let answer = provider.post(&Format::OpenAiChat.path("tool", false), body);
    assert_eq!(answer.status, 400);
    assert!(Format::OpenAiChat.error_message(&answer).contains("(messages[0]) that is not only text"));
}

#[test]
fn continue_from_with_an_answer_of_its_own_is_refused_at_definition() {
    let provider = Provider::start();
    for (extra, field) in [
        (json!({"text": "x"}), "text"),
        (json!({"toolCall": {"name": "f"}}), "toolCall"),
        (json!({"status": 500}), "status"),
        (json!({"raw": {"chunks": ["x"]}}), "raw"),
        (json!({"refusePrefill": true}), "refusePrefill"),
    ] {
        let mut step = json!({"continueFrom": FULL});
        step.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let answer = provider.request("PUT", "/_scenarios/bad", &[], &json!({"steps": [{}, step]}).to_string());
        assert_eq!(answer.status, 400);
        let error = answer.json()["error"].as_str().unwrap().to_owned();
        assert!(error.starts_with("steps[1]: continueFrom is the whole answer text"), "{error}");
        assert!(error.ends_with(&format!("cannot be combined with {field}")), "{error}");
    }
}
