//! Hostile answers: raw bodies sent verbatim, errors that echo the request's credentials, bodies
//! padded past a client's caps, and Retry-After values no client should trust.

use std::io::Read;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{close, read_until, wait_for, Answer, Provider};

const KEY: &str = "sk-hostile-abc123";
const STREAM_BODY: &str = r#"{"model":"m","stream":true}"#;

/// Request headers, by name.
type Headers = [(&'static str, String); 2];

/// The four endpoints under one scenario (format, path), each with the header its format carries
/// the key in and a custom token header.
fn endpoints(scenario: &str) -> [(&'static str, String, Headers); 4] {
    let bearer = ("authorization", format!("Bearer {KEY}"));
    let custom = ("x-custom-token", "tok-hostile-456".to_owned());
    [
        ("openai_chat", format!("/s/{scenario}/v1/chat/completions"), [bearer.clone(), custom.clone()]),
        ("anthropic_messages", format!("/s/{scenario}/v1/messages"), [("x-api-key", KEY.to_owned()), custom.clone()]),
        ("openai_responses", format!("/s/{scenario}/v1/responses"), [bearer, custom.clone()]),
        (
            "gemini",
            format!("/s/{scenario}/v1beta/models/g:streamGenerateContent?alt=sse"),
            [("x-goog-api-key", KEY.to_owned()), custom],
        ),
    ]
}

fn post_with(provider: &Provider, path: &str, headers: &[(&str, String)], body: &str) -> Answer {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
    provider.request("POST", path, &headers, body)
}

#[test]
fn raw_chunks_are_sent_verbatim_with_their_status_type_and_gaps() {
    let provider = Provider::start();
    let chunks = [
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":4294967295}]}}]}\n\n",
        "",
        "data: {\"usage\":{\"prompt_tokens\":1e400}}\n\n",
        "data: [DONE]\n\n",
    ];
    provider.define("raw", json!([{"raw": {"chunks": chunks}, "chunkDelayMs": 100}]));
    let started = Instant::now();
    let answer = provider.post("/s/raw/v1/chat/completions", STREAM_BODY);
    assert!(started.elapsed() >= Duration::from_millis(200), "two gaps of 100 ms");
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("text/event-stream; charset=utf-8"));
    assert_eq!(answer.text(), chunks.concat());
    assert_eq!(provider.scenario("raw")["completed"], 1);

    let body = r#"{"error":{"message":"plain"}}"#;
    provider
        .define("raw-error", json!([{"raw": {"status": 599, "contentType": "application/json", "chunks": [body]}}]));
    let answer = provider.post("/s/raw-error/v1/messages", "{}");
    assert_eq!((answer.status, answer.header("content-type")), (599, Some("application/json")));
    assert_eq!(answer.text(), body);
}

#[test]
fn raw_chunks_can_stall_after_some_chunks() {
    let provider = Provider::start();
    provider
        .define("raw-stall", json!([{"raw": {"chunks": ["data: one\n\n", "data: two\n\n"]}, "stallAfterEvents": 1}]));
    let mut stream = provider.send("POST", "/s/raw-stall/v1/chat/completions", &[], STREAM_BODY);
    let seen = read_until(&mut stream, b"data: one\n\n");
    assert!(!String::from_utf8_lossy(&seen).contains("two"));
    close(stream);
    assert!(wait_for(Duration::from_secs(5), || provider.scenario("raw-stall")["clientClosed"] == 1).is_some());
}

#[test]
fn bad_raw_steps_are_refused() {
    let provider = Provider::start();
    for (raw, reason) in [
        (json!({"status": 101, "chunks": []}), "200 to 599"),
        (json!({"contentType": "a\nb", "chunks": []}), "contentType"),
        (json!({"chunks": [], "delay": 1}), "unknown field"),
    ] {
        let answer = provider.request("PUT", "/_scenarios/bad", &[], &json!({"steps": [{"raw": raw}]}).to_string());
        assert_eq!(answer.status, 400, "{raw}");
        assert!(answer.text().contains(reason), "{raw}: {}", answer.text());
    }
}

#[test]
fn error_bodies_echo_the_credentials_in_each_format() {
    let provider = Provider::start();
    provider.define("echo", json!([{"status": 500, "message": "boom", "echoCredentials": true}]));
    for (format, path, headers) in endpoints("echo") {
        let answer = post_with(&provider, &path, &headers, r#"{"model":"m"}"#);
        assert_eq!(answer.status, 500, "{format}");
        // Every format's error body has `error.message`.
        let body = answer.json();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("boom (upstream said: "), "{format}: {message}");
        let (name, value) = &headers[0];
        assert!(message.contains(&format!("{name}={value}")), "{format}: {message}");
        assert!(message.contains("x-custom-token=tok-hostile-456"), "{format}: {message}");
    }
    let unechoed = json!([{"status": 500, "message": "boom"}]);
    provider.define("plain", unechoed);
    let answer = post_with(&provider, "/s/plain/v1/chat/completions", &endpoints("plain")[0].2, "{}");
    assert_eq!(answer.json()["error"]["message"], "boom");
}

#[test]
fn in_stream_errors_and_raw_chunks_echo_the_credentials() {
    let provider = Provider::start();
    let step = json!({"text": "a b", "echoCredentials": true, "streamError": {"afterEvents": 1, "message": "late"}});
    provider.define("echo-stream", json!([step]));
    for (format, path, headers) in endpoints("echo-stream") {
        let answer = post_with(&provider, &path, &headers, STREAM_BODY);
        let text = answer.text();
        assert!(text.contains(&format!("late (upstream said: {}={}", headers[0].0, headers[0].1)), "{format}: {text}");
    }
    // A Gemini error object after the frames, echoing through the placeholder, JSON-escaped.
    let frame = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}]}}]}\r\n\r\n";
    let error = "data: {\"error\":{\"code\":500,\"message\":\"said {{credentials}}\",\"status\":\"INTERNAL\"}}\r\n\r\n";
    provider.define("echo-raw", json!([{"raw": {"chunks": [frame, error]}}]));
    let headers = [("x-goog-api-key", "k\"q".to_owned())];
    let answer = post_with(&provider, "/s/echo-raw/v1beta/models/g:streamGenerateContent?alt=sse", &headers, "{}");
    let last = answer.events().pop().expect("two events").1;
    let last: Value = serde_json::from_str(&last).expect("still JSON");
    assert_eq!(last["error"]["message"], "said x-goog-api-key=k\"q");
}

#[test]
fn padded_error_bodies_and_answers_reach_the_size() {
    let provider = Provider::start();
    let size = 300_000;
    provider.define("big-error", json!([{"status": 500, "padToBytes": size}]));
    let answer = provider.post("/s/big-error/v1/chat/completions", r#"{"model":"m"}"#);
    assert_eq!(answer.status, 500);
    assert_eq!(answer.body.len(), size);
    assert!(answer.json()["error"]["message"].as_str().is_some_and(|m| m.starts_with("scripted 500xxx")));

    provider.define("big-answer", json!([{"text": "big", "padToBytes": size}]));
    for path in ["/s/big-answer/v1/chat/completions", "/s/big-answer/v1/responses"] {
        let answer = provider.post(path, r#"{"model":"m"}"#);
        assert_eq!(answer.status, 200);
        assert!(answer.body.len() >= size, "{path}: {} bytes", answer.body.len());
        assert!(answer.text().contains("bigxxxx"), "{path}");
    }

    let answer = provider.post("/s/big-answer/v1/chat/completions", STREAM_BODY);
    let text: String = answer
        .event_json()
        .iter()
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text.len(), size);
    assert!(text.starts_with("bigxxx"));
    let events = answer.event_json().len();
    assert!(events >= size / (16 << 10), "{events} events of at most 16 KiB");
}

#[test]
fn a_client_that_stops_reading_a_padded_body_is_seen_closing() {
    let provider = Provider::start();
    provider.define("huge", json!([{"text": "huge", "padToBytes": 40 << 20}]));
    let mut stream = provider.send("POST", "/s/huge/v1/chat/completions", &[], r#"{"model":"m"}"#);
    let mut buffer = vec![0; 1 << 20];
    let read = stream.read(&mut buffer).expect("some of the body");
    assert!(read > 0);
    close(stream);
    assert!(wait_for(Duration::from_secs(5), || provider.scenario("huge")["clientClosed"] == 1).is_some());
}

#[test]
fn absurd_retry_after_values_pass_through_headers() {
    let provider = Provider::start();
    for value in ["99999999999999999999", "Fri, 31 Dec 99999999999999 23:59:59 GMT"] {
        provider.define("ra", json!([{"status": 429, "headers": {"retry-after": value}}]));
        let answer = provider.post("/s/ra/v1/chat/completions", "{}");
        assert_eq!((answer.status, answer.header("retry-after")), (429, Some(value)));
    }
}
