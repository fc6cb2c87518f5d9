//! Reasoning: what a request asks of it, and the opaque state a provider issues with it and
//! wants back unchanged in the next turn of an agent loop.
//!
//! Each provider has its own state (Anthropic's thinking signatures and redacted thinking,
//! Gemini's thought signatures, OpenAI Responses' reasoning items with their encrypted content),
//! each valid only where it was issued. So a state names its issuer, the format and the model of
//! the target that answered, and every format sends a state only to a target of the same format
//! and model ([`ReasoningState::valid_for`]): what another member of a route issued is left out
//! of its request, never sent where it would be refused. That one rule covers retries, failover,
//! hedges and resume legs alike, since every leg builds its own request from the same history.

use llm_baton_wire::write::{JsonWriter, ToJson};

/// How hard the model should think, in the request (`reasoning: {effort?, budgetTokens?,
/// summary?}`). Present, even empty, it turns reasoning on and asks for its state back; each
/// format maps it onto its own fields (README, "Agents and reasoning").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReasoningRequest {
    pub effort: Option<Effort>,
    /// Tokens the model may think with (Anthropic, Gemini 2.5); else the effort's budget.
    pub budget_tokens: Option<u32>,
    /// Ask for the reasoning's summary as text (Responses, Gemini).
    pub summary: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Minimal,
    Low,
    Medium,
    High,
}

impl Effort {
    pub const ALL: [Effort; 4] = [Effort::Minimal, Effort::Low, Effort::Medium, Effort::High];

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }

    /// The thinking budget in tokens an effort stands for, where a format takes a budget and the
    /// request gave none (Anthropic's minimum is 1024).
    pub fn budget_tokens(self) -> u32 {
        match self {
            Effort::Minimal => 1024,
            Effort::Low => 2048,
            Effort::Medium => 8192,
            Effort::High => 24576,
        }
    }
}

impl ReasoningRequest {
    /// The budget the request asks for: its own, or its effort's (medium when it gives neither).
    pub fn budget(&self) -> u32 {
        self.budget_tokens.unwrap_or_else(|| self.effort.unwrap_or(Effort::Medium).budget_tokens())
    }
}

/// What a provider issued with a piece of reasoning (or a tool call), to be sent back unchanged
/// to the same format and model. The engine names the issuer as the answer passes through it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasoningState {
    /// The issuing target's format (`"anthropic_messages"`...).
    pub format: String,
    /// The issuing target's model, as its config names it.
    pub model: String,
    pub opaque: Opaque,
}

/// The provider's own opaque value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opaque {
    /// An Anthropic thinking block's `signature`, or a Gemini part's `thoughtSignature`.
    Signature(String),
    /// An Anthropic `redacted_thinking` block's `data`.
    Redacted(String),
    /// An OpenAI Responses reasoning item: its `id` and `encrypted_content`.
    Item { id: String, encrypted_content: Option<String> },
    /// None: the reasoning's own text is what its issuer wants back, a Chat Completions
    /// server's `reasoning_content` (DeepSeek's thinking mode, Kimi K2 and GLM in a tool loop).
    /// The state only names the issuer, so the text goes to no other target.
    Plain,
}

impl ReasoningState {
    /// A state whose issuer the engine fills in (see `ReasoningState::issued_by`).
    pub fn new(opaque: Opaque) -> ReasoningState {
        ReasoningState { format: String::new(), model: String::new(), opaque }
    }

    /// Names the issuer, unless a state already names one.
    pub fn issued_by(&mut self, format: &str, model: &str) {
        if self.format.is_empty() {
            self.format = format.to_string();
            self.model = model.to_string();
        }
    }

    /// Whether a target of `format` and `model` can verify this state. Anthropic and OpenAI tie
    /// their signatures and encrypted reasoning to the model; Gemini's signatures are as well
    /// treated as the model's (Google documents them per model and says nothing of another one
    /// taking them), so the rule is the same for every format. Anthropic documents its thinking
    /// signatures as valid across its API, Amazon Bedrock and Google Vertex AI, which name the
    /// same model each their own way: there the models compare as [`claude_model`] reads them.
    pub fn valid_for(&self, format: &str, model: &str) -> bool {
        self.format == format
            && (self.model == model
                || format == "anthropic_messages" && claude_model(&self.model) == claude_model(model))
    }

    /// The state's bytes, counted in an answer's size cap.
    pub fn byte_len(&self) -> usize {
        let opaque = match &self.opaque {
            Opaque::Signature(s) | Opaque::Redacted(s) => s.len(),
            Opaque::Item { id, encrypted_content } => id.len() + encrypted_content.as_ref().map_or(0, String::len),
            Opaque::Plain => 0,
        };
        self.format.len() + self.model.len() + opaque
    }
}

/// A Claude model's id as Anthropic's API names it, from the id Bedrock or Vertex gives it:
/// Bedrock's `anthropic.claude-sonnet-4-5-20250929-v1:0`, its inference profiles'
/// `us.anthropic.…` (and their ARNs, `arn:aws:bedrock:…:inference-profile/us.anthropic.…`), and
/// Vertex's `claude-sonnet-4-5@20250929` are all `claude-sonnet-4-5-20250929`. An alias
/// (`claude-sonnet-4-5`) stays itself: it may not name the same snapshot.
fn claude_model(id: &str) -> String {
    let id = id.rsplit('/').next().unwrap_or(id);
    let id = match id.split_once(".anthropic.") {
        Some((geography, rest)) if !geography.contains('.') => rest,
        _ => id.strip_prefix("anthropic.").unwrap_or(id),
    };
    // Bedrock's model version (`-v1:0`), after the snapshot's date.
    let digits = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    let id = match id.rsplit_once('-') {
        Some((snapshot, version))
            if snapshot.len() > 8
                && digits(&snapshot[snapshot.len() - 8..])
                && version
                    .strip_prefix('v')
                    .and_then(|v| v.split_once(':'))
                    .is_some_and(|(a, b)| digits(a) && digits(b)) =>
        {
            snapshot
        }
        _ => id,
    };
    id.replacen('@', "-", 1)
}

/// What reasoning text is: the model's own reasoning as it thought it, or a summary of it. A
/// Responses client is told the two apart (a reasoning item's `content` of `reasoning_text`, or
/// its `summary`); each provider's reader says which it read:
/// - OpenAI Responses: `summary` parts are a summary, `content` parts of `reasoning_text` raw.
/// - OpenAI Chat: `reasoning_content` / `reasoning` is raw (what DeepSeek, vLLM, OpenRouter send).
/// - Anthropic: `thinking` is a summary (Claude 4 models summarize their thinking; only Claude
///   3.7 Sonnet gave it whole, and the API does not say which it sent).
/// - Gemini: a `thought` part is a summary (Google calls them thought summaries).
///
/// The JS API marks raw reasoning `raw: true`; a part without the mark is a summary, as every
/// part was before the two were told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReasoningKind {
    Raw,
    #[default]
    Summary,
}

impl ReasoningKind {
    /// `"raw":true` for raw reasoning; nothing for a summary.
    pub fn write_mark(self, w: &mut JsonWriter) {
        if self == ReasoningKind::Raw {
            w.field("raw", &true);
        }
    }
}

/// One piece of an assistant's reasoning: its text (possibly empty, for redacted thinking or a
/// bare signature), what the text is, and the state its provider issued with it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReasoningPart {
    pub text: String,
    pub kind: ReasoningKind,
    pub state: Option<ReasoningState>,
}

impl ReasoningPart {
    /// Appends reasoning text of `kind` to `parts`: to the last part while it has no state yet (a
    /// state ends its part) and is of the same kind, else as a new part. A whole answer and a
    /// stream build their parts with this and [`ReasoningPart::push_state`], so they agree.
    pub fn push_text(parts: &mut Vec<ReasoningPart>, kind: ReasoningKind, text: &str) {
        match parts.last_mut() {
            Some(last) if last.state.is_none() && (last.kind == kind || last.text.is_empty()) => {
                last.kind = kind;
                last.text.push_str(text)
            }
            _ if text.is_empty() => {}
            _ => parts.push(ReasoningPart { text: text.to_string(), kind, state: None }),
        }
    }

    /// Reasoning of `kind` that came with no state, as the one part a stream of it adds up to
    /// (none for no text).
    pub fn unsigned(kind: ReasoningKind, text: &str) -> Vec<ReasoningPart> {
        let mut parts = Vec::new();
        ReasoningPart::push_text(&mut parts, kind, text);
        parts
    }

    /// Ends the last part with `state`, or adds a part of no text that holds it.
    pub fn push_state(parts: &mut Vec<ReasoningPart>, state: ReasoningState) {
        match parts.last_mut() {
            Some(last) if last.state.is_none() => last.state = Some(state),
            _ => parts.push(ReasoningPart { state: Some(state), ..Default::default() }),
        }
    }
}

/// `{format, model, signature}`, `{format, model, redactedData}`, `{format, model, id,
/// encryptedContent?}` or, for Chat Completions reasoning, `{format, model}`.
impl ToJson for ReasoningState {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("format", &self.format);
        w.field("model", &self.model);
        match &self.opaque {
            Opaque::Signature(s) => w.field("signature", s),
            Opaque::Redacted(data) => w.field("redactedData", data),
            Opaque::Item { id, encrypted_content } => {
                w.field("id", id);
                w.opt_field("encryptedContent", encrypted_content.as_ref());
            }
            Opaque::Plain => {}
        }
        w.end_object();
    }
}

/// `{type: "reasoning", text, raw?, state?}`, a part of an assistant message's content.
impl ToJson for ReasoningPart {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("type", "reasoning");
        w.field("text", &self.text);
        self.kind.write_mark(w);
        w.opt_field("state", self.state.as_ref());
        w.end_object();
    }
}

/// `{effort?, budgetTokens?, summary?}`.
impl ToJson for ReasoningRequest {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.opt_field("effort", self.effort.map(Effort::as_str));
        w.opt_field("budgetTokens", self.budget_tokens.as_ref());
        w.opt_field("summary", self.summary.as_ref());
        w.end_object();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(s: &str) -> ReasoningState {
        let mut state = ReasoningState::new(Opaque::Signature(s.into()));
        state.issued_by("anthropic_messages", "claude");
        state
    }

    #[test]
    fn a_state_ends_its_part_and_text_after_it_opens_the_next() {
        use ReasoningKind::{Raw, Summary};
        let mut parts = Vec::new();
        ReasoningPart::push_text(&mut parts, Summary, "a");
        ReasoningPart::push_text(&mut parts, Summary, "b");
        ReasoningPart::push_state(&mut parts, signed("s1"));
        ReasoningPart::push_state(&mut parts, signed("redacted"));
        ReasoningPart::push_text(&mut parts, Raw, "");
        ReasoningPart::push_text(&mut parts, Raw, "c");
        ReasoningPart::push_text(&mut parts, Summary, "d");
        let expected = [
            ReasoningPart { text: "ab".into(), kind: Summary, state: Some(signed("s1")) },
            ReasoningPart { text: String::new(), kind: Summary, state: Some(signed("redacted")) },
            ReasoningPart { text: "c".into(), kind: Raw, state: None },
            ReasoningPart { text: "d".into(), kind: Summary, state: None },
        ];
        assert_eq!(parts, expected);
    }

    #[test]
    fn a_state_is_valid_only_for_its_issuers_format_and_model() {
        let state = signed("s");
        assert!(state.valid_for("anthropic_messages", "claude"));
        assert!(!state.valid_for("anthropic_messages", "claude-other"));
        assert!(!state.valid_for("gemini", "claude"));
        let mut named = state.clone();
        named.issued_by("gemini", "g");
        assert_eq!(named, state, "a named issuer is kept");
    }

    #[test]
    fn a_claude_signature_holds_on_anthropic_bedrock_and_vertex_for_the_same_model() {
        let same = [
            "claude-sonnet-4-5-20250929",
            "claude-sonnet-4-5@20250929",
            "anthropic.claude-sonnet-4-5-20250929-v1:0",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ];
        for issuer in same {
            let mut state = signed("s");
            state.model = issuer.into();
            for model in same {
                assert!(state.valid_for("anthropic_messages", model), "{issuer} -> {model}");
            }
            let others = [
                "claude-opus-4-1-20250805",
                "claude-opus-4-1@20250805",
                "claude-sonnet-4-5",
                "claude-sonnet-4-5@20250930",
            ];
            for other in others {
                assert!(!state.valid_for("anthropic_messages", other), "{issuer} -> {other}");
            }
            // The issuer rule holds in every other format, whatever the ids look like.
            let mut gemini = state.clone();
            gemini.format = "gemini".into();
            assert!(!gemini.valid_for("gemini", if issuer == same[0] { same[1] } else { same[0] }), "{issuer}");
        }
        assert_eq!(claude_model("anthropic.claude-v2:1"), "claude-v2:1", "no snapshot date: no version to strip");
    }

    #[test]
    fn effort_budgets_rise_and_start_at_anthropics_minimum() {
        let budgets: Vec<u32> = Effort::ALL.iter().map(|e| e.budget_tokens()).collect();
        assert_eq!(budgets[0], 1024);
        assert!(budgets.windows(2).all(|w| w[0] < w[1]), "{budgets:?}");
        assert_eq!(ReasoningRequest::default().budget(), 8192);
        assert_eq!(ReasoningRequest { budget_tokens: Some(3000), ..Default::default() }.budget(), 3000);
    }
}
