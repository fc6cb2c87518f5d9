//! Health across calls on one fake clock: the breaker's states, what calls skip, the retry
//! budget under a storm, and the flapping primary of issue 13, call after call on one Baton.

use llm_baton::backoff::SplitMix64;
use llm_baton::chat::{Delta, FinishReason, Usage};
use llm_baton::config::Config;
use llm_baton::engine::{Action, AttemptId, Baton, Call, CallOptions};
use llm_baton::health::{Admission, BreakerState, Health, Outcome};
use llm_baton::outcome::{Failure, FailureClass, Limit};
use llm_baton::policy::HealthPolicy;
use llm_baton::record::Event;
use llm_baton_wire::write::ToJson;

fn http(status: u16, retry_after_ms: Option<u64>) -> Failure {
    classed(status, None, retry_after_ms)
}

fn classed(status: u16, class: Option<FailureClass>, retry_after_ms: Option<u64>) -> Failure {
    Failure::Http {
        status,
        message: format!("scripted {status}"),
        code: None,
        class,
        retry_after_ms,
        should_retry: None,
        in_stream: false,
        content_filter: None,
    }
}

fn policy() -> HealthPolicy {
    HealthPolicy { cooldown_ms: 1000, ..HealthPolicy::default() }
}

fn fail(h: &mut Health, now: u64, f: Failure) {
    h.report("p", &Outcome::of(Some(&f)), now);
}

#[test]
fn consecutive_failures_open_the_breaker_for_a_cooldown_then_one_probe_decides() {
    let mut h = Health::new(Some(policy()));
    for t in 0..4 {
        fail(&mut h, t, http(503, None));
        assert_eq!(h.admit("p", t), Admission::Pass, "4 failures keep it closed");
    }
    fail(&mut h, 4, http(503, None));
    assert_eq!(h.admit("p", 5), Admission::Skip { reopens_in_ms: 999, cause: Some(http(503, None)) });
    // The cooldown ends: one probe, and everyone else skips while it is out.
    assert_eq!(h.admit("p", 1004), Admission::Probe);
    assert!(matches!(h.admit("p", 1005), Admission::Skip { reopens_in_ms: 999, .. }));
    // The probe fails: open for another cooldown; the next probe succeeds: closed.
    fail(&mut h, 1010, http(500, None));
    assert!(matches!(h.admit("p", 1500), Admission::Skip { reopens_in_ms: 510, .. }));
    assert_eq!(h.admit("p", 2010), Admission::Probe);
    h.report("p", &Outcome::Success, 2020);
    assert_eq!(h.admit("p", 2021), Admission::Pass);
    // A probe that never reports: its lease ends with the cooldown, and another may go.
    for t in 3000..3005 {
        fail(&mut h, t, http(503, None));
    }
    assert_eq!(h.admit("p", 4004), Admission::Probe);
    assert!(matches!(h.admit("p", 5003), Admission::Skip { .. }));
    assert_eq!(h.admit("p", 5004), Admission::Probe);
}

#[test]
fn only_failures_that_say_something_about_the_target_count() {
    let counted = [
        Failure::Transport { message: "reset".into() },
        Failure::Protocol { message: "garbage".into() },
        Failure::Timeout { limit: Limit::FirstToken, limit_ms: 10 },
        http(408, None),
        http(429, None),
        http(502, None),
        classed(429, Some(FailureClass::Quota), None),
        classed(401, Some(FailureClass::Auth), None),
    ];
    let neutral = [
        Failure::Cancelled,
        Failure::Timeout { limit: Limit::Deadline, limit_ms: 10 },
        http(400, None),
        http(404, None),
        classed(400, Some(FailureClass::ContextLength), None),
        classed(400, Some(FailureClass::ContentFilter), None),
    ];
    for f in counted {
        assert!(matches!(Outcome::of(Some(&f)), Outcome::Failure(_)), "{f:?} counts");
    }
    for f in neutral {
        assert_eq!(Outcome::of(Some(&f)), Outcome::Neutral, "{f:?} does not count");
        let mut h = Health::new(Some(policy()));
        for t in 0..50 {
            fail(&mut h, t, f.clone());
        }
        assert_eq!(h.admit("p", 50), Admission::Pass);
    }
}

#[test]
fn a_retry_after_opens_it_for_that_long_and_a_failure_ratio_trips_it() {
    let mut h = Health::new(Some(policy()));
    fail(&mut h, 0, http(429, Some(7000)));
    assert!(matches!(h.admit("p", 1), Admission::Skip { reopens_in_ms: 6999, .. }));
    assert_eq!(h.admit("p", 7000), Admission::Probe);
    // Ratio: 5 failures among 10 outcomes, never 5 in a row.
    let mut h = Health::new(Some(policy()));
    for t in 0..10 {
        if t % 2 == 1 {
            fail(&mut h, t, http(500, None));
        } else {
            h.report("p", &Outcome::Success, t);
        }
    }
    assert!(matches!(h.admit("p", 10), Admission::Skip { .. }), "50% of 10 outcomes trips it");
    assert_eq!(h.snapshot(&["p".into()], 10).targets[0].state, BreakerState::Open);
}

#[test]
fn health_off_never_skips() {
    let mut h = Health::new(None);
    for t in 0..100 {
        fail(&mut h, t, http(503, None));
    }
    assert_eq!(h.admit("p", 100), Admission::Pass);
    assert!(!h.snapshot(&["p".into()], 100).enabled);
}

/// What a scripted provider does with one attempt sent at `now`.
#[derive(Clone, Copy)]
enum Answer {
    /// Headers and a whole stream 10 ms after the send.
    Ok,
    /// This status 10 ms after the send.
    Status(u16),
}

#[derive(Default)]
struct Record {
    /// (time, target) of every Send.
    sends: Vec<(u64, String)>,
    events: Vec<Event>,
    served_by: Option<String>,
    failure: Option<Failure>,
    finished_at: u64,
}

/// One call at `start`, on one Baton whose health persists, to its end; `answer` decides each
/// attempt by target and time.
fn call(baton: &mut Baton, route: &str, start: u64, answer: &dyn Fn(&str, u64) -> Answer) -> Record {
    let options = CallOptions { stream: true, ..CallOptions::default() };
    let mut call = baton.start(route, options, start, Box::new(SplitMix64(3))).expect("route");
    let mut record = Record::default();
    drive(baton, &mut call, start, answer, &mut record);
    record
}

fn drive(baton: &Baton, call: &mut Call, start: u64, answer: &dyn Fn(&str, u64) -> Answer, record: &mut Record) {
    let mut now = start;
    let mut due: Option<(u64, AttemptId, Answer)> = None;
    for _ in 0..1000 {
        while let Some(action) = call.poll() {
            match action {
                Action::Send { attempt, target, .. } => {
                    let name = baton.config().targets[target].name.clone();
                    due = Some((now + 10, attempt, answer(&name, now)));
                    record.sends.push((now, name));
                }
                Action::Abort { .. } => due = None,
                Action::Event(e) => record.events.push(e),
                Action::Finish(result) => {
                    record.finished_at = now;
                    match result {
                        Ok(s) => record.served_by = Some(baton.config().targets[s.target].name.clone()),
                        Err(e) => record.failure = Some(e.failure),
                    }
                    return;
                }
                _ => {}
            }
        }
        let timer = call.poll_timeout();
        match (due, timer) {
            (Some((at, id, a)), t) if t.is_none_or(|t| at < t) => {
                now = at;
                due = None;
                call.on_headers(id, now);
                match a {
                    Answer::Ok => call.on_deltas(
                        id,
                        now,
                        [
                            Delta::Text { text: "hi".into() },
                            Delta::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), model: None },
                        ],
                    ),
                    Answer::Status(s) => call.on_failure(id, now, http(s, None)),
                }
            }
            (_, Some(t)) => {
                now = t;
                call.handle_timeout(now);
            }
            (_, None) => panic!("stuck"),
        }
    }
    panic!("the call did not finish");
}

fn skipped(r: &Record) -> Vec<&str> {
    r.events
        .iter()
        .filter_map(|e| if let Event::Skip { target, .. } = e { Some(target.as_str()) } else { None })
        .collect()
}

const TWO: &str = r#""primary": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "a"},
                     "backup": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "b"}"#;

#[test]
fn a_flapping_primary_is_skipped_while_down_probed_once_per_cooldown_and_back_within_one() {
    // Issue 13: 503 for 6 s, then healthy; 10 requests 1.2 s apart; the default 5 s cooldown.
    let config = format!(r#"{{"targets": {{{TWO}}}, "routes": {{"chat": {{"fallback": ["primary", "backup"]}}}}}}"#);
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let down_until = 6000;
    let answer = |target: &str, now: u64| match target {
        "primary" if now < down_until => Answer::Status(503),
        _ => Answer::Ok,
    };
    let mut primary_sends = Vec::new();
    let mut served = Vec::new();
    for i in 0..10 {
        let r = call(&mut baton, "chat", i * 1200, &answer);
        primary_sends.extend(r.sends.iter().filter(|(_, t)| t == "primary").map(|(at, _)| *at));
        served.push((i * 1200, r.served_by.expect("served")));
    }
    for (at, by) in &served {
        if *at < down_until {
            assert_eq!(by, "backup", "the request at {at} ms, during the outage");
        }
    }
    // Five failures open the breaker (at 4.8 s); it stays open for 5 s, so the primary sees
    // nothing more while it is down, one probe at 10.8 s, and serves from then on.
    assert_eq!(primary_sends, [0, 1200, 2400, 3600, 4800, 10800]);
    let back = served.iter().find(|(at, by)| *at >= down_until && by == "primary").map(|(at, _)| *at);
    assert_eq!(back, Some(10800));
    assert!(back.unwrap() - down_until <= 5000, "back within one cooldown of recovering");
}

#[test]
fn an_open_member_is_skipped_a_bare_retry_fails_fast_and_all_open_tries_the_soonest() {
    let config = format!(
        r#"{{"targets": {{{TWO}}}, "health": {{"failures": 1, "cooldownMs": 1000}},
            "routes": {{"chat": {{"fallback": ["primary", "backup"]}}, "solo": {{"retry": "primary", "attempts": 3}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let down = |_: &str, _: u64| Answer::Status(503);
    let first = call(&mut baton, "chat", 0, &down);
    assert_eq!(first.sends.len(), 2, "both members tried: each breaker opens after this call");
    // The bare retry: nothing else to try, so it fails at once with the real 503.
    let solo = call(&mut baton, "solo", 100, &down);
    assert!(solo.sends.is_empty());
    assert_eq!(solo.failure, Some(http(503, None)));
    assert_eq!(solo.finished_at, 100);
    assert_eq!(skipped(&solo), ["primary"]);
    // Every member open: the one that reopens soonest (primary, opened first) is tried anyway.
    let all = call(&mut baton, "chat", 200, &|_, _| Answer::Ok);
    assert_eq!(skipped(&all), ["primary", "backup"]);
    assert_eq!(all.sends.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>(), ["primary"]);
    assert_eq!(all.served_by.as_deref(), Some("primary"));
    assert_eq!(
        baton.health(300).targets.iter().map(|t| t.state).collect::<Vec<_>>(),
        [BreakerState::Open, BreakerState::Closed]
    );
}

#[test]
fn a_call_follows_its_own_route_whatever_its_own_failures_teach_the_breaker() {
    // One call with five attempts on the primary: the breaker opens at its first failure, yet
    // the call makes all five, exactly as the seeds' tables say.
    let config = format!(
        r#"{{"targets": {{{TWO}}}, "health": {{"failures": 1}},
            "routes": {{"chat": {{"fallback": [{{"retry": "primary", "attempts": 5, "backoff": {{"initialMs": 10, "jitter": "none"}}}}, "backup"]}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let r = call(&mut baton, "chat", 0, &|t: &str, _| if t == "primary" { Answer::Status(503) } else { Answer::Ok });
    let primary = r.sends.iter().filter(|(_, t)| t == "primary").count();
    assert_eq!(primary, 5);
    assert_eq!(r.served_by.as_deref(), Some("backup"));
}

#[test]
fn a_storm_on_a_dead_primary_sends_no_more_retries_than_the_budget_allows() {
    // 200 calls at once, each allowed 3 attempts on the primary before the backup. Without a
    // budget that is 600 requests to a dead provider; with the default, retries and failover
    // hops together spend at most 10 per second over 10 s plus 20% of the successful calls.
    let config = format!(
        r#"{{"targets": {{{TWO}}},
            "routes": {{"chat": {{"fallback": [{{"retry": "primary", "attempts": 3, "retryOn": ["5xx"], "backoff": {{"initialMs": 50, "jitter": "none"}}}}, "backup"]}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let options = CallOptions { stream: true, ..CallOptions::default() };
    let mut calls: Vec<Call> =
        (0..200).map(|_| baton.start("chat", options, 0, Box::new(SplitMix64(5))).unwrap()).collect();
    let answer = |t: &str, _: u64| if t == "primary" { Answer::Status(503) } else { Answer::Ok };
    let mut primary = 0;
    let mut warnings = 0;
    let mut served = 0;
    for call in &mut calls {
        let mut r = Record::default();
        drive(&baton, call, 0, &answer, &mut r);
        primary += r.sends.iter().filter(|(_, t)| t == "primary").count();
        warnings += r
            .events
            .iter()
            .filter(|e| matches!(e, Event::Warning { message, .. } if message.contains("retry budget")))
            .count();
        served += usize::from(r.served_by.as_deref() == Some("backup"));
    }
    assert_eq!(served, 200, "every call is served by the backup");
    let retries = primary - 200;
    assert!(retries <= 100 + 200 / 5, "{retries} retries reached the dead primary");
    assert!(primary > 200, "a lone call's ladder is not cut: the first calls still retried");
    assert!(warnings > 0, "refused retries say why");
    let budget = baton.health(0).retry_budget.expect("a budget");
    assert!(budget.balance <= 1.0, "the budget is spent: {budget:?}");
}

#[test]
fn with_health_off_every_call_pays_its_whole_ladder() {
    let config = format!(
        r#"{{"targets": {{{TWO}}}, "health": false, "routes": {{"chat": {{"fallback": ["primary", "backup"]}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    for i in 0..10 {
        let r = call(&mut baton, "chat", i * 100, &|t: &str, _| {
            if t == "primary" {
                Answer::Status(503)
            } else {
                Answer::Ok
            }
        });
        assert_eq!(r.sends.len(), 2);
    }
}

#[test]
fn a_replica_takes_probes_only_from_its_store_and_asks_again_when_stale() {
    use llm_baton::health::{read_report, read_view};
    // The store (a Durable Object's state) learns from leg events, as a Baton emits them.
    let mut store = Health::new(Some(policy()));
    let leg = |outcome: &str, cause: serde_json::Value| serde_json::json!({"type": "leg", "leg": {"target": "p", "attempt": 1, "startMs": 0, "endMs": 5, "outcome": outcome}, "cause": cause});
    let down = leg("http", serde_json::json!({"kind": "http", "message": "HTTP 503: down", "status": 503}));
    for t in 0..5 {
        let r = read_report(&down).unwrap();
        store.report(&r.target, &r.outcome, t);
    }
    let mut replica = Health::new(Some(policy()));
    replica.follow();
    let targets = vec!["p".to_string()];
    assert!(replica.stale(&targets, 0, 1000), "never heard of p");
    let view = serde_json::from_str::<serde_json::Value>(&store.view(&targets, 10).to_json()).unwrap();
    assert_eq!(view["targets"][0]["state"], "open");
    assert_eq!(view["targets"][0]["lastFailure"]["status"], 503);
    replica.absorb(&read_view(&view).unwrap(), 100);
    assert!(!replica.stale(&targets, 500, 1000));
    assert!(matches!(replica.admit("p", 500), Admission::Skip { reopens_in_ms: 594, cause: Some(_) }));
    // The cooldown passed: the replica does not grant itself a probe; it asks the store.
    assert!(replica.stale(&targets, 1094, 1000));
    assert!(matches!(replica.admit("p", 1094), Admission::Skip { reopens_in_ms: 0, .. }));
    let granted = serde_json::from_str::<serde_json::Value>(&store.view(&targets, 1010).to_json()).unwrap();
    assert_eq!(
        (granted["targets"][0]["state"].as_str(), granted["targets"][0]["probe"].as_bool()),
        (Some("half_open"), Some(true))
    );
    let refused = serde_json::from_str::<serde_json::Value>(&store.view(&targets, 1011).to_json()).unwrap();
    assert_eq!(refused["targets"][0]["probe"], false, "one probe per cooldown, whoever asks");
    replica.absorb(&read_view(&granted).unwrap(), 1100);
    assert_eq!(replica.admit("p", 1100), Admission::Probe);
    assert!(matches!(replica.admit("p", 1101), Admission::Skip { .. }), "the grant is taken once");
    // Unreadable reports and views say where.
    assert_eq!(
        read_report(&serde_json::json!({"leg": {"target": "p", "outcome": "http"}})).unwrap_err(),
        "a failed leg's report needs its cause"
    );
    assert_eq!(
        read_view(&serde_json::json!({"targets": [{"target": "p", "state": "ajar"}]})).unwrap_err(),
        r#"targets[0].state must be "closed", "open" or "half_open""#
    );
}

#[test]
fn a_refused_retry_says_it_was_the_budget() {
    let config = format!(
        r#"{{"targets": {{{TWO}}}, "health": {{"retryBudget": {{"ratio": 0, "minPerSecond": 0.1}}}},
            "routes": {{"chat": {{"retry": "primary", "attempts": 3, "backoff": {{"initialMs": 10, "jitter": "none"}}}}}}}}"#
    );
    let mut baton = Baton::new(Config::from_json(&config).unwrap());
    let r = call(&mut baton, "chat", 0, &|_, _| Answer::Status(503));
    assert_eq!(r.sends.len(), 2, "one unit (0.1 per second over 10 s): one retry");
    let warning = r.events.iter().find_map(|e| match e {
        Event::Warning { message, .. } => Some(message.as_str()),
        _ => None,
    });
    assert_eq!(
        warning,
        Some("not retried: the retry budget is spent (retries, hedges and failover hops may add 0% of the successful calls of the last 10 s plus 0.1 per second); the failure goes to the next member or the caller")
    );
    assert_eq!(r.failure, Some(http(503, None)));
}

#[test]
fn a_store_keeps_one_retry_budget_for_everyone_sharing_it() {
    use llm_baton::health::{read_report, read_view};
    let leg = |attempt: u32, outcome: &str| {
        let cause = serde_json::json!({"kind": "http", "message": "HTTP 503", "status": 503});
        serde_json::json!({"type": "leg", "leg": {"target": "p", "attempt": attempt, "startMs": 0, "endMs": 5, "outcome": outcome}, "cause": cause})
    };
    let mut store = Health::new(Some(policy()));
    // Other isolates made 95 retries and hops (attempts after their calls' first): 5 units left.
    for t in 0..95 {
        let r = read_report(&leg(2, "http")).unwrap();
        store.count_in_budget(r.attempt, &r.outcome, t);
    }
    let view = serde_json::from_str::<serde_json::Value>(&store.view(&["p".into()], 100).to_json()).unwrap();
    assert_eq!(view["retryBudget"], 5.0);
    let mut replica = Health::new(Some(policy()));
    replica.follow();
    replica.absorb(&read_view(&view).unwrap(), 1000);
    let spent = (0..10).filter(|_| replica.try_spend_retry(1500)).count();
    assert_eq!(spent, 5, "the replica spends what the deployment has left, not its own floor of 100");
    // Once the store's word is older than the budget's window, the replica counts alone again.
    assert!(replica.try_spend_retry(11_500));
}
