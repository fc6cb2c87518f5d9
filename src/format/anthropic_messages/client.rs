//! Anthropic Messages as a gateway client speaks it: `POST /v1/messages`.
//!
//! Requests: `system` as a string or text blocks, `max_tokens` required (as Anthropic requires
//! it), content as a string or blocks. A user turn's `image` and `document` blocks (base64 or
//! URL sources; a plain-text document as its text) become its parts, and its `tool_result`
//! blocks normalized `tool` messages ahead of them; an assistant turn's `tool_use` blocks become
//! its tool calls. Reasoning comes back to the client as Anthropic sent it (`thinking` with its
//! `signature`, streamed as `signature_delta`; `redacted_thinking`), and what this format has no
//! block for (a Gemini call's signature, other providers' signed reasoning) and the issuer of
//! each thinking block ride in the turn's `tool_use` ids (src/format/client/state_id.rs). A
//! replayed thinking block goes on unchanged, as the client sent it, when the turn's first id
//! names its issuer; one whose issuer is not known is dropped, as the rules for state from
//! elsewhere drop it. `tool_choice` (`disable_parallel_tool_use` included), `top_p` and structured output
//! (`output_config.format`, or the beta's `output_format`) are read; the other fields
//! (`metadata`, `service_tier`, `top_k`…) go on unchanged to an anthropic_messages member, and
//! are dropped with a warning for a member of another format (docs/parameters.md).
//! A stream is `message_start`, one content block per text run, thinking run or tool call
//! (`content_block_start` / `_delta` / `_stop`, tool arguments as `input_json_delta`),
//! `message_delta` with the stop reason and usage, then `message_stop`.

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use super::provider::{tool_input, FORMAT};
use super::{stop_reason, AnthropicMessages};
use crate::chat::{
    Answer, ChatRequest, Delta, FinishReason, Message, Opaque, Part, Passthrough, ReasoningPart, ReasoningRequest,
    ReasoningState, ResponseFormat, Role, Source, Tool, ToolCall, ToolChoice, Usage,
};
use crate::format::client::field::{self, child};
use crate::format::client::state_id;
use crate::format::client::{media, sse, ClientCall, ClientDialect, Conversation, GatewayError, Meta, StreamEncoding};
use crate::format::openai_chat::client::schema;
use crate::value::{index_path, FieldError};

/// The request fields this dialect reads (maps into the request, or refuses); the others go
/// on unchanged to an anthropic_messages member ([`field::passthrough`]).
pub(crate) const READ: &[&str] = &[
    "model",
    "max_tokens",
    "stream",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "stop_sequences",
    "output_config",
    "output_format",
    "thinking",
    "thread",
    "compaction",
];

/// The request fields whose answer the gateway could not give as Anthropic would, each refused
/// by name with why.
const REFUSED: &[(&str, &str)] = &[
    (
        "thread",
        "it keeps the conversation's state at Anthropic under an id the gateway does not give; send the \
         whole conversation in messages instead",
    ),
    (
        "compaction",
        "its answer is a compaction block, which the gateway does not carry; compact the conversation \
         yourself, or call Anthropic directly",
    ),
];

fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
    let o = field::object(body, "body")?;
    let model = field::string(o, "model", "", "the name of a route, e.g. \"chat\"")?.to_string();
    let max_tokens = field::opt_tokens(o, "max_tokens", "")?
        .ok_or_else(|| field::missing("max_tokens", "the most tokens to generate, e.g. 1024"))?;
    let stream = field::opt_bool(o, "stream", "")?;
    if let Some((key, why)) = REFUSED.iter().find(|(key, _)| field::opt(o, key).is_some()) {
        return Err(FieldError::new(*key, format!("is not supported: {why}")));
    }
    let mut conversation = Conversation::default();
    match field::opt(o, "system") {
        None => {}
        Some(Value::String(s)) => conversation.push(Message::new(Role::System, s.clone()), "system", None),
        Some(v @ Value::Array(_)) => {
            conversation.push(Message::new(Role::System, text_blocks(v, "system")?), "system", None)
        }
        Some(other) => return Err(field::wrong("system", "a string or a list of text blocks", other)),
    }
    let list = match field::opt(o, "messages") {
        None => return Err(field::missing("messages", "a list of at least one message")),
        Some(v) => field::array(v, "messages", "a list of messages")?,
    };
    if list.is_empty() {
        return Err(FieldError::new("messages", "must hold at least one message (got [])"));
    }
    for (i, m) in list.iter().enumerate() {
        turn(m, &index_path("messages", i), &mut conversation)?;
    }
    let tools = field::opt_list(o, "tools", "a list of tools", tool)?;
    let (tool_choice, parallel_tool_calls) = match field::opt(o, "tool_choice") {
        None => (None, None),
        Some(v) => {
            let (choice, parallel) = tool_choice(v)?;
            (Some(crate::format::client::check_tool_choice(choice, &tools, "tool_choice")?), parallel)
        }
    };
    let Conversation { messages, origins } = conversation;
    let request = ChatRequest {
        messages,
        max_tokens: Some(max_tokens),
        temperature: field::opt_temperature(o, "temperature", "")?,
        top_p: field::opt_top_p(o, "top_p", "")?,
        stop: field::opt_stop(o, "stop_sequences", "")?,
        tools,
        tool_choice,
        parallel_tool_calls,
        response_format: output_format(o)?,
        reasoning: thinking(o)?,
        passthrough: passthrough(o),
        ..ChatRequest::default()
    };
    Ok(ClientCall { model, stream, include_usage: false, request, echo: Value::Null, origins })
}

/// The fields this dialect does not read, and `output_config`'s members besides the `format`
/// it maps (`effort`…): they join the `output_config` an anthropic_messages member is sent.
fn passthrough(o: &Map<String, Value>) -> Option<Passthrough> {
    // Built by insertion: a map's `remove` and `entry` would each link more of BTreeMap.
    let mut config = Map::new();
    if let Some(Value::Object(given)) = field::opt(o, "output_config") {
        for (key, value) in given.iter().filter(|(key, _)| *key != "format") {
            config.insert(key.clone(), value.clone());
        }
    }
    let mut passed = field::passthrough(o, READ, FORMAT);
    if !config.is_empty() {
        let fields = &mut passed.get_or_insert_with(|| Passthrough { format: FORMAT, fields: Map::new() }).fields;
        fields.insert("output_config".into(), Value::Object(config));
    }
    passed
}

/// `thinking: {type: "enabled", budget_tokens}` (or `"disabled"`), as the request's `reasoning`.
fn thinking(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, FieldError> {
    let Some(v) = field::opt(o, "thinking") else { return Ok(None) };
    let t = field::object(v, "thinking")?;
    Ok(match field::one_of(t, "type", "thinking", &["enabled", "disabled"])? {
        "enabled" => Some(ReasoningRequest {
            budget_tokens: field::opt_tokens(t, "budget_tokens", "thinking")?,
            ..Default::default()
        }),
        _ => None,
    })
}

/// One Anthropic turn, appended as normalized messages.
fn turn(v: &Value, path: &str, out: &mut Conversation) -> Result<(), FieldError> {
    let o = field::object(v, path)?;
    let assistant = field::one_of(o, "role", path, &["user", "assistant"])? == "assistant";
    let cp = child(path, "content");
    let blocks = match field::opt(o, "content") {
        None => return Err(field::missing(&cp, "a string or a list of content blocks")),
        Some(Value::String(s)) => {
            out.push(Message::new(if assistant { Role::Assistant } else { Role::User }, s.clone()), cp, None);
            return Ok(());
        }
        Some(v) => field::array(v, &cp, "a string or a list of content blocks")?,
    };
    let mut parts: Vec<Part> = Vec::new();
    // The block each part came from.
    let mut part_blocks = Vec::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    // The thinking blocks, as the state that signs each and its text.
    let mut thinking: Vec<(Opaque, String)> = Vec::new();
    let mut carried = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let bp = index_path(&cp, i);
        let b = field::object(block, &bp)?;
        let allowed: &[&str] = if assistant {
            &["text", "tool_use", "thinking", "redacted_thinking"]
        } else {
            &["text", "image", "document", "tool_result"]
        };
        match field::one_of(b, "type", &bp, allowed)? {
            "text" => {
                parts.push(Part::Text { text: field::string(b, "text", &bp, "the block's text")?.to_string() });
                part_blocks.push(i);
            }
            "image" => {
                parts.push(media::check_part(Part::Image { source: source(b, &bp)? }, Role::User, &bp)?);
                part_blocks.push(i);
            }
            "document" => {
                parts.push(document(b, &bp)?);
                part_blocks.push(i);
            }
            "tool_use" => {
                let id = state_id::decode(field::string(b, "id", &bp, "the tool call's id")?);
                carried.extend(id.reasoning);
                calls.push(ToolCall {
                    id: id.id,
                    name: field::string(b, "name", &bp, "the tool's name")?.to_string(),
                    arguments: field::opt(b, "input").map(ToJson::to_json).unwrap_or_else(|| "{}".into()),
                    state: id.state,
                });
            }
            "tool_result" => {
                let id = field::string(b, "tool_use_id", &bp, "the id of the tool_use this answers")?;
                let content = match field::opt(b, "content") {
                    None => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => text_blocks(v, &child(&bp, "content"))?,
                };
                let mut m = Message::new(Role::Tool, content);
                m.tool_call_id = Some(state_id::original_id(id));
                results.push((m, child(&bp, "content")));
            }
            // Unsigned thinking (a client's own stream reader may leave the signature out) is a
            // Chat target's, when the ids name one; else nothing verifies it: it is dropped below.
            "thinking" => {
                let text = field::string(b, "thinking", &bp, "the thinking's text")?;
                let signature = field::opt_string(b, "signature", &bp)?.unwrap_or("");
                thinking.push((Opaque::Signature(signature.to_string()), text.to_string()));
            }
            _ => thinking.push((
                Opaque::Redacted(field::string(b, "data", &bp, "the data Anthropic gave it")?.to_string()),
                String::new(),
            )),
        }
    }
    let reasoning = replayed_reasoning(carried, &thinking);
    let role = if assistant { Role::Assistant } else { Role::User };
    let only_results = !results.is_empty() && parts.is_empty();
    for (result, path) in results {
        out.push(result, path, None);
    }
    if !only_results {
        out.push(
            Message { content: parts, tool_calls: calls, reasoning, ..Message::new(role, "") },
            cp,
            Some(part_blocks),
        );
    }
    Ok(())
}

/// A replayed turn's reasoning: what its ids carried, each thinking block's text as the client
/// sent the block (a carried Anthropic part holds its signature, which names the block, and its
/// issuer; a Chat target's is the unsigned block); a carried Anthropic part whose block is gone
/// is dropped with it.
fn replayed_reasoning(carried: Vec<ReasoningPart>, thinking: &[(Opaque, String)]) -> Vec<ReasoningPart> {
    let unsigned = Opaque::Signature(String::new());
    carried
        .into_iter()
        .filter_map(|mut part| match &part.state {
            Some(state) if state.format == FORMAT => {
                let (_, text) = thinking.iter().find(|(opaque, _)| *opaque == state.opaque)?;
                part.text.clone_from(text);
                Some(part)
            }
            Some(state) if state.opaque == Opaque::Plain => {
                if let Some((_, text)) = thinking.iter().find(|(opaque, _)| *opaque == unsigned) {
                    part.text.clone_from(text);
                }
                Some(part)
            }
            _ => Some(part),
        })
        .collect()
}

/// The turn's reasoning as its first call's id carries it: an Anthropic part, or a Chat target's
/// (DeepSeek's thinking can be long), without its text, which its thinking block holds.
fn carried_reasoning(parts: &[ReasoningPart]) -> Vec<ReasoningPart> {
    parts
        .iter()
        .map(|p| match &p.state {
            Some(state) if state.format == FORMAT || state.opaque == Opaque::Plain => {
                ReasoningPart { text: String::new(), kind: p.kind, state: p.state.clone() }
            }
            _ => p.clone(),
        })
        .collect()
}

/// A reasoning block: `thinking` with Anthropic's signature (or none for reasoning another
/// provider issued), or `redacted_thinking`.
fn write_reasoning_block(w: &mut JsonWriter, text: &str, state: Option<&ReasoningState>) {
    let own = state.filter(|s| s.format == FORMAT).map(|s| &s.opaque);
    w.begin_object();
    match own {
        Some(Opaque::Redacted(data)) => {
            w.field("type", "redacted_thinking");
            w.field("data", data);
        }
        _ => {
            w.field("type", "thinking");
            w.field("thinking", text);
            w.field(
                "signature",
                match own {
                    Some(Opaque::Signature(s)) => s.as_str(),
                    _ => "",
                },
            );
        }
    }
    w.end_object();
}

/// `tool_choice`: `{type: "auto" | "any" | "tool" | "none", name?, disable_parallel_tool_use?}`;
/// `any` is a required call. `disable_parallel_tool_use: true` is at most one call.
fn tool_choice(v: &Value) -> Result<(ToolChoice, Option<bool>), FieldError> {
    let o = field::object(v, "tool_choice")?;
    let choice = match field::one_of(o, "type", "tool_choice", &["auto", "any", "tool", "none"])? {
        "auto" => ToolChoice::Auto,
        "any" => ToolChoice::Required,
        "none" => ToolChoice::None,
        _ => ToolChoice::Tool {
            name: field::string(o, "name", "tool_choice", "the name of one of the tools")?.to_string(),
        },
    };
    let parallel = match field::opt(o, "disable_parallel_tool_use") {
        None => None,
        Some(_) => Some(!field::opt_bool(o, "disable_parallel_tool_use", "tool_choice")?),
    };
    Ok((choice, parallel))
}

/// Structured output: `output_config.format` (or the beta's `output_format`), `{type:
/// "json_schema", schema}` (https://platform.claude.com/docs/en/build-with-claude/structured-outputs).
fn output_format(o: &Map<String, Value>) -> Result<Option<ResponseFormat>, FieldError> {
    let config = match field::opt(o, "output_config") {
        None => None,
        Some(v) => field::opt(field::object(v, "output_config")?, "format").map(|f| (f, "output_config.format")),
    };
    let (format, path) = match (config, field::opt(o, "output_format")) {
        (Some(_), Some(_)) => {
            return Err(FieldError::new(
                "output_config.format",
                "and output_format both give the output's format; give one (output_config.format)",
            ))
        }
        (Some(given), None) => given,
        (None, Some(format)) => (format, "output_format"),
        (None, None) => return Ok(None),
    };
    let f = field::object(format, path)?;
    field::one_of(f, "type", path, &["json_schema"])?;
    crate::format::client::json_schema_format(f, path).map(Some)
}

/// The block's `source` object.
fn source_object<'a>(b: &'a Map<String, Value>, sp: &str) -> Result<&'a Map<String, Value>, FieldError> {
    match field::opt(b, "source") {
        None => Err(field::missing(sp, "{type: \"base64\", media_type, data} or {type: \"url\", url}")),
        Some(v) => field::object(v, sp),
    }
}

/// An image's or document's `source`: `{type: "base64", media_type, data}` or `{type: "url",
/// url}` (a stored `file` is refused by name).
fn source(b: &Map<String, Value>, path: &str) -> Result<Source, FieldError> {
    let sp = child(path, "source");
    let s = source_object(b, &sp)?;
    match field::one_of(s, "type", &sp, &["base64", "url", "file"])? {
        "base64" => media::from_data(
            field::string(s, "data", &sp, "the bytes as base64")?,
            field::string(s, "media_type", &sp, "the media type, e.g. \"image/png\"")?,
            &sp,
        ),
        "url" => media::from_url(field::string(s, "url", &sp, "the URL")?, None, &child(&sp, "url")),
        _ => Err(media::stored_file(&sp, "send the bytes as a base64 source instead")),
    }
}

/// A `document` block: a PDF (or another file) by base64 or URL, or a plain-text document,
/// which is sent as its text (what any format can carry). Its `title` is the file's name.
fn document(b: &Map<String, Value>, path: &str) -> Result<Part, FieldError> {
    let sp = child(path, "source");
    let s = source_object(b, &sp)?;
    if field::one_of(s, "type", &sp, &["base64", "url", "text", "file"])? == "text" {
        return Ok(Part::Text { text: field::string(s, "data", &sp, "the document's text")?.to_string() });
    }
    let mut source = source(b, path)?;
    // A document by URL alone: a PDF unless its name says otherwise, as Anthropic reads it.
    if let Source::Url { url, media_type: media_type @ None } = &mut source {
        *media_type = Some(media::media_type_of_name(url).unwrap_or("application/pdf").to_string());
    }
    Ok(Part::File { source, filename: field::opt_string(b, "title", path)?.map(str::to_string) })
}

/// A list of `{type: "text", text}` blocks, joined.
fn text_blocks(v: &Value, path: &str) -> Result<String, FieldError> {
    let mut text = String::new();
    for (i, block) in field::array(v, path, "a string or a list of text blocks")?.iter().enumerate() {
        let bp = index_path(path, i);
        let b = field::object(block, &bp)?;
        field::one_of(b, "type", &bp, &["text"])?;
        text.push_str(field::string(b, "text", &bp, "the block's text")?);
    }
    Ok(text)
}

fn tool(v: &Value, path: &str) -> Result<Tool, FieldError> {
    let o = field::object(v, path)?;
    if let Some(kind) = field::opt_string(o, "type", path)? {
        if kind != "custom" {
            return Err(FieldError::new(
                format!("{path}.type"),
                format!("must be \"custom\" or omitted (got {}); server tools run at Anthropic only", kind.to_json()),
            ));
        }
    }
    Ok(Tool {
        name: field::string(o, "name", path, "the tool's name")?.to_string(),
        description: field::opt_string(o, "description", path)?.map(str::to_string),
        parameters: schema(field::opt(o, "input_schema"), &child(path, "input_schema"))?,
    })
}

/// A tool call's id as given, or one made up when the provider gave none (Gemini).
fn tool_id(meta: &Meta, index: u32, id: &str) -> String {
    if id.is_empty() {
        format!("toolu_{}_{index}", meta.id.trim_start_matches("msg_"))
    } else {
        id.to_string()
    }
}

/// A whole answer, keys in the API reference's order: `id`, `type`, `role`, `model`, `content`,
/// `stop_reason`, `stop_sequence`, `usage`.
fn answer_body(meta: &Meta, answer: &Answer) -> String {
    let mut w = JsonWriter::new();
    w.begin_object();
    w.field("id", &meta.id);
    w.field("type", "message");
    w.field("role", "assistant");
    w.field("model", &meta.model);
    w.key("content");
    w.begin_array();
    if answer.reasoning_parts.is_empty() && !answer.reasoning.is_empty() {
        write_reasoning_block(&mut w, &answer.reasoning, None);
    }
    for part in &answer.reasoning_parts {
        write_reasoning_block(&mut w, &part.text, part.state.as_ref());
    }
    if !answer.text.is_empty() || answer.tool_calls.is_empty() {
        typed_text(&mut w, "text", "text", &answer.text);
    }
    for (i, c) in answer.tool_calls.iter().enumerate() {
        let reasoning = if i == 0 { carried_reasoning(&answer.reasoning_parts) } else { Vec::new() };
        w.begin_object();
        w.field("type", "tool_use");
        w.field("id", &state_id::encode(&tool_id(meta, i as u32, &c.id), c.state.as_ref(), &reasoning));
        w.field("name", &c.name);
        w.key("input");
        match tool_input(&c.arguments) {
            Ok(input) => w.value(&input),
            Err(text) => {
                w.begin_object();
                w.field("arguments", text);
                w.end_object();
            }
        }
        w.end_object();
    }
    w.end_array();
    w.field("stop_reason", stop_reason(&answer.finish_reason));
    w.key("stop_sequence");
    w.null();
    write_usage(&mut w, answer.usage);
    w.end_object();
    w.finish()
}

/// `{"type":kind,"key":text}`: a text or thinking block, or its delta.
fn typed_text(w: &mut JsonWriter, kind: &str, key: &str, text: &str) {
    w.begin_object();
    w.field("type", kind);
    w.field(key, text);
    w.end_object();
}

/// What a content block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    Tool,
}

impl ClientDialect for AnthropicMessages {
    type StreamEncoder = StreamEncoder;

    fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
        parse_request(body)
    }

    /// The error body, `{"type":"error","error":{"type","message"}}` in the API reference's order.
    fn write_error(error: &GatewayError, w: &mut JsonWriter) {
        w.begin_object();
        w.field("type", "error");
        w.key("error");
        w.begin_object();
        w.field("type", super::error_type(error.class, error.kind));
        w.field("message", &error.message);
        w.end_object();
        w.end_object();
    }

    fn answer_body(meta: &Meta, answer: &Answer) -> String {
        answer_body(meta, answer)
    }

    fn stream_encoder(meta: Meta, _include_usage: bool) -> StreamEncoder {
        StreamEncoder {
            meta,
            started: false,
            open: Vec::new(),
            tool_blocks: Vec::new(),
            next_index: 0,
            reasoning: Vec::new(),
            opening: None,
        }
    }
}

#[derive(Debug)]
pub struct StreamEncoder {
    meta: Meta,
    started: bool,
    /// The blocks started and not yet stopped, in order, with their indexes.
    open: Vec<(Block, u32)>,
    /// Each tool call's block: (normalized call index, block index).
    tool_blocks: Vec<(u32, u32)>,
    next_index: u32,
    /// The reasoning so far, which the first call's id carries.
    reasoning: Vec<ReasoningPart>,
    /// A call's opening, held until the delta after it: a call's state follows the call
    /// (Gemini's), and its id carries it.
    opening: Option<(ToolCall, u32)>,
}

/// One event, its name in the `event:` line and as its `type`, then the fields `fields` writes.
fn event(out: &mut String, name: &str, fields: &dyn Fn(&mut JsonWriter)) {
    sse(out, Some(name), &|w| {
        w.begin_object();
        w.field("type", name);
        fields(w);
        w.end_object();
    });
}

impl StreamEncoder {
    fn start(&mut self, out: &mut String) {
        if self.started {
            return;
        }
        self.started = true;
        event(out, "message_start", &|w| {
            w.key("message");
            w.begin_object();
            w.field("id", &self.meta.id);
            w.field("type", "message");
            w.field("role", "assistant");
            w.field("model", &self.meta.model);
            w.key("content");
            w.begin_array();
            w.end_array();
            w.key("stop_reason");
            w.null();
            w.key("stop_sequence");
            w.null();
            write_usage(w, Usage::default());
            w.end_object();
        });
    }

    fn close_all(&mut self, out: &mut String) {
        for (_, index) in self.open.drain(..) {
            event(out, "content_block_stop", &|w| w.field("index", &index));
        }
    }

    /// Starts a new block, which `block_start` writes; returns its index.
    fn open(&mut self, block: Block, block_start: &dyn Fn(&mut JsonWriter), out: &mut String) -> u32 {
        let index = self.next_index;
        self.next_index += 1;
        self.open.push((block, index));
        event(out, "content_block_start", &|w| {
            w.field("index", &index);
            w.key("content_block");
            block_start(w);
        });
        index
    }

    /// The block a text or thinking run goes to: the open one of its kind if it is the last
    /// started, else a new one (every open block is stopped first), which starts as
    /// `{"type":kind,kind:""}`.
    fn run(&mut self, block: Block, kind: &str, out: &mut String) -> u32 {
        match self.open.last() {
            Some((b, index)) if *b == block => *index,
            _ => {
                self.close_all(out);
                self.open(block, &|w| typed_text(w, kind, kind, ""), out)
            }
        }
    }

    /// Starts a tool call's block, its id carrying the call's state. Providers may interleave parallel calls' arguments (OpenAI Chat
    /// numbers each fragment by call), so a call's block stays open beside the other calls'
    /// until a text or thinking run or the end, and a later fragment goes to the block its call
    /// started: a new block per fragment would split one call into several.
    fn open_call(&mut self, opening: ToolCall, call: u32, out: &mut String) {
        if self.open.iter().any(|(b, _)| *b != Block::Tool) {
            self.close_all(out);
        }
        let reasoning = if self.tool_blocks.is_empty() { carried_reasoning(&self.reasoning) } else { Vec::new() };
        let id = state_id::encode(&opening.id, opening.state.as_ref(), &reasoning);
        let block_start = |w: &mut JsonWriter| {
            w.begin_object();
            w.field("type", "tool_use");
            w.field("id", &id);
            w.field("name", &opening.name);
            w.key("input");
            w.begin_object();
            w.end_object();
            w.end_object();
        };
        let index = self.open(Block::Tool, &block_start, out);
        self.tool_blocks.push((call, index));
        if !opening.arguments.is_empty() {
            Self::block_delta(out, index, "input_json_delta", "partial_json", &opening.arguments);
        }
    }

    /// Opens the held call's block, its id carrying the call's state.
    fn send_opening(&mut self, out: &mut String) {
        if let Some((opening, call)) = self.opening.take() {
            self.open_call(opening, call, out);
        }
    }

    /// A reasoning state: Anthropic's signature ends the thinking block it signs, its redacted
    /// thinking is a block of its own; every state is kept for the first call's id.
    fn reasoning_state(&mut self, state: &ReasoningState, out: &mut String) {
        ReasoningPart::push_state(&mut self.reasoning, state.clone());
        match (&state.opaque, state.format == FORMAT) {
            (Opaque::Signature(signature), true) => {
                let index = self.run(Block::Thinking, "thinking", out);
                Self::block_delta(out, index, "signature_delta", "signature", signature);
                self.close_all(out);
            }
            (Opaque::Redacted(_), true) => {
                self.close_all(out);
                let block = |w: &mut JsonWriter| write_reasoning_block(w, "", Some(state));
                self.open(Block::Thinking, &block, out);
                self.close_all(out);
            }
            _ => {}
        }
    }

    /// A `content_block_delta` of `{"type":kind,key:text}`.
    fn block_delta(out: &mut String, index: u32, kind: &str, key: &str, text: &str) {
        event(out, "content_block_delta", &|w| {
            w.field("index", &index);
            w.key("delta");
            typed_text(w, kind, key, text);
        });
    }
}

impl StreamEncoding for StreamEncoder {
    fn finish(&mut self, finish: &FinishReason, usage: Usage, out: &mut String) {
        self.start(out);
        self.send_opening(out);
        self.close_all(out);
        event(out, "message_delta", &|w| {
            w.key("delta");
            w.begin_object();
            w.field("stop_reason", stop_reason(finish));
            w.key("stop_sequence");
            w.null();
            w.end_object();
            write_usage(w, usage);
        });
        event(out, "message_stop", &|_| {});
    }

    /// An `error` event (the SDK throws on it), and no `message_stop`.
    fn fail(&mut self, error: &GatewayError, out: &mut String) {
        self.send_opening(out);
        sse(out, Some("error"), &|w| AnthropicMessages::write_error(error, w));
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
            Delta::Text { text } => {
                let index = self.run(Block::Text, "text", out);
                Self::block_delta(out, index, "text_delta", "text", text);
            }
            Delta::Reasoning { text, kind } => {
                ReasoningPart::push_text(&mut self.reasoning, *kind, text);
                let index = self.run(Block::Thinking, "thinking", out);
                Self::block_delta(out, index, "thinking_delta", "thinking", text);
            }
            Delta::ReasoningState { state } => self.reasoning_state(state, out),
            Delta::ToolCall { index: call, id, name, arguments } => {
                match self.tool_blocks.iter().find(|(c, _)| c == call) {
                    Some((_, index)) if !arguments.is_empty() => {
                        Self::block_delta(out, *index, "input_json_delta", "partial_json", arguments)
                    }
                    Some(_) => {}
                    None => {
                        let id = tool_id(&self.meta, *call, id.as_deref().unwrap_or(""));
                        let name = name.clone().unwrap_or_default();
                        self.opening = Some((ToolCall { id, name, arguments: arguments.clone(), state: None }, *call));
                    }
                }
            }
            Delta::Done { finish_reason, usage, .. } => self.finish(finish_reason, *usage, out),
            // The engine never delivers a skipped frame (it becomes a warning event) nor a usage
            // report (it stays on the attempt's leg); a call's state is taken above.
            // Logprobs are another format's: this one has none.
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

/// `"usage":{"input_tokens","output_tokens"}`.
fn write_usage(w: &mut JsonWriter, u: Usage) {
    let (input, output) = crate::format::client::token_counts(u);
    w.key("usage");
    w.begin_object();
    w.field("input_tokens", &input);
    w.field("output_tokens", &output);
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
        Meta { id: "msg_1".into(), created: 9, completed: None, model: "m".into(), echo: Value::Null }
    }

    fn err(body: Value) -> String {
        parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap_err().message
    }

    #[test]
    fn state_kept_at_anthropic_is_refused_saying_what_to_send_instead() {
        let body = |key: &str| json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}], key: {}});
        assert_eq!(
            err(body("thread")),
            "thread is not supported: it keeps the conversation's state at Anthropic under an id the gateway does not \
             give; send the whole conversation in messages instead"
        );
        assert_eq!(
            err(body("compaction")),
            "compaction is not supported: its answer is a compaction block, which the gateway does not carry; compact \
             the conversation yourself, or call Anthropic directly"
        );
    }

    #[test]
    fn thinking_is_the_requests_reasoning() {
        let read = |thinking: Value| {
            let body = json!({"model": "m", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}], "thinking": thinking});
            parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap().request.reasoning
        };
        let on = ReasoningRequest { budget_tokens: Some(2048), ..Default::default() };
        assert_eq!(read(json!({"type": "enabled", "budget_tokens": 2048})), Some(on));
        assert_eq!(read(json!({"type": "disabled"})), None);
    }

    #[test]
    fn parses_what_the_sdk_sends() {
        let body = json!({
            "model": "chat", "max_tokens": 100, "stream": true, "stop_sequences": ["X"],
            "system": [{"type": "text", "text": "be brief"}],
            "metadata": {"user_id": "u"},
            "messages": [
                {"role": "user", "content": "weather?"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "s"},
                    {"type": "text", "text": "checking"},
                    {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Oslo"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]},
                    {"type": "text", "text": "thanks"},
                ]},
            ],
            "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
        });
        let call = parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap();
        assert_eq!((call.model.as_str(), call.stream), ("chat", true));
        let r = &call.request;
        assert_eq!((r.max_tokens, r.stop.clone()), (Some(100), vec!["X".to_string()]));
        let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
        assert_eq!(roles, [Role::System, Role::User, Role::Assistant, Role::Tool, Role::User]);
        assert_eq!(r.messages[2].text(), "checking");
        assert_eq!(r.messages[2].tool_calls[0].arguments, "{\"city\":\"Oslo\"}");
        assert_eq!((&*r.messages[3].text(), r.messages[3].tool_call_id.as_deref()), ("sunny", Some("toolu_1")));
        assert_eq!(r.messages[4].text(), "thanks");
        assert_eq!(r.tools[0].parameters, json!({"type": "object"}));
    }

    #[test]
    fn names_the_field_in_400s() {
        let user = json!({"role": "user", "content": "hi"});
        assert_eq!(
            err(json!({"model": "m", "messages": [user]})),
            "max_tokens is missing; give the most tokens to generate, e.g. 1024"
        );
        assert_eq!(
            err(json!({"model": "m", "max_tokens": 5, "messages": [user, {"role": "system", "content": "x"}]})),
            "messages[1].role must be one of \"user\", \"assistant\" (got \"system\")"
        );
        assert_eq!(
            err(json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "audio"}]}]})),
            "messages[0].content[0].type must be one of \"text\", \"image\", \"document\", \"tool_result\" (got \"audio\")"
        );
        assert_eq!(
            err(json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user"}]})),
            "messages[0].content is missing; give a string or a list of content blocks"
        );
        assert_eq!(
            err(json!({"model": "m", "max_tokens": 5, "messages": [user], "system": 4})),
            "system must be a string or a list of text blocks (got 4)"
        );
        assert_eq!(
            err(json!({"model": "m", "max_tokens": 5, "messages": [user], "tools": [{"type": "web_search_20250305", "name": "s"}]})),
            "tools[0].type must be \"custom\" or omitted (got \"web_search_20250305\"); server tools run at Anthropic only"
        );
    }

    fn base64(media_type: &str, data: &str) -> Value {
        json!({"type": "base64", "media_type": media_type, "data": data})
    }

    fn data(data: &str, media_type: &str) -> Source {
        Source::Data { data: data.into(), media_type: media_type.into() }
    }

    #[test]
    fn reads_images_and_documents() {
        let text = |t: &str| Part::Text { text: t.into() };
        let cases = [
            (
                "a base64 image, then text",
                json!([{"type": "image", "source": base64("image/jpeg", "/9j/4AAQ")}, {"type": "text", "text": "what is this?"}]),
                vec![Part::Image { source: data("/9j/4AAQ", "image/jpeg") }, text("what is this?")],
            ),
            (
                "an image by URL",
                json!([{"type": "image", "source": {"type": "url", "url": "https://x.example/cat.png"}}]),
                vec![Part::Image { source: Source::Url { url: "https://x.example/cat.png".into(), media_type: None } }],
            ),
            (
                "a base64 PDF with its title",
                json!([{"type": "document", "source": base64("application/pdf", "JVBERi0x"), "title": "a.pdf", "citations": {"enabled": true}}]),
                vec![Part::File { source: data("JVBERi0x", "application/pdf"), filename: Some("a.pdf".into()) }],
            ),
            (
                "a PDF by URL",
                json!([{"type": "document", "source": {"type": "url", "url": "https://x.example/report"}}]),
                vec![Part::File {
                    source: Source::Url {
                        url: "https://x.example/report".into(),
                        media_type: Some("application/pdf".into()),
                    },
                    filename: None,
                }],
            ),
            (
                "a plain-text document as its text",
                json!([{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}}, {"type": "text", "text": "sum up"}]),
                vec![text("notes"), text("sum up")],
            ),
            (
                "text blocks",
                json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]),
                vec![text("a"), text("b")],
            ),
        ];
        for (case, content, expected) in cases {
            let body = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": content}]});
            let call = parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap();
            assert_eq!(
                call.request.messages,
                vec![Message { content: expected, ..Message::new(Role::User, "") }],
                "{case}"
            );
        }
    }

    #[test]
    fn reads_tool_choice_top_p_and_structured_output() {
        let tools = json!([{"name": "f", "input_schema": {"type": "object"}}]);
        let schema = json!({"type": "json_schema", "schema": {"type": "object"}});
        let json_schema = Some(ResponseFormat::Json {
            schema: Some(json!({"type": "object"})),
            name: None,
            description: None,
            strict: None,
        });
        let cases = [
            (json!({"top_p": 0.7, "top_k": 5}), (Some(0.7), None, None, None)),
            (json!({"tool_choice": {"type": "auto"}, "tools": tools}), (None, Some(ToolChoice::Auto), None, None)),
            (
                json!({"tool_choice": {"type": "any", "disable_parallel_tool_use": true}, "tools": tools}),
                (None, Some(ToolChoice::Required), Some(false), None),
            ),
            (
                json!({"tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": false}, "tools": tools}),
                (None, Some(ToolChoice::Tool { name: "f".into() }), Some(true), None),
            ),
            (json!({"tool_choice": {"type": "none"}}), (None, Some(ToolChoice::None), None, None)),
            (json!({"output_config": {"format": schema, "effort": "low"}}), (None, None, None, json_schema.clone())),
            (json!({"output_format": schema}), (None, None, None, json_schema.clone())),
            (json!({"output_config": {"effort": "low"}}), (None, None, None, None)),
        ];
        for (fields, expected) in cases {
            let mut body = json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]});
            body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            let r = parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap().request;
            assert_eq!((r.top_p, r.tool_choice, r.parallel_tool_calls, r.response_format), expected, "{fields}");
        }
    }

    #[test]
    fn names_the_block_or_parameter_in_400s() {
        let with =
            |content: Value| json!({"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": content}]});
        let ask = |fields: Value| {
            let mut body = with(json!("hi"));
            body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
            body
        };
        let cases = [
            (
                with(json!([{"type": "image"}])),
                "messages[0].content[0].source is missing; give {type: \"base64\", media_type, data} or {type: \"url\", \
                 url}",
            ),
            (
                with(json!([{"type": "image", "source": {"type": "file", "file_id": "file_1"}}])),
                "messages[0].content[0].source names a file stored at a provider, which the gateway cannot forward to \
                 another; send the bytes as a base64 source instead",
            ),
            (
                with(json!([{"type": "image", "source": base64("image/png", "")}])),
                "messages[0].content[0].source.data must be the bytes as base64 (got \"\")",
            ),
            (
                with(json!([{"type": "image", "source": base64("png", "iVBO")}])),
                "messages[0].content[0].source.media_type must be a media type such as \"image/png\" or \
                 \"application/pdf\" (got \"png\")",
            ),
            (
                with(json!([{"type": "image", "source": base64("application/pdf", "JVBE")}])),
                "messages[0].content[0] is an image of media type \"application/pdf\"; send an image (image/png, \
                 image/jpeg, image/gif, image/webp) or send the file as a file or document",
            ),
            (
                with(json!([{"type": "document", "source": {"type": "content", "content": []}}])),
                "messages[0].content[0].source.type must be one of \"base64\", \"url\", \"text\", \"file\" (got \
                 \"content\")",
            ),
            (
                json!({"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "image", "source": base64("image/png", "iVBO")}]}]}),
                "messages[0].content[0].type must be one of \"text\", \"tool_use\", \"thinking\", \"redacted_thinking\" \
                 (got \"image\")",
            ),
            (
                ask(json!({"tool_choice": {"type": "required"}})),
                "tool_choice.type must be one of \"auto\", \"any\", \"tool\", \"none\" (got \"required\")",
            ),
            (
                ask(json!({"tool_choice": {"type": "tool", "name": "g"}, "tools": [{"name": "f"}]})),
                "tool_choice names the tool \"g\", which is not one of the tools (tools: [\"f\"])",
            ),
            (ask(json!({"top_p": -1})), "top_p must be a number from 0 to 1 (got -1)"),
            (
                ask(json!({"output_format": {"type": "json_object"}})),
                "output_format.type must be one of \"json_schema\" (got \"json_object\")",
            ),
            (
                ask(json!({"output_config": {"format": {"type": "json_schema"}}})),
                "output_config.format.schema is missing; give a JSON Schema object",
            ),
            (
                ask(json!({"output_config": {"format": {"type": "json_schema", "schema": {}}}, "output_format": {"type": "json_schema", "schema": {}}})),
                "output_config.format and output_format both give the output's format; give one (output_config.format)",
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
            text: "Let me check.".into(),
            reasoning: String::new(),
            tool_calls: vec![ToolCall {
                id: "call_7".into(),
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
        assert_eq!(body["type"], "message");
        assert_eq!(body["content"][0], json!({"type": "text", "text": "Let me check."}));
        assert_eq!(body["content"][1], json!({"type": "tool_use", "id": "call_7", "name": "f", "input": {"a": 1}}));
        assert_eq!(body["stop_reason"], "tool_use");
        assert_eq!(body["usage"], json!({"input_tokens": 3, "output_tokens": 4}));
    }

    fn events(out: &str) -> Vec<(String, Value)> {
        out.split("\n\n")
            .filter(|f| !f.is_empty())
            .map(|f| {
                let (event, data) = f.split_once('\n').unwrap();
                (
                    event.trim_start_matches("event: ").to_string(),
                    serde_json::from_str(data.trim_start_matches("data: ")).unwrap(),
                )
            })
            .collect()
    }

    /// Anthropic's thinking comes back as it sent it, whole and streamed; a Gemini call's
    /// signature and each block's issuer ride in the ids; the replayed turn gives all of it back,
    /// a thinking block's text as the client sent it.
    #[test]
    fn thinking_blocks_and_carried_state_go_to_the_client_and_back() {
        let state = |format: &str, opaque| Some(ReasoningState { format: format.into(), model: "m1".into(), opaque });
        let parts = vec![
            ReasoningPart {
                kind: ReasoningKind::Summary,
                text: "hmm".into(),
                state: state(FORMAT, Opaque::Signature("sig.a".into())),
            },
            ReasoningPart {
                kind: ReasoningKind::Summary,
                text: String::new(),
                state: state(FORMAT, Opaque::Redacted("red.a".into())),
            },
        ];
        let gemini = state("gemini", Opaque::Signature("sig.g".into()));
        let call = |id: &str, state| ToolCall { id: id.into(), name: "f".into(), arguments: "{}".into(), state };
        let answer = Answer {
            logprobs: None,
            content_filter: None,
            text: String::new(),
            reasoning: "hmm".into(),
            reasoning_parts: parts.clone(),
            tool_calls: vec![call("", gemini.clone())],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
            model: None,
        };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        let content = whole["content"].as_array().unwrap().clone();
        assert_eq!(content[0], json!({"type": "thinking", "thinking": "hmm", "signature": "sig.a"}));
        assert_eq!(content[1], json!({"type": "redacted_thinking", "data": "red.a"}));

        let mut e = AnthropicMessages::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Reasoning { kind: ReasoningKind::Summary, text: "hmm".into() }, &mut out);
        for part in &parts {
            e.delta(&Delta::ReasoningState { state: part.state.clone().unwrap() }, &mut out);
        }
        e.delta(&Delta::ToolCall { index: 0, id: None, name: Some("f".into()), arguments: "{}".into() }, &mut out);
        e.delta(&Delta::ToolCallState { index: 0, state: gemini.clone().unwrap() }, &mut out);
        e.finish(&FinishReason::ToolCalls, Usage::default(), &mut out);
        let ev = events(&out);
        let data: Vec<&Value> = ev.iter().map(|(_, d)| d).collect();
        assert_eq!(data[3]["delta"], json!({"type": "signature_delta", "signature": "sig.a"}));
        assert_eq!(data[5]["content_block"], content[1]);
        assert_eq!(data[7]["content_block"]["id"], content[2]["id"], "the stream's id is the whole answer's");

        let mut replayed = content.clone();
        replayed[0]["thinking"] = json!("hmm, as the client kept it");
        let id = &content[2]["id"];
        let body = json!({"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": replayed},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "sunny"}]},
        ]});
        let r = parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap().request;
        let mut kept = parts.clone();
        kept[0].text = "hmm, as the client kept it".into();
        assert_eq!(r.messages[1].reasoning, kept);
        assert_eq!(r.messages[1].tool_calls, [call("toolu_1_0", gemini)]);
        assert_eq!(r.messages[2].tool_call_id.as_deref(), Some("toolu_1_0"));
        // A thinking block the ids do not name has no known issuer: it is dropped.
        let mut foreign = body.clone();
        foreign["messages"][1]["content"][2]["id"] = json!("toolu_x");
        let r = parse(ClientFormat::AnthropicMessages, &foreign.to_string()).unwrap().request;
        assert_eq!(r.messages[1].reasoning, []);
    }

    /// A Chat target's reasoning reaches an Anthropic client as an unsigned thinking block, its
    /// issuer in the id without the text, and comes back with the block's text.
    #[test]
    fn a_chat_targets_reasoning_rides_in_its_thinking_block() {
        let plain = Some(ReasoningState {
            format: "openai_chat".into(),
            model: "deepseek-reasoner".into(),
            opaque: Opaque::Plain,
        });
        let think = "Paris first. ".repeat(1500);
        let answer = Answer {
            text: String::new(),
            reasoning: think.clone(),
            reasoning_parts: vec![ReasoningPart {
                text: think.clone(),
                kind: ReasoningKind::Raw,
                state: plain.clone(),
            }],
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "f".into(), arguments: "{}".into(), state: None }],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage::default(),
            model: None,
            logprobs: None,
            content_filter: None,
        };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        let content = whole["content"].as_array().unwrap().clone();
        assert_eq!(content[0], json!({"type": "thinking", "thinking": think, "signature": ""}));
        let id = content[1]["id"].as_str().unwrap();
        assert!(id.starts_with("bt1_") && id.len() < 200, "the id names the issuer, not the text: {}", id.len());
        let body = json!({"model": "m", "max_tokens": 9, "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "sunny"}]},
        ]});
        let r = parse(ClientFormat::AnthropicMessages, &body.to_string()).unwrap().request;
        assert_eq!(
            r.messages[1].reasoning,
            [ReasoningPart { text: think.clone(), kind: ReasoningKind::Raw, state: plain.clone() }]
        );
        // A stream reader may keep the block without its (empty) signature.
        let mut unsigned = body.clone();
        unsigned["messages"][1]["content"][0].as_object_mut().unwrap().remove("signature");
        let r = parse(ClientFormat::AnthropicMessages, &unsigned.to_string()).unwrap().request;
        assert_eq!(r.messages[1].reasoning, [ReasoningPart { text: think, kind: ReasoningKind::Raw, state: plain }]);
    }

    #[test]
    fn stream_with_blocks_tool_use_and_stop() {
        let mut e = AnthropicMessages::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Reasoning { kind: ReasoningKind::Summary, text: "hmm".into() }, &mut out);
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.delta(&Delta::Text { text: " there".into() }, &mut out);
        e.delta(
            &Delta::ToolCall { index: 0, id: Some("call_1".into()), name: Some("f".into()), arguments: String::new() },
            &mut out,
        );
        e.delta(&Delta::ToolCall { index: 0, id: None, name: None, arguments: "{\"a\":".into() }, &mut out);
        e.delta(&Delta::ToolCall { index: 0, id: None, name: None, arguments: "1}".into() }, &mut out);
        e.finish(&FinishReason::ToolCalls, Usage { input_tokens: Some(5), output_tokens: Some(6) }, &mut out);
        let ev = events(&out);
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        assert_eq!(ev[1].1["content_block"], json!({"type": "thinking", "thinking": ""}));
        assert_eq!(ev[6].1["delta"], json!({"type": "text_delta", "text": " there"}));
        assert_eq!(
            ev[8].1,
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "call_1", "name": "f", "input": {}}})
        );
        assert_eq!(ev[9].1["delta"], json!({"type": "input_json_delta", "partial_json": "{\"a\":"}));
        assert_eq!(ev[12].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(ev[12].1["usage"], json!({"input_tokens": 5, "output_tokens": 6}));
    }

    /// OpenAI Chat interleaves parallel calls' fragments: each call keeps one block.
    #[test]
    fn interleaved_tool_calls_keep_one_block_each() {
        let mut e = AnthropicMessages::stream_encoder(meta(), false);
        let mut out = String::new();
        let call = |index: u32, id: Option<&str>, arguments: &str| Delta::ToolCall {
            index,
            id: id.map(str::to_string),
            name: id.map(|_| "get_weather".to_string()),
            arguments: arguments.into(),
        };
        e.delta(&Delta::Text { text: "Both.".into() }, &mut out);
        for d in [
            call(0, Some("call_a"), ""),
            call(1, Some("call_b"), ""),
            call(0, None, "{\"city\":"),
            call(1, None, "{\"city\":\"Oslo\"}"),
            call(0, None, "\"Paris\"}"),
        ] {
            e.delta(&d, &mut out);
        }
        e.finish(&FinishReason::ToolCalls, Usage::default(), &mut out);
        let ev = events(&out);
        let starts: Vec<(u64, &str)> = ev
            .iter()
            .filter(|(n, _)| n == "content_block_start")
            .map(|(_, d)| (d["index"].as_u64().unwrap(), d["content_block"]["type"].as_str().unwrap()))
            .collect();
        assert_eq!(starts, [(0, "text"), (1, "tool_use"), (2, "tool_use")]);
        let json_of = |block: u64| -> String {
            ev.iter()
                .filter(|(n, d)| n == "content_block_delta" && d["index"] == block)
                .map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!((json_of(1).as_str(), json_of(2).as_str()), ("{\"city\":\"Paris\"}", "{\"city\":\"Oslo\"}"));
        let stops: Vec<u64> =
            ev.iter().filter(|(n, _)| n == "content_block_stop").map(|(_, d)| d["index"].as_u64().unwrap()).collect();
        assert_eq!(stops, [0, 1, 2]);
        let last_stop = ev.iter().rposition(|(n, _)| n == "content_block_stop").unwrap();
        let last_delta = ev.iter().rposition(|(n, _)| n == "content_block_delta").unwrap();
        assert!(last_delta < last_stop, "a fragment after its block stopped");
    }

    /// The keys come in the API reference's order, as Anthropic sends them.
    #[test]
    fn events_keep_the_api_references_key_order() {
        let mut e = AnthropicMessages::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.finish(&FinishReason::Stop, Usage { input_tokens: Some(5), output_tokens: Some(6) }, &mut out);
        let expected = [
            r#"event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#,
            r#"event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"event: content_block_stop
data: {"type":"content_block_stop","index":0}"#,
            r#"event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":5,"output_tokens":6}}"#,
            r#"event: message_stop
data: {"type":"message_stop"}"#,
        ];
        assert_eq!(out.split("\n\n").filter(|f| !f.is_empty()).collect::<Vec<_>>(), expected);
        // An error event, as Anthropic's API reference orders it.
        let mut out = String::new();
        AnthropicMessages::stream_encoder(meta(), false).fail(&GatewayError::new(504, "too slow"), &mut out);
        assert_eq!(
            out,
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"too slow\"}}\n\n"
        );
    }

    #[test]
    fn failed_stream_has_an_error_event_and_no_stop() {
        let mut e = AnthropicMessages::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "partial".into() }, &mut out);
        e.fail(&GatewayError::new(504, "too slow"), &mut out);
        let ev = events(&out);
        assert_eq!(ev.last().unwrap().0, "error");
        assert_eq!(ev.last().unwrap().1["error"]["message"], "too slow");
        assert!(!out.contains("message_stop"));
    }
}
