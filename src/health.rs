//! Health across calls: a circuit breaker per target and a retry budget per `Baton`.
//!
//! Each call decides alone about its own attempts, as the seeds' tables say; this module is what
//! calls learn from each other. When a provider goes down, the first calls pay for finding out,
//! and the breaker makes later calls skip it (Envoy's outlier detection, Finagle's failure
//! accrual); under load, the budget caps retries at a share of successful calls plus a floor
//! (Finagle's retry budget), so an outage never multiplies the load on a provider.
//!
//! Like the engine, it reads no clock: every input carries `now`. It learns only from outcomes
//! that say something about the target (see [`Outcome::of`]): a 400 or the caller's cancel says
//! nothing about a provider's health. The same code keeps the state of a shared store (a Durable
//! Object, a browser tab's replica), so its [`HealthView`] speaks in relative times: isolates,
//! tabs and objects do not share a clock.
//!
//! It also keeps each target's recent times to first token (the last [`MAX_LATENCY_SAMPLES`]),
//! which a hedge's learned threshold and the `fastest` strategy read, shared through the same
//! stores: a store learns them from the legs it is told about and hands them out in its view.

use std::collections::VecDeque;

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

use crate::by_name::ByName;
use crate::outcome::{Failure, FailureClass, FailureInfo, Limit};
use crate::policy::{HealthPolicy, RetryBudgetPolicy, MAX_LATENCY_SAMPLES};

/// The most outcomes a breaker keeps in its window.
const MAX_WINDOW: usize = 1024;
/// The longest a Retry-After may hold a breaker open.
const MAX_RETRY_AFTER_OPEN_MS: u64 = 60_000;
/// The retry budget counts over this long (Finagle's ttl).
const BUDGET_WINDOW_S: u64 = 10;

/// What an attempt says about its target.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Success,
    /// A failure that says something about the target.
    Failure(Failure),
    /// Nothing either way: a request error, the caller's cancel, the call's deadline.
    Neutral,
}

impl Outcome {
    /// Classifies an attempt's result. Counted: transport and protocol failures, a member's own
    /// limits, HTTP 408, 429 and 5xx, and the classes that name the provider's state (overloaded,
    /// rate limit, quota, auth). Not counted: other 4xx (the request's fault), context length and
    /// content filter (the prompt's), the caller's cancel and the call's deadline (the caller's).
    pub fn of(failure: Option<&Failure>) -> Outcome {
        let Some(f) = failure else { return Outcome::Success };
        let counted = match f {
            Failure::Transport { .. } | Failure::Protocol { .. } => true,
            Failure::Timeout { limit, .. } => *limit != Limit::Deadline,
            Failure::Cancelled => false,
            Failure::Http { status, class, .. } => match class {
                Some(FailureClass::ContextLength | FailureClass::ContentFilter) => false,
                Some(_) => true,
                None => matches!(status, 408 | 429 | 500..=599),
            },
        };
        if counted {
            Outcome::Failure(f.clone())
        } else {
            Outcome::Neutral
        }
    }
}

/// Whether a call may try a target now.
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    Pass,
    /// The breaker is half-open and this call carries its one probe.
    Probe,
    /// Open: skip it. `cause` is the failure that opened it (or the last one).
    Skip {
        reopens_in_ms: u64,
        cause: Option<Failure>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Closed,
    Open {
        until: u64,
    },
    /// A probe is out until `lease_until`; if it never reports, another may go then.
    HalfOpen {
        lease_until: u64,
    },
}

#[derive(Debug, Clone)]
struct Breaker {
    state: State,
    consecutive: u32,
    /// (when, failed) of recent counted outcomes and successes, oldest first.
    window: VecDeque<(u64, bool)>,
    last_failure: Option<Failure>,
    /// Shared through a store: when the store last said how this target is.
    refreshed_at: Option<u64>,
    /// Shared through a store: a probe the store granted, not yet taken by a call.
    granted_probe: bool,
    /// Recent times to first token in ms, oldest first (see [`latency_sample`]).
    latency: Vec<u32>,
}

impl Default for Breaker {
    fn default() -> Self {
        Breaker {
            state: State::Closed,
            consecutive: 0,
            window: VecDeque::new(),
            last_failure: None,
            refreshed_at: None,
            granted_probe: false,
            latency: Vec::new(),
        }
    }
}

/// Every target's breaker and the retry budget.
#[derive(Debug, Clone)]
pub struct Health {
    policy: Option<HealthPolicy>,
    breakers: ByName<Breaker>,
    budget: Option<RetryBudget>,
    /// The state is shared through a store that decides probes: an open target whose cooldown
    /// ended is skipped until the store grants this replica a probe.
    follower: bool,
}

impl Health {
    /// `None`: health is off (`"health": false`); every target passes and nothing is counted.
    pub fn new(policy: Option<HealthPolicy>) -> Health {
        let budget = policy.and_then(|p| p.retry_budget).map(RetryBudget::new);
        Health { policy, breakers: ByName::default(), budget, follower: false }
    }

    /// Makes this a replica of a shared store's state (see [`Health::absorb`]).
    pub fn follow(&mut self) {
        self.follower = true;
    }

    /// May a call try `target` now? Half-open targets admit one probe per cooldown.
    pub fn admit(&mut self, target: &str, now: u64) -> Admission {
        let Some(policy) = self.policy else { return Admission::Pass };
        let follower = self.follower;
        let b = self.breakers.get_or_insert_with(target, Breaker::default);
        let skip = |until: u64, b: &Breaker| Admission::Skip {
            reopens_in_ms: until.saturating_sub(now),
            cause: b.last_failure.clone(),
        };
        match b.state {
            State::Closed => Admission::Pass,
            State::Open { until } | State::HalfOpen { lease_until: until } if now < until => skip(until, b),
            State::Open { .. } | State::HalfOpen { .. } => {
                if follower && !std::mem::take(&mut b.granted_probe) {
                    return skip(now, b);
                }
                b.state = State::HalfOpen { lease_until: now.saturating_add(policy.cooldown_ms) };
                Admission::Probe
            }
        }
    }

    /// Learns from one attempt of `target` that ended at `now`.
    pub fn report(&mut self, target: &str, outcome: &Outcome, now: u64) {
        let Some(policy) = self.policy else { return };
        if *outcome == Outcome::Neutral {
            return;
        }
        let b = self.breakers.get_or_insert_with(target, Breaker::default);
        while b.window.front().is_some_and(|(at, _)| at.saturating_add(policy.window_ms) <= now) {
            b.window.pop_front();
        }
        if b.window.len() == MAX_WINDOW {
            b.window.pop_front();
        }
        match outcome {
            Outcome::Neutral => {}
            Outcome::Success => {
                b.window.push_back((now, false));
                b.consecutive = 0;
                b.state = State::Closed;
            }
            Outcome::Failure(failure) => {
                b.window.push_back((now, true));
                b.consecutive = b.consecutive.saturating_add(1);
                b.last_failure = Some(failure.clone());
                let asked = match failure {
                    Failure::Http { status: 429 | 503, retry_after_ms: Some(ms), .. } => {
                        Some((*ms).min(MAX_RETRY_AFTER_OPEN_MS))
                    }
                    _ => None,
                };
                let failed = b.window.iter().filter(|(_, failed)| *failed).count();
                let tripped = b.consecutive >= policy.failures
                    || (b.window.len() >= policy.min_requests as usize
                        && failed as f64 >= policy.failure_ratio * b.window.len() as f64);
                let open_for = match b.state {
                    // A probe failed, or a failure came after the cooldown (a replica that did
                    // not see the probe granted elsewhere): another cooldown.
                    State::HalfOpen { .. } => Some(asked.unwrap_or(0).max(policy.cooldown_ms)),
                    State::Open { until } if now >= until => Some(asked.unwrap_or(0).max(policy.cooldown_ms)),
                    State::Closed if asked.is_some() || tripped => Some(asked.unwrap_or(policy.cooldown_ms)),
                    State::Closed => None,
                    // Already open: a Retry-After may only hold it longer.
                    State::Open { until } => asked.map(|ms| now.saturating_add(ms).max(until) - now),
                };
                if let Some(ms) = open_for {
                    b.state = State::Open { until: now.saturating_add(ms) };
                }
            }
        }
    }

    /// Keeps one time to first token of `target` (see [`latency_sample`]), health on or off.
    pub fn record_latency(&mut self, target: &str, ms: u64) {
        let samples = &mut self.breakers.get_or_insert_with(target, Breaker::default).latency;
        if samples.len() == MAX_LATENCY_SAMPLES {
            samples.remove(0);
        }
        samples.push(u32::try_from(ms).unwrap_or(u32::MAX));
    }

    /// The `percentile` (0 to 100) of `target`'s recent times to first token (nearest rank),
    /// once at least `min_samples` are known.
    pub fn latency_percentile(&self, target: &str, percentile: f64, min_samples: u32) -> Option<u64> {
        percentile_of(self.latencies(target), percentile, min_samples)
    }

    /// `target`'s recent times to first token, oldest first.
    pub fn latencies(&self, target: &str) -> &[u32] {
        self.breakers.get(target).map_or(&[], |b| &b.latency)
    }

    /// What a store answers a replica about `targets`: an admission each, probes granted to the
    /// asker. Times are relative to `now`.
    pub fn view(&mut self, targets: &[String], now: u64) -> HealthView {
        let targets = targets
            .iter()
            .map(|t| {
                let admission = self.admit(t, now);
                let b = self.breakers.get_or_insert_with(t, Breaker::default);
                let (state, probe, reopens_in_ms) = match admission {
                    Admission::Pass => (BreakerState::Closed, false, None),
                    Admission::Probe => (BreakerState::HalfOpen, true, None),
                    Admission::Skip { reopens_in_ms, .. } => (b.state.name(), false, Some(reopens_in_ms)),
                };
                TargetView {
                    target: t.clone(),
                    state,
                    probe,
                    reopens_in_ms,
                    last_failure: b.last_failure.clone().map(FailureInfo),
                    latency_ms: b.latency.clone(),
                }
            })
            .collect();
        let retry_budget = self.budget.as_ref().map(|b| b.balance(now));
        HealthView { targets, retry_budget }
    }

    /// Takes a store's view of some targets as this replica's state at `now`.
    pub fn absorb(&mut self, view: &HealthView, now: u64) {
        if let (Some(b), Some(balance)) = (self.budget.as_mut(), view.retry_budget) {
            b.shared = Some((balance, now));
        }
        for t in &view.targets {
            let b = self.breakers.get_or_insert_with(&t.target, Breaker::default);
            let until = now.saturating_add(t.reopens_in_ms.unwrap_or(0));
            b.state = match (t.state, t.probe) {
                (BreakerState::Closed, _) => State::Closed,
                // A granted probe: open, reopening now, for the next call here to take.
                (_, true) => State::Open { until: now },
                (BreakerState::Open, false) => State::Open { until },
                (BreakerState::HalfOpen, false) => State::HalfOpen { lease_until: until },
            };
            if b.state == State::Closed {
                b.consecutive = 0;
            }
            b.granted_probe = t.probe;
            if let Some(FailureInfo(f)) = &t.last_failure {
                b.last_failure = Some(f.clone());
            }
            if !t.latency_ms.is_empty() {
                b.latency.clone_from(&t.latency_ms);
            }
            b.refreshed_at = Some(now);
        }
    }

    /// Whether a replica must ask its store before a call to these targets: one it has no word
    /// on for `max_age_ms`, or one whose cooldown ended (only the store grants probes).
    pub fn stale(&self, targets: &[String], now: u64, max_age_ms: u64) -> bool {
        self.policy.is_some()
            && targets.iter().any(|t| match self.breakers.get(t) {
                None => true,
                Some(b) => {
                    b.refreshed_at.is_none_or(|at| now.saturating_sub(at) >= max_age_ms)
                        || matches!(b.state, State::Open { until } | State::HalfOpen { lease_until: until }
                            if now >= until && !b.granted_probe)
                }
            })
    }

    /// The targets this state has heard of, in name order.
    pub fn known_targets(&self) -> Vec<String> {
        self.breakers.names().cloned().collect()
    }

    /// Every target's breaker, for `baton.health()`.
    pub fn snapshot(&self, targets: &[String], now: u64) -> HealthSnapshot {
        let targets = targets
            .iter()
            .map(|t| {
                let fresh = Breaker::default();
                let b = self.breakers.get(t).unwrap_or(&fresh);
                let window = self.policy.map_or(0, |p| p.window_ms);
                let recent: Vec<bool> =
                    b.window.iter().filter(|(at, _)| at.saturating_add(window) > now).map(|(_, f)| *f).collect();
                let reopens_in_ms = match b.state {
                    State::Closed => None,
                    State::Open { until } | State::HalfOpen { lease_until: until } => Some(until.saturating_sub(now)),
                };
                TargetHealth {
                    target: t.clone(),
                    state: b.state.name(),
                    reopens_in_ms,
                    consecutive_failures: b.consecutive,
                    window: WindowCounts { outcomes: recent.len(), failures: recent.iter().filter(|f| **f).count() },
                    last_failure: b.last_failure.clone().map(FailureInfo),
                }
            })
            .collect();
        let retry_budget = self.budget.as_ref().map(|b| BudgetView { balance: b.balance(now), spent: b.spent(now) });
        HealthSnapshot { enabled: self.policy.is_some(), targets, retry_budget }
    }

    /// Spends one retry from the budget; false when it is spent (or when health is off: true).
    pub fn try_spend_retry(&mut self, now: u64) -> bool {
        self.budget.as_mut().is_none_or(|b| b.try_withdraw(now))
    }

    /// A failover hop spends a unit when one is left; it is never refused.
    pub fn spend_hop(&mut self, now: u64) {
        if let Some(b) = self.budget.as_mut() {
            b.try_withdraw(now);
        }
    }

    /// A call succeeded: the budget grows by its share.
    pub fn deposit(&mut self, now: u64) {
        if let Some(b) = self.budget.as_mut() {
            b.deposit(now);
        }
    }

    /// A store's accounting of one reported attempt: a successful attempt ends a successful call
    /// (a deposit), and every attempt after a call's first was a retry or a failover hop.
    pub fn count_in_budget(&mut self, attempt: u32, outcome: &Outcome, now: u64) {
        let Some(b) = self.budget.as_mut() else { return };
        if *outcome == Outcome::Success {
            b.deposit(now);
        }
        if attempt > 1 {
            b.spent_elsewhere(now);
        }
    }
}

impl State {
    fn name(self) -> BreakerState {
        match self {
            State::Closed => BreakerState::Closed,
            State::Open { .. } => BreakerState::Open,
            State::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }
}

/// Deposits and withdrawals per second over the last [`BUDGET_WINDOW_S`] seconds.
#[derive(Debug, Clone)]
struct RetryBudget {
    policy: RetryBudgetPolicy,
    /// (second, successful calls, retries and hops spent), oldest first.
    seconds: VecDeque<(u64, u64, u64)>,
    /// A store's balance for everyone sharing it, and when it came: while it is fresh, this
    /// replica spends from it (less what it spent since) instead of from its own counts.
    shared: Option<(f64, u64)>,
}

impl RetryBudget {
    fn new(policy: RetryBudgetPolicy) -> RetryBudget {
        RetryBudget { policy, seconds: VecDeque::new(), shared: None }
    }

    fn current(&mut self, now: u64) -> &mut (u64, u64, u64) {
        let second = now / 1000;
        while self.seconds.front().is_some_and(|(s, ..)| s + BUDGET_WINDOW_S <= second) {
            self.seconds.pop_front();
        }
        if self.seconds.back().is_none_or(|(s, ..)| *s != second) {
            self.seconds.push_back((second, 0, 0));
        }
        self.seconds.back_mut().expect("pushed above")
    }

    fn totals(&self, now: u64) -> (u64, u64) {
        let second = now / 1000;
        self.seconds
            .iter()
            .filter(|(s, ..)| s + BUDGET_WINDOW_S > second)
            .fold((0, 0), |(d, w), (_, dd, ww)| (d + dd, w + ww))
    }

    /// Units left: the floor plus the share of successes, less what was spent; or, while a
    /// store's word is fresh, its balance less what this replica spent since.
    fn balance(&self, now: u64) -> f64 {
        if let Some((balance, at)) = self.shared.filter(|(_, at)| now.saturating_sub(*at) < BUDGET_WINDOW_S * 1000) {
            let since = at / 1000;
            let spent: u64 = self.seconds.iter().filter(|(s, ..)| *s >= since).map(|(.., w)| w).sum();
            return balance - spent as f64;
        }
        let (deposits, withdrawals) = self.totals(now);
        let floor = self.policy.min_per_second * BUDGET_WINDOW_S as f64;
        floor + self.policy.ratio * deposits as f64 - withdrawals as f64
    }

    fn spent(&self, now: u64) -> u64 {
        self.totals(now).1
    }

    fn try_withdraw(&mut self, now: u64) -> bool {
        if self.balance(now) < 1.0 {
            return false;
        }
        self.current(now).2 += 1;
        true
    }

    fn deposit(&mut self, now: u64) {
        self.current(now).1 += 1;
    }

    /// A retry or hop someone sharing this budget already made.
    fn spent_elsewhere(&mut self, now: u64) {
        self.current(now).2 += 1;
    }
}

/// A store's answer about some targets; times relative to when it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthView {
    pub targets: Vec<TargetView>,
    /// The retry budget's balance for everyone sharing the store.
    pub retry_budget: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TargetView {
    pub target: String,
    pub state: BreakerState,
    /// This asker carries the target's one probe.
    pub probe: bool,
    pub reopens_in_ms: Option<u64>,
    pub last_failure: Option<FailureInfo>,
    /// The target's recent times to first token, oldest first.
    pub latency_ms: Vec<u32>,
}

/// `baton.health()`.
#[derive(Debug, Clone, PartialEq)]
pub struct HealthSnapshot {
    pub enabled: bool,
    pub targets: Vec<TargetHealth>,
    pub retry_budget: Option<BudgetView>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TargetHealth {
    pub target: String,
    pub state: BreakerState,
    pub reopens_in_ms: Option<u64>,
    pub consecutive_failures: u32,
    pub window: WindowCounts,
    pub last_failure: Option<FailureInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowCounts {
    pub outcomes: usize,
    pub failures: usize,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetView {
    pub balance: f64,
    pub spent: u64,
}

impl BreakerState {
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::Open => "open",
            BreakerState::HalfOpen => "half_open",
        }
    }
}

/// `{targets: [{target, state, probe, reopensInMs?, lastFailure?, ttftMs?}], retryBudget?}`.
impl ToJson for HealthView {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.key("targets");
        w.begin_array();
        for t in &self.targets {
            w.begin_object();
            w.field("target", &t.target);
            w.field("state", t.state.as_str());
            w.field("probe", &t.probe);
            w.opt_field("reopensInMs", t.reopens_in_ms.as_ref());
            w.opt_field("lastFailure", t.last_failure.as_ref());
            w.list_field("ttftMs", &t.latency_ms);
            w.end_object();
        }
        w.end_array();
        w.opt_field("retryBudget", self.retry_budget.as_ref());
        w.end_object();
    }
}

/// `{enabled, targets: [{target, state, reopensInMs?, consecutiveFailures, window: {outcomes,
/// failures}, lastFailure?}], retryBudget: {balance, spent} | null}`.
impl ToJson for HealthSnapshot {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("enabled", &self.enabled);
        w.key("targets");
        w.begin_array();
        for t in &self.targets {
            w.begin_object();
            w.field("target", &t.target);
            w.field("state", t.state.as_str());
            w.opt_field("reopensInMs", t.reopens_in_ms.as_ref());
            w.field("consecutiveFailures", &t.consecutive_failures);
            w.key("window");
            w.begin_object();
            w.field("outcomes", &t.window.outcomes);
            w.field("failures", &t.window.failures);
            w.end_object();
            w.opt_field("lastFailure", t.last_failure.as_ref());
            w.end_object();
        }
        w.end_array();
        w.key("retryBudget");
        match &self.retry_budget {
            Some(budget) => {
                w.begin_object();
                w.field("balance", &budget.balance);
                w.field("spent", &budget.spent);
                w.end_object();
            }
            None => w.null(),
        }
        w.end_object();
    }
}

/// Reads a store's [`HealthView`] (from JavaScript): `{targets: [{target, state, probe,
/// reopensInMs?, lastFailure?, ttftMs?}], retryBudget?}`. What it cannot read is an error naming where.
pub fn read_view(v: &Value) -> Result<HealthView, String> {
    let list = v.get("targets").and_then(Value::as_array).ok_or("the view must be {targets: [...]}")?;
    let targets = list
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = |what: &str| format!("targets[{i}].{what}");
            let target = t.get("target").and_then(Value::as_str).ok_or_else(|| at("target must be a string"))?;
            let state = match t.get("state").and_then(Value::as_str) {
                Some("closed") => BreakerState::Closed,
                Some("open") => BreakerState::Open,
                Some("half_open") => BreakerState::HalfOpen,
                _ => return Err(at(r#"state must be "closed", "open" or "half_open""#)),
            };
            let probe = match t.get("probe") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(at("probe must be true or false")),
            };
            let reopens_in_ms = match t.get("reopensInMs") {
                None | Some(Value::Null) => None,
                Some(n) => Some(
                    n.as_f64()
                        .filter(|n| n.is_finite() && *n >= 0.0)
                        .map(|n| n.min(crate::value::MAX_MS as f64).ceil() as u64)
                        .ok_or_else(|| at("reopensInMs must be a number of milliseconds"))?,
                ),
            };
            let last_failure = t.get("lastFailure").and_then(read_cause).map(FailureInfo);
            let mut latency_ms = Vec::new();
            match t.get("ttftMs") {
                None | Some(Value::Null) => {}
                Some(Value::Array(list)) if list.len() <= MAX_LATENCY_SAMPLES => {
                    for n in list {
                        let ms = n.as_u64().ok_or_else(|| at("ttftMs must be a list of whole milliseconds"))?;
                        latency_ms.push(ms.min(u64::from(u32::MAX)) as u32);
                    }
                }
                Some(_) => {
                    return Err(at(&format!(
                        "ttftMs must be a list of at most {MAX_LATENCY_SAMPLES} whole milliseconds"
                    )))
                }
            }
            Ok(TargetView { target: target.to_string(), state, probe, reopens_in_ms, last_failure, latency_ms })
        })
        .collect::<Result<_, String>>()?;
    let retry_budget = match v.get("retryBudget") {
        None | Some(Value::Null) => None,
        Some(n) => Some(n.as_f64().filter(|n| n.is_finite()).ok_or("retryBudget must be a number")?),
    };
    Ok(HealthView { targets, retry_budget })
}

/// One attempt as a store learns it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub target: String,
    /// Its position in its call: after the first, a retry or a failover hop.
    pub attempt: u32,
    pub outcome: Outcome,
    /// Its time to first token, as [`latency_sample`] reads it.
    pub latency_ms: Option<u64>,
}

/// The `percentile` (0 to 100) of `samples` (nearest rank), once at least `min_samples` are
/// there.
pub fn percentile_of(samples: &[u32], percentile: f64, min_samples: u32) -> Option<u64> {
    let rank = nearest_rank(samples.len(), percentile, min_samples)?;
    // The smallest sample with at least `rank` samples at or below it. Quadratic over at most
    // MAX_LATENCY_SAMPLES, and smaller in the wasm than a sort.
    let at_or_below = |x: u32| samples.iter().filter(|s| **s <= x).count();
    samples.iter().copied().filter(|x| at_or_below(*x) >= rank).min().map(u64::from)
}

/// [`percentile_of`] samples sorted in ascending order, without its quadratic count.
pub fn sorted_percentile(sorted: &[u32], percentile: f64, min_samples: u32) -> Option<u64> {
    nearest_rank(sorted.len(), percentile, min_samples).map(|rank| u64::from(sorted[rank - 1]))
}

/// The 1-based nearest rank of `percentile` among `len` samples, once at least `min_samples`
/// (and one) are there.
fn nearest_rank(len: usize, percentile: f64, min_samples: u32) -> Option<usize> {
    if len == 0 || len < min_samples as usize {
        return None;
    }
    Some((((percentile / 100.0) * len as f64).ceil() as usize).clamp(1, len))
}

/// The time to first token a leg tells of: its `ttftMs`, or else the whole time of an attempt
/// that answered whole (`ok`) or lost a hedge race (`lost`: its first token would have come later
/// still, so this is a lower bound; leaving it out would teach the threshold only the fast ones).
pub fn latency_sample(outcome: &str, ttft_ms: Option<u64>, duration_ms: u64) -> Option<u64> {
    ttft_ms.or_else(|| matches!(outcome, "ok" | "lost").then_some(duration_ms))
}

/// Reads one report a store forwards, a `leg` event: `{leg, cause?}` (its `type` may stay).
pub fn read_report(v: &Value) -> Result<Report, String> {
    let leg = v.get("leg").ok_or("a report must be {leg, cause?}, as in a \"leg\" event")?;
    let target = leg.get("target").and_then(Value::as_str).ok_or("leg.target must be a string")?;
    let outcome_name = leg.get("outcome").and_then(Value::as_str);
    let outcome = match outcome_name {
        Some("ok") => Outcome::Success,
        // A hedge's loser was only slower than the winner: no word on the target's health.
        Some("lost") => Outcome::Neutral,
        Some(_) => match v.get("cause").and_then(read_cause) {
            Some(failure) => Outcome::of(Some(&failure)),
            None => return Err("a failed leg's report needs its cause".into()),
        },
        None => return Err("leg.outcome must be a string".into()),
    };
    let attempt = leg.get("attempt").and_then(Value::as_u64).and_then(|a| u32::try_from(a).ok()).unwrap_or(1);
    let ms = |key: &str| leg.get(key).and_then(Value::as_u64);
    let duration_ms = ms("endMs").unwrap_or(0).saturating_sub(ms("startMs").unwrap_or(0));
    let latency_ms = latency_sample(outcome_name.unwrap_or_default(), ms("ttftMs"), duration_ms);
    Ok(Report { target: target.to_string(), attempt, outcome, latency_ms })
}

/// The failure a `cause` object (`{kind, message, status?, code?, class?, retryAfterMs?,
/// timeout?, limitMs?}`) describes, as far as health needs it.
fn read_cause(v: &Value) -> Option<Failure> {
    let text = |key: &str| v.get(key).and_then(Value::as_str);
    let number = |key: &str| v.get(key).and_then(Value::as_u64);
    let message = text("message").unwrap_or_default().to_string();
    Some(match text("kind")? {
        "transport" => Failure::Transport { message },
        "protocol" => Failure::Protocol { message },
        "cancelled" => Failure::Cancelled,
        "timeout" => Failure::Timeout {
            limit: [Limit::Deadline, Limit::Total, Limit::Headers, Limit::FirstToken, Limit::Idle]
                .into_iter()
                .find(|l| Some(l.as_str()) == text("timeout"))?,
            limit_ms: number("limitMs").unwrap_or(0),
        },
        "http" => Failure::Http {
            status: u16::try_from(number("status")?).ok()?,
            message,
            code: text("code").map(str::to_string),
            class: text("class").and_then(FailureClass::parse),
            retry_after_ms: number("retryAfterMs"),
            should_retry: None,
            in_stream: false,
            content_filter: None,
        },
        _ => return None,
    })
}
