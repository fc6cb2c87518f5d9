//! What a call leaves behind: one [`Leg`] per attempt, and the [`Event`]s a UI shows as they
//! happen ("Provider busy, retrying (2/4) in 0.5 s", "Primary timed out, switching to backup").
//!
//! Both write the camelCase JSON the JS API hands out. Nothing here holds a credential:
//! failures carry provider messages and statuses, never request headers.

use llm_baton_wire::write::{JsonWriter, ToJson};

use crate::chat::Usage;
use crate::outcome::{FailureClass, FailureInfo, Limit};
use crate::policy::ResumeMode;

/// One attempt. Times are milliseconds since the call started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leg {
    pub target: String,
    /// 1-based position of this attempt within the call.
    pub attempt: u32,
    pub start_ms: u64,
    pub end_ms: u64,
    /// "ok", "lost" (a hedge's race went to another leg, and this one was aborted), or the
    /// failure's kind: "http", "timeout", "transport", "cancelled", "protocol".
    pub outcome: &'static str,
    pub status: Option<u16>,
    pub timeout: Option<Limit>,
    pub retry_after_ms: Option<u64>,
    /// The provider error's class (`context_length`, `quota`, …), when it had one.
    pub class: Option<FailureClass>,
    /// Time to the first visible content, for streams that showed some.
    pub ttft_ms: Option<u64>,
    /// Malformed stream frames skipped in this attempt (each also a `warning` event).
    pub skipped_frames: u32,
    /// The token counts this attempt's provider reported, even if the attempt failed later.
    pub usage: Option<Usage>,
    /// For an attempt that resumed a broken stream: which attempt's answer, and how.
    pub resumed_from: Option<ResumedFrom>,
}

/// What a resuming attempt took over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumedFrom {
    /// The attempt whose stream broke.
    pub attempt: u32,
    pub mode: ResumeMode,
    /// Characters of the text shown that this attempt was asked to continue (0 for a restart).
    pub kept_chars: usize,
}

/// `{target, attempt, startMs, endMs, outcome, ...}`: what is unknown or zero is left out.
impl ToJson for Leg {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("target", &self.target);
        w.field("attempt", &self.attempt);
        w.field("startMs", &self.start_ms);
        w.field("endMs", &self.end_ms);
        w.field("outcome", self.outcome);
        w.opt_field("status", self.status.as_ref());
        w.opt_field("timeout", self.timeout.map(Limit::as_str));
        w.opt_field("retryAfterMs", self.retry_after_ms.as_ref());
        w.opt_field("class", self.class.map(FailureClass::as_str));
        w.opt_field("ttftMs", self.ttft_ms.as_ref());
        if self.skipped_frames != 0 {
            w.field("skippedFrames", &self.skipped_frames);
        }
        w.opt_field("usage", self.usage.as_ref());
        if let Some(from) = &self.resumed_from {
            w.key("resumedFrom");
            w.begin_object();
            w.field("attempt", &from.attempt);
            w.field("mode", from.mode.as_str());
            w.field("keptChars", &from.kept_chars);
            w.end_object();
        }
        w.end_object();
    }
}

/// Progress a caller can show while it waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// An attempt was sent.
    Attempt { target: String, attempt: u32 },
    /// An attempt ended (successfully or not); `cause` says why it failed. Health stores take
    /// these as their reports.
    Leg { leg: Leg, cause: Option<FailureInfo> },
    /// A member was passed over: its circuit breaker is open (it reopens in `reopens_in_ms`), or
    /// a hedging fallback knows it slow (no `reopens_in_ms`; `reason` says so).
    Skip { target: String, reason: String, reopens_in_ms: Option<u64>, cause: Option<FailureInfo> },
    /// The same member will be tried again after `delay_ms`. `attempt` is the 1-based attempt
    /// of this retry strategy that failed, `of` the attempts it allows.
    Retry { target: String, attempt: u32, of: u32, delay_ms: u64, cause: FailureInfo },
    /// The next member of a fallback takes over at once.
    Failover { from: String, to: String, cause: FailureInfo },
    /// Attempt `attempt` of `to` starts beside the one of `from`, which showed nothing in
    /// `after_ms` (a threshold `learned` from `from`'s recent times to first token, or fixed).
    Hedge { from: String, to: String, attempt: u32, after_ms: u64, learned: bool },
    /// A stream that broke after its start goes on at attempt `attempt` of target `to`:
    /// continuing the `kept_chars` characters shown, or restarting (the reader discards what it
    /// saw when the new answer's first content arrives).
    Resume { mode: ResumeMode, from: String, to: String, attempt: u32, cause: FailureInfo, kept_chars: usize },
    /// Something the caller should know that did not fail the attempt: a malformed stream frame
    /// was skipped (docs/errors.md, "Malformed frames"), or a broken stream was not resumed and
    /// why.
    Warning { target: String, attempt: u32, message: String },
}

/// `{type, ...}`, camelCase.
impl ToJson for Event {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Event::Attempt { target, attempt } => {
                w.field("type", "attempt");
                w.field("target", target);
                w.field("attempt", attempt);
            }
            Event::Leg { leg, cause } => {
                w.field("type", "leg");
                w.field("leg", leg);
                w.opt_field("cause", cause.as_ref());
            }
            Event::Skip { target, reason, reopens_in_ms, cause } => {
                w.field("type", "skip");
                w.field("target", target);
                w.field("reason", reason);
                w.opt_field("reopensInMs", reopens_in_ms.as_ref());
                w.opt_field("cause", cause.as_ref());
            }
            Event::Retry { target, attempt, of, delay_ms, cause } => {
                w.field("type", "retry");
                w.field("target", target);
                w.field("attempt", attempt);
                w.field("of", of);
                w.field("delayMs", delay_ms);
                w.field("cause", cause);
            }
            Event::Failover { from, to, cause } => {
                w.field("type", "failover");
                w.field("from", from);
                w.field("to", to);
                w.field("cause", cause);
            }
            Event::Hedge { from, to, attempt, after_ms, learned } => {
                w.field("type", "hedge");
                w.field("from", from);
                w.field("to", to);
                w.field("attempt", attempt);
                w.field("afterMs", after_ms);
                w.field("threshold", if *learned { "learned" } else { "fixed" });
            }
            Event::Resume { mode, from, to, attempt, cause, kept_chars } => {
                w.field("type", "resume");
                w.field("mode", mode.as_str());
                w.field("from", from);
                w.field("to", to);
                w.field("attempt", attempt);
                w.field("cause", cause);
                w.field("keptChars", kept_chars);
            }
            Event::Warning { target, attempt, message } => {
                w.field("type", "warning");
                w.field("target", target);
                w.field("attempt", attempt);
                w.field("message", message);
            }
        }
        w.end_object();
    }
}
