//! `echo`: a step whose answer is the text of the request's last user turn (the soak's nonce).

use serde_json::json;

use crate::client::Provider;
use crate::turns::{Ending, Format, FORMATS};

#[test]
fn each_format_answers_the_last_user_turn_whole_and_streamed() {
    let provider = Provider::start();
    provider.define("echo", json!([{"echo": true}]));
    for format in FORMATS {
        let streamed = format.post(&provider, "echo", true, Ending::User);
        assert_eq!(streamed.status, 200, "{format:?}: {}", streamed.text());
        assert_eq!(format.streamed_texts(&streamed), ["Say", " hello"], "{format:?}");
        let whole = format.post(&provider, "echo", false, Ending::User);
        assert_eq!(whole.status, 200, "{format:?}: {}", whole.text());
        assert_eq!(format.whole_text(&whole), "Say hello", "{format:?}");
    }
}

#[test]
fn the_latest_user_turn_is_echoed_and_a_request_without_one_is_refused() {
    let provider = Provider::start();
    provider.define("echo", json!([{"echo": true, "stallAfterEvents": 1, "stallMs": 10}, {"echo": true}]));
    let path = "/s/echo/v1/chat/completions";
    let turns = json!([{"role": "user", "content": "n1 a"}, {"role": "assistant", "content": "x"}, {"role": "user", "content": [{"type": "text", "text": "n2 b"}]}]);
    let cut = provider.post(path, &json!({"model": "m", "stream": true, "messages": turns}).to_string());
    assert_eq!(Format::OpenAiChat.streamed_texts(&cut), ["n2"], "the step's faults apply to the echo");
    let refused =
        provider.post(path, &json!({"model": "m", "messages": [{"role": "system", "content": "s"}]}).to_string());
    assert_eq!(refused.status, 400);
    assert!(refused.text().contains("echo: the request has no user turn with text"), "{}", refused.text());
    let combined =
        provider.request("PUT", "/_scenarios/bad", &[], &json!({"steps": [{"echo": true, "text": "t"}]}).to_string());
    assert_eq!(combined.status, 400);
    assert!(combined.text().contains("cannot be combined with text"), "{}", combined.text());
}
