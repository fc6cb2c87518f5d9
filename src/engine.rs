//! The call engine: a sans-I/O state machine that runs one logical call through its route.
//!
//! Inputs are what the outside world observed, each stamped with `now` (milliseconds on the
//! caller's monotonic clock): an attempt's headers arrived, visible content arrived, it
//! succeeded or failed, the caller cancelled, or time passed ([`Call::handle_timeout`]).
//! Outputs are [`Action`]s drained with [`Call::poll`]: send an attempt, abort one (and why),
//! show an event, finish. [`Call::poll_timeout`] says when the engine next needs to be woken.
//!
//! Like quinn-proto, the engine never sleeps or reads a clock, so the driver is thin (fetch,
//! one timer, an AbortController) and tests jump a fake clock straight to the next timer.
//! Every input first settles the timers that are already due: a timer woken late (a hidden
//! browser tab wakes about once a second) still ends the attempt at the limit, and an answer
//! that arrives after the deadline is rejected, never reported as on time.
//!
//! A stream commits at its first visible content, and nothing is retried after that. A fallback
//! with `afterStart` may still *resume* a stream that broke: the next member continues the text
//! shown so far from a prefill, or (where the reader can take back what it saw) restarts it.
//! A resume that fails ends the call with the break that caused it, never with its own error,
//! and every leg records the tokens its provider reported, so the caller can see what was billed.
//!
//! A fallback with `hedge` races its members: when the attempt in flight has shown nothing by
//! the threshold (`afterMs`, or a percentile of the target's recent times to first token kept in
//! [`Health`]), the next member starts beside it, and both are in flight (the driver runs one
//! future per `Send`). The first leg whose delta carries content (or whose whole answer comes)
//! wins: every other leg is aborted in that instant, its leg recorded as `lost`, which is no
//! failure for its breaker, and only then does the winner's content pass, so nothing is shown
//! twice. The earlier attempts are `racers` beside the running one; one deadline bounds them all,
//! and each keeps its own member limits. A racer that fails drops out; a running hedge that
//! fails goes through the gate as any attempt would (its retry, the next member), and when that
//! would end the call while a racer is still in flight, the racer carries on instead. A hedge
//! spends from the retry budget, and none starts once the stream committed.
//!
//! Calls learn from each other through the `Baton`'s [`Health`]: every leg is reported to its
//! target's breaker, and a call takes each target's admission once, when it first reaches it, so
//! what one call learns changes later calls, never the attempts of the call itself. Retries spend
//! from the shared retry budget.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::backoff::{self, RandomSource};
use crate::budget::Budget;
use crate::chat::{Answer, Delta, Usage};
use crate::config::{Config, FieldError, Timeouts};
use crate::delivery::Delivery;
use crate::gate::{self, Move};
use crate::health::{
    latency_sample, percentile_of, sorted_percentile, Admission, Health, HealthSnapshot, HealthView, Outcome,
};
use crate::outcome::{Failure, FailureInfo, Limit};
use crate::policy::{AfterStart, Hedge, ResumeMode, Strategy, EXPLORE_SHARE, SLOW_STREAK};
use crate::record::{Event, Leg, ResumedFrom};
use crate::secret::Redactor;
use crate::value::plain_f64;
use llm_baton_wire::write::ToJson;

/// The most malformed frames one stream may skip: a proxy that corrupts an event now and then
/// costs a warning each; one that corrupts many is broken, and the attempt fails.
pub const MAX_SKIPPED_FRAMES: u32 = 8;

/// The long-lived holder of a validated config and the round-robin rotations. One per
/// `new Baton(config)`; each call is a [`Call`] started from it.
///
/// # Examples
///
/// A driver's whole job, with a clock that only moves when told to:
///
/// ```
/// use llm_baton::backoff::SplitMix64;
/// use llm_baton::config::Config;
/// use llm_baton::engine::{Action, Baton, CallOptions};
/// use llm_baton::outcome::{Failure, Limit};
///
/// let config = Config::from_json(
///     r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://api.openai.com/v1",
///                           "model": "gpt-4o-mini", "timeouts": {"headersMs": 1000}}}}"#,
/// )
/// .unwrap();
/// let mut baton = Baton::new(config);
/// let mut call = baton.start("p", CallOptions::default(), 0, Box::new(SplitMix64(7))).unwrap();
/// assert!(matches!(call.poll(), Some(Action::Send { target: 0, .. })));
/// // The driver sends the request, then sleeps until the engine's next wake-up...
/// assert_eq!(call.poll_timeout(), Some(1000));
/// // ...and no headers came: the limit aborts the attempt, and nothing is left to try.
/// call.handle_timeout(1000);
/// let actions: Vec<Action> = std::iter::from_fn(|| call.poll()).collect();
/// assert!(actions.iter().any(|a| matches!(a, Action::Abort { .. })));
/// let Some(Action::Finish(Err(e))) = actions.last() else { panic!("finished") };
/// assert_eq!(e.failure, Failure::Timeout { limit: Limit::Headers, limit_ms: 1000 });
/// ```
#[derive(Debug)]
pub struct Baton {
    config: Arc<Config>,
    redactor: Arc<Redactor>,
    rotations: Vec<Rotation>,
    health: Arc<Mutex<Health>>,
    /// Every target's name: what `baton.health()` shows and a gateway's store is asked about.
    target_names: Vec<String>,
}

/// Per-call settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallOptions {
    /// The call's budget; `None` takes the config's `deadlineMs`.
    pub deadline_ms: Option<u64>,
    /// Streams have a commit point (the first visible content) and first-token / idle limits.
    pub stream: bool,
    /// The stream's reader can discard what it was shown (a library stream, not a gateway's
    /// client), so a broken stream may restart.
    pub resettable: bool,
    /// Time the caller already spent on this call (waiting for a health store): taken from the
    /// budget, which runs from when the caller asked.
    pub waited_ms: u64,
}

/// Names one attempt of a call; equal to its leg's `attempt` number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttemptId(pub u32);

/// What the engine asks of its driver.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Send the request to `config.targets[target]`; with `prefill`, as a continuation: the
    /// request with this text as its final assistant message (`ChatRequest::with_prefill`).
    /// `remaining_ms` is what is left of the call's budget, for `x-baton-deadline-ms`.
    Send { attempt: AttemptId, target: usize, prefill: Option<String>, remaining_ms: Option<u64> },
    /// Abort this attempt's request now (close the socket). `failure` is the typed reason.
    Abort { attempt: AttemptId, failure: Failure },
    /// Show this to the caller.
    Event(Event),
    /// A stream committed to this attempt: its first visible content follows in `Deliver`, and
    /// nothing is retried from here on. A gateway sends its 200 and headers now. `attempts` were
    /// sent so far: this one, those before it, and every leg a hedge raced beside it.
    Commit { attempt: AttemptId, target: usize, attempts: u32 },
    /// Show these deltas to a stream's reader, in order. Tool-call `index`es are dense positions.
    Deliver(Vec<Delta>),
    /// A resumed stream's new content follows. After a restart the reader must first discard
    /// what it was shown; after a continue the answer simply goes on (a gateway marks the seam).
    Splice(Splice),
    /// The call is over. No more actions follow.
    Finish(Result<Served, CallError>),
}

/// Where a resumed stream's new content starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splice {
    pub mode: ResumeMode,
    pub attempt: AttemptId,
    pub from: String,
    pub to: String,
    pub cause: Failure,
    /// Characters of text continued (0 for a restart).
    pub kept_chars: usize,
    /// Characters of text and reasoning the reader must discard (0 for a continue).
    pub discarded_chars: usize,
}

/// A successful call: the answer (a stream's adds up what was delivered), which target
/// finished it, which targets' output it holds, and every attempt on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// `answer.usage` is the answer's own: the first contributor's input tokens, and the output
    /// tokens of every contributor (unknown if one of them reported none).
    pub answer: Answer,
    pub target: usize,
    /// The targets whose output makes up the answer, in order (more than one after a continue).
    pub contributors: Vec<usize>,
    pub legs: Vec<Leg>,
    /// What every leg's provider reported, added up: what the call was billed.
    pub billed_usage: Usage,
}

/// A failed call: the real failure, unchanged, with every leg attached. After a resume that
/// failed too, that is the break the resume tried to recover from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub failure: Failure,
    pub target: Option<String>,
    pub legs: Vec<Leg>,
    pub billed_usage: Usage,
}

impl Baton {
    pub fn new(config: Config) -> Baton {
        let rotations = vec![Rotation::default(); config.round_robin_nodes];
        let redactor = Arc::new(Redactor::new(config.secrets()));
        let health = Arc::new(Mutex::new(Health::new(config.health)));
        let target_names = config.targets.iter().map(|t| t.name.clone()).collect();
        Baton { config: Arc::new(config), redactor, rotations, health, target_names }
    }

    /// Every target's breaker and the retry budget, at `now`.
    pub fn health(&self, now: u64) -> HealthSnapshot {
        lock(&self.health).snapshot(&self.target_names, now)
    }

    /// Shares health through a store: from now on the store decides probes ([`Health::follow`]).
    pub fn follow_store(&mut self) {
        lock(&self.health).follow();
    }

    /// The names of every target a call on `route` may reach (read from the route in place), when
    /// the store must be asked about them before the call (see [`Health::stale`]); none while
    /// this Baton's word on them is fresh, or for an unknown route.
    pub fn stale_targets(&self, route: &str, now: u64, max_age_ms: u64) -> Option<Vec<String>> {
        let targets: Vec<String> =
            self.config.route_targets(route).into_iter().map(|t| self.config.targets[t].name.clone()).collect();
        lock(&self.health).stale(&targets, now, max_age_ms).then_some(targets)
    }

    /// Takes a store's view as this Baton's state.
    pub fn absorb(&mut self, view: &HealthView, now: u64) {
        lock(&self.health).absorb(view, now);
    }

    /// This Baton's answer to a replica that follows it as a store, at `now` ([`Health::view`]).
    pub fn health_view(&self, targets: &[String], now: u64) -> HealthView {
        lock(&self.health).view(targets, now)
    }

    /// Runs `f` on the breakers and retry budget, for what a replica that follows this Baton
    /// reports.
    pub fn with_health<R>(&self, f: impl FnOnce(&mut Health) -> R) -> R {
        f(&mut lock(&self.health))
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The config, shared with the calls started from it (no copy).
    pub fn shared_config(&self) -> Arc<Config> {
        Arc::clone(&self.config)
    }

    /// Starts a call on `route` (a route name, or a target name used as its own route) at
    /// `now`. The first `Send` is ready in [`Call::poll`].
    pub fn start(
        &mut self,
        route: &str,
        options: CallOptions,
        now: u64,
        random: Box<dyn RandomSource>,
    ) -> Result<Call, FieldError> {
        let root = self.config.strategy(route).ok_or_else(|| {
            FieldError::new(
                "route",
                format!(
                    "{} is not a route or target in the config (known: {})",
                    route.to_json(),
                    self.config.route_names().join(", ")
                ),
            )
        })?;
        let mut picks = vec![0; self.rotations.len()];
        self.pick_round_robins(&root, &mut picks);
        let deadline_ms = options.deadline_ms.or(self.config.deadline_ms);
        let mut call = Call {
            config: Arc::clone(&self.config),
            redactor: Arc::clone(&self.redactor),
            health: Arc::clone(&self.health),
            admissions: vec![None; self.config.targets.len()],
            root,
            round_robin_picks: picks,
            fastest_orders: vec![Vec::new(); self.config.fastest_nodes],
            frames: Vec::new(),
            budget: Budget::starting(now.saturating_sub(options.waited_ms), deadline_ms),
            started_at: now,
            stream: options.stream,
            resettable: options.resettable,
            committed: false,
            delivery: Delivery::default(),
            contributors: Vec::new(),
            resumes: 0,
            broken: None,
            splice: None,
            state: State::Done,
            racers: Vec::new(),
            hedges: 0,
            attempts: 0,
            legs: Vec::new(),
            actions: VecDeque::new(),
            random,
        };
        if self.config.fastest_nodes > 0 {
            let root = std::mem::replace(&mut call.root, Strategy::Target(0));
            call.rank_fastest(&root);
            call.root = root;
        }
        call.start_leg(now, None);
        Ok(call)
    }

    /// Advances the rotation of every round-robin node this call can reach, once.
    fn pick_round_robins(&mut self, s: &Strategy, picks: &mut [usize]) {
        match s {
            Strategy::Target(_) => {}
            Strategy::Retry(p) => self.pick_round_robins(&p.inner, picks),
            Strategy::Fallback { members, .. } | Strategy::Fastest { members, .. } => {
                members.iter().for_each(|m| self.pick_round_robins(m, picks))
            }
            Strategy::RoundRobin { members, weights, node } => {
                let pick = self.rotations[*node].next(weights);
                picks[*node] = pick;
                self.pick_round_robins(&members[pick], picks);
            }
        }
    }
}

/// Smooth weighted round robin (as in nginx): deterministic, and spreads heavy members out.
#[derive(Debug, Clone, Default)]
struct Rotation {
    current: Vec<i64>,
}

impl Rotation {
    fn next(&mut self, weights: &[u32]) -> usize {
        self.current.resize(weights.len(), 0);
        let total: i64 = weights.iter().map(|w| i64::from(*w)).sum();
        let mut best = 0;
        for (i, w) in weights.iter().enumerate() {
            self.current[i] += i64::from(*w);
            if self.current[i] > self.current[best] {
                best = i;
            }
        }
        self.current[best] -= total;
        best
    }
}

/// Where the call is inside its strategy tree: one frame per strategy node above the current
/// target, outermost first.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// `attempt` (1-based) of a retry node is running.
    Retry {
        attempt: u32,
    },
    Fallback {
        member: usize,
    },
    RoundRobin {
        member: usize,
    },
    /// The member at `position` of its node's ranking (`Call::fastest_orders`) is running.
    Fastest {
        position: usize,
        member: usize,
    },
}

#[derive(Debug)]
enum State {
    Attempting(Attempt),
    /// Waiting out a backoff; then the current frames' target is tried again.
    Backoff {
        until: u64,
    },
    Done,
}

#[derive(Debug, Clone, Copy)]
struct Attempt {
    id: AttemptId,
    target: usize,
    started_at: u64,
    headers_at: Option<u64>,
    first_content_at: Option<u64>,
    last_content_at: Option<u64>,
    /// A whole answer's body: when its latest bytes arrived, as the driver reported them.
    body_at: Option<u64>,
    skipped_frames: u32,
    /// The token counts its provider reported so far.
    usage: Option<Usage>,
    resumed_from: Option<ResumedFrom>,
    /// When the next member of a hedging fallback starts beside this attempt if it has shown
    /// nothing, and whether that threshold was learned.
    hedge_at: Option<(u64, bool)>,
}

impl Attempt {
    /// Keeps what the provider reported; a report with no count changes nothing.
    fn note_usage(&mut self, usage: Usage) {
        if usage != Usage::default() {
            self.usage = Some(self.usage.unwrap_or_default().updated_by(usage));
        }
    }
}

/// An attempt a hedge raced past, still in flight: it wins if it shows content first.
#[derive(Debug)]
struct Racer {
    attempt: Attempt,
    /// Where it stands in the strategy tree, for when it wins.
    frames: Vec<Frame>,
    /// The depth of the hedging fallback's frame.
    depth: usize,
}

/// How an attempt ended, for its leg.
#[derive(Clone, Copy)]
enum LegEnd<'a> {
    Ok,
    /// Another leg of a hedge showed content first: aborted, no word on the target's health.
    Lost,
    Failed(&'a Failure),
}

/// A stream that broke after its start and is being resumed: kept until a resuming attempt
/// shows content, so that if none does, the call ends with this failure.
#[derive(Debug, Clone)]
struct Break {
    failure: Failure,
    attempt: AttemptId,
    target: usize,
    /// How long the broken attempt took to its first and to its last content: the least a
    /// continuation, or a restart that must say it all again, is likely to need.
    first_content_ms: u64,
    last_content_ms: u64,
}

/// One logical call in progress. See the module docs for the protocol.
pub struct Call {
    config: Arc<Config>,
    redactor: Arc<Redactor>,
    health: Arc<Mutex<Health>>,
    /// Each target's admission, taken when the call first reaches it.
    admissions: Vec<Option<Admission>>,
    root: Strategy,
    round_robin_picks: Vec<usize>,
    /// Each fastest node's members, fastest first, ranked when the call starts.
    fastest_orders: Vec<Vec<usize>>,
    frames: Vec<Frame>,
    budget: Budget,
    started_at: u64,
    stream: bool,
    resettable: bool,
    committed: bool,
    delivery: Delivery,
    /// The attempts (and their targets) whose output is in the answer, in order.
    contributors: Vec<(AttemptId, usize)>,
    /// Breaks resumed so far.
    resumes: u32,
    broken: Option<Break>,
    /// Announced before a resuming attempt's first content.
    splice: Option<Splice>,
    state: State,
    /// Earlier attempts a hedge raced past, still in flight (none once a leg showed content).
    racers: Vec<Racer>,
    /// Hedges started so far.
    hedges: u32,
    /// Attempts sent so far.
    attempts: u32,
    /// One per attempt that ended, in the order they ended.
    legs: Vec<Leg>,
    actions: VecDeque<Action>,
    random: Box<dyn RandomSource>,
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("frames", &self.frames)
            .field("budget", &self.budget)
            .field("state", &self.state)
            .field("racers", &self.racers)
            .field("committed", &self.committed)
            .field("resumes", &self.resumes)
            .field("legs", &self.legs)
            .finish_non_exhaustive()
    }
}

impl Call {
    /// The next thing the driver must do, in order.
    pub fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When the engine must next be woken with [`Call::handle_timeout`], if ever.
    pub fn poll_timeout(&self) -> Option<u64> {
        let own = match &self.state {
            State::Attempting(a) => self.expiry(a).map(|(at, _)| at).into_iter().chain(a.hedge_at.map(|h| h.0)).min(),
            State::Backoff { until } => Some(*until),
            State::Done => None,
        };
        self.racers.iter().filter_map(|r| self.expiry(&r.attempt).map(|(at, _)| at)).chain(own).min()
    }

    /// Time passed: end whatever is due at `now`.
    pub fn handle_timeout(&mut self, now: u64) {
        self.settle(now);
    }

    /// The attempt's response headers arrived (any status).
    pub fn on_headers(&mut self, attempt: AttemptId, now: u64) {
        self.settle(now);
        if let Some(a) = self.current(attempt) {
            a.headers_at.get_or_insert(now);
        }
    }

    /// Bytes of a whole answer's body had arrived by `at`: they restart its idle limit. The driver
    /// reports this when a timer is due rather than on every read, so a whole answer costs no
    /// extra wake-up; `at` is when the bytes came, so the limit is measured from them. Streams
    /// restart it with visible deltas instead.
    pub fn on_body(&mut self, attempt: AttemptId, at: u64) {
        let stream = self.stream;
        if let Some(a) = self.current(attempt).filter(|_| !stream) {
            a.body_at = a.body_at.max(Some(at));
        }
    }

    /// A stream's attempt decoded these deltas (one network read's worth). Visible content ends
    /// the first-token wait, resets the idle limit, commits the stream at its first piece and is
    /// delivered (`Action::Deliver`); other deltas are held until visible content follows;
    /// `Delta::Done` ends the call with the delivered answer, and `Delta::Usage` is kept on the
    /// attempt's leg. Deltas of an attempt that is already over (its limit or the deadline passed
    /// first) are dropped.
    pub fn on_deltas(&mut self, attempt: AttemptId, now: u64, deltas: impl IntoIterator<Item = Delta>) {
        self.settle(now);
        let mut shown = Vec::new();
        for mut delta in deltas {
            let Some(a) = self.current(attempt) else { break };
            if a.resumed_from.is_some_and(|r| r.mode == ResumeMode::Continue) {
                self.delivery.drop_echo(&mut delta);
            }
            let Some(target) = self.current(attempt).map(|a| a.target) else { break };
            let target = &self.config.targets[target];
            delta.name_issuer(target.format.as_str(), &target.model);
            if !matches!(delta, Delta::Usage { .. } | Delta::Skipped { .. }) {
                self.win(attempt, now);
            }
            let Some(a) = self.current(attempt) else { break };
            let result = match delta {
                Delta::Usage { usage } => {
                    a.note_usage(usage);
                    Ok(())
                }
                Delta::Done { finish_reason, usage, model } => {
                    a.note_usage(usage);
                    let a = *a;
                    if self.delivery.holds() {
                        self.commit(attempt, a.target);
                    }
                    self.splice_in(a, &mut shown);
                    let held = self.delivery.deliver_held(&mut shown);
                    if held.is_ok() {
                        self.deliver(shown);
                        let delivery = std::mem::take(&mut self.delivery);
                        self.succeed(a, now, delivery.into_answer(finish_reason, usage, model));
                        return;
                    }
                    held
                }
                Delta::Skipped { reason } => {
                    self.deliver(std::mem::take(&mut shown));
                    self.skip_frame(attempt, reason)
                }
                d if d.is_visible() => {
                    a.first_content_at.get_or_insert(now);
                    a.last_content_at = Some(now);
                    let a = *a;
                    self.commit(attempt, a.target);
                    self.splice_in(a, &mut shown);
                    self.delivery.deliver(d, &mut shown)
                }
                d => self.delivery.hold(d),
            };
            if let Err(failure) = result {
                self.deliver(shown);
                self.abort_and_fail(attempt, now, failure);
                return;
            }
        }
        self.deliver(shown);
    }

    /// A whole (non-streamed) answer arrived.
    pub fn on_answer(&mut self, attempt: AttemptId, now: u64, mut answer: Answer) {
        self.settle(now);
        if let Some(target) = self.current(attempt).map(|a| a.target) {
            let target = &self.config.targets[target];
            answer.name_issuer(target.format.as_str(), &target.model);
        }
        if self.current(attempt).is_some() {
            self.win(attempt, now);
        }
        if let Some(a) = self.current(attempt) {
            a.note_usage(answer.usage);
            let a = *a;
            self.succeed(a, now, answer);
        }
    }

    /// The attempt failed (transport, HTTP status, protocol, in-stream error). Every configured
    /// secret the provider or the runtime echoed into the failure is redacted here, where it
    /// enters the core, so no event, leg, error or gateway body can carry it.
    pub fn on_failure(&mut self, attempt: AttemptId, now: u64, failure: Failure) {
        let failure = self.redactor.redact_failure(failure);
        self.settle(now);
        if let Some(i) = self.racers.iter().position(|r| r.attempt.id == attempt) {
            // A raced-past attempt failed: the legs still running go on without it.
            let racer = self.racers.remove(i);
            self.close_leg(&racer.attempt, now, LegEnd::Failed(&failure));
        } else if let Some(a) = self.current(attempt).copied() {
            self.fail(a, now, failure);
        }
    }

    /// The caller cancelled: abort any attempt, end the call with `cancelled` at once.
    pub fn cancel(&mut self, now: u64) {
        self.settle(now);
        for racer in std::mem::take(&mut self.racers) {
            self.actions.push_back(Action::Abort { attempt: racer.attempt.id, failure: Failure::Cancelled });
            self.close_leg(&racer.attempt, now, LegEnd::Failed(&Failure::Cancelled));
        }
        match std::mem::replace(&mut self.state, State::Done) {
            State::Done => {}
            State::Attempting(a) => {
                self.actions.push_back(Action::Abort { attempt: a.id, failure: Failure::Cancelled });
                self.close_leg(&a, now, LegEnd::Failed(&Failure::Cancelled));
                self.finish_err(Failure::Cancelled);
            }
            State::Backoff { .. } => self.finish_err(Failure::Cancelled),
        }
    }

    /// The attempt's first content (or its whole answer) decides a hedge's race: every other
    /// leg is aborted at once and lost, and the call goes on with this one alone, which is never
    /// hedged from here on. The race is decided by the first delta that carries content, a tool
    /// call's opening name included (shown only once its arguments follow), so that nothing a
    /// losing leg sent is ever held or shown.
    fn win(&mut self, id: AttemptId, now: u64) {
        if let Some(i) = self.racers.iter().position(|r| r.attempt.id == id) {
            let winner = self.racers.remove(i);
            if let State::Attempting(frontier) = std::mem::replace(&mut self.state, State::Attempting(winner.attempt)) {
                self.lose(&frontier, now);
            }
            self.frames = winner.frames;
        }
        for racer in std::mem::take(&mut self.racers) {
            self.lose(&racer.attempt, now);
        }
        if let State::Attempting(a) = &mut self.state {
            a.hedge_at = None;
        }
    }

    fn lose(&mut self, a: &Attempt, now: u64) {
        self.actions.push_back(Action::Abort { attempt: a.id, failure: Failure::Cancelled });
        self.close_leg(a, now, LegEnd::Lost);
    }

    /// The innermost fallback with `hedge` above the current target that has a member after
    /// the one running: its depth, its policy and that member.
    fn hedge_node(&self) -> Option<(usize, Hedge, usize)> {
        (0..self.frames.len()).rev().find_map(|d| match (self.node(d), self.frames[d]) {
            (Strategy::Fallback { members, hedge: Some(policy), .. }, Frame::Fallback { member })
                if member + 1 < members.len() =>
            {
                Some((d, **policy, member))
            }
            _ => None,
        })
    }

    /// When an attempt on `target` sent at `now` is hedged, if it shows nothing: the learned
    /// threshold (the percentile of the target's recent times to first token, at least the
    /// floor, at most `afterMs`: a target slow for a while would otherwise push its own
    /// threshold up) once enough is known, else `afterMs`. Never after the stream committed, nor
    /// past the hedging fallback's `max`.
    fn hedge_at(&self, target: usize, now: u64) -> Option<(u64, bool)> {
        let health = lock(&self.health);
        let samples = health.latencies(&self.config.targets[target].name);
        let (ms, learned) = self.hedge_threshold(|p, min| percentile_of(samples, p, min))?;
        Some((now.saturating_add(ms), learned))
    }

    /// The hedge threshold in ms, and whether it is learned, given `percentile(p, min_samples)`
    /// of the target's times to first token; see [`Self::hedge_at`].
    fn hedge_threshold(&self, percentile: impl FnOnce(f64, u32) -> Option<u64>) -> Option<(u64, bool)> {
        let (_, policy, _) = self.hedge_node().filter(|(_, p, _)| !self.committed && self.hedges < p.max)?;
        let learned = policy
            .after_percentile
            .and_then(|p| percentile(p, policy.min_samples))
            .map(|ms| (ms.max(policy.floor_ms).min(policy.after_ms.unwrap_or(u64::MAX)), true));
        learned.or(policy.after_ms.map(|ms| (ms, false)))
    }

    /// The attempt `a` has shown nothing by its hedge threshold: the next admitted member of the
    /// hedging fallback starts beside it, and `a` races on. A hedge spends from the retry budget
    /// and is refused, with a warning, when the budget is spent.
    fn hedge(&mut self, a: Attempt, now: u64, learned: bool) {
        if let State::Attempting(running) = &mut self.state {
            running.hedge_at = None;
        }
        let Some((depth, _, member)) = self.hedge_node() else { return };
        let Strategy::Fallback { members, .. } = self.node(depth) else { return };
        let members = members.len();
        let raced = std::mem::take(&mut self.frames);
        let mut next = member + 1;
        let target = loop {
            self.frames = raced[..depth].to_vec();
            self.frames.push(Frame::Fallback { member: next });
            let target = self.descend();
            match self.admission(target, now) {
                Admission::Skip { reopens_in_ms, cause } => self.skip_event(target, reopens_in_ms, cause),
                _ => break target,
            }
            next += 1;
            if next == members {
                self.frames = raced;
                return;
            }
        };
        let from = self.config.targets[a.target].name.clone();
        if !lock(&self.health).try_spend_retry(now) {
            let message = format!("not hedged: {}; {from} goes on alone", budget_spent(&self.config));
            self.event(Event::Warning { target: from, attempt: a.id.0, message });
            self.frames = raced;
            return;
        }
        self.hedges += 1;
        self.racers.push(Racer { attempt: Attempt { hedge_at: None, ..a }, frames: raced, depth });
        let to = self.config.targets[target].name.clone();
        let after_ms = now - a.started_at;
        self.event(Event::Hedge { from, to, attempt: self.next_attempt_id().0, after_ms, learned });
        self.send(now, target, None, None);
    }

    /// The call would end with an error while an attempt a hedge raced past is still in flight:
    /// that attempt goes on as the call's only one, past every member of its hedging fallback.
    /// False when there is none.
    fn promote_racer(&mut self) -> bool {
        let Some(racer) = self.racers.pop() else { return false };
        let Strategy::Fallback { members, .. } = node_at(&self.root, &racer.frames, racer.depth) else { return false };
        let last = members.len() - 1;
        self.frames = racer.frames[..racer.depth].to_vec();
        self.frames.push(Frame::Fallback { member: last });
        self.state = State::Attempting(racer.attempt);
        true
    }

    /// A stream's first delivery commits it to `attempt`: nothing is retried from here on.
    fn commit(&mut self, attempt: AttemptId, target: usize) {
        if self.stream && !self.committed {
            self.committed = true;
            self.contributors.push((attempt, target));
            self.actions.push_back(Action::Commit { attempt, target, attempts: self.attempts });
        }
    }

    /// A resuming attempt is about to show its first content (or end): the break is recovered.
    /// Announces the seam, after what was shown before it, and a restart starts the answer over.
    fn splice_in(&mut self, a: Attempt, shown: &mut Vec<Delta>) {
        let Some(mut splice) = self.splice.take() else { return };
        self.deliver(std::mem::take(shown));
        self.broken = None;
        if splice.mode == ResumeMode::Restart {
            splice.discarded_chars = self.delivery.shown_chars();
            self.delivery.start_over();
            self.contributors.clear();
        }
        self.contributors.push((a.id, a.target));
        self.actions.push_back(Action::Splice(splice));
    }

    /// The attempt's own deltas failed it (a cap): its body may still be streaming, so the
    /// driver is told to close it before anything else happens.
    fn abort_and_fail(&mut self, attempt: AttemptId, now: u64, failure: Failure) {
        self.actions.push_back(Action::Abort { attempt, failure: failure.clone() });
        self.on_failure(attempt, now, failure);
    }

    /// The decoder skipped a malformed frame of the current attempt (one that could not hold part
    /// of a tool call). Tell the caller, unless the target is strict about frames or the stream
    /// has skipped more than [`MAX_SKIPPED_FRAMES`]: then the attempt fails as a protocol error.
    fn skip_frame(&mut self, attempt: AttemptId, reason: String) -> Result<(), Failure> {
        let Some(a) = self.current(attempt) else { return Ok(()) };
        let (skipped, target) = (a.skipped_frames + 1, a.target);
        let target = &self.config.targets[target];
        if target.strict_frames {
            let path = format!("targets.{}.strictFrames", target.name);
            return Err(Failure::Protocol {
                message: format!("{reason} ({path} is true: a malformed frame fails the attempt)"),
            });
        }
        if skipped > MAX_SKIPPED_FRAMES {
            return Err(Failure::Protocol {
                message: format!("more than {MAX_SKIPPED_FRAMES} malformed stream frames; the last: {reason}"),
            });
        }
        let message = self.redactor.redact(&format!("skipped a malformed stream frame: {reason}")).into_owned();
        self.event(Event::Warning { target: target.name.clone(), attempt: attempt.0, message });
        if let Some(a) = self.current(attempt) {
            a.skipped_frames = skipped;
        }
        Ok(())
    }

    fn deliver(&mut self, shown: Vec<Delta>) {
        if !shown.is_empty() {
            self.actions.push_back(Action::Deliver(shown));
        }
    }

    fn succeed(&mut self, a: Attempt, now: u64, mut answer: Answer) {
        self.close_leg(&a, now, LegEnd::Ok);
        self.state = State::Done;
        if self.contributors.is_empty() {
            self.contributors.push((a.id, a.target));
        }
        let usages: Vec<Option<Usage>> = self
            .contributors
            .iter()
            .map(|(id, _)| self.legs.iter().find(|l| l.attempt == id.0).and_then(|l| l.usage))
            .collect();
        answer.usage = Usage {
            input_tokens: usages[0].and_then(|u| u.input_tokens),
            output_tokens: usages.iter().map(|u| u.and_then(|u| u.output_tokens)).sum(),
        };
        let contributors = self.contributors.iter().map(|(_, target)| *target).collect();
        let legs = self.legs.clone();
        let billed_usage = self.billed_usage();
        lock(&self.health).deposit(now);
        let served = Served { answer, target: a.target, contributors, legs, billed_usage };
        self.actions.push_back(Action::Finish(Ok(served)));
    }

    fn billed_usage(&self) -> Usage {
        Usage::sum(self.legs.iter().filter_map(|l| l.usage))
    }

    /// The attempt `id`, if it is still in flight (the running one or one a hedge raced past).
    fn current(&mut self, id: AttemptId) -> Option<&mut Attempt> {
        if let State::Attempting(a) = &mut self.state {
            if a.id == id {
                return Some(a);
            }
        }
        self.racers.iter_mut().map(|r| &mut r.attempt).find(|a| a.id == id)
    }

    /// The earliest limit that will end this attempt, and the failure it means. On a tie the
    /// deadline wins: it is the truth the caller asked for, and it is final.
    fn expiry(&self, a: &Attempt) -> Option<(u64, Failure)> {
        let t: Timeouts = self.config.targets[a.target].timeouts;
        let member = |limit: Limit, from: Option<u64>, ms: Option<u64>| {
            Some((from?.saturating_add(ms?), Failure::Timeout { limit, limit_ms: ms? }))
        };
        let waiting_for_content = self.stream && a.first_content_at.is_none();
        let candidates = [
            self.budget
                .expires_at
                .zip(self.budget.limit_ms)
                .map(|(at, ms)| (at, Failure::Timeout { limit: Limit::Deadline, limit_ms: ms })),
            member(Limit::Total, Some(a.started_at), t.total_ms),
            member(Limit::Headers, a.headers_at.is_none().then_some(a.started_at), t.headers_ms),
            member(Limit::FirstToken, waiting_for_content.then_some(a.started_at), t.first_token_ms),
            // A stream goes idle between visible deltas; a whole answer's body, between its bytes.
            member(Limit::Idle, if self.stream { a.last_content_at } else { a.body_at.or(a.headers_at) }, t.idle_ms),
        ];
        candidates.into_iter().flatten().fold(None, |best: Option<(u64, Failure)>, c| match best {
            Some(b) if b.0 <= c.0 => Some(b),
            _ => Some(c),
        })
    }

    /// Ends everything already due at `now`, in order: raced-past attempts first, so that at the
    /// deadline the running attempt's failure is the call's last word.
    fn settle(&mut self, now: u64) {
        loop {
            let due = self.racers.iter().enumerate().find_map(|(i, r)| {
                self.expiry(&r.attempt).filter(|(at, _)| now >= *at).map(|(_, failure)| (i, failure))
            });
            if let Some((i, failure)) = due {
                let racer = self.racers.remove(i);
                self.actions.push_back(Action::Abort { attempt: racer.attempt.id, failure: failure.clone() });
                self.close_leg(&racer.attempt, now, LegEnd::Failed(&failure));
                continue;
            }
            match &self.state {
                State::Attempting(a) => {
                    let a = *a;
                    match (self.expiry(&a), a.hedge_at) {
                        (Some((at, failure)), _) if now >= at => {
                            self.actions.push_back(Action::Abort { attempt: a.id, failure: failure.clone() });
                            self.fail(a, now, failure);
                        }
                        (_, Some((at, learned))) if now >= at => self.hedge(a, now, learned),
                        _ => return,
                    }
                }
                State::Backoff { until } if now >= *until => self.start_leg(now, None),
                _ => return,
            }
        }
    }

    /// Records the failed attempt, then asks each enclosing strategy, innermost first, whether
    /// it may try again; the first that may, does. Otherwise the call ends with this failure.
    fn fail(&mut self, a: Attempt, now: u64, failure: Failure) {
        self.close_leg(&a, now, LegEnd::Failed(&failure));
        self.state = State::Done;
        if self.committed {
            if !self.resume(&a, now, &failure) {
                match self.broken.take() {
                    Some(broken) => {
                        let target = self.config.targets[broken.target].name.clone();
                        self.finish_with(broken.failure, Some(target));
                    }
                    None => self.finish_err(failure),
                }
            }
            return;
        }
        let failed_target = self.config.targets[a.target].name.clone();
        while let Some(depth) = self.frames.len().checked_sub(1) {
            let next = match (node_at(&self.root, &self.frames, depth), self.frames[depth]) {
                (Strategy::Retry(policy), Frame::Retry { attempt }) => {
                    let mv = if self.fallback_above_moves_on(depth, &failure) {
                        Move::RetryBeforeFailover
                    } else {
                        Move::Retry
                    };
                    let may = attempt < policy.attempts
                        && gate::allows(mv, &failure, self.committed, policy.retry_on.as_ref())
                        && self.admissions[a.target] != Some(Admission::Probe);
                    let delay = backoff::wait_before_retry(policy, &failure, attempt - 1, self.random.as_mut());
                    match delay {
                        Some(delay_ms) if may && self.budget.fits(now, delay_ms) => {
                            if lock(&self.health).try_spend_retry(now) {
                                Next::Retry { attempt, of: policy.attempts, delay_ms }
                            } else {
                                let message = format!(
                                    "not retried: {}; the failure goes to the next member or the caller",
                                    budget_spent(&self.config)
                                );
                                self.event(Event::Warning { target: failed_target.clone(), attempt: a.id.0, message });
                                Next::Up
                            }
                        }
                        _ => Next::Up,
                    }
                }
                (Strategy::Fallback { members, fallback_on, .. }, Frame::Fallback { member })
                    if member + 1 < members.len()
                        && gate::allows(Move::Failover, &failure, self.committed, fallback_on.as_deref()) =>
                {
                    Next::Failover { frame: Frame::Fallback { member: member + 1 } }
                }
                (Strategy::Fastest { members, node }, Frame::Fastest { position, .. })
                    if position + 1 < members.len() && gate::allows(Move::Failover, &failure, self.committed, None) =>
                {
                    let member = self.fastest_orders[*node][position + 1];
                    Next::Failover { frame: Frame::Fastest { position: position + 1, member } }
                }
                _ => Next::Up,
            };
            match next {
                Next::Retry { attempt, of, delay_ms } => {
                    self.frames[depth] = Frame::Retry { attempt: attempt + 1 };
                    self.frames.truncate(depth + 1);
                    let cause = FailureInfo(failure);
                    self.event(Event::Retry { target: failed_target, attempt, of, delay_ms, cause });
                    self.state = State::Backoff { until: now + delay_ms };
                    self.settle(now);
                    return;
                }
                Next::Failover { frame } => {
                    lock(&self.health).spend_hop(now);
                    self.frames[depth] = frame;
                    self.frames.truncate(depth + 1);
                    self.start_leg(now, Some((failed_target, failure)));
                    return;
                }
                Next::Up => {
                    self.frames.pop();
                }
            }
        }
        self.finish_err(failure);
    }

    /// A committed stream's attempt `a` failed: resumes the stream on a later member of the
    /// innermost fallback with `afterStart`, if its rules allow. Returns whether it did.
    ///
    /// A fresh break (the attempt had shown content) counts against `afterStart.attempts` and
    /// must be a failure that fallback would fail over on. A resuming attempt that failed before
    /// showing anything hands over to the next candidate (or, a continuation refused with a 4xx
    /// request error, restarts on the same member where the reader can discard).
    fn resume(&mut self, a: &Attempt, now: u64, failure: &Failure) -> bool {
        if gate::is_final(failure) {
            return false;
        }
        let Some((depth, policy, member, members)) = self.resume_node() else { return false };
        let recovering = self.broken.is_some();
        if !recovering {
            let Strategy::Fallback { fallback_on, .. } = self.node(depth) else { return false };
            if self.resumes >= policy.attempts || !gate::allows_resume(failure, fallback_on.as_deref()) {
                return false;
            }
        }
        let refused_prefill =
            a.resumed_from.is_some_and(|r| r.mode == ResumeMode::Continue) && gate::is_request_error(failure);
        let next = if refused_prefill && self.resettable {
            Some((member, ResumeMode::Restart))
        } else {
            self.resume_candidate(depth, policy, member + 1, members, now)
        };
        let Some((member, mode)) = next else { return false };

        let broken = self.broken.clone().unwrap_or_else(|| Break {
            failure: failure.clone(),
            attempt: a.id,
            target: a.target,
            first_content_ms: a.first_content_at.map_or(0, |t| t - a.started_at),
            last_content_ms: a.last_content_at.map_or(0, |t| t - a.started_at),
        });
        let estimate = match mode {
            ResumeMode::Continue => broken.first_content_ms,
            ResumeMode::Restart => broken.last_content_ms,
        };
        let needed = policy.min_remaining_ms.max(estimate);
        if let Some(left) = self.budget.remaining(now).filter(|left| *left < needed) {
            let message = format!(
                "the stream that broke was not resumed: {left} ms of the deadline were left, and a {} needs about {needed} ms (afterStart.minRemainingMs is {}, the broken attempt took {estimate} ms to {})",
                mode.as_str(),
                policy.min_remaining_ms,
                if mode == ResumeMode::Continue { "its first content" } else { "its last content" },
            );
            let target = self.config.targets[a.target].name.clone();
            self.event(Event::Warning { target, attempt: a.id.0, message });
            return false;
        }

        if !recovering {
            self.resumes += 1;
            self.broken = Some(broken.clone());
        }
        self.frames[depth] = Frame::Fallback { member };
        self.frames.truncate(depth + 1);
        let target = self.descend();
        let (prefill, kept_chars) = match mode {
            ResumeMode::Continue => {
                let (prefill, kept) = self.delivery.continue_from();
                (Some(prefill), kept)
            }
            ResumeMode::Restart => (None, 0),
        };
        let id = self.next_attempt_id();
        let (from, to) = (self.config.targets[a.target].name.clone(), self.config.targets[target].name.clone());
        self.event(Event::Resume {
            mode,
            from: from.clone(),
            to: to.clone(),
            attempt: id.0,
            cause: FailureInfo(failure.clone()),
            kept_chars,
        });
        self.splice = Some(Splice {
            mode,
            attempt: id,
            from: self.config.targets[broken.target].name.clone(),
            to,
            cause: broken.failure,
            kept_chars,
            discarded_chars: 0,
        });
        let resumed_from = ResumedFrom { attempt: broken.attempt.0, mode, kept_chars };
        self.send(now, target, Some(resumed_from), prefill);
        true
    }

    /// The innermost fallback with `afterStart` above the current target: its depth, its policy,
    /// the member running, and how many members it has.
    fn resume_node(&self) -> Option<(usize, AfterStart, usize, usize)> {
        (0..self.frames.len()).rev().find_map(|d| match (self.node(d), self.frames[d]) {
            (Strategy::Fallback { members, after_start: Some(policy), .. }, Frame::Fallback { member }) => {
                Some((d, **policy, member, members.len()))
            }
            _ => None,
        })
    }

    /// Which member of the fallback at frame `depth`, from `first` on, resumes, and how: in
    /// "continue" mode, the first whose target takes a prefill, if the answer can be continued
    /// at all; otherwise a restart on the first, where the reader can discard what it saw.
    /// Members whose circuit breaker is open are passed over.
    fn resume_candidate(
        &mut self,
        depth: usize,
        policy: AfterStart,
        first: usize,
        members: usize,
        now: u64,
    ) -> Option<(usize, ResumeMode)> {
        let Strategy::Fallback { members: list, .. } = self.node(depth) else { return None };
        let entries: Vec<usize> = list.iter().map(|m| self.entry_target(m)).collect();
        let usable = |call: &mut Call, m: usize| !matches!(call.admission(entries[m], now), Admission::Skip { .. });
        if policy.mode == ResumeMode::Continue && self.delivery.can_continue() {
            let takes_prefill = |m: &usize| self.config.targets[entries[*m]].prefill;
            let candidates: Vec<usize> = (first..members).filter(takes_prefill).collect();
            if let Some(m) = candidates.into_iter().find(|m| usable(self, *m)) {
                return Some((m, ResumeMode::Continue));
            }
        }
        if !self.resettable {
            return None;
        }
        (first..members).find(|m| usable(self, *m)).map(|m| (m, ResumeMode::Restart))
    }

    /// The target a member would try first.
    fn entry_target(&self, member: &Strategy) -> usize {
        match member {
            Strategy::Target(i) => *i,
            Strategy::Retry(p) => self.entry_target(&p.inner),
            Strategy::Fallback { members, .. } => self.entry_target(&members[0]),
            Strategy::RoundRobin { members, node, .. } => self.entry_target(&members[self.round_robin_picks[*node]]),
            Strategy::Fastest { members, node } => self.entry_target(&members[self.fastest_orders[*node][0]]),
        }
    }

    /// Ranks the members of every fastest node in `s` by their entry target's median recent time
    /// to first token, fastest first (a target with none known first of all, to learn it; ties in
    /// config order). A share of calls ([`EXPLORE_SHARE`]) puts another member, drawn at random,
    /// first: a member that got faster is noticed only if it is tried. Inner nodes first, since a
    /// member's entry target depends on them.
    fn rank_fastest(&mut self, s: &Strategy) {
        match s {
            Strategy::Target(_) => {}
            Strategy::Retry(p) => self.rank_fastest(&p.inner),
            Strategy::Fallback { members, .. } | Strategy::RoundRobin { members, .. } => {
                members.iter().for_each(|m| self.rank_fastest(m))
            }
            Strategy::Fastest { members, node } => {
                members.iter().for_each(|m| self.rank_fastest(m));
                let entries: Vec<usize> = members.iter().map(|m| self.entry_target(m)).collect();
                let health = lock(&self.health);
                let median = |t: usize| health.latency_percentile(&self.config.targets[t].name, 50.0, 1).unwrap_or(0);
                let medians: Vec<u64> = entries.iter().map(|t| median(*t)).collect();
                drop(health);
                // Members by median, ties in config order: an insertion sort, smaller in the wasm
                // than the standard one, over a handful of members.
                let mut order: Vec<usize> = Vec::with_capacity(medians.len());
                for m in 0..medians.len() {
                    let at = order.iter().position(|o| medians[*o] > medians[m]).unwrap_or(order.len());
                    order.insert(at, m);
                }
                if order.len() > 1 && self.random.next_unit() < EXPLORE_SHARE {
                    let pick = 1 + (self.random.next_unit() * (order.len() - 1) as f64) as usize;
                    let explored = order.remove(pick.min(order.len() - 1));
                    order.insert(0, explored);
                }
                self.fastest_orders[*node] = order;
            }
        }
    }

    /// Whether a fallback above frame `depth` has another member that would take over after
    /// `failure` at once: then a retry at `depth` leaves a silent member to it (see [`gate`]).
    fn fallback_above_moves_on(&self, depth: usize, failure: &Failure) -> bool {
        (0..depth).any(|d| match (node_at(&self.root, &self.frames, d), self.frames[d]) {
            (Strategy::Fallback { members, fallback_on, .. }, Frame::Fallback { member }) => {
                member + 1 < members.len()
                    && gate::allows(Move::Failover, failure, self.committed, fallback_on.as_deref())
            }
            (Strategy::Fastest { members, .. }, Frame::Fastest { position, .. }) => {
                position + 1 < members.len() && gate::allows(Move::Failover, failure, self.committed, None)
            }
            _ => false,
        })
    }

    /// Descends from the current frames to a target and sends it. `failover` names the target
    /// that just failed, for the failover event. Never starts a leg with no budget left.
    fn start_leg(&mut self, now: u64, failover: Option<(String, Failure)>) {
        if self.budget.expired(now) {
            let deadline = Failure::Timeout { limit: Limit::Deadline, limit_ms: self.budget.limit_ms.unwrap_or(0) };
            self.state = State::Done;
            self.finish_err(failover.map_or(deadline, |(_, f)| f));
            return;
        }
        let target = match self.descend_admitted(now) {
            Ok(target) => target,
            Err(cause) => {
                // Every member left is open: the call ends with the real failure it met, or the
                // one that opened the breaker.
                self.state = State::Done;
                let target = cause.1;
                self.finish_with(failover.map_or(cause.0, |(_, f)| f), target);
                return;
            }
        };
        if let Some((from, cause)) = failover {
            let to = self.config.targets[target].name.clone();
            self.event(Event::Failover { from, to, cause: FailureInfo(cause) });
        }
        self.send(now, target, None, None);
    }

    /// The target's admission for this call: taken from the breakers when the call first reaches
    /// it, then kept, so this call's own failures never change its own route.
    fn admission(&mut self, target: usize, now: u64) -> Admission {
        if let Some(a) = &self.admissions[target] {
            return a.clone();
        }
        let a = lock(&self.health).admit(&self.config.targets[target].name, now);
        self.admissions[target] = Some(a.clone());
        a
    }

    /// [`Self::descend`], passing over members whose breaker is open, and members a hedging
    /// fallback knows slow ([`Self::known_slow`]), a `skip` event each: a fallback or round robin
    /// moves on at once. When nothing is left: a member passed over as slow is tried after all;
    /// else, if this call has tried nothing and more than one target was skipped, the one that
    /// reopens soonest is tried anyway; otherwise the error is the breaker's last failure (and its
    /// target).
    fn descend_admitted(&mut self, now: u64) -> Result<usize, (Failure, Option<String>)> {
        let mut skipped: Vec<(usize, Vec<Frame>, u64, Option<Failure>)> = Vec::new();
        let mut slow: Option<(usize, Vec<Frame>)> = None;
        loop {
            let target = self.descend();
            match self.admission(target, now) {
                Admission::Skip { reopens_in_ms, cause } => {
                    self.skip_event(target, reopens_in_ms, cause.clone());
                    skipped.push((target, self.frames.clone(), reopens_in_ms, cause));
                }
                _ => match self.known_slow(target) {
                    None => return Ok(target),
                    Some(reason) => {
                        let name = self.config.targets[target].name.clone();
                        self.event(Event::Skip { target: name, reason, reopens_in_ms: None, cause: None });
                        slow.get_or_insert((target, self.frames.clone()));
                    }
                },
            }
            if self.move_past_skip() {
                continue;
            }
            if let Some((target, frames)) = slow {
                self.frames = frames;
                return Ok(target);
            }
            let more_than_one = skipped.iter().any(|s| s.0 != skipped[0].0);
            if self.attempts == 0 && more_than_one {
                let soonest = skipped.iter().min_by_key(|s| s.2).map(|s| (s.0, s.1.clone())).expect("skipped one");
                self.frames = soonest.1;
                self.admissions[soonest.0] = Some(Admission::Pass);
                let message = format!(
                    "every target this call can reach has an open circuit breaker; trying {}, which reopens soonest",
                    self.config.targets[soonest.0].name
                );
                let target = self.config.targets[soonest.0].name.clone();
                self.event(Event::Warning { target, attempt: self.next_attempt_id().0, message });
                return Ok(soonest.0);
            }
            let (target, _, reopens_in_ms, cause) = skipped.swap_remove(0);
            let name = self.config.targets[target].name.clone();
            let failure = cause.unwrap_or_else(|| Failure::Transport {
                message: format!(
                    "{name} was not tried: its circuit breaker is open (it reopens in {reopens_in_ms} ms)"
                ),
            });
            return Err((failure, Some(name)));
        }
    }

    /// Why a hedging fallback passes over `target`, if it does: its last times to first token (at
    /// least [`SLOW_STREAK`]) all passed the hedge threshold the times before them give (`afterMs`
    /// when too few are left to learn from), so it turned slow, and hedging every call to it would spend a request
    /// each; the next member goes first instead. The threshold is taken from before the streak
    /// because a learned one rises with the streak itself (a lost leg's time is its hedge's
    /// threshold plus the winner's first token) and would soon never be passed. One call in
    /// twenty ([`EXPLORE_SHARE`]) tries it anyway, hedged as usual, so that its recovery is seen:
    /// one time under the threshold ends the streak.
    fn known_slow(&mut self, target: usize) -> Option<String> {
        let health = lock(&self.health);
        let samples = health.latencies(&self.config.targets[target].name);
        // From the longest streak down: the times before it, sorted, gain one at each step.
        let mut before: Vec<u32> = Vec::new();
        let mut found = None;
        for streak in (SLOW_STREAK..=samples.len()).rev() {
            let start = samples.len() - streak;
            let threshold = self.hedge_threshold(|p, min| sorted_percentile(&before, p, min));
            if let Some((ms, _)) = threshold.filter(|(ms, _)| samples[start..].iter().all(|s| u64::from(*s) > *ms)) {
                found = Some((streak, ms));
                break;
            }
            before.insert(before.partition_point(|s| *s <= samples[start]), samples[start]);
        }
        drop(health);
        let (streak, threshold_ms) = found?;
        (self.random.next_unit() >= EXPLORE_SHARE).then(|| {
            format!("slow: its last {streak} times to first token passed {threshold_ms} ms, its hedge threshold before them")
        })
    }

    fn skip_event(&mut self, target: usize, reopens_in_ms: u64, cause: Option<Failure>) {
        let name = self.config.targets[target].name.clone();
        let reason = match &cause {
            Some(f) => format!("its circuit breaker is open after {f}; it reopens in {reopens_in_ms} ms"),
            None => format!("its circuit breaker is open; it reopens in {reopens_in_ms} ms"),
        };
        self.event(Event::Skip {
            target: name,
            reason,
            reopens_in_ms: Some(reopens_in_ms),
            cause: cause.map(FailureInfo),
        });
    }

    /// After a skipped target: moves the innermost fallback to its next member, or a round robin
    /// to its next member not yet passed. False when no strategy has anything left.
    fn move_past_skip(&mut self) -> bool {
        while let Some(depth) = self.frames.len().checked_sub(1) {
            match (self.node(depth), self.frames[depth]) {
                (Strategy::Fallback { members, .. }, Frame::Fallback { member }) if member + 1 < members.len() => {
                    self.frames[depth] = Frame::Fallback { member: member + 1 };
                    self.frames.truncate(depth + 1);
                    return true;
                }
                (Strategy::Fastest { members, node }, Frame::Fastest { position, .. })
                    if position + 1 < members.len() =>
                {
                    let member = self.fastest_orders[*node][position + 1];
                    self.frames[depth] = Frame::Fastest { position: position + 1, member };
                    self.frames.truncate(depth + 1);
                    return true;
                }
                (Strategy::RoundRobin { members, node, .. }, Frame::RoundRobin { member }) => {
                    let next = (member + 1) % members.len();
                    if next != self.round_robin_picks[*node] {
                        self.frames[depth] = Frame::RoundRobin { member: next };
                        self.frames.truncate(depth + 1);
                        return true;
                    }
                    self.frames.pop();
                }
                _ => {
                    self.frames.pop();
                }
            }
        }
        false
    }

    fn next_attempt_id(&self) -> AttemptId {
        AttemptId(self.attempts + 1)
    }

    /// Starts the next attempt on `target`.
    fn send(&mut self, now: u64, target: usize, resumed_from: Option<ResumedFrom>, prefill: Option<String>) {
        let id = self.next_attempt_id();
        self.attempts += 1;
        self.delivery.drop_held();
        self.state = State::Attempting(Attempt {
            id,
            target,
            started_at: now,
            headers_at: None,
            first_content_at: None,
            last_content_at: None,
            body_at: None,
            skipped_frames: 0,
            usage: None,
            resumed_from,
            hedge_at: self.hedge_at(target, now),
        });
        let remaining_ms = self.budget.remaining(now);
        self.actions.push_back(Action::Send { attempt: id, target, prefill, remaining_ms });
        self.event(Event::Attempt { target: self.config.targets[target].name.clone(), attempt: id.0 });
    }

    /// Pushes frames from the current position down to a target; returns its index.
    fn descend(&mut self) -> usize {
        loop {
            let frame = match self.node(self.frames.len()) {
                Strategy::Target(i) => return *i,
                Strategy::Retry(_) => Frame::Retry { attempt: 1 },
                Strategy::Fallback { .. } => Frame::Fallback { member: 0 },
                Strategy::RoundRobin { node, .. } => Frame::RoundRobin { member: self.round_robin_picks[*node] },
                Strategy::Fastest { node, .. } => Frame::Fastest { position: 0, member: self.fastest_orders[*node][0] },
            };
            self.frames.push(frame);
        }
    }

    fn node(&self, depth: usize) -> &Strategy {
        node_at(&self.root, &self.frames, depth)
    }

    fn close_leg(&mut self, a: &Attempt, now: u64, end: LegEnd<'_>) {
        let failure = match end {
            LegEnd::Failed(f) => Some(f),
            LegEnd::Ok | LegEnd::Lost => None,
        };
        let leg = Leg {
            target: self.config.targets[a.target].name.clone(),
            attempt: a.id.0,
            start_ms: a.started_at - self.started_at,
            end_ms: now.saturating_sub(self.started_at),
            outcome: match end {
                LegEnd::Ok => "ok",
                LegEnd::Lost => "lost",
                LegEnd::Failed(f) => f.kind().as_str(),
            },
            status: failure.and_then(Failure::status),
            timeout: failure.and_then(Failure::timeout).map(|(l, _)| l),
            retry_after_ms: failure.and_then(Failure::retry_after_ms),
            class: failure.and_then(Failure::class),
            ttft_ms: a.first_content_at.map(|t| t - a.started_at),
            skipped_frames: a.skipped_frames,
            usage: a.usage,
            resumed_from: a.resumed_from,
        };
        let outcome = if matches!(end, LegEnd::Lost) { Outcome::Neutral } else { Outcome::of(failure) };
        let mut health = lock(&self.health);
        health.report(&leg.target, &outcome, now);
        if let Some(ms) = latency_sample(leg.outcome, leg.ttft_ms, leg.end_ms - leg.start_ms) {
            health.record_latency(&leg.target, ms);
        }
        drop(health);
        self.legs.push(leg.clone());
        self.event(Event::Leg { leg, cause: failure.cloned().map(FailureInfo) });
    }

    /// Ends the call with `failure` of the last attempt's target.
    fn finish_err(&mut self, failure: Failure) {
        let target = self.legs.last().map(|l| l.target.clone());
        self.finish_with(failure, target);
    }

    fn finish_with(&mut self, failure: Failure, target: Option<String>) {
        if self.promote_racer() {
            return;
        }
        let legs = self.legs.clone();
        let billed_usage = self.billed_usage();
        self.actions.push_back(Action::Finish(Err(CallError { failure, target, legs, billed_usage })));
    }

    fn event(&mut self, e: Event) {
        self.actions.push_back(Action::Event(e));
    }
}

/// What an enclosing strategy decided about a failure.
enum Next {
    Retry {
        attempt: u32,
        of: u32,
        delay_ms: u64,
    },
    Failover {
        frame: Frame,
    },
    /// This strategy is spent; ask the one above.
    Up,
}

/// Why a retry or a hedge was not made: the shared budget, with its numbers.
fn budget_spent(config: &Config) -> String {
    let budget = config.health.and_then(|h| h.retry_budget).unwrap_or_default();
    format!(
        "the retry budget is spent (retries, hedges and failover hops may add {}% of the successful calls of the last 10 s plus {} per second)",
        plain_f64(budget.ratio * 100.0),
        plain_f64(budget.min_per_second)
    )
}

/// The health state, usable even if a panic elsewhere poisoned its lock (it holds plain counts).
fn lock(health: &Mutex<Health>) -> MutexGuard<'_, Health> {
    health.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every target index in `s`.
/// The strategy node that frame `depth` belongs to (`depth == frames.len()` is the node below
/// the innermost frame).
fn node_at<'s>(root: &'s Strategy, frames: &[Frame], depth: usize) -> &'s Strategy {
    let mut node = root;
    for frame in &frames[..depth] {
        node = match (node, frame) {
            (Strategy::Retry(p), Frame::Retry { .. }) => &p.inner,
            (Strategy::Fallback { members, .. }, Frame::Fallback { member })
            | (Strategy::RoundRobin { members, .. }, Frame::RoundRobin { member })
            | (Strategy::Fastest { members, .. }, Frame::Fastest { member, .. }) => &members[*member],
            _ => unreachable!("descend() pushes each frame to match its node"),
        };
    }
    node
}
