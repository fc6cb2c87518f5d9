//! Google Gemini API (`POST {baseUrl}/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` for SSE).
//!
//! The key goes only in the `x-goog-api-key` header, never in the URL's `?key=`, so it cannot leak
//! into logs or errors that quote the URL. The assistant's role is `model`; tool calls and results
//! are `functionCall` / `functionResponse` parts, and a result names its function rather than a
//! call id, so the name is found from the assistant turn that made the call. Gemini gives no call
//! ids of its own: calls without one get `call_{n}`. A stream has no end marker: it succeeded if
//! some chunk carried a `finishReason`, so `Done` is emitted by `finish()`. When a stream fails
//! midway, Google writes its error object after the frames, outside SSE framing (one line, or
//! pretty-printed over several, possibly inside `[...]`): those lines reach the decoder as
//! unframed lines, and the error fails the stream whatever came before it. Every streamed token
//! passes through [`StreamDecoder`], so chunks (and whole answers, which have the same shape) are
//! read by the wire crate (`llm_baton_wire::frames::gemini`, built for speed); the parts it keeps
//! as trees (`usageMetadata`, `error`, a call's `args`) are read here.
//!
//! An image or file is an `inlineData` part (base64 with its `mimeType`) or a `fileData` part (a
//! `fileUri` with its `mimeType`, which the API requires: ai.google.dev/api/caching#FileData), so
//! a URL without a media type is a part this format cannot carry ([`Format::uncarried`]).
//! `topP`, `seed` and structured output (`responseMimeType: "application/json"`, plus `responseJsonSchema`
//! for a schema: ai.google.dev/gemini-api/docs/structured-output) go in `generationConfig`; the
//! tool choice is `toolConfig.functionCallingConfig` (`AUTO`, `NONE`, `ANY`, `ANY` with
//! `allowedFunctionNames` for a named tool: ai.google.dev/gemini-api/docs/function-calling).
//! Gemini has no switch for parallel tool calls, so `parallelToolCalls` is not sent.
//!
//! [`Format::uncarried`]: crate::format::Format::uncarried

use std::borrow::Cow;

use llm_baton_wire::frames::gemini::{parse_chunk, Chunk, ChunkFunctionCall};
use llm_baton_wire::json::Json;
use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use crate::chat::{
    self, Answer, ChatRequest, Delta, FinishReason, Message, Opaque, ReasoningKind, ReasoningPart, ReasoningState,
    ResponseFormat, Role, Source, ToolCall, ToolChoice, Usage,
};
use crate::format::frame;
use crate::format::{
    json, malformed_frame, DecodeError, Endpoint, FailureClass, HttpRequest, ProviderDialect, ProviderSaid,
    StreamDecoding, Uncarried,
};
use crate::sse::SseEvent;
use crate::value::{from_tree, parse_value};

/// Google Gemini (generateContent), as a [`ProviderDialect`].
#[derive(Debug, Clone, Copy)]
pub struct Gemini;

impl ProviderDialect for Gemini {
    type StreamDecoder = StreamDecoder;

    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
        let model = endpoint.model.strip_prefix("models/").unwrap_or(endpoint.model);
        let path = if stream {
            format!("models/{model}:streamGenerateContent?alt=sse")
        } else {
            format!("models/{model}:generateContent")
        };
        let mut body = JsonWriter::new();
        write_body(&mut body, request, endpoint.model);
        let credential = endpoint.api_key.map(|key| ("x-goog-api-key", key.expose().to_string()));
        endpoint.post(&path, credential, &[], body.finish())
    }

    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError> {
        let mut chunk: Chunk = json::text(body)
            .map_err(|e| e.to_string())
            .and_then(parse_chunk)
            .map_err(|e| DecodeError::Protocol(format!("gemini answer is not a GenerateContentResponse: {e}")))?;
        if let Some(error) = chunk.error.as_ref() {
            return Err(provider_error(&from_tree(error)));
        }
        let usage = chunk.usage.as_ref().map(read_usage).unwrap_or_default();
        let model = chunk.model_version.take().map(Cow::into_owned);
        let blocked = chunk.prompt_blocked;
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            if blocked {
                let (text, reasoning, tool_calls) = (String::new(), String::new(), Vec::new());
                return Ok(Answer {
                    logprobs: None,
                    content_filter: None,
                    text,
                    reasoning,
                    reasoning_parts: Vec::new(),
                    tool_calls,
                    finish_reason: FinishReason::ContentFilter,
                    usage,
                    model,
                });
            }
            return Err(DecodeError::Protocol("gemini answer has no candidates[0]".into()));
        };
        let (mut text, mut reasoning, mut tool_calls) = (String::new(), String::new(), Vec::new());
        let mut reasoning_parts = Vec::new();
        for part in candidate.parts {
            let signature = signature_state(part.thought_signature);
            if let Some(call) = part.function_call {
                tool_calls.push(ToolCall { state: signature, ..tool_call(call, tool_calls.len() as u32) });
                continue;
            }
            if let Some(t) = part.text {
                if part.thought == Some(true) {
                    reasoning.push_str(&t);
                    ReasoningPart::push_text(&mut reasoning_parts, ReasoningKind::Summary, &t);
                } else {
                    text.push_str(&t);
                }
            }
            if let Some(state) = signature {
                ReasoningPart::push_state(&mut reasoning_parts, state);
            }
        }
        Ok(Answer {
            logprobs: None,
            content_filter: None,
            text,
            reasoning,
            reasoning_parts,
            finish_reason: finish_reason(candidate.finish_reason.as_deref(), !tool_calls.is_empty()),
            tool_calls,
            usage,
            model,
        })
    }

    /// The provider's words, code (its `status` name) and class from a Google API error body (also
    /// the one-element list some endpoints wrap it in); None when it is not that shape.
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
        let value = json::parse(body).ok()?;
        let value = match value {
            Value::Array(items) => items.into_iter().next()?,
            v => v,
        };
        let error = value.get("error")?;
        let message = error.get("message")?.as_str()?;
        (!message.trim().is_empty()).then(|| said(status, error, message.to_string()))
    }
}

/// Gemini rejects an OBJECT schema with no properties; a tool without parameters omits them.
fn has_parameters(schema: &Value) -> bool {
    match schema.get("properties") {
        Some(Value::Object(p)) => !p.is_empty(),
        Some(_) => true,
        None => schema.get("type").and_then(Value::as_str) != Some("object"),
    }
}

/// Why a Gemini request cannot carry `part`, if it cannot: a URL needs its media type.
pub(crate) fn uncarried(part: &chat::Part) -> Option<Uncarried> {
    match part {
        chat::Part::Image { source: Source::Url { media_type: None, .. } } => Some(Uncarried {
            what: "an image by URL without a mediaType".into(),
            remedy: Some("give its mediaType (Gemini needs one with a URL)"),
        }),
        _ => None,
    }
}

/// The request body (camelCase), written straight from the request; a `None` or an empty list is
/// left out, and so is a generation config with nothing in it.
fn write_body(w: &mut JsonWriter, request: &ChatRequest, model: &str) {
    let system = request.system_prompts();
    w.begin_object();
    w.field("contents", &contents(&request.messages, model));
    if !system.is_empty() {
        w.key("systemInstruction");
        w.begin_object();
        w.key("parts");
        w.begin_array();
        w.begin_object();
        w.field("text", &system.join("\n\n"));
        w.end_object();
        w.end_array();
        w.end_object();
    }
    let format = request.response_format.as_ref();
    let configured = request.max_tokens.is_some()
        || request.temperature.is_some()
        || request.top_p.is_some()
        || request.seed.is_some()
        || !request.stop.is_empty()
        || format.is_some()
        || request.reasoning.is_some();
    if configured {
        w.key("generationConfig");
        w.begin_object();
        w.opt_field("maxOutputTokens", request.max_tokens.as_ref());
        w.opt_field("temperature", request.temperature.as_ref());
        w.opt_field("topP", request.top_p.as_ref());
        w.opt_field("seed", request.seed.as_ref());
        w.list_field("stopSequences", &request.stop);
        w.opt_field("responseMimeType", format.map(|_| "application/json"));
        w.opt_field("responseJsonSchema", format.and_then(ResponseFormat::schema));
        write_thinking_config(w, request, model);
        w.end_object();
    }
    if !request.tools.is_empty() {
        w.key("tools");
        w.begin_array();
        w.begin_object();
        w.key("functionDeclarations");
        w.begin_array();
        for t in &request.tools {
            w.begin_object();
            w.field("name", &t.name);
            w.opt_field("description", t.description.as_ref());
            w.opt_field("parameters", has_parameters(&t.parameters).then_some(&t.parameters));
            w.end_object();
        }
        w.end_array();
        w.end_object();
        w.end_array();
        if let Some(choice) = &request.tool_choice {
            let (mode, allowed) = match choice {
                ToolChoice::Auto => ("AUTO", None),
                ToolChoice::None => ("NONE", None),
                ToolChoice::Required => ("ANY", None),
                ToolChoice::Tool { name } => ("ANY", Some(name)),
            };
            w.key("toolConfig");
            w.begin_object();
            w.key("functionCallingConfig");
            w.begin_object();
            w.field("mode", mode);
            if let Some(name) = allowed {
                w.key("allowedFunctionNames");
                w.begin_array();
                w.string(name);
                w.end_array();
            }
            w.end_object();
            w.end_object();
        }
    }
    w.end_object();
}

/// `thinkingConfig`, for a request with `reasoning`. Gemini 3 takes an effort as its
/// `thinkingLevel` (and refuses a level with a budget); Gemini 2.5 takes a `thinkingBudget`, the
/// request's own or its effort's. `summary` is `includeThoughts`.
fn write_thinking_config(w: &mut JsonWriter, request: &ChatRequest, model: &str) {
    let Some(reasoning) = request.reasoning else { return };
    w.key("thinkingConfig");
    w.begin_object();
    match (is_gemini_3(model), reasoning.effort, reasoning.budget_tokens) {
        (true, Some(effort), _) => w.field("thinkingLevel", effort.as_str()),
        (true, None, budget) => w.opt_field("thinkingBudget", budget.as_ref()),
        (false, None, None) => {}
        (false, ..) => w.field("thinkingBudget", &reasoning.budget()),
    }
    w.opt_field("includeThoughts", reasoning.summary.as_ref());
    w.end_object();
}

/// Gemini 3 and later models validate thought signatures on function calls (and take a
/// thinking level): ai.google.dev/gemini-api/docs/thought-signatures.
fn is_gemini_3(model: &str) -> bool {
    let model = model.strip_prefix("models/").unwrap_or(model);
    model.strip_prefix("gemini-").is_some_and(|v| v.bytes().next().is_some_and(|b| b.is_ascii_digit() && b >= b'3'))
}

const FORMAT: &str = "gemini";

/// What Google documents to send on a function call whose signature is not this model's (a
/// call another provider made, or a history from elsewhere): Gemini 3 then skips the check.
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// A part's signature as a state, the engine naming its issuer.
fn signature_state(signature: Option<Cow<'_, str>>) -> Option<ReasoningState> {
    signature.filter(|s| !s.is_empty()).map(|s| ReasoningState::new(Opaque::Signature(s.into_owned())))
}

/// A state's signature, when `model` issued it.
fn own_signature<'a>(state: Option<&'a ReasoningState>, model: &str) -> Option<&'a str> {
    match state.filter(|s| s.valid_for(FORMAT, model)).map(|s| &s.opaque) {
        Some(Opaque::Signature(signature)) => Some(signature),
        _ => None,
    }
}

struct Content<'a> {
    role: &'static str,
    parts: Vec<Part<'a>>,
}

enum Part<'a> {
    Text {
        text: Cow<'a, str>,
    },
    /// A model turn's text with the signature Gemini put on it.
    SignedText {
        text: Cow<'a, str>,
        thought_signature: &'a str,
    },
    InlineData {
        inline_data: InlineData<'a>,
    },
    FileData {
        file_data: FileData<'a>,
    },
    FunctionCall {
        function_call: FunctionCall<'a>,
        thought_signature: Option<&'a str>,
    },
    FunctionResponse {
        function_response: FunctionResponse<'a>,
    },
}

struct InlineData<'a> {
    mime_type: &'a str,
    data: &'a str,
}

/// A URL's `mimeType` is required; one without ([`Format::uncarried`]) is sent without it and
/// refused by the provider, were it sent at all.
struct FileData<'a> {
    mime_type: Option<&'a str>,
    file_uri: &'a str,
}

impl<'a> Part<'a> {
    fn new(part: &'a chat::Part) -> Self {
        let source = match part {
            chat::Part::Text { text } => return Part::Text { text: Cow::Borrowed(text) },
            chat::Part::Image { source } | chat::Part::File { source, .. } => source,
        };
        match source {
            Source::Data { data, media_type } => {
                Part::InlineData { inline_data: InlineData { mime_type: media_type, data } }
            }
            Source::Url { url, media_type } => {
                Part::FileData { file_data: FileData { mime_type: media_type.as_deref(), file_uri: url } }
            }
        }
    }
}

impl ToJson for Content<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("role", self.role);
        w.field("parts", &self.parts);
        w.end_object();
    }
}

/// `{"text"}`, `{"inlineData"}`, `{"fileData"}`, `{"functionCall"}` or `{"functionResponse"}`.
impl ToJson for Part<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Part::Text { text } => w.field("text", &**text),
            Part::SignedText { text, thought_signature } => {
                w.field("text", &**text);
                w.field("thoughtSignature", *thought_signature);
            }
            Part::InlineData { inline_data } => {
                w.key("inlineData");
                w.begin_object();
                w.field("mimeType", inline_data.mime_type);
                w.field("data", inline_data.data);
                w.end_object();
            }
            Part::FileData { file_data } => {
                w.key("fileData");
                w.begin_object();
                w.opt_field("mimeType", file_data.mime_type);
                w.field("fileUri", file_data.file_uri);
                w.end_object();
            }
            Part::FunctionCall { function_call, thought_signature } => {
                w.key("functionCall");
                w.begin_object();
                w.field("name", function_call.name);
                w.field("args", &function_call.args);
                w.end_object();
                w.opt_field("thoughtSignature", *thought_signature);
            }
            Part::FunctionResponse { function_response } => {
                w.key("functionResponse");
                w.begin_object();
                w.field("name", function_response.name);
                w.field("response", &function_response.response);
                w.end_object();
            }
        }
        w.end_object();
    }
}

/// A user message's parts: one text part for an all-text message, else a part per part.
fn user_parts(m: &Message) -> Vec<Part<'_>> {
    if m.is_text_only() {
        vec![Part::Text { text: m.text() }]
    } else {
        m.content.iter().map(Part::new).collect()
    }
}

struct FunctionCall<'a> {
    name: &'a str,
    args: Value,
}

struct FunctionResponse<'a> {
    name: &'a str,
    response: Value,
}

/// A model turn's parts: its text, with the signature this model put on it, then its function
/// calls, each with its own signature. Reasoning text is not sent back (Gemini keeps its thoughts
/// in the signatures), nor is what another provider or model issued; on Gemini 3 the first call
/// of a turn without its own signature carries the documented skip value instead.
fn model_parts<'a>(m: &'a Message, model: &str) -> Vec<Part<'a>> {
    let text = m.text();
    let text_signature = m.reasoning.iter().rev().find_map(|p| own_signature(p.state.as_ref(), model));
    let mut parts = vec![match text_signature {
        Some(thought_signature) => Part::SignedText { text, thought_signature },
        None => Part::Text { text },
    }];
    let skip =
        is_gemini_3(model) && m.tool_calls.first().is_some_and(|c| own_signature(c.state.as_ref(), model).is_none());
    parts.extend(m.tool_calls.iter().enumerate().map(|(i, c)| Part::FunctionCall {
        function_call: FunctionCall { name: &c.name, args: call_args(&c.arguments) },
        thought_signature: own_signature(c.state.as_ref(), model).or((skip && i == 0).then_some(SKIP_SIGNATURE)),
    }));
    parts
}

/// Turns as Gemini wants them: consecutive turns of one role merged (parallel tool results
/// travel together), empty text parts dropped where other parts remain (Gemini rejects them).
fn contents<'a>(messages: &'a [Message], model: &str) -> Vec<Content<'a>> {
    let mut turns: Vec<Content> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let (role, parts) = match m.role {
            Role::System => continue,
            Role::User => ("user", user_parts(m)),
            Role::Assistant => ("model", model_parts(m, model)),
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or("");
                let function_response =
                    FunctionResponse { name: called_function(&messages[..i], id), response: tool_response(&m.text()) };
                ("user", vec![Part::FunctionResponse { function_response }])
            }
        };
        match turns.last_mut() {
            Some(last) if last.role == role => last.parts.extend(parts),
            _ => turns.push(Content { role, parts }),
        }
    }
    for turn in &mut turns {
        let empty = |p: &Part| matches!(p, Part::Text { text } if text.is_empty());
        if turn.parts.iter().any(|p| !empty(p)) {
            turn.parts.retain(|p| !empty(p));
        } else {
            turn.parts.truncate(1);
        }
    }
    turns
}

/// The function the call `id` named, from the latest earlier assistant turn that made it; the id
/// itself when no turn did.
fn called_function<'a>(earlier: &'a [Message], id: &'a str) -> &'a str {
    earlier.iter().rev().flat_map(|m| m.tool_calls.iter()).find(|c| c.id == id).map(|c| c.name.as_str()).unwrap_or(id)
}

/// `args` must be an object: empty arguments are `{}`; text that is not JSON goes as a string so
/// the provider names the problem.
fn call_args(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    parse_value(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// `response` must be an object: a JSON object result goes as is, anything else under `output`
/// (the key Gemini documents for a function's output).
fn tool_response(content: &str) -> Value {
    let value = match parse_value(content) {
        Ok(Value::Object(map)) => return Value::Object(map),
        Ok(value) => value,
        Err(_) => Value::String(content.to_string()),
    };
    let mut map = Map::new();
    map.insert("output".into(), value);
    Value::Object(map)
}

// ---- answers and stream chunks (the same shape) ----

/// A function call as a [`ToolCall`]: calls without an id get `call_{ordinal}`, and absent
/// arguments are `{}`.
fn tool_call(call: ChunkFunctionCall, ordinal: u32) -> ToolCall {
    ToolCall {
        id: call.id.filter(|id| !id.is_empty()).map_or_else(|| format!("call_{ordinal}"), Cow::into_owned),
        name: call.name.map(Cow::into_owned).unwrap_or_default(),
        arguments: call.args.map(|a| from_tree(&a).to_json()).unwrap_or_else(|| "{}".into()),
        state: None,
    }
}

/// Thinking tokens are billed as output, so they count as output here. Gemini's JSON (proto3)
/// omits a count of zero, so an absent count is 0; an odd one (see [`frame::count`]) is
/// unknown, and so is a usageMetadata that is not an object.
fn read_usage(metadata: &Json) -> Usage {
    if !metadata.is_object() {
        return Usage::default();
    }
    let count = |key| match metadata.get(key) {
        None | Some(Json::Null) => Some(0),
        Some(c) => frame::count(c),
    };
    Usage {
        input_tokens: count("promptTokenCount"),
        output_tokens: count("candidatesTokenCount")
            .zip(count("thoughtsTokenCount"))
            .and_then(|(candidates, thoughts)| candidates.checked_add(thoughts)),
    }
}

/// Gemini says STOP after function calls too; that is normalized to `ToolCalls`.
fn finish_reason(raw: Option<&str>, called_tools: bool) -> FinishReason {
    match raw {
        None | Some("STOP") if called_tools => FinishReason::ToolCalls,
        None | Some("STOP") => FinishReason::Stop,
        Some("MAX_TOKENS") => FinishReason::Length,
        Some("SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY") => {
            FinishReason::ContentFilter
        }
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

// ---- errors ----
//
// A Google API error is `{"error": {"code", "message", "status", "details"}}` (google.rpc.Status;
// the Gemini API's "Troubleshooting" page lists what each status means). INVALID_ARGUMENT 400
// covers a prompt over the model's window, named only in its words ("The input token count (N)
// exceeds the maximum number of tokens allowed (M)"), and an invalid key, named by the
// ErrorInfo reason API_KEY_INVALID. UNAUTHENTICATED 401 and PERMISSION_DENIED 403 are
// credentials. RESOURCE_EXHAUSTED 429 is a rate limit: Google words even per-minute limits as
// "You exceeded your current quota" and sends a RetryInfo delay, so waiting does help and none is
// read as a quota. UNAVAILABLE 503 "The model is overloaded" is an overload. A prompt Gemini
// blocks is no error but an answer (promptFeedback.blockReason, finish content_filter).

fn said(status: u16, error: &Value, message: String) -> ProviderSaid {
    let name = error.get("status").and_then(Value::as_str).filter(|s| !s.is_empty());
    let reasons = || {
        let details = error.get("details").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        details.iter().filter_map(|d| d.get("reason").and_then(Value::as_str)).collect::<Vec<_>>()
    };
    let words = message.to_ascii_lowercase();
    let class = match name {
        Some("INVALID_ARGUMENT")
            if words.contains("exceeds the maximum number of tokens") || words.contains("input token count") =>
        {
            Some(FailureClass::ContextLength)
        }
        Some("INVALID_ARGUMENT") if reasons().contains(&"API_KEY_INVALID") => Some(FailureClass::Auth),
        Some("UNAUTHENTICATED" | "PERMISSION_DENIED") => Some(FailureClass::Auth),
        Some("RESOURCE_EXHAUSTED") => Some(FailureClass::RateLimit),
        Some("UNAVAILABLE") if words.contains("overloaded") => Some(FailureClass::Overloaded),
        _ => FailureClass::of_status(status),
    };
    ProviderSaid { message, code: name.map(str::to_string), class, content_filter: None }
}

/// A Google API error (`{"code": 503, "message": ..., "status": "UNAVAILABLE"}`): its `code` is
/// the HTTP status; without one (or with a gRPC number instead), the `status` name is mapped to
/// the HTTP status Google documents for it.
fn provider_error(error: &Value) -> DecodeError {
    let code = error.get("code").and_then(Value::as_u64).filter(|c| (400..=599).contains(c)).map(|c| c as u16);
    let status = code.unwrap_or(match error.get("status").and_then(Value::as_str) {
        Some("INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE") => 400,
        Some("UNAUTHENTICATED") => 401,
        Some("PERMISSION_DENIED") => 403,
        Some("NOT_FOUND") => 404,
        Some("ABORTED" | "ALREADY_EXISTS") => 409,
        Some("RESOURCE_EXHAUSTED") => 429,
        Some("CANCELLED") => 499,
        Some("UNIMPLEMENTED") => 501,
        Some("UNAVAILABLE") => 503,
        Some("DEADLINE_EXCEEDED") => 504,
        // INTERNAL, UNKNOWN, DATA_LOSS and names added later.
        _ => 500,
    });
    let message = match error {
        Value::String(s) => s.clone(),
        _ => error
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .unwrap_or("the provider reported an error")
            .to_string(),
    };
    let said = said(status, error, message);
    DecodeError::Provider { status, message: said.message, code: said.code, class: said.class }
}

// ---- streams ----

/// The most unframed text kept while waiting for an error object to close: Google's error
/// objects are a few hundred bytes.
const MAX_UNFRAMED_BYTES: usize = 64 << 10;

#[derive(Debug, Default)]
pub struct StreamDecoder {
    finish_reason: Option<String>,
    prompt_blocked: bool,
    usage: Usage,
    tool_calls: u32,
    model: Option<String>,
    /// Unframed lines of a JSON value still open, joined by newlines, and how many brackets
    /// they left open.
    unframed: String,
    unframed_depth: i64,
    done: bool,
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        self.on_chunk(ev, out)
    }

    /// From `usageMetadata`, which Gemini may send on any chunk, not only the last.
    fn usage(&self) -> Usage {
        self.usage
    }

    /// A line outside SSE framing. Lines are gathered until their brackets close, then parsed
    /// once (so a hostile stream of lines costs linear time): an error object (alone or first in
    /// a list) fails the stream; any other text is ignored, as before the error shape was known.
    fn on_unframed(&mut self, line: &str) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        if self.unframed.len() + line.len() >= MAX_UNFRAMED_BYTES {
            self.unframed.clear();
            self.unframed_depth = 0;
        }
        let mut in_string = false;
        let mut escaped = false;
        for b in line.bytes() {
            match b {
                _ if escaped => escaped = false,
                b'\\' if in_string => escaped = true,
                b'"' => in_string = !in_string,
                b'{' | b'[' if !in_string => self.unframed_depth += 1,
                b'}' | b']' if !in_string => self.unframed_depth -= 1,
                _ => {}
            }
        }
        self.unframed.push_str(line);
        self.unframed.push('\n');
        // Still open: wait for the lines that close it. A string cannot span lines in JSON.
        if self.unframed_depth > 0 && !in_string {
            return Ok(());
        }
        let value = parse_value(&self.unframed).ok();
        self.unframed.clear();
        self.unframed_depth = 0;
        let value = match value {
            Some(Value::Array(items)) => items.into_iter().next(),
            v => v,
        };
        match value.as_ref().and_then(|v| v.get("error")) {
            Some(error) => Err(provider_error(error)),
            None => Ok(()),
        }
    }

    /// Emits `Done` if a chunk carried a `finishReason` (or the prompt was blocked).
    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        let finish_reason = match &self.finish_reason {
            Some(raw) => finish_reason(Some(raw), self.tool_calls > 0),
            None if self.prompt_blocked => FinishReason::ContentFilter,
            None => return Err(DecodeError::Protocol("gemini stream ended without a finishReason".into())),
        };
        self.done = true;
        out.push(Delta::Done { finish_reason, usage: self.usage, model: self.model.take() });
        Ok(())
    }
}

impl StreamDecoder {
    /// One chunk's deltas; its finish reason, usage and model are kept for the end.
    fn on_chunk(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done || ev.data.trim().is_empty() {
            return Ok(());
        }
        let mut chunk = match parse_chunk(&ev.data) {
            Ok(chunk) => chunk,
            Err(e) => {
                let reason = format!("gemini stream data frame is not a GenerateContentResponse: {e}");
                // Gemini sends each function call whole in one frame: a frame that names one, or
                // one after a call (the next of parallel calls), may be a call nobody would miss.
                let at_risk = if self.tool_calls > 0 {
                    Some("the answer holds a function call, and this frame may hold the next")
                } else if ev.data.contains("functionCall") || ev.data.contains("function_call") {
                    Some("the frame names a functionCall")
                } else {
                    None
                };
                return malformed_frame(reason, at_risk, out);
            }
        };
        if let Some(error) = chunk.error.as_ref() {
            return Err(provider_error(&from_tree(error)));
        }
        if let Some(usage) = chunk.usage.as_ref() {
            self.usage = read_usage(usage);
        }
        if let Some(model) = chunk.model_version.take().filter(|m| !m.is_empty()) {
            self.model = Some(model.into_owned());
        }
        self.prompt_blocked |= chunk.prompt_blocked;
        let Some(candidate) = chunk.candidates.into_iter().next() else {
            return Ok(());
        };
        for part in candidate.parts {
            let signature = signature_state(part.thought_signature);
            if let Some(call) = part.function_call {
                let call = tool_call(call, self.tool_calls);
                out.push(Delta::ToolCall {
                    index: self.tool_calls,
                    id: Some(call.id),
                    name: Some(call.name),
                    arguments: call.arguments,
                });
                if let Some(state) = signature {
                    out.push(Delta::ToolCallState { index: self.tool_calls, state });
                }
                self.tool_calls = self.tool_calls.saturating_add(1);
                continue;
            }
            if let Some(text) = part.text.filter(|t| !t.is_empty()) {
                match part.thought {
                    Some(true) => Delta::push_reasoning(out, ReasoningKind::Summary, text),
                    _ => Delta::push_text(out, text),
                }
            }
            if let Some(state) = signature {
                out.push(Delta::ReasoningState { state });
            }
        }
        if let Some(reason) = candidate.finish_reason {
            self.finish_reason = Some(reason.into_owned());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Tool;
    use crate::format::provider;
    use crate::format::test_endpoint;
    use serde_json::json;

    fn endpoint(key: Option<&str>) -> Endpoint<'static> {
        test_endpoint("https://generativelanguage.googleapis.com/v1beta", "gemini-2.5-flash", key, &[])
    }

    fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
        req.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn event(data: &str) -> SseEvent {
        SseEvent { event: String::new(), data: data.into(), id: None }
    }

    #[test]
    fn key_only_in_header_never_in_url() {
        let req = ChatRequest { messages: vec![Message::new(Role::User, "hi")], ..Default::default() };
        let http = Gemini::build_request(&endpoint(Some("AIza-secret")), &req, false);
        assert_eq!(
            http.url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
        );
        assert_eq!(header(&http, "x-goog-api-key"), Some("AIza-secret"));
        assert!(!http.url.contains("AIza-secret") && !http.url.contains("key="));
        assert!(!format!("{http:?}").contains("AIza-secret"));
        assert_eq!(
            serde_json::from_str::<Value>(&http.body).expect("json"),
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
        );

        let mut t = endpoint(Some("AIza-secret"));
        t.model = "models/gemini-2.5-pro";
        let http = Gemini::build_request(&t, &req, true);
        assert_eq!(
            http.url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert!(!http.url.contains("AIza-secret"));
        assert_eq!(header(&Gemini::build_request(&endpoint(None), &req, true), "x-goog-api-key"), None);
    }

    #[test]
    fn builds_system_config_tools_and_tool_turns() {
        let mut assistant = Message::new(Role::Assistant, "");
        assistant.tool_calls = vec![
            ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
                state: None,
            },
            ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: String::new(), state: None },
        ];
        let mut r1 = Message::new(Role::Tool, r#"{"temp":18}"#);
        r1.tool_call_id = Some("call_0".into());
        let mut r2 = Message::new(Role::Tool, "noon");
        r2.tool_call_id = Some("call_1".into());
        let req = ChatRequest {
            messages: vec![
                Message::new(Role::System, "be brief"),
                Message::new(Role::User, "weather and time?"),
                assistant,
                r1,
                r2,
            ],
            max_tokens: Some(200),
            temperature: Some(0.7),
            stop: vec!["END".into()],
            tools: vec![
                Tool {
                    name: "get_weather".into(),
                    description: Some("Weather".into()),
                    parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
                },
                Tool {
                    name: "get_time".into(),
                    description: None,
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            ..Default::default()
        };
        let http = Gemini::build_request(&endpoint(Some("k")), &req, false);
        assert_eq!(
            serde_json::from_str::<Value>(&http.body).expect("json"),
            json!({
                "contents": [
                    {"role": "user", "parts": [{"text": "weather and time?"}]},
                    {"role": "model", "parts": [
                        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                        {"functionCall": {"name": "get_time", "args": {}}}
                    ]},
                    {"role": "user", "parts": [
                        {"functionResponse": {"name": "get_weather", "response": {"temp": 18}}},
                        {"functionResponse": {"name": "get_time", "response": {"output": "noon"}}}
                    ]}
                ],
                "systemInstruction": {"parts": [{"text": "be brief"}]},
                "generationConfig": {"maxOutputTokens": 200, "temperature": 0.7, "stopSequences": ["END"]},
                "tools": [{"functionDeclarations": [
                    {"name": "get_weather", "description": "Weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
                    {"name": "get_time"}
                ]}]
            })
        );
    }

    #[test]
    fn decodes_a_whole_answer() {
        let body = br#"{"candidates":[{"content":{"parts":[{"text":"Plan.","thought":true},{"text":"Hello"},{"text":" there"},
              {"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}],"role":"model"},"finishReason":"STOP","index":0}],
            "usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":5,"totalTokenCount":20,"thoughtsTokenCount":7},
            "modelVersion":"gemini-2.5-flash","responseId":"abc"}"#;
        let answer = Gemini::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "Hello there");
        assert_eq!(answer.reasoning, "Plan.");
        assert_eq!(
            answer.tool_calls,
            [ToolCall {
                id: "call_0".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Paris"}"#.into(),
                state: None
            }]
        );
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!(answer.usage, Usage { input_tokens: Some(8), output_tokens: Some(12) });
        assert_eq!(answer.model.as_deref(), Some("gemini-2.5-flash"));

        for (raw, expected) in [
            ("MAX_TOKENS", FinishReason::Length),
            ("SAFETY", FinishReason::ContentFilter),
            ("MALFORMED_FUNCTION_CALL", FinishReason::Other("MALFORMED_FUNCTION_CALL".into())),
        ] {
            let body = format!(r#"{{"candidates":[{{"finishReason":"{raw}"}}]}}"#);
            assert_eq!(Gemini::decode_answer(body.as_bytes()).map(|a| a.finish_reason), Ok(expected));
        }
        let blocked = br#"{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4}}"#;
        let answer = Gemini::decode_answer(blocked).expect("decodes");
        assert_eq!((answer.finish_reason, answer.usage.input_tokens), (FinishReason::ContentFilter, Some(4)));
    }

    #[test]
    fn rejects_bodies_that_are_not_answers() {
        assert_eq!(
            Gemini::decode_answer(br#"{"usageMetadata":{}}"#),
            Err(DecodeError::Protocol("gemini answer has no candidates[0]".into()))
        );
        assert!(matches!(Gemini::decode_answer(b"\xff"), Err(DecodeError::Protocol(m)) if m.contains("gemini")));
        assert_eq!(
            Gemini::decode_answer(
                br#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}"#
            ),
            Err(provider(429, "Quota exceeded", Some("RESOURCE_EXHAUSTED"), Some(FailureClass::RateLimit)))
        );
        assert_eq!(
            Gemini::decode_answer(br#"{"error":{"message":"Overloaded","status":"UNAVAILABLE"}}"#),
            Err(provider(503, "Overloaded", Some("UNAVAILABLE"), Some(FailureClass::Overloaded)))
        );
    }

    #[test]
    fn reads_error_messages() {
        let body = br#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}"#;
        let message = |body: &[u8]| Gemini::error_body(400, body).map(|said| said.message);
        assert_eq!(message(body).as_deref(), Some("API key not valid. Please pass a valid API key."));
        let listed = br#"[{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}]"#;
        assert_eq!(message(listed).as_deref(), Some("The model is overloaded."));
        assert_eq!(message(b"[]"), None);
        assert_eq!(message(b"Not Found"), None);
    }

    #[test]
    fn reads_error_codes_and_classes() {
        use FailureClass::*;
        let key_invalid = json!([{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]);
        let quota = json!([{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "33s"}]);
        let cases: [(u16, &str, &str, Value, Option<FailureClass>); 9] = [
            (
                400,
                "INVALID_ARGUMENT",
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
                json!([]),
                Some(ContextLength),
            ),
            (400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", key_invalid, Some(Auth)),
            (400, "INVALID_ARGUMENT", "Request contains an invalid argument.", json!([]), None),
            (403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.", json!([]), Some(Auth)),
            (401, "UNAUTHENTICATED", "Request had invalid authentication credentials.", json!([]), Some(Auth)),
            (
                429,
                "RESOURCE_EXHAUSTED",
                "You exceeded your current quota, please check your plan and billing details.",
                quota,
                Some(RateLimit),
            ),
            (503, "UNAVAILABLE", "The model is overloaded. Please try again later.", json!([]), Some(Overloaded)),
            (503, "UNAVAILABLE", "The service is currently unavailable.", json!([]), None),
            (500, "INTERNAL", "An internal error has occurred.", json!([]), None),
        ];
        for (status, name, message, details, class) in cases {
            let body = json!({"error": {"code": status, "message": message, "status": name, "details": details}});
            let said = Gemini::error_body(status, body.to_string().as_bytes()).expect(message);
            assert_eq!(
                said,
                ProviderSaid { message: message.into(), code: Some(name.into()), class, content_filter: None },
                "{message}"
            );
            // The same object written after the frames of a failing stream.
            let mut d = StreamDecoder::default();
            assert_eq!(
                d.on_unframed(&body.to_string()),
                Err(provider(status, message, Some(name), class)),
                "{message}"
            );
        }
    }

    #[test]
    fn streams_thoughts_text_calls_and_done_at_finish() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for data in [
            r#"{"candidates":[{"content":{"parts":[{"text":"Plan","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8}}"#,
            r#"{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"index":0}]}"#,
            r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"a":1}}}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":4,"thoughtsTokenCount":2}}"#,
        ] {
            d.on_event(&event(data), &mut out).expect("decodes");
        }
        d.finish(&mut out).expect("finished");
        d.finish(&mut out).expect("finished twice");
        assert_eq!(
            out,
            [
                Delta::Reasoning { text: "Plan".into(), kind: ReasoningKind::Summary },
                Delta::Usage { usage: Usage { input_tokens: Some(8), output_tokens: Some(0) } },
                Delta::Text { text: "Hi".into() },
                Delta::ToolCall {
                    index: 0,
                    id: Some("call_0".into()),
                    name: Some("f".into()),
                    arguments: r#"{"a":1}"#.into()
                },
                Delta::Usage { usage: Usage { input_tokens: Some(8), output_tokens: Some(6) } },
                Delta::Done {
                    finish_reason: FinishReason::ToolCalls,
                    usage: Usage { input_tokens: Some(8), output_tokens: Some(6) },
                    model: None,
                },
            ]
        );
    }

    #[test]
    fn google_status_names_map_to_http_statuses() {
        let cases = [
            ("CANCELLED", 499),
            ("RESOURCE_EXHAUSTED", 429),
            ("UNAVAILABLE", 503),
            ("INTERNAL", 500),
            ("DEADLINE_EXCEEDED", 504),
            ("INVALID_ARGUMENT", 400),
            ("UNIMPLEMENTED", 501),
            ("ABORTED", 409),
            ("SOMETHING_NEW", 500),
        ];
        for (name, status) in cases {
            // Without a code, or with a gRPC number where the HTTP status should be.
            for error in [json!({"message": "m", "status": name}), json!({"code": 1, "message": "m", "status": name})] {
                let class = match name {
                    "UNAUTHENTICATED" | "PERMISSION_DENIED" => Some(FailureClass::Auth),
                    "RESOURCE_EXHAUSTED" => Some(FailureClass::RateLimit),
                    _ => None,
                };
                assert_eq!(provider_error(&error), provider(status, "m", Some(name), class), "{name}");
            }
        }
        let coded = json!({"code": 499, "message": "The operation was cancelled.", "status": "CANCELLED"});
        assert_eq!(provider_error(&coded), provider(499, "The operation was cancelled.", Some("CANCELLED"), None));
    }

    #[test]
    fn unframed_lines_fail_the_stream_only_with_an_error_object() {
        let cancelled = || Err(provider(499, "cancelled", Some("CANCELLED"), None));
        let error = r#"{"error": {"code": 499, "message": "cancelled", "status": "CANCELLED"}}"#;
        let cases: [(&[&str], Result<(), DecodeError>); 5] = [
            (&[error], cancelled()),
            (
                &[
                    "[{",
                    r#"  "error": {"code": 499,"#,
                    r#"    "message": "cancelled", "status": "CANCELLED"}"#,
                    "}",
                    "]",
                ],
                cancelled(),
            ),
            (&["<html>proxy noise</html>", error], cancelled()),
            (&[r#"{"notice": "not an error"}"#, "garbage"], Ok(())),
            (&["{", r#"  "error": {"code": 499"#], Ok(())),
        ];
        for (lines, expected) in cases {
            let mut d = StreamDecoder::default();
            let result = lines.iter().try_for_each(|line| d.on_unframed(line));
            assert_eq!(result, expected, "{lines:?}");
        }
        let mut d = StreamDecoder::default();
        d.on_unframed("{").expect("waits for the rest");
        for _ in 0..MAX_UNFRAMED_BYTES / 4 {
            d.on_unframed(r#""a":1,"#).expect("waits");
        }
        assert!(d.unframed.len() < MAX_UNFRAMED_BYTES, "unframed text is bounded");
        assert_eq!(d.on_unframed(error), cancelled());
    }

    #[test]
    fn stream_errors_and_truncation() {
        let mut out = Vec::new();
        let mut d = StreamDecoder::default();
        d.on_event(&event(r#"{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"}}]}"#), &mut out)
            .expect("ok");
        d.on_event(&event(r#"{"usageMetadata":{"promptTokenCount":3}}"#), &mut out).expect("ok");
        assert_eq!(out, [Delta::Usage { usage: Usage { input_tokens: Some(3), output_tokens: Some(0) } }]);
        out.clear();
        assert_eq!(
            d.on_event(
                &event(r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#),
                &mut out
            ),
            Err(provider(503, "The model is overloaded.", Some("UNAVAILABLE"), Some(FailureClass::Overloaded)))
        );
        assert_eq!(d.on_event(&event("{"), &mut out), Ok(()));
        assert!(matches!(out.last(), Some(Delta::Skipped { reason }) if reason.starts_with("gemini")));
        assert_eq!(d.finish(&mut out), Err(DecodeError::Protocol("gemini stream ended without a finishReason".into())));
    }
}
