//! A fake clock and a scripted transport for driving the call engine deterministically.
//!
//! Each target has a script: one [`Behavior`] per attempt (the last repeats). The simulator
//! jumps time to whichever comes first, the script's next event or the engine's next timer;
//! on a tie the timer goes first, as it does for the engine's own inputs.

#![allow(dead_code)]

use std::collections::HashMap;

use llm_baton::backoff::SplitMix64;
use llm_baton::chat::{Answer, Delta, FinishReason, Usage};
use llm_baton::config::Config;
use llm_baton::engine::{Action, AttemptId, Baton, CallError, CallOptions, Served, Splice};
use llm_baton::outcome::Failure;
use llm_baton::record::{Event, Leg};

/// What one attempt of a target does, in ms after it was sent.
#[derive(Debug, Clone)]
pub enum Behavior {
    /// Never answers.
    Stall,
    /// Headers at `headers_at`, visible deltas at each `content` time, then the answer completes
    /// at `done_at` (or stalls forever when `None`).
    Answer { headers_at: u64, content: Vec<u64>, done_at: Option<u64> },
    /// Headers with an error status at `at` (with an optional Retry-After in ms).
    Status { at: u64, status: u16, retry_after_ms: Option<u64> },
    /// Fails without a status at `at`.
    Fail { at: u64, failure: Failure },
    /// Exactly these inputs, each at its time (ms after the send).
    Steps(Vec<(u64, Step)>),
}

/// One input of a [`Behavior::Steps`] script.
#[derive(Debug, Clone)]
pub enum Step {
    Headers,
    Deltas(Vec<Delta>),
    Fail(Failure),
}

pub fn ok_at(ms: u64) -> Behavior {
    Behavior::Answer { headers_at: ms / 2, content: vec![ms / 2], done_at: Some(ms) }
}

pub fn status(at: u64, status: u16) -> Behavior {
    Behavior::Status { at, status, retry_after_ms: None }
}

pub fn transport(at: u64) -> Behavior {
    Behavior::Fail { at, failure: Failure::Transport { message: "connection refused".into() } }
}

#[derive(Debug)]
pub struct Run {
    pub result: Result<Served, CallError>,
    pub finished_at: u64,
    pub events: Vec<Event>,
    /// (time, target name) of every Send.
    pub sends: Vec<(u64, String)>,
    /// (time, attempt, failure) of every Abort.
    pub aborts: Vec<(u64, u32, Failure)>,
    /// Times at which visible content was delivered to the caller.
    pub delivered: Vec<u64>,
    /// The prefill of every Send, in order.
    pub prefills: Vec<Option<String>>,
    /// What the reader saw, in order: `Shown::Deltas` and the seams of resumed streams.
    pub shown: Vec<Shown>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    Deltas(Vec<Delta>),
    Splice(Splice),
}

impl Run {
    /// The text a reader that honours restarts ends up with.
    pub fn reader_text(&self) -> String {
        let mut text = String::new();
        for s in &self.shown {
            match s {
                Shown::Splice(splice) if splice.mode == llm_baton::policy::ResumeMode::Restart => text.clear(),
                Shown::Splice(_) => {}
                Shown::Deltas(deltas) => {
                    for d in deltas {
                        if let Delta::Text { text: t } = d {
                            text.push_str(t);
                        }
                    }
                }
            }
        }
        text
    }
}

impl Run {
    pub fn legs(&self) -> &[Leg] {
        match &self.result {
            Ok(s) => &s.legs,
            Err(e) => &e.legs,
        }
    }
    pub fn failure(&self) -> &Failure {
        &self.result.as_ref().expect_err("the call should have failed").failure
    }
    pub fn served_by(&self, config: &Config) -> String {
        let s = self.result.as_ref().expect("the call should have succeeded");
        config.targets[s.target].name.clone()
    }
    pub fn sent_targets(&self) -> Vec<&str> {
        self.sends.iter().map(|(_, t)| t.as_str()).collect()
    }
    pub fn retries(&self) -> Vec<(String, u32, u32, u64)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Retry { target, attempt, of, delay_ms, .. } => Some((target.clone(), *attempt, *of, *delay_ms)),
                _ => None,
            })
            .collect()
    }
    pub fn failovers(&self) -> Vec<(String, String)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Failover { from, to, .. } => Some((from.clone(), to.clone())),
                _ => None,
            })
            .collect()
    }
}

pub struct Sim {
    pub baton: Baton,
    pub scripts: HashMap<String, Vec<Behavior>>,
    pub seed: u64,
    /// Cancel the call at this time.
    pub cancel_at: Option<u64>,
}

impl Sim {
    pub fn new(config_json: &str) -> Sim {
        let config = Config::from_json(config_json).expect("test config is valid");
        Sim { baton: Baton::new(config), scripts: HashMap::new(), seed: 1, cancel_at: None }
    }

    pub fn script(mut self, target: &str, behaviors: Vec<Behavior>) -> Sim {
        self.scripts.insert(target.to_string(), behaviors);
        self
    }

    pub fn config(&self) -> &Config {
        self.baton.config()
    }

    pub fn run(&mut self, route: &str, options: CallOptions) -> Run {
        let mut call = self.baton.start(route, options, 0, Box::new(SplitMix64(self.seed))).expect("route exists");
        let mut used: HashMap<String, usize> = HashMap::new();
        // The attempts in flight (more than one while a hedge races), in the order sent: each
        // one's id and its remaining scripted inputs (absolute time, input).
        let mut pending: Vec<(AttemptId, Vec<(u64, Input)>)> = Vec::new();
        let mut run = Run {
            result: Err(CallError {
                failure: Failure::Cancelled,
                target: None,
                legs: vec![],
                billed_usage: Default::default(),
            }),
            finished_at: 0,
            events: vec![],
            sends: vec![],
            aborts: vec![],
            delivered: vec![],
            prefills: vec![],
            shown: vec![],
        };
        let mut now = 0;
        let mut cancel_at = self.cancel_at;
        for _ in 0..10_000 {
            while let Some(action) = call.poll() {
                match action {
                    Action::Send { attempt, target, prefill, .. } => {
                        run.prefills.push(prefill);
                        let name = self.baton.config().targets[target].name.clone();
                        let script = self.scripts.get(&name).unwrap_or_else(|| panic!("no script for {name}"));
                        let n = used.entry(name.clone()).or_default();
                        let behavior = script[(*n).min(script.len() - 1)].clone();
                        *n += 1;
                        run.sends.push((now, name));
                        pending.push((attempt, inputs(&behavior, now)));
                    }
                    Action::Abort { attempt, failure } => {
                        let at = pending.iter().position(|(id, _)| *id == attempt);
                        let at = at.expect("abort of an attempt not in flight");
                        run.aborts.push((now, attempt.0, failure));
                        pending.remove(at);
                    }
                    Action::Event(e) => {
                        // An attempt that ended takes no more input (a script may go on).
                        if let Event::Leg { leg, .. } = &e {
                            pending.retain(|(id, _)| id.0 != leg.attempt);
                        }
                        run.events.push(e);
                    }
                    Action::Commit { attempt, .. } => {
                        assert!(options.stream, "only streams commit");
                        assert!(pending.iter().any(|(id, _)| *id == attempt), "commit of an attempt not in flight");
                    }
                    Action::Deliver(deltas) => {
                        run.delivered.push(now);
                        run.shown.push(Shown::Deltas(deltas));
                    }
                    Action::Splice(splice) => run.shown.push(Shown::Splice(splice)),
                    Action::Finish(result) => {
                        assert!(call.poll().is_none(), "no action may follow Finish");
                        run.result = result;
                        run.finished_at = now;
                        return run;
                    }
                }
            }
            // The earliest input of any attempt in flight; on a tie, the one sent first.
            let next = pending.iter().enumerate().filter_map(|(i, (_, list))| list.first().map(|(t, _)| (*t, i))).min();
            let next_input = next.map(|(t, _)| t);
            let next_timer = call.poll_timeout();
            let next_cancel = cancel_at;
            let t = [next_input, next_timer, next_cancel]
                .into_iter()
                .flatten()
                .min()
                .expect("the call is stuck: no input, timer or cancel");
            assert!(t >= now, "time went backwards");
            now = t;
            if next_timer == Some(t) {
                call.handle_timeout(now);
            } else if next_cancel == Some(t) {
                cancel_at = None;
                call.cancel(now);
            } else {
                let (id, list) = &mut pending[next.expect("an input is due").1];
                let (_, input) = list.remove(0);
                let id = *id;
                match input {
                    Input::Headers => call.on_headers(id, now),
                    // A whole answer's body pieces restart its idle limit, nothing more.
                    Input::Content if !options.stream => call.on_body(id, now),
                    Input::Content => call.on_deltas(id, now, [Delta::Text { text: "word ".into() }]),
                    Input::Success if options.stream => call.on_deltas(id, now, [done()]),
                    Input::Success => call.on_answer(id, now, answer()),
                    Input::Failure(f) => call.on_failure(id, now, f),
                    Input::Deltas(deltas) => call.on_deltas(id, now, deltas),
                }
            }
        }
        panic!("the call did not finish within 10000 steps");
    }
}

#[derive(Debug, Clone)]
enum Input {
    Headers,
    Content,
    Success,
    Failure(Failure),
    Deltas(Vec<Delta>),
}

fn inputs(b: &Behavior, sent: u64) -> Vec<(u64, Input)> {
    match b {
        Behavior::Stall => vec![],
        Behavior::Answer { headers_at, content, done_at } => {
            let mut v = vec![(sent + headers_at, Input::Headers)];
            v.extend(content.iter().map(|c| (sent + c, Input::Content)));
            v.extend(done_at.map(|d| (sent + d, Input::Success)));
            v
        }
        Behavior::Status { at, status, retry_after_ms } => {
            let f = Failure::Http {
                status: *status,
                message: format!("scripted {status}"),
                code: None,
                class: None,
                retry_after_ms: *retry_after_ms,
                should_retry: None,
                in_stream: false,
                content_filter: None,
            };
            vec![(sent + at, Input::Headers), (sent + at, Input::Failure(f))]
        }
        Behavior::Fail { at, failure } => vec![(sent + at, Input::Failure(failure.clone()))],
        Behavior::Steps(steps) => steps
            .iter()
            .map(|(at, step)| {
                let input = match step {
                    Step::Headers => Input::Headers,
                    Step::Deltas(deltas) => Input::Deltas(deltas.clone()),
                    Step::Fail(failure) => Input::Failure(failure.clone()),
                };
                (sent + at, input)
            })
            .collect(),
    }
}

/// The end of a scripted stream.
pub fn done() -> Delta {
    Delta::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), model: None }
}

/// A scripted whole answer.
pub fn answer() -> Answer {
    Answer {
        logprobs: None,
        content_filter: None,
        text: "Hello.".into(),
        reasoning: String::new(),
        tool_calls: vec![],
        finish_reason: FinishReason::Stop,
        usage: Usage::default(),
        model: None,
        reasoning_parts: Vec::new(),
    }
}

pub fn invoke() -> CallOptions {
    CallOptions { deadline_ms: None, stream: false, ..CallOptions::default() }
}

pub fn stream() -> CallOptions {
    CallOptions { deadline_ms: None, stream: true, ..CallOptions::default() }
}

pub fn with_deadline(mut o: CallOptions, ms: u64) -> CallOptions {
    o.deadline_ms = Some(ms);
    o
}
