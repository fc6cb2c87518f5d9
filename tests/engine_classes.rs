//! Issue 11 point 9: a provider error's class steers the gate. Each failure is read from a
//! real-shaped error body by its format, exactly as the driver does, then scripted into the
//! engine with a fake clock: the times say whether the member was retried, failed over or final.

mod support;

use llm_baton::format::{FailureClass, Format};
use llm_baton::outcome::{Failure, FailureInfo};
use llm_baton::record::Event;
use llm_baton_wire::write::ToJson;
use serde_json::json;
use support::*;

/// `a` retried up to 3 times (100 ms apart) inside a fallback to `b`.
fn config(retry_on: &str, fallback_on: &str) -> String {
    format!(
        r#"{{"targets": {{
            "a": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m"}},
            "b": {{"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:2/v1", "model": "m"}}
        }}, "routes": {{"chat": {{"fallback": [{{"retry": "a", "attempts": 3, "backoff": {{"initialMs": 100, "jitter": "none"}} {retry_on}}}, "b"] {fallback_on}}}}}}}"#
    )
}

/// The failure the driver would make of this error answer.
fn read(format: Format, status: u16, body: &str) -> Failure {
    Failure::from_http(status, &[], format.error_body(status, body.as_bytes()), 0)
}

const CONTEXT: (Format, u16, &str) = (
    Format::OpenaiChat,
    400,
    r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
);
const FILTER: (Format, u16, &str) = (
    Format::OpenaiChat,
    400,
    r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}"#,
);
const QUOTA: (Format, u16, &str) = (
    Format::OpenaiChat,
    429,
    r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
);
const AUTH: (Format, u16, &str) = (
    Format::Gemini,
    400,
    r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#,
);
const OVERLOADED: (Format, u16, &str) = (
    Format::AnthropicMessages,
    529,
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#,
);
const RATE: (Format, u16, &str) = (
    Format::Gemini,
    429,
    r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}}"#,
);
const PROMPT_TOO_LONG: (Format, u16, &str) = (
    Format::AnthropicMessages,
    400,
    r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215487 tokens > 200000 maximum"}}"#,
);

fn failure((format, status, body): (Format, u16, &str)) -> Failure {
    read(format, status, body)
}

/// What happened after `a` failed once at 10 ms: `b` answers 40 ms after it is sent, a retry
/// of `a` 50 ms after.
#[derive(Debug, PartialEq)]
enum Next {
    Retried,
    FailedOver,
    Final,
}

fn next_after(error: Failure, retry_on: &str, fallback_on: &str) -> Next {
    let cfg = config(retry_on, fallback_on);
    let mut sim = Sim::new(&cfg)
        .script("a", vec![Behavior::Fail { at: 10, failure: error.clone() }, ok_at(50)])
        .script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    match run.sent_targets().as_slice() {
        ["a", "a"] => {
            assert_eq!((run.served_by(sim.config()), run.finished_at), ("a".into(), 160));
            Next::Retried
        }
        ["a", "b"] => {
            assert_eq!((run.served_by(sim.config()), run.finished_at), ("b".into(), 50));
            Next::FailedOver
        }
        ["a"] => {
            assert_eq!((run.failure(), run.finished_at), (&error, 10), "the provider's failure, unchanged");
            Next::Final
        }
        other => panic!("unexpected sends {other:?}"),
    }
}

#[test]
fn each_class_has_its_default() {
    use FailureClass::*;
    let cases = [
        (CONTEXT, ContextLength, Next::FailedOver),
        (PROMPT_TOO_LONG, ContextLength, Next::FailedOver),
        (FILTER, ContentFilter, Next::Final),
        (QUOTA, Quota, Next::FailedOver),
        (AUTH, Auth, Next::FailedOver),
        (OVERLOADED, Overloaded, Next::Retried),
        (RATE, RateLimit, Next::Retried),
    ];
    for (said, class, next) in cases {
        let error = failure(said);
        assert_eq!(error.class(), Some(class), "{}", said.2);
        assert_eq!(next_after(error, "", ""), next, "{class:?}");
    }
}

#[test]
fn lists_name_classes_to_override_the_defaults() {
    let cases = [
        // Routed around only when fallbackOn names it, never by its status.
        (FILTER, "", r#", "fallbackOn": ["content_filter"]"#, Next::FailedOver),
        (FILTER, "", r#", "fallbackOn": ["4xx", 400]"#, Next::Final),
        // A status worth waiting for in retryOn does not retry what waiting cannot help.
        (QUOTA, r#", "retryOn": [429]"#, "", Next::FailedOver),
        (QUOTA, r#", "retryOn": ["quota"]"#, "", Next::Retried),
        (CONTEXT, r#", "retryOn": ["4xx"]"#, "", Next::FailedOver),
        // A fallbackOn of other classes keeps a member that failed differently.
        (CONTEXT, "", r#", "fallbackOn": ["quota"]"#, Next::Final),
        (CONTEXT, "", r#", "fallbackOn": ["context_length"]"#, Next::FailedOver),
        // Classes that waiting helps match by name or, as before, by status.
        (OVERLOADED, r#", "retryOn": ["rate_limit"]"#, "", Next::FailedOver),
        (OVERLOADED, r#", "retryOn": ["overloaded"]"#, "", Next::Retried),
        (RATE, r#", "retryOn": [429]"#, "", Next::Retried),
    ];
    for (said, retry_on, fallback_on, next) in cases {
        assert_eq!(next_after(failure(said), retry_on, fallback_on), next, "{retry_on} {fallback_on}: {}", said.2);
    }
}

#[test]
fn events_and_errors_carry_the_code_and_the_class() {
    let cfg = config("", "");
    let quota = failure(QUOTA);
    let mut sim = Sim::new(&cfg)
        .script("a", vec![Behavior::Fail { at: 10, failure: quota.clone() }])
        .script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    let cause = run
        .events
        .iter()
        .find_map(|e| match e {
            Event::Failover { cause, .. } => Some(serde_json::from_str::<serde_json::Value>(&cause.to_json()).unwrap()),
            _ => None,
        })
        .expect("a failover");
    assert_eq!(
        cause,
        json!({"kind": "http", "message": "HTTP 429: You exceeded your current quota, please check your plan and billing details.",
               "status": 429, "code": "insufficient_quota", "class": "quota"})
    );

    let filter = failure(FILTER);
    let mut sim =
        Sim::new(&cfg).script("a", vec![Behavior::Fail { at: 10, failure: filter }]).script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    let error = serde_json::from_str::<serde_json::Value>(&FailureInfo(run.failure().clone()).to_json()).unwrap();
    assert_eq!(error["class"], "content_filter");
    assert_eq!(error["code"], "content_filter");
    assert!(error["message"].as_str().unwrap().contains("content management policy"), "the provider's reason is kept");

    // Failures of no class name none.
    let unclassed = serde_json::from_str::<serde_json::Value>(
        &FailureInfo(Failure::Transport { message: "reset".into() }).to_json(),
    )
    .unwrap();
    assert_eq!(unclassed, json!({"kind": "transport", "message": "transport error: reset"}));
}

#[test]
fn an_in_stream_error_of_a_class_fails_over_before_the_commit_point() {
    // Anthropic's error event before any text: the stream is uncommitted, so the class decides.
    let mut decoder = Format::AnthropicMessages.stream_decoder();
    let data = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215487 tokens > 200000 maximum"}}"#;
    let event = llm_baton::sse::SseEvent { event: "error".into(), data: data.into(), ..Default::default() };
    let error = Failure::from(decoder.on_event(&event, &mut Vec::new()).expect_err("an error event"));
    assert_eq!((error.status(), error.class()), (Some(400), Some(FailureClass::ContextLength)));
    assert_eq!(next_after(error, "", ""), Next::FailedOver);
}
