//! Properties over random schedules: whatever the providers do, the engine never passes the
//! deadline, never tries again after the commit point, and never exceeds its attempts.

mod support;

use llm_baton::engine::CallOptions;
use llm_baton::outcome::{Failure, Limit};
use proptest::prelude::*;
use support::*;

fn behavior() -> impl Strategy<Value = Behavior> {
    prop_oneof![
        Just(Behavior::Stall),
        (0u64..3000).prop_map(transport),
        (0u64..3000, prop::sample::select(vec![400u16, 408, 429, 500, 503, 529]), prop::option::of(0u64..4000))
            .prop_map(|(at, status, retry_after_ms)| Behavior::Status { at, status, retry_after_ms }),
        (0u64..2000, prop::collection::vec(0u64..4000, 0..5), prop::option::of(0u64..5000)).prop_map(
            |(h, mut content, done)| {
                content.iter_mut().for_each(|c| *c += h);
                content.sort_unstable();
                let last = content.last().copied().unwrap_or(h);
                Behavior::Answer { headers_at: h, content, done_at: done.map(|d| d + last) }
            }
        ),
    ]
}

fn limit() -> impl Strategy<Value = String> {
    prop::option::of(1u64..3000).prop_map(|v| v.map(|v| v.to_string()).unwrap_or_else(|| "null".into()))
}

#[derive(Debug, Clone)]
struct Case {
    a: Vec<Behavior>,
    b: Vec<Behavior>,
    a_limits: [String; 4],
    attempts_a: u32,
    attempts_b: u32,
    deadline: u64,
    stream: bool,
    seed: u64,
    cancel_at: Option<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(behavior(), 1..5),
        prop::collection::vec(behavior(), 1..5),
        [limit(), limit(), limit(), limit()],
        1u32..5,
        1u32..4,
        1u64..20_000,
        any::<bool>(),
        any::<u64>(),
        prop::option::of(0u64..20_000),
    )
        .prop_map(|(a, b, a_limits, attempts_a, attempts_b, deadline, stream, seed, cancel_at)| Case {
            a,
            b,
            a_limits,
            attempts_a,
            attempts_b,
            deadline,
            stream,
            seed,
            cancel_at,
        })
}

fn run_case(c: &Case) -> (Run, u64) {
    let [t, h, f, i] = &c.a_limits;
    let cfg = format!(
        r#"{{"targets": {{
            "a": {{"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m",
                   "timeouts": {{"totalMs": {t}, "headersMs": {h}, "firstTokenMs": {f}, "idleMs": {i}}}}},
            "b": {{"format": "gemini", "baseUrl": "http://127.0.0.1:2/v1", "model": "m"}}}},
          "routes": {{"chat": {{"fallback": [{{"retry": "a", "attempts": {}}}, {{"retry": "b", "attempts": {}}}]}}}}}}"#,
        c.attempts_a, c.attempts_b
    );
    let mut sim = Sim::new(&cfg).script("a", c.a.clone()).script("b", c.b.clone());
    sim.seed = c.seed;
    sim.cancel_at = c.cancel_at;
    let options = CallOptions { deadline_ms: Some(c.deadline), stream: c.stream, ..CallOptions::default() };
    (sim.run("chat", options), c.deadline)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn no_schedule_passes_the_deadline(c in case()) {
        let (run, deadline) = run_case(&c);
        prop_assert!(run.finished_at <= deadline, "finished at {} past {}", run.finished_at, deadline);
        for (t, _) in &run.sends {
            prop_assert!(*t < deadline, "a leg started at {} with nothing left of {}", t, deadline);
        }
        for leg in run.legs() {
            prop_assert!(leg.end_ms <= deadline);
        }
        if run.result.is_ok() {
            prop_assert!(run.finished_at < deadline, "a success at the deadline is late");
        }
    }

    #[test]
    fn nothing_is_sent_after_the_commit_point(c in case()) {
        let (run, _) = run_case(&c);
        if c.stream {
            if let Some(first) = run.delivered.first() {
                prop_assert!(run.sends.iter().all(|(t, _)| t <= first), "sent after visible content at {}", first);
                prop_assert!(run.sends.last().unwrap().0 <= *first);
            }
        }
    }

    #[test]
    fn attempts_are_never_exceeded(c in case()) {
        let (run, _) = run_case(&c);
        let a = run.sends.iter().filter(|(_, t)| t == "a").count() as u32;
        let b = run.sends.iter().filter(|(_, t)| t == "b").count() as u32;
        prop_assert!(a <= c.attempts_a && b <= c.attempts_b, "a {} of {}, b {} of {}", a, c.attempts_a, b, c.attempts_b);
        prop_assert_eq!(run.legs().len(), run.sends.len(), "one leg per attempt");
    }

    #[test]
    fn final_failures_end_the_call_where_they_happen(c in case()) {
        let (run, _) = run_case(&c);
        if let Err(e) = &run.result {
            match e.failure {
                Failure::Cancelled => prop_assert_eq!(Some(run.finished_at), c.cancel_at),
                Failure::Timeout { limit: Limit::Deadline, .. } => prop_assert_eq!(run.finished_at, c.deadline),
                _ => {}
            }
        }
    }
}
