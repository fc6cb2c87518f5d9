//! The `propagateDeadline` rule on the engine's own clock: what each attempt's send says is left
//! of the deadline, and whether it goes to the target, before and after the target answered as
//! an llm-baton gateway.

use llm_baton::backoff::SplitMix64;
use llm_baton::config::Config;
use llm_baton::engine::{Action, AttemptId, Baton, CallOptions};
use llm_baton::outcome::Failure;
use llm_baton::propagation::{DeadlinePropagation, DEADLINE_HEADER};

fn config(propagate: &str) -> Config {
    Config::from_json(&format!(
        r#"{{"targets": {{"up": {{"format": "openai_chat", "baseUrl": "https://gw.example/v1", "model": "m",
               "propagateDeadline": {propagate}}}}},
             "routes": {{"r": {{"retry": "up", "attempts": 3, "backoff": {{"initialMs": 100, "jitter": "none"}}}}}},
             "deadlineMs": 1000, "health": false}}"#
    ))
    .unwrap()
}

/// Runs a call whose attempts answer 503 with headers 50 ms after each send (marked as a
/// gateway's when `marked`), and returns (send time, header sent) per attempt.
fn sends(propagate: &str, marked: bool) -> Vec<(u64, Option<String>)> {
    let mut baton = Baton::new(config(propagate));
    let propagation = DeadlinePropagation::new(baton.config());
    let options = CallOptions { deadline_ms: None, stream: false, resettable: false, waited_ms: 0 };
    let mut call = baton.start("r", options, 0, Box::new(SplitMix64(7))).unwrap();
    let mut now = 0;
    let mut sent = Vec::new();
    let mut in_flight: Option<AttemptId> = None;
    for _ in 0..100 {
        while let Some(action) = call.poll() {
            match action {
                Action::Send { attempt, target, remaining_ms, .. } => {
                    let sent_ms = propagation.sent_ms(baton.config(), target, remaining_ms);
                    sent.push((now, sent_ms.map(|ms| ms.to_string())));
                    in_flight = Some(attempt);
                }
                Action::Finish(_) => return sent,
                _ => {}
            }
        }
        if let Some(attempt) = in_flight.take() {
            now += 50;
            propagation.learn(0, marked);
            call.on_headers(attempt, now);
            let failure = Failure::Http {
                status: 503,
                message: "busy".into(),
                code: None,
                class: None,
                retry_after_ms: None,
                should_retry: None,
                in_stream: false,
                content_filter: None,
            };
            call.on_failure(attempt, now, failure);
        } else {
            now = call.poll_timeout().expect("a backoff timer");
            call.handle_timeout(now);
        }
    }
    panic!("the call did not finish")
}

#[test]
fn auto_sends_the_remaining_budget_once_the_target_answered_as_a_gateway() {
    // Sends at 0, then after 50 ms to the answer and 100 ms, 200 ms of backoff.
    let learned = vec![(0, None), (150, Some("850".to_string())), (400, Some("600".to_string()))];
    assert_eq!(sends("\"auto\"", true), learned);
    assert_eq!(sends("\"auto\"", false), vec![(0, None), (150, None), (400, None)]);
}

#[test]
fn always_and_never_do_not_wait_to_learn() {
    let every = vec![(0, Some("1000".to_string())), (150, Some("850".to_string())), (400, Some("600".to_string()))];
    assert_eq!(sends("true", false), every);
    assert_eq!(sends("false", true), vec![(0, None), (150, None), (400, None)]);
}

#[test]
fn a_call_without_a_deadline_sends_none() {
    let config = Config::from_json(
        r#"{"targets": {"up": {"format": "openai_chat", "baseUrl": "https://gw.example/v1", "model": "m",
              "propagateDeadline": true}}}"#,
    )
    .unwrap();
    assert_eq!(DeadlinePropagation::new(&config).sent_ms(&config, 0, None), None);
    assert_eq!(DEADLINE_HEADER, "x-baton-deadline-ms");
}
