//! `billed` in the log: what each successful answer cost, as far as it really got, and the total.

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{close, read_until, wait_for, Provider};

const STREAM_BODY: &str = r#"{"model":"m","stream":true}"#;

fn billed(input: u64, output: u64) -> Value {
    json!({"inputTokens": input, "outputTokens": output})
}

/// Waits until every request of the scenario ended, then returns its report.
fn settled(provider: &Provider, scenario: &str) -> Value {
    wait_for(Duration::from_secs(5), || provider.scenario(scenario)["open"] == 0).expect("every request ends");
    provider.scenario(scenario)
}

#[test]
fn answers_bill_reported_input_and_the_output_written_and_errors_bill_nothing() {
    let provider = Provider::start();
    provider.define(
        "mixed",
        json!([
            {},
            {"usage": {"inputTokens": 11, "outputTokens": 7}},
            {"status": 529},
            {"streamError": {"afterEvents": 2}, "usage": {"inputTokens": 5}},
            {"raw": {"chunks": ["data: {}\n\n"]}},
            {"toolCall": {"name": "f", "arguments": "{\"city\":\"Paris\"}"}},
        ]),
    );
    provider.post("/s/mixed/v1/messages", STREAM_BODY);
    provider.post("/s/mixed/v1/chat/completions", r#"{"model":"m"}"#);
    provider.post("/s/mixed/v1/responses", STREAM_BODY);
    provider.post("/s/mixed/v1beta/models/g:streamGenerateContent?alt=sse", "{}");
    provider.post("/s/mixed/v1/chat/completions", STREAM_BODY);
    provider.post("/s/mixed/v1/chat/completions", STREAM_BODY);
    let report = settled(&provider, "mixed");
    let per_request: Vec<Value> =
        report["log"].as_array().unwrap().iter().map(|entry| entry["billed"].clone()).collect();
    assert_eq!(
        per_request,
        [
            billed(3, 5),  // five words streamed
            billed(11, 7), // a whole answer bills the output tokens it reports
            Value::Null,   // an error answer
            billed(5, 2),  // two content events before the in-stream error
            Value::Null,   // a raw body is not a scripted answer
            billed(3, 2),  // tool arguments in two fragments of 8 characters
        ]
    );
    assert_eq!(report["billed"], billed(22, 16), "the scenario's total");
}

#[test]
fn a_stall_that_cuts_the_stream_bills_what_was_sent_before_it() {
    let provider = Provider::start();
    provider.define("cut", json!([{"stallAfterEvents": 3, "stallMs": 50}]));
    let mut stream = provider.send("POST", "/s/cut/v1beta/models/g:streamGenerateContent?alt=sse", &[], "{}");
    let _ = stream.read_to_end(&mut Vec::new());
    let report = settled(&provider, "cut");
    assert_eq!(report["log"][0]["outcome"], "reset");
    assert_eq!(report["log"][0]["billed"], billed(3, 3));
}

#[test]
fn a_client_that_closes_mid_stream_is_billed_for_what_it_was_sent() {
    let provider = Provider::start();
    provider.define("abandoned", json!([{"stallAfterEvents": 2}]));
    let mut stream = provider.send("POST", "/s/abandoned/v1/chat/completions", &[], STREAM_BODY);
    read_until(&mut stream, b"\"content\":\" from\"");
    assert_eq!(provider.scenario("abandoned")["log"][0]["billed"], billed(3, 2), "billed as it is written");
    close(stream);
    let report = settled(&provider, "abandoned");
    assert_eq!(report["log"][0]["outcome"], "client_closed");
    assert_eq!(report["billed"], billed(3, 2));
}

#[test]
fn a_whole_answer_not_fully_written_bills_no_output() {
    let provider = Provider::start();
    provider.define(
        "whole",
        json!([{"dripMs": 10_000}, {"stallAfterEvents": 0, "stallMs": 50}, {"headersDelayMs": 60_000}]),
    );
    let mut dripping = provider.send("POST", "/s/whole/v1/messages", &[], r#"{"model":"m"}"#);
    read_until(&mut dripping, b"\r\n\r\n");
    close(dripping);
    let mut stalled = provider.send("POST", "/s/whole/v1/messages", &[], r#"{"model":"m"}"#);
    let _ = stalled.read_to_end(&mut Vec::new());
    let before_headers = provider.send("POST", "/s/whole/v1/messages", &[], r#"{"model":"m"}"#);
    assert!(wait_for(Duration::from_secs(5), || provider.scenario("whole")["requests"] == 3).is_some());
    close(before_headers);
    let report = settled(&provider, "whole");
    let per_request: Vec<Value> =
        report["log"].as_array().unwrap().iter().map(|entry| entry["billed"].clone()).collect();
    assert_eq!(per_request, [billed(3, 0), billed(3, 0), Value::Null], "no headers, nothing billed");
}
