//! What a streamed answer shows its reader, and the answer that adds up to.
//!
//! A provider's stream is outside data: a hostile or buggy frame may number a tool call
//! 4294967295, open thousands of calls, or grow an answer without end. This module is the one
//! place that turns decoded deltas into what the caller sees, so those rules are plain Rust,
//! tested natively and fuzzed:
//! - tool calls are keyed by the provider's `index` and delivered at dense positions (0, 1, …) in
//!   the order first seen, never at a position a provider chose;
//! - deltas that are not visible yet (a tool call's opening name) are held until visible content
//!   follows, and dropped with the attempt if none does;
//! - everything kept is bounded: [`MAX_TOOL_CALLS`] calls and [`MAX_ANSWER_BYTES`] of content.
//!
//! The engine owns one `Delivery` per call and decides when deltas may pass (the commit point).
//! When a broken stream resumes (`afterStart`), the same `Delivery` either goes on (continue: the
//! text so far becomes the next member's prefill, and the whitespace the prefill left out is not
//! shown twice) or starts over (restart).

use crate::chat::{Answer, ContentFilterResults, Delta, FinishReason, ReasoningPart, ToolCall, Usage};
use crate::outcome::Failure;

/// The most tool calls one answer may open. Real answers open a handful; a provider that
/// opens more is broken or hostile, and the answer fails as a protocol error.
pub const MAX_TOOL_CALLS: usize = 256;

/// The most content (text, reasoning, tool names and arguments) one answer may hold: 16 MiB,
/// far above any model's output limit. A whole answer's body has the same cap.
pub const MAX_ANSWER_BYTES: usize = 16 << 20;

/// The answer shown so far, and what is held back until it may be shown.
#[derive(Debug, Default)]
pub struct Delivery {
    text: String,
    reasoning: String,
    /// The reasoning in its pieces, with the states that end them (what `reasoning` adds up to).
    reasoning_parts: Vec<ReasoningPart>,
    tool_calls: Vec<ToolCall>,
    /// What the provider's content filter said so far, the latest of each result.
    content_filter: Option<ContentFilterResults>,
    /// The provider's index of each entry of `tool_calls`, in the same order.
    provider_indexes: Vec<u32>,
    held: Vec<Delta>,
    /// Content bytes kept, held deltas included.
    bytes: usize,
    /// Whether the last visible delta shown was text (not reasoning or a tool call).
    last_shown_text: bool,
    /// Whitespace the reader has seen but a continuation's prefill left out: the continuation
    /// usually starts with it, and it is dropped there once.
    echo: String,
}

impl Delivery {
    /// Keeps a delta that is not visible on its own until visible content follows. Empty text
    /// carries nothing and is dropped.
    pub fn hold(&mut self, delta: Delta) -> Result<(), Failure> {
        if matches!(&delta, Delta::Text { text } | Delta::Reasoning { text, .. } if text.is_empty()) {
            return Ok(());
        }
        self.count(&delta)?;
        self.held.push(delta);
        Ok(())
    }

    /// Whether deltas are held back, waiting for visible content.
    pub fn holds(&self) -> bool {
        !self.held.is_empty()
    }

    /// Shows what is held, in order. The engine calls it when the answer ends before visible
    /// content followed (a tool call with no arguments at all): what was held is its end.
    pub fn deliver_held(&mut self, out: &mut Vec<Delta>) -> Result<(), Failure> {
        for delta in std::mem::take(&mut self.held) {
            Delta::push(out, self.record(delta)?);
        }
        Ok(())
    }

    /// Forgets what the last attempt held back (a new attempt starts from nothing).
    pub fn drop_held(&mut self) {
        for d in std::mem::take(&mut self.held) {
            self.bytes -= content_bytes(&d);
        }
    }

    /// Records `delta`, after any held ones, as shown, appending what the caller sees to `out`:
    /// tool-call fragments carry their dense position as `index`. A text joins a text just before
    /// it in `out` (`Delta::push`), so what the engine lets through together reaches the reader as
    /// one item, also when something not shown came between (usage reported with every frame).
    pub fn deliver(&mut self, delta: Delta, out: &mut Vec<Delta>) -> Result<(), Failure> {
        self.count(&delta)?;
        if self.held.is_empty() {
            // The usual case, without a `held` list to allocate and free for every delta.
            Delta::push(out, self.record(delta)?);
            return Ok(());
        }
        self.held.push(delta);
        self.deliver_held(out)
    }

    /// Whether another model can continue what was shown from a prefill: text only, with no
    /// tool call shown (no format takes half a call as a prefill) and not inside reasoning.
    pub fn can_continue(&self) -> bool {
        self.tool_calls.is_empty() && self.last_shown_text && !self.text.trim().is_empty()
    }

    /// The text shown so far as a continuation's prefill: without its trailing whitespace
    /// (Anthropic refuses a prefill that ends in whitespace), which the continuation's start is
    /// then expected to repeat. Returns the prefill and the characters of text kept.
    pub fn continue_from(&mut self) -> (String, usize) {
        let prefill = self.text.trim_end();
        self.echo = self.text[prefill.len()..].to_string();
        (prefill.to_string(), self.text.chars().count())
    }

    /// Drops from a continuation's text what the reader already saw (see [`Self::continue_from`]):
    /// the leading whitespace, up to the whitespace the prefill left out. A continuation that
    /// starts otherwise ends the expectation.
    pub fn drop_echo(&mut self, delta: &mut Delta) {
        let Delta::Text { text } = delta else { return };
        if self.echo.is_empty() || text.is_empty() {
            return;
        }
        let shared: usize =
            text.chars().zip(self.echo.chars()).take_while(|(a, b)| a == b).map(|(a, _)| a.len_utf8()).sum();
        let whole = shared == text.len() && shared < self.echo.len();
        text.drain(..shared);
        if whole {
            self.echo.drain(..shared);
        } else {
            self.echo.clear();
        }
    }

    /// Forgets the answer shown so far (a restart): only what the new attempt holds stays.
    pub fn start_over(&mut self) {
        let held = std::mem::take(&mut self.held);
        *self = Delivery::default();
        for d in held {
            self.bytes += content_bytes(&d);
            self.held.push(d);
        }
    }

    /// Characters of text and reasoning shown so far.
    pub fn shown_chars(&self) -> usize {
        self.text.chars().count() + self.reasoning.chars().count()
    }

    /// Adds one delta to the answer; returns it as the caller sees it.
    fn record(&mut self, delta: Delta) -> Result<Delta, Failure> {
        if delta.is_visible() {
            self.last_shown_text = matches!(delta, Delta::Text { .. });
        }
        Ok(match delta {
            Delta::Text { text } => {
                self.text.push_str(&text);
                Delta::Text { text }
            }
            Delta::Reasoning { text, kind } => {
                self.reasoning.push_str(&text);
                ReasoningPart::push_text(&mut self.reasoning_parts, kind, &text);
                Delta::Reasoning { text, kind }
            }
            Delta::ReasoningState { state } => {
                ReasoningPart::push_state(&mut self.reasoning_parts, state.clone());
                Delta::ReasoningState { state }
            }
            Delta::ToolCallState { index, state } => {
                let position = self.position(index)?;
                self.tool_calls[position].state = Some(state.clone());
                Delta::ToolCallState { index: position as u32, state }
            }
            Delta::ToolCall { index, id, name, arguments } => {
                let position = self.position(index)?;
                let call = &mut self.tool_calls[position];
                if let Some(id) = &id {
                    call.id.clone_from(id);
                }
                if let Some(name) = &name {
                    call.name.clone_from(name);
                }
                call.arguments.push_str(&arguments);
                Delta::ToolCall { index: position as u32, id, name, arguments }
            }
            Delta::ContentFilter { results } => {
                ContentFilterResults::update(&mut self.content_filter, &results);
                Delta::ContentFilter { results }
            }
            other @ (Delta::Done { .. } | Delta::Skipped { .. } | Delta::Usage { .. } | Delta::Logprobs { .. }) => {
                other
            }
        })
    }

    /// The whole answer as shown, ended by the provider's finish reason, usage and the model the
    /// stream named.
    pub fn into_answer(self, finish_reason: FinishReason, usage: Usage, model: Option<String>) -> Answer {
        Answer {
            text: self.text,
            reasoning: self.reasoning,
            reasoning_parts: self.reasoning_parts,
            tool_calls: self.tool_calls,
            finish_reason,
            usage,
            model,
            logprobs: None,
            content_filter: self.content_filter.map(Box::new),
        }
    }

    /// The dense position of the provider's tool call `index`, opening it if new.
    fn position(&mut self, index: u32) -> Result<usize, Failure> {
        if let Some(p) = self.provider_indexes.iter().position(|i| *i == index) {
            return Ok(p);
        }
        if self.tool_calls.len() >= MAX_TOOL_CALLS {
            return Err(Failure::Protocol {
                message: format!("the answer opened more than {MAX_TOOL_CALLS} tool calls"),
            });
        }
        self.provider_indexes.push(index);
        self.tool_calls.push(ToolCall::default());
        Ok(self.tool_calls.len() - 1)
    }

    fn count(&mut self, delta: &Delta) -> Result<(), Failure> {
        self.bytes += content_bytes(delta);
        if self.bytes > MAX_ANSWER_BYTES {
            return Err(answer_too_large());
        }
        Ok(())
    }
}

/// The protocol failure of an answer over [`MAX_ANSWER_BYTES`].
pub fn answer_too_large() -> Failure {
    Failure::Protocol { message: format!("the answer is larger than the {} MiB cap", MAX_ANSWER_BYTES >> 20) }
}

fn content_bytes(delta: &Delta) -> usize {
    match delta {
        Delta::Text { text } | Delta::Reasoning { text, .. } => text.len(),
        Delta::ToolCall { id, name, arguments, .. } => {
            id.as_ref().map_or(0, String::len) + name.as_ref().map_or(0, String::len) + arguments.len()
        }
        Delta::ReasoningState { state } | Delta::ToolCallState { state, .. } => state.byte_len(),
        // Passed on and not kept: a streamed answer's summary has no logprobs.
        Delta::Done { .. }
        | Delta::Skipped { .. }
        | Delta::Usage { .. }
        | Delta::Logprobs { .. }
        | Delta::ContentFilter { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ReasoningKind;

    fn call(index: u32, name: Option<&str>, arguments: &str) -> Delta {
        Delta::ToolCall {
            index,
            id: name.map(|n| format!("id-{n}")),
            name: name.map(str::to_string),
            arguments: arguments.into(),
        }
    }

    #[test]
    fn tool_calls_take_dense_positions_in_the_order_first_seen() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        for delta in [call(4_294_967_295, Some("a"), "{"), call(7, Some("b"), "{}"), call(4_294_967_295, None, "}")] {
            d.deliver(delta, &mut out).unwrap();
        }
        let indexes: Vec<u32> =
            out.iter().map(|d| if let Delta::ToolCall { index, .. } = d { *index } else { 99 }).collect();
        assert_eq!(indexes, [0, 1, 0]);
        let answer = d.into_answer(FinishReason::ToolCalls, Usage::default(), None);
        assert_eq!(answer.tool_calls.len(), 2);
        assert_eq!((answer.tool_calls[0].name.as_str(), answer.tool_calls[0].arguments.as_str()), ("a", "{}"));
        assert_eq!((answer.tool_calls[1].name.as_str(), answer.tool_calls[1].arguments.as_str()), ("b", "{}"));
    }

    #[test]
    fn a_batch_joins_texts_and_reasonings_that_follow_their_own_kind() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        let text = |t: &str| Delta::Text { text: t.into() };
        let thought = |t: &str| Delta::Reasoning { kind: ReasoningKind::Summary, text: t.into() };
        for delta in [thought("a"), thought("b"), text("c"), text("d"), call(0, Some("f"), "{}"), text("e")] {
            d.deliver(delta, &mut out).unwrap();
        }
        assert_eq!(out, [thought("ab"), text("cd"), call(0, Some("f"), "{}"), text("e")]);
        let answer = d.into_answer(FinishReason::Stop, Usage::default(), None);
        assert_eq!((answer.reasoning.as_str(), answer.text.as_str()), ("ab", "cde"));
    }

    #[test]
    fn an_index_starting_above_zero_opens_no_phantom_call() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        d.deliver(Delta::Text { text: "Let me check.".into() }, &mut out).unwrap();
        d.deliver(call(1, Some("weather"), "{}"), &mut out).unwrap();
        let answer = d.into_answer(FinishReason::ToolCalls, Usage::default(), None);
        assert_eq!(answer.tool_calls.len(), 1);
        assert_eq!(answer.tool_calls[0].name, "weather");
    }

    #[test]
    fn held_deltas_go_out_first_or_not_at_all() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        d.hold(call(0, Some("f"), "")).unwrap();
        d.drop_held();
        d.hold(call(3, Some("g"), "")).unwrap();
        d.deliver(call(3, None, "{}"), &mut out).unwrap();
        assert_eq!(out.len(), 2);
        let answer = d.into_answer(FinishReason::ToolCalls, Usage::default(), None);
        assert_eq!(
            answer.tool_calls,
            [ToolCall { id: "id-g".into(), name: "g".into(), arguments: "{}".into(), state: None }]
        );
    }

    #[test]
    fn too_many_tool_calls_is_a_protocol_error() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        for i in 0..MAX_TOOL_CALLS as u32 {
            d.deliver(call(i * 1000, Some("f"), "{}"), &mut out).unwrap();
        }
        let err = d.deliver(call(u32::MAX, Some("f"), "{}"), &mut out).unwrap_err();
        assert_eq!(err, Failure::Protocol { message: "the answer opened more than 256 tool calls".into() });
    }

    #[test]
    fn content_is_capped() {
        let mut d = Delivery::default();
        let mut out = Vec::new();
        let mib = "x".repeat(1 << 20);
        for _ in 0..16 {
            d.deliver(Delta::Text { text: mib.clone() }, &mut out).unwrap();
        }
        assert_eq!(d.deliver(Delta::Text { text: "x".into() }, &mut out), Err(answer_too_large()));
        assert_eq!(answer_too_large().to_string(), "protocol error: the answer is larger than the 16 MiB cap");
    }
}
