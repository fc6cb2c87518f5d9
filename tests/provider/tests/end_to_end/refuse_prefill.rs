//! `refusePrefill`: a model that refuses a conversation ending with its own turn, as newer
//! Anthropic models do, in each format's error shape; other requests play the step.

use serde_json::json;

use crate::client::{read_until, Provider};
use crate::turns::{Ending, Format, FORMATS};

const REFUSED: &str =
    "This model does not support assistant message prefill. The conversation must end with a user message.";

#[test]
fn a_prefill_gets_the_400_in_each_formats_error_shape() {
    let provider = Provider::start();
    provider.define("refuses", json!([{"refusePrefill": true, "text": "fresh answer"}]));
    let types = [
        (Format::OpenAiChat, json!({"type": "invalid_request_error"})),
        (Format::AnthropicMessages, json!({"type": "invalid_request_error"})),
        (Format::OpenAiResponses, json!({"type": "invalid_request_error"})),
        (Format::Gemini, json!({"status": "INVALID_ARGUMENT", "code": 400})),
    ];
    for (format, shape) in types {
        for stream in [true, false] {
            let answer = format.post(&provider, "refuses", stream, Ending::Prefill("Hello"));
            assert_eq!(answer.status, 400, "{format:?}");
            assert_eq!(answer.header("content-type"), Some("application/json"));
            assert_eq!(format.error_message(&answer), REFUSED, "{format:?}");
            let error = &answer.json()["error"];
            for (field, value) in shape.as_object().unwrap() {
                assert_eq!(&error[field], value, "{format:?} error.{field}");
            }
        }
    }
    let report = provider.scenario("refuses");
    assert_eq!((report["requests"].clone(), report["completed"].clone()), (json!(8), json!(8)));
    assert!(report["log"].as_array().unwrap().iter().all(|entry| entry["billed"].is_null()), "a 400 bills nothing");
}

#[test]
fn a_conversation_ending_with_the_user_plays_the_step() {
    let provider = Provider::start();
    provider.define("refuses", json!([{"refusePrefill": true, "text": "fresh answer"}]));
    for format in FORMATS {
        let answer = format.post(&provider, "refuses", true, Ending::User);
        assert_eq!(answer.status, 200, "{format:?}: {}", answer.text());
        assert_eq!(format.streamed_texts(&answer).concat(), "fresh answer", "{format:?}");
    }
}

#[test]
fn the_refusal_replaces_the_steps_faults_but_not_its_other_requests() {
    let provider = Provider::start();
    provider.define("faulty", json!([{"refusePrefill": true, "status": 503, "stallAfterEvents": 0}]));
    let refused = Format::AnthropicMessages.post(&provider, "faulty", true, Ending::Prefill("Hi"));
    assert_eq!(refused.status, 400, "the refusal comes whole, not stalled");
    let (path, body) =
        (Format::AnthropicMessages.path("faulty", false), Format::AnthropicMessages.body(false, Ending::User));
    let mut user = provider.send("POST", &path, &[], &body);
    read_until(&mut user, b"HTTP/1.1 503 ");
    let log = &provider.scenario("faulty")["log"];
    assert_eq!((log[0]["outcome"].clone(), log[1]["outcome"].clone()), (json!("completed"), json!("open")));
}
