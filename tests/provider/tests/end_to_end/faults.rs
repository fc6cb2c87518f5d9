//! Faults: delays, stalls, client aborts, resets, in-stream errors, missing success markers.

use std::io::{ErrorKind, Read};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::client::{chunked_body_finished, close, dechunk, read_until, sse_events, wait_for, Provider};

/// How fast a client's close must show up in the counters.
const CLOSE_NOTICED_WITHIN: Duration = Duration::from_millis(200);

const STREAM_BODY: &str = r#"{"model":"m","stream":true}"#;

fn outcome(provider: &Provider, scenario: &str) -> String {
    provider.scenario(scenario)["log"][0]["outcome"].as_str().unwrap_or_default().to_owned()
}

/// Waits until the scenario's first request ended, then returns how long that took.
fn wait_for_outcome(provider: &Provider, scenario: &str, expected: &str) -> Duration {
    wait_for(Duration::from_secs(5), || outcome(provider, scenario) == expected)
        .unwrap_or_else(|| panic!("outcome stayed {:?}, expected {expected}", outcome(provider, scenario)))
}

#[test]
fn headers_delay_holds_the_status_line() {
    let provider = Provider::start();
    provider.define("slow", json!([{"headersDelayMs": 300}]));
    let started = Instant::now();
    let answer = provider.post("/s/slow/v1/chat/completions", r#"{"model":"m"}"#);
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(answer.status, 200);
    let entry = &provider.scenario("slow")["log"][0];
    assert!(entry["headersMs"].as_u64().unwrap() - entry["startedMs"].as_u64().unwrap() >= 300);
    assert_eq!(entry["outcome"], "completed");
}

#[test]
fn client_closing_a_stalled_stream_is_counted_at_once() {
    let provider = Provider::start();
    provider.define("stall", json!([{"stallAfterEvents": 2}]));
    let mut stream = provider.send("POST", "/s/stall/v1/messages", &[], STREAM_BODY);
    let seen = read_until(&mut stream, b"\"text\":\" from\"");
    assert!(!String::from_utf8_lossy(&seen).contains(" the"), "the stream stalls after two content events");
    assert_eq!(provider.stats()["open"], 1);

    close(stream);
    let noticed = wait_for_outcome(&provider, "stall", "client_closed");
    assert!(noticed < CLOSE_NOTICED_WITHIN, "noticed after {noticed:?}");
    let report = provider.scenario("stall");
    assert_eq!((report["clientClosed"].clone(), report["open"].clone()), (json!(1), json!(0)));
    assert!(report["log"][0]["headersMs"].is_u64());
    assert!(report["log"][0]["endedMs"].is_u64());
    assert_eq!(provider.stats()["clientClosed"], 1);
}

#[test]
fn client_closing_while_headers_are_stalled_is_counted_at_once() {
    let provider = Provider::start();
    provider.define("before-headers", json!([{"headersDelayMs": 600_000}]));
    let stream = provider.send("POST", "/s/before-headers/v1/chat/completions", &[], STREAM_BODY);
    assert!(wait_for(Duration::from_secs(5), || provider.scenario("before-headers")["open"] == 1).is_some());

    close(stream);
    let noticed = wait_for_outcome(&provider, "before-headers", "client_closed");
    assert!(noticed < CLOSE_NOTICED_WITHIN, "noticed after {noticed:?}");
    assert_eq!(provider.scenario("before-headers")["log"][0]["headersMs"], json!(null));
    assert!(wait_for(Duration::from_secs(2), || provider.stats()["connectionsOpen"] == 0).is_some());
}

#[test]
fn client_closing_a_dripping_body_is_counted() {
    let provider = Provider::start();
    provider.define("drip", json!([{"dripMs": 10_000}]));
    let mut stream = provider.send("POST", "/s/drip/v1beta/models/g:generateContent", &[], "{}");
    let head = read_until(&mut stream, b"\r\n\r\n");
    assert!(String::from_utf8_lossy(&head).contains("content-length:"));
    close(stream);
    let noticed = wait_for_outcome(&provider, "drip", "client_closed");
    assert!(noticed < CLOSE_NOTICED_WITHIN, "noticed after {noticed:?}");
}

#[test]
fn drip_spreads_a_whole_body_over_time() {
    let provider = Provider::start();
    provider.define("drip", json!([{"dripMs": 400}]));
    let started = Instant::now();
    let answer = provider.post("/s/drip/v1/responses", r#"{"model":"m"}"#);
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(answer.json()["status"], "completed");
    assert_eq!(outcome(&provider, "drip"), "completed");
}

#[test]
fn a_stall_that_runs_out_cuts_the_stream_without_its_end() {
    let provider = Provider::start();
    provider.define("cut", json!([{"stallAfterEvents": 1, "stallMs": 100}]));
    let mut stream = provider.send("POST", "/s/cut/v1/chat/completions", &[], STREAM_BODY);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let body_start = raw.windows(4).position(|window| window == b"\r\n\r\n").unwrap() + 4;
    assert!(!chunked_body_finished(&raw[body_start..]), "no terminating chunk");
    let text = String::from_utf8(dechunk(&raw[body_start..])).unwrap();
    let events = sse_events(&text);
    assert_eq!(events.len(), 2, "role chunk and one content chunk: {text}");
    assert_eq!(outcome(&provider, "cut"), "reset");
}

#[test]
fn reset_closes_the_connection_without_an_answer() {
    let provider = Provider::start();
    provider.define("reset", json!([{"reset": true}, {}]));
    let mut stream = provider.send("POST", "/s/reset/v1/messages", &[], STREAM_BODY);
    let mut raw = Vec::new();
    match stream.read_to_end(&mut raw) {
        Err(error) => assert_eq!(error.kind(), ErrorKind::ConnectionReset),
        Ok(_) => assert!(raw.is_empty(), "no response bytes: {}", String::from_utf8_lossy(&raw)),
    }
    assert_eq!(outcome(&provider, "reset"), "reset");
    assert_eq!(provider.post("/s/reset/v1/messages", r#"{"model":"m"}"#).status, 200, "the next step is healthy");
    let report = provider.scenario("reset");
    assert_eq!(report["reset"], 1);
    assert_eq!(report["completed"], 1);
    assert!(wait_for(Duration::from_secs(2), || provider.stats()["connectionsOpen"] == 0).is_some());
}

#[test]
fn stream_errors_use_each_formats_in_stream_error_event() {
    let provider = Provider::start();
    let error = json!({"afterEvents": 1, "type": "overloaded_error", "message": "Overloaded", "status": 529});
    provider.define("broken", json!([{"streamError": error}]));

    let chat = provider.post("/s/broken/v1/chat/completions", STREAM_BODY);
    let events = chat.events();
    assert_eq!(events.len(), 3, "role, one content, error");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&events[2].1).unwrap(),
        json!({"error": {"message": "Overloaded", "type": "overloaded_error", "param": null, "code": null}})
    );

    let anthropic = provider.post("/s/broken/v1/messages", STREAM_BODY).events();
    let (name, data) = anthropic.last().unwrap();
    assert_eq!(name.as_deref(), Some("error"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(data).unwrap(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );
    assert!(anthropic.iter().all(|(name, _)| name.as_deref() != Some("message_stop")));

    let responses = provider.post("/s/broken/v1/responses", STREAM_BODY).event_json();
    let last = responses.last().unwrap();
    assert_eq!(
        (&last["type"], &last["code"], &last["message"]),
        (&json!("error"), &json!("overloaded_error"), &json!("Overloaded"))
    );
    assert_eq!(last["sequence_number"], responses.len() - 1);

    let gemini = provider.post("/s/broken/v1beta/models/g:streamGenerateContent?alt=sse", "{}").event_json();
    assert_eq!(gemini.len(), 2);
    assert_eq!(gemini[1], json!({"error": {"code": 529, "message": "Overloaded", "status": "UNAVAILABLE"}}));
    assert_eq!(provider.scenario("broken")["completed"], 4, "the HTTP responses themselves end normally");
}

#[test]
fn omit_done_ends_cleanly_without_the_success_marker() {
    let provider = Provider::start();
    provider.define("no-end", json!([{"omitDone": true}]));

    let chat = provider.post("/s/no-end/v1/chat/completions", STREAM_BODY).events();
    assert!(chat.iter().all(|(_, data)| data != "[DONE]"));
    assert!(chat.last().unwrap().1.contains(r#""finish_reason":"stop""#));
    let anthropic = provider.post("/s/no-end/v1/messages", STREAM_BODY).events();
    assert_eq!(anthropic.last().unwrap().0.as_deref(), Some("message_delta"));
    let responses = provider.post("/s/no-end/v1/responses", STREAM_BODY).events();
    assert_eq!(responses.last().unwrap().0.as_deref(), Some("response.output_item.done"));
    let gemini = provider.post("/s/no-end/v1beta/models/g:streamGenerateContent?alt=sse", "{}").event_json();
    assert!(gemini.iter().all(|chunk| chunk["candidates"][0].get("finishReason").is_none()));
    assert_eq!(provider.scenario("no-end")["completed"], 4);
}

#[test]
fn step_headers_carry_retry_hints() {
    let provider = Provider::start();
    provider.define(
        "limited",
        json!([{"status": 429, "headers": {"retry-after": "1", "retry-after-ms": "200", "x-should-retry": "false"}}]),
    );
    let answer = provider.post("/s/limited/v1/chat/completions", r#"{"model":"m"}"#);
    assert_eq!(answer.status, 429);
    assert_eq!(answer.header("retry-after"), Some("1"));
    assert_eq!(answer.header("retry-after-ms"), Some("200"));
    assert_eq!(answer.header("x-should-retry"), Some("false"));
    assert_eq!(answer.json()["error"]["code"], "rate_limit_exceeded");
}

#[test]
fn chunks_and_delays_shape_the_stream() {
    let provider = Provider::start();
    provider.define("paced", json!([{"text": "abcdef", "chunks": 3, "firstChunkDelayMs": 150, "chunkDelayMs": 100}]));
    let started = Instant::now();
    let mut stream = provider.send("POST", "/s/paced/v1/messages", &[], STREAM_BODY);
    read_until(&mut stream, b"event: ping");
    let preamble_at = started.elapsed();
    read_until(&mut stream, b"message_stop");
    let ended_at = started.elapsed();
    assert!(preamble_at < Duration::from_millis(150), "the preamble comes with the headers: {preamble_at:?}");
    assert!(ended_at >= Duration::from_millis(350), "150 + 2 × 100 ms: {ended_at:?}");

    let answer = provider.post("/s/paced/v1/messages", STREAM_BODY).event_json();
    let texts: Vec<_> = answer.iter().filter_map(|event| event["delta"]["text"].as_str()).collect();
    assert_eq!(texts, ["ab", "cd", "ef"]);
}
