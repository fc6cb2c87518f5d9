//! The engine owns the stream: what a reader sees of a hostile or broken provider stream, checked
//! natively on a fake clock (no driver, no JS).

use llm_baton::backoff::SplitMix64;
use llm_baton::chat::{Delta, FinishReason, Usage};
use llm_baton::config::Config;
use llm_baton::delivery::MAX_TOOL_CALLS;
use llm_baton::engine::{Action, AttemptId, Baton, Call, CallOptions};
use llm_baton::outcome::{Failure, Limit};

fn call(config: &str, route: &str, deadline_ms: Option<u64>) -> (Call, AttemptId) {
    let mut baton = Baton::new(Config::from_json(config).unwrap());
    let options = CallOptions { deadline_ms, stream: true, ..CallOptions::default() };
    let mut call = baton.start(route, options, 0, Box::new(SplitMix64(3))).unwrap();
    let attempt = sent(&mut call).expect("the first attempt is sent");
    (call, attempt)
}

const ONE: &str = r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m",
    "timeouts": {"idleMs": 500}}}}"#;

fn drain(call: &mut Call) -> Vec<Action> {
    std::iter::from_fn(|| call.poll()).collect()
}

fn sent(call: &mut Call) -> Option<AttemptId> {
    drain(call).into_iter().find_map(|a| match a {
        Action::Send { attempt, .. } => Some(attempt),
        _ => None,
    })
}

fn tool(index: u32, name: Option<&str>, arguments: &str) -> Delta {
    Delta::ToolCall {
        index,
        id: name.map(|n| format!("call_{n}")),
        name: name.map(str::to_string),
        arguments: arguments.into(),
    }
}

fn text(t: &str) -> Delta {
    Delta::Text { text: t.into() }
}

fn done() -> Delta {
    Delta::Done { finish_reason: FinishReason::ToolCalls, usage: Usage::default(), model: None }
}

#[test]
fn commit_comes_once_before_the_first_delivery_and_the_answer_is_what_was_delivered() {
    let (mut call, a) = call(ONE, "p", None);
    call.on_headers(a, 10);
    call.on_deltas(a, 20, [tool(4_294_967_295, Some("lookup"), "")]);
    assert!(drain(&mut call).is_empty(), "a tool call's opening alone is held, not shown");
    call.on_deltas(a, 30, [tool(4_294_967_295, None, "{\"q\":"), text("")]);
    let first = drain(&mut call);
    assert!(matches!(first[0], Action::Commit { attempt, target: 0, .. } if attempt == a));
    let Action::Deliver(shown) = &first[1] else { panic!("deliver follows the commit: {first:?}") };
    assert_eq!(shown, &[tool(0, Some("lookup"), ""), tool(0, None, "{\"q\":")]);
    call.on_deltas(a, 40, [tool(10_000_000, Some("second"), "{}"), tool(4_294_967_295, None, "1}"), done()]);
    let last = drain(&mut call);
    assert!(!last.iter().any(|a| matches!(a, Action::Commit { .. })), "one commit per call");
    let Action::Deliver(shown) = &last[0] else { panic!("{last:?}") };
    assert_eq!(shown, &[tool(1, Some("second"), "{}"), tool(0, None, "1}")]);
    let Some(Action::Finish(Ok(served))) = last.last() else { panic!("{last:?}") };
    let calls: Vec<(&str, &str)> =
        served.answer.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
    assert_eq!(calls, [("lookup", "{\"q\":1}"), ("second", "{}")]);
}

#[test]
fn one_read_reaches_the_reader_as_one_text_even_with_usage_reports_between() {
    // Gemini (and vLLM with continuous usage) report counts with every frame: the usage is not
    // shown, and the texts around it still go out as one.
    let (mut call, a) = call(ONE, "p", None);
    let usage = |n| Delta::Usage { usage: Usage { input_tokens: Some(3), output_tokens: Some(n) } };
    call.on_deltas(a, 10, [text("Hel"), usage(1), text("lo"), usage(2), text("!")]);
    let actions = drain(&mut call);
    let shown: Vec<&Vec<Delta>> =
        actions.iter().filter_map(|a| if let Action::Deliver(d) = a { Some(d) } else { None }).collect();
    assert_eq!(shown, [&vec![text("Hello!")]], "{actions:?}");
}

#[test]
fn deltas_after_the_idle_limit_are_never_shown() {
    let (mut call, a) = call(ONE, "p", None);
    call.on_deltas(a, 10, [text("This answer was")]);
    drain(&mut call);
    // The driver's timer was late: the next read arrives after the idle limit expired.
    call.on_deltas(a, 900, [text(" late"), done()]);
    let actions = drain(&mut call);
    assert!(!actions.iter().any(|a| matches!(a, Action::Deliver(_))), "{actions:?}");
    let Some(Action::Finish(Err(e))) = actions.last() else { panic!("{actions:?}") };
    assert_eq!(e.failure, Failure::Timeout { limit: Limit::Idle, limit_ms: 500 });
}

#[test]
fn too_many_tool_calls_fail_the_attempt_after_delivering_what_came_first() {
    let (mut call, a) = call(ONE, "p", Some(10_000));
    let many: Vec<Delta> = (0..=MAX_TOOL_CALLS as u32).map(|i| tool(i * 7, Some("f"), "{}")).collect();
    call.on_deltas(a, 10, many);
    let actions = drain(&mut call);
    let Action::Deliver(shown) = &actions[1] else { panic!("{actions:?}") };
    assert_eq!(shown.len(), MAX_TOOL_CALLS);
    let Some(Action::Finish(Err(e))) = actions.last() else { panic!("{actions:?}") };
    assert_eq!(e.failure, Failure::Protocol { message: "the answer opened more than 256 tool calls".into() });
}

#[test]
fn held_deltas_of_a_failed_attempt_never_reach_the_retry() {
    let config = r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m"}},
        "routes": {"r": {"retry": "p", "attempts": 2, "backoff": {"initialMs": 10, "jitter": "none"}}}}"#;
    let (mut call, a) = call(config, "r", None);
    call.on_deltas(a, 5, [tool(0, Some("stale"), "")]);
    call.on_failure(a, 6, Failure::Transport { message: "reset".into() });
    drain(&mut call);
    call.handle_timeout(16);
    let b = sent(&mut call).expect("retried");
    call.on_deltas(b, 20, [tool(0, None, "{}"), done()]);
    let actions = drain(&mut call);
    let Some(Action::Finish(Ok(served))) = actions.last() else { panic!("{actions:?}") };
    assert_eq!(served.answer.tool_calls[0].name, "", "the first attempt's held name is gone");
}

#[test]
fn a_tool_call_with_no_arguments_is_delivered_at_the_end() {
    let (mut call, a) = call(ONE, "p", None);
    call.on_deltas(a, 10, [tool(0, Some("now"), ""), done()]);
    let actions = drain(&mut call);
    assert!(matches!(actions[0], Action::Commit { .. }), "{actions:?}");
    let Action::Deliver(shown) = &actions[1] else { panic!("{actions:?}") };
    assert_eq!(shown, &[tool(0, Some("now"), "")]);
    let Some(Action::Finish(Ok(served))) = actions.last() else { panic!("{actions:?}") };
    assert_eq!(served.answer.tool_calls[0].name, "now");
}

#[test]
fn an_attempt_failed_by_its_own_deltas_is_aborted_first() {
    let (mut call, a) = call(ONE, "p", None);
    let many: Vec<Delta> = (0..=MAX_TOOL_CALLS as u32).map(|i| tool(i, Some("f"), "{}")).collect();
    call.on_deltas(a, 10, many);
    let actions = drain(&mut call);
    let abort = actions.iter().position(|x| matches!(x, Action::Abort { attempt, .. } if *attempt == a));
    let finish = actions.iter().position(|x| matches!(x, Action::Finish(_)));
    assert!(abort.is_some() && abort < finish, "{actions:?}");
}
