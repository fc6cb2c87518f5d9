//! The normalized answer: a whole [`Answer`], or the [`Delta`]s a stream decodes into, with
//! their finish reasons, tool calls and token counts, in the JSON shape the JS API hands out.

use std::borrow::Cow;

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

use super::{Message, ReasoningKind, ReasoningPart, ReasoningState, Role};

/// A complete tool call: `arguments` is the JSON text the model produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// What the provider issued with the call (Gemini's thought signature), to send back.
    pub state: Option<ReasoningState>,
}

/// Token counts as the provider reported them. A count it did not report, or reported as no
/// count (fractional, negative, beyond 2^53 - 1, not a number), is unknown: `None`, omitted from
/// the JSON, so an odd usage frame never fails an answer whose text was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
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

/// Why the model stopped, normalized across providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// A provider reason with no normalized equivalent, kept verbatim.
    Other(String),
}

/// Token log probabilities as a provider wrote them, with the name of its format: no other
/// format has the same shape, so only a gateway client of that format is shown them
/// (docs/parameters.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Logprobs {
    /// The provider format that wrote them (`"openai_chat"`...).
    pub format: &'static str,
    /// Chat's `choices[0].logprobs` object, or Responses' list of an output text's logprobs.
    pub raw: Value,
}

/// What a provider's content filter said about the prompt and the answer, as it wrote it:
/// Azure OpenAI's `prompt_filter_results` (a list, one per prompt) and the choice's
/// `content_filter_results` (by category: `hate`, `violence`, ... with `filtered` and
/// `severity`). An empty list or object says nothing and is left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContentFilterResults {
    pub prompt: Option<Value>,
    pub choice: Option<Value>,
}

impl ContentFilterResults {
    /// `None` when neither result says anything.
    pub fn of(prompt: Option<Value>, choice: Option<Value>) -> Option<ContentFilterResults> {
        let said = |v: Option<Value>| {
            v.filter(|v| v.as_array().map_or(v.as_object().is_some_and(|o| !o.is_empty()), |a| !a.is_empty()))
        };
        let (prompt, choice) = (said(prompt), said(choice));
        (prompt.is_some() || choice.is_some()).then_some(ContentFilterResults { prompt, choice })
    }

    /// These results updated by later ones of the same answer: a result given replaces.
    pub fn update(results: &mut Option<ContentFilterResults>, later: &ContentFilterResults) {
        let results = results.get_or_insert_with(ContentFilterResults::default);
        if later.prompt.is_some() {
            results.prompt.clone_from(&later.prompt);
        }
        if later.choice.is_some() {
            results.choice.clone_from(&later.choice);
        }
    }

    /// `"promptFilterResults"` and `"contentFilterResults"`, each when given, into an open object.
    fn write_fields(&self, w: &mut JsonWriter) {
        w.opt_field("promptFilterResults", self.prompt.as_ref());
        w.opt_field("contentFilterResults", self.choice.as_ref());
    }
}

/// `{promptFilterResults?, contentFilterResults?}`.
impl ToJson for ContentFilterResults {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        self.write_fields(w);
        w.end_object();
    }
}

/// A whole, non-streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub text: String,
    pub reasoning: String,
    /// The reasoning in its pieces, with the state each piece's provider issued (their texts
    /// add up to `reasoning`).
    pub reasoning_parts: Vec<ReasoningPart>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Usage,
    /// The model the provider says answered, when it says.
    pub model: Option<String>,
    /// The text's token log probabilities, when the provider was asked for them.
    pub logprobs: Option<Logprobs>,
    /// What the provider's content filter said, when it said anything (Azure OpenAI); boxed, as
    /// most answers have none.
    pub content_filter: Option<Box<ContentFilterResults>>,
}

/// One normalized piece of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    Text {
        text: String,
    },
    /// Reasoning text, raw or a summary ([`ReasoningKind`]).
    Reasoning {
        text: String,
        kind: ReasoningKind,
    },
    /// The state the provider issued with the reasoning just streamed: it ends that piece of
    /// reasoning (see [`ReasoningPart::push_state`]). Not visible.
    ReasoningState {
        state: ReasoningState,
    },
    /// The state the provider issued with the tool call at `index`. Not visible.
    ToolCallState {
        index: u32,
        state: ReasoningState,
    },
    /// The log probabilities of the text that follows (the same provider frame's). Not
    /// visible.
    Logprobs {
        logprobs: Logprobs,
    },
    /// A fragment of a tool call; `index` groups the fragments of one call.
    ToolCall {
        index: u32,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    /// The stream's successful end, carrying what the provider reported: why it stopped, the
    /// token counts, and the model that answered when the stream named it.
    Done {
        finish_reason: FinishReason,
        usage: Usage,
        model: Option<String>,
    },
    /// What the provider's content filter said in this frame (Azure OpenAI's first frame has
    /// the prompt's results, later ones the answer's). Not visible.
    ContentFilter {
        results: ContentFilterResults,
    },
    /// A malformed frame the decoder skipped; `reason` says what was wrong with it. Not part of
    /// the answer: the engine turns it into a `warning` event, or fails the attempt when the
    /// target sets `strictFrames` or too many frames were skipped. Never delivered.
    Skipped {
        reason: String,
    },
    /// The token counts the provider reported before the end, as a cumulative snapshot (each
    /// emitted only when it changed). Never delivered to a reader: the engine keeps it on the
    /// attempt's leg, so a stream cut before its end still records what it was billed.
    Usage {
        usage: Usage,
    },
}

/// `{inputTokens?, outputTokens?}`.
impl ToJson for Usage {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.opt_field("inputTokens", self.input_tokens.as_ref());
        w.opt_field("outputTokens", self.output_tokens.as_ref());
        w.end_object();
    }
}

impl ToJson for ToolCall {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("id", &self.id);
        w.field("name", &self.name);
        w.field("arguments", &self.arguments);
        w.opt_field("state", self.state.as_ref());
        w.end_object();
    }
}

/// `"stop"`, `"length"`, `"tool_calls"`, `"content_filter"`, or the provider's own reason.
impl ToJson for FinishReason {
    fn write_json(&self, w: &mut JsonWriter) {
        w.string(match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(reason) => reason,
        })
    }
}

/// `{type, ...}`, camelCase.
impl ToJson for Delta {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Delta::Text { text } => {
                w.field("type", "text");
                w.field("text", text);
            }
            Delta::Reasoning { text, kind } => {
                w.field("type", "reasoning");
                w.field("text", text);
                kind.write_mark(w);
            }
            Delta::ReasoningState { state } => {
                w.field("type", "reasoning");
                w.field("text", "");
                w.field("state", state);
            }
            Delta::ToolCallState { index, state } => {
                w.field("type", "tool_call");
                w.field("index", index);
                w.field("arguments", "");
                w.field("state", state);
            }
            Delta::ToolCall { index, id, name, arguments } => {
                w.field("type", "tool_call");
                w.field("index", index);
                w.opt_field("id", id.as_ref());
                w.opt_field("name", name.as_ref());
                w.field("arguments", arguments);
            }
            Delta::Done { finish_reason, usage, model } => {
                w.field("type", "done");
                w.field("finishReason", finish_reason);
                w.field("usage", usage);
                w.opt_field("model", model.as_ref());
            }
            Delta::Logprobs { logprobs } => {
                w.field("type", "logprobs");
                w.field("format", logprobs.format);
                w.field("logprobs", &logprobs.raw);
            }
            Delta::ContentFilter { results } => {
                w.field("type", "content_filter");
                results.write_fields(w);
            }
            Delta::Skipped { reason } => {
                w.field("type", "skipped");
                w.field("reason", reason);
            }
            Delta::Usage { usage } => {
                w.field("type", "usage");
                w.field("usage", usage);
            }
        }
        w.end_object();
    }
}

impl Delta {
    /// Appends a streamed text fragment to a read's deltas, joined to a text delta just before it:
    /// one read of a 16 KB chunk is then one delta and one allocation, not one per frame. The
    /// engine handles the joined text as it would the fragments in turn (all of one read arrive
    /// at the same moment).
    pub fn push_text(out: &mut Vec<Delta>, fragment: Cow<'_, str>) {
        match out.last_mut() {
            Some(Delta::Text { text }) => text.push_str(&fragment),
            _ => out.push(Delta::Text { text: fragment.into_owned() }),
        }
    }

    /// [`push_text`](Self::push_text) for reasoning of `kind`, joined to reasoning of that kind.
    pub fn push_reasoning(out: &mut Vec<Delta>, kind: ReasoningKind, fragment: Cow<'_, str>) {
        match out.last_mut() {
            Some(Delta::Reasoning { text, kind: last }) if *last == kind => text.push_str(&fragment),
            _ => out.push(Delta::Reasoning { text: fragment.into_owned(), kind }),
        }
    }

    /// Appends a whole delta to a batch: a text (or reasoning) joined to the same kind just before
    /// it, any other delta as it is.
    pub fn push(out: &mut Vec<Delta>, delta: Delta) {
        match delta {
            Delta::Text { text } => Delta::push_text(out, Cow::Owned(text)),
            Delta::Reasoning { text, kind } => Delta::push_reasoning(out, kind, Cow::Owned(text)),
            other => out.push(other),
        }
    }

    /// Visible content ends the first-token wait, resets the idle timer and commits the stream:
    /// a non-empty text, reasoning or tool-argument fragment. Role-only chunks, pings and
    /// usage reports are not content.
    pub fn is_visible(&self) -> bool {
        match self {
            Delta::Text { text } | Delta::Reasoning { text, .. } => !text.is_empty(),
            Delta::ToolCall { arguments, .. } => !arguments.is_empty(),
            Delta::ReasoningState { .. }
            | Delta::ToolCallState { .. }
            | Delta::Logprobs { .. }
            | Delta::ContentFilter { .. }
            | Delta::Done { .. }
            | Delta::Skipped { .. }
            | Delta::Usage { .. } => false,
        }
    }
}

impl Answer {
    /// The assistant message this answer is, ready to push onto the history: its reasoning
    /// with the state, its text and its tool calls. Sent back unchanged, it is what the
    /// provider that issued the state accepts.
    pub fn message(&self) -> Message {
        Message {
            reasoning: self.reasoning_parts.clone(),
            tool_calls: self.tool_calls.clone(),
            ..Message::new(Role::Assistant, self.text.clone())
        }
    }

    /// Names the issuer of every state the answer holds (see [`ReasoningState::issued_by`]).
    pub fn name_issuer(&mut self, format: &str, model: &str) {
        let parts = self.reasoning_parts.iter_mut().filter_map(|p| p.state.as_mut());
        let calls = self.tool_calls.iter_mut().filter_map(|c| c.state.as_mut());
        parts.chain(calls).for_each(|s| s.issued_by(format, model));
    }
}

impl Delta {
    /// Names the issuer of the state this delta carries, if it carries one.
    pub fn name_issuer(&mut self, format: &str, model: &str) {
        if let Delta::ReasoningState { state } | Delta::ToolCallState { state, .. } = self {
            state.issued_by(format, model);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushed_fragments_join_the_same_kind_just_before_them() {
        let mut out = Vec::new();
        Delta::push_text(&mut out, "a".into());
        Delta::push_text(&mut out, Cow::Owned("b".into()));
        let (raw, summary) = (ReasoningKind::Raw, ReasoningKind::Summary);
        Delta::push_reasoning(&mut out, raw, "c".into());
        Delta::push_reasoning(&mut out, raw, "d".into());
        Delta::push_reasoning(&mut out, summary, "s".into());
        out.push(Delta::Usage { usage: Usage::default() });
        Delta::push_reasoning(&mut out, raw, "e".into());
        Delta::push_text(&mut out, "f".into());
        let expected = [
            Delta::Text { text: "ab".into() },
            Delta::Reasoning { text: "cd".into(), kind: raw },
            Delta::Reasoning { text: "s".into(), kind: summary },
            Delta::Usage { usage: Usage::default() },
            Delta::Reasoning { text: "e".into(), kind: raw },
            Delta::Text { text: "f".into() },
        ];
        assert_eq!(out, expected);
    }
}
