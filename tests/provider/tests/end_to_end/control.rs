//! The process, CORS, the control API, what the log records, and connection bookkeeping.

use std::thread;
use std::time::Duration;

use serde_json::json;

use crate::client::{close, read_until, wait_for, Provider};

#[test]
fn sigterm_exits_cleanly() {
    let provider = Provider::start();
    assert!(provider.address.starts_with("127.0.0.1:"));
    assert_eq!(provider.stats()["requests"], 0);
    assert!(provider.terminate().success());
}

#[test]
fn preflight_and_every_answer_allow_any_origin() {
    let provider = Provider::start();
    let preflight = provider.request(
        "OPTIONS",
        "/s/x/v1/chat/completions",
        &[
            ("origin", "http://localhost:9"),
            ("access-control-request-method", "POST"),
            ("access-control-request-headers", "authorization, content-type"),
        ],
        "",
    );
    assert_eq!(preflight.status, 204);
    provider.define("down", json!([{"status": 500}]));
    let answers = [
        preflight,
        provider.post("/s/down/v1/messages", "{}"),
        provider.post("/v1/chat/completions", "{}"),
        provider.request("GET", "/_stats", &[], ""),
        provider.request("GET", "/nowhere", &[], ""),
    ];
    for answer in answers {
        assert_eq!(answer.header("access-control-allow-origin"), Some("*"));
        assert!(answer
            .header("access-control-allow-headers")
            .is_some_and(|value| value.contains('*') && value.contains("authorization")));
        assert_eq!(answer.header("access-control-allow-methods"), Some("GET, POST, PUT, OPTIONS"));
        assert_eq!(answer.header("access-control-expose-headers"), Some("*"));
    }
    assert_eq!(provider.stats()["requests"], 2, "preflights are not provider requests");
}

#[test]
fn steps_are_consumed_in_order_and_the_last_repeats() {
    let provider = Provider::start();
    provider.define("seq", json!([{"status": 503}, {"status": 429}, {"text": "ok"}]));
    let statuses: Vec<_> =
        (0..5).map(|_| provider.post("/s/seq/v1/chat/completions", r#"{"model":"m"}"#).status).collect();
    assert_eq!(statuses, [503, 429, 200, 200, 200]);
    let report = provider.scenario("seq");
    assert_eq!(report["requests"], 5);
    assert_eq!(report["completed"], 5);
    let steps: Vec<_> = report["log"].as_array().unwrap().iter().map(|entry| entry["step"].clone()).collect();
    assert_eq!(steps, [0, 1, 2, 2, 2]);

    provider.define("seq", json!([{"status": 503}]));
    assert_eq!(provider.scenario("seq")["requests"], 0, "redefining resets the counters");
    assert_eq!(provider.post("/s/seq/v1/chat/completions", "{}").status, 503);
}

#[test]
fn unknown_scenarios_are_healthy_and_reset_forgets_everything() {
    let provider = Provider::start();
    assert_eq!(
        provider.scenario("never-used"),
        json!({
            "requests": 0, "completed": 0, "clientClosed": 0, "reset": 0, "open": 0,
            "billed": {"inputTokens": 0, "outputTokens": 0}, "log": [],
        })
    );
    assert_eq!(provider.post("/s/fresh/v1/messages", r#"{"model":"m"}"#).status, 200);
    assert_eq!(provider.post("/v1/messages", r#"{"model":"m"}"#).status, 200);
    assert_eq!(provider.scenario("fresh")["completed"], 1);
    assert_eq!(provider.scenario("default")["completed"], 1);
    assert_eq!(provider.stats()["requests"], 2);

    provider.define("down", json!([{"status": 500}]));
    let reset = provider.request("POST", "/_reset", &[], "");
    assert_eq!(reset.status, 200);
    assert_eq!(provider.stats()["requests"], 0);
    assert_eq!(provider.post("/s/down/v1/messages", "{}").status, 200, "the definition is gone too");
}

#[test]
fn the_log_records_requests_and_where_keys_were_sent_but_never_the_keys() {
    let provider = Provider::start();
    let secret = "sk-very-secret-value";
    let bearer = format!("Bearer {secret}");
    let body = r#"{"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    provider.request("POST", "/s/keys/v1/chat/completions", &[("authorization", &bearer)], body);
    provider.request(
        "POST",
        "/s/keys/v1/messages",
        &[("x-api-key", secret), ("anthropic-version", "2023-06-01")],
        r#"{"model":"c"}"#,
    );
    provider.request("POST", "/s/keys/v1beta/models/gem:generateContent", &[("x-goog-api-key", secret)], "{}");
    provider.request(
        "POST",
        &format!("/s/keys/v1beta/models/gem:streamGenerateContent?alt=sse&key={secret}"),
        &[],
        "{}",
    );
    provider.request("POST", "/s/keys/v1/responses", &[], r#"{"model":"r"}"#);

    let report = provider.scenario("keys");
    assert!(!report.to_string().contains(secret), "a key leaked into the log");
    let log = report["log"].as_array().unwrap();
    let places: Vec<_> = log.iter().map(|entry| (entry["auth"].clone(), entry["keyInUrl"].clone())).collect();
    assert_eq!(
        places,
        [
            (json!("bearer"), json!(false)),
            (json!("x-api-key"), json!(false)),
            (json!("x-goog-api-key"), json!(false)),
            (json!(null), json!(true)),
            (json!(null), json!(false)),
        ]
    );
    let formats: Vec<_> = log.iter().map(|entry| entry["format"].as_str().unwrap()).collect();
    assert_eq!(formats, ["openai_chat", "anthropic_messages", "gemini", "gemini", "openai_responses"]);
    let first = &log[0];
    assert_eq!(first["path"], "/s/keys/v1/chat/completions");
    assert_eq!(first["stream"], true);
    assert_eq!(first["model"], "gpt-x");
    assert_eq!(first["body"]["messages"][0]["content"], "hi");
    assert_eq!(first["headers"]["authorization"], "[redacted]");
    assert_eq!(log[1]["headers"]["anthropic-version"], "2023-06-01");
    assert_eq!((log[2]["model"].clone(), log[2]["stream"].clone()), (json!("gem"), json!(false)));
    assert_eq!(log[3]["stream"], true);
    assert!(log.iter().all(|entry| entry["startedMs"].as_u64() <= entry["endedMs"].as_u64()));
}

#[test]
fn bad_input_gets_a_400_with_a_reason() {
    let provider = Provider::start();
    let invalid = [
        json!({"steps": []}),
        json!({"steps": [{"stallAfter": 1}]}),
        json!({"steps": [{"status": 200}]}),
        json!({"steps": [{"toolCall": {"name": "f", "arguments": "not json"}}]}),
        json!({"steps": [{"headers": {"x": "line\nbreak"}}]}),
        json!({"step": [{}]}),
    ];
    for body in invalid {
        let answer = provider.request("PUT", "/_scenarios/s", &[], &body.to_string());
        assert_eq!(answer.status, 400, "{body}");
        assert!(answer.json()["error"].as_str().is_some_and(|reason| !reason.is_empty()));
    }
    assert_eq!(provider.request("PUT", "/_scenarios/s", &[], "{not json").status, 400);
    assert_eq!(provider.request("PUT", "/_scenarios/bad%20id", &[], r#"{"steps":[{}]}"#).status, 400);

    let not_json = provider.post("/v1/messages", "{oops");
    assert_eq!(not_json.status, 400);
    assert_eq!(not_json.json()["error"]["type"], "invalid_request_error");
    assert_eq!(provider.request("GET", "/v1/chat/completions", &[], "").status, 405);
    assert_eq!(
        provider.post("/v1beta/models/g:streamGenerateContent", "{}").json()["error"]["status"],
        "INVALID_ARGUMENT"
    );
    assert_eq!(provider.post("/s/bad%20id/v1/messages", "{}").status, 400);
    assert_eq!(provider.post("/v1/embeddings", "{}").status, 404);
    assert_eq!(provider.request("DELETE", "/_stats", &[], "").status, 405);
    assert_eq!(provider.stats()["requests"], 0, "refused requests are not scripted requests");
}

#[test]
fn connections_are_not_leaked_under_load_with_aborts() {
    let provider = Provider::start();
    provider.define("slow", json!([{"chunkDelayMs": 20}]));
    provider.define("stuck", json!([{"headersDelayMs": 600_000}]));
    let workers: Vec<_> = (0..8)
        .map(|worker| {
            let address = provider.address.clone();
            thread::spawn(move || {
                let provider = Provider::attach(address);
                for round in 0..10 {
                    if (worker + round) % 3 == 0 {
                        let mut stream =
                            provider.send("POST", "/s/slow/v1/chat/completions", &[], r#"{"stream":true}"#);
                        read_until(&mut stream, b"data:");
                        close(stream);
                    } else if (worker + round) % 3 == 1 {
                        close(provider.send("POST", "/s/stuck/v1/messages", &[], "{}"));
                    } else {
                        assert_eq!(provider.post("/s/slow/v1/responses", r#"{"stream":true}"#).status, 200);
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let settled = wait_for(Duration::from_secs(5), || {
        let stats = provider.stats();
        stats["connectionsOpen"] == 0 && stats["open"] == 0
    });
    assert!(settled.is_some(), "still open: {}", provider.stats());
    // A stuck request closed before the server read it is never logged, so only the streamed
    // ones, which the client always saw start, have an exact count.
    let streamed =
        (0..8).flat_map(|worker| (0..10).map(move |round| worker + round)).filter(|sum| sum % 3 != 1).count();
    let slow = provider.scenario("slow");
    assert_eq!(slow["requests"], streamed);
    assert_eq!(slow["completed"].as_u64().unwrap() + slow["clientClosed"].as_u64().unwrap(), streamed as u64);
    let stuck = provider.scenario("stuck");
    assert_eq!(stuck["clientClosed"], stuck["requests"]);
}
