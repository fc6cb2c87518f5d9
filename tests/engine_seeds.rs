//! The seeds' own cases, by name, against the engine with a fake clock and a scripted
//! transport. Times are exact: nothing sleeps.

mod support;

use llm_baton::outcome::{Failure, Limit};
use llm_baton_wire::write::ToJson;
use support::*;

/// Two OpenAI-format targets on loopback, with the given timeouts JSON for each.
fn two_targets(a_timeouts: &str, b_timeouts: &str, routes: &str, deadline: &str) -> String {
    format!(
        r#"{{"targets": {{
            "a": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "timeouts": {a_timeouts}}},
            "b": {{"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:2/v1", "model": "m", "timeouts": {b_timeouts}}}
        }}, "routes": {routes} {deadline}}}"#
    )
}

fn timeout(limit: Limit, limit_ms: u64) -> Failure {
    Failure::Timeout { limit, limit_ms }
}

// ---- BAML #5085: a member's own timeout is a failed attempt ----

#[test]
fn baml_5085_fallback_moves_past_a_timed_out_member_invoke() {
    let cfg = two_targets(r#"{"totalMs": 1000}"#, "{}", r#"{"chat": {"fallback": ["a", "b"]}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![ok_at(3000)]).script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.finished_at, 1040, "the fast member answers 1.0 s in, not 3 s");
    assert_eq!(run.aborts, vec![(1000, 1, timeout(Limit::Total, 1000))]);
    assert_eq!(run.failovers(), vec![("a".into(), "b".into())]);
    assert_eq!(run.legs()[0].outcome, "timeout");
    assert_eq!(run.legs()[0].timeout, Some(Limit::Total));
}

#[test]
fn baml_5085_fallback_moves_past_a_first_token_timeout_in_a_stream() {
    let cfg = two_targets(r#"{"firstTokenMs": 1000}"#, "{}", r#"{"chat": {"fallback": ["a", "b"]}}"#, "");
    // a sends headers at once, then only keep-alives: no visible content.
    let stalled = Behavior::Answer { headers_at: 5, content: vec![], done_at: None };
    let mut sim = Sim::new(&cfg).script("a", vec![stalled]).script("b", vec![ok_at(60)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.aborts[0], (1000, 1, timeout(Limit::FirstToken, 1000)));
    assert_eq!(run.finished_at, 1060);
}

#[test]
fn baml_5085_retry_retries_timed_out_attempts_then_surfaces_the_original_timeout() {
    let cfg = two_targets(
        r#"{"totalMs": 1000}"#,
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "backoff": {"initialMs": 100, "multiplier": 2, "jitter": "none"}}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![Behavior::Stall]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.sends.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1100, 2300]);
    assert_eq!(run.failure(), &timeout(Limit::Total, 1000), "the member's own timeout, unchanged");
    assert_eq!(run.finished_at, 3300);
    assert_eq!(run.retries(), vec![("a".into(), 1, 3, 100), ("a".into(), 2, 3, 200)]);
    assert_eq!(run.legs().len(), 3);
}

#[test]
fn baml_5085_a_timeout_after_a_visible_delta_is_terminal() {
    let cfg =
        two_targets(r#"{"idleMs": 500}"#, "{}", r#"{"chat": {"fallback": [{"retry": "a", "attempts": 3}, "b"]}}"#, "");
    let shows_text_then_stalls = Behavior::Answer { headers_at: 10, content: vec![100], done_at: None };
    let mut sim = Sim::new(&cfg).script("a", vec![shows_text_then_stalls]).script("b", vec![ok_at(10)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &timeout(Limit::Idle, 500));
    assert_eq!(run.finished_at, 600);
    assert_eq!(run.sent_targets(), ["a"], "no retry and no failover after visible text");
    assert_eq!(run.delivered, [100]);
}

#[test]
fn baml_5085_the_callers_deadline_is_never_retried() {
    let cfg = two_targets(
        r#"{"totalMs": 5000}"#,
        "{}",
        r#"{"chat": {"fallback": [{"retry": "a", "attempts": 3}, "b"]}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![Behavior::Stall]).script("b", vec![ok_at(10)]);
    let run = sim.run("chat", with_deadline(invoke(), 1500));
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 1500));
    assert_eq!(run.finished_at, 1500);
    assert_eq!(run.sent_targets(), ["a"]);
    assert_eq!(run.failure().to_string(), "response did not finish within 1500 ms, retries included");
}

#[test]
fn caller_cancellation_is_never_retried_and_aborts_the_attempt() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"fallback": [{"retry": "a", "attempts": 3}, "b"]}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![Behavior::Stall]).script("b", vec![ok_at(10)]);
    sim.cancel_at = Some(700);
    let run = sim.run("chat", invoke());
    assert_eq!(run.failure(), &Failure::Cancelled);
    assert_eq!(run.finished_at, 700);
    assert_eq!(run.aborts, vec![(700, 1, Failure::Cancelled)]);
    assert_eq!(run.legs()[0].outcome, "cancelled");
}

#[test]
fn caller_cancellation_during_a_backoff_settles_at_once() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "backoff": {"initialMs": 5000, "jitter": "none"}}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![status(10, 503)]);
    sim.cancel_at = Some(1000);
    let run = sim.run("chat", invoke());
    assert_eq!(run.failure(), &Failure::Cancelled);
    assert_eq!(run.finished_at, 1000, "not when the 5 s backoff would have ended");
    assert_eq!(run.sends.len(), 1);
}

// ---- issue 11, point 10: a silent member stays silent ----

/// A member that sends no headers (or, in a stream, no first token) within 10 s, behind the
/// route docs/config.md describes: a retry of 3 inside a fallback. The backup answers 10 s in,
/// not 31 s.
#[test]
fn a_silent_member_inside_a_fallback_fails_over_at_once() {
    let limits = r#"{"headersMs": 10000, "firstTokenMs": 10000}"#;
    let route = r#"{"chat": {"fallback": [{"retry": "a", "attempts": 3}, "b"]}}"#;
    let no_first_token = Behavior::Answer { headers_at: 5, content: vec![], done_at: None };
    // (a's behaviour, stream, the limit that expires)
    let cases = [
        (Behavior::Stall, false, Limit::Headers),
        (Behavior::Stall, true, Limit::Headers),
        (no_first_token, true, Limit::FirstToken),
    ];
    for (silent, options, limit) in cases {
        let options = if options { stream() } else { invoke() };
        let mut sim =
            Sim::new(&two_targets(limits, "{}", route, "")).script("a", vec![silent]).script("b", vec![ok_at(1000)]);
        let run = sim.run("chat", options);
        assert_eq!(run.served_by(sim.config()), "b", "{limit:?}");
        assert_eq!(run.sends, vec![(0, "a".into()), (10_000, "b".into())], "{limit:?}: no retry of a");
        assert_eq!(run.finished_at, 11_000, "{limit:?}");
        assert!(run.retries().is_empty(), "{limit:?}");
        assert_eq!(run.failovers(), vec![("a".into(), "b".into())], "{limit:?}");
        assert_eq!(run.legs()[0].timeout, Some(limit));
    }
}

/// Where nothing else can answer, or the config asks for it, a silent member is retried
/// (BAML #5085); other failures inside the fallback are retried as before.
#[test]
fn a_silent_member_is_retried_where_nothing_else_is_ready_or_retry_on_says_so() {
    let headers = r#"{"headersMs": 1000}"#;
    let backoff = r#""backoff": {"initialMs": 100, "jitter": "none"}"#;
    let bare = format!(r#"{{"chat": {{"retry": "a", "attempts": 3, {backoff}}}}}"#);
    let last_member = format!(r#"{{"chat": {{"fallback": ["b", {{"retry": "a", "attempts": 3, {backoff}}}]}}}}"#);
    let named = format!(
        r#"{{"chat": {{"fallback": [{{"retry": "a", "attempts": 3, "retryOn": ["timeout"], {backoff}}}, "b"]}}}}"#
    );
    let narrowed = format!(
        r#"{{"chat": {{"fallback": [{{"retry": "a", "attempts": 3, {backoff}}}, "b"], "fallbackOn": ["5xx"]}}}}"#
    );
    let defaults = named.replace(r#""retryOn": ["timeout"], "#, "");
    // (route, a's limits, a's behaviour, b's behaviour, targets sent, what ends the call)
    let cases = [
        (&bare, headers, Behavior::Stall, ok_at(10), vec!["a", "a", "a"], Some(Limit::Headers)),
        (&last_member, headers, Behavior::Stall, status(5, 503), vec!["b", "a", "a", "a"], Some(Limit::Headers)),
        (&named, headers, Behavior::Stall, ok_at(10), vec!["a", "a", "a", "b"], None),
        (&narrowed, headers, Behavior::Stall, ok_at(10), vec!["a", "a", "a"], Some(Limit::Headers)),
        (&defaults, r#"{"totalMs": 1000}"#, Behavior::Stall, ok_at(10), vec!["a", "a", "a", "b"], None),
    ];
    for (route, limits, a, b, sent, limit) in cases {
        let mut sim = Sim::new(&two_targets(limits, "{}", route, "")).script("a", vec![a]).script("b", vec![b]);
        let run = sim.run("chat", invoke());
        assert_eq!(run.sent_targets(), sent, "{route} {limits}");
        match limit {
            Some(limit) => assert_eq!(run.failure(), &timeout(limit, 1000), "{route}"),
            None => assert_eq!(run.served_by(sim.config()), "b", "{route}"),
        }
    }
}

// ---- ward #662: retry what fails fast, and only that ----

fn ward_ladder() -> String {
    two_targets(
        "{}",
        "{}",
        r#"{"turn": {"retry": "a", "attempts": 4, "backoff": {"initialMs": 250, "multiplier": 2, "jitter": "none"}}}"#,
        "",
    )
}

#[test]
fn ward_662_four_attempts_at_250ms_doubling() {
    let mut sim = Sim::new(&ward_ladder()).script("a", vec![status(5, 503)]);
    let run = sim.run("turn", invoke());
    assert_eq!(
        run.retries().iter().map(|r| (r.1, r.2, r.3)).collect::<Vec<_>>(),
        [(1, 4, 250), (2, 4, 500), (3, 4, 1000)]
    );
    assert_eq!(run.legs().len(), 4);
    assert_eq!(run.failure().status(), Some(503));
    assert_eq!(run.finished_at, 4 * 5 + 250 + 500 + 1000, "under two seconds of waiting");
}

#[test]
fn ward_662_availability_failures_are_retried() {
    let cases: Vec<(&str, Behavior)> = vec![
        ("transport", transport(3)),
        ("429", status(3, 429)),
        ("502", status(3, 502)),
        ("503", status(3, 503)),
        ("504", status(3, 504)),
        ("408", status(3, 408)),
        ("409", status(3, 409)),
    ];
    for (name, first) in cases {
        let mut sim = Sim::new(&ward_ladder()).script("a", vec![first, ok_at(20)]);
        let run = sim.run("turn", invoke());
        assert!(run.result.is_ok(), "{name} then 200 should succeed: {:?}", run.result);
        assert_eq!(run.legs().len(), 2, "{name}");
    }
}

#[test]
fn ward_662_a_400_is_not_retried() {
    let mut sim = Sim::new(&ward_ladder()).script("a", vec![status(3, 400), ok_at(20)]);
    let run = sim.run("turn", invoke());
    assert_eq!(run.failure().status(), Some(400));
    assert_eq!(run.sends.len(), 1);
    assert_eq!(run.finished_at, 3);
}

#[test]
fn ward_662_an_expired_turn_is_not_retried() {
    let mut sim = Sim::new(&ward_ladder()).script("a", vec![Behavior::Stall]);
    let run = sim.run("turn", with_deadline(invoke(), 180_000));
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 180_000));
    assert_eq!(run.sends.len(), 1);
}

#[test]
fn ward_662_the_whole_default_ladder_stays_under_a_tenth_of_a_180s_turn() {
    // Default backoff (250 ms doubling, equal jitter) over 200 seeds: at most the exact delays.
    let cfg = two_targets("{}", "{}", r#"{"turn": {"retry": "a", "attempts": 4}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![status(0, 503)]);
    let config = sim.config().clone();
    let mut worst = 0;
    for seed in 0..200 {
        sim.seed = seed;
        let run = sim.run("turn", invoke());
        worst = worst.max(run.finished_at);
    }
    assert!(worst <= 1750, "waited {worst} ms");
    assert!(worst < 180_000 / 10);
    assert_eq!(config.routes.names().count(), 1);
}

// ---- GetBeta: one budget across the legs ----

fn getbeta(primary: &str) -> String {
    two_targets(primary, "{}", r#"{"chat": {"fallback": ["a", "b"]}}"#, r#", "deadlineMs": 10000"#)
}

#[test]
fn getbeta_six_seconds_spent_of_ten_leaves_four_for_the_secondary() {
    let mut sim = Sim::new(&getbeta(r#"{"totalMs": 6000}"#))
        .script("a", vec![Behavior::Stall])
        .script("b", vec![Behavior::Stall]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.sends, vec![(0, "a".into()), (6000, "b".into())]);
    let secondary = &run.legs()[1];
    assert_eq!(secondary.end_ms - secondary.start_ms, 4000, "the secondary got what was left, not a fresh 10 s");
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 10_000));
}

#[test]
fn getbeta_an_exhausted_budget_makes_zero_secondary_calls() {
    let mut sim = Sim::new(&getbeta("{}")).script("a", vec![Behavior::Stall]).script("b", vec![ok_at(1)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.sent_targets(), ["a"]);
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 10_000));
}

#[test]
fn getbeta_a_result_after_the_deadline_is_rejected() {
    // The driver's timer was late (a throttled tab): the answer arrives at 10.5 s and the
    // engine hears of it before any timer. It must not be reported as a success.
    let config = llm_baton::config::Config::from_json(&getbeta("{}")).unwrap();
    let mut baton = llm_baton::engine::Baton::new(config);
    let mut call = baton.start("chat", invoke(), 0, Box::new(llm_baton::backoff::SplitMix64(1))).unwrap();
    let llm_baton::engine::Action::Send { attempt, .. } = call.poll().unwrap() else { panic!() };
    call.on_headers(attempt, 100);
    call.on_answer(attempt, 10_500, support::answer());
    let actions: Vec<_> = std::iter::from_fn(|| call.poll()).collect();
    let finish = actions.iter().find_map(|a| match a {
        llm_baton::engine::Action::Finish(r) => Some(r.clone()),
        _ => None,
    });
    let err = finish.expect("finished").expect_err("late result rejected");
    assert_eq!(err.failure, timeout(Limit::Deadline, 10_000));
    assert_eq!(err.legs[0].end_ms, 10_500);
}

#[test]
fn getbeta_a_first_success_never_starts_the_fallback() {
    let mut sim = Sim::new(&getbeta("{}")).script("a", vec![ok_at(30)]).script("b", vec![ok_at(1)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "a");
    assert_eq!(run.sent_targets(), ["a"]);
}

#[test]
fn getbeta_a_budget_of_zero_or_less_is_rejected() {
    for bad in ["0", "-5"] {
        let cfg = two_targets("{}", "{}", r#"{"chat": "a"}"#, &format!(r#", "deadlineMs": {bad}"#));
        let err = llm_baton::config::Config::from_json(&cfg).unwrap_err();
        assert_eq!(
            err.message,
            format!("deadlineMs must be a positive number of milliseconds (got {bad}); omit it for no deadline")
        );
        let opt = llm_baton::config::parse_deadline_option(Some(&serde_json::json!(bad.parse::<i64>().unwrap())))
            .unwrap_err();
        assert_eq!(opt.path, "options.deadlineMs");
    }
}

// ---- Switchyard: the deadline covers retries, waits and the whole body ----

#[test]
fn switchyard_300ms_attempt_and_450ms_body_under_a_600ms_deadline_times_out() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "backoff": {"initialMs": 0, "jitter": "none"}}}"#,
        "",
    );
    let slow_body = Behavior::Answer { headers_at: 10, content: vec![], done_at: Some(450) };
    let mut sim = Sim::new(&cfg).script("a", vec![status(300, 503), slow_body]);
    let run = sim.run("chat", with_deadline(invoke(), 600));
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 600));
    assert_eq!(run.finished_at, 600);
    assert_eq!(run.legs().len(), 2);
    assert_eq!(run.aborts, vec![(600, 2, timeout(Limit::Deadline, 600))]);
}

#[test]
fn switchyard_expiry_after_streaming_begins_adds_no_attempt() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"retry": "a", "attempts": 3}}"#, "");
    let begins_then_stalls = Behavior::Answer { headers_at: 20, content: vec![50, 80], done_at: None };
    let mut sim = Sim::new(&cfg).script("a", vec![begins_then_stalls]);
    let run = sim.run("chat", with_deadline(stream(), 600));
    assert_eq!(run.failure(), &timeout(Limit::Deadline, 600));
    assert_eq!(run.sends.len(), 1);
    assert_eq!(run.delivered, [50, 80]);
}

// ---- BitFun #2680: terminal 4xx, transient statuses retried ----

#[test]
fn bitfun_2680_a_400_is_terminal_with_one_attempt() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"retry": "a", "attempts": 3}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![status(2, 400)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.failure().status(), Some(400));
    assert_eq!(run.legs().len(), 1);
}

#[test]
fn bitfun_2680_503_then_200_is_retried() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"retry": "a", "attempts": 3}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![status(2, 503), ok_at(10)]);
    let run = sim.run("chat", invoke());
    assert!(run.result.is_ok());
    assert_eq!(run.legs().len(), 2);
}

#[test]
fn bitfun_2680_first_token_timeouts_can_be_made_terminal_with_retry_on() {
    // llm-baton retries a member's first-token timeout by default (BAML #5085); a caller who
    // fears double billing (BitFun's choice) leaves "timeout" out of retryOn.
    let cfg = two_targets(
        r#"{"firstTokenMs": 400}"#,
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "retryOn": ["transport", 429, "5xx"]}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![Behavior::Answer { headers_at: 5, content: vec![], done_at: None }]);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &timeout(Limit::FirstToken, 400));
    assert_eq!(run.sends.len(), 1);
}

// ---- Retry-After ----

fn retry_after(at: u64, status: u16, ms: u64) -> Behavior {
    Behavior::Status { at, status, retry_after_ms: Some(ms) }
}

#[test]
fn retry_after_replaces_the_computed_backoff() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "backoff": {"initialMs": 50, "jitter": "none"}}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![retry_after(10, 429, 1000), ok_at(10)]);
    let run = sim.run("chat", invoke());
    assert!(run.result.is_ok());
    assert_eq!(run.sends[1].0, 1010);
    assert_eq!(run.retries()[0].3, 1000);
}

#[test]
fn a_retry_after_longer_than_the_budget_stops_at_once_with_the_429() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"retry": "a", "attempts": 3}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![retry_after(10, 429, 30_000)]);
    let run = sim.run("chat", with_deadline(invoke(), 5000));
    assert_eq!(run.finished_at, 10, "no waiting out a budget that cannot cover the server's wait");
    assert_eq!(run.failure().status(), Some(429));
    assert_eq!(run.failure().retry_after_ms(), Some(30_000));
}

#[test]
fn a_retry_after_over_the_cap_moves_an_enclosing_fallback_on_immediately() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"fallback": [{"retry": "a", "attempts": 3}, "b"]}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![retry_after(10, 429, 120_000)]).script("b", vec![ok_at(20)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.sends, vec![(0, "a".into()), (10, "b".into())]);
}

#[test]
fn a_backoff_that_would_not_end_before_the_deadline_is_not_started() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"retry": "a", "attempts": 3, "backoff": {"initialMs": 2000, "jitter": "none"}}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![status(100, 503)]);
    let run = sim.run("chat", with_deadline(invoke(), 1500));
    assert_eq!(run.finished_at, 100);
    assert_eq!(run.failure().status(), Some(503), "the real cause, not a timeout waited out");
}

// ---- composition ----

#[test]
fn a_fallback_of_retries_exhausts_each_member_in_turn() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"fallback": [{"retry": "a", "attempts": 2, "backoff": {"initialMs": 10, "jitter": "none"}}, {"retry": "b", "attempts": 2, "backoff": {"initialMs": 10, "jitter": "none"}}]}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![status(1, 503)]).script("b", vec![status(1, 502), ok_at(4)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.sent_targets(), ["a", "a", "b", "b"]);
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.failovers(), vec![("a".into(), "b".into())]);
    assert_eq!(run.retries().len(), 2);
    assert_eq!(run.legs().iter().map(|l| l.attempt).collect::<Vec<_>>(), [1, 2, 3, 4]);
}

#[test]
fn a_retry_of_a_fallback_restarts_the_chain() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"chat": {"retry": {"fallback": ["a", "b"]}, "attempts": 2, "backoff": {"initialMs": 5, "jitter": "none"}}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![status(1, 503), ok_at(2)]).script("b", vec![status(1, 500)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.sent_targets(), ["a", "b", "a"]);
    assert_eq!(run.retries(), vec![("b".into(), 1, 2, 5)]);
    assert!(run.result.is_ok());
}

#[test]
fn fallback_on_narrows_failover() {
    let cfg = two_targets("{}", "{}", r#"{"chat": {"fallback": ["a", "b"], "fallbackOn": ["5xx", "timeout"]}}"#, "");
    let mut sim = Sim::new(&cfg).script("a", vec![status(1, 401)]).script("b", vec![ok_at(2)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.failure().status(), Some(401));
    assert_eq!(run.sent_targets(), ["a"]);
}

#[test]
fn round_robin_rotates_per_call_and_does_not_fail_over() {
    let cfg = two_targets(
        "{}",
        "{}",
        r#"{"rr": {"roundRobin": ["a", "b"]}, "weighted": {"roundRobin": ["a", "b"], "weights": [2, 1]}}"#,
        "",
    );
    let mut sim = Sim::new(&cfg).script("a", vec![ok_at(2)]).script("b", vec![status(1, 503)]);
    let served: Vec<String> = (0..4).map(|_| sim.run("rr", invoke()).sends[0].1.clone()).collect();
    assert_eq!(served, ["a", "b", "a", "b"]);
    let weighted: Vec<String> = (0..6).map(|_| sim.run("weighted", invoke()).sends[0].1.clone()).collect();
    assert_eq!(weighted, ["a", "b", "a", "a", "b", "a"]);
    assert!(sim.run("rr", invoke()).result.is_ok(), "the fifth call goes to a");
    let run = sim.run("rr", invoke());
    assert_eq!(run.sent_targets(), ["b"], "the sixth goes to b, and b's 503 does not move to a");
    assert_eq!(run.failure().status(), Some(503));
}

#[test]
fn a_bare_target_name_is_its_own_route() {
    let cfg = two_targets("{}", "{}", "{}", "");
    let mut sim = Sim::new(&cfg).script("b", vec![ok_at(3)]);
    assert!(sim.run("b", invoke()).result.is_ok());
    let err = sim.baton.start("nope", invoke(), 0, Box::new(llm_baton::backoff::SplitMix64(0))).unwrap_err();
    assert_eq!(err.message, r#"route "nope" is not a route or target in the config (known: a, b)"#);
}

#[test]
fn headers_limit_applies_until_headers_arrive_only() {
    let cfg = two_targets(r#"{"headersMs": 300}"#, "{}", r#"{"chat": "a"}"#, "");
    let slow_headers = Behavior::Answer { headers_at: 400, content: vec![], done_at: Some(500) };
    let mut sim = Sim::new(&cfg).script("a", vec![slow_headers]);
    assert_eq!(sim.run("chat", invoke()).failure(), &timeout(Limit::Headers, 300));
    let slow_body = Behavior::Answer { headers_at: 100, content: vec![], done_at: Some(2000) };
    let mut sim = Sim::new(&cfg).script("a", vec![slow_body]);
    assert!(sim.run("chat", invoke()).result.is_ok());
}

#[test]
fn events_and_legs_never_carry_credentials() {
    let cfg = r#"{"targets": {"a": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "sk-SECRET-123", "headers": {"authorization": "Bearer sk-SECRET-456"}}},
                  "routes": {"chat": {"retry": "a", "attempts": 2, "backoff": {"initialMs": 1, "jitter": "none"}}}}"#;
    let mut sim = Sim::new(cfg).script("a", vec![status(1, 503)]);
    let run = sim.run("chat", invoke());
    let all = format!("{:?} {:?} {:?} {}", run, sim.config(), sim.baton, run.events.to_json());
    assert!(!all.contains("SECRET"), "a credential leaked: {all}");
}

// ---- the soak of issue 41: a whole answer's body that stalls after its headers ----

/// A whole answer's headers can come long before its body is done (a provider that sends
/// whitespace while it generates, a proxy that flushes its headers first). `headersMs` ends at
/// the headers and `idleMs` bounds the body from there: a body that goes silent fails over
/// within `idleMs` of its last bytes, not at the deadline, and one that keeps coming is never cut.
#[test]
fn a_whole_answers_silent_body_fails_over_within_idle_ms() {
    let routes = r#"{"chat": {"fallback": ["a", "b"]}}"#;
    let cfg = two_targets(r#"{"headersMs": 300, "idleMs": 1000}"#, "{}", routes, r#", "deadlineMs": 20000"#);
    // Headers at 100, body bytes at 150 and 400, then silence.
    let stalled = Behavior::Answer { headers_at: 100, content: vec![150, 400], done_at: None };
    let mut sim = Sim::new(&cfg).script("a", vec![stalled]).script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.sends[1].0, 1400, "failed over 1.0 s after the last body bytes");
    assert_eq!(run.legs()[0].timeout, Some(Limit::Idle));
    // Headers and then nothing at all: idle from the headers.
    let silent = Behavior::Answer { headers_at: 100, content: vec![], done_at: None };
    let mut sim = Sim::new(&cfg).script("a", vec![silent]).script("b", vec![ok_at(40)]);
    assert_eq!(sim.run("chat", invoke()).sends[1].0, 1100);
    // A body that trickles for 5 s with gaps under the limit is read to its end.
    let trickle =
        Behavior::Answer { headers_at: 100, content: (1..=10).map(|i| 100 + i * 500).collect(), done_at: Some(5200) };
    let mut sim = Sim::new(&cfg).script("a", vec![trickle]).script("b", vec![ok_at(40)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "a");
    assert_eq!(run.finished_at, 5200);
}
