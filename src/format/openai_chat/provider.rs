//! OpenAI Chat Completions (`POST {baseUrl}/chat/completions`), the dialect most OpenAI-compatible
//! servers speak too (vLLM, Ollama, OpenRouter, Groq, DeepSeek...).
//!
//! A stream ends with `data: [DONE]`; the finish reason arrives in an earlier chunk and the usage in
//! a usage-only chunk with empty `choices` (asked for with `stream_options.include_usage`). Several
//! compatible servers never send `[DONE]`, so a stream that carried its finish reason and then
//! closed cleanly is complete too; one with neither was cut short. A refusal (`refusal` instead
//! of `content`) is the answer's text, with finish `content_filter`, whole or streamed. Content
//! may be a list of parts instead of a string (Mistral's reasoning models send
//! `[{"type": "thinking", "thinking": [{"type": "text", "text"}]}]`, then `{"type": "text"}`
//! parts): a thinking part is reasoning and any other part's `text` is text, whole or streamed
//! (docs.mistral.ai/capabilities/reasoning; the AI SDK's recorded Magistral streams). Every
//! streamed token passes through [`StreamDecoder::on_event`], so data frames are read by the wire
//! crate (`llm_baton_wire::frames::openai_chat`, built for speed) into small structs holding only
//! the fields used.
//!
//! The header assembly and the OpenAI error-to-status mapping live here and are shared by the other
//! formats (`openai_responses` speaks the same error dialect).
//!
//! A message with an image or file goes as a list of content parts (an all-text message stays one
//! string): `image_url` (a URL, or the data as a `data:` URL) and `file` with `file_data` as a
//! `data:` URL. The file guide (developers.openai.com/api/docs/guides/file-inputs) says Chat
//! Completions takes PDF files only and no file URLs, so those are parts this format cannot carry
//! ([`Format::uncarried`]); a file without a name is sent as `document.pdf`, since a name goes
//! with `file_data`. `tool_choice` and `parallel_tool_calls` go only with tools (the API refuses them
//! without), and `response_format` is `json_object`, or `json_schema` named `response` unless
//! the caller named it.
//!
//! Reasoning comes as `reasoning_content` (DeepSeek's name, Kimi's and GLM's too) or `reasoning`
//! (vLLM since 0.11, OpenRouter, gpt-oss), whole or streamed. It carries no opaque state, but
//! DeepSeek's thinking mode, Kimi K2 thinking and GLM's interleaved thinking want a tool-call
//! turn's reasoning back as `reasoning_content` (DeepSeek answers 400 without it): so reasoning
//! read from those fields has an [`Opaque::Plain`] state naming its issuer, and goes back only
//! to a target of the same format and model, as every other provider's state does.
//!
//! [`Format::uncarried`]: crate::format::Format::uncarried

use std::borrow::Cow;

use llm_baton_wire::frames::openai_chat::{parse_chunk, trimmed, Chunk, ChunkDelta};
use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::Value;

use super::{class_named, finish_reason};
use crate::chat::{
    Answer, ChatRequest, ContentFilterResults, Delta, Logprobs, Message, Opaque, Part, ReasoningKind, ReasoningPart,
    ReasoningState, ResponseFormat, Role, Source, ToolCall, ToolChoice, Usage,
};
use crate::format::frame;
use crate::format::{
    json, malformed_frame, DecodeError, Endpoint, FailureClass, HttpRequest, ProviderDialect, ProviderSaid,
    StreamDecoding, Uncarried,
};
use crate::sse::SseEvent;
use crate::value::{from_tree, parse_value};

/// OpenAI Chat Completions, as a [`ProviderDialect`].
#[derive(Debug, Clone, Copy)]
pub struct OpenaiChat;

impl ProviderDialect for OpenaiChat {
    type StreamDecoder = StreamDecoder;

    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
        let mut body = JsonWriter::new();
        write_body(&mut body, endpoint.model, request, stream);
        endpoint.post("chat/completions", endpoint.bearer(), &[], body.finish())
    }

    /// A whole answer is read once per call, so it goes through the shared `Value` parser (see
    /// `format::json`) rather than a derived deserializer of its own.
    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError> {
        json::answer(body, read_answer, "openai_chat answer is not a chat.completion")
    }

    /// The provider's words, code and class from an OpenAI error body (`{"error": {...}}`, or the
    /// bare `{"error": "..."}` / `{"message": "..."}` some compatible servers send); None when the
    /// body is none of these or carries no message.
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
        let value = json::parse(body).ok()?;
        let said = match value.get("error") {
            Some(Value::String(s)) => said(status, None, s),
            Some(e) => said(status, Some(e), e.get("message").and_then(Value::as_str)?),
            None => said(status, None, value.get("message").and_then(Value::as_str)?),
        };
        (!said.message.trim().is_empty()).then_some(said)
    }
}

/// The request body, written straight from the request; a `None` or an empty list is left out.
fn write_body(w: &mut JsonWriter, model: &str, request: &ChatRequest, stream: bool) {
    w.begin_object();
    w.field("model", model);
    w.key("messages");
    w.begin_array();
    for m in &request.messages {
        write_message(w, m, model);
    }
    w.end_array();
    w.opt_field("max_tokens", request.max_tokens.as_ref());
    w.opt_field("temperature", request.temperature.as_ref());
    w.opt_field("top_p", request.top_p.as_ref());
    w.opt_field("seed", request.seed.as_ref());
    w.list_field("stop", &request.stop);
    if !request.tools.is_empty() {
        w.key("tools");
        w.begin_array();
        for t in &request.tools {
            w.begin_object();
            w.field("type", "function");
            w.key("function");
            w.begin_object();
            w.field("name", &t.name);
            w.opt_field("description", t.description.as_ref());
            w.field("parameters", &t.parameters);
            w.end_object();
            w.end_object();
        }
        w.end_array();
        if let Some(choice) = &request.tool_choice {
            w.key("tool_choice");
            write_tool_choice(w, choice);
        }
        w.opt_field("parallel_tool_calls", request.parallel_tool_calls.as_ref());
    }
    if let Some(format) = &request.response_format {
        // `response_format` here; the Responses API's `text.format` is the same but for where the
        // schema's fields go.
        w.key("response_format");
        w.begin_object();
        match JsonSchema::new(format) {
            Some(schema) => {
                w.field("type", "json_schema");
                w.key("json_schema");
                w.begin_object();
                schema.write_fields(w);
                w.end_object();
            }
            None => w.field("type", "json_object"),
        }
        w.end_object();
    }
    // Chat takes an effort alone: no budget, no summary; the history's state is its own reasoning.
    w.opt_field("reasoning_effort", request.reasoning.and_then(|r| r.effort).map(|e| e.as_str()));
    w.field("stream", &stream);
    if stream {
        w.key("stream_options");
        w.begin_object();
        w.field("include_usage", &true);
        w.end_object();
    }
    w.end_object();
}

/// Why a Chat Completions request cannot carry `part`, if it cannot.
pub(crate) fn uncarried(part: &Part) -> Option<Uncarried> {
    match part {
        Part::File { source: Source::Url { .. }, .. } => {
            Some(Uncarried { what: "a file by URL".into(), remedy: Some("send its data (base64) instead") })
        }
        Part::File { source, .. } => non_pdf(source.media_type()),
        Part::Text { .. } | Part::Image { .. } => None,
    }
}

/// A file that is not a PDF, for formats that take PDF files only.
pub(crate) fn non_pdf(media_type: Option<&str>) -> Option<Uncarried> {
    let media_type = media_type.unwrap_or("");
    (!media_type.eq_ignore_ascii_case(PDF)).then(|| Uncarried {
        what: format!("a file of type {}", media_type.to_json()),
        remedy: Some("send PDF files only there, or a text file's contents as a text part"),
    })
}

/// One entry of a message's `tool_calls`, as Chat Completions has it (requests and answers alike).
pub(crate) fn write_tool_call(w: &mut JsonWriter, id: &str, name: &str, arguments: &str) {
    w.begin_object();
    w.field("id", id);
    w.field("type", "function");
    w.key("function");
    w.begin_object();
    w.field("name", name);
    w.field("arguments", arguments);
    w.end_object();
    w.end_object();
}

pub(crate) const PDF: &str = "application/pdf";

/// The name a file is sent under when the caller gave none: OpenAI's formats want one with the data.
pub(crate) fn default_filename(media_type: Option<&str>) -> &'static str {
    match media_type {
        Some(mt) if mt.eq_ignore_ascii_case(PDF) => "document.pdf",
        _ => "file",
    }
}

/// `"auto"`, `"none"`, `"required"`, or `{"type": "function", "function": {"name": ...}}`.
fn write_tool_choice(w: &mut JsonWriter, choice: &ToolChoice) {
    match choice {
        ToolChoice::Auto => w.string("auto"),
        ToolChoice::None => w.string("none"),
        ToolChoice::Required => w.string("required"),
        ToolChoice::Tool { name } => {
            w.begin_object();
            w.field("type", "function");
            w.key("function");
            w.begin_object();
            w.field("name", name);
            w.end_object();
            w.end_object();
        }
    }
}

/// A named JSON Schema, as both OpenAI formats take one for structured output.
pub(crate) struct JsonSchema<'a> {
    name: &'a str,
    description: Option<&'a str>,
    schema: &'a Value,
    strict: Option<bool>,
}

impl<'a> JsonSchema<'a> {
    /// The schema of a JSON response format, `None` for any JSON object.
    pub(crate) fn new(format: &'a ResponseFormat) -> Option<Self> {
        let ResponseFormat::Json { schema, name, description, strict } = format;
        schema.as_ref().map(|schema| JsonSchema {
            name: name.as_deref().unwrap_or("response"),
            description: description.as_deref(),
            schema,
            strict: *strict,
        })
    }

    /// Its fields, into an object the caller opened: the Responses API puts them beside `type`.
    pub(crate) fn write_fields(&self, w: &mut JsonWriter) {
        w.field("name", self.name);
        w.opt_field("description", self.description);
        w.field("schema", self.schema);
        w.opt_field("strict", self.strict.as_ref());
    }
}
/// `{role, content, reasoning_content?, tool_calls?, tool_call_id?}`. The content is the text
/// (`null` for an assistant turn that only called tools), or the parts when the message holds an
/// image or a file; `reasoning_content` is the reasoning `model` issued ([`own_reasoning`]).
fn write_message(w: &mut JsonWriter, m: &Message, model: &str) {
    w.begin_object();
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    w.field("role", role);
    w.key("content");
    if m.is_text_only() {
        let text = m.text();
        let only_calls = m.role == Role::Assistant && text.is_empty() && !m.tool_calls.is_empty();
        if only_calls {
            w.null();
        } else {
            w.string(&text);
        }
    } else {
        w.begin_array();
        for part in &m.content {
            write_part(w, part);
        }
        w.end_array();
    }
    if let Some(reasoning) = own_reasoning(m, model) {
        w.field("reasoning_content", &reasoning);
    }
    if !m.tool_calls.is_empty() {
        w.key("tool_calls");
        w.begin_array();
        for c in &m.tool_calls {
            write_tool_call(w, &c.id, &c.name, &c.arguments);
        }
        w.end_array();
    }
    if m.role == Role::Tool {
        w.field("tool_call_id", m.tool_call_id.as_deref().unwrap_or(""));
    }
    w.end_object();
}

/// `{"type": "text", "text"}`, `{"type": "image_url", "image_url": {"url"}}` (a URL, or the data
/// as a `data:` URL) or `{"type": "file", "file": {filename, file_data}}`. A file by URL has no
/// field here ([`Format::uncarried`] refuses it first); were one sent anyway, it goes as
/// `file_url`, which the provider refuses by name.
fn write_part(w: &mut JsonWriter, part: &Part) {
    w.begin_object();
    match part {
        Part::Text { text } => {
            w.field("type", "text");
            w.field("text", text);
        }
        Part::Image { source } => {
            w.field("type", "image_url");
            w.key("image_url");
            w.begin_object();
            w.field("url", &*source.as_url());
            w.end_object();
        }
        Part::File { source, filename } => {
            w.field("type", "file");
            w.key("file");
            w.begin_object();
            w.field("filename", filename.as_deref().unwrap_or(default_filename(source.media_type())));
            match source {
                Source::Url { url, .. } => w.field("file_url", url),
                Source::Data { .. } => w.field("file_data", &*source.as_url()),
            }
            w.end_object();
        }
    }
    w.end_object();
}

/// This format's name, which its reasoning states and logprobs carry.
const FORMAT: &str = "openai_chat";

/// The reasoning of an assistant message that `model`, a Chat target, issued: its text, sent back
/// as `reasoning_content`, the name DeepSeek, Kimi and GLM document for it in a request (vLLM
/// takes it beside `reasoning`). Reasoning from elsewhere is left out, its text too: another
/// model would read it as its own.
fn own_reasoning(m: &Message, model: &str) -> Option<String> {
    let own =
        |p: &&ReasoningPart| p.state.as_ref().is_some_and(|s| s.opaque == Opaque::Plain && s.valid_for(FORMAT, model));
    let mut parts = m.reasoning.iter().filter(own).peekable();
    parts.peek()?;
    Some(parts.map(|p| p.text.as_str()).collect())
}

/// Reasoning read from `reasoning_content` or `reasoning`, as its one part: stated as this
/// format's, so it goes back to its issuer.
fn issued(text: &str) -> Vec<ReasoningPart> {
    let mut parts = ReasoningPart::unsigned(ReasoningKind::Raw, text);
    if !parts.is_empty() {
        ReasoningPart::push_state(&mut parts, ReasoningState::new(Opaque::Plain));
    }
    parts
}

// ---- whole answers ----

fn read_answer(v: &Value) -> json::Read<Result<Answer, DecodeError>> {
    json::object(v, "answer")?;
    let usage = json::field(v, "usage").map_or(Usage::default(), |u| Usage {
        input_tokens: json::count_field(u, "prompt_tokens").flatten(),
        output_tokens: json::count_field(u, "completion_tokens").flatten(),
    });
    let model = json::string_field(v, "model")?;
    let mut first = None;
    for choice in json::objects_field(v, "choices")?.unwrap_or_default() {
        let message = json::object_field(choice, "message")?.map(read_message).transpose()?;
        let finish = json::str_field(choice, "finish_reason")?;
        let logprobs = json::field(choice, "logprobs");
        let filtered = json::field(choice, "content_filter_results");
        first.get_or_insert((message, finish, logprobs, filtered));
    }
    if let Some(error) = json::field(v, "error") {
        return Ok(Err(provider_error(error)));
    }
    let Some((Some(message), finish, logprobs, filtered)) = first else {
        return Ok(Err(DecodeError::Protocol("openai_chat answer has no choices[0].message".into())));
    };
    let finish = if message.refused { refused(finish) } else { finish };
    Ok(Ok(Answer {
        finish_reason: finish_reason(finish, !message.tool_calls.is_empty()),
        text: message.text,
        reasoning_parts: if message.from_fields {
            issued(&message.reasoning)
        } else {
            ReasoningPart::unsigned(ReasoningKind::Raw, &message.reasoning)
        },
        reasoning: message.reasoning,
        tool_calls: message.tool_calls,
        usage,
        model,
        logprobs: logprobs.map(|raw| Logprobs { format: FORMAT, raw: raw.clone() }),
        content_filter: ContentFilterResults::of(json::field(v, "prompt_filter_results").cloned(), filtered.cloned())
            .map(Box::new),
    }))
}

struct AnswerMessage {
    text: String,
    reasoning: String,
    /// Reasoning came in `reasoning_content` or `reasoning` (not only in content parts).
    from_fields: bool,
    tool_calls: Vec<ToolCall>,
    /// The text is the model's refusal.
    refused: bool,
}

fn read_message(m: &Value) -> json::Read<AnswerMessage> {
    let reasoning = json::str_field(m, "reasoning_content")?.or(json::str_field(m, "reasoning")?);
    let mut reasoning = reasoning.unwrap_or("").to_string();
    let from_fields = !reasoning.is_empty();
    // Content is a string, or a list of parts (Mistral's reasoning models, some compatible
    // servers) read as a stream's are.
    let mut text = match json::field(m, "content") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(parts @ Value::Array(_)) => {
            let mut text = String::new();
            for piece in content_parts(parts)? {
                match piece {
                    Delta::Text { text: piece } => text.push_str(&piece),
                    Delta::Reasoning { text: piece, .. } => reasoning.push_str(&piece),
                    _ => {}
                }
            }
            text
        }
        Some(other) => return Err(json::invalid("content", other, "a string or a list of parts")),
    };
    let refusal = json::str_field(m, "refusal")?;
    let mut tool_calls = Vec::new();
    for call in json::objects_field(m, "tool_calls")?.unwrap_or_default() {
        let id = json::string_field(call, "id")?.unwrap_or_default();
        let (name, arguments) = match json::object_field(call, "function")? {
            Some(f) => (json::string_field(f, "name")?, json::string_field(f, "arguments")?),
            None => (None, None),
        };
        let (name, arguments) = (name.unwrap_or_default(), arguments.unwrap_or_default());
        tool_calls.push(ToolCall { id, name, arguments, state: None });
    }
    let refusal = refusal.filter(|r| !r.is_empty());
    let refused = text.is_empty() && refusal.is_some();
    if refused {
        text = refusal.unwrap_or("").to_string();
    }
    Ok(AnswerMessage { text, reasoning, from_fields, tool_calls, refused })
}

/// A `content` list of parts, whole or in a stream's delta, as the text and reasoning deltas it
/// holds in order: a `thinking` part's `thinking` (a list of text parts) is reasoning, any other
/// part's `text` is text (an image or a reference part has none).
fn content_parts(parts: &Value) -> json::Read<Vec<Delta>> {
    let Value::Array(parts) = parts else { return Err(json::invalid("content", parts, "a list of parts")) };
    let mut out = Vec::new();
    for part in parts {
        json::object(part, "content[]")?;
        let thinking = json::str_field(part, "type")? == Some("thinking");
        let texts = match thinking {
            true => json::objects_field(part, "thinking")?.unwrap_or_default(),
            false => std::slice::from_ref(part),
        };
        for text in texts {
            if let Some(text) = json::str_field(text, "text")?.filter(|t| !t.is_empty()) {
                match thinking {
                    true => Delta::push_reasoning(&mut out, ReasoningKind::Raw, text.into()),
                    false => Delta::push_text(&mut out, text.into()),
                }
            }
        }
    }
    Ok(out)
}

/// Checks each content list in a chunk's choices as [`content_parts`] reads it, before any of
/// the chunk counts: one of the wrong shape makes the whole frame malformed.
fn check_content_lists(chunk: &Chunk) -> json::Read<()> {
    for choice in chunk.choice.iter().chain(&chunk.more_choices) {
        if let Some(list) = choice.delta.as_ref().and_then(|d| d.content_parts.as_ref()) {
            content_parts(&from_tree(list))?;
        }
    }
    Ok(())
}

/// The finish reason of a refusal: OpenAI says `stop` (or nothing); the answer is a policy
/// refusal, which is what `content_filter` means (Anthropic's `refusal` maps there too).
fn refused(raw: Option<&str>) -> Option<&str> {
    match raw {
        None | Some("" | "stop") => Some("content_filter"),
        other => other,
    }
}

// ---- errors ----
//
// OpenAI's error object is `{"message", "type", "param", "code"}` (API reference, "Error codes"
// guide). The classes come from its codes: `context_length_exceeded` (400, also the Responses
// API's code for an input over the window), `insufficient_quota` (429, type `insufficient_quota`:
// billing, not a rate), `invalid_api_key` (401), `rate_limit_exceeded` (429, type `requests` or
// `tokens`), `content_policy_violation` (400, images) and Azure OpenAI's `content_filter` (400, a
// prompt its content filter rejected). A Responses `invalid_prompt` names a prompt "flagged as
// potentially violating our usage policy" only in its words. Compatible servers (vLLM, LiteLLM)
// send no code for a prompt over the window, only "maximum context length" in the message (and
// Anthropic's compatible endpoint its own "prompt is too long"), and
// OpenAI's 503 names an overload only in words ("The engine is currently overloaded").

fn said(status: u16, error: Option<&Value>, message: &str) -> ProviderSaid {
    let code = error.and_then(error_code);
    let kind = error.and_then(|e| e.get("type")).and_then(Value::as_str);
    let class = error_class(status, kind, code.as_deref(), message);
    // Azure OpenAI says what its content filter found in the error's `innererror`.
    let content_filter = error.and_then(|e| e.get("innererror")?.get("content_filter_result")).cloned();
    ProviderSaid { message: message.to_string(), code, class, content_filter }
}

/// The code an OpenAI error names: its `code` when that is a word (compatible gateways put a
/// status number there), else its `type`.
fn error_code(error: &Value) -> Option<String> {
    fn word(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|s| !s.is_empty() && s.parse::<u16>().is_err())
    }
    word(error.get("code")).or_else(|| word(error.get("type"))).map(str::to_string)
}

/// The class of an OpenAI-dialect error, from its code, its type and (for what only words name)
/// its message; the status's class otherwise.
pub(crate) fn error_class(status: u16, kind: Option<&str>, code: Option<&str>, message: &str) -> Option<FailureClass> {
    let words = message.to_ascii_lowercase();
    let over_window =
        ["maximum context length", "context window", "prompt is too long"].iter().any(|w| words.contains(w));
    let by_words = if (400..500).contains(&status) && over_window {
        Some(FailureClass::ContextLength)
    } else if code == Some("invalid_prompt") && words.contains("usage policy") {
        Some(FailureClass::ContentFilter)
    } else if status >= 500 && words.contains("overloaded") {
        Some(FailureClass::Overloaded)
    } else {
        None
    };
    code.and_then(class_named)
        .or_else(|| kind.and_then(class_named))
        .or(by_words)
        .or_else(|| FailureClass::of_status(status))
}

/// An OpenAI `error` value (an object with `message`/`type`/`code`, or a bare string from some
/// compatible servers) as a provider error.
pub(crate) fn provider_error(error: &Value) -> DecodeError {
    let message = match error {
        Value::String(s) => s.clone(),
        _ => error
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .or_else(|| error.get("type").and_then(Value::as_str))
            .unwrap_or("the provider reported an error")
            .to_string(),
    };
    let status = error_status(error.get("code"), error.get("type").and_then(Value::as_str));
    let ProviderSaid { message, code, class, .. } = said(status, Some(error), &message);
    DecodeError::Provider { status, message, code, class }
}

/// The HTTP status OpenAI documents for an error `code` (or, failing that, `type`); 500 when
/// neither names one. Compatible gateways (OpenRouter...) put the HTTP status itself in `code`.
pub(crate) fn error_status(code: Option<&Value>, kind: Option<&str>) -> u16 {
    fn by_name(name: &str) -> Option<u16> {
        Some(match name {
            "invalid_request_error" | "invalid_prompt" | "context_length_exceeded" => 400,
            "invalid_api_key" | "authentication_error" => 401,
            "permission_error" => 403,
            "model_not_found" | "not_found_error" => 404,
            // OpenAI names a rate limit's `type` after the exhausted budget: "requests" or "tokens".
            "rate_limit_exceeded" | "insufficient_quota" | "rate_limit_error" | "requests" | "tokens" => 429,
            "server_error" | "api_error" => 500,
            _ => return None,
        })
    }
    let from_code = match code {
        Some(Value::Number(n)) => n.as_u64().filter(|n| (400..=599).contains(n)).map(|n| n as u16),
        Some(Value::String(s)) => by_name(s).or_else(|| s.parse().ok().filter(|n| (400..=599).contains(n))),
        _ => None,
    };
    from_code.or_else(|| kind.and_then(by_name)).unwrap_or(500)
}

// ---- streams ----

/// Decodes `chat.completion.chunk` frames. Only the first choice is followed (n = 1).
#[derive(Debug, Default)]
pub struct StreamDecoder {
    finish_reason: Option<String>,
    usage: Usage,
    called_tools: bool,
    /// Text came from `delta.content`, or from `delta.refusal`.
    content: bool,
    refused: bool,
    /// The model the chunks name (the first that does).
    model: Option<String>,
    /// A malformed frame was skipped: a tool call that shows up after it must be whole.
    skipped: bool,
    /// Reasoning from `reasoning_content` or `reasoning` is open: what comes next ends it with
    /// its state.
    reasoning: bool,
    done: bool,
}

impl StreamDecoder {
    /// Why a malformed frame may hold part of a tool call: one is open (calls stream their
    /// arguments until the finish reason), or the frame's text names one.
    fn tool_call_at_risk(&self, data: &str) -> Option<&'static str> {
        if self.called_tools && self.finish_reason.is_none() {
            Some("a tool call was open")
        } else if data.contains("\"tool_calls\"") {
            Some("the frame names tool_calls")
        } else {
            None
        }
    }

    /// Ends open field reasoning with its state, as the whole answer's part has it.
    fn end_reasoning(&mut self, out: &mut Vec<Delta>) {
        if std::mem::take(&mut self.reasoning) {
            out.push(Delta::ReasoningState { state: ReasoningState::new(Opaque::Plain) });
        }
    }

    fn on_delta(&mut self, delta: ChunkDelta, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if let Some(text) = delta.reasoning_content.or(delta.reasoning).filter(|t| !t.is_empty()) {
            self.reasoning = true;
            Delta::push_reasoning(out, ReasoningKind::Raw, text);
        }
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.end_reasoning(out);
            self.content = true;
            Delta::push_text(out, text);
        }
        // Checked with the frame (`check_content_lists`).
        let parts = delta.content_parts.as_ref().map(|list| content_parts(&from_tree(list)));
        for piece in parts.and_then(Result::ok).unwrap_or_default() {
            if matches!(piece, Delta::Text { .. }) {
                self.content = true;
                self.end_reasoning(out);
            }
            Delta::push(out, piece);
        }
        if let Some(text) = delta.refusal.filter(|t| !t.is_empty()) {
            self.end_reasoning(out);
            self.refused = true;
            Delta::push_text(out, text);
        }
        for (position, call) in delta.tool_calls.into_iter().enumerate() {
            let id = call.id.filter(|s| !s.is_empty()).map(Cow::into_owned);
            let name = call.name.filter(|s| !s.is_empty()).map(Cow::into_owned);
            let arguments = call.arguments.map(Cow::into_owned).unwrap_or_default();
            if id.is_none() && name.is_none() && arguments.is_empty() {
                continue;
            }
            if self.skipped && !self.called_tools && name.is_none() {
                return Err(DecodeError::Protocol(
                    "openai_chat stream: a tool call began without its name after a skipped malformed frame, which held its start".into(),
                ));
            }
            self.end_reasoning(out);
            self.called_tools = true;
            let index = call.index.unwrap_or(position as u32);
            out.push(Delta::ToolCall { index, id, name, arguments });
        }
        Ok(())
    }

    /// Emits the one `Done`, as the whole answer would end: a refusal alone is `content_filter`.
    fn end(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(());
        }
        self.end_reasoning(out);
        let raw = self.finish_reason.as_deref();
        if self.skipped && !self.called_tools && raw == Some("tool_calls") {
            return Err(DecodeError::Protocol(
                "openai_chat stream finished with tool_calls, but no tool call was read: a skipped malformed frame held it".into(),
            ));
        }
        let raw = if self.refused && !self.content { refused(raw) } else { raw };
        out.push(Delta::Done {
            finish_reason: finish_reason(raw, self.called_tools),
            usage: self.usage,
            model: self.model.take(),
        });
        Ok(())
    }

    /// One event's deltas; its finish reason, usage and model are kept for the end.
    fn on_chunk(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        let data = trimmed(&ev.data);
        if data == "[DONE]" {
            return self.end(out);
        }
        if data.is_empty() {
            return Ok(());
        }
        if ev.event == "error" {
            let value = parse_value(data).unwrap_or_else(|_| Value::String(data.to_string()));
            return Err(provider_error(value.get("error").unwrap_or(&value)));
        }
        // A content list of the wrong shape makes the frame malformed too, before any of it counts.
        let read =
            parse_chunk(data).and_then(|chunk| check_content_lists(&chunk).map(|()| chunk).map_err(|e| e.message));
        let chunk = match read {
            Ok(chunk) => chunk,
            Err(e) => {
                let reason = format!("openai_chat stream data frame is not a chat.completion.chunk: {e}");
                self.skipped = true;
                return malformed_frame(reason, self.tool_call_at_risk(data), out);
            }
        };
        if let Some(error) = chunk.error.as_ref() {
            return Err(provider_error(&from_tree(error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.get("prompt_tokens").and_then(frame::count),
                output_tokens: usage.get("completion_tokens").and_then(frame::count),
            };
        }
        if self.model.is_none() {
            self.model = chunk.model.filter(|m| !m.is_empty()).map(Cow::into_owned);
        }
        let prompt_filter = chunk.prompt_filter_results.and_then(|raw| parse_value(raw).ok());
        if let Some(results) = ContentFilterResults::of(prompt_filter, None) {
            out.push(Delta::ContentFilter { results });
        }
        for choice in chunk.choice.into_iter().chain(chunk.more_choices) {
            if let Some(Ok(raw)) = choice.logprobs.map(parse_value) {
                out.push(Delta::Logprobs { logprobs: Logprobs { format: FORMAT, raw } });
            }
            let choice_filter = choice.content_filter_results.and_then(|raw| parse_value(raw).ok());
            if let Some(results) = ContentFilterResults::of(None, choice_filter) {
                out.push(Delta::ContentFilter { results });
            }
            if let Some(delta) = choice.delta {
                self.on_delta(delta, out)?;
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish_reason = Some(reason.into_owned());
            }
        }
        Ok(())
    }
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        self.on_chunk(ev, out)
    }

    /// From the usage-only chunk before `[DONE]`, or from every chunk of a server with
    /// continuous usage stats (vLLM).
    fn usage(&self) -> Usage {
        self.usage
    }

    /// End of stream: complete after `[DONE]`, or after a finish reason without it (several
    /// compatible servers never send `[DONE]`); cut short otherwise.
    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(DecodeError::Protocol(
                "openai_chat stream ended without a finish_reason or data: [DONE]".into(),
            ));
        }
        self.end(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{FinishReason, Tool};
    use crate::format::provider;
    use crate::format::test_endpoint;
    use serde_json::json;

    fn endpoint(key: Option<&str>, headers: &[(&str, &str)]) -> Endpoint<'static> {
        test_endpoint("https://api.example.com/v1/", "gpt-4o-mini", key, headers)
    }

    fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
        req.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn body(req: &HttpRequest) -> Value {
        serde_json::from_str(&req.body).expect("body is JSON")
    }

    fn event(data: &str) -> SseEvent {
        SseEvent { event: String::new(), data: data.into(), id: None }
    }

    #[test]
    fn builds_url_headers_and_minimal_body() {
        let req = ChatRequest { messages: vec![Message::new(Role::User, "hi")], ..Default::default() };
        let http = OpenaiChat::build_request(&endpoint(Some("sk-secret"), &[]), &req, false);
        assert_eq!(http.method, "POST");
        assert_eq!(http.url, "https://api.example.com/v1/chat/completions");
        assert_eq!(header(&http, "authorization"), Some("Bearer sk-secret"));
        assert_eq!(header(&http, "content-type"), Some("application/json"));
        assert_eq!(
            body(&http),
            json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "stream": false})
        );
        assert!(!format!("{http:?}").contains("sk-secret"));
        assert!(!http.url.contains("sk-secret"));
    }

    #[test]
    fn no_credential_header_without_a_key_and_configured_headers_override_defaults() {
        let t = endpoint(None, &[("content-type", "application/json; charset=utf-8"), ("x-org", "o1")]);
        let http = OpenaiChat::build_request(&t, &ChatRequest::default(), false);
        assert_eq!(header(&http, "authorization"), None);
        assert_eq!(header(&http, "content-type"), Some("application/json; charset=utf-8"));
        assert_eq!(header(&http, "x-org"), Some("o1"));
        assert_eq!(http.headers.iter().filter(|(k, _)| k == "content-type").count(), 1);
    }

    #[test]
    fn configured_key_wins_over_a_configured_credential_header() {
        let t = endpoint(Some("sk-real"), &[("authorization", "Bearer other")]);
        let http = OpenaiChat::build_request(&t, &ChatRequest::default(), false);
        let auth: Vec<_> = http.headers.iter().filter(|(k, _)| k == "authorization").collect();
        assert_eq!(auth, [&("authorization".to_string(), "Bearer sk-real".to_string())]);
    }

    #[test]
    fn builds_streaming_body_with_options_tools_and_tool_turns() {
        let mut assistant = Message::new(Role::Assistant, "");
        assistant.tool_calls = vec![ToolCall {
            id: "call_1".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
            state: None,
        }];
        let mut tool = Message::new(Role::Tool, "18C");
        tool.tool_call_id = Some("call_1".into());
        let req = ChatRequest {
            messages: vec![
                Message::new(Role::System, "be brief"),
                Message::new(Role::User, "weather?"),
                assistant,
                tool,
            ],
            max_tokens: Some(100),
            temperature: Some(0.5),
            stop: vec!["END".into()],
            tools: vec![Tool {
                name: "get_weather".into(),
                description: Some("Weather for a city".into()),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
            }],
            ..Default::default()
        };
        let http = OpenaiChat::build_request(&endpoint(Some("k"), &[]), &req, true);
        assert_eq!(
            body(&http),
            json!({
                "model": "gpt-4o-mini",
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "weather?"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}
                    ]},
                    {"role": "tool", "content": "18C", "tool_call_id": "call_1"}
                ],
                "max_tokens": 100,
                "temperature": 0.5,
                "stop": ["END"],
                "tools": [{"type": "function", "function": {
                    "name": "get_weather",
                    "description": "Weather for a city",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}
                }}],
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }

    #[test]
    fn decodes_a_whole_answer() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18",
            "choices":[{"index":0,"message":{"role":"assistant","content":"Hello!","refusal":null},"logprobs":null,"finish_reason":"stop"}],
            "usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}"#;
        let answer = OpenaiChat::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "Hello!");
        assert_eq!(answer.finish_reason, FinishReason::Stop);
        assert_eq!(answer.usage, Usage { input_tokens: Some(9), output_tokens: Some(3) });
        assert_eq!(answer.model.as_deref(), Some("gpt-4o-mini-2024-07-18"));
    }

    #[test]
    fn decodes_tool_calls_reasoning_and_other_finish_reasons() {
        let body = br#"{"model":"deepseek-reasoner","choices":[{"message":{"role":"assistant","content":null,
            "reasoning_content":"think","tool_calls":[{"id":"call_9","type":"function","function":{"name":"f","arguments":"{}"}}]},
            "finish_reason":"tool_calls"}]}"#;
        let answer = OpenaiChat::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "");
        assert_eq!(answer.reasoning, "think");
        assert_eq!(
            answer.tool_calls,
            [ToolCall { id: "call_9".into(), name: "f".into(), arguments: "{}".into(), state: None }]
        );
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!(answer.usage, Usage::default());

        let body = br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"eos"}]}"#;
        let answer = OpenaiChat::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "ab");
        assert_eq!(answer.finish_reason, FinishReason::Other("eos".into()));
        let length = br#"{"choices":[{"message":{"content":"a"},"finish_reason":"length"}]}"#;
        assert_eq!(OpenaiChat::decode_answer(length).map(|a| a.finish_reason), Ok(FinishReason::Length));
        let filtered = br#"{"choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}"#;
        assert_eq!(OpenaiChat::decode_answer(filtered).map(|a| a.finish_reason), Ok(FinishReason::ContentFilter));
    }

    #[test]
    fn rejects_bodies_that_are_not_answers() {
        assert_eq!(
            OpenaiChat::decode_answer(br#"{"choices":[]}"#),
            Err(DecodeError::Protocol("openai_chat answer has no choices[0].message".into()))
        );
        assert_eq!(
            OpenaiChat::decode_answer(br#"{"object":"list"}"#),
            Err(DecodeError::Protocol("openai_chat answer has no choices[0].message".into()))
        );
        assert!(
            matches!(OpenaiChat::decode_answer(b"not json"), Err(DecodeError::Protocol(m)) if m.contains("openai_chat"))
        );
        assert!(matches!(OpenaiChat::decode_answer(b"[1,2]"), Err(DecodeError::Protocol(_))));
        assert_eq!(
            OpenaiChat::decode_answer(
                br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#
            ),
            Err(provider(429, "Rate limit reached", Some("rate_limit_exceeded"), Some(FailureClass::RateLimit)))
        );
    }

    #[test]
    fn reads_error_messages() {
        let message = |body: &[u8]| OpenaiChat::error_body(500, body).map(|said| said.message);
        let body = br#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
        assert_eq!(message(body).as_deref(), Some("Incorrect API key provided."));
        assert_eq!(message(br#"{"error":"model not loaded"}"#).as_deref(), Some("model not loaded"));
        assert_eq!(message(br#"{"message":"bad gateway"}"#).as_deref(), Some("bad gateway"));
        assert_eq!(message(br#"{"error":{"message":""}}"#), None);
        assert_eq!(message(b"<html>502</html>"), None);
    }

    #[test]
    fn reads_error_codes_and_classes() {
        use FailureClass::*;
        // Bodies as OpenAI, Azure OpenAI and compatible servers send them.
        let cases: [(u16, &str, Option<&str>, Option<FailureClass>); 13] = [
            (
                400,
                r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some("context_length_exceeded"),
                Some(ContextLength),
            ),
            (
                400,
                r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#,
                Some("context_length_exceeded"),
                Some(ContextLength),
            ),
            (
                400,
                r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}"#,
                None,
                Some(ContextLength),
            ),
            (
                400,
                r#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}"#,
                Some("content_filter"),
                Some(ContentFilter),
            ),
            (
                400,
                r#"{"error":{"code":"content_policy_violation","message":"Your request was rejected as a result of our safety system.","param":null,"type":"invalid_request_error"}}"#,
                Some("content_policy_violation"),
                Some(ContentFilter),
            ),
            (
                400,
                r#"{"error":{"message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a different prompt.","type":"invalid_request_error","param":null,"code":"invalid_prompt"}}"#,
                Some("invalid_prompt"),
                Some(ContentFilter),
            ),
            (
                429,
                r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
                Some("insufficient_quota"),
                Some(Quota),
            ),
            (
                429,
                r#"{"error":{"message":"Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
                Some("rate_limit_exceeded"),
                Some(RateLimit),
            ),
            (
                401,
                r#"{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
                Some("invalid_api_key"),
                Some(Auth),
            ),
            (
                403,
                r#"{"error":{"code":"unsupported_country_region_territory","message":"Country, region, or territory not supported","param":null,"type":"request_forbidden"}}"#,
                Some("unsupported_country_region_territory"),
                Some(Auth),
            ),
            (
                503,
                r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}"#,
                Some("server_error"),
                Some(Overloaded),
            ),
            (
                500,
                r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#,
                Some("server_error"),
                None,
            ),
            (
                400,
                r#"{"error":{"message":"Unrecognized request argument supplied: foo","type":"invalid_request_error","param":null,"code":null}}"#,
                Some("invalid_request_error"),
                None,
            ),
        ];
        for (status, body, code, class) in cases {
            let said = OpenaiChat::error_body(status, body.as_bytes()).expect(body);
            assert_eq!((said.code.as_deref(), said.class), (code, class), "{body}");
        }
    }

    #[test]
    fn maps_error_codes_to_statuses() {
        assert_eq!(error_status(Some(&json!("rate_limit_exceeded")), None), 429);
        assert_eq!(error_status(None, Some("invalid_request_error")), 400);
        assert_eq!(error_status(Some(&json!(null)), Some("server_error")), 500);
        assert_eq!(error_status(Some(&json!(502)), None), 502);
        assert_eq!(error_status(Some(&json!(200)), Some("whatever")), 500);
        assert_eq!(error_status(Some(&json!("unknown")), Some("invalid_request_error")), 400);
        assert_eq!(error_status(None, Some("tokens")), 429);
    }

    /// Azure OpenAI's 400 for a prompt its filter refused (Microsoft's example): the class is
    /// `content_filter`, and the filter's results are kept for the caller.
    #[test]
    fn azure_content_filter_refusal_keeps_its_results() {
        let results = json!({"hate": {"filtered": true, "severity": "high"}, "violence": {"filtered": false, "severity": "safe"}});
        let body = json!({"error": {"message": "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
            "type": null, "param": "prompt", "code": "content_filter", "status": 400,
            "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": results}}});
        let said = OpenaiChat::error_body(400, body.to_string().as_bytes()).unwrap();
        assert_eq!((said.code.as_deref(), said.class), (Some("content_filter"), Some(FailureClass::ContentFilter)));
        assert_eq!(said.content_filter, Some(results));
        let plain = OpenaiChat::error_body(400, br#"{"error":{"message":"bad","code":"invalid_request_error"}}"#);
        assert_eq!(plain.unwrap().content_filter, None);
    }

    /// Azure OpenAI's content filter results, in the shapes of Microsoft's content filtering
    /// examples (learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter): on the
    /// prompt and the choice of a whole answer; in a stream, a first chunk with empty `choices`
    /// and the prompt's results, and each choice's results in later chunks (empty at first).
    #[test]
    fn azure_content_filter_results_whole_and_streamed() {
        let safe = json!({"hate": {"filtered": false, "severity": "safe"}, "violence": {"filtered": false, "severity": "safe"}});
        let prompt = json!([{"prompt_index": 0, "content_filter_results": safe}]);
        let whole = json!({"model": "gpt-4o", "prompt_filter_results": prompt, "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "Hi"}, "content_filter_results": safe}]});
        let answer = OpenaiChat::decode_answer(whole.to_string().as_bytes()).unwrap();
        let results = ContentFilterResults { prompt: Some(prompt.clone()), choice: Some(safe.clone()) };
        assert_eq!(answer.content_filter, Some(Box::new(results)));
        let plain = OpenaiChat::decode_answer(br#"{"choices":[{"message":{"content":"Hi"},"finish_reason":"stop"}]}"#);
        assert_eq!(plain.unwrap().content_filter, None);

        let filtered = json!({"hate": {"filtered": true, "severity": "medium"}});
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for data in [
            json!({"id": "", "object": "", "created": 0, "model": "", "prompt_filter_results": prompt, "choices": []}),
            json!({"model": "gpt-4o", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "content_filter_results": {}}]}),
            json!({"model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "Hi"}, "content_filter_results": safe}]}),
            json!({"model": "gpt-4o", "choices": []}),
            json!({"model": "gpt-4o", "choices": [{"index": 0, "delta": {}, "finish_reason": "content_filter", "content_filter_results": filtered}]}),
        ] {
            d.on_event(&event(&data.to_string()), &mut out).expect("decodes");
        }
        d.on_event(&event("[DONE]"), &mut out).expect("decodes");
        d.finish(&mut out).expect("finished");
        let results = |prompt: Option<&Value>, choice: Option<&Value>| Delta::ContentFilter {
            results: ContentFilterResults { prompt: prompt.cloned(), choice: choice.cloned() },
        };
        assert_eq!(
            out,
            [
                results(Some(&prompt), None),
                results(None, Some(&safe)),
                Delta::Text { text: "Hi".into() },
                results(None, Some(&filtered)),
                Delta::Done {
                    finish_reason: FinishReason::ContentFilter,
                    usage: Usage::default(),
                    model: Some("gpt-4o".into())
                },
            ]
        );
    }

    #[test]
    fn streams_text_tool_calls_and_done() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Hi \"there\""},"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":1,"delta":{"content":"second choice"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#,
            "[DONE]",
            "[DONE]",
        ] {
            d.on_event(&event(data), &mut out).expect("decodes");
        }
        d.finish(&mut out).expect("finished");
        assert_eq!(
            out,
            [
                Delta::Text { text: "Hi \"there\"".into() },
                Delta::ToolCall {
                    index: 0,
                    id: Some("call_1".into()),
                    name: Some("f".into()),
                    arguments: String::new()
                },
                Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() },
                Delta::Usage { usage: Usage { input_tokens: Some(5), output_tokens: Some(7) } },
                Delta::Done {
                    finish_reason: FinishReason::ToolCalls,
                    usage: Usage { input_tokens: Some(5), output_tokens: Some(7) },
                    model: None,
                },
            ]
        );
    }

    /// Kept as the provider wrote them, for a Chat client: whole, and in a stream before the
    /// text of the same chunk; a chunk whose `logprobs` is null has none.
    #[test]
    fn logprobs_are_kept_whole_and_before_their_chunks_text() {
        let token = json!({"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []});
        let logprobs = json!({"content": [token], "refusal": null});
        let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"},
            "logprobs": logprobs, "finish_reason": "stop"}]});
        let answer = OpenaiChat::decode_answer(body.to_string().as_bytes()).unwrap();
        assert_eq!(answer.logprobs, Some(Logprobs { format: "openai_chat", raw: logprobs.clone() }));
        let null = body.to_string().replace(&logprobs.to_string(), "null");
        assert_eq!(OpenaiChat::decode_answer(null.as_bytes()).unwrap().logprobs, None);

        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        let chunk =
            json!({"choices": [{"index": 0, "delta": {"content": "Hi"}, "logprobs": logprobs, "finish_reason": null}]});
        d.on_event(&event(&chunk.to_string()), &mut out).unwrap();
        d.on_event(&event(r#"{"choices":[{"index":0,"delta":{"content":"!"},"logprobs":null}]}"#), &mut out).unwrap();
        assert_eq!(
            out,
            [
                Delta::Logprobs { logprobs: Logprobs { format: "openai_chat", raw: logprobs } },
                Delta::Text { text: "Hi!".into() },
            ]
        );
    }

    #[test]
    fn role_only_and_usage_only_chunks_are_not_visible() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        d.on_event(&event(r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#), &mut out).expect("ok");
        d.on_event(&event(r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}"#), &mut out)
            .expect("ok");
        d.on_event(&event(""), &mut out).expect("ok");
        assert!(out.iter().all(|d| !d.is_visible()));
    }

    #[test]
    fn stream_reasoning_fields() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        d.on_event(&event(r#"{"choices":[{"delta":{"reasoning_content":"a"}}]}"#), &mut out).expect("ok");
        d.on_event(&event(r#"{"choices":[{"delta":{"reasoning":"b"}}]}"#), &mut out).expect("ok");
        // Fragments of one read join into one delta.
        assert_eq!(out, [Delta::Reasoning { text: "ab".into(), kind: ReasoningKind::Raw }]);
        // What follows ends the reasoning with its state, before itself: here a tool call.
        let call = r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#;
        d.on_event(&event(call), &mut out).expect("ok");
        d.finish(&mut out).expect("finished");
        let plain = ReasoningState::new(Opaque::Plain);
        assert_eq!(out[1], Delta::ReasoningState { state: plain.clone() });
        assert!(matches!(out[2], Delta::ToolCall { index: 0, .. }), "{out:?}");
        assert_eq!(out.iter().filter(|d| matches!(d, Delta::ReasoningState { .. })).count(), 1);
        // Reasoning up to the end ends there; text after it ends it too.
        for (frame, next) in [(r#"{"content":"x"}"#, "text"), (r#"{"refusal":"no"}"#, "text")] {
            let mut d = StreamDecoder::default();
            let mut out = Vec::new();
            d.on_event(&event(r#"{"choices":[{"delta":{"reasoning":"r"}}]}"#), &mut out).expect("ok");
            d.on_event(&event(&format!(r#"{{"choices":[{{"delta":{frame}}}]}}"#)), &mut out).expect("ok");
            assert_eq!(out[1], Delta::ReasoningState { state: plain.clone() }, "{next}");
        }
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        d.on_event(&event(r#"{"choices":[{"delta":{"reasoning_content":"r"},"finish_reason":"stop"}]}"#), &mut out)
            .expect("ok");
        d.finish(&mut out).expect("finished");
        assert_eq!(out[1], Delta::ReasoningState { state: plain });
    }

    #[test]
    fn reasoning_goes_back_as_reasoning_content_to_its_issuer_alone() {
        // Both names read alike, and the whole answer's part names its issuer as the stream's does.
        for field in ["reasoning_content", "reasoning"] {
            let body =
                format!(r#"{{"choices":[{{"message":{{"content":"ok","{field}":"think"}},"finish_reason":"stop"}}]}}"#);
            let answer = OpenaiChat::decode_answer(body.as_bytes()).expect("decodes");
            let part = ReasoningPart {
                text: "think".into(),
                kind: ReasoningKind::Raw,
                state: Some(ReasoningState::new(Opaque::Plain)),
            };
            assert_eq!(answer.reasoning_parts, [part], "{field}");
        }
        let issued = |format: &str, model: &str, text: &str| ReasoningPart {
            text: text.into(),
            kind: ReasoningKind::Raw,
            state: Some(ReasoningState { format: format.into(), model: model.into(), opaque: Opaque::Plain }),
        };
        let mut turn = Message::new(Role::Assistant, "");
        turn.tool_calls = vec![ToolCall { id: "call_1".into(), name: "f".into(), arguments: "{}".into(), state: None }];
        let cases = [
            (vec![issued("openai_chat", "gpt-4o-mini", "mine")], Some("mine")),
            (vec![issued("openai_chat", "deepseek-reasoner", "another model's")], None),
            (vec![issued("anthropic_messages", "gpt-4o-mini", "another format's")], None),
            (vec![ReasoningPart { text: "no issuer".into(), kind: ReasoningKind::Raw, state: None }], None),
            (vec![issued("openai_chat", "gpt-4o-mini", "")], Some("")),
        ];
        for (reasoning, sent) in cases {
            let request = ChatRequest {
                messages: vec![Message { reasoning: reasoning.clone(), ..turn.clone() }],
                ..Default::default()
            };
            let http = OpenaiChat::build_request(&endpoint(None, &[]), &request, false);
            let message = &body(&http)["messages"][0];
            assert_eq!(message.get("reasoning_content").and_then(Value::as_str), sent, "{reasoning:?}");
            assert!(message.get("reasoning").is_none());
        }
    }

    #[test]
    fn content_parts_stream_as_text_and_reasoning_as_the_whole_answer_reads_them() {
        // Mistral's reasoning models: thinking parts (a list of text parts), then text parts,
        // then plain strings; parts without text.
        let frames = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"Count"}]}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[{"thinking":[{"type":"reference","reference_ids":[1]},{"type":"text","text":" the r's."}],"type":"thinking","closed":true},{"type":"text","text":"There are"}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"image_url","image_url":"https://example.com/a.png"},{"type":"reference","reference_ids":[2]}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":" Three."}]}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":" 3."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":[]},"finish_reason":"stop"}]}"#,
        ];
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for data in frames {
            let mut read = Vec::new();
            d.on_event(&event(data), &mut read).expect("decodes");
            out.append(&mut read);
        }
        d.finish(&mut out).expect("finished");
        assert_eq!(
            out,
            [
                Delta::Reasoning { text: "Count".into(), kind: ReasoningKind::Raw },
                Delta::Reasoning { text: " the r's.".into(), kind: ReasoningKind::Raw },
                Delta::Text { text: "There are".into() },
                Delta::Reasoning { text: " Three.".into(), kind: ReasoningKind::Raw },
                Delta::Text { text: " 3.".into() },
                Delta::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), model: None },
            ]
        );

        let whole = br#"{"choices":[{"message":{"role":"assistant","content":[
            {"type":"thinking","thinking":[{"type":"text","text":"Count"},{"type":"reference","reference_ids":[1]},{"type":"text","text":" the r's."}],"closed":true},
            {"type":"text","text":"There are"},{"type":"image_url","image_url":"https://example.com/a.png"},
            {"type":"thinking","thinking":[{"type":"text","text":" Three."}]},{"type":"text","text":" 3."}]},"finish_reason":"stop"}]}"#;
        let answer = OpenaiChat::decode_answer(whole).expect("decodes");
        assert_eq!((answer.text.as_str(), answer.reasoning.as_str()), ("There are 3.", "Count the r's. Three."));
    }

    #[test]
    fn content_of_another_type_is_a_malformed_frame_naming_the_field() {
        let cases = [
            (r#"{"content":7}"#, "`delta.content` is the number 7, expected a string"),
            (r#"{"content":["a"]}"#, "`content[]` is a string, expected an object"),
            (r#"{"content":[{"type":"text","text":1}]}"#, "`text` is a number, expected a string"),
            (r#"{"content":[{"type":"thinking","thinking":{}}]}"#, "`thinking` is an object, expected a list"),
            (
                r#"{"content":[{"type":"thinking","thinking":[{"text":false}]}]}"#,
                "`text` is a boolean, expected a string",
            ),
        ];
        for (delta, expected) in cases {
            let mut out = Vec::new();
            let data = format!(r#"{{"choices":[{{"index":0,"delta":{delta}}}]}}"#);
            StreamDecoder::default().on_event(&event(&data), &mut out).expect("skipped");
            assert!(
                matches!(&out[..], [Delta::Skipped { reason }] if reason.ends_with(&format!("invalid type: {expected}"))),
                "{delta}: {out:?}"
            );
        }
        let whole = br#"{"choices":[{"message":{"content":[{"type":"thinking","thinking":7}]}}]}"#;
        assert!(
            matches!(OpenaiChat::decode_answer(whole), Err(DecodeError::Protocol(m)) if m.ends_with("`thinking` is a number, expected a list")),
        );
    }

    #[test]
    fn an_empty_finish_reason_does_not_finish_a_stream() {
        // Some compatible servers send `"finish_reason": ""` in every chunk until the last.
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        d.on_event(&event(r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":""}]}"#), &mut out)
            .expect("ok");
        assert_eq!(
            d.finish(&mut out),
            Err(DecodeError::Protocol("openai_chat stream ended without a finish_reason or data: [DONE]".into()))
        );
    }

    #[test]
    fn stream_errors() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        assert_eq!(
            d.on_event(&event(r#"{"error":{"message":"The server had an error","type":"server_error"}}"#), &mut out),
            Err(provider(500, "The server had an error", Some("server_error"), None))
        );
        // Compatible servers (vLLM) report a prompt over the window in the stream, code a number.
        let over = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}"#;
        assert_eq!(
            StreamDecoder::default().on_event(&event(&format!(r#"{{"error":{over}}}"#)), &mut Vec::new()),
            Err(provider(
                400,
                "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
                Some("BadRequestError"),
                Some(FailureClass::ContextLength)
            ))
        );
        let quota = r#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        assert_eq!(
            StreamDecoder::default().on_event(&event(quota), &mut Vec::new()),
            Err(provider(
                429,
                "You exceeded your current quota.",
                Some("insufficient_quota"),
                Some(FailureClass::Quota)
            ))
        );
        assert_eq!(d.on_event(&event("{\"choices\":["), &mut out), Ok(()));
        assert!(matches!(out.last(), Some(Delta::Skipped { reason }) if reason.starts_with("openai_chat")));
        assert_eq!(
            d.finish(&mut out),
            Err(DecodeError::Protocol("openai_chat stream ended without a finish_reason or data: [DONE]".into()))
        );
    }
}
