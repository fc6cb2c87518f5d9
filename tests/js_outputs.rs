//! The exact text of what the JS API hands out (events with their legs and causes, deltas, health
//! views and snapshots), recorded from the serde derives these shapes had before they were
//! written by hand (llm_baton_wire::write): JS reads the values, but keeps their key order, which
//! a caller sees (`JSON.stringify`, logs, snapshots in its own tests).
//! `BLESS=1 cargo test --test js_outputs` rewrites the file.

use std::fs;

use llm_baton::chat::{Delta, FinishReason, ReasoningKind, Usage};
use llm_baton::health::{BreakerState, BudgetView, HealthSnapshot, HealthView, TargetHealth, TargetView, WindowCounts};
use llm_baton::outcome::{Failure, FailureClass, FailureInfo, Limit};
use llm_baton::policy::ResumeMode;
use llm_baton::record::{Event, Leg, ResumedFrom};
use llm_baton_wire::write::ToJson;

fn failures() -> Vec<Failure> {
    vec![
        Failure::Transport { message: "connection reset \"by peer\"\n".into() },
        Failure::Http {
            status: 429,
            message: "slow down".into(),
            code: Some("rate_limit_exceeded".into()),
            class: Some(FailureClass::RateLimit),
            retry_after_ms: Some(1500),
            should_retry: Some(true),
            in_stream: false,
            content_filter: None,
        },
        Failure::Http {
            status: 400,
            message: "too long".into(),
            code: None,
            class: Some(FailureClass::ContextLength),
            retry_after_ms: None,
            should_retry: None,
            in_stream: true,
            content_filter: None,
        },
        Failure::Timeout { limit: Limit::FirstToken, limit_ms: 8000 },
        Failure::Cancelled,
        Failure::Protocol { message: "not JSON: \u{1}".into() },
    ]
}

fn legs() -> Vec<Leg> {
    let bare = Leg {
        target: "primary".into(),
        attempt: 1,
        start_ms: 0,
        end_ms: 12,
        outcome: "ok",
        status: None,
        timeout: None,
        retry_after_ms: None,
        class: None,
        ttft_ms: None,
        skipped_frames: 0,
        usage: None,
        resumed_from: None,
    };
    let full = Leg {
        target: "backup é".into(),
        attempt: 3,
        start_ms: 100,
        end_ms: u64::from(u32::MAX) + 7,
        outcome: "timeout",
        status: Some(503),
        timeout: Some(Limit::Idle),
        retry_after_ms: Some(2000),
        class: Some(FailureClass::Overloaded),
        ttft_ms: Some(40),
        skipped_frames: 2,
        usage: Some(Usage { input_tokens: Some(10), output_tokens: None }),
        resumed_from: Some(ResumedFrom { attempt: 2, mode: ResumeMode::Continue, kept_chars: 17 }),
    };
    vec![bare, full]
}

fn lines() -> Vec<String> {
    let mut out = Vec::new();
    let f = failures();
    for failure in &f {
        out.push(FailureInfo(failure.clone()).to_json());
    }
    let cause = |i: usize| FailureInfo(f[i].clone());
    for leg in legs() {
        out.push(leg.to_json());
        out.push(Event::Leg { leg: leg.clone(), cause: None }.to_json());
        out.push(Event::Leg { leg, cause: Some(cause(1)) }.to_json());
    }
    let events = [
        Event::Attempt { target: "p".into(), attempt: 1 },
        Event::Skip { target: "p".into(), reason: "circuit open".into(), reopens_in_ms: Some(900), cause: None },
        Event::Skip {
            target: "p".into(),
            reason: "circuit open".into(),
            reopens_in_ms: Some(0),
            cause: Some(cause(0)),
        },
        Event::Skip { target: "p".into(), reason: "it is slow".into(), reopens_in_ms: None, cause: None },
        Event::Retry { target: "p".into(), attempt: 1, of: 4, delay_ms: 500, cause: cause(1) },
        Event::Failover { from: "p".into(), to: "b".into(), cause: cause(3) },
        Event::Resume {
            mode: ResumeMode::Restart,
            from: "p".into(),
            to: "b".into(),
            attempt: 2,
            cause: cause(2),
            kept_chars: 0,
        },
        Event::Warning { target: "p".into(), attempt: 1, message: "skipped a frame\t<x>".into() },
    ];
    out.extend(events.iter().map(ToJson::to_json));
    let deltas = vec![
        Delta::Text { text: "Hi \"there\"\n".into() },
        Delta::Reasoning { text: "hmm".into(), kind: ReasoningKind::Summary },
        Delta::Reasoning { text: "first, the units".into(), kind: ReasoningKind::Raw },
        Delta::ToolCall { index: 0, id: Some("call_1".into()), name: Some("f".into()), arguments: "{\"a\":".into() },
        Delta::ToolCall { index: 1, id: None, name: None, arguments: String::new() },
        Delta::Done {
            finish_reason: FinishReason::ToolCalls,
            usage: Usage { input_tokens: Some(3), output_tokens: Some(4) },
            model: Some("m-1".into()),
        },
        Delta::Done { finish_reason: FinishReason::Other("MAX_TOKENS?".into()), usage: Usage::default(), model: None },
        Delta::Skipped { reason: "bad frame".into() },
        Delta::Usage { usage: Usage { input_tokens: None, output_tokens: Some(9) } },
    ];
    out.push(deltas.to_json());
    for reason in [FinishReason::Stop, FinishReason::Length, FinishReason::ContentFilter] {
        out.push(Delta::Done { finish_reason: reason, usage: Usage::default(), model: None }.to_json());
    }
    let view = HealthView {
        targets: vec![
            TargetView {
                target: "p".into(),
                state: BreakerState::Open,
                probe: false,
                reopens_in_ms: Some(594),
                last_failure: Some(cause(1)),
                latency_ms: vec![],
            },
            TargetView {
                target: "b".into(),
                state: BreakerState::HalfOpen,
                probe: true,
                reopens_in_ms: None,
                last_failure: None,
                latency_ms: vec![],
            },
            TargetView {
                target: "c".into(),
                state: BreakerState::Closed,
                probe: false,
                reopens_in_ms: None,
                last_failure: None,
                latency_ms: vec![],
            },
        ],
        retry_budget: Some(5.0),
    };
    out.push(view.to_json());
    out.push(HealthView { targets: vec![], retry_budget: Some(0.1 + 0.2) }.to_json());
    out.push(HealthView { targets: vec![], retry_budget: None }.to_json());
    let snapshot = |retry_budget| HealthSnapshot {
        enabled: true,
        targets: vec![
            TargetHealth {
                target: "p".into(),
                state: BreakerState::Open,
                reopens_in_ms: Some(30_000),
                consecutive_failures: 5,
                window: WindowCounts { outcomes: 20, failures: 11 },
                last_failure: Some(cause(3)),
            },
            TargetHealth {
                target: "b".into(),
                state: BreakerState::Closed,
                reopens_in_ms: None,
                consecutive_failures: 0,
                window: WindowCounts { outcomes: 0, failures: 0 },
                last_failure: None,
            },
        ],
        retry_budget,
    };
    out.push(snapshot(Some(BudgetView { balance: 7.25, spent: 3 })).to_json());
    out.push(snapshot(None).to_json());
    // Hedging's shapes, after the ones recorded from the serde derives.
    let hedge = Event::Hedge { from: "p".into(), to: "b".into(), attempt: 2, after_ms: 800, learned: true };
    out.push(hedge.to_json());
    out.push(Event::Hedge { from: "p".into(), to: "b".into(), attempt: 2, after_ms: 2000, learned: false }.to_json());
    let lost = Leg { end_ms: 950, outcome: "lost", ..legs()[0].clone() };
    out.push(Event::Leg { leg: lost, cause: None }.to_json());
    let target = TargetView {
        target: "p".into(),
        state: BreakerState::Closed,
        probe: false,
        reopens_in_ms: None,
        last_failure: None,
        latency_ms: vec![310, 290, 3100],
    };
    out.push(HealthView { targets: vec![target], retry_budget: None }.to_json());
    out
}

#[test]
fn js_outputs_are_byte_for_byte_as_recorded() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/js_outputs.txt");
    let actual = lines().join("\n") + "\n";
    if std::env::var_os("BLESS").is_some() {
        fs::write(path, &actual).expect("written");
        return;
    }
    let expected = fs::read_to_string(path).expect("recorded (run with BLESS=1)");
    for (line, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
        assert_eq!(a, e, "{path}:{}", line + 1);
    }
    assert_eq!(actual.lines().count(), expected.lines().count(), "{path}");
}
