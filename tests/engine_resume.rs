//! Resuming a stream that broke after its start (`afterStart`), on the fake clock: which member
//! takes over and how, what the reader ends up with, and which failure a failed resume reports.

mod support;

use llm_baton::chat::{Delta, FinishReason, ReasoningKind, ToolCall, Usage};
use llm_baton::outcome::{Failure, Limit};
use llm_baton::policy::ResumeMode;
use llm_baton::record::{Event, ResumedFrom};
use support::{stream, with_deadline, Behavior, Run, Shown, Sim, Step};

fn config(after_start: &str, backup_prefill: bool, extra_targets: &str) -> String {
    format!(
        r#"{{"targets": {{
            "p": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m1", "timeouts": {{"idleMs": 200, "firstTokenMs": 500}}}},
            "b": {{"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:1", "model": "m2", "prefill": {backup_prefill}, "timeouts": {{"firstTokenMs": 500}}}}
            {extra_targets}
        }},
        "routes": {{"chat": {{"fallback": ["p", "b"] {after_start}}}}}}}"#
    )
}

const CONTINUE: &str = r#", "afterStart": {"mode": "continue"}"#;
const RESTART: &str = r#", "afterStart": {"mode": "restart"}"#;

fn text(t: &str) -> Delta {
    Delta::Text { text: t.into() }
}

fn usage(input: u64, output: u64) -> Delta {
    Delta::Usage { usage: Usage { input_tokens: Some(input), output_tokens: Some(output) } }
}

fn done(input: u64, output: u64) -> Delta {
    Delta::Done {
        finish_reason: FinishReason::Stop,
        usage: Usage { input_tokens: Some(input), output_tokens: Some(output) },
        model: None,
    }
}

fn cut() -> Failure {
    Failure::Transport { message: "connection reset".into() }
}

/// The primary shows "The answer was " in three pieces (reporting usage as it goes), then `end`.
fn broken_primary(end: Step) -> Behavior {
    Behavior::Steps(vec![
        (10, Step::Headers),
        (20, Step::Deltas(vec![text("The"), usage(12, 1)])),
        (30, Step::Deltas(vec![text(" answer"), usage(12, 2)])),
        (40, Step::Deltas(vec![text(" was "), usage(12, 3)])),
        (50, end),
    ])
}

/// A member that answers `pieces` then ends.
fn answers(pieces: &[&str], input: u64, output: u64) -> Behavior {
    let mut steps = vec![(10, Step::Headers)];
    for (i, p) in pieces.iter().enumerate() {
        steps.push((20 + 10 * i as u64, Step::Deltas(vec![text(p)])));
    }
    steps.push((20 + 10 * pieces.len() as u64, Step::Deltas(vec![done(input, output)])));
    Behavior::Steps(steps)
}

fn refused(at: u64) -> Behavior {
    Behavior::Status { at, status: 400, retry_after_ms: None }
}

fn resumes(run: &Run) -> Vec<(ResumeMode, String, String, usize)> {
    run.events
        .iter()
        .filter_map(|e| match e {
            Event::Resume { mode, from, to, kept_chars, .. } => Some((*mode, from.clone(), to.clone(), *kept_chars)),
            _ => None,
        })
        .collect()
}

fn names(sim: &Sim, targets: &[usize]) -> Vec<String> {
    targets.iter().map(|t| sim.config().targets[*t].name.clone()).collect()
}

fn library() -> llm_baton::engine::CallOptions {
    llm_baton::engine::CallOptions { resettable: true, ..stream() }
}

#[test]
fn a_cut_stream_continues_on_the_backup_and_the_reader_sees_the_text_once() {
    let mut sim = Sim::new(&config(CONTINUE, true, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&[" cut", " short."], 20, 2)]);
    for options in [stream(), library()] {
        let run = sim.run("chat", options);
        assert_eq!(run.prefills, [None, Some("The answer was".to_string())]);
        assert_eq!(run.reader_text(), "The answer was cut short.");
        let served = run.result.as_ref().expect("served");
        assert_eq!(served.answer.text, "The answer was cut short.");
        assert_eq!(sim.config().targets[served.target].name, "b");
        assert_eq!(names(&sim, &served.contributors), ["p", "b"]);
        assert_eq!(resumes(&run), [(ResumeMode::Continue, "p".into(), "b".into(), 15)]);
        assert_eq!(
            served.legs[1].resumed_from,
            Some(ResumedFrom { attempt: 1, mode: ResumeMode::Continue, kept_chars: 15 })
        );
        // Usage: the cut leg keeps what it reported; the answer is 12 in, 3 + 2 out; billed adds both requests.
        assert_eq!(served.legs[0].usage, Some(Usage { input_tokens: Some(12), output_tokens: Some(3) }));
        assert_eq!(served.answer.usage, Usage { input_tokens: Some(12), output_tokens: Some(5) });
        assert_eq!(served.billed_usage, Usage { input_tokens: Some(32), output_tokens: Some(5) });
        let splices: Vec<_> = run.shown.iter().filter(|s| matches!(s, Shown::Splice(_))).collect();
        assert_eq!(splices.len(), 1, "one seam, before the continuation");
    }
}

#[test]
fn a_stall_past_the_idle_limit_continues() {
    let mut sim = Sim::new(&config(CONTINUE, true, ""))
        .script("p", vec![broken_primary(Step::Headers)])
        .script("b", vec![answers(&[" fine."], 5, 1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.legs()[0].timeout, Some(Limit::Idle));
    assert_eq!(run.reader_text(), "The answer was fine.");
    assert_eq!(
        run.sends.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
        [0, 240],
        "the stall ends 200 ms after the last text"
    );
}

#[test]
fn without_after_start_a_break_ends_the_call_as_before() {
    let mut sim = Sim::new(&config("", true, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&["never"], 1, 1)]);
    let run = sim.run("chat", library());
    assert_eq!(run.failure(), &cut());
    assert_eq!(run.sent_targets(), ["p"]);
    assert_eq!(run.reader_text(), "The answer was ");
}

#[test]
fn a_refused_prefill_restarts_in_the_library_and_reports_the_break_at_the_gateway() {
    let script = |sim: Sim| {
        sim.script("p", vec![broken_primary(Step::Fail(cut()))])
            .script("b", vec![refused(15), answers(&["A fresh", " answer."], 9, 3)])
    };
    // The library: the 400 is a leg, then the same member answers afresh, and the reader starts over.
    let mut sim = script(Sim::new(&config(CONTINUE, true, "")));
    let run = sim.run("chat", library());
    assert_eq!(run.sent_targets(), ["p", "b", "b"]);
    assert_eq!(run.prefills[2], None);
    assert_eq!(run.reader_text(), "A fresh answer.");
    let served = run.result.as_ref().expect("served");
    assert_eq!(names(&sim, &served.contributors), ["b"]);
    assert_eq!(served.answer.usage, Usage { input_tokens: Some(9), output_tokens: Some(3) });
    assert_eq!(served.legs[2].resumed_from.map(|r| r.mode), Some(ResumeMode::Restart));
    let Some(Shown::Splice(splice)) = run.shown.iter().find(|s| matches!(s, Shown::Splice(_))) else {
        panic!("a seam")
    };
    assert_eq!((splice.mode, splice.discarded_chars, &splice.cause), (ResumeMode::Restart, 15, &cut()));
    // The gateway cannot take back what it sent: the caller gets the original break, never the 400.
    let mut sim = script(Sim::new(&config(CONTINUE, true, "")));
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &cut());
    assert_eq!(run.result.as_ref().unwrap_err().target.as_deref(), Some("p"), "the target that broke");
    assert_eq!(run.legs().iter().map(|l| l.status).collect::<Vec<_>>(), [None, Some(400)]);
    assert_eq!(run.reader_text(), "The answer was ");
}

#[test]
fn a_cut_inside_a_tool_call_is_never_continued() {
    let call = |args: &str| Delta::ToolCall {
        index: 0,
        id: Some("c1".into()),
        name: Some("f".into()),
        arguments: args.into(),
    };
    let tool_primary =
        Behavior::Steps(vec![(10, Step::Headers), (20, Step::Deltas(vec![call("{\"ci")])), (30, Step::Fail(cut()))]);
    let backup = Behavior::Steps(vec![
        (10, Step::Headers),
        (20, Step::Deltas(vec![call("{\"city\":\"Paris\"}")])),
        (30, Step::Deltas(vec![done(4, 4)])),
    ]);
    let mut sim = Sim::new(&config(CONTINUE, true, "")).script("p", vec![tool_primary]).script("b", vec![backup]);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &cut(), "the gateway ends as before");
    assert_eq!(run.sent_targets(), ["p"]);
    let run = sim.run("chat", library());
    assert_eq!(run.prefills, [None, None], "a restart, never a prefill");
    let served = run.result.as_ref().expect("restarted");
    assert_eq!(
        served.answer.tool_calls,
        [ToolCall { id: "c1".into(), name: "f".into(), arguments: "{\"city\":\"Paris\"}".into(), state: None }]
    );
}

#[test]
fn a_cut_inside_reasoning_is_not_continued() {
    let thinking = Behavior::Steps(vec![
        (10, Step::Headers),
        (20, Step::Deltas(vec![Delta::Reasoning { text: "Let me think".into(), kind: ReasoningKind::Raw }])),
        (30, Step::Fail(cut())),
    ]);
    let mut sim =
        Sim::new(&config(CONTINUE, true, "")).script("p", vec![thinking]).script("b", vec![answers(&["x"], 1, 1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &cut());
    assert_eq!(run.sent_targets(), ["p"]);
}

#[test]
fn a_resume_that_cannot_finish_before_the_deadline_is_not_started() {
    let mut sim = Sim::new(&config(CONTINUE, true, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&[" late"], 1, 1)]);
    // The break comes at 50 ms of a 1000 ms budget: 950 ms left, under the 1000 ms default.
    let run = sim.run("chat", with_deadline(stream(), 1000));
    assert_eq!(run.failure(), &cut());
    assert_eq!(run.sent_targets(), ["p"]);
    let warning = run.events.iter().find_map(|e| match e {
        Event::Warning { message, .. } => Some(message.clone()),
        _ => None,
    });
    assert_eq!(
        warning.as_deref(),
        Some("the stream that broke was not resumed: 950 ms of the deadline were left, and a continue needs about 1000 ms (afterStart.minRemainingMs is 1000, the broken attempt took 20 ms to its first content)")
    );
    // With a smaller floor it fits, and the backup gets what is left, not a fresh budget.
    let mut sim = Sim::new(&config(r#", "afterStart": {"mode": "continue", "minRemainingMs": 100}"#, true, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![Behavior::Stall]);
    let run = sim.run("chat", with_deadline(stream(), 1000));
    assert_eq!(run.sent_targets(), ["p", "b"]);
    assert_eq!(run.failure(), &cut(), "the backup's first-token limit (500 ms) ended it; the break is reported");
    assert_eq!(run.legs()[1].timeout, Some(Limit::FirstToken));
    let run = sim.run("chat", with_deadline(stream(), 300));
    assert_eq!(run.finished_at, 300, "the resume leg ends at the call's deadline");
    assert_eq!(run.failure(), &cut());
}

#[test]
fn a_restart_that_shows_nothing_leaves_the_reader_its_text() {
    let mut sim = Sim::new(&config(RESTART, false, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![Behavior::Status { at: 10, status: 503, retry_after_ms: None }]);
    let run = sim.run("chat", library());
    assert_eq!(run.failure(), &cut());
    assert!(run.shown.iter().all(|s| !matches!(s, Shown::Splice(_))), "no reset without new content");
    assert_eq!(run.reader_text(), "The answer was ");
    assert_eq!(resumes(&run), [(ResumeMode::Restart, "p".into(), "b".into(), 0)]);
}

#[test]
fn continue_passes_over_members_without_prefill() {
    let third =
        r#", "c": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m3", "prefill": true}"#;
    let cfg = config(CONTINUE, false, third).replace(r#"["p", "b"]"#, r#"["p", "b", "c"]"#);
    let mut sim = Sim::new(&cfg)
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&["never"], 1, 1)])
        .script("c", vec![answers(&[" right."], 1, 1)]);
    let run = sim.run("chat", library());
    assert_eq!(run.sent_targets(), ["p", "c"]);
    assert_eq!(run.reader_text(), "The answer was right.");
    // Without any prefill member, "continue" restarts on the next member where it may.
    let mut sim = Sim::new(&config(CONTINUE, false, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&["Again."], 1, 1)]);
    assert_eq!(sim.run("chat", library()).reader_text(), "Again.");
    assert_eq!(sim.run("chat", stream()).failure(), &cut());
}

#[test]
fn attempts_bound_the_breaks_resumed() {
    let third =
        r#", "c": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m3", "prefill": true}"#;
    let broken_backup =
        Behavior::Steps(vec![(10, Step::Headers), (20, Step::Deltas(vec![text(" still")])), (30, Step::Fail(cut()))]);
    for (attempts, expect) in [(1, Err(())), (2, Ok("The answer was still going."))] {
        let after = format!(r#", "afterStart": {{"mode": "continue", "attempts": {attempts}}}"#);
        let cfg = config(&after, true, third).replace(r#"["p", "b"]"#, r#"["p", "b", "c"]"#);
        let mut sim = Sim::new(&cfg)
            .script("p", vec![broken_primary(Step::Fail(cut()))])
            .script("b", vec![broken_backup.clone()])
            .script("c", vec![answers(&[" going."], 1, 1)]);
        let run = sim.run("chat", stream());
        match expect {
            Ok(text) => {
                assert_eq!(run.reader_text(), text);
                assert_eq!(run.prefills[2].as_deref(), Some("The answer was still"));
            }
            Err(()) => assert_eq!(run.sent_targets(), ["p", "b"]),
        }
    }
}

#[test]
fn fallback_on_decides_which_breaks_resume_and_cancel_never_does() {
    let narrow = r#", "fallbackOn": ["5xx"], "afterStart": {"mode": "continue"}"#;
    let mut sim = Sim::new(&config(narrow, true, ""))
        .script("p", vec![broken_primary(Step::Fail(cut()))])
        .script("b", vec![answers(&[" x"], 1, 1)]);
    assert_eq!(sim.run("chat", stream()).sent_targets(), ["p"], "a transport break is not a 5xx");
    let mut sim = Sim::new(&config(CONTINUE, true, ""))
        .script("p", vec![broken_primary(Step::Headers)])
        .script("b", vec![answers(&[" x"], 1, 1)]);
    sim.cancel_at = Some(45);
    let run = sim.run("chat", stream());
    assert_eq!(run.failure(), &Failure::Cancelled);
    assert_eq!(run.sent_targets(), ["p"]);
}

#[test]
fn the_continuation_echo_is_dropped_once_even_split_across_deltas() {
    // Shown "Hi,\n\n" -> prefill "Hi,"; the continuation repeats "\n\n" in two pieces, then goes on.
    let primary =
        Behavior::Steps(vec![(10, Step::Headers), (20, Step::Deltas(vec![text("Hi,\n\n")])), (30, Step::Fail(cut()))]);
    let mut sim = Sim::new(&config(CONTINUE, true, ""))
        .script("p", vec![primary])
        .script("b", vec![answers(&["\n", "\nThere", " \n you go."], 1, 1)]);
    let run = sim.run("chat", stream());
    assert_eq!(run.prefills[1].as_deref(), Some("Hi,"));
    assert_eq!(run.reader_text(), "Hi,\n\nThere \n you go.");
}
