//! The whole native path, from a provider's bytes to the caller's outcome: a config of one or two
//! targets, a call on a fake clock, every attempt answered with the input's body in reads of
//! arbitrary sizes and timings, through `StreamBody` / `WholeBody`, the format's decoder, the
//! engine's gate and delivery, to `Finish`.
//!
//! The input's first [`HEADER`] bytes are the plan (see [`Plan::read`]); the rest is the
//! provider's body, split at [`ATTEMPT_SEPARATOR`] into one body per attempt (used in turn).
//!
//! What must hold, whatever the bytes: no panic; exactly one `Finish` and nothing after it, even
//! when more input arrives; no `Send` at/after the deadline, nor after a `Commit` unless a `resume`
//! event announced it (fallbacks that retry on everything resume broken streams: `afterStart`);
//! a restart only where the reader can discard; no `Deliver` before the `Commit`; delivered tool calls at dense positions; a streamed answer equal to what
//! was delivered; no more kept than the caps; the call over by its deadline; the targets' API
//! key in no event, failure or leg, whatever the provider echoes; and heap use bounded by the input's
//! length (a tool-call index of 4294967295 costs nothing).

use std::collections::VecDeque;

use llm_baton::backoff::SplitMix64;
use llm_baton::body::{StreamBody, WholeBody};
use llm_baton::chat::{Answer, Delta, ToolCall};
use llm_baton::config::Config;
use llm_baton::delivery::{MAX_ANSWER_BYTES, MAX_TOOL_CALLS};
use llm_baton::engine::{Action, AttemptId, Baton, Call, CallOptions, Served};
use llm_baton::format::Format;
use llm_baton::outcome::{Failure, Limit};
use llm_baton::policy::ResumeMode;
use llm_baton::record::Event;

use super::alloc_meter::bounded_by_input;

/// How many leading bytes of an input are the plan.
pub const HEADER: usize = 8;

/// Separates the bodies of successive attempts in the rest of the input.
pub const ATTEMPT_SEPARATOR: &[u8] = b"\n~~~\n";

/// The targets' key. A provider may echo it in an error; no event or outcome may show it.
const API_KEY: &str = "sk-fuzz-0123456789";

/// The wall clock `Retry-After` dates are read against.
const EPOCH_MS: u64 = 1_700_000_000_000;

/// Per-attempt limits a plan picks from.
const LIMITS_MS: [Option<u64>; 4] = [None, Some(20), Some(300), Some(3000)];

/// The status each of the first four attempts answers with (two bits each); later ones get 200.
const STATUSES: [u16; 4] = [200, 429, 500, 401];

/// The headers an error answer carries: none, two fixed hostile ones, or its body's first three
/// lines as `retry-after`, `retry-after-ms` and `x-should-retry`.
#[derive(Debug, Clone, Copy)]
enum ErrorHeaders {
    None,
    Fixed(&'static str),
    FromBody,
}

const ERROR_HEADERS: [ErrorHeaders; 4] = [
    ErrorHeaders::None,
    ErrorHeaders::Fixed("99999999999999999999"),
    ErrorHeaders::Fixed("Wed, 21 Oct 2015 07:28:00 GMT"),
    ErrorHeaders::FromBody,
];

/// What the leading bytes choose.
#[derive(Debug)]
struct Plan {
    format: Format,
    stream: bool,
    /// 0: one target; 1: a retry of it; 2: a fallback to a second target; 3: a fallback from a
    /// retry to a second target.
    topology: u8,
    /// After its body, an attempt stalls (only a limit or the deadline ends it) instead of ending.
    stall: bool,
    /// Retry on every kind of failure, not only the default ones.
    retry_on_everything: bool,
    jitter: bool,
    chunk_seed: u8,
    deadline_ms: u64,
    max_read_gap_ms: u64,
    /// headersMs, firstTokenMs, idleMs, totalMs.
    limits: [Option<u64>; 4],
    statuses: u8,
    headers_after_ms: u64,
    error_headers: ErrorHeaders,
    backoff_initial_ms: u64,
    /// The reader can discard what it saw (a library stream), so a broken stream may restart.
    resettable: bool,
}

impl Plan {
    /// Byte 0: format (bits 0-1), stream (2), topology (3-4), stall (5), retry on everything (6),
    /// jitter (7). 1: chunking seed (0: each body in one read). 2: deadline, 1 + 40 * n ms.
    /// 3: the most ms between reads. 4: the four limits, two bits each, from [`LIMITS_MS`].
    /// 5: the statuses of attempts 1-4, two bits each, from [`STATUSES`]. 6: ms to the headers
    /// / 8 (bits 0-5; bit 0 also: resettable) and an error's headers from [`ERROR_HEADERS`] (6-7).
    /// 7: backoff initialMs / 4.
    fn read(h: &[u8; HEADER]) -> Plan {
        let pick = |byte: u8, at: u32| usize::from((byte >> at) & 3);
        Plan {
            format: Format::ALL[pick(h[0], 0)],
            stream: h[0] & 4 != 0,
            topology: (h[0] >> 3) & 3,
            stall: h[0] & 32 != 0,
            retry_on_everything: h[0] & 64 != 0,
            jitter: h[0] & 128 != 0,
            chunk_seed: h[1],
            deadline_ms: 1 + 40 * u64::from(h[2]),
            max_read_gap_ms: u64::from(h[3]),
            limits: [0, 2, 4, 6].map(|at| LIMITS_MS[pick(h[4], at)]),
            statuses: h[5],
            headers_after_ms: 8 * u64::from(h[6] & 63),
            error_headers: ERROR_HEADERS[pick(h[6], 6)],
            backoff_initial_ms: 4 * u64::from(h[7]),
            resettable: h[6] & 1 != 0,
        }
    }

    fn status(&self, attempt: usize) -> u16 {
        if attempt < 4 {
            STATUSES[usize::from((self.statuses >> (2 * attempt)) & 3)]
        } else {
            200
        }
    }

    fn config_json(&self) -> String {
        let names = ["headersMs", "firstTokenMs", "idleMs", "totalMs"];
        let timeouts: Vec<String> =
            names.iter().zip(self.limits).filter_map(|(n, ms)| Some(format!("\"{n}\": {}", ms?))).collect();
        let target = |model: &str, prefill: bool| {
            format!(
                r#"{{"format": "{}", "baseUrl": "https://provider.test/v1", "model": "{model}",
                    "apiKey": "{API_KEY}", "timeouts": {{{}}}, "prefill": {prefill}}}"#,
                self.format.as_str(),
                timeouts.join(", ")
            )
        };
        // Fallbacks that retry on everything also resume a broken stream: continue, or with
        // jitter, restart; on a budget floor of 1 ms, so a resume starts whenever time is left.
        let after_start = if self.retry_on_everything {
            let mode = if self.jitter { "restart" } else { "continue" };
            format!(r#", "afterStart": {{"mode": "{mode}", "attempts": 2, "minRemainingMs": 1}}"#)
        } else {
            String::new()
        };
        let retry_on = if self.retry_on_everything {
            r#", "retryOn": ["transport", "timeout", "protocol", "4xx", "5xx"]"#
        } else {
            ""
        };
        let retry = |attempts: u32| {
            format!(
                r#"{{"retry": "a", "attempts": {attempts}, "backoff": {{"initialMs": {}, "jitter": "{}"}}{retry_on}}}"#,
                self.backoff_initial_ms,
                if self.jitter { "full" } else { "none" }
            )
        };
        let route = match self.topology {
            0 => "\"a\"".to_string(),
            1 => retry(3),
            2 => format!(r#"{{"fallback": ["a", "b"]{after_start}}}"#),
            _ => format!(r#"{{"fallback": [{}, "b"]{after_start}}}"#, retry(2)),
        };
        let (a, b) = (target("m-a", false), target("m-b", true));
        format!(r#"{{"targets": {{"a": {a}, "b": {b}}}, "routes": {{"r": {route}}}}}"#)
    }
}

/// What the driver tells the engine about one attempt, in order.
#[derive(Debug)]
enum Input {
    Headers,
    Deltas(Vec<Delta>),
    Answer(Answer),
    Failure(Failure),
}

impl Input {
    /// After this the driver has nothing more to say about the attempt.
    fn ends_attempt(&self) -> bool {
        match self {
            Input::Headers => false,
            Input::Deltas(deltas) => deltas.iter().any(|d| matches!(d, Delta::Done { .. })),
            Input::Answer(_) | Input::Failure(_) => true,
        }
    }
}

/// A xorshift generator for read sizes and gaps.
struct Reads(u64);

impl Reads {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below.max(1)
    }

    /// `body` cut into reads: whole when the seed is 0, else pieces of 0 to `seed % 64` bytes.
    fn split<'b>(&mut self, body: &'b [u8], seed: u8) -> Vec<&'b [u8]> {
        if seed == 0 {
            return vec![body];
        }
        let most = u64::from(seed % 64) + 1;
        let mut reads = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let (read, tail) = rest.split_at((self.next(most + 1) as usize).min(rest.len()));
            reads.push(read);
            rest = tail;
        }
        reads
    }
}

/// The inputs one attempt produces, timed from `sent_at`: what a driver does with a response
/// whose status is `status` and whose body arrives as `body`.
fn attempt_inputs(plan: &Plan, body: &[u8], status: u16, sent_at: u64, reads: &mut Reads) -> VecDeque<(u64, Input)> {
    let mut inputs = VecDeque::new();
    let mut t = sent_at + plan.headers_after_ms;
    inputs.push_back((t, Input::Headers));
    let pieces = reads.split(body, plan.chunk_seed);
    let mut gaps = pieces.iter().map(|_| reads.next(plan.max_read_gap_ms + 1)).collect::<Vec<_>>().into_iter();
    let mut at = || {
        t += gaps.next().unwrap_or(0);
        t
    };
    if status != 200 {
        let mut whole = WholeBody::error();
        for piece in pieces {
            at();
            if whole.feed(piece) != Ok(true) {
                break;
            }
        }
        if !plan.stall {
            let said = plan.format.error_body(status, whole.bytes());
            let headers = error_headers(plan.error_headers, body);
            inputs.push_back((at(), Input::Failure(Failure::from_http(status, &headers, said, EPOCH_MS))));
        }
    } else if plan.stream {
        let mut decoding = StreamBody::new(plan.format);
        for piece in pieces {
            let mut deltas = Vec::new();
            let fed = decoding.feed(piece, &mut deltas);
            let t = at();
            let done = deltas.iter().any(|d| matches!(d, Delta::Done { .. }));
            if !deltas.is_empty() {
                inputs.push_back((t, Input::Deltas(deltas)));
            }
            if let Err(failure) = fed {
                inputs.push_back((t, Input::Failure(failure)));
                return inputs;
            }
            if done {
                return inputs;
            }
        }
        if !plan.stall {
            let mut deltas = Vec::new();
            let finished = decoding.finish(&mut deltas);
            let t = at();
            if !deltas.is_empty() {
                inputs.push_back((t, Input::Deltas(deltas)));
            }
            if let Err(failure) = finished {
                inputs.push_back((t, Input::Failure(failure)));
            }
        }
    } else {
        let mut whole = WholeBody::answer();
        for piece in pieces {
            let t = at();
            if let Err(failure) = whole.feed(piece) {
                inputs.push_back((t, Input::Failure(failure)));
                return inputs;
            }
        }
        if !plan.stall {
            let input = match plan.format.decode_answer(whole.bytes()) {
                Ok(answer) => Input::Answer(answer),
                Err(e) => Input::Failure(e.into()),
            };
            inputs.push_back((at(), input));
        }
    }
    inputs
}

fn error_headers(choice: ErrorHeaders, body: &[u8]) -> Vec<(String, String)> {
    let names = ["retry-after", "retry-after-ms", "x-should-retry"];
    match choice {
        ErrorHeaders::None => Vec::new(),
        ErrorHeaders::Fixed(value) => vec![(names[0].to_string(), value.to_string())],
        ErrorHeaders::FromBody => names
            .iter()
            .zip(body.split(|b| *b == b'\n'))
            .map(|(name, line)| (name.to_string(), String::from_utf8_lossy(line).into_owned()))
            .collect(),
    }
}

/// What the caller was shown, assembled as a reader would.
#[derive(Debug, Default)]
struct Shown {
    committed: bool,
    text: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    bytes: usize,
}

impl Shown {
    /// The call delivered at `index`, a dense position: opened when it is the next one.
    fn call_at(&mut self, index: u32) -> &mut ToolCall {
        let position = index as usize;
        assert!(
            position <= self.tool_calls.len(),
            "tool call delivered at position {index} when only {} were open (positions must be dense)",
            self.tool_calls.len()
        );
        if position == self.tool_calls.len() {
            self.tool_calls.push(ToolCall::default());
        }
        &mut self.tool_calls[position]
    }

    fn deliver(&mut self, deltas: Vec<Delta>) {
        assert!(self.committed, "Deliver before Commit: {deltas:?}");
        for delta in deltas {
            match delta {
                Delta::Text { text } => {
                    self.bytes += text.len();
                    self.text.push_str(&text);
                }
                Delta::Reasoning { text, .. } => {
                    self.bytes += text.len();
                    self.reasoning.push_str(&text);
                }
                Delta::ToolCall { index, id, name, arguments } => {
                    self.bytes +=
                        id.as_ref().map_or(0, String::len) + name.as_ref().map_or(0, String::len) + arguments.len();
                    let call = self.call_at(index);
                    if let Some(id) = id {
                        call.id = id;
                    }
                    if let Some(name) = name {
                        call.name = name;
                    }
                    call.arguments.push_str(&arguments);
                }
                done @ Delta::Done { .. } => panic!("Deliver carried {done:?}; the end of a stream is the Finish"),
                skipped @ Delta::Skipped { .. } => panic!("Deliver carried {skipped:?}; a skipped frame is a warning"),
                usage @ Delta::Usage { .. } => {
                    panic!("Deliver carried {usage:?}; usage is the leg's, not the reader's")
                }
                Delta::ReasoningState { state } => self.bytes += state.byte_len(),
                // Passed on to the reader, not part of the answer's content.
                Delta::Logprobs { .. } | Delta::ContentFilter { .. } => {}
                Delta::ToolCallState { index, state } => {
                    self.bytes += state.byte_len();
                    self.call_at(index).state = Some(state);
                }
            }
        }
        assert!(self.bytes <= MAX_ANSWER_BYTES, "{} content bytes delivered, over the cap", self.bytes);
        assert!(
            self.tool_calls.len() <= MAX_TOOL_CALLS,
            "{} tool calls delivered, over the cap",
            self.tool_calls.len()
        );
    }
}

/// The whole path for one input. See the module docs.
pub fn call(data: &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<HEADER>() else { return };
    let plan = Plan::read(head);
    let bodies: Vec<&[u8]> = split_at_separator(rest);
    bounded_by_input(data.len(), || run(&plan, &bodies));
}

fn split_at_separator(mut rest: &[u8]) -> Vec<&[u8]> {
    let mut bodies = Vec::new();
    while let Some(at) = rest.windows(ATTEMPT_SEPARATOR.len()).position(|w| w == ATTEMPT_SEPARATOR) {
        bodies.push(&rest[..at]);
        rest = &rest[at + ATTEMPT_SEPARATOR.len()..];
    }
    bodies.push(rest);
    bodies
}

fn run(plan: &Plan, bodies: &[&[u8]]) {
    let config = Config::from_json(&plan.config_json()).expect("the plan's config is valid");
    let mut baton = Baton::new(config);
    let options = CallOptions {
        deadline_ms: Some(plan.deadline_ms),
        stream: plan.stream,
        resettable: plan.resettable,
        ..CallOptions::default()
    };
    let mut call = baton.start("r", options, 0, Box::new(SplitMix64(u64::from(plan.chunk_seed)))).expect("route r");
    let deadline_at = plan.deadline_ms;
    let mut reads = Reads(0x9E37_79B9_7F4A_7C15 ^ u64::from(plan.chunk_seed));
    let mut shown = Shown::default();
    // The attempt whose body is still arriving, and what the driver will say about it next.
    let mut in_flight: Option<(AttemptId, VecDeque<(u64, Input)>)> = None;
    // The driver's last input ended the attempt in flight: it is over once the engine's answer
    // to that input (which may still commit and deliver it) has been drained.
    let mut ended = false;
    // Every delta the driver decoded for the attempt in flight: a served stream's answer must
    // hold all of it, not only what happened to be delivered.
    let mut decoded: Vec<Delta> = Vec::new();
    // A `resume` event announced the next Send; a continue spliced attempts into one answer.
    let mut resume_announced = false;
    let mut continued = false;
    let mut sent = 0;
    let mut now = 0;
    for _ in 0..1_000_000 {
        while let Some(action) = call.poll() {
            // An answer's content is the caller's data, never rewritten, even when a hostile
            // provider wrote the key into it; everything llm-baton says about the call is checked.
            let said = match &action {
                Action::Abort { .. } | Action::Event(_) | Action::Finish(Err(_)) => Some(format!("{action:?}")),
                Action::Finish(Ok(served)) => Some(format!("{:?}", served.legs)),
                _ => None,
            };
            if let Some(said) = said {
                assert!(!said.contains(API_KEY), "the API key shows in {said}");
            }
            match action {
                Action::Send { attempt, target, .. } => {
                    let previous_over = ended || in_flight.is_none();
                    assert!(
                        previous_over,
                        "{attempt:?} was sent while the attempt before it, never aborted, was still being read"
                    );
                    assert!(!shown.committed || resume_announced, "Send after the Commit, with no resume announced");
                    resume_announced = false;
                    assert!(now < deadline_at, "Send at {now} ms, at or after the deadline ({deadline_at} ms)");
                    assert!(target < 2, "Send to target {target} of 2");
                    let body = bodies[sent % bodies.len()];
                    ended = false;
                    decoded.clear();
                    in_flight = Some((attempt, attempt_inputs(plan, body, plan.status(sent), now, &mut reads)));
                    sent += 1;
                }
                Action::Abort { attempt, .. } => {
                    let current = in_flight.take().map(|(id, _)| id);
                    assert_eq!(current, Some(attempt), "Abort of an attempt that is not in flight");
                }
                Action::Event(Event::Resume { .. }) => {
                    assert!(shown.committed, "a resume before the stream committed");
                    resume_announced = true;
                }
                Action::Event(_) => {}
                Action::Commit { attempt, target, .. } => {
                    assert!(plan.stream, "a whole answer committed");
                    assert!(!shown.committed, "a second Commit");
                    assert!(target < 2, "Commit to target {target} of 2");
                    let current = in_flight.as_ref().map(|(id, _)| *id);
                    assert_eq!(current, Some(attempt), "Commit to an attempt that is not in flight");
                    shown.committed = true;
                }
                Action::Deliver(deltas) => {
                    assert!(plan.stream, "a whole answer delivered deltas");
                    shown.deliver(deltas);
                }
                Action::Splice(splice) => {
                    assert!(shown.committed, "a splice before the stream committed");
                    match splice.mode {
                        ResumeMode::Restart => {
                            assert!(plan.resettable, "a restart where the reader cannot discard");
                            shown = Shown { committed: true, ..Shown::default() };
                        }
                        ResumeMode::Continue => continued = true,
                    }
                }
                Action::Finish(result) => {
                    assert!(now <= deadline_at, "finished at {now} ms, after the deadline ({deadline_at} ms)");
                    match result {
                        Ok(served) => check_served(plan, &shown, (!continued).then_some(&decoded[..]), &served),
                        Err(e) => {
                            if let Failure::Timeout { limit: Limit::Deadline, limit_ms } = e.failure {
                                assert_eq!(limit_ms, plan.deadline_ms, "the deadline timeout names another budget");
                                assert_eq!(now, deadline_at, "the deadline timeout came late or early");
                            }
                            for leg in &e.legs {
                                assert!(leg.end_ms <= plan.deadline_ms, "a leg ended after the deadline: {leg:?}");
                            }
                        }
                    }
                    let last_over = ended || in_flight.is_none();
                    assert!(last_over, "the call finished while its attempt, never aborted, was still being read");
                    nothing_after_finish(&mut call, now, in_flight);
                    return;
                }
            }
        }
        if std::mem::take(&mut ended) {
            in_flight = None;
        }
        let next_input = in_flight.as_ref().and_then(|(_, inputs)| inputs.front().map(|(t, _)| *t));
        let next_timer = call.poll_timeout();
        let t = match (next_input, next_timer) {
            (Some(i), Some(w)) => i.min(w),
            (Some(i), None) => i,
            (None, Some(w)) => w,
            (None, None) => panic!("the call is stuck: no input due and no timer, though a deadline is set"),
        };
        assert!(t >= now, "time went backwards: {now} -> {t}");
        now = t;
        // On a tie the timer goes first, as the engine's own inputs settle due timers first.
        if next_timer == Some(t) {
            call.handle_timeout(now);
            continue;
        }
        let (id, inputs) = in_flight.as_mut().expect("an input is due");
        let id = *id;
        let (_, input) = inputs.pop_front().expect("an input is due");
        ended = input.ends_attempt();
        if let Input::Deltas(deltas) = &input {
            decoded.extend(deltas.iter().cloned());
        }
        tell(&mut call, id, now, input);
    }
    panic!("the call did not finish within a million steps");
}

/// `decoded`: what the serving attempt decoded, when it alone made the answer (no continue).
fn check_served(plan: &Plan, shown: &Shown, decoded: Option<&[Delta]>, served: &Served) {
    assert!(served.target < 2, "served by target {} of 2", served.target);
    if !plan.stream {
        return;
    }
    let answer = &served.answer;
    assert_eq!(answer.text, shown.text, "the answer's text is not what was delivered");
    assert_eq!(answer.reasoning, shown.reasoning, "the answer's reasoning is not what was delivered");
    assert_eq!(answer.tool_calls, shown.tool_calls, "the answer's tool calls are not what was delivered");
    let Some(decoded) = decoded else { return };
    // The engine names the issuer of each state as it passes: the serving target, "a" or "b".
    let model = ["m-a", "m-b"][served.target];
    let mut decoded = decoded.to_vec();
    decoded.iter_mut().for_each(|d| d.name_issuer(plan.format.as_str(), model));
    let whole = assemble(&decoded);
    assert_eq!(
        (&answer.text, &answer.reasoning, &answer.tool_calls),
        (&whole.text, &whole.reasoning, &whole.tool_calls),
        "the answer lost part of what its attempt decoded"
    );
}

/// The call at the provider's `index`, opened in the order first seen (`indexes` holds the
/// provider's index of each call so far).
fn call_of<'a>(whole: &'a mut Shown, indexes: &mut Vec<u32>, index: u32) -> &'a mut ToolCall {
    let position = indexes.iter().position(|i| *i == index).unwrap_or_else(|| {
        indexes.push(index);
        whole.tool_calls.push(ToolCall::default());
        indexes.len() - 1
    });
    &mut whole.tool_calls[position]
}

/// Everything an attempt decoded, as one answer: tool calls grouped by the provider's index in
/// the order first seen.
fn assemble(decoded: &[Delta]) -> Shown {
    let mut whole = Shown::default();
    let mut indexes = Vec::new();
    for delta in decoded {
        match delta {
            Delta::Text { text } => whole.text.push_str(text),
            Delta::Reasoning { text, .. } => whole.reasoning.push_str(text),
            Delta::ToolCall { index, id, name, arguments } => {
                let call = call_of(&mut whole, &mut indexes, *index);
                if let Some(id) = id {
                    call.id.clone_from(id);
                }
                if let Some(name) = name {
                    call.name.clone_from(name);
                }
                call.arguments.push_str(arguments);
            }
            Delta::Done { .. }
            | Delta::Skipped { .. }
            | Delta::Usage { .. }
            | Delta::Logprobs { .. }
            | Delta::ContentFilter { .. } => {}
            Delta::ReasoningState { .. } => {}
            Delta::ToolCallState { index, state } => {
                call_of(&mut whole, &mut indexes, *index).state = Some(state.clone());
            }
        }
    }
    whole
}

/// After `Finish`, nothing the driver still says or any time passing produces another action.
fn nothing_after_finish(call: &mut Call, mut now: u64, in_flight: Option<(AttemptId, VecDeque<(u64, Input)>)>) {
    assert_eq!(call.poll(), None, "an action followed Finish");
    if let Some((id, inputs)) = in_flight {
        for (at, input) in inputs {
            now = now.max(at);
            tell(call, id, now, input);
            assert_eq!(call.poll(), None, "an action followed Finish");
        }
    }
    assert_eq!(call.poll_timeout(), None, "a finished call still wants a timer");
    call.handle_timeout(now + 1_000_000);
    call.cancel(now + 1_000_000);
    assert_eq!(call.poll(), None, "an action followed Finish");
}

fn tell(call: &mut Call, id: AttemptId, now: u64, input: Input) {
    match input {
        Input::Headers => call.on_headers(id, now),
        Input::Deltas(deltas) => call.on_deltas(id, now, deltas),
        Input::Answer(answer) => call.on_answer(id, now, answer),
        Input::Failure(failure) => call.on_failure(id, now, failure),
    }
}
