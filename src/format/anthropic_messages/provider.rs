//! Anthropic Messages (`POST {baseUrl}/messages`).
//!
//! Anthropic differs from OpenAI where a translation can go wrong: the system prompt is a top-level
//! field, `max_tokens` is required, tool calls and results are content blocks (`tool_use`,
//! `tool_result` inside a user turn), and turns of the same role must be merged. A stream is a
//! sequence of named events ending with `message_stop`; input tokens and the model come in
//! `message_start`, output tokens and the stop reason in `message_delta`, errors as an `error`
//! event. A stream that carried its stop reason and then closed cleanly without `message_stop` is
//! complete too. A `tool_use` block whose input streams no `input_json_delta` (a call without
//! arguments) takes its input from `content_block_start`, `{}` when empty, at the block's end.
//! Every streamed token passes through [`StreamDecoder`], so event data is read by the wire crate
//! (`llm_baton_wire::frames::anthropic_messages`, built for speed); the once-per-stream parts it
//! keeps as trees (`content_block`, `message`, `usage`, `error`) become `Value`s here.
//!
//! Images and files are content blocks of a user turn: `image` and `document`, each with a
//! `base64` or `url` source (platform.claude.com/docs/en/build-with-claude/vision and
//! .../pdf-support). A document is a PDF here: other file types are parts this format cannot
//! carry ([`Format::uncarried`]); a file's name goes as the document's `title`. `tool_choice` is `auto`, `any` (required),
//! `tool` or `none`, sent only with tools; `parallelToolCalls: false` is its
//! `disable_parallel_tool_use`. A JSON schema response format is `output_config.format`
//! (`{type: "json_schema", schema}`, structured outputs,
//! platform.claude.com/docs/en/build-with-claude/structured-outputs, which replaced the beta
//! `output_format`); Anthropic has no mode for "any JSON" without a schema, nor a seed, so
//! neither is sent.
//!
//! [`Format::uncarried`]: crate::format::Format::uncarried

use std::borrow::Cow;

use llm_baton_wire::frames::anthropic_messages::{parse_event, Event, EventDelta};
use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

use super::{error_class, finish_reason, status_of_type};
use crate::chat::{
    Answer, ChatRequest, Delta, Message, Opaque, Part, ReasoningKind, ReasoningPart, ReasoningState, ResponseFormat,
    Role, Source, ToolCall, ToolChoice, Usage,
};
use crate::format::openai_chat::provider::non_pdf;
use crate::format::{
    json, malformed_frame, DecodeError, Endpoint, HttpRequest, ProviderDialect, ProviderSaid, StreamDecoding, Uncarried,
};
use crate::sse::SseEvent;
use crate::value::{from_tree, parse_value};
#[cfg(feature = "clouds")]
use crate::vertex;

/// Anthropic rejects a request without `max_tokens`; this is used when the caller set none.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
const API_VERSION: &str = "2023-06-01";

/// Anthropic Messages, as a [`ProviderDialect`].
#[derive(Debug, Clone, Copy)]
pub struct AnthropicMessages;

impl ProviderDialect for AnthropicMessages {
    type StreamDecoder = StreamDecoder;

    /// On Vertex (Anthropic's "Claude on Vertex AI"), the model is in the URL
    /// (`{base}/models/{model}:rawPredict`, `:streamRawPredict` for a stream), the version in the
    /// body, and the credential a Google token the driver adds (src/driver/vertex.rs).
    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
        let mut body = JsonWriter::new();
        #[cfg(feature = "clouds")]
        if endpoint.cloud == Some(crate::format::Cloud::Vertex) {
            let head = BodyHead::Cloud { anthropic_version: vertex::ANTHROPIC_VERSION, stream: Some(stream) };
            write_body(&mut body, endpoint.model, request, head);
            let method = if stream { "streamRawPredict" } else { "rawPredict" };
            return endpoint.post(&format!("models/{}:{method}", endpoint.model), None, &[], body.finish());
        }
        write_body(&mut body, endpoint.model, request, BodyHead::Anthropic { stream });
        let credential = endpoint.api_key.map(|key| ("x-api-key", key.expose().to_string()));
        endpoint.post("messages", credential, &[("anthropic-version", API_VERSION)], body.finish())
    }

    /// A whole answer is read once per call, so it goes through the shared `Value` parser (see
    /// `format::json`) rather than a derived deserializer of its own.
    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError> {
        json::answer(body, read_answer, "anthropic_messages answer is not a message")
    }

    /// The provider's words, code (its error `type`) and class from an Anthropic error body; None
    /// when the body is not that shape or carries no message.
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
        let value = json::parse(body).ok()?;
        let error = value.get("error")?;
        let message = match error {
            Value::String(s) => s.as_str(),
            e => e.get("message").and_then(Value::as_str)?,
        };
        // Anthropic's error type; on Vertex, an error of Vertex's own is Google's shape, whose
        // `status` names it (RESOURCE_EXHAUSTED for a quota's 429).
        let kind =
            ["type", "status"].into_iter().find_map(|k| error.get(k).and_then(Value::as_str).filter(|k| !k.is_empty()));
        (!message.trim().is_empty()).then(|| ProviderSaid {
            message: message.to_string(),
            code: kind.map(str::to_string),
            class: error_class(status, kind, message),
            content_filter: None,
        })
    }
}

/// Why an Anthropic request cannot carry `part`, if it cannot: documents are PDFs.
pub(crate) fn uncarried(part: &Part) -> Option<Uncarried> {
    match part {
        Part::File { source, .. } => non_pdf(source.media_type()),
        Part::Text { .. } | Part::Image { .. } => None,
    }
}

/// What a Messages body says besides the conversation: Anthropic's API reads the model and
/// whether to stream from the body; a cloud names the model in its URL (and streams by its path,
/// Bedrock's without a `stream` field, Vertex's with one) and reads the API version from the body.
#[derive(Clone, Copy)]
pub(crate) enum BodyHead {
    Anthropic {
        stream: bool,
    },
    #[cfg(feature = "clouds")]
    Cloud {
        anthropic_version: &'static str,
        stream: Option<bool>,
    },
}

/// The request body, written straight from the request; a `None` or an empty list is left out.
pub(crate) fn write_body(w: &mut JsonWriter, model: &str, request: &ChatRequest, head: BodyHead) {
    let system = request.system_prompts();
    let thinking = thinking_budget(request, model);
    w.begin_object();
    match head {
        BodyHead::Anthropic { .. } => w.field("model", model),
        #[cfg(feature = "clouds")]
        BodyHead::Cloud { anthropic_version, .. } => w.field("anthropic_version", anthropic_version),
    }
    let max_tokens = match (request.max_tokens, thinking) {
        (Some(max), _) => max,
        (None, Some(budget)) => budget.saturating_add(DEFAULT_MAX_TOKENS),
        (None, None) => DEFAULT_MAX_TOKENS,
    };
    w.field("max_tokens", &max_tokens);
    if !system.is_empty() {
        w.field("system", &system.join("\n\n"));
    }
    w.field("messages", &wire_messages(request, thinking.map(|_| model)));
    if let Some(budget) = thinking {
        w.key("thinking");
        w.begin_object();
        w.field("type", "enabled");
        w.field("budget_tokens", &budget);
        w.end_object();
    } else {
        // Thinking refuses a changed temperature or top_p: they go only without it.
        w.opt_field("temperature", request.temperature.as_ref());
        w.opt_field("top_p", request.top_p.as_ref());
    }
    w.list_field("stop_sequences", &request.stop);
    if !request.tools.is_empty() {
        w.key("tools");
        w.begin_array();
        for t in &request.tools {
            w.begin_object();
            w.field("name", &t.name);
            w.opt_field("description", t.description.as_ref());
            w.field("input_schema", &t.parameters);
            w.end_object();
        }
        w.end_array();
        write_tool_choice(w, request);
    }
    // Structured output for a JSON schema; none for "any JSON", which Anthropic has no mode for.
    if let Some(schema) = request.response_format.as_ref().and_then(ResponseFormat::schema) {
        w.key("output_config");
        w.begin_object();
        w.key("format");
        w.begin_object();
        w.field("type", "json_schema");
        w.field("schema", schema);
        w.end_object();
        w.end_object();
    }
    let stream = match head {
        BodyHead::Anthropic { stream } => Some(stream),
        #[cfg(feature = "clouds")]
        BodyHead::Cloud { stream, .. } => stream,
    };
    if let Some(stream) = stream {
        w.field("stream", &stream);
    }
    w.end_object();
}

/// The smallest thinking budget Anthropic takes.
const MIN_THINKING_BUDGET: u32 = 1024;

pub(super) const FORMAT: &str = "anthropic_messages";

/// The thinking budget to send, when thinking is on: the request's budget (or its effort's),
/// below `maxTokens`. Off without `reasoning`, and off (a warning says so, see
/// [`reasoning_warning`]) when the conversation is inside a tool-use turn whose assistant message
/// holds no thinking block this model signed: Anthropic refuses thinking then.
fn thinking_budget(request: &ChatRequest, model: &str) -> Option<u32> {
    let reasoning = request.reasoning?;
    if unsigned_tool_turn(request, model) {
        return None;
    }
    let budget = reasoning.budget();
    Some(match (reasoning.budget_tokens, request.max_tokens) {
        (None, Some(max)) => budget.min(max.saturating_sub(1)).max(MIN_THINKING_BUDGET),
        _ => budget,
    })
}

/// Whether the request continues a tool-use turn (its last assistant message made tool calls,
/// and only their results follow) whose assistant message starts with no thinking block that
/// `model` issued: a turn another member of a route began, or one begun without thinking.
fn unsigned_tool_turn(request: &ChatRequest, model: &str) -> bool {
    let Some(last) = request.messages.iter().rposition(|m| m.role == Role::Assistant) else { return false };
    let turn = &request.messages[last];
    let continues = request.messages[last + 1..].iter().all(|m| m.role == Role::Tool);
    continues && !turn.tool_calls.is_empty() && !turn.reasoning.iter().any(|p| signed_by(p, model).is_some())
}

/// The state of a reasoning part that `model`, an Anthropic model, issued and so can verify.
fn signed_by<'a>(part: &'a ReasoningPart, model: &str) -> Option<&'a Opaque> {
    part.state.as_ref().filter(|s| s.valid_for(FORMAT, model)).map(|s| &s.opaque)
}

/// Why the request goes to `model` without the thinking it asks for, if it does.
pub(crate) fn reasoning_warning(request: &ChatRequest, model: &str) -> Option<String> {
    (request.reasoning.is_some() && unsigned_tool_turn(request, model)).then(|| {
        format!(
            "thinking is off for this request: the tool-use turn it continues has no thinking block {model} \
             signed (another member began it), and Anthropic refuses thinking then"
        )
    })
}

/// A reasoning request this format cannot send: a budget under Anthropic's minimum, or one
/// `maxTokens` does not exceed. As `(path, what is wrong and the remedy)`.
pub(crate) fn unsendable_reasoning(request: &ChatRequest) -> Option<(&'static str, String)> {
    let reasoning = request.reasoning?;
    if let Some(budget) = reasoning.budget_tokens.filter(|b| *b < MIN_THINKING_BUDGET) {
        return Some((
            "request.reasoning.budgetTokens",
            format!(
                "is {budget}, under the {MIN_THINKING_BUDGET} Anthropic takes; give at least {MIN_THINKING_BUDGET}"
            ),
        ));
    }
    let max = request.max_tokens?;
    match reasoning.budget_tokens {
        Some(budget) if budget >= max => Some((
            "request.maxTokens",
            format!("is {max}, but Anthropic needs it above reasoning.budgetTokens ({budget}); raise maxTokens or lower the budget"),
        )),
        None if max <= MIN_THINKING_BUDGET => Some((
            "request.maxTokens",
            format!("is {max}, but Anthropic thinking needs more than {MIN_THINKING_BUDGET}; raise maxTokens"),
        )),
        _ => None,
    }
}

/// The request's `tool_choice` (`{"type": "auto" | "any" | "tool" | "none", ...}`), if any;
/// `parallelToolCalls: false` alone is `auto` without parallel calls.
fn write_tool_choice(w: &mut JsonWriter, request: &ChatRequest) {
    let disable_parallel_tool_use = (request.parallel_tool_calls == Some(false)).then_some(true);
    let (kind, name) = match &request.tool_choice {
        Some(ToolChoice::None) => ("none", None),
        Some(ToolChoice::Required) => ("any", None),
        Some(ToolChoice::Tool { name }) => ("tool", Some(name)),
        Some(ToolChoice::Auto) => ("auto", None),
        None if disable_parallel_tool_use.is_some() => ("auto", None),
        None => return,
    };
    w.key("tool_choice");
    w.begin_object();
    w.field("type", kind);
    w.opt_field("name", name);
    if kind != "none" {
        w.opt_field("disable_parallel_tool_use", disable_parallel_tool_use.as_ref());
    }
    w.end_object();
}

struct WireMessage<'a> {
    role: &'static str,
    content: WireContent<'a>,
}

/// A lone text block goes as a plain string, as people write it.
enum WireContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

enum Block<'a> {
    Thinking { thinking: &'a str, signature: &'a str },
    RedactedThinking { data: &'a str },
    Text { text: Cow<'a, str> },
    Image { source: WireSource<'a> },
    Document { source: WireSource<'a>, title: Option<&'a str> },
    ToolUse { id: &'a str, name: &'a str, input: Value },
    ToolResult { tool_use_id: &'a str, content: Cow<'a, str> },
}

enum WireSource<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

impl<'a> WireSource<'a> {
    fn new(source: &'a Source) -> Self {
        match source {
            Source::Url { url, .. } => WireSource::Url { url },
            Source::Data { data, media_type } => WireSource::Base64 { media_type, data },
        }
    }
}

impl ToJson for WireMessage<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("role", self.role);
        w.key("content");
        match &self.content {
            WireContent::Text(text) => w.string(text),
            WireContent::Blocks(blocks) => blocks.write_json(w),
        }
        w.end_object();
    }
}

/// A block, by `type`.
impl ToJson for Block<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Block::Thinking { thinking, signature } => {
                w.field("type", "thinking");
                w.field("thinking", *thinking);
                w.field("signature", *signature);
            }
            Block::RedactedThinking { data } => {
                w.field("type", "redacted_thinking");
                w.field("data", *data);
            }
            Block::Text { text } => {
                w.field("type", "text");
                w.field("text", &**text);
            }
            Block::Image { source } => {
                w.field("type", "image");
                w.field("source", source);
            }
            Block::Document { source, title } => {
                w.field("type", "document");
                w.field("source", source);
                w.opt_field("title", *title);
            }
            Block::ToolUse { id, name, input } => {
                w.field("type", "tool_use");
                w.field("id", *id);
                w.field("name", *name);
                w.field("input", input);
            }
            Block::ToolResult { tool_use_id, content } => {
                w.field("type", "tool_result");
                w.field("tool_use_id", *tool_use_id);
                w.field("content", &**content);
            }
        }
        w.end_object();
    }
}

impl ToJson for WireSource<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            WireSource::Base64 { media_type, data } => {
                w.field("type", "base64");
                w.field("media_type", *media_type);
                w.field("data", *data);
            }
            WireSource::Url { url } => {
                w.field("type", "url");
                w.field("url", *url);
            }
        }
        w.end_object();
    }
}

/// A user message's blocks: one text block for an all-text message, else a block per part.
fn user_blocks(m: &Message) -> Vec<Block<'_>> {
    if m.is_text_only() {
        return vec![Block::Text { text: m.text() }];
    }
    m.content
        .iter()
        .map(|part| match part {
            Part::Text { text } => Block::Text { text: Cow::Borrowed(text) },
            Part::Image { source } => Block::Image { source: WireSource::new(source) },
            Part::File { source, filename } => {
                Block::Document { source: WireSource::new(source), title: filename.as_deref() }
            }
        })
        .collect()
}

impl Block<'_> {
    fn is_empty_text(&self) -> bool {
        matches!(self, Block::Text { text } if text.is_empty())
    }
}

/// An assistant message's thinking blocks, as `model` signed them; none when thinking is off
/// (`model` is `None`). Reasoning another model or provider issued is left out, its text too:
/// as text it would read as something the assistant said.
fn thinking_blocks<'a>(m: &'a Message, model: Option<&str>) -> Vec<Block<'a>> {
    let Some(model) = model else { return Vec::new() };
    m.reasoning
        .iter()
        .filter_map(|part| match signed_by(part, model)? {
            Opaque::Signature(signature) => Some(Block::Thinking { thinking: &part.text, signature }),
            Opaque::Redacted(data) => Some(Block::RedactedThinking { data }),
            Opaque::Item { .. } | Opaque::Plain => None,
        })
        .collect()
}

/// Non-system turns as Anthropic wants them: tool results become user turns, consecutive turns of
/// one role are merged, tool results lead their user turn, and empty text blocks are dropped
/// where other content remains (Anthropic rejects empty text blocks). With thinking on
/// (`thinking` is the model), an assistant turn starts with the thinking blocks it signed.
fn wire_messages<'a>(request: &'a ChatRequest, thinking: Option<&str>) -> Vec<WireMessage<'a>> {
    let mut turns: Vec<(&'static str, Vec<Block>)> = Vec::new();
    for m in &request.messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", user_blocks(m)),
            Role::Tool => (
                "user",
                vec![Block::ToolResult { tool_use_id: m.tool_call_id.as_deref().unwrap_or(""), content: m.text() }],
            ),
            Role::Assistant => {
                let mut blocks = thinking_blocks(m, thinking);
                blocks.push(Block::Text { text: m.text() });
                blocks.extend(m.tool_calls.iter().map(|c| Block::ToolUse {
                    id: &c.id,
                    name: &c.name,
                    input:
                        tool_input(&c.arguments).unwrap_or_else(|text| {
                            parse_value(text).unwrap_or_else(|_| Value::String(text.to_string()))
                        }),
                }));
                ("assistant", blocks)
            }
        };
        match turns.last_mut() {
            Some((last_role, last)) if *last_role == role => last.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, mut blocks)| {
            if blocks.iter().any(|b| !b.is_empty_text()) {
                blocks.retain(|b| !b.is_empty_text());
            } else {
                blocks.truncate(1);
            }
            // Tool results first, everything else after, each in its order (a partition, not a
            // sort, which would link sort code into the wasm for this one list).
            let (mut results, others): (Vec<Block>, Vec<Block>) =
                blocks.into_iter().partition(|b| matches!(b, Block::ToolResult { .. }));
            results.extend(others);
            let mut blocks = results;
            let content = match blocks.pop() {
                Some(Block::Text { text }) if blocks.is_empty() => WireContent::Text(text),
                last => {
                    blocks.extend(last);
                    WireContent::Blocks(blocks)
                }
            };
            WireMessage { role, content }
        })
        .collect()
}

/// Tool-call arguments are JSON text; Anthropic's `input` is an object. Empty arguments are
/// `{}`. Both directions read arguments here and differ only in what they do with text that is
/// not a JSON object (`Err`): a request passes it on as it parses (JSON, else a string) so the
/// provider names the problem; the gateway hands its client `{"arguments": text}`, an object.
pub(crate) fn tool_input(arguments: &str) -> Result<Value, &str> {
    match parse_value(arguments) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ if arguments.trim().is_empty() => Ok(Value::Object(Default::default())),
        _ => Err(arguments),
    }
}

// ---- whole answers ----

/// Anthropic's `input_tokens` excludes cached prompt tokens; the normalized count includes them.
/// Each count is absent (`None`), or reported: a count or, when odd, unknown (`Some(None)`).
struct WireUsage {
    input_tokens: Option<Option<u64>>,
    cache_creation_input_tokens: Option<Option<u64>>,
    cache_read_input_tokens: Option<Option<u64>>,
    output_tokens: Option<Option<u64>>,
}

impl WireUsage {
    /// Never fails: a usage that is not an object reports every count as unknown.
    fn read(u: &Value) -> WireUsage {
        if !u.is_object() {
            return WireUsage {
                input_tokens: Some(None),
                cache_creation_input_tokens: None,
                cache_read_input_tokens: None,
                output_tokens: Some(None),
            };
        }
        WireUsage {
            input_tokens: json::count_field(u, "input_tokens"),
            cache_creation_input_tokens: json::count_field(u, "cache_creation_input_tokens"),
            cache_read_input_tokens: json::count_field(u, "cache_read_input_tokens"),
            output_tokens: json::count_field(u, "output_tokens"),
        }
    }

    /// Overwrites the counts this frame reports (Anthropic's counts are cumulative). The input
    /// is unknown when any reported part of it is.
    fn apply(&self, usage: &mut Usage) {
        let inputs = [self.input_tokens, self.cache_creation_input_tokens, self.cache_read_input_tokens];
        if inputs.iter().any(Option::is_some) {
            usage.input_tokens = inputs.iter().flatten().try_fold(0u64, |sum, n| n.and_then(|n| sum.checked_add(n)));
        }
        if let Some(n) = self.output_tokens {
            usage.output_tokens = n;
        }
    }
}

fn read_answer(v: &Value) -> json::Read<Result<Answer, DecodeError>> {
    json::object(v, "answer")?;
    let kind = json::str_field(v, "type")?;
    let model = json::string_field(v, "model")?;
    let stop_reason = json::str_field(v, "stop_reason")?;
    let mut usage = Usage::default();
    if let Some(u) = json::field(v, "usage") {
        WireUsage::read(u).apply(&mut usage);
    }
    let (mut text, mut reasoning, mut tool_calls) = (String::new(), String::new(), Vec::new());
    let mut reasoning_parts = Vec::new();
    let content = json::objects_field(v, "content")?;
    for block in content.unwrap_or_default() {
        let text_field = json::str_field(block, "text")?;
        let thinking = json::str_field(block, "thinking")?;
        let id = json::string_field(block, "id")?;
        let name = json::string_field(block, "name")?;
        match json::str_field(block, "type")?.ok_or_else(|| json::missing("type", "a content block"))? {
            "text" => text.push_str(text_field.unwrap_or("")),
            "thinking" => {
                let thinking = thinking.unwrap_or("");
                reasoning.push_str(thinking);
                ReasoningPart::push_text(&mut reasoning_parts, ReasoningKind::Summary, thinking);
                if let Some(signature) = json::str_field(block, "signature")?.filter(|s| !s.is_empty()) {
                    let state = ReasoningState::new(Opaque::Signature(signature.to_string()));
                    ReasoningPart::push_state(&mut reasoning_parts, state);
                }
            }
            "redacted_thinking" => {
                if let Some(data) = json::str_field(block, "data")?.filter(|d| !d.is_empty()) {
                    ReasoningPart::push_state(&mut reasoning_parts, ReasoningState::new(Opaque::Redacted(data.into())));
                }
            }
            "tool_use" => tool_calls.push(ToolCall {
                id: id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                arguments: json::field(block, "input").map(|v| v.to_json()).unwrap_or_else(|| "{}".into()),
                state: None,
            }),
            _ => {}
        }
    }
    if let Some(error) = json::field(v, "error") {
        return Ok(Err(provider_error(error)));
    }
    if kind == Some("error") {
        return Ok(Err(provider_error(&Value::Null)));
    }
    if content.is_none() {
        return Ok(Err(DecodeError::Protocol("anthropic_messages answer has no content".into())));
    }
    Ok(Ok(Answer {
        logprobs: None,
        content_filter: None,
        text,
        reasoning,
        reasoning_parts,
        finish_reason: finish_reason(stop_reason, !tool_calls.is_empty()),
        tool_calls,
        usage,
        model,
    }))
}

// ---- errors ----

/// An Anthropic `error` object (`{"type": "overloaded_error", "message": "Overloaded"}`) as a
/// provider error with the HTTP status Anthropic documents for its type.
fn provider_error(error: &Value) -> DecodeError {
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
    let status = status_of_type(kind).unwrap_or(500);
    let message = match error {
        Value::String(s) => s.clone(),
        _ => match error.get("message").and_then(Value::as_str).filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None if kind.is_empty() => "the provider reported an error".to_string(),
            None => kind.to_string(),
        },
    };
    let code = (!kind.is_empty()).then(|| kind.to_string());
    let class = error_class(status, code.as_deref(), &message);
    DecodeError::Provider { status, message, code, class }
}

// ---- streams ----

struct StartBlock<'a> {
    kind: Option<&'a str>,
    id: Option<&'a str>,
    name: Option<&'a str>,
    text: Option<&'a str>,
    thinking: Option<&'a str>,
    /// A `redacted_thinking` block's `data`.
    data: Option<&'a str>,
    /// A `tool_use` block's `input` when it is a non-empty object.
    input: Option<&'a Value>,
}

impl<'a> StartBlock<'a> {
    fn read(b: &'a Value) -> json::Read<StartBlock<'a>> {
        json::object(b, "content_block")?;
        Ok(StartBlock {
            kind: json::str_field(b, "type")?,
            id: json::str_field(b, "id")?,
            name: json::str_field(b, "name")?,
            text: json::str_field(b, "text")?,
            thinking: json::str_field(b, "thinking")?,
            data: json::str_field(b, "data")?,
            input: json::object_field(b, "input")?.filter(|i| i.as_object().is_some_and(|o| !o.is_empty())),
        })
    }
}

/// The once-per-stream parts of an event, type-checked whatever the event's type.
struct Parts<'a> {
    block: Option<StartBlock<'a>>,
    /// `message_start`'s `message.usage` and `message.model`.
    message_usage: Option<WireUsage>,
    model: Option<&'a str>,
    usage: Option<WireUsage>,
}

/// An event's once-per-stream parts as `Value`s, for the readers of [`json`], which check their
/// types as a derived struct would. Delta events have none of them.
struct PartValues {
    content_block: Option<Value>,
    message: Option<Value>,
    usage: Option<Value>,
}

impl PartValues {
    fn of(data: &Event) -> PartValues {
        PartValues {
            content_block: data.content_block.as_ref().map(from_tree),
            message: data.message.as_ref().map(from_tree),
            usage: data.usage.as_ref().map(from_tree),
        }
    }
}

fn read_parts(data: &PartValues) -> json::Read<Parts<'_>> {
    let block = data.content_block.as_ref().map(StartBlock::read).transpose()?;
    let (message_usage, model) = match &data.message {
        Some(m) => {
            let m = json::object(m, "message")?;
            (json::field(m, "usage").map(WireUsage::read), json::str_field(m, "model")?)
        }
        None => (None, None),
    };
    let usage = data.usage.as_ref().map(WireUsage::read);
    Ok(Parts { block, message_usage, model, usage })
}

/// A `tool_use` block of the stream.
#[derive(Debug)]
struct ToolBlock {
    /// The content block index, and the call's ordinal among the answer's tool calls.
    index: u32,
    ordinal: u32,
    /// The input as `content_block_start` gave it, until an `input_json_delta` or the block's end.
    start_input: Option<String>,
    /// Arguments went out (from a delta, or at the block's end).
    delivered: bool,
    /// Started and not yet stopped: its input may still be streaming.
    open: bool,
}

#[derive(Debug, Default)]
pub struct StreamDecoder {
    stop_reason: Option<String>,
    usage: Usage,
    model: Option<String>,
    tool_blocks: Vec<ToolBlock>,
    /// Every content block index a start or delta named: after a skipped frame, a block first
    /// named by its stop had its start in that frame.
    seen_blocks: Vec<u32>,
    /// A malformed frame was skipped.
    skipped: bool,
    done: bool,
    /// The signature of the thinking block at this index, so far: it ends the block's
    /// reasoning when the block stops.
    signature: Option<(u32, String)>,
}

impl StreamDecoder {
    /// A frame that is not valid JSON or not an event's shape. An `error` event is never skipped.
    fn malformed(&mut self, ev: &SseEvent, reason: String, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if ev.event == "error" {
            return Err(DecodeError::Protocol(reason));
        }
        let at_risk = if self.tool_blocks.iter().any(|b| b.open) {
            Some("a tool_use block was open")
        } else if ev.data.contains("\"tool_use\"") || ev.data.contains("\"input_json_delta\"") {
            Some("the frame names a tool_use block")
        } else {
            None
        };
        self.skipped = true;
        malformed_frame(reason, at_risk, out)
    }

    fn on_block_start(&mut self, index: u32, block: StartBlock, out: &mut Vec<Delta>) {
        match block.kind {
            Some("tool_use") => {
                let ordinal = self.tool_blocks.len() as u32;
                let start_input = block.input.map(|input| input.to_json());
                self.tool_blocks.push(ToolBlock { index, ordinal, start_input, delivered: false, open: true });
                out.push(Delta::ToolCall {
                    index: ordinal,
                    id: block.id.map(str::to_string),
                    name: block.name.map(str::to_string),
                    arguments: String::new(),
                });
            }
            Some("text") => push_text(out, block.text.map(Cow::Borrowed), Delta::push_text),
            Some("thinking") => push_text(out, block.thinking.map(Cow::Borrowed), push_thinking),
            Some("redacted_thinking") => {
                if let Some(data) = block.data.filter(|d| !d.is_empty()) {
                    out.push(Delta::ReasoningState { state: ReasoningState::new(Opaque::Redacted(data.into())) });
                }
            }
            _ => {}
        }
    }

    fn on_delta(&mut self, index: u32, delta: EventDelta, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        match delta.kind.as_deref() {
            Some("text_delta") => push_text(out, delta.text, Delta::push_text),
            Some("thinking_delta") => push_text(out, delta.thinking, push_thinking),
            Some("input_json_delta") => {
                let Some(block) = self.tool_blocks.iter_mut().find(|b| b.index == index) else {
                    if self.skipped {
                        return Err(DecodeError::Protocol(format!(
                            "anthropic_messages stream: input_json_delta for content block {index}, whose content_block_start was in a skipped malformed frame"
                        )));
                    }
                    return Ok(());
                };
                if let Some(arguments) = delta.partial_json.filter(|s| !s.is_empty()) {
                    block.delivered = true;
                    block.start_input = None;
                    out.push(Delta::ToolCall {
                        index: block.ordinal,
                        id: None,
                        name: None,
                        arguments: arguments.into_owned(),
                    });
                }
            }
            Some("signature_delta") => {
                let signature = delta.signature.unwrap_or_default();
                match &mut self.signature {
                    Some((at, so_far)) if *at == index => so_far.push_str(&signature),
                    _ => self.signature = Some((index, signature.into_owned())),
                }
            }
            // citations_delta: nothing for the caller.
            _ => {}
        }
        Ok(())
    }

    /// Delivers the arguments of the matching tool blocks that streamed none: the input of
    /// `content_block_start`, or `{}`, as the whole answer reads the block.
    fn close_tool_blocks(&mut self, matching: impl Fn(&ToolBlock) -> bool, out: &mut Vec<Delta>) {
        for block in self.tool_blocks.iter_mut().filter(|b| !b.delivered && matching(b)) {
            block.delivered = true;
            let arguments = block.start_input.take().unwrap_or_else(|| "{}".into());
            out.push(Delta::ToolCall { index: block.ordinal, id: None, name: None, arguments });
        }
    }

    /// The one `Done`, after the arguments of any tool block that never closed.
    fn end(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        if self.skipped && self.tool_blocks.is_empty() && self.stop_reason.as_deref() == Some("tool_use") {
            return Err(DecodeError::Protocol(
                "anthropic_messages stream stopped for tool_use, but no tool_use block was read: a skipped malformed frame held it".into(),
            ));
        }
        self.close_tool_blocks(|_| true, out);
        out.push(Delta::Done {
            finish_reason: finish_reason(self.stop_reason.as_deref(), !self.tool_blocks.is_empty()),
            usage: self.usage,
            model: self.model.take(),
        });
        Ok(())
    }

    /// One event's deltas; its stop reason, usage and model are kept for the end.
    fn on_message_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done || ev.data.trim().is_empty() {
            return Ok(());
        }
        let invalid = |e: &dyn std::fmt::Display| {
            let name = if ev.event.is_empty() { "data" } else { ev.event.as_str() };
            format!("anthropic_messages stream {name} event is not valid JSON: {e}")
        };
        let data = match parse_event(&ev.data) {
            Ok(data) => data,
            Err(e) => return self.malformed(ev, invalid(&e), out),
        };
        let values = PartValues::of(&data);
        let Parts { block, message_usage, model, usage } = match read_parts(&values) {
            Ok(parts) => parts,
            Err(e) => return self.malformed(ev, invalid(&e), out),
        };
        let kind = data.kind.as_deref().unwrap_or(ev.event.as_str());
        if let (Some(index), "content_block_start" | "content_block_delta") = (data.index, kind) {
            if !self.seen_blocks.contains(&index) {
                self.seen_blocks.push(index);
            }
        }
        match kind {
            "content_block_delta" => {
                if let (Some(delta), Some(index)) = (data.delta, data.index) {
                    self.on_delta(index, delta, out)?;
                }
            }
            "content_block_start" => {
                if let (Some(block), Some(index)) = (block, data.index) {
                    self.on_block_start(index, block, out);
                }
            }
            "message_start" => {
                if let Some(usage) = message_usage {
                    usage.apply(&mut self.usage);
                }
                if let Some(model) = model.filter(|m| !m.is_empty()) {
                    self.model = Some(model.to_string());
                }
            }
            "content_block_stop" => {
                if let Some(index) = data.index {
                    if self.skipped && !self.seen_blocks.contains(&index) {
                        return Err(DecodeError::Protocol(format!(
                            "anthropic_messages stream: content block {index} stopped, but its content_block_start was in a skipped malformed frame (it may have been a tool_use)"
                        )));
                    }
                    self.tool_blocks.iter_mut().filter(|b| b.index == index).for_each(|b| b.open = false);
                    self.close_tool_blocks(|b| b.index == index, out);
                    if let Some((_, signature)) = self.signature.take_if(|(at, s)| *at == index && !s.is_empty()) {
                        out.push(Delta::ReasoningState { state: ReasoningState::new(Opaque::Signature(signature)) });
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = data.delta.and_then(|d| d.stop_reason).filter(|r| !r.is_empty()) {
                    self.stop_reason = Some(reason.into_owned());
                }
                if let Some(usage) = usage {
                    usage.apply(&mut self.usage);
                }
            }
            "message_stop" => return self.end(out),
            "error" => return Err(provider_error(&data.error.as_ref().map_or(Value::Null, from_tree))),
            // ping and events added later carry nothing to emit.
            _ => {}
        }
        Ok(())
    }
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        self.on_message_event(ev, out)
    }

    /// `message_start` reports the input (and the first output tokens), each `message_delta`
    /// the output so far.
    fn usage(&self) -> Usage {
        self.usage
    }

    /// End of stream: complete after `message_stop`, or after `message_delta`'s stop reason
    /// without it; cut short otherwise.
    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if !self.done && self.stop_reason.is_none() {
            return Err(DecodeError::Protocol(
                "anthropic_messages stream ended without a stop_reason or message_stop".into(),
            ));
        }
        self.end(out)
    }
}

/// A text or thinking fragment, unless empty, joined to the same kind just before it.
/// A thinking fragment, as a summary: Claude 4 models summarize their thinking (see
/// [`ReasoningKind`]).
fn push_thinking(out: &mut Vec<Delta>, text: Cow<'_, str>) {
    Delta::push_reasoning(out, ReasoningKind::Summary, text)
}

fn push_text<'a>(out: &mut Vec<Delta>, text: Option<Cow<'a, str>>, push: fn(&mut Vec<Delta>, Cow<'a, str>)) {
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        push(out, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{FinishReason, Message, Tool};
    use crate::format::provider;
    use crate::format::test_endpoint;
    use crate::outcome::FailureClass;
    use serde_json::json;

    fn endpoint(key: Option<&str>, headers: &[(&str, &str)]) -> Endpoint<'static> {
        test_endpoint("https://api.anthropic.com/v1", "claude-sonnet-4-5", key, headers)
    }

    fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
        req.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn body(req: &HttpRequest) -> Value {
        serde_json::from_str(&req.body).expect("body is JSON")
    }

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent { event: name.into(), data: data.into(), id: None }
    }

    #[test]
    fn builds_url_headers_and_lifts_system_with_default_max_tokens() {
        let req = ChatRequest {
            messages: vec![
                Message::new(Role::System, "be brief"),
                Message::new(Role::User, "hi"),
                Message::new(Role::System, "in French"),
            ],
            ..Default::default()
        };
        let http = AnthropicMessages::build_request(&endpoint(Some("sk-ant-secret"), &[]), &req, false);
        assert_eq!(http.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(header(&http, "x-api-key"), Some("sk-ant-secret"));
        assert_eq!(header(&http, "anthropic-version"), Some("2023-06-01"));
        assert_eq!(header(&http, "content-type"), Some("application/json"));
        assert_eq!(header(&http, "authorization"), None);
        assert_eq!(
            body(&http),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 1024,
                "system": "be brief\n\nin French",
                "messages": [{"role": "user", "content": "hi"}],
                "stream": false
            })
        );
        assert!(!format!("{http:?}").contains("sk-ant-secret"));
    }

    #[test]
    fn no_key_no_credential_and_version_can_be_overridden() {
        let t = endpoint(None, &[("anthropic-version", "2024-01-01"), ("anthropic-beta", "x")]);
        let http = AnthropicMessages::build_request(&t, &ChatRequest::default(), true);
        assert_eq!(header(&http, "x-api-key"), None);
        assert_eq!(header(&http, "anthropic-version"), Some("2024-01-01"));
        assert_eq!(header(&http, "anthropic-beta"), Some("x"));
        assert_eq!(body(&http)["stream"], json!(true));
    }

    #[test]
    fn translates_tools_tool_calls_and_merges_tool_results() {
        let mut assistant = Message::new(Role::Assistant, "Checking.");
        assistant.tool_calls = vec![
            ToolCall {
                id: "toolu_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
                state: None,
            },
            ToolCall { id: "toolu_2".into(), name: "get_time".into(), arguments: String::new(), state: None },
        ];
        let mut r1 = Message::new(Role::Tool, "18C");
        r1.tool_call_id = Some("toolu_1".into());
        let mut r2 = Message::new(Role::Tool, "noon");
        r2.tool_call_id = Some("toolu_2".into());
        let req = ChatRequest {
            messages: vec![Message::new(Role::User, "weather?"), assistant, r1, r2, Message::new(Role::User, "thanks")],
            max_tokens: Some(50),
            temperature: Some(0.2),
            stop: vec!["\n\nHuman:".into()],
            tools: vec![Tool { name: "get_weather".into(), description: None, parameters: json!({"type": "object"}) }],
            ..Default::default()
        };
        let http = AnthropicMessages::build_request(&endpoint(Some("k"), &[]), &req, false);
        assert_eq!(
            body(&http),
            json!({
                "model": "claude-sonnet-4-5",
                "max_tokens": 50,
                "messages": [
                    {"role": "user", "content": "weather?"},
                    {"role": "assistant", "content": [
                        {"type": "text", "text": "Checking."},
                        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
                        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"},
                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "noon"},
                        {"type": "text", "text": "thanks"}
                    ]}
                ],
                "temperature": 0.2,
                "stop_sequences": ["\n\nHuman:"],
                "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
                "stream": false
            })
        );
    }

    #[test]
    fn assistant_with_only_tool_calls_has_no_empty_text_block() {
        let mut assistant = Message::new(Role::Assistant, "");
        assistant.tool_calls =
            vec![ToolCall { id: "t".into(), name: "f".into(), arguments: "not json".into(), state: None }];
        let req = ChatRequest { messages: vec![Message::new(Role::User, "go"), assistant], ..Default::default() };
        let http = AnthropicMessages::build_request(&endpoint(None, &[]), &req, false);
        assert_eq!(
            body(&http)["messages"][1],
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "not json"}]})
        );
    }

    #[test]
    fn tool_input_is_an_object_or_the_text_that_is_not_one() {
        let cases: [(&str, Result<Value, &str>); 7] = [
            (r#"{"city":"Paris"}"#, Ok(json!({ "city": "Paris" }))),
            ("", Ok(json!({}))),
            ("  \n", Ok(json!({}))),
            ("{}", Ok(json!({}))),
            (r#"{"city":"#, Err(r#"{"city":"#)),
            ("[1,2]", Err("[1,2]")),
            ("null", Err("null")),
        ];
        for (arguments, expected) in cases {
            assert_eq!(tool_input(arguments), expected, "{arguments:?}");
        }
    }

    #[test]
    fn decodes_a_whole_answer() {
        let body = br#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
            "content":[{"type":"thinking","thinking":"Let me see.","signature":"abc"},{"type":"text","text":"Hello"},
              {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
            "stop_reason":"tool_use","stop_sequence":null,
            "usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":5,"output_tokens":20}}"#;
        let answer = AnthropicMessages::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "Hello");
        assert_eq!(answer.reasoning, "Let me see.");
        assert_eq!(
            answer.tool_calls,
            [ToolCall {
                id: "toolu_1".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
                state: None
            }]
        );
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!(answer.usage, Usage { input_tokens: Some(15), output_tokens: Some(20) });
        assert_eq!(answer.model.as_deref(), Some("claude-sonnet-4-5-20250929"));

        let stops = [
            ("end_turn", FinishReason::Stop),
            ("stop_sequence", FinishReason::Stop),
            ("max_tokens", FinishReason::Length),
            ("refusal", FinishReason::ContentFilter),
            ("pause_turn", FinishReason::Other("pause_turn".into())),
        ];
        for (raw, expected) in stops {
            let body =
                format!(r#"{{"type":"message","content":[{{"type":"text","text":"x"}}],"stop_reason":"{raw}"}}"#);
            assert_eq!(AnthropicMessages::decode_answer(body.as_bytes()).map(|a| a.finish_reason), Ok(expected));
        }
    }

    #[test]
    fn rejects_bodies_that_are_not_messages() {
        assert_eq!(
            AnthropicMessages::decode_answer(br#"{"type":"message","role":"assistant"}"#),
            Err(DecodeError::Protocol("anthropic_messages answer has no content".into()))
        );
        assert!(
            matches!(AnthropicMessages::decode_answer(b"{"), Err(DecodeError::Protocol(m)) if m.contains("anthropic_messages"))
        );
        assert_eq!(
            AnthropicMessages::decode_answer(
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            Err(provider(529, "Overloaded", Some("overloaded_error"), Some(FailureClass::Overloaded)))
        );
    }

    #[test]
    fn reads_error_messages() {
        let body =
            br#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"},"request_id":"req_1"}"#;
        let message = |body: &[u8]| AnthropicMessages::error_body(404, body).map(|said| said.message);
        assert_eq!(message(body).as_deref(), Some("model: claude-x"));
        assert_eq!(message(br#"{"message":"no error key"}"#), None);
        assert_eq!(message(b"upstream connect error"), None);
    }

    #[test]
    fn reads_error_codes_and_classes() {
        use FailureClass::*;
        let cases: [(u16, &str, &str, Option<FailureClass>); 10] = [
            (400, "invalid_request_error", "prompt is too long: 215487 tokens > 200000 maximum", Some(ContextLength)),
            (400, "invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", Some(Quota)),
            (400, "invalid_request_error", "messages: at least one message is required", None),
            (402, "billing_error", "There is an issue with your billing.", Some(Quota)),
            (401, "authentication_error", "invalid x-api-key", Some(Auth)),
            (403, "permission_error", "Your API key does not have permission to use the specified resource.", Some(Auth)),
            (429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", Some(RateLimit)),
            (529, "overloaded_error", "Overloaded", Some(Overloaded)),
            (500, "api_error", "Internal server error", None),
            (413, "request_too_large", "Request exceeds the maximum allowed number of bytes.", None),
        ];
        for (status, kind, message, class) in cases {
            let body = json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"});
            let said = AnthropicMessages::error_body(status, body.to_string().as_bytes()).expect(message);
            assert_eq!(
                said,
                ProviderSaid { message: message.into(), code: Some(kind.into()), class, content_filter: None },
                "{message}"
            );
            // The same object in a stream: the status comes from the type.
            let mut out = Vec::new();
            let streamed = StreamDecoder::default().on_event(&event("error", &body.to_string()), &mut out);
            assert_eq!(streamed, Err(provider(status, message, Some(kind), class)), "{message}");
        }
    }

    #[test]
    fn maps_error_types_to_statuses() {
        for (kind, status) in [
            ("invalid_request_error", 400),
            ("authentication_error", 401),
            ("permission_error", 403),
            ("not_found_error", 404),
            ("request_too_large", 413),
            ("rate_limit_error", 429),
            ("api_error", 500),
            ("overloaded_error", 529),
            ("brand_new_error", 500),
        ] {
            let data = format!(r#"{{"type":"error","error":{{"type":"{kind}","message":"m"}}}}"#);
            let mut out = Vec::new();
            assert_eq!(
                StreamDecoder::default().on_event(&event("error", &data), &mut out),
                Err(provider(status, "m", Some(kind), FailureClass::of_status(status)))
            );
        }
    }

    #[test]
    fn streams_thinking_text_tool_use_and_done() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for (name, data) in [
            (
                "message_start",
                r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}"#,
            ),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            ("ping", r#"{"type": "ping"}"#),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}"#,
            ),
            ("message_stop", r#"{"type":"message_stop"}"#),
            ("error", r#"{"type":"error","error":{"type":"api_error","message":"ignored after done"}}"#),
        ] {
            d.on_event(&event(name, data), &mut out).expect("decodes");
        }
        d.finish(&mut out).expect("finished");
        assert_eq!(
            out,
            [
                Delta::Usage { usage: Usage { input_tokens: Some(12), output_tokens: Some(1) } },
                Delta::Reasoning { text: "hmm".into(), kind: ReasoningKind::Summary },
                Delta::ReasoningState { state: ReasoningState::new(Opaque::Signature("sig".into())) },
                Delta::Text { text: "Hi".into() },
                Delta::ToolCall {
                    index: 0,
                    id: Some("toolu_1".into()),
                    name: Some("f".into()),
                    arguments: String::new()
                },
                Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() },
                Delta::Usage { usage: Usage { input_tokens: Some(12), output_tokens: Some(30) } },
                Delta::Done {
                    finish_reason: FinishReason::ToolCalls,
                    usage: Usage { input_tokens: Some(12), output_tokens: Some(30) },
                    model: Some("claude".into()),
                },
            ]
        );
    }

    #[test]
    fn housekeeping_events_are_not_visible_and_truncation_is_an_error() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        d.on_event(
            &event("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#),
            &mut out,
        )
        .expect("ok");
        d.on_event(&event("ping", r#"{"type":"ping"}"#), &mut out).expect("ok");
        assert!(out.iter().all(|d| !d.is_visible()));
        assert_eq!(d.on_event(&event("content_block_delta", "{nope"), &mut out), Ok(()));
        assert!(matches!(
            out.last(),
            Some(Delta::Skipped { reason }) if reason.contains("anthropic_messages") && reason.contains("content_block_delta")
        ));
        assert_eq!(
            d.finish(&mut out),
            Err(DecodeError::Protocol("anthropic_messages stream ended without a stop_reason or message_stop".into()))
        );
    }
}
