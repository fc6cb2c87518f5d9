//! What the config says to do when an attempt fails: the route's strategy tree (retry, fallback,
//! round robin), the backoff between retries, how a broken stream resumes, and the health
//! section's breakers and retry budget.
//!
//! Plain data, read from the config document (src/config.rs) and obeyed by the gate, the
//! backoff, the health breakers and the engine. It sits below all of them, so each reads the
//! policy without reaching up to the config reader, and the reader only fills it in.

use crate::outcome::FailureClass;

/// How a route tries its members.
#[derive(Debug, Clone, PartialEq)]
pub enum Strategy {
    /// Index into the config's targets (`Config::targets`).
    Target(usize),
    Retry(Box<RetryPolicy>),
    Fallback {
        members: Vec<Strategy>,
        /// Boxed, like `after_start`: only some fallbacks have one.
        fallback_on: Option<Box<Conditions>>,
        /// What a stream that broke after its first visible content does; `None` ends it.
        /// Boxed: every strategy node is as large as the largest variant, and routes may hold
        /// thousands of nodes.
        after_start: Option<Box<AfterStart>>,
        /// When a member that has shown nothing yet is raced by the next one; `None` never.
        hedge: Option<Box<Hedge>>,
    },
    RoundRobin {
        members: Vec<Strategy>,
        weights: Vec<u32>,
        node: usize,
    },
    /// Each call tries the healthy member with the lowest recent time to first token first (a
    /// share of calls explores the others), then the rest in that order, as a fallback would.
    Fastest {
        members: Vec<Strategy>,
        node: usize,
    },
}

/// The recent times to first token kept per target, for learned hedge thresholds and `fastest`.
pub const MAX_LATENCY_SAMPLES: usize = 64;

/// The share of `fastest` calls that try a member other than the fastest first, so a member
/// that got faster is noticed: one call in twenty. Also the share of calls that still try a
/// member a hedging fallback passes over as slow.
pub const EXPLORE_SHARE: f64 = 0.05;

/// A hedging fallback passes over a member whose last this many times to first token all passed
/// its hedge threshold: it turned slow, and hedging it would spend a request on every call.
pub const SLOW_STREAK: usize = 3;

/// A fallback's `hedge`: when the member in flight has shown no content after a threshold, the
/// next member starts too, and the first to show content wins.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hedge {
    /// A fixed threshold; with `after_percentile`, the one used until enough is learned, and
    /// the most a learned one may be.
    pub after_ms: Option<u64>,
    /// The threshold learned from the target's recent times to first token: this percentile
    /// of them (0 < p < 100), never below `floor_ms`, once `min_samples` are known.
    pub after_percentile: Option<f64>,
    pub floor_ms: u64,
    pub min_samples: u32,
    /// Hedges per call.
    pub max: u32,
}

/// A fallback's `afterStart`: how a stream that broke after the reader saw its start is resumed
/// on a later member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterStart {
    pub mode: ResumeMode,
    /// Breaks resumed per call.
    pub attempts: u32,
    /// A resume is not started with less than this left of the call's budget.
    pub min_remaining_ms: u64,
}

/// How a broken stream resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeMode {
    /// The next member that takes a prefill continues the text shown so far, in the same answer.
    Continue,
    /// The reader discards what it saw and the next member answers afresh.
    Restart,
}

impl ResumeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeMode::Continue => "continue",
            ResumeMode::Restart => "restart",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    pub inner: Strategy,
    pub attempts: u32,
    pub backoff: Backoff,
    pub retry_on: Option<Conditions>,
    /// A server-requested wait (Retry-After) longer than this stops retrying at once.
    pub max_retry_after_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    pub initial_ms: u64,
    pub multiplier: f64,
    pub max_ms: u64,
    pub jitter: Jitter,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { initial_ms: 250, multiplier: 2.0, max_ms: 8000, jitter: Jitter::Equal }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jitter {
    /// Half the computed delay, plus a uniformly random delay up to the other half (AWS "equal
    /// jitter"): retries spread out, yet never come closer than half the computed delay. The
    /// default.
    Equal,
    /// A uniformly random delay between 0 and the computed one (AWS "full jitter"): the widest
    /// spread, but two retries may land almost at once.
    Full,
    /// The computed delay exactly.
    None,
}

/// A `retryOn` / `fallbackOn` list: which failures qualify.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Conditions {
    pub transport: bool,
    pub timeout: bool,
    pub protocol: bool,
    pub any_4xx: bool,
    pub any_5xx: bool,
    pub statuses: Vec<u16>,
    /// Failure classes named in the list (`"context_length"`, `"quota"`...).
    pub classes: Vec<FailureClass>,
}

impl Conditions {
    pub fn matches_status(&self, status: u16) -> bool {
        (self.any_4xx && (400..500).contains(&status))
            || (self.any_5xx && (500..600).contains(&status))
            || self.statuses.contains(&status)
    }
}

/// The config's `health` section.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthPolicy {
    /// Consecutive counted failures that open a breaker.
    pub failures: u32,
    /// Or this share of counted outcomes over `window_ms`...
    pub failure_ratio: f64,
    pub window_ms: u64,
    /// ...once the window holds at least this many.
    pub min_requests: u32,
    /// How long an opened breaker stays open before one probe is let through.
    pub cooldown_ms: u64,
    pub retry_budget: Option<RetryBudgetPolicy>,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            failures: 5,
            failure_ratio: 0.5,
            window_ms: 30_000,
            min_requests: 10,
            cooldown_ms: 5_000,
            retry_budget: Some(RetryBudgetPolicy::default()),
        }
    }
}

/// Retries (and failover hops) may spend `ratio` of the successful calls of the last 10 s, plus
/// `min_per_second` each second: Finagle's defaults, 20% plus 10 per second. The floor is high
/// enough that a lone call's ladder is never cut.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryBudgetPolicy {
    pub ratio: f64,
    pub min_per_second: f64,
}

impl Default for RetryBudgetPolicy {
    fn default() -> Self {
        RetryBudgetPolicy { ratio: 0.2, min_per_second: 10.0 }
    }
}
