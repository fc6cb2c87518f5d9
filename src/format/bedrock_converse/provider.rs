//! Amazon Bedrock Converse (`POST {baseUrl}/model/{modelId}/converse`) and ConverseStream
//! (`.../converse-stream`, answered in AWS's event-stream framing, not SSE).
//!
//! The base URL defaults to the region's `https://bedrock-runtime.{region}.amazonaws.com` (the
//! config fills it in). The model id goes in the path percent-encoded (an id's `:` and an ARN's
//! `/` too), as the AWS SDKs send it. A Bedrock API key goes as `authorization: Bearer`; access
//! keys sign the request instead, which needs the wall clock, so the driver signs each attempt
//! after building it (`Target::sign`, with [`crate::sigv4`]).
//!
//! Content blocks are one-key objects (`{"text"}`, `{"image"}`, `{"toolUse"}`, `{"toolResult"}`,
//! `{"reasoningContent"}`); turns must alternate, so tool results join the user turn that follows
//! the call, and consecutive turns of one role merge. An image or document goes as its bytes
//! (base64 in JSON) with a format word from its media type; a URL is not carried. Reasoning goes
//! back as `reasoningContent` only to the model that signed it; thinking is asked of Claude models
//! through `additionalModelRequestFields.thinking`, as Bedrock documents for them.
//!
//! A stream's events arrive as event-stream messages, each turned into an [`SseEvent`] by
//! [`event_of`] (the `:event-type` as its name, the JSON payload as its data; an exception by its
//! `:exception-type`), so the decoder reads them like every other format's. `messageStop` says how
//! the answer ended and the `metadata` event after it carries the usage, so `Done` comes at the
//! end of the body (as for Gemini), when a `messageStop` came.

use llm_baton_wire::event_stream::Message as EventMessage;
use llm_baton_wire::frames::bedrock_converse::{parse_event, Event};
use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use super::{exception, finish_reason, is_clock_skew, is_context_length};
use crate::chat::{
    self, Answer, ChatRequest, Delta, FinishReason, Message, Opaque, ReasoningKind, ReasoningPart, ReasoningState,
    Role, Source, ToolCall, ToolChoice, Usage,
};
use crate::format::{
    frame, json, malformed_frame, DecodeError, Endpoint, FailureClass, HttpRequest, ProviderDialect, ProviderSaid,
    StreamDecoding, Uncarried,
};
use crate::sigv4::uri_encode;
use crate::sse::SseEvent;
use crate::value::parse_value;

/// The service name Bedrock Runtime's signatures are scoped to.
pub(crate) const SIGNING_SERVICE: &str = "bedrock";

const FORMAT: &str = "bedrock_converse";

/// Amazon Bedrock Converse, as a [`ProviderDialect`].
#[derive(Debug, Clone, Copy)]
pub struct BedrockConverse;

impl ProviderDialect for BedrockConverse {
    type StreamDecoder = StreamDecoder;

    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
        let action = if stream { "converse-stream" } else { "converse" };
        let path = format!("model/{}/{action}", uri_encode(endpoint.model));
        let mut body = JsonWriter::new();
        write_body(&mut body, request, endpoint.model);
        endpoint.post(&path, endpoint.bearer(), &[], body.finish())
    }

    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError> {
        json::answer(body, read_answer, "bedrock_converse answer is not a ConverseResponse")
    }

    /// Bedrock's error body is `{"message"}` (its type travels in the `x-amzn-ErrorType` header,
    /// which `Failure::from_http` reads as the code); a `__type` or `code` in the body is read too.
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
        let value = json::parse(body).ok()?;
        let message = value.get("message").or_else(|| value.get("Message"))?.as_str()?;
        let code = ["__type", "code"].iter().find_map(|k| value.get(*k).and_then(Value::as_str));
        let code = code.map(|c| c.rsplit('#').next().unwrap_or(c).split(':').next().unwrap_or(c).to_string());
        let class = match (status, code.as_deref()) {
            (403, _) if is_clock_skew(message) => Some(FailureClass::Auth),
            (400, _) if is_context_length(message) => Some(FailureClass::ContextLength),
            // ServiceQuotaExceededException, named by its header alone: "... exceeds the service quota ...".
            (400, None) if message.contains("quota") => Some(FailureClass::Quota),
            (_, Some(code)) => exception(code).1.or(FailureClass::of_status(status)),
            _ => match status {
                503 => Some(FailureClass::Overloaded),
                _ => FailureClass::of_status(status),
            },
        };
        Some(ProviderSaid { message: said_message(status, message), code, class, content_filter: None })
    }
}

/// The provider's words, with what a clock-skewed signature means said first.
fn said_message(status: u16, message: &str) -> String {
    if status == 403 && is_clock_skew(message) {
        format!(
            "clock skew: the request's signature time is more than 5 minutes from AWS's; set this \
             machine's clock right ({message})"
        )
    } else {
        message.to_string()
    }
}

/// Why Converse cannot carry `part`, if it cannot: a URL (Converse takes bytes or S3), or a media
/// type it has no format word for.
pub(crate) fn uncarried(part: &chat::Part) -> Option<Uncarried> {
    let (kind, source) = match part {
        chat::Part::Text { .. } => return None,
        chat::Part::Image { source } => ("an image", source),
        chat::Part::File { source, .. } => ("a file", source),
    };
    match source {
        Source::Url { .. } => Some(Uncarried {
            what: format!("{kind} by URL"),
            remedy: Some("send its bytes as a data: URL or base64 (Converse takes no URL)"),
        }),
        Source::Data { media_type, .. } if block_format(part).is_none() => Some(Uncarried {
            what: format!("{kind} of type {media_type}"),
            remedy: Some(match part {
                chat::Part::Image { .. } => "send a PNG, JPEG, GIF or WebP image",
                _ => "send a PDF, CSV, DOC, DOCX, XLS, XLSX, HTML, TXT or Markdown document",
            }),
        }),
        Source::Data { .. } => None,
    }
}

/// An image's or document's format word, from its media type.
fn block_format(part: &chat::Part) -> Option<&'static str> {
    let (image, media_type) = match part {
        chat::Part::Image { source } => (true, source.media_type()?),
        chat::Part::File { source, .. } => (false, source.media_type()?),
        chat::Part::Text { .. } => return None,
    };
    let words: &[(&str, &'static str)] = if image {
        &[
            ("image/png", "png"),
            ("image/jpeg", "jpeg"),
            ("image/jpg", "jpeg"),
            ("image/gif", "gif"),
            ("image/webp", "webp"),
        ]
    } else {
        &[
            ("application/pdf", "pdf"),
            ("text/csv", "csv"),
            ("application/msword", "doc"),
            ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "docx"),
            ("application/vnd.ms-excel", "xls"),
            ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
            ("text/html", "html"),
            ("text/plain", "txt"),
            ("text/markdown", "md"),
        ]
    };
    let media_type = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    words.iter().find(|(m, _)| *m == media_type).map(|(_, w)| *w)
}

// ---- requests ----

fn write_body(w: &mut JsonWriter, request: &ChatRequest, model: &str) {
    w.begin_object();
    w.key("messages");
    w.begin_array();
    for turn in turns(&request.messages, model) {
        w.begin_object();
        w.field("role", turn.role);
        w.key("content");
        w.begin_array();
        for block in &turn.blocks {
            block.write_json(w);
        }
        w.end_array();
        w.end_object();
    }
    w.end_array();
    let system = request.system_prompts();
    if !system.is_empty() {
        w.key("system");
        w.begin_array();
        for text in &system {
            w.begin_object();
            w.field("text", &**text);
            w.end_object();
        }
        w.end_array();
    }
    let configured = request.max_tokens.is_some()
        || request.temperature.is_some()
        || request.top_p.is_some()
        || !request.stop.is_empty();
    if configured {
        w.key("inferenceConfig");
        w.begin_object();
        w.opt_field("maxTokens", request.max_tokens.as_ref());
        w.opt_field("temperature", request.temperature.as_ref());
        w.opt_field("topP", request.top_p.as_ref());
        w.list_field("stopSequences", &request.stop);
        w.end_object();
    }
    if !request.tools.is_empty() {
        w.key("toolConfig");
        w.begin_object();
        w.key("tools");
        w.begin_array();
        for t in &request.tools {
            w.begin_object();
            w.key("toolSpec");
            w.begin_object();
            w.field("name", &t.name);
            w.opt_field("description", t.description.as_ref());
            w.key("inputSchema");
            w.begin_object();
            w.field("json", &t.parameters);
            w.end_object();
            w.end_object();
            w.end_object();
        }
        w.end_array();
        // Converse has no "none": a request that forbids calls sends its tools with no choice.
        let choice = match &request.tool_choice {
            Some(ToolChoice::Auto) => Some(("auto", None)),
            Some(ToolChoice::Required) => Some(("any", None)),
            Some(ToolChoice::Tool { name }) => Some(("tool", Some(name))),
            Some(ToolChoice::None) | None => None,
        };
        if let Some((word, name)) = choice {
            w.key("toolChoice");
            w.begin_object();
            w.key(word);
            w.begin_object();
            w.opt_field("name", name);
            w.end_object();
            w.end_object();
        }
        w.end_object();
    }
    if let Some(reasoning) = request.reasoning.filter(|_| model.contains("claude")) {
        w.key("additionalModelRequestFields");
        w.begin_object();
        w.key("thinking");
        w.begin_object();
        w.field("type", "enabled");
        w.field("budget_tokens", &reasoning.budget());
        w.end_object();
        w.end_object();
    }
    w.end_object();
}

struct Turn<'a> {
    role: &'static str,
    blocks: Vec<Block<'a>>,
}

enum Block<'a> {
    Text(std::borrow::Cow<'a, str>),
    Media { key: &'static str, format: &'static str, name: Option<String>, bytes: &'a str },
    ToolUse { id: &'a str, name: &'a str, input: Value },
    ToolResult { id: &'a str, content: Value },
    Reasoning { text: &'a str, signature: &'a str },
    RedactedReasoning(&'a str),
}

impl ToJson for Block<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Block::Text(text) => w.field("text", &**text),
            Block::Media { key, format, name, bytes } => {
                w.key(key);
                w.begin_object();
                w.field("format", *format);
                w.opt_field("name", name.as_ref());
                w.key("source");
                w.begin_object();
                w.field("bytes", *bytes);
                w.end_object();
                w.end_object();
            }
            Block::ToolUse { id, name, input } => {
                w.key("toolUse");
                w.begin_object();
                w.field("toolUseId", *id);
                w.field("name", *name);
                w.field("input", input);
                w.end_object();
            }
            Block::ToolResult { id, content } => {
                w.key("toolResult");
                w.begin_object();
                w.field("toolUseId", *id);
                w.key("content");
                w.begin_array();
                w.begin_object();
                match content {
                    Value::String(text) => w.field("text", text),
                    json => w.field("json", json),
                }
                w.end_object();
                w.end_array();
                w.end_object();
            }
            Block::Reasoning { text, signature } => {
                w.key("reasoningContent");
                w.begin_object();
                w.key("reasoningText");
                w.begin_object();
                w.field("text", *text);
                w.field("signature", *signature);
                w.end_object();
                w.end_object();
            }
            Block::RedactedReasoning(data) => {
                w.key("reasoningContent");
                w.begin_object();
                w.field("redactedContent", *data);
                w.end_object();
            }
        }
        w.end_object();
    }
}

/// A user message's blocks: one text block for an all-text message, else its text and media in order.
fn user_blocks(m: &Message) -> Vec<Block<'_>> {
    if m.is_text_only() {
        return vec![Block::Text(m.text())];
    }
    m.content
        .iter()
        .map(|part| match part {
            chat::Part::Text { text } => Block::Text(text.as_str().into()),
            chat::Part::Image { source: Source::Data { data, .. } } => {
                Block::Media { key: "image", format: block_format(part).unwrap_or("png"), name: None, bytes: data }
            }
            chat::Part::File { source: Source::Data { data, .. }, filename } => Block::Media {
                key: "document",
                format: block_format(part).unwrap_or("txt"),
                name: Some(document_name(filename.as_deref())),
                bytes: data,
            },
            // Refused before sending (`uncarried`).
            chat::Part::Image { source: Source::Url { url, .. } }
            | chat::Part::File { source: Source::Url { url, .. }, .. } => Block::Text(url.as_str().into()),
        })
        .collect()
}

/// A document's name as Converse takes one: letters, digits, spaces, hyphens, parentheses and
/// square brackets (so `report.pdf` is `report-pdf`).
fn document_name(filename: Option<&str>) -> String {
    let name: String = filename
        .unwrap_or("document")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || " -()[]".contains(c) { c } else { '-' })
        .collect();
    if name.trim().is_empty() {
        "document".into()
    } else {
        name
    }
}

/// An assistant message's blocks: the reasoning `model` signed, its text, its tool calls.
fn assistant_blocks<'a>(m: &'a Message, model: &str) -> Vec<Block<'a>> {
    let mut blocks: Vec<Block> = m
        .reasoning
        .iter()
        .filter_map(|part| match &part.state.as_ref().filter(|s| s.valid_for(FORMAT, model))?.opaque {
            Opaque::Signature(signature) => Some(Block::Reasoning { text: &part.text, signature }),
            Opaque::Redacted(data) => Some(Block::RedactedReasoning(data)),
            Opaque::Item { .. } | Opaque::Plain => None,
        })
        .collect();
    blocks.push(Block::Text(m.text()));
    blocks.extend(m.tool_calls.iter().map(|c| Block::ToolUse {
        id: &c.id,
        name: &c.name,
        input: call_input(&c.arguments),
    }));
    blocks
}

/// `input` must be an object: empty arguments are `{}`; text that is not JSON goes as a string so
/// the provider names the problem.
fn call_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return Value::Object(Map::new());
    }
    parse_value(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// Turns as Converse wants them: tool results in user turns, consecutive turns of one role merged,
/// empty text blocks dropped where other blocks remain (Bedrock refuses a blank text).
fn turns<'a>(messages: &'a [Message], model: &str) -> Vec<Turn<'a>> {
    let mut turns: Vec<Turn> = Vec::new();
    for m in messages {
        let (role, blocks) = match m.role {
            Role::System => continue,
            Role::User => ("user", user_blocks(m)),
            Role::Assistant => ("assistant", assistant_blocks(m, model)),
            Role::Tool => {
                let text = m.text();
                let content = match parse_value(&text) {
                    Ok(json @ Value::Object(_)) => json,
                    _ => Value::String(text.into_owned()),
                };
                ("user", vec![Block::ToolResult { id: m.tool_call_id.as_deref().unwrap_or(""), content }])
            }
        };
        match turns.last_mut() {
            Some(last) if last.role == role => last.blocks.extend(blocks),
            _ => turns.push(Turn { role, blocks }),
        }
    }
    for turn in &mut turns {
        let empty = |b: &Block| matches!(b, Block::Text(text) if text.is_empty());
        if turn.blocks.iter().any(|b| !empty(b)) {
            turn.blocks.retain(|b| !empty(b));
        } else {
            turn.blocks.truncate(1);
        }
    }
    turns
}

// ---- whole answers ----

fn read_answer(v: &Value) -> json::Read<Result<Answer, DecodeError>> {
    json::object(v, "answer")?;
    let stop_reason = json::str_field(v, "stopReason")?;
    let usage = json::field(v, "usage").map(read_usage).unwrap_or_default();
    let Some(message) =
        json::object_field(v, "output")?.map(|o| json::object_field(o, "message")).transpose()?.flatten()
    else {
        return Ok(Err(DecodeError::Protocol("bedrock_converse answer has no output.message".into())));
    };
    let (mut text, mut reasoning, mut tool_calls) = (String::new(), String::new(), Vec::new());
    let mut reasoning_parts = Vec::new();
    for block in json::objects_field(message, "content")?.unwrap_or_default() {
        if let Some(t) = json::str_field(block, "text")? {
            text.push_str(t);
        }
        if let Some(call) = json::object_field(block, "toolUse")? {
            tool_calls.push(ToolCall {
                id: json::string_field(call, "toolUseId")?.unwrap_or_default(),
                name: json::string_field(call, "name")?.unwrap_or_default(),
                arguments: json::field(call, "input").map(|v| v.to_json()).unwrap_or_else(|| "{}".into()),
                state: None,
            });
        }
        if let Some(content) = json::object_field(block, "reasoningContent")? {
            if let Some(r) = json::object_field(content, "reasoningText")? {
                let t = json::str_field(r, "text")?.unwrap_or("");
                reasoning.push_str(t);
                ReasoningPart::push_text(&mut reasoning_parts, ReasoningKind::Summary, t);
                if let Some(signature) = json::str_field(r, "signature")?.filter(|s| !s.is_empty()) {
                    let state = ReasoningState::new(Opaque::Signature(signature.into()));
                    ReasoningPart::push_state(&mut reasoning_parts, state);
                }
            }
            if let Some(data) = json::str_field(content, "redactedContent")?.filter(|d| !d.is_empty()) {
                ReasoningPart::push_state(&mut reasoning_parts, ReasoningState::new(Opaque::Redacted(data.into())));
            }
        }
    }
    Ok(Ok(Answer {
        text,
        reasoning,
        reasoning_parts,
        logprobs: None,
        content_filter: None,
        finish_reason: finish_reason(stop_reason, !tool_calls.is_empty()),
        tool_calls,
        usage,
        model: None,
    }))
}

fn read_usage(v: &Value) -> Usage {
    Usage {
        input_tokens: json::count_field(v, "inputTokens").flatten(),
        output_tokens: json::count_field(v, "outputTokens").flatten(),
    }
}

// ---- streams ----

/// An event-stream message as the event the decoder reads: named by its `:event-type`, or by its
/// `:exception-type` for an exception (its payload is `{"message"}`); an `error` message (which
/// carries its code and words in headers) as an `internalServerException` with those words.
pub fn event_of(message: &EventMessage) -> SseEvent {
    let header = |name| message.string_header(name).unwrap_or("");
    let (event, data) = match header(":message-type") {
        "exception" => (header(":exception-type").to_string(), String::from_utf8_lossy(&message.payload).into_owned()),
        "error" => {
            let mut w = JsonWriter::new();
            w.begin_object();
            w.field("message", &format!("{}: {}", header(":error-code"), header(":error-message")));
            w.end_object();
            ("internalServerException".to_string(), w.finish())
        }
        _ => (header(":event-type").to_string(), String::from_utf8_lossy(&message.payload).into_owned()),
    };
    SseEvent { event, data, id: None }
}

/// An exception message of a Bedrock stream (an event named `...Exception`, its payload
/// `{"message"}`) as the error it reports, with the status and class [`exception`] gives it and
/// its name, capitalized as AWS's header writes it, as the code.
pub(crate) fn exception_error(sse: &SseEvent) -> DecodeError {
    let name = sse.event.as_str();
    let message = parse_event(&sse.data).ok().and_then(|e| e.message.map(|m| m.into_owned()));
    let (status, class) = exception(name);
    let code = format!("{}{}", name[..1].to_ascii_uppercase(), &name[1..]);
    DecodeError::Provider {
        status,
        message: message.unwrap_or_else(|| format!("the stream reported {code}")),
        code: Some(code),
        class,
    }
}

/// Turns ConverseStream events into deltas (see the module docs for how a stream ends).
#[derive(Debug, Default)]
pub struct StreamDecoder {
    /// Each tool-use block's `contentBlockIndex`, in the order the calls started: a call's
    /// position here is its index in the deltas.
    tool_blocks: Vec<u32>,
    stop_reason: Option<String>,
    usage: Usage,
    /// `Done` was emitted: what comes after it changes nothing.
    done: bool,
}

impl StreamDecoder {
    fn tool_index(&self, block: Option<u32>) -> Option<u32> {
        let block = block?;
        self.tool_blocks.iter().position(|b| *b == block).map(|i| i as u32)
    }
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, sse: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        let name = sse.event.as_str();
        if self.done {
            return Ok(());
        }
        if name.ends_with("Exception") {
            return Err(exception_error(sse));
        }
        let event: Event = match parse_event(&sse.data) {
            Ok(event) => event,
            Err(e) => {
                let open = (!self.tool_blocks.is_empty()).then_some("a tool call was open");
                return malformed_frame(format!("bedrock_converse {name} event is malformed: {e}"), open, out);
            }
        };
        match name {
            "contentBlockStart" => {
                let Some(call) = event.start.as_ref().and_then(|s| s.get("toolUse")) else { return Ok(()) };
                let index = self.tool_blocks.len() as u32;
                self.tool_blocks.push(event.index.unwrap_or(index));
                let text = |key| call.get(key).and_then(|v| v.as_str()).map(str::to_string);
                out.push(Delta::ToolCall {
                    index,
                    id: text("toolUseId"),
                    name: text("name"),
                    arguments: String::new(),
                });
            }
            "contentBlockDelta" => {
                let Some(delta) = event.delta else { return Ok(()) };
                if let Some(text) = delta.text.filter(|t| !t.is_empty()) {
                    out.push(Delta::Text { text: text.into_owned() });
                }
                if let Some(input) = delta.tool_input {
                    let Some(index) = self.tool_index(event.index) else {
                        return Err(DecodeError::Protocol(format!(
                            "bedrock_converse tool input for content block {:?}, which started no tool call",
                            event.index
                        )));
                    };
                    out.push(Delta::ToolCall { index, id: None, name: None, arguments: input.into_owned() });
                }
                if let Some(text) = delta.reasoning_text.filter(|t| !t.is_empty()) {
                    out.push(Delta::Reasoning { text: text.into_owned(), kind: ReasoningKind::Summary });
                }
                if let Some(signature) = delta.signature.filter(|s| !s.is_empty()) {
                    out.push(Delta::ReasoningState {
                        state: ReasoningState::new(Opaque::Signature(signature.into_owned())),
                    });
                }
                if let Some(data) = delta.redacted.filter(|d| !d.is_empty()) {
                    out.push(Delta::ReasoningState { state: ReasoningState::new(Opaque::Redacted(data.into_owned())) });
                }
            }
            "messageStop" => self.stop_reason = Some(event.stop_reason.map(|s| s.into_owned()).unwrap_or_default()),
            "metadata" => {
                if let Some(usage) = event.usage.as_ref().filter(|u| u.is_object()) {
                    let count = |key| usage.get(key).and_then(frame::count);
                    self.usage = Usage { input_tokens: count("inputTokens"), output_tokens: count("outputTokens") };
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn usage(&self) -> Usage {
        self.usage
    }

    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done {
            return Ok(());
        }
        let Some(stop_reason) = self.stop_reason.as_deref() else {
            return Err(DecodeError::Protocol("bedrock_converse stream ended without a messageStop".into()));
        };
        self.done = true;
        let finish_reason: FinishReason = finish_reason(Some(stop_reason), !self.tool_blocks.is_empty());
        out.push(Delta::Done { finish_reason, usage: self.usage, model: None });
        Ok(())
    }
}

/// Values for tests: a tree read back as a `Value`.
#[cfg(test)]
fn body_of(http: &HttpRequest) -> Value {
    crate::value::from_tree(&llm_baton_wire::json::parse(&http.body).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{provider, test_endpoint};
    use llm_baton_wire::event_stream::encode;
    use serde_json::json;

    fn request(value: Value) -> ChatRequest {
        ChatRequest::from_value(&value).unwrap()
    }

    #[test]
    fn a_request_is_a_converse_body_at_the_models_path() {
        let r = request(json!({
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": "", "toolCalls": [{"id": "t1", "name": "weather", "arguments": "{\"city\":\"Oslo\"}"}]},
                {"role": "tool", "toolCallId": "t1", "content": "{\"c\":4}"},
                {"role": "user", "content": [{"type": "text", "text": "And?"}, {"type": "image", "data": "aGk=", "mediaType": "image/png"}]}
            ],
            "maxTokens": 100, "temperature": 0.5, "stop": ["X"],
            "tools": [{"name": "weather", "description": "d", "parameters": {"type": "object"}}],
            "toolChoice": "required"
        }));
        let endpoint = test_endpoint(
            "https://bedrock-runtime.us-east-1.amazonaws.com",
            "anthropic.claude-3-haiku-20240307-v1:0",
            Some("br-key"),
            &[],
        );
        let http = BedrockConverse::build_request(&endpoint, &r, true);
        assert_eq!(http.url, "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");
        assert!(http.headers.contains(&("authorization".into(), "Bearer br-key".into())));
        assert_eq!(
            body_of(&http),
            json!({
                "messages": [
                    {"role": "user", "content": [{"text": "Weather?"}]},
                    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Oslo"}}}]},
                    {"role": "user", "content": [
                        {"toolResult": {"toolUseId": "t1", "content": [{"json": {"c": 4}}]}},
                        {"text": "And?"},
                        {"image": {"format": "png", "source": {"bytes": "aGk="}}}
                    ]}
                ],
                "system": [{"text": "Be brief."}],
                "inferenceConfig": {"maxTokens": 100, "temperature": 0.5, "stopSequences": ["X"]},
                "toolConfig": {
                    "tools": [{"toolSpec": {"name": "weather", "description": "d", "inputSchema": {"json": {"type": "object"}}}}],
                    "toolChoice": {"any": {}}
                }
            })
        );
        let plain = BedrockConverse::build_request(
            &test_endpoint("http://h", "m", None, &[]),
            &request(json!({"messages": [{"role": "user", "content": "hi"}]})),
            false,
        );
        assert_eq!(plain.url, "http://h/model/m/converse");
        assert!(!plain.headers.iter().any(|(k, _)| k == "authorization"));
    }

    #[test]
    fn urls_and_unknown_media_are_not_carried() {
        let url = chat::Part::Image { source: Source::Url { url: "https://x/a.png".into(), media_type: None } };
        assert_eq!(uncarried(&url).unwrap().what, "an image by URL");
        let tiff = chat::Part::Image { source: Source::Data { data: "AA==".into(), media_type: "image/tiff".into() } };
        assert_eq!(uncarried(&tiff).unwrap().what, "an image of type image/tiff");
        let pdf = chat::Part::File {
            source: Source::Data { data: "AA==".into(), media_type: "application/pdf".into() },
            filename: Some("a.pdf".into()),
        };
        assert_eq!(uncarried(&pdf), None);
        assert_eq!(document_name(Some("report v2.pdf")), "report v2-pdf");
    }

    #[test]
    fn a_whole_answer_reads_text_tools_reasoning_and_usage() {
        let body = json!({
            "output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}},
                {"text": "Hi"},
                {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}}
            ]}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12},
            "metrics": {"latencyMs": 10}
        });
        let answer = BedrockConverse::decode_answer(body.to_string().as_bytes()).unwrap();
        assert_eq!((answer.text.as_str(), answer.reasoning.as_str()), ("Hi", "hmm"));
        assert_eq!(answer.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!((answer.usage.input_tokens, answer.usage.output_tokens), (Some(5), Some(7)));
        assert_eq!(answer.reasoning_parts[0].state, Some(ReasoningState::new(Opaque::Signature("sig".into()))));
        assert!(matches!(BedrockConverse::decode_answer(b"{}"), Err(DecodeError::Protocol(_))));
    }

    #[test]
    fn error_bodies_are_classified() {
        let said = |status, body: &str| BedrockConverse::error_body(status, body.as_bytes()).unwrap();
        let skew = said(
            403,
            r#"{"message":"Signature expired: 20250101T000000Z is now earlier than 20250101T000600Z (20250101T001100Z - 5 min.)"}"#,
        );
        assert_eq!(skew.class, Some(FailureClass::Auth));
        assert!(skew.message.starts_with("clock skew:"), "{}", skew.message);
        assert_eq!(
            said(503, r#"{"message":"Bedrock is unable to process your request."}"#).class,
            Some(FailureClass::Overloaded)
        );
        assert_eq!(said(429, r#"{"message":"Too many requests"}"#).class, Some(FailureClass::RateLimit));
        assert_eq!(
            said(400, r#"{"message":"Input is too long for requested model."}"#).class,
            Some(FailureClass::ContextLength)
        );
        let typed = said(400, r#"{"__type":"com.amazon.bedrock#ServiceQuotaExceededException","message":"quota"}"#);
        assert_eq!(
            (typed.code.as_deref(), typed.class),
            (Some("ServiceQuotaExceededException"), Some(FailureClass::Quota))
        );
        let quota = said(400, r#"{"message":"Your request exceeds the service quota for your account."}"#);
        assert_eq!(quota.class, Some(FailureClass::Quota));
        assert_eq!(BedrockConverse::error_body(500, b"not json"), None);
    }

    fn stream(messages: &[Vec<u8>]) -> (Vec<Delta>, Result<(), DecodeError>) {
        let mut decoder = StreamDecoder::default();
        let mut reader = llm_baton_wire::event_stream::EventStreamDecoder::new();
        let mut out = Vec::new();
        let mut result = Ok(());
        let bytes: Vec<u8> = messages.concat();
        reader
            .feed_each(&bytes, &mut |m| {
                if result.is_ok() {
                    result = decoder.on_event(&event_of(m), &mut out);
                }
            })
            .unwrap();
        if result.is_ok() {
            result = decoder.finish(&mut out);
        }
        (out, result)
    }

    fn ev(kind: &str, payload: Value) -> Vec<u8> {
        encode(
            &[(":event-type", kind), (":content-type", "application/json"), (":message-type", "event")],
            payload.to_string().as_bytes(),
        )
    }

    #[test]
    fn a_stream_reads_text_tool_calls_and_ends_with_its_usage() {
        let (out, result) = stream(&[
            ev("messageStart", json!({"role": "assistant", "p": "abc"})),
            ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hi"}})),
            ev("contentBlockStop", json!({"contentBlockIndex": 0})),
            ev(
                "contentBlockStart",
                json!({"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}}),
            ),
            ev("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"a\":1}"}}})),
            ev("contentBlockStop", json!({"contentBlockIndex": 1})),
            ev("messageStop", json!({"stopReason": "tool_use"})),
            ev(
                "metadata",
                json!({"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}, "metrics": {"latencyMs": 1}}),
            ),
        ]);
        assert_eq!(result, Ok(()));
        let usage = Usage { input_tokens: Some(3), output_tokens: Some(4) };
        assert_eq!(
            out,
            [
                Delta::Text { text: "Hi".into() },
                Delta::ToolCall { index: 0, id: Some("t1".into()), name: Some("f".into()), arguments: String::new() },
                Delta::ToolCall { index: 0, id: None, name: None, arguments: "{\"a\":1}".into() },
                Delta::Usage { usage },
                Delta::Done { finish_reason: FinishReason::ToolCalls, usage, model: None },
            ]
        );
    }

    #[test]
    fn a_stream_without_message_stop_or_with_an_exception_fails() {
        let (_, result) = stream(&[ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hi"}}))]);
        assert!(matches!(result, Err(DecodeError::Protocol(_))));
        let throttled = encode(
            &[
                (":exception-type", "throttlingException"),
                (":content-type", "application/json"),
                (":message-type", "exception"),
            ],
            br#"{"message":"Too many tokens, please wait before trying again."}"#,
        );
        let (out, result) =
            stream(&[ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "Hi"}})), throttled]);
        assert_eq!(out, [Delta::Text { text: "Hi".into() }]);
        assert_eq!(
            result,
            Err(provider(
                429,
                "Too many tokens, please wait before trying again.",
                Some("ThrottlingException"),
                Some(FailureClass::RateLimit)
            ))
        );
        let error =
            encode(&[(":message-type", "error"), (":error-code", "InternalFailure"), (":error-message", "boom")], b"");
        let (_, result) = stream(&[error]);
        assert_eq!(result, Err(provider(500, "InternalFailure: boom", Some("InternalServerException"), None)));
    }

    #[test]
    fn reasoning_streams_with_its_signature_and_goes_back_to_its_model() {
        let (out, result) = stream(&[
            ev("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hmm"}}})),
            ev(
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig"}}}),
            ),
            ev("messageStop", json!({"stopReason": "end_turn"})),
        ]);
        assert_eq!(result, Ok(()));
        assert_eq!(out[1], Delta::ReasoningState { state: ReasoningState::new(Opaque::Signature("sig".into())) });
        let mut state = ReasoningState::new(Opaque::Signature("sig".into()));
        state.issued_by(FORMAT, "m");
        let mut history = request(
            json!({"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}, {"role": "user", "content": "q2"}]}),
        );
        history.messages[1].reasoning =
            vec![ReasoningPart { text: "hmm".into(), kind: ReasoningKind::Summary, state: Some(state) }];
        history.reasoning = Some(chat::ReasoningRequest { effort: None, budget_tokens: Some(2000), summary: None });
        for (model, sent) in [("m-claude", false), ("m", true)] {
            let body =
                body_of(&BedrockConverse::build_request(&test_endpoint("http://h", model, None, &[]), &history, false));
            let first = &body["messages"][1]["content"][0];
            assert_eq!(first.get("reasoningContent").is_some(), sent, "{model}");
            assert_eq!(body.get("additionalModelRequestFields").is_some(), model.contains("claude"));
        }
    }
}
