//! OpenAI Chat Completions as a gateway client speaks it: `POST /v1/chat/completions`.
//!
//! Requests accept what the official SDK sends: `content` as a string, null or a list of parts
//! (`text`; in a user message also `image_url`, by URL or a `data:` URL, and `file` with its
//! `file_data`), `developer` as a system turn, `max_completion_tokens` as `max_tokens`, tools as
//! `{type: "function", function}`, `top_p`, `seed`, `tool_choice`, `parallel_tool_calls` and
//! `response_format`. The other fields (`logprobs`, `user`, `service_tier`…) go on unchanged to an
//! openai_chat member, and are dropped with a warning for a member of another format
//! (docs/parameters.md); what it cannot honour (`input_audio`, a stored `file_id`, `n` > 1) is
//! refused by name. A stream is chunks of `chat.completion.chunk`
//! (the first carries the role), a chunk with `finish_reason`, a usage-only chunk when the client
//! asked with `stream_options.include_usage`, then `data: [DONE]`.
//!
//! Reasoning goes out under both names compatible servers use, `reasoning_content` (DeepSeek's)
//! and `reasoning` (vLLM's, OpenRouter's), so a client reading either finds it. A Chat target's
//! reasoning comes back in the assistant message's `reasoning_content` (or `reasoning`), and the
//! first tool call's id names its issuer (text left out: the client holds it), so it goes back
//! to that target alone.

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use super::provider::write_tool_call;
use super::{wire_finish_reason, OpenaiChat};
use crate::chat::{
    Answer, ChatRequest, Delta, FinishReason, Logprobs, Message, Opaque, Part, ReasoningPart, ReasoningRequest,
    ResponseFormat, Role, Tool, ToolCall, ToolChoice, Usage,
};
use crate::format::client::field::{self, child};
use crate::format::client::state_id;
use crate::format::client::{
    media, sse, string_or_null, ClientCall, ClientDialect, GatewayError, Meta, PartOrigin, StreamEncoding,
};
use crate::format::Format;
use crate::value::{index_path, FieldError};

/// The request fields this dialect reads (maps into the request, or refuses); the others go
/// on unchanged to an openai_chat member ([`field::passthrough`]).
pub(crate) const READ: &[&str] = &[
    "model",
    "stream",
    "stream_options",
    "n",
    "messages",
    "tools",
    "max_completion_tokens",
    "max_tokens",
    "tool_choice",
    "temperature",
    "top_p",
    "seed",
    "stop",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
];

fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
    let o = field::object(body, "body")?;
    let model = field::string(o, "model", "", "the name of a route, e.g. \"chat\"")?.to_string();
    let stream = field::opt_bool(o, "stream", "")?;
    let include_usage = match field::opt(o, "stream_options") {
        None => false,
        Some(v) => field::opt_bool(field::object(v, "stream_options")?, "include_usage", "stream_options")?,
    };
    if let Some(n) = field::opt(o, "n") {
        if n.as_f64() != Some(1.0) {
            return Err(field::wrong("n", "1 (the gateway answers with one choice)", n));
        }
    }
    let list = match field::opt(o, "messages") {
        None => return Err(field::missing("messages", "a list of at least one message")),
        Some(v) => field::array(v, "messages", "a list of messages")?,
    };
    if list.is_empty() {
        return Err(FieldError::new("messages", "must hold at least one message (got [])"));
    }
    let messages =
        list.iter().enumerate().map(|(i, m)| message(m, &index_path("messages", i))).collect::<Result<_, _>>()?;
    // One message per client message, one part per element of a content list.
    let origins = list
        .iter()
        .enumerate()
        .map(|(i, m)| PartOrigin {
            path: format!("messages[{i}].content"),
            indices: m.get("content").and_then(Value::as_array).map(|parts| (0..parts.len()).collect()),
        })
        .collect();
    let tools = field::opt_list(o, "tools", "a list of tools", tool)?;
    let max_tokens = match field::opt_tokens(o, "max_completion_tokens", "")? {
        Some(n) => Some(n),
        None => field::opt_tokens(o, "max_tokens", "")?,
    };
    let tool_choice = match field::opt(o, "tool_choice") {
        None => None,
        Some(v) => Some(crate::format::client::check_tool_choice(tool_choice(v)?, &tools, "tool_choice")?),
    };
    let request = ChatRequest {
        messages,
        max_tokens,
        temperature: field::opt_temperature(o, "temperature", "")?,
        top_p: field::opt_top_p(o, "top_p", "")?,
        seed: field::opt_seed(o, "seed", "")?,
        stop: field::opt_stop(o, "stop", "")?,
        tools,
        tool_choice,
        parallel_tool_calls: field::opt_flag(o, "parallel_tool_calls", "")?,
        response_format: response_format(field::opt(o, "response_format"))?,
        reasoning: reasoning(o)?,
        passthrough: field::passthrough(o, READ, crate::format::Format::OpenaiChat.as_str()),
    };
    Ok(ClientCall { model, stream, include_usage, request, echo: Value::Null, origins })
}

/// `reasoning_effort`, as the request's `reasoning`.
fn reasoning(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, FieldError> {
    if field::opt(o, "reasoning_effort").is_none() {
        return Ok(None);
    }
    Ok(field::effort(o, "reasoning_effort", "")?.map(|effort| ReasoningRequest { effort, ..Default::default() }))
}

fn message(v: &Value, path: &str) -> Result<Message, FieldError> {
    let o = field::object(v, path)?;
    let role = match field::one_of(o, "role", path, &["system", "developer", "user", "assistant", "tool"])? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => Role::Tool,
    };
    let mut m = Message { content: content(o, role, path)?, ..Message::new(role, "") };
    if role == Role::Assistant {
        if let Some(calls) = field::opt(o, "tool_calls") {
            let p = child(path, "tool_calls");
            m.tool_calls = field::array(calls, &p, "a list of tool calls")?
                .iter()
                .enumerate()
                .map(|(i, c)| tool_call(c, &index_path(&p, i), &mut m.reasoning))
                .collect::<Result<_, _>>()?;
        }
        // A Chat target's reasoning: the id named its issuer, the client's field holds its text.
        if let Some(part) = m.reasoning.iter_mut().find(|p| p.state.as_ref().is_some_and(|s| s.opaque == Opaque::Plain))
        {
            let text = o.get("reasoning_content").or(o.get("reasoning")).and_then(Value::as_str);
            part.text = text.unwrap_or("").to_string();
        }
    }
    if role == Role::Tool {
        let id = field::string(o, "tool_call_id", path, "the id of the tool call this message answers")?;
        m.tool_call_id = Some(state_id::original_id(id));
    }
    Ok(m)
}

/// `content`: a string, null, or a list of parts.
fn content(o: &Map<String, Value>, role: Role, path: &str) -> Result<Vec<Part>, FieldError> {
    let p = child(path, "content");
    match field::opt(o, "content") {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(Message::new(role, s.clone()).content),
        Some(Value::Array(parts)) => {
            parts.iter().enumerate().map(|(i, v)| content_part(v, role, &index_path(&p, i))).collect()
        }
        Some(other) => Err(field::wrong(&p, "a string, null or a list of content parts", other)),
    }
}

/// One content part: `text` (`refusal` in an assistant's replayed turn), `image_url` or `file`.
fn content_part(v: &Value, role: Role, path: &str) -> Result<Part, FieldError> {
    const KINDS: &[&str] = &["text", "image_url", "file", "refusal"];
    let o = field::object(v, path)?;
    let kind = field::string(o, "type", path, "one of \"text\", \"image_url\", \"file\"")?;
    let part = match kind {
        "text" => Part::Text { text: field::string(o, "text", path, "the part's text")?.to_string() },
        "refusal" => Part::Text { text: field::string(o, "refusal", path, "the refusal's text")?.to_string() },
        "image_url" => {
            let ip = child(path, "image_url");
            let image = match field::opt(o, "image_url") {
                None => return Err(field::missing(&ip, "{url}")),
                Some(v) => field::object(v, &ip)?,
            };
            let url = field::string(image, "url", &ip, "the image's URL or a data: URL")?;
            Part::Image { source: media::from_url(url, None, &child(&ip, "url"))? }
        }
        "file" => {
            let fp = child(path, "file");
            let file = match field::opt(o, "file") {
                None => return Err(field::missing(&fp, "{file_data, filename}")),
                Some(v) => field::object(v, &fp)?,
            };
            if field::opt(file, "file_id").is_some() && field::opt(file, "file_data").is_none() {
                return Err(media::stored_file(&child(&fp, "file_id"), "send the file's bytes as file_data instead"));
            }
            let filename = field::opt_string(file, "filename", &fp)?;
            let data = field::string(file, "file_data", &fp, "the file as a data: URL")?;
            let dp = child(&fp, "file_data");
            if data.is_empty() {
                return Err(field::wrong(&dp, "the file as a data: URL", &Value::from(data)));
            }
            // A bare base64 string: the media type from the file's name.
            let source = if data.starts_with("data:") {
                media::from_url(data, None, &dp)?
            } else {
                match filename.and_then(media::media_type_of_name) {
                    Some(media_type) => media::from_data(data, media_type, &fp)?,
                    None => {
                        return Err(FieldError::new(
                            dp,
                            "must be a data: URL (data:application/pdf;base64,<data>), or base64 with a \
                             filename ending in .pdf or .txt",
                        ))
                    }
                }
            };
            Part::File { source, filename: filename.map(str::to_string) }
        }
        "input_audio" => {
            return Err(FieldError::new(
                path,
                "is input_audio, which the gateway does not forward; send text, image_url or file parts",
            ))
        }
        other => {
            let listed: Vec<String> = KINDS.iter().map(|k| format!("\"{k}\"")).collect();
            return Err(FieldError::new(
                format!("{path}.type"),
                format!("must be one of {} (got {})", listed.join(", "), other.to_json()),
            ));
        }
    };
    media::check_part(part, role, path)
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{type: "function", function: {name}}`.
fn tool_choice(v: &Value) -> Result<ToolChoice, FieldError> {
    const EXPECTED: &str =
        "\"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";
    match v {
        Value::String(s) => {
            crate::format::client::tool_choice_word(s).ok_or_else(|| field::wrong("tool_choice", EXPECTED, v))
        }
        Value::Object(o) => {
            field::one_of(o, "type", "tool_choice", &["function"])?;
            let f = match field::opt(o, "function") {
                None => return Err(field::missing("tool_choice.function", "{name}")),
                Some(f) => field::object(f, "tool_choice.function")?,
            };
            Ok(ToolChoice::Tool {
                name: field::string(f, "name", "tool_choice.function", "the name of one of the tools")?.to_string(),
            })
        }
        other => Err(field::wrong("tool_choice", EXPECTED, other)),
    }
}

/// `response_format`: `{type: "text"}` (none), `{type: "json_object"}`, or `{type:
/// "json_schema", json_schema: {name, schema, description?, strict?}}`.
fn response_format(v: Option<&Value>) -> Result<Option<ResponseFormat>, FieldError> {
    let Some(v) = v else { return Ok(None) };
    let o = field::object(v, "response_format")?;
    match field::one_of(o, "type", "response_format", &["text", "json_object", "json_schema"])? {
        "text" => Ok(None),
        "json_object" => Ok(Some(ResponseFormat::Json { schema: None, name: None, description: None, strict: None })),
        _ => {
            let sp = "response_format.json_schema";
            let s = match field::opt(o, "json_schema") {
                None => return Err(field::missing(sp, "{name, schema, strict?}")),
                Some(s) => field::object(s, sp)?,
            };
            crate::format::client::json_schema_format(s, sp).map(Some)
        }
    }
}

/// A replayed tool call, with the state its id carries; the turn's reasoning, which its first
/// call's id carries, goes to `reasoning`.
fn tool_call(v: &Value, path: &str, reasoning: &mut Vec<ReasoningPart>) -> Result<ToolCall, FieldError> {
    let o = field::object(v, path)?;
    let carried = state_id::decode(field::string(o, "id", path, "the tool call's id")?);
    reasoning.extend(carried.reasoning);
    let fp = child(path, "function");
    let f = match field::opt(o, "function") {
        None => return Err(field::missing(&fp, "{name, arguments}")),
        Some(f) => field::object(f, &fp)?,
    };
    let name = field::string(f, "name", &fp, "the function's name")?.to_string();
    let arguments = field::opt_string(f, "arguments", &fp)?.unwrap_or("").to_string();
    Ok(ToolCall { id: carried.id, name, arguments, state: carried.state })
}

fn tool(v: &Value, path: &str) -> Result<Tool, FieldError> {
    let o = field::object(v, path)?;
    field::one_of(o, "type", path, &["function"])?;
    let fp = child(path, "function");
    let f = match field::opt(o, "function") {
        None => return Err(field::missing(&fp, "{name, description?, parameters?}")),
        Some(f) => field::object(f, &fp)?,
    };
    Ok(Tool {
        name: field::string(f, "name", &fp, "the function's name")?.to_string(),
        description: field::opt_string(f, "description", &fp)?.map(str::to_string),
        parameters: schema(field::opt(f, "parameters"), &child(&fp, "parameters"))?,
    })
}

/// A tool's JSON Schema; omitted means an object with no properties.
pub(crate) fn schema(v: Option<&Value>, path: &str) -> Result<Value, FieldError> {
    match v {
        None => {
            let mut schema = Map::new();
            schema.insert("type".into(), Value::from("object"));
            schema.insert("properties".into(), Value::Object(Map::new()));
            Ok(Value::Object(schema))
        }
        Some(s @ Value::Object(_)) => Ok(s.clone()),
        Some(other) => Err(field::wrong(path, "a JSON Schema object", other)),
    }
}

/// `"usage":{…}` with the three counts.
fn write_usage(w: &mut JsonWriter, u: Usage) {
    let (input, output) = crate::format::client::token_counts(u);
    w.key("usage");
    w.begin_object();
    w.field("prompt_tokens", &input);
    w.field("completion_tokens", &output);
    w.field("total_tokens", &input.saturating_add(output));
    w.end_object();
}

/// A tool call's id as given, or one made up when the provider gave none (Gemini).
fn call_id(meta: &Meta, index: u32, id: &str) -> String {
    if id.is_empty() {
        format!("call_{}_{index}", meta.id.trim_start_matches("chatcmpl-"))
    } else {
        id.to_string()
    }
}

/// Opens a completion or a chunk object with its first fields: `id`, `object`, `created`, `model`.
fn begin_completion(w: &mut JsonWriter, meta: &Meta, object: &str) {
    w.begin_object();
    w.field("id", &meta.id);
    w.field("object", object);
    w.field("created", &meta.created);
    w.field("model", &meta.model);
}

/// A whole answer, keys in the API reference's order: `id`, `object`, `created`, `model`,
/// `choices`, `usage`.
fn answer_body(meta: &Meta, answer: &Answer) -> String {
    let mut w = JsonWriter::new();
    begin_completion(&mut w, meta, "chat.completion");
    w.key("choices");
    w.begin_array();
    w.begin_object();
    w.field("index", &0u32);
    w.key("message");
    w.begin_object();
    w.field("role", "assistant");
    let calls_only = answer.text.is_empty() && !answer.tool_calls.is_empty();
    string_or_null(&mut w, "content", (!calls_only).then_some(answer.text.as_str()));
    w.key("refusal");
    w.null();
    w.text_field("reasoning", &answer.reasoning);
    w.text_field("reasoning_content", &answer.reasoning);
    if !answer.tool_calls.is_empty() {
        w.key("tool_calls");
        w.begin_array();
        for (i, c) in answer.tool_calls.iter().enumerate() {
            let reasoning = if i == 0 { carried(&answer.reasoning_parts) } else { Vec::new() };
            let id = state_id::encode(&call_id(meta, i as u32, &c.id), c.state.as_ref(), &reasoning);
            write_tool_call(&mut w, &id, &c.name, &c.arguments);
        }
        w.end_array();
    }
    w.end_object();
    write_logprobs(&mut w, answer.logprobs.as_ref().map(|l| &l.raw).filter(|_| ours(answer.logprobs.as_ref())));
    w.field("finish_reason", wire_finish_reason(&answer.finish_reason));
    w.end_object();
    w.end_array();
    write_usage(&mut w, answer.usage);
    w.end_object();
    w.finish()
}

/// The reasoning a turn's first call id carries: a Chat target's without its text, which the
/// client has as `reasoning_content` and sends back there.
fn carried(parts: &[ReasoningPart]) -> Vec<ReasoningPart> {
    let text_in_id = |p: &ReasoningPart| p.state.as_ref().is_some_and(|s| s.opaque != Opaque::Plain);
    parts
        .iter()
        .map(|p| ReasoningPart {
            text: if text_in_id(p) { p.text.clone() } else { String::new() },
            kind: p.kind,
            state: p.state.clone(),
        })
        .collect()
}

/// Whether `logprobs` are this format's, which a client of it reads as they came.
fn ours(logprobs: Option<&Logprobs>) -> bool {
    logprobs.is_some_and(|l| l.format == Format::OpenaiChat.as_str())
}

/// A choice's `"logprobs"`: the provider's, or null.
fn write_logprobs(w: &mut JsonWriter, logprobs: Option<&Value>) {
    w.key("logprobs");
    match logprobs {
        Some(raw) => w.value(raw),
        None => w.null(),
    }
}

impl ClientDialect for OpenaiChat {
    type StreamEncoder = StreamEncoder;

    fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
        parse_request(body)
    }

    /// The error body, `{"error": {…}}`.
    fn write_error(error: &GatewayError, w: &mut JsonWriter) {
        w.begin_object();
        w.key("error");
        write_error_object(error, w);
        w.end_object();
    }

    fn answer_body(meta: &Meta, answer: &Answer) -> String {
        answer_body(meta, answer)
    }

    fn stream_encoder(meta: Meta, include_usage: bool) -> StreamEncoder {
        StreamEncoder {
            meta,
            include_usage,
            started: false,
            opened_calls: Vec::new(),
            reasoning: Vec::new(),
            opening: None,
            logprobs: None,
        }
    }
}

#[derive(Debug)]
pub struct StreamEncoder {
    meta: Meta,
    include_usage: bool,
    started: bool,
    /// Tool-call indices whose opening fragment (id, name) was sent or is held in `opening`.
    opened_calls: Vec<u32>,
    /// The signed reasoning so far, which the first call's id carries.
    reasoning: Vec<ReasoningPart>,
    /// A call's opening fragment, held until the delta after it: a call's state follows the
    /// call (Gemini's), and its id carries it.
    opening: Option<(ToolCall, u32)>,
    /// The logprobs of the delta that comes next, which its chunk carries (as the provider's
    /// chunk did).
    logprobs: Option<Value>,
}

impl StreamEncoder {
    /// A chunk of one choice, whose delta's fields `delta` writes.
    fn chunk(&mut self, out: &mut String, delta: &dyn Fn(&mut JsonWriter), finish: Option<&str>) {
        let logprobs = self.logprobs.take();
        sse(out, None, &|w| {
            begin_completion(w, &self.meta, "chat.completion.chunk");
            w.key("choices");
            w.begin_array();
            w.begin_object();
            w.field("index", &0u32);
            w.key("delta");
            w.begin_object();
            delta(w);
            w.end_object();
            write_logprobs(w, logprobs.as_ref());
            string_or_null(w, "finish_reason", finish);
            w.end_object();
            w.end_array();
            if self.include_usage {
                w.key("usage");
                w.null();
            }
            w.end_object();
        });
    }

    /// A `tool_calls` chunk: one fragment of the call at `index`; its opening one (`id` given)
    /// also names the call.
    fn call_chunk(&mut self, out: &mut String, index: u32, id: Option<&str>, name: &str, arguments: &str) {
        let call = |w: &mut JsonWriter| {
            w.key("tool_calls");
            w.begin_array();
            w.begin_object();
            w.field("index", &index);
            if let Some(id) = id {
                w.field("id", id);
                w.field("type", "function");
            }
            w.key("function");
            w.begin_object();
            if id.is_some() {
                w.field("name", name);
            }
            w.field("arguments", arguments);
            w.end_object();
            w.end_object();
            w.end_array();
        };
        self.chunk(out, &call, None);
    }

    /// Sends the held opening fragment, its id carrying the call's state (and, for the first
    /// call, the reasoning before it).
    fn send_opening(&mut self, out: &mut String) {
        let Some((call, index)) = self.opening.take() else { return };
        let reasoning = if self.opened_calls.first() == Some(&index) {
            carried(&std::mem::take(&mut self.reasoning))
        } else {
            Vec::new()
        };
        let id = state_id::encode(&call.id, call.state.as_ref(), &reasoning);
        self.call_chunk(out, index, Some(&id), &call.name, &call.arguments);
    }

    /// The first chunk carries the role, as OpenAI's do.
    fn start(&mut self, out: &mut String) {
        if !self.started {
            self.started = true;
            self.chunk(
                out,
                &|w| {
                    w.field("role", "assistant");
                    w.field("content", "");
                },
                None,
            );
        }
    }
}

impl StreamEncoding for StreamEncoder {
    fn finish(&mut self, finish: &FinishReason, u: Usage, out: &mut String) {
        self.start(out);
        self.send_opening(out);
        self.chunk(out, &|_| {}, Some(wire_finish_reason(finish)));
        if self.include_usage {
            sse(out, None, &|w| {
                begin_completion(w, &self.meta, "chat.completion.chunk");
                w.key("choices");
                w.begin_array();
                w.end_array();
                write_usage(w, u);
                w.end_object();
            });
        }
        out.push_str("data: [DONE]\n\n");
    }

    /// An error chunk (the SDK throws on a chunk with `error`), and no `[DONE]`.
    fn fail(&mut self, error: &GatewayError, out: &mut String) {
        self.send_opening(out);
        sse(out, None, &|w| OpenaiChat::write_error(error, w));
    }

    fn delta(&mut self, delta: &Delta, out: &mut String) {
        self.start(out);
        if let Delta::ToolCallState { index, state } = delta {
            if let Some((call, _)) = self.opening.as_mut().filter(|(_, held)| held == index) {
                call.state = Some(state.clone());
            }
            return;
        }
        self.send_opening(out);
        match delta {
            Delta::Text { text } => self.chunk(out, &|w| w.field("content", text), None),
            Delta::Reasoning { text, kind } => {
                ReasoningPart::push_text(&mut self.reasoning, *kind, text);
                let both = |w: &mut JsonWriter| {
                    w.field("reasoning", text);
                    w.field("reasoning_content", text);
                };
                self.chunk(out, &both, None)
            }
            Delta::ReasoningState { state } => ReasoningPart::push_state(&mut self.reasoning, state.clone()),
            Delta::Logprobs { logprobs } if ours(Some(logprobs)) => {
                // Two in a row: the first goes in a chunk of its own.
                if self.logprobs.is_some() {
                    self.chunk(out, &|_| {}, None);
                }
                self.logprobs = Some(logprobs.raw.clone());
            }
            Delta::ToolCall { index, id, name, arguments } if !self.opened_calls.contains(index) => {
                self.opened_calls.push(*index);
                let id = call_id(&self.meta, *index, id.as_deref().unwrap_or(""));
                let name = name.clone().unwrap_or_default();
                self.opening = Some((ToolCall { id, name, arguments: arguments.clone(), state: None }, *index));
            }
            Delta::ToolCall { index, arguments, .. } => self.call_chunk(out, *index, None, "", arguments),
            Delta::Done { finish_reason, usage, .. } => self.finish(finish_reason, *usage, out),
            // The engine never delivers a skipped frame (it becomes a warning event) nor a usage
            // report (it stays on the attempt's leg); a call's state is taken above.
            // Another format's logprobs have no place here.
            Delta::Skipped { .. }
            | Delta::Usage { .. }
            | Delta::ToolCallState { .. }
            | Delta::Logprobs { .. }
            | Delta::ContentFilter { .. } => {}
        }
    }

    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
}

/// OpenAI's error object, `{"message","type","param","code"}` in the API reference's order
/// (Responses' error event nests it too).
pub(crate) fn write_error_object(error: &GatewayError, w: &mut JsonWriter) {
    w.begin_object();
    w.field("message", &error.message);
    w.field("type", super::error_type(error.class, error.kind));
    w.key("param");
    w.null();
    string_or_null(w, "code", error.code);
    w.end_object();
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::ReasoningKind;
    use crate::chat::Source;
    use crate::format::client::{parse_request as parse, ClientFormat};

    fn meta() -> Meta {
        Meta { id: "chatcmpl-1".into(), created: 9, completed: None, model: "m".into(), echo: Value::Null }
    }

    fn err(body: Value) -> String {
        parse(ClientFormat::OpenaiChat, &body.to_string()).unwrap_err().message
    }

    #[test]
    fn reasoning_effort_is_the_requests_reasoning() {
        let read = |fields: Value| {
            let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
            body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            parse(ClientFormat::OpenaiChat, &body.to_string()).map(|c| c.request.reasoning).map_err(|e| e.message)
        };
        let low = ReasoningRequest { effort: Some(crate::chat::Effort::Low), ..Default::default() };
        assert_eq!(read(json!({"reasoning_effort": "low"})), Ok(Some(low)));
        assert_eq!(read(json!({"reasoning_effort": "none"})), Ok(None));
        assert_eq!(read(json!({})), Ok(None));
        let wrong = read(json!({"reasoning_effort": "max"})).unwrap_err();
        assert!(wrong.starts_with(r#"reasoning_effort must be one of "none", "minimal""#), "{wrong}");
    }

    #[test]
    fn parses_what_the_sdk_sends() {
        let body = json!({
            "model": "chat", "stream": true, "stream_options": {"include_usage": true},
            "max_completion_tokens": 64, "temperature": 0.5, "stop": "END", "top_p": 1, "user": "u",
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "42"},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        });
        let call = parse(ClientFormat::OpenaiChat, &body.to_string()).unwrap();
        assert_eq!((call.model.as_str(), call.stream, call.include_usage), ("chat", true, true));
        let r = &call.request;
        assert_eq!((r.max_tokens, r.temperature, r.stop.clone()), (Some(64), Some(0.5), vec!["END".to_string()]));
        assert_eq!(r.messages[0], Message::new(Role::System, "be brief"));
        assert_eq!(r.messages[1].text(), "ab");
        assert_eq!(
            r.messages[2].tool_calls,
            vec![ToolCall { id: "call_1".into(), name: "f".into(), arguments: "{}".into(), state: None }]
        );
        assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(r.tools[0].name, "f");
    }

    #[test]
    fn names_the_field_in_400s() {
        let user = json!({"role": "user", "content": "hi"});
        assert_eq!(err(json!({"messages": [user]})), "model is missing; give the name of a route, e.g. \"chat\"");
        assert_eq!(
            err(json!({"model": 3, "messages": [user]})),
            "model must be the name of a route, e.g. \"chat\" (got 3)"
        );
        assert_eq!(err(json!({"model": "m"})), "messages is missing; give a list of at least one message");
        assert_eq!(err(json!({"model": "m", "messages": []})), "messages must hold at least one message (got [])");
        assert_eq!(
            err(json!({"model": "m", "messages": [user, user, {"role": "robot", "content": "x"}]})),
            "messages[2].role must be one of \"system\", \"developer\", \"user\", \"assistant\", \"tool\" (got \"robot\")"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]})),
            "messages[0].tool_call_id is missing; give the id of the tool call this message answers"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "max_tokens": 0})),
            "max_tokens must be a positive whole number of tokens (got 0)"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "stream": "yes"})),
            "stream must be true or false (got \"yes\")"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "tools": [{"type": "function"}]})),
            "tools[0].function is missing; give {name, description?, parameters?}"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "n": 2})),
            "n must be 1 (the gateway answers with one choice) (got 2)"
        );
    }

    fn image(url: &str) -> Value {
        json!({"type": "image_url", "image_url": {"url": url, "detail": "low"}})
    }

    fn data(data: &str, media_type: &str) -> Source {
        Source::Data { data: data.into(), media_type: media_type.into() }
    }

    #[test]
    fn reads_content_parts() {
        let text = |t: &str| Part::Text { text: t.into() };
        let cases = [
            (
                "text parts",
                json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
                vec![text("a"), text("b")],
            ),
            (
                "an image by URL, then text",
                json!([image("https://x.example/cat.png"), {"type": "text", "text": "what is this?"}]),
                vec![
                    Part::Image { source: Source::Url { url: "https://x.example/cat.png".into(), media_type: None } },
                    text("what is this?"),
                ],
            ),
            (
                "an image as a data: URL",
                json!([image("data:image/PNG;base64,iVBORw0K")]),
                vec![Part::Image { source: data("iVBORw0K", "image/png") }],
            ),
            (
                "a file as a data: URL",
                json!([{"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}}]),
                vec![Part::File { source: data("JVBERi0x", "application/pdf"), filename: Some("a.pdf".into()) }],
            ),
            (
                "a file as bare base64, typed by its name",
                json!([{"type": "file", "file": {"filename": "notes.txt", "file_data": "aGk="}}]),
                vec![Part::File { source: data("aGk=", "text/plain"), filename: Some("notes.txt".into()) }],
            ),
        ];
        for (case, content, expected) in cases {
            let body = json!({"model": "m", "messages": [{"role": "user", "content": content}]});
            let call = parse(ClientFormat::OpenaiChat, &body.to_string()).unwrap();
            assert_eq!(call.request.messages[0].content, expected, "{case}");
        }
        let replayed = json!({"model": "m", "messages": [{"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}]});
        let call = parse(ClientFormat::OpenaiChat, &replayed.to_string()).unwrap();
        assert_eq!(call.request.messages[0], Message::new(Role::Assistant, "No."));
    }

    #[test]
    fn reads_sampling_tool_and_output_parameters() {
        let tools = json!([{"type": "function", "function": {"name": "f"}}]);
        let json_schema =
            json!({"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}, "strict": true}});
        let cases = [
            (json!({"top_p": 0.5, "seed": 42}), (Some(0.5), Some(42), None, None, None)),
            (json!({"tool_choice": "auto", "tools": tools}), (None, None, Some(ToolChoice::Auto), None, None)),
            (json!({"tool_choice": "none"}), (None, None, Some(ToolChoice::None), None, None)),
            (
                json!({"tool_choice": "required", "tools": tools, "parallel_tool_calls": false}),
                (None, None, Some(ToolChoice::Required), Some(false), None),
            ),
            (
                json!({"tool_choice": {"type": "function", "function": {"name": "f"}}, "tools": tools}),
                (None, None, Some(ToolChoice::Tool { name: "f".into() }), None, None),
            ),
            (json!({"response_format": {"type": "text"}}), (None, None, None, None, None)),
            (
                json!({"response_format": {"type": "json_object"}}),
                (
                    None,
                    None,
                    None,
                    None,
                    Some(ResponseFormat::Json { schema: None, name: None, description: None, strict: None }),
                ),
            ),
            (
                json!({"response_format": json_schema}),
                (
                    None,
                    None,
                    None,
                    None,
                    Some(ResponseFormat::Json {
                        schema: Some(json!({"type": "object"})),
                        name: Some("a".into()),
                        description: None,
                        strict: Some(true),
                    }),
                ),
            ),
        ];
        for (fields, expected) in cases {
            let mut body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
            body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            let r = parse(ClientFormat::OpenaiChat, &body.to_string()).unwrap().request;
            assert_eq!(
                (r.top_p, r.seed, r.tool_choice, r.parallel_tool_calls, r.response_format),
                expected,
                "{fields}"
            );
        }
    }

    #[test]
    fn names_the_part_or_parameter_in_400s() {
        let with = |content: Value| json!({"model": "m", "messages": [{"role": "user", "content": content}]});
        let ask = |fields: Value| {
            let mut body = with(json!("hi"));
            body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            body
        };
        let cases = [
            (
                with(json!([{"type": "text", "text": "hi"}, {"type": "input_audio", "input_audio": {"data": "x", "format": "wav"}}])),
                "messages[0].content[1] is input_audio, which the gateway does not forward; send text, image_url or \
                 file parts",
            ),
            (with(json!([{"type": "image_url"}])), "messages[0].content[0].image_url is missing; give {url}"),
            (
                with(json!([image("data:image/png,iVBO")])),
                "messages[0].content[0].image_url.url is a data: URL but not a base64 one with a media type; give it \
                 as data:<media type>;base64,<data>",
            ),
            (
                with(json!([image("data:application/pdf;base64,JVBE")])),
                "messages[0].content[0] is an image of media type \"application/pdf\"; send an image (image/png, \
                 image/jpeg, image/gif, image/webp) or send the file as a file or document",
            ),
            (
                with(json!([{"type": "file", "file": {"file_id": "file-abc"}}])),
                "messages[0].content[0].file.file_id names a file stored at a provider, which the gateway cannot \
                 forward to another; send the file's bytes as file_data instead",
            ),
            (
                with(json!([{"type": "file", "file": {"file_data": "JVBERi0x"}}])),
                "messages[0].content[0].file.file_data must be a data: URL (data:application/pdf;base64,<data>), or \
                 base64 with a filename ending in .pdf or .txt",
            ),
            (
                with(json!([{"type": "video", "video": {}}])),
                "messages[0].content[0].type must be one of \"text\", \"image_url\", \"file\", \"refusal\" (got \"video\")",
            ),
            (
                json!({"model": "m", "messages": [{"role": "system", "content": [image("https://x.example/a.png")]}]}),
                "messages[0].content[0] is an image, but only user messages carry images and files (this is a \
                 system message)",
            ),
            (ask(json!({"top_p": 1.5})), "top_p must be a number from 0 to 1 (got 1.5)"),
            (ask(json!({"seed": 1.5})), "seed must be a whole number (a JavaScript safe integer) (got 1.5)"),
            (
                ask(json!({"tool_choice": "any"})),
                "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": \
                 {\"name\": ...}} (got \"any\")",
            ),
            (
                ask(json!({"tool_choice": "required"})),
                "tool_choice requires a tool call but tools is empty; give the tools the model must choose from",
            ),
            (
                ask(json!({"tool_choice": {"type": "function", "function": {"name": "g"}}, "tools": [{"type": "function", "function": {"name": "f"}}]})),
                "tool_choice names the tool \"g\", which is not one of the tools (tools: [\"f\"])",
            ),
            (ask(json!({"parallel_tool_calls": 1})), "parallel_tool_calls must be true or false (got 1)"),
            (
                ask(json!({"response_format": {"type": "json_schema", "json_schema": {"name": "a"}}})),
                "response_format.json_schema.schema is missing; give a JSON Schema object",
            ),
            (
                ask(json!({"response_format": {"type": "yaml"}})),
                "response_format.type must be one of \"text\", \"json_object\", \"json_schema\" (got \"yaml\")",
            ),
        ];
        for (body, message) in cases {
            assert_eq!(err(body.clone()), message, "for {body}");
        }
    }

    #[test]
    fn whole_answer() {
        let answer = Answer {
            logprobs: None,
            content_filter: None,
            text: String::new(),
            reasoning: String::new(),
            tool_calls: vec![ToolCall {
                id: String::new(),
                name: "f".into(),
                arguments: "{\"a\":1}".into(),
                state: None,
            }],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage { input_tokens: Some(3), output_tokens: Some(4) },
            model: None,
            reasoning_parts: Vec::new(),
        };
        let body: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "call_1_0");
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"], json!({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}));
    }

    fn signed(format: &str, model: &str, opaque: crate::chat::Opaque) -> Option<crate::chat::ReasoningState> {
        Some(crate::chat::ReasoningState { format: format.into(), model: model.into(), opaque })
    }

    /// The client's next request, replaying `message` (an answer's) and answering its calls.
    fn replay(message: &Value) -> ChatRequest {
        let mut messages = vec![json!({"role": "user", "content": "q"}), message.clone()];
        for call in message["tool_calls"].as_array().unwrap() {
            messages.push(json!({"role": "tool", "tool_call_id": call["id"], "content": "sunny"}));
        }
        let body = json!({"model": "m", "messages": messages});
        parse(ClientFormat::OpenaiChat, &body.to_string()).unwrap().request
    }

    /// A Gemini call's signature and Anthropic's signed thinking ride in the calls' ids, whole
    /// and streamed, and come back as the history's state under the provider's own ids.
    #[test]
    fn tool_call_ids_carry_the_state_to_the_client_and_back() {
        use crate::chat::Opaque;
        let thinking = ReasoningPart {
            text: "hmm".into(),
            kind: ReasoningKind::Summary,
            state: signed("anthropic_messages", "claude", Opaque::Signature("sig.a".into())),
        };
        let gemini = signed("gemini", "gemini-3-pro-preview", Opaque::Signature("sig.g".into()));
        let call = |id: &str, state| ToolCall { id: id.into(), name: "f".into(), arguments: "{}".into(), state };
        let answer = Answer {
            logprobs: None,
            content_filter: None,
            text: String::new(),
            reasoning: "hmm".into(),
            reasoning_parts: vec![thinking.clone()],
            tool_calls: vec![call("", gemini.clone()), call("toolu_2", None)],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
            model: None,
        };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        let whole = whole["choices"][0]["message"].clone();

        let mut e = OpenaiChat::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Reasoning { kind: ReasoningKind::Summary, text: "hmm".into() }, &mut out);
        e.delta(&Delta::ReasoningState { state: thinking.state.clone().unwrap() }, &mut out);
        e.delta(&Delta::ToolCall { index: 0, id: None, name: Some("f".into()), arguments: "{}".into() }, &mut out);
        e.delta(&Delta::ToolCallState { index: 0, state: gemini.clone().unwrap() }, &mut out);
        e.delta(
            &Delta::ToolCall { index: 1, id: Some("toolu_2".into()), name: Some("f".into()), arguments: String::new() },
            &mut out,
        );
        e.delta(&Delta::ToolCall { index: 1, id: None, name: None, arguments: "{}".into() }, &mut out);
        e.finish(&FinishReason::ToolCalls, Usage::default(), &mut out);
        let ids: Vec<Value> = frames(&out)
            .iter()
            .filter_map(|f| serde_json::from_str::<Value>(f).ok())
            .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0].get("id").cloned())
            .collect();
        assert_eq!(
            ids,
            [whole["tool_calls"][0]["id"].clone(), json!("toolu_2")],
            "the stream's ids are the whole answer's"
        );

        let request = replay(&whole);
        assert_eq!(request.messages[1].reasoning, [thinking]);
        assert_eq!(request.messages[1].tool_calls, [call("call_1_0", gemini), call("toolu_2", None)]);
        let answered: Vec<_> = request.messages[2..].iter().map(|m| m.tool_call_id.clone().unwrap()).collect();
        assert_eq!(answered, ["call_1_0", "toolu_2"]);
    }

    /// A Chat target's reasoning reaches the client as both `reasoning` and `reasoning_content`,
    /// whole and streamed; the first call's id names its issuer without the text, and the
    /// client's `reasoning_content` (or `reasoning`) is the text that goes back.
    #[test]
    fn a_chat_targets_reasoning_goes_out_under_both_names_and_comes_back_to_its_issuer() {
        use crate::chat::Opaque;
        let plain = signed("openai_chat", "deepseek-reasoner", Opaque::Plain);
        let think = "Paris first. ".repeat(400);
        let answer = Answer {
            text: String::new(),
            reasoning: think.clone(),
            reasoning_parts: vec![ReasoningPart {
                text: think.clone(),
                kind: ReasoningKind::Raw,
                state: plain.clone(),
            }],
            tool_calls: vec![ToolCall { id: "call_9".into(), name: "f".into(), arguments: "{}".into(), state: None }],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
            model: None,
            logprobs: None,
            content_filter: None,
        };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        let whole = whole["choices"][0]["message"].clone();
        assert_eq!((&whole["reasoning"], &whole["reasoning_content"]), (&json!(think), &json!(think)));
        let id = whole["tool_calls"][0]["id"].as_str().unwrap();
        assert!(id.starts_with("bt1_") && id.len() < 200, "the id names the issuer, not the text: {id}");

        let mut e = OpenaiChat::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Reasoning { text: think.clone(), kind: ReasoningKind::Raw }, &mut out);
        e.delta(&Delta::ReasoningState { state: plain.clone().unwrap() }, &mut out);
        e.delta(
            &Delta::ToolCall { index: 0, id: Some("call_9".into()), name: Some("f".into()), arguments: "{}".into() },
            &mut out,
        );
        e.finish(&FinishReason::ToolCalls, Usage::default(), &mut out);
        let chunks: Vec<Value> = frames(&out).iter().filter_map(|f| serde_json::from_str(f).ok()).collect();
        let delta = &chunks[1]["choices"][0]["delta"];
        assert_eq!((&delta["reasoning"], &delta["reasoning_content"]), (&json!(think), &json!(think)));
        assert_eq!(chunks[2]["choices"][0]["delta"]["tool_calls"][0]["id"], whole["tool_calls"][0]["id"]);

        // Back: the client's own field is the text, under either name; without one, the
        // issuer still gets its turn's reasoning, empty.
        let sent_back = [("reasoning_content", "edited"), ("reasoning", "from reasoning"), ("neither", "")];
        for (field, text) in sent_back {
            let mut message = whole.clone();
            let o = message.as_object_mut().unwrap();
            o.remove("reasoning");
            o.remove("reasoning_content");
            if field != "neither" {
                o.insert(field.into(), json!(text));
            }
            let request = replay(&message);
            assert_eq!(
                request.messages[1].reasoning,
                [ReasoningPart { text: text.into(), kind: ReasoningKind::Raw, state: plain.clone() }]
            );
            assert_eq!(request.messages[1].tool_calls[0].id, "call_9");
        }
        // Reasoning text with no id naming its issuer is from elsewhere: not kept.
        let request = replay(&json!({"role": "assistant", "content": null, "reasoning_content": "r",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}));
        assert_eq!(request.messages[1].reasoning, []);
    }

    fn frames(out: &str) -> Vec<String> {
        out.split("\n\n").filter(|f| !f.is_empty()).map(|f| f.trim_start_matches("data: ").to_string()).collect()
    }

    #[test]
    fn stream_with_role_tool_calls_usage_and_done() {
        let mut e = OpenaiChat::stream_encoder(meta(), true);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.delta(
            &Delta::ToolCall { index: 0, id: Some("toolu_1".into()), name: Some("f".into()), arguments: String::new() },
            &mut out,
        );
        e.delta(&Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() }, &mut out);
        e.finish(&FinishReason::ToolCalls, Usage { input_tokens: Some(1), output_tokens: Some(2) }, &mut out);
        let f = frames(&out);
        let chunk = |i: usize| serde_json::from_str::<Value>(&f[i]).unwrap();
        assert_eq!(chunk(0)["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
        assert_eq!(chunk(1)["choices"][0]["delta"], json!({"content": "Hi"}));
        assert_eq!(
            chunk(2)["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": ""}})
        );
        assert_eq!(
            chunk(3)["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "function": {"arguments": "{}"}})
        );
        assert_eq!(chunk(4)["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chunk(5)["choices"], json!([]));
        assert_eq!(chunk(5)["usage"]["total_tokens"], 3);
        assert_eq!(f[6], "[DONE]");
        assert_eq!(f.len(), 7);
    }

    /// The keys come in the API reference's order, as OpenAI sends them.
    #[test]
    fn chunks_keep_the_api_references_key_order() {
        let mut e = OpenaiChat::stream_encoder(meta(), true);
        let mut out = String::new();
        e.delta(
            &Delta::ToolCall { index: 0, id: Some("call_1".into()), name: Some("f".into()), arguments: String::new() },
            &mut out,
        );
        e.fail(&GatewayError::new(502, "broken"), &mut out);
        let f = frames(&out);
        assert_eq!(
            f[1],
            r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":9,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#
        );
        assert_eq!(f[2], r#"{"error":{"message":"broken","type":"api_error","param":null,"code":null}}"#);
    }

    /// A Chat member's logprobs reach a Chat client as they came: in the whole answer's choice,
    /// and in the chunk of the text they describe; another format's are null.
    #[test]
    fn logprobs_of_a_chat_member_are_written_whole_and_with_their_chunk() {
        let raw = json!({"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}], "refusal": null});
        let ours = Logprobs { format: "openai_chat", raw: raw.clone() };
        let theirs = Logprobs { format: "openai_responses", raw: json!([]) };
        for (logprobs, expected) in [(ours.clone(), raw.clone()), (theirs.clone(), Value::Null)] {
            let answer = Answer {
                text: "Hi".into(),
                reasoning: String::new(),
                reasoning_parts: Vec::new(),
                tool_calls: Vec::new(),
                finish_reason: FinishReason::Stop,
                usage: Usage::default(),
                model: None,
                logprobs: Some(logprobs),
                content_filter: None,
            };
            let body: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
            assert_eq!(body["choices"][0]["logprobs"], expected);
        }

        let mut e = OpenaiChat::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Logprobs { logprobs: ours.clone() }, &mut out);
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.delta(&Delta::Logprobs { logprobs: theirs }, &mut out);
        e.delta(&Delta::Text { text: "!".into() }, &mut out);
        e.delta(&Delta::Logprobs { logprobs: ours.clone() }, &mut out);
        e.delta(&Delta::Logprobs { logprobs: ours }, &mut out);
        e.finish(&FinishReason::Stop, Usage::default(), &mut out);
        let chunks: Vec<Value> = frames(&out).iter().filter_map(|f| serde_json::from_str(f).ok()).collect();
        let seen: Vec<(Value, Value)> =
            chunks.iter().map(|c| (c["choices"][0]["delta"].clone(), c["choices"][0]["logprobs"].clone())).collect();
        assert_eq!(
            seen,
            [
                (json!({"role": "assistant", "content": ""}), Value::Null),
                (json!({"content": "Hi"}), raw.clone()),
                (json!({"content": "!"}), Value::Null),
                (json!({}), raw.clone()),
                (json!({}), raw),
            ],
            "two in a row: the first in a chunk of its own, the second with the finish"
        );
        assert_eq!(chunks[4]["choices"][0]["finish_reason"], "stop");
    }

    #[test]
    fn failed_stream_has_an_error_and_no_done() {
        let mut e = OpenaiChat::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "partial".into() }, &mut out);
        e.fail(&GatewayError::new(502, "broken"), &mut out);
        let f = frames(&out);
        let last: Value = serde_json::from_str(f.last().unwrap()).unwrap();
        assert_eq!(last["error"]["message"], "broken");
        assert!(!out.contains("[DONE]"));
        assert!(!out.contains("\"usage\""));
    }
}
