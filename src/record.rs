//! What a call leaves behind: one [`Leg`] per attempt, and the [`Event`]s a UI shows as they
//! happen ("Provider busy, retrying (2/4) in 0.5 s", "Primary timed out, switching to backup").
//!
//! Both serialize to the camelCase JSON the JS API hands out. Nothing here holds a credential:
//! failures carry provider messages and statuses, never request headers.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::chat::Usage;
use crate::config::ResumeMode;
use crate::outcome::{Failure, FailureClass, Limit};

/// One attempt. Times are milliseconds since the call started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Leg {
    pub target: String,
    /// 1-based position of this attempt within the call.
    pub attempt: u32,
    pub start_ms: u64,
    pub end_ms: u64,
    /// "ok", or the failure's kind: "http", "timeout", "transport", "cancelled", "protocol".
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Limit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// The provider error's class (`context_length`, `quota`, …), when it had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<FailureClass>,
    /// Time to the first visible content, for streams that showed some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    /// Malformed stream frames skipped in this attempt (each also a `warning` event).
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_frames: u32,
    /// The token counts this attempt's provider reported, even if the attempt failed later.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// For an attempt that resumed a broken stream: which attempt's answer, and how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<ResumedFrom>,
}

/// What a resuming attempt took over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumedFrom {
    /// The attempt whose stream broke.
    pub attempt: u32,
    pub mode: ResumeMode,
    /// Characters of the text shown that this attempt was asked to continue (0 for a restart).
    pub kept_chars: usize,
}

impl Usage {
    /// This snapshot updated by a later one from the same provider: a reported count replaces.
    pub fn updated_by(self, later: Usage) -> Usage {
        Usage {
            input_tokens: later.input_tokens.or(self.input_tokens),
            output_tokens: later.output_tokens.or(self.output_tokens),
        }
    }

    /// What `usages` add up to; a count no one reported stays unknown.
    pub fn sum(usages: impl IntoIterator<Item = Usage>) -> Usage {
        let add = |a: Option<u64>, b: Option<u64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.saturating_add(b)),
            (a, b) => a.or(b),
        };
        usages.into_iter().fold(Usage::default(), |total, u| Usage {
            input_tokens: add(total.input_tokens, u.input_tokens),
            output_tokens: add(total.output_tokens, u.output_tokens),
        })
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Progress a caller can show while it waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Event {
    /// An attempt was sent.
    Attempt { target: String, attempt: u32 },
    /// An attempt ended (successfully or not); `cause` says why it failed. Health stores take
    /// these as their reports.
    Leg {
        leg: Leg,
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<FailureInfo>,
    },
    /// A member was passed over because its circuit breaker is open.
    Skip {
        target: String,
        reason: String,
        reopens_in_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<FailureInfo>,
    },
    /// The same member will be tried again after `delay_ms`. `attempt` is the 1-based attempt
    /// of this retry strategy that failed, `of` the attempts it allows.
    Retry { target: String, attempt: u32, of: u32, delay_ms: u64, cause: FailureInfo },
    /// The next member of a fallback takes over at once.
    Failover { from: String, to: String, cause: FailureInfo },
    /// A stream that broke after its start goes on at attempt `attempt` of target `to`:
    /// continuing the `kept_chars` characters shown, or restarting (the reader discards what it
    /// saw when the new answer's first content arrives).
    Resume { mode: ResumeMode, from: String, to: String, attempt: u32, cause: FailureInfo, kept_chars: usize },
    /// Something the caller should know that did not fail the attempt: a malformed stream frame
    /// was skipped (README, "Malformed frames"), or a broken stream was not resumed and why.
    Warning { target: String, attempt: u32, message: String },
}

/// A failure as the caller sees it:
/// `{kind, message, status?, code?, class?, timeout?, limitMs?, retryAfterMs?}` (`code` the
/// provider's own error code, `class` the failure class the gate and the gateway read from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureInfo(pub Failure);

impl Serialize for FailureInfo {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = &self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", f.kind().as_str())?;
        m.serialize_entry("message", &f.to_string())?;
        if let Some(status) = f.status() {
            m.serialize_entry("status", &status)?;
        }
        if let Some(code) = f.code() {
            m.serialize_entry("code", code)?;
        }
        if let Some(class) = f.class() {
            m.serialize_entry("class", class.as_str())?;
        }
        if let Some(ms) = f.retry_after_ms() {
            m.serialize_entry("retryAfterMs", &ms)?;
        }
        if let Some((limit, ms)) = f.timeout() {
            m.serialize_entry("timeout", limit.as_str())?;
            m.serialize_entry("limitMs", &ms)?;
        }
        m.end()
    }
}
