//! The normalized request, answer and stream deltas that every wire format translates to and from.
//!
//! A fallback chain may mix providers, so nothing above `format` ever sees a provider's own shape:
//! the caller writes one [`ChatRequest`], each format builds its provider's body from it, and every
//! provider's answer comes back as the same [`Answer`] or the same sequence of [`Delta`]s.
//!
//! A message's content is a list of [`Part`]s, so an image or a PDF travels with its text
//! through every member of a route; whether a provider can take a part is the format's to say
//! (`Format::uncarried`), checked before a call starts. The parameters follow the AI SDK's
//! names and shapes (`toolChoice`, `responseFormat`), which map onto every provider's.
//!
//! The request model is here; src/chat/read.rs reads the JS API's request document into it, and
//! src/chat/answer.rs holds the answer and the deltas a reply becomes.

use std::borrow::Cow;

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

mod answer;
mod read;
mod reasoning;

pub use answer::{Answer, ContentFilterResults, Delta, FinishReason, Logprobs, ToolCall, Usage};
pub(crate) use read::{is_media_type, read_carried};
pub use reasoning::{Effort, Opaque, ReasoningKind, ReasoningPart, ReasoningRequest, ReasoningState};

/// One chat turn, in the shape the JS API and the gateway accept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// Nucleus sampling, 0 to 1.
    pub top_p: Option<f64>,
    /// For reproducible sampling, where the provider takes one.
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    pub tools: Vec<Tool>,
    /// Whether and which tool the model must call; a named tool is one of `tools`.
    pub tool_choice: Option<ToolChoice>,
    /// `false` asks for at most one tool call per turn.
    pub parallel_tool_calls: Option<bool>,
    /// Structured output; `None` is free text (the JS `{type: "text"}`).
    pub response_format: Option<ResponseFormat>,
    /// Reasoning on, how hard, and its state kept (src/chat/reasoning.rs).
    pub reasoning: Option<ReasoningRequest>,
    /// The fields a gateway client sent that its dialect does not map into this request
    /// (`logprobs`, `service_tier`, `metadata`…), for a member of the client's own format.
    pub passthrough: Option<Passthrough>,
}

/// A client's request fields this model has no name for, in the words of the client's format:
/// a member of that format gets them in its body as they came (docs/parameters.md); a member
/// of another format cannot read them, and the call warns that they were dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct Passthrough {
    /// The provider format whose fields these are (`"openai_chat"`...).
    pub format: &'static str,
    /// The top-level fields, by name, as the client sent them.
    pub fields: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering `tool_call_id`.
    Tool,
}

impl Role {
    /// The role's name after "a" or "an", for messages.
    fn with_article(self) -> &'static str {
        match self {
            Role::System => "a system",
            Role::User => "a user",
            Role::Assistant => "an assistant",
            Role::Tool => "a tool",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    /// The message's parts, in order. Only a user message holds images and files; an empty
    /// list is an empty text.
    pub content: Vec<Part>,
    /// Tool calls an assistant message made (to replay a conversation).
    pub tool_calls: Vec<ToolCall>,
    /// For `role: "tool"`: the call this message answers.
    pub tool_call_id: Option<String>,
    /// An assistant message's reasoning, with the state its provider issued: the
    /// `{type: "reasoning"}` parts of its content, which are written before its other parts.
    pub reasoning: Vec<ReasoningPart>,
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    Text {
        text: String,
    },
    Image {
        source: Source,
    },
    /// A document, such as a PDF.
    File {
        source: Source,
        filename: Option<String>,
    },
}

impl Part {
    /// Why a message of `role` cannot hold this part, if it cannot: only a user message carries
    /// images and files. The words follow the part's path.
    pub(crate) fn misplaced_in(&self, role: Role) -> Option<String> {
        let kind = match self {
            Part::Text { .. } => return None,
            Part::Image { .. } => "an image",
            Part::File { .. } => "a file",
        };
        (role != Role::User).then(|| {
            format!(
                "is {kind}, but only user messages carry images and files (this is {} message)",
                role.with_article()
            )
        })
    }
}

/// Where an image's or file's bytes are: a URL the provider fetches, or the bytes themselves.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// An address the provider fetches (never a `data:` URL: that is read as [`Source::Data`]).
    Url { url: String, media_type: Option<String> },
    /// Base64 bytes and their media type (`image/png`, `application/pdf`).
    Data { data: String, media_type: String },
}

impl Source {
    pub fn media_type(&self) -> Option<&str> {
        match self {
            Source::Url { media_type, .. } => media_type.as_deref(),
            Source::Data { media_type, .. } => Some(media_type),
        }
    }

    /// The bytes as a `data:` URL (what OpenAI's formats take inline), or the URL itself.
    pub fn as_url(&self) -> Cow<'_, str> {
        match self {
            Source::Url { url, .. } => Cow::Borrowed(url),
            Source::Data { data, media_type } => Cow::Owned(format!("data:{media_type};base64,{data}")),
        }
    }
}

/// Whether the model must call a tool, and which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (what providers do when none is given).
    Auto,
    /// No tool call.
    None,
    /// Some tool call.
    Required,
    /// A call to this tool.
    Tool { name: String },
}

/// Why a request's tools cannot satisfy its tool choice (see [`ToolChoice::unmet_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnmetChoice<'a> {
    /// `Required` with no tools to call.
    NoTools,
    /// A named tool that is not among the tools.
    UnknownTool(&'a str),
}

impl ToolChoice {
    /// Why `tools` cannot satisfy this choice, if they cannot: a named tool must be one of them,
    /// and `Required` needs some. The library's request and the gateway's clients read it alike.
    pub(crate) fn unmet_by(&self, tools: &[Tool]) -> Option<UnmetChoice<'_>> {
        match self {
            ToolChoice::Required if tools.is_empty() => Some(UnmetChoice::NoTools),
            ToolChoice::Tool { name } if !tools.iter().any(|t| &t.name == name) => Some(UnmetChoice::UnknownTool(name)),
            _ => None,
        }
    }
}

/// Structured output: the answer is a JSON value, of the schema when one is given. The AI SDK's
/// own shape, so its `responseFormat` maps 1:1.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    Json {
        /// A JSON Schema object; `None` is any JSON object.
        schema: Option<Value>,
        name: Option<String>,
        description: Option<String>,
        /// Ask the provider to enforce the schema exactly, where it can.
        strict: Option<bool>,
    },
}

impl ResponseFormat {
    /// The JSON Schema the answer must follow; `None` for any JSON object.
    pub fn schema(&self) -> Option<&Value> {
        let ResponseFormat::Json { schema, .. } = self;
        schema.as_ref()
    }
}

impl Message {
    /// A message of one text part (none for an empty text).
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        let text = text.into();
        let content = if text.is_empty() { Vec::new() } else { vec![Part::Text { text }] };
        Message { role, content, tool_calls: Vec::new(), tool_call_id: None, reasoning: Vec::new() }
    }

    /// The text parts, joined (borrowed when there is at most one).
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.content.iter().filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        });
        match (texts.next(), texts.next()) {
            (None, _) => Cow::Borrowed(""),
            (Some(one), None) => Cow::Borrowed(one),
            (Some(first), Some(second)) => {
                let mut joined = format!("{first}{second}");
                texts.for_each(|t| joined.push_str(t));
                Cow::Owned(joined)
            }
        }
    }

    /// Whether every part is text: such a message is sent as each format sends plain text.
    pub fn is_text_only(&self) -> bool {
        self.content.iter().all(|p| matches!(p, Part::Text { .. }))
    }
}

/// A function the model may call; `parameters` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub description: Option<String>,
    pub parameters: serde_json::Value,
}

/// `{messages, maxTokens?, temperature?, topP?, seed?, stop?, tools?, toolChoice?,
/// parallelToolCalls?, responseFormat?, reasoning?}`: the shape the JS API takes (a gateway's trace shows it).
impl ToJson for ChatRequest {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("messages", &self.messages);
        w.opt_field("maxTokens", self.max_tokens.as_ref());
        w.opt_field("temperature", self.temperature.as_ref());
        w.opt_field("topP", self.top_p.as_ref());
        w.opt_field("seed", self.seed.as_ref());
        w.list_field("stop", &self.stop);
        w.list_field("tools", &self.tools);
        w.opt_field("toolChoice", self.tool_choice.as_ref());
        w.opt_field("parallelToolCalls", self.parallel_tool_calls.as_ref());
        w.opt_field("responseFormat", self.response_format.as_ref());
        w.opt_field("reasoning", self.reasoning.as_ref());
        w.end_object();
    }
}

impl ToJson for Message {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field(
            "role",
            match self.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            },
        );
        w.key("content");
        w.begin_array();
        self.reasoning.iter().for_each(|part| w.value(part));
        self.content.iter().for_each(|part| w.value(part));
        w.end_array();
        w.list_field("toolCalls", &self.tool_calls);
        w.opt_field("toolCallId", self.tool_call_id.as_ref());
        w.end_object();
    }
}

/// `{type: "text", text}`, or `{type: "image" | "file", ...source, filename?}`.
impl ToJson for Part {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Part::Text { text } => {
                w.field("type", "text");
                w.field("text", text);
            }
            Part::Image { source } => {
                w.field("type", "image");
                source.write_fields(w);
            }
            Part::File { source, filename } => {
                w.field("type", "file");
                source.write_fields(w);
                w.opt_field("filename", filename.as_ref());
            }
        }
        w.end_object();
    }
}

impl Source {
    /// `url, mediaType?` or `data, mediaType`, into the part's object.
    fn write_fields(&self, w: &mut JsonWriter) {
        match self {
            Source::Url { url, media_type } => {
                w.field("url", url);
                w.opt_field("mediaType", media_type.as_ref());
            }
            Source::Data { data, media_type } => {
                w.field("data", data);
                w.field("mediaType", media_type);
            }
        }
    }
}

/// `"auto"`, `"none"`, `"required"` or `{name}`.
impl ToJson for ToolChoice {
    fn write_json(&self, w: &mut JsonWriter) {
        match self {
            ToolChoice::Auto => w.string("auto"),
            ToolChoice::None => w.string("none"),
            ToolChoice::Required => w.string("required"),
            ToolChoice::Tool { name } => {
                w.begin_object();
                w.field("name", name);
                w.end_object();
            }
        }
    }
}

impl ToJson for ResponseFormat {
    fn write_json(&self, w: &mut JsonWriter) {
        let ResponseFormat::Json { schema, name, description, strict } = self;
        w.begin_object();
        w.field("type", "json");
        w.opt_field("schema", schema.as_ref());
        w.opt_field("name", name.as_ref());
        w.opt_field("description", description.as_ref());
        w.opt_field("strict", strict.as_ref());
        w.end_object();
    }
}

impl ToJson for Tool {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("name", &self.name);
        w.opt_field("description", self.description.as_ref());
        w.field("parameters", &self.parameters);
        w.end_object();
    }
}

impl ChatRequest {
    /// The non-empty system messages' texts, in order: the formats that carry the system prompt
    /// apart from the turns (Anthropic, Responses, Gemini) send these.
    pub fn system_prompts(&self) -> Vec<Cow<'_, str>> {
        self.messages.iter().filter(|m| m.role == Role::System).map(Message::text).filter(|t| !t.is_empty()).collect()
    }

    /// This request with `text` as the start of the model's answer (a prefill), for a member to
    /// continue: appended to a final assistant message that made no tool calls, else a new final
    /// assistant message. Every format sends a final assistant message as its provider reads a
    /// prefill. Trailing whitespace is the caller's to trim (Anthropic refuses it).
    pub fn with_prefill(&self, text: &str) -> ChatRequest {
        let mut request = self.clone();
        match request.messages.last_mut() {
            Some(last) if last.role == Role::Assistant && last.tool_calls.is_empty() => match last.content.last_mut() {
                Some(Part::Text { text: last_text }) => last_text.push_str(text),
                _ if text.is_empty() => {}
                _ => last.content.push(Part::Text { text: text.to_string() }),
            },
            _ => request.messages.push(Message::new(Role::Assistant, text)),
        }
        request
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefill_appends_to_the_last_text_part() {
        let parts = Message {
            content: vec![Part::Text { text: "Sure, ".into() }, Part::Text { text: "the ".into() }],
            ..Message::new(Role::Assistant, "")
        };
        let request = ChatRequest { messages: vec![Message::new(Role::User, "Hi"), parts], ..Default::default() };
        let prefilled = request.with_prefill("answer");
        assert_eq!(prefilled.messages.len(), 2);
        assert_eq!(prefilled.messages[1].text(), "Sure, the answer");
        assert_eq!(prefilled.messages[1].content.len(), 2);
        let empty = ChatRequest { messages: vec![Message::new(Role::Assistant, "")], ..Default::default() };
        assert_eq!(empty.with_prefill("Go").messages, vec![Message::new(Role::Assistant, "Go")]);
    }

    #[test]
    fn serializes_in_the_js_shape() {
        let value = serde_json::json!({
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "AA==", "mediaType": "image/png"},
                {"type": "file", "url": "https://x.test/b.pdf", "mediaType": "application/pdf", "filename": "b.pdf"}]}],
            "topP": 0.5, "seed": 7, "tools": [{"name": "f", "parameters": {"type": "object"}}],
            "toolChoice": {"name": "f"}, "parallelToolCalls": true, "responseFormat": {"type": "json"}
        });
        let request = ChatRequest::from_value(&value).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&request.to_json()).unwrap(), value);
        let auto = ChatRequest { tool_choice: Some(ToolChoice::Auto), ..Default::default() };
        assert_eq!(serde_json::from_str::<Value>(&auto.to_json()).unwrap()["toolChoice"], "auto");
    }

    #[test]
    fn a_prefill_ends_the_request_as_an_assistant_message() {
        let user = Message::new(Role::User, "Hi");
        let assistant = Message::new(Role::Assistant, "Sure: ");
        let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{}".into(), state: None };
        let calling = Message { tool_calls: vec![call], ..Message::new(Role::Assistant, "Let me look.") };
        let tool = Message { tool_call_id: Some("c1".into()), ..Message::new(Role::Tool, "42") };
        let prefill = Message::new(Role::Assistant, "The answer is");
        let cases = [
            ("after a user turn", vec![user.clone()], vec![user.clone(), prefill.clone()]),
            (
                "after an assistant turn: appended",
                vec![user.clone(), assistant.clone()],
                vec![user.clone(), Message::new(Role::Assistant, "Sure: The answer is")],
            ),
            (
                "after tool calls: a turn of its own",
                vec![user.clone(), calling.clone()],
                vec![user.clone(), calling.clone(), prefill.clone()],
            ),
            (
                "after a tool result",
                vec![user.clone(), calling.clone(), tool.clone()],
                vec![user.clone(), calling.clone(), tool.clone(), prefill.clone()],
            ),
            ("of an empty request", vec![], vec![prefill.clone()]),
        ];
        for (case, messages, expected) in cases {
            let request = ChatRequest { messages, max_tokens: Some(9), stop: vec!["END".into()], ..Default::default() };
            let prefilled = request.with_prefill("The answer is");
            assert_eq!(prefilled.messages, expected, "{case}");
            assert_eq!((prefilled.max_tokens, &prefilled.stop), (Some(9), &request.stop), "{case}: the rest is kept");
        }
    }
}
