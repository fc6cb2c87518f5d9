//! Hedged fallbacks on the fake clock: when the next member starts beside a silent one, which
//! leg wins, what the loser leaves behind, and the races (content in the same instant, a hedge
//! that fails first, the deadline or the caller's cancel while two legs run, a resume after a
//! hedge), then the learned threshold, a member passed over as slow, and the `fastest` strategy.

mod support;

use llm_baton::chat::Delta;
use llm_baton::engine::CallOptions;
use llm_baton::health::BreakerState;
use llm_baton::outcome::{Failure, Limit};
use llm_baton::record::Event;
use support::{invoke, ok_at, status, stream, transport, with_deadline, Behavior, Run, Shown, Sim, Step};

fn config(route: &str, health: &str) -> String {
    let target = |name: &str| {
        format!(r#""{name}": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m-{name}"}}"#)
    };
    format!(
        r#"{{"targets": {{{}, {}, {}}}, "routes": {{"chat": {route}}} {health}}}"#,
        target("p"),
        target("b"),
        target("c")
    )
}

const HEDGED: &str = r#"{"fallback": ["p", "b"], "hedge": {"afterMs": 500}}"#;

/// Headers at once, content at `first` (and 10 ms later), the end 10 ms after that.
fn shows_at(first: u64) -> Behavior {
    Behavior::Answer { headers_at: 1, content: vec![first, first + 10], done_at: Some(first + 20) }
}

fn hedges(run: &Run) -> Vec<(String, String, u32, u64, bool)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::Hedge { from, to, attempt, after_ms, learned } => {
                Some((from.clone(), to.clone(), *attempt, *after_ms, *learned))
            }
            _ => None,
        })
        .collect()
}

fn outcomes(run: &Run) -> Vec<(&str, &str)> {
    run.legs().iter().map(|l| (l.target.as_str(), l.outcome)).collect()
}

fn warnings(run: &Run) -> Vec<&str> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::Warning { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect()
}

fn shown_words(run: &Run) -> usize {
    run.shown
        .iter()
        .map(|s| match s {
            Shown::Deltas(d) => d.iter().filter(|d| matches!(d, Delta::Text { .. })).count(),
            Shown::Splice(_) => 0,
        })
        .sum()
}

#[test]
fn a_silent_member_is_raced_by_the_next_and_the_first_to_show_content_wins() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(3000)]).script("b", vec![shows_at(200)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.sends, vec![(0, "p".to_string()), (500, "b".to_string())]);
    assert_eq!(hedges(&run), vec![("p".into(), "b".into(), 2, 500, false)]);
    // The loser is aborted the instant the hedge shows content: its socket closes.
    assert_eq!(run.aborts, vec![(700, 1, Failure::Cancelled)]);
    assert_eq!(outcomes(&run), vec![("p", "lost"), ("b", "ok")]);
    assert_eq!(run.finished_at, 720);
    assert_eq!(shown_words(&run), 2, "only the winner's two words are shown");
    // Losing a race says nothing about a target's health.
    let health = sim.baton.health(800);
    let p = health.targets.iter().find(|t| t.target == "p").expect("p");
    assert_eq!((p.state, p.consecutive_failures, p.window.outcomes), (BreakerState::Closed, 0, 0));
}

#[test]
fn the_first_leg_still_wins_when_it_shows_content_before_the_hedge() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(600)]).script("b", vec![shows_at(400)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "p");
    assert_eq!(run.aborts, vec![(600, 2, Failure::Cancelled)]);
    assert_eq!(outcomes(&run), vec![("b", "lost"), ("p", "ok")]);
    assert_eq!(shown_words(&run), 2);
}

#[test]
fn a_member_that_answers_in_time_is_never_hedged() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(499)]).script("b", vec![shows_at(1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["p"]);
    assert!(hedges(&run).is_empty());
}

#[test]
fn a_member_that_started_answering_is_not_hedged_while_its_content_is_held() {
    // A tool call's name is held until its arguments come; it still ends the race.
    let name = Delta::ToolCall { index: 0, id: Some("c1".into()), name: Some("f".into()), arguments: String::new() };
    let args = Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() };
    let p = Behavior::Steps(vec![
        (1, Step::Headers),
        (100, Step::Deltas(vec![name])),
        (900, Step::Deltas(vec![args])),
        (910, Step::Deltas(vec![support::done()])),
    ]);
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![p]).script("b", vec![shows_at(1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["p"]);
    assert_eq!(run.served_by(sim.config()), "p");
}

#[test]
fn whole_answers_are_hedged_too() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![ok_at(2000)]).script("b", vec![ok_at(300)]);
    let run = sim.run("chat", invoke());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(run.finished_at, 800);
    assert_eq!(run.aborts, vec![(800, 1, Failure::Cancelled)]);
    assert_eq!(outcomes(&run), vec![("p", "lost"), ("b", "ok")]);
}

#[test]
fn both_legs_showing_content_in_the_same_instant_show_one_answer() {
    // p's first content and b's land at 600: whichever the driver hands in first wins (here p,
    // sent first); the other is aborted in that instant and nothing of it is shown.
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(600)]).script("b", vec![shows_at(100)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "p");
    assert_eq!(run.aborts, vec![(600, 2, Failure::Cancelled)]);
    assert_eq!(outcomes(&run), vec![("b", "lost"), ("p", "ok")]);
    assert_eq!(shown_words(&run), 2);
    assert_eq!(run.delivered, vec![600, 610]);
}

#[test]
fn a_hedge_that_fails_before_the_first_leg_answers_leaves_the_first_leg_running() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(1500)]).script("b", vec![status(100, 503)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "p");
    assert!(run.aborts.is_empty(), "p was never aborted: {:?}", run.aborts);
    assert_eq!(outcomes(&run), vec![("b", "http"), ("p", "ok")]);
    assert_eq!(run.finished_at, 1520);
    // The hedge's own failure is a real one for its breaker.
    let health = sim.baton.health(1600);
    assert_eq!(health.targets.iter().find(|t| t.target == "b").expect("b").consecutive_failures, 1);
}

#[test]
fn a_first_leg_that_fails_while_the_hedge_runs_leaves_the_hedge_running() {
    let p = Behavior::Fail { at: 700, failure: Failure::Transport { message: "reset".into() } };
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![p]).script("b", vec![shows_at(800)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "b");
    assert_eq!(outcomes(&run), vec![("p", "transport"), ("b", "ok")]);
    assert!(run.failovers().is_empty(), "the hedge already runs: {:?}", run.failovers());
}

#[test]
fn a_hedge_that_fails_hands_over_to_the_next_member_while_the_first_leg_runs_on() {
    let route = r#"{"fallback": ["p", "b", "c"], "hedge": {"afterMs": 500}}"#;
    let mut sim = Sim::new(&config(route, ""))
        .script("p", vec![shows_at(5000)])
        .script("b", vec![status(100, 503)])
        .script("c", vec![shows_at(200)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.served_by(sim.config()), "c");
    assert_eq!(run.sends, vec![(0, "p".to_string()), (500, "b".to_string()), (600, "c".to_string())]);
    assert_eq!(outcomes(&run), vec![("b", "http"), ("p", "lost"), ("c", "ok")]);
}

#[test]
fn both_legs_failing_fail_the_call_with_the_last_failure() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![transport(900)]).script("b", vec![status(100, 503)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &Failure::Transport { message: "connection refused".into() });
    assert_eq!(outcomes(&run), vec![("b", "http"), ("p", "transport")]);
    assert_eq!(run.finished_at, 900);
}

#[test]
fn the_deadline_during_a_hedge_ends_both_legs_at_once() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![Behavior::Stall]).script("b", vec![Behavior::Stall]);
    let run = sim.run("chat", with_deadline(stream(), 1000));
    let deadline = Failure::Timeout { limit: Limit::Deadline, limit_ms: 1000 };
    assert_eq!(run.failure(), &deadline);
    assert_eq!(run.finished_at, 1000);
    assert_eq!(run.aborts, vec![(1000, 1, deadline.clone()), (1000, 2, deadline)]);
    assert_eq!(outcomes(&run), vec![("p", "timeout"), ("b", "timeout")]);
}

#[test]
fn the_callers_cancel_during_a_hedge_aborts_both_legs() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![Behavior::Stall]).script("b", vec![Behavior::Stall]);
    sim.cancel_at = Some(700);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &Failure::Cancelled);
    assert_eq!(run.aborts, vec![(700, 1, Failure::Cancelled), (700, 2, Failure::Cancelled)]);
    assert_eq!(outcomes(&run), vec![("p", "cancelled"), ("b", "cancelled")]);
}

#[test]
fn a_stream_that_wins_a_hedge_and_breaks_resumes_on_the_member_after_it() {
    let route = r#"{"fallback": ["p", "b", "c"], "hedge": {"afterMs": 500}, "afterStart": {"mode": "restart"}}"#;
    let text = |t: &str| Step::Deltas(vec![Delta::Text { text: t.into() }]);
    let b = Behavior::Steps(vec![
        (1, Step::Headers),
        (100, text("Half ")),
        (150, Step::Fail(Failure::Transport { message: "reset".into() })),
    ]);
    let c = Behavior::Steps(vec![(1, Step::Headers), (50, text("Whole.")), (60, Step::Deltas(vec![support::done()]))]);
    let mut sim =
        Sim::new(&config(route, "")).script("p", vec![Behavior::Stall]).script("b", vec![b]).script("c", vec![c]);
    let run = sim.run("chat", CallOptions { resettable: true, ..stream() });
    assert_eq!(run.served_by(sim.config()), "c");
    assert_eq!(run.reader_text(), "Whole.");
    assert_eq!(outcomes(&run), vec![("p", "lost"), ("b", "transport"), ("c", "ok")]);
    assert_eq!(run.sends[2], (650, "c".to_string()));
}

#[test]
fn max_bounds_the_hedges_of_a_call() {
    let route = |max: u32| format!(r#"{{"fallback": ["p", "b", "c"], "hedge": {{"afterMs": 500, "max": {max}}}}}"#);
    for (max, sent) in [(1, vec!["p", "b"]), (2, vec!["p", "b", "c"])] {
        let mut sim = Sim::new(&config(&route(max), ""))
            .script("p", vec![shows_at(3000)])
            .script("b", vec![shows_at(3000)])
            .script("c", vec![shows_at(3000)]);
        let run = sim.run("chat", stream());
        assert_eq!(run.sent_targets(), sent, "max {max}");
        assert_eq!(run.served_by(sim.config()), "p");
    }
}

#[test]
fn a_hedge_is_refused_with_a_warning_when_the_retry_budget_is_spent() {
    let health = r#", "health": {"retryBudget": {"ratio": 0, "minPerSecond": 0}}"#;
    let mut sim = Sim::new(&config(HEDGED, health)).script("p", vec![shows_at(900)]).script("b", vec![shows_at(1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["p"]);
    let warnings = warnings(&run);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("not hedged: the retry budget is spent"), "{}", warnings[0]);
    assert!(warnings[0].ends_with("; p goes on alone"), "{}", warnings[0]);
}

#[test]
fn a_member_whose_breaker_is_open_is_passed_over_by_a_hedge() {
    let route = r#"{"fallback": ["p", "b", "c"], "hedge": {"afterMs": 500}}"#;
    let health = r#", "health": {"failures": 1}"#;
    let mut sim = Sim::new(&config(route, health))
        .script("p", vec![shows_at(3000)])
        .script("b", vec![status(1, 503)])
        .script("c", vec![shows_at(100)]);
    // A call that opens b's breaker first.
    sim.run("b", stream());
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["p", "c"]);
    assert_eq!(hedges(&run), vec![("p".into(), "c".into(), 2, 500, false)]);
}

#[test]
fn a_learned_threshold_applies_once_enough_is_known_and_never_below_its_floor() {
    let route = r#"{"fallback": ["p", "b"], "hedge": {"afterPercentile": 90, "afterMs": 5000, "minSamples": 10, "floorMs": 150}}"#;
    let mut sim = Sim::new(&config(route, "")).script("b", vec![shows_at(1)]);
    // Nine calls teach p times to first token of 100..900 ms: below minSamples, afterMs holds.
    for first in 1..=9 {
        sim.scripts.insert("p".into(), vec![shows_at(first * 100)]);
        let run = sim.run("chat", stream());
        assert!(hedges(&run).is_empty());
    }
    sim.scripts.insert("p".into(), vec![shows_at(8000)]);
    let run = sim.run("chat", stream());
    assert_eq!(hedges(&run), vec![("p".into(), "b".into(), 2, 5000, false)]);
    // That call's lost leg (5001 ms, a lower bound) is the tenth sample: the 90th percentile is
    // now the ninth of ten, 900 ms.
    let run = sim.run("chat", stream());
    assert_eq!(hedges(&run), vec![("p".into(), "b".into(), 2, 900, true)]);

    // A target whose answers all come fast is hedged no sooner than the floor.
    let mut sim = Sim::new(&config(route, "")).script("b", vec![shows_at(1)]).script("p", vec![shows_at(10)]);
    for _ in 0..10 {
        sim.run("chat", stream());
    }
    sim.scripts.insert("p".into(), vec![shows_at(3000)]);
    let run = sim.run("chat", stream());
    assert_eq!(hedges(&run), vec![("p".into(), "b".into(), 2, 150, true)]);

    // A target slow for a while teaches a threshold past afterMs, which caps it (its last answer
    // came in time, so it is not passed over as slow).
    let route = r#"{"fallback": ["p", "b"], "hedge": {"afterPercentile": 50, "afterMs": 1000, "minSamples": 3}}"#;
    let mut sim = Sim::new(&config(route, "")).script("b", vec![shows_at(1)]).script("p", vec![shows_at(4000)]);
    for _ in 0..2 {
        sim.run("chat", stream());
    }
    sim.scripts.insert("p".into(), vec![shows_at(100)]);
    sim.run("chat", stream());
    sim.scripts.insert("p".into(), vec![Behavior::Stall]);
    let run = sim.run("chat", stream());
    assert_eq!(hedges(&run), vec![("p".into(), "b".into(), 2, 1000, true)]);
}

fn skips(run: &Run) -> Vec<(&str, &str, Option<u64>)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::Skip { target, reason, reopens_in_ms, .. } => {
                Some((target.as_str(), reason.as_str(), *reopens_in_ms))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_member_that_turned_slow_is_passed_over_not_hedged_until_a_probe_finds_it_fast() {
    let mut sim = Sim::new(&config(HEDGED, "")).script("p", vec![shows_at(3000)]).script("b", vec![shows_at(200)]);
    // Three calls in a row find p silent past its threshold: each is hedged, and p's lost legs
    // (700 ms, lower bounds) all passed 500 ms.
    for _ in 0..3 {
        assert_eq!(sim.run("chat", stream()).sent_targets(), vec!["p", "b"]);
    }
    // From now on a call goes to b at once: one request, and b's usual time to first token.
    let run = sim.run("chat", stream());
    assert_eq!(run.sends, vec![(0, "b".to_string())]);
    assert!(hedges(&run).is_empty());
    let reason = "slow: its last 3 times to first token passed 500 ms, its hedge threshold before them";
    assert_eq!(skips(&run), vec![("p", reason, None)]);
    assert_eq!(run.finished_at, 220);

    // About one call in twenty still tries p, hedged as usual; once p answers in time, the streak
    // is over and calls go to p first again.
    sim.scripts.insert("p".into(), vec![shows_at(100)]);
    let mut passed_over = 0;
    let probe = (0..200)
        .find(|seed| {
            sim.seed = *seed;
            let run = sim.run("chat", stream());
            passed_over += usize::from(run.sent_targets() == ["b"]);
            run.sent_targets() == ["p"]
        })
        .expect("a call in 200 probes p");
    assert!(probe >= 5 && passed_over == probe as usize, "probe at seed {probe}, {passed_over} passed over");
    sim.seed = 1;
    assert_eq!(sim.run("chat", stream()).sent_targets(), vec!["p"]);
}

#[test]
fn a_member_that_turned_slow_is_passed_over_although_its_learned_threshold_rose_with_it() {
    let route = r#"{"fallback": ["p", "b"], "hedge": {"afterPercentile": 90, "afterMs": 5000, "minSamples": 10}}"#;
    let mut sim = Sim::new(&config(route, "")).script("p", vec![shows_at(100)]).script("b", vec![shows_at(200)]);
    for _ in 0..10 {
        sim.run("chat", stream());
    }
    // p turns slow: each call is hedged at its 90th percentile, and each lost leg's time (that
    // threshold plus b's 200 ms) pushes the percentile up: 100, 100, then 300 ms. The 90th
    // percentile of all 13 times is now 300 ms, which the last three (300, 300, 500) do not pass.
    sim.scripts.insert("p".into(), vec![shows_at(3000)]);
    for after_ms in [100, 100, 300] {
        assert_eq!(hedges(&sim.run("chat", stream())), vec![("p".into(), "b".into(), 2, after_ms, true)]);
    }
    // The times before them give 100 ms, which they all passed: p is passed over.
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["b"]);
    assert!(skips(&run)[0].1.starts_with("slow: its last 3 times to first token passed 100 ms,"), "{:?}", skips(&run));
}

#[test]
fn a_member_known_slow_is_tried_after_all_when_every_other_is_skipped() {
    let route = r#"{"fallback": ["p", "b"], "hedge": {"afterMs": 500}}"#;
    let health = r#", "health": {"failures": 1}"#;
    let mut sim = Sim::new(&config(route, health)).script("p", vec![shows_at(3000)]).script("b", vec![shows_at(200)]);
    for _ in 0..3 {
        sim.run("chat", stream());
    }
    // b's breaker opens; p, slow but the only one left, serves the call.
    sim.scripts.insert("b".into(), vec![status(1, 503)]);
    sim.run("b", stream());
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["p"]);
    assert_eq!(run.served_by(sim.config()), "p");
    // p passed over as slow, b as open, and b again by p's hedge at 500 ms.
    let skipped: Vec<&str> = skips(&run).iter().map(|s| s.0).collect();
    assert_eq!(skipped, vec!["p", "b", "b"]);
}

#[test]
fn fastest_tries_the_member_with_the_lowest_recent_time_to_first_token_first() {
    let route = r#"{"fastest": ["p", "b", "c"]}"#;
    let mut sim = Sim::new(&config(route, ""))
        .script("p", vec![shows_at(900)])
        .script("b", vec![shows_at(200)])
        .script("c", vec![shows_at(500)]);
    // Unknown members go first, in config order, so each is learned.
    let first: Vec<String> = (0..3).map(|_| sim.run("chat", stream()).sent_targets().join(",")).collect();
    assert_eq!(first, vec!["p", "b", "c"]);
    let mut firsts = std::collections::BTreeMap::<String, u32>::new();
    for seed in 0..400 {
        sim.seed = seed;
        let run = sim.run("chat", stream());
        *firsts.entry(run.sends[0].1.clone()).or_default() += 1;
    }
    // Most go to b; a small share explores p and c.
    assert!(firsts["b"] >= 360, "{firsts:?}");
    assert!(firsts["p"] >= 2 && firsts["c"] >= 2, "{firsts:?}");
}

#[test]
fn fastest_fails_over_in_its_ranking() {
    let route = r#"{"fastest": ["p", "b", "c"]}"#;
    let mut sim = Sim::new(&config(route, ""))
        .script("p", vec![shows_at(900)])
        .script("b", vec![shows_at(200)])
        .script("c", vec![shows_at(500)]);
    for _ in 0..3 {
        sim.run("chat", stream());
    }
    sim.scripts.insert("b".into(), vec![status(1, 503)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.sent_targets(), vec!["b", "c"], "b, then the next fastest");
    assert_eq!(run.served_by(sim.config()), "c");
}
