//! OpenAI Responses (`POST {baseUrl}/responses`).
//!
//! The system prompt goes in `instructions`; the conversation is a list of `input` items in which
//! tool calls and their results are `function_call` / `function_call_output` items of their own. A
//! stream is a sequence of typed semantic events ending with `response.completed` (or
//! `response.incomplete` when a limit cut the answer short), which alone say how it finished: a
//! stream without one was cut short. `response.failed` and `error` report provider errors. Errors
//! use OpenAI's error dialect, shared with [`crate::format::openai_chat`]. Reasoning in several parts
//! (summary parts, reasoning items) reads as the parts' texts with a blank line between them, whole
//! or streamed; `summary` parts are a summary, `content` parts of `reasoning_text` the model's raw
//! reasoning ([`ReasoningKind`]), and each goes back where it came from. A function call's arguments stream in `response.function_call_arguments.delta`
//! events, and come whole again in `response.function_call_arguments.done` and in the item of
//! `response.output_item.done`; some models (gpt-5.3-codex-spark) send them only there. The
//! streamed call is the one the whole answer holds: what the deltas left out of the final arguments
//! streams at the first `.done` (all of it when no delta came, nothing when they said it all), and
//! final arguments that do not begin with what was streamed fail the stream, since fragments
//! already delivered cannot be taken back. Every streamed token passes through [`StreamDecoder`],
//! so event data is read by the wire crate (`llm_baton_wire::frames::openai_responses`, built for
//! speed); the once-per-stream parts it keeps as trees (`item`, `response`, an error's `code` and
//! `error`) become `Value`s here.
//!
//! A user message with an image or file goes as a list of `input_text`, `input_image` (a URL or
//! a `data:` URL, `detail: "auto"`) and `input_file` parts (`file_data` as a `data:` URL with a
//! `filename`, or `file_url`): the file guide (developers.openai.com/api/docs/guides/file-inputs)
//! takes both, for PDFs and other document types alike, so this format carries every part.
//! Structured output is `text.format` (`json_object`, or `json_schema` with the schema's fields
//! beside the type); there is no seed.

use std::borrow::Cow;

use llm_baton_wire::frames::openai_responses::parse_event;
use llm_baton_wire::write::JsonWriter;
use serde_json::{Map, Value};

use super::finish_reason;
use crate::chat::{
    self, Answer, ChatRequest, Delta, FinishReason, Logprobs, Message, Opaque, Part, ReasoningKind, ReasoningState,
    Role, Source, ToolCall, ToolChoice, Usage,
};
use crate::format::openai_chat::provider::{default_filename, provider_error, JsonSchema, OpenaiChat};
use crate::format::{
    json, malformed_frame, DecodeError, Endpoint, HttpRequest, ProviderDialect, ProviderSaid, StreamDecoding,
};
use crate::sse::SseEvent;
use crate::value::{from_tree, parse_value};

/// OpenAI Responses, as a [`ProviderDialect`].
#[derive(Debug, Clone, Copy)]
pub struct OpenaiResponses;

impl ProviderDialect for OpenaiResponses {
    type StreamDecoder = StreamDecoder;

    /// Builds the request. The Responses API has no stop sequences: `request.stop` is not sent.
    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
        let mut body = JsonWriter::new();
        write_body(&mut body, endpoint.model, request, stream);
        endpoint.post("responses", endpoint.bearer(), &[], body.finish())
    }

    /// A whole answer is read once per call, so it goes through the shared `Value` parser (see
    /// `format::json`) rather than a derived deserializer of its own.
    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError> {
        json::answer(body, read_answer, "openai_responses answer is not a response")
    }

    /// Responses errors have Chat Completions' shape.
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
        OpenaiChat::error_body(status, body)
    }
}

/// The request body, written straight from the request; a `None` or an empty list is left out.
fn write_body(w: &mut JsonWriter, model: &str, request: &ChatRequest, stream: bool) {
    let system = request.system_prompts();
    w.begin_object();
    w.field("model", model);
    if !system.is_empty() {
        w.field("instructions", &system.join("\n\n"));
    }
    w.key("input");
    w.begin_array();
    for m in &request.messages {
        write_reasoning_items(w, m, model);
        write_input_items(w, m);
    }
    w.end_array();
    w.opt_field("max_output_tokens", request.max_tokens.as_ref());
    w.opt_field("temperature", request.temperature.as_ref());
    w.opt_field("top_p", request.top_p.as_ref());
    if !request.tools.is_empty() {
        w.key("tools");
        w.begin_array();
        for t in &request.tools {
            // `strict` defaults to true in this API, which rejects ordinary JSON Schemas (it
            // demands `additionalProperties: false` and every property required); false keeps
            // Chat Completions' meaning of a tool definition.
            w.begin_object();
            w.field("type", "function");
            w.field("name", &t.name);
            w.opt_field("description", t.description.as_ref());
            w.field("parameters", &t.parameters);
            w.field("strict", &false);
            w.end_object();
        }
        w.end_array();
        if let Some(choice) = &request.tool_choice {
            w.key("tool_choice");
            match choice {
                ToolChoice::Auto => w.string("auto"),
                ToolChoice::None => w.string("none"),
                ToolChoice::Required => w.string("required"),
                ToolChoice::Tool { name } => {
                    w.begin_object();
                    w.field("type", "function");
                    w.field("name", name);
                    w.end_object();
                }
            }
        }
        w.opt_field("parallel_tool_calls", request.parallel_tool_calls.as_ref());
    }
    if let Some(format) = &request.response_format {
        // `{"format": {"type": "json_object"}}`, or `json_schema` beside the schema's fields.
        w.key("text");
        w.begin_object();
        w.key("format");
        w.begin_object();
        match JsonSchema::new(format) {
            Some(schema) => {
                w.field("type", "json_schema");
                schema.write_fields(w);
            }
            None => w.field("type", "json_object"),
        }
        w.end_object();
        w.end_object();
    }
    if let Some(reasoning) = request.reasoning {
        // Stateless: the reasoning comes back encrypted, to be sent back in the next turn's input.
        w.key("reasoning");
        w.begin_object();
        w.opt_field("effort", reasoning.effort.map(|e| e.as_str()));
        w.opt_field("summary", (reasoning.summary == Some(true)).then_some("auto"));
        w.end_object();
        w.key("include");
        w.begin_array();
        w.string("reasoning.encrypted_content");
        w.end_array();
        w.field("store", &false);
    }
    w.field("stream", &stream);
    w.end_object();
}

pub(super) const FORMAT: &str = "openai_responses";

/// An assistant message's reasoning items, before its message and calls: those `model` issued
/// (OpenAI ties encrypted reasoning to the model), with their text as summary or, when raw, as
/// `reasoning_text` content. Reasoning from
/// elsewhere is left out, its text too: as text it would read as something the assistant said.
fn write_reasoning_items(w: &mut JsonWriter, m: &Message, model: &str) {
    for part in &m.reasoning {
        let Some(Opaque::Item { id, encrypted_content }) =
            part.state.as_ref().filter(|s| s.valid_for(FORMAT, model)).map(|s| &s.opaque)
        else {
            continue;
        };
        w.begin_object();
        w.field("type", "reasoning");
        w.field("id", id);
        let text = part.text.trim_start_matches('\n');
        let (key, kind) = match part.kind {
            ReasoningKind::Summary => ("summary", "summary_text"),
            ReasoningKind::Raw => ("content", "reasoning_text"),
        };
        w.key(key);
        w.begin_array();
        if !text.is_empty() {
            w.begin_object();
            w.field("type", kind);
            w.field("text", text);
            w.end_object();
        }
        w.end_array();
        if part.kind == ReasoningKind::Raw {
            // The API requires a summary, if empty.
            w.key("summary");
            w.begin_array();
            w.end_array();
        }
        w.opt_field("encrypted_content", encrypted_content.as_ref());
        w.end_object();
    }
}

/// A reasoning item's state: its id, with its encrypted content when it came.
fn item_state(id: Option<&str>, encrypted_content: Option<&str>) -> Option<ReasoningState> {
    let id = id.filter(|id| !id.is_empty())?;
    let encrypted_content = encrypted_content.filter(|c| !c.is_empty()).map(str::to_string);
    Some(ReasoningState::new(Opaque::Item { id: id.to_string(), encrypted_content }))
}

/// A message's input items. A message is an EasyInputMessage (`{role, content}`): its string
/// content suits every role, an assistant turn (a continue's prefill) included, where content
/// parts would have to be `output_text`; a user message with an image or a file has its parts.
/// An assistant's tool calls follow as `function_call` items, and a tool result is a
/// `function_call_output`.
fn write_input_items(w: &mut JsonWriter, m: &Message) {
    let open_message = |w: &mut JsonWriter, role: &str| {
        w.begin_object();
        w.field("role", role);
        w.key("content");
    };
    match m.role {
        Role::System => {}
        Role::User => {
            open_message(w, "user");
            write_user_content(w, m);
            w.end_object();
        }
        Role::Assistant => {
            let text = m.text();
            if !text.is_empty() || m.tool_calls.is_empty() {
                open_message(w, "assistant");
                w.string(&text);
                w.end_object();
            }
            for c in &m.tool_calls {
                w.begin_object();
                w.field("type", "function_call");
                w.field("call_id", &c.id);
                w.field("name", &c.name);
                w.field("arguments", &c.arguments);
                w.end_object();
            }
        }
        Role::Tool => {
            w.begin_object();
            w.field("type", "function_call_output");
            w.field("call_id", m.tool_call_id.as_deref().unwrap_or(""));
            w.field("output", &*m.text());
            w.end_object();
        }
    }
}

/// A user message's content: its text, or its parts (`input_text`, `input_image`,
/// `input_file`) when it holds an image or a file.
fn write_user_content(w: &mut JsonWriter, m: &Message) {
    if m.is_text_only() {
        w.string(&m.text());
        return;
    }
    w.begin_array();
    for part in &m.content {
        w.begin_object();
        match part {
            Part::Text { text } => {
                w.field("type", "input_text");
                w.field("text", text);
            }
            Part::Image { source } => {
                w.field("type", "input_image");
                w.field("image_url", &*source.as_url());
                w.field("detail", "auto");
            }
            Part::File { source: Source::Url { url, .. }, filename } => {
                w.field("type", "input_file");
                w.opt_field("filename", filename.as_ref());
                w.field("file_url", url);
            }
            Part::File { source, filename } => {
                w.field("type", "input_file");
                w.field("filename", filename.as_deref().unwrap_or(default_filename(source.media_type())));
                w.field("file_data", &*source.as_url());
            }
        }
        w.end_object();
    }
    w.end_array();
}

// ---- whole answers ----

/// What a response object (a whole answer, or the snapshot in a `response.*` event) says about
/// how it ended.
struct Ending<'a> {
    status: Option<&'a str>,
    incomplete: Option<&'a str>,
    usage: Usage,
    error: Option<&'a Value>,
}

impl<'a> Ending<'a> {
    fn read(r: &'a Value) -> json::Read<Ending<'a>> {
        json::object(r, "response")?;
        let incomplete = match json::object_field(r, "incomplete_details")? {
            Some(d) => json::str_field(d, "reason")?,
            None => None,
        };
        let usage = json::field(r, "usage").map_or(Usage::default(), |u| Usage {
            input_tokens: json::count_field(u, "input_tokens").flatten(),
            output_tokens: json::count_field(u, "output_tokens").flatten(),
        });
        Ok(Ending { status: json::str_field(r, "status")?, incomplete, usage, error: json::field(r, "error") })
    }
}

fn read_answer(v: &Value) -> json::Read<Result<Answer, DecodeError>> {
    let ending = Ending::read(v)?;
    let model = json::string_field(v, "model")?;
    let output = json::objects_field(v, "output")?;
    let (mut text, mut reasoning, mut tool_calls) = (String::new(), Vec::new(), Vec::new());
    let mut reasoning_parts = Vec::new();
    // The output texts' logprobs, one list across the message's parts.
    let mut logprobs: Vec<Value> = Vec::new();
    let mut said = Said::default();
    for item in output.unwrap_or_default() {
        let content = json::objects_field(item, "content")?.unwrap_or_default();
        let summary = json::objects_field(item, "summary")?.unwrap_or_default();
        let mut parts = Vec::new();
        // An `output_text`, `refusal`, `summary_text` or `reasoning_text` part.
        for part in summary.iter().chain(content) {
            parts.push((
                json::str_field(part, "type")?,
                json::str_field(part, "text")?,
                json::str_field(part, "refusal")?,
            ));
        }
        let (call_id, name, arguments) = (
            json::string_field(item, "call_id")?,
            json::string_field(item, "name")?,
            json::string_field(item, "arguments")?,
        );
        match json::str_field(item, "type")?.ok_or_else(|| json::missing("type", "an output item"))? {
            "message" => {
                for part in content {
                    if let Some(Value::Array(list)) = json::field(part, "logprobs") {
                        logprobs.extend(list.iter().cloned());
                    }
                }
                for (kind, part_text, refusal) in &parts[summary.len()..] {
                    match kind {
                        Some("output_text") => {
                            said.text |= part_text.is_some_and(|t| !t.is_empty());
                            text.push_str(part_text.unwrap_or(""))
                        }
                        Some("refusal") => {
                            said.refusal |= refusal.is_some_and(|t| !t.is_empty());
                            text.push_str(refusal.unwrap_or(""))
                        }
                        _ => {}
                    }
                }
            }
            "reasoning" => {
                // As a stream has it: a blank line before every part but the first.
                for (kind, piece) in parts.iter().filter_map(|p| Some((p.0, p.1?))).filter(|(_, t)| !t.is_empty()) {
                    let separator = if reasoning.is_empty() { "" } else { "\n\n" };
                    let kind = match kind {
                        Some("reasoning_text") => ReasoningKind::Raw,
                        _ => ReasoningKind::Summary,
                    };
                    chat::ReasoningPart::push_text(&mut reasoning_parts, kind, &format!("{separator}{piece}"));
                    reasoning.push(piece);
                }
                let id = json::str_field(item, "id")?;
                if let Some(state) = item_state(id, json::str_field(item, "encrypted_content")?) {
                    chat::ReasoningPart::push_state(&mut reasoning_parts, state);
                }
            }
            "function_call" => tool_calls.push(ToolCall {
                id: call_id.unwrap_or_default(),
                name: name.unwrap_or_default(),
                arguments: arguments.unwrap_or_default(),
                state: None,
            }),
            _ => {}
        }
    }
    if let Some(error) = ending.error {
        return Ok(Err(provider_error(error)));
    }
    if ending.status == Some("failed") {
        return Ok(Err(DecodeError::Provider {
            status: 500,
            message: "the response failed".into(),
            code: None,
            class: None,
        }));
    }
    if output.is_none() {
        return Ok(Err(DecodeError::Protocol("openai_responses answer has no output".into())));
    }
    Ok(Ok(Answer {
        logprobs: (!logprobs.is_empty()).then_some(Logprobs { format: FORMAT, raw: Value::Array(logprobs) }),
        content_filter: None,
        text,
        reasoning: reasoning.join("\n\n"),
        reasoning_parts,
        finish_reason: said.finish(finish_reason(ending.status, ending.incomplete, !tool_calls.is_empty())),
        tool_calls,
        usage: ending.usage,
        model,
    }))
}

/// What kind of text an answer said: a refusal alone is a policy refusal, `content_filter`, as
/// OpenAI Chat's `refusal` is (the response itself says `completed`).
#[derive(Debug, Default)]
struct Said {
    text: bool,
    refusal: bool,
}

impl Said {
    fn finish(&self, finish: FinishReason) -> FinishReason {
        match finish {
            FinishReason::Stop if self.refusal && !self.text => FinishReason::ContentFilter,
            other => other,
        }
    }
}

// ---- streams ----

/// A `function_call` item opening in `response.output_item.added`.
struct StreamItem<'a> {
    kind: Option<&'a str>,
    id: Option<&'a str>,
    encrypted_content: Option<&'a str>,
    call_id: Option<&'a str>,
    name: Option<&'a str>,
    arguments: Option<&'a str>,
}

impl<'a> StreamItem<'a> {
    fn read(i: &'a Value) -> json::Read<StreamItem<'a>> {
        json::object(i, "item")?;
        Ok(StreamItem {
            kind: json::str_field(i, "type")?,
            id: json::str_field(i, "id")?,
            encrypted_content: json::str_field(i, "encrypted_content")?,
            call_id: json::str_field(i, "call_id")?,
            name: json::str_field(i, "name")?,
            arguments: json::str_field(i, "arguments")?,
        })
    }
}

/// The response snapshot in `response.*` events: how it ended, whether it called a tool, and
/// the model.
struct Snapshot<'a> {
    ending: Ending<'a>,
    /// How many `function_call` items the output holds.
    tool_calls: usize,
    model: Option<&'a str>,
}

fn read_snapshot(r: &Value) -> json::Read<Snapshot<'_>> {
    let ending = Ending::read(r)?;
    let mut tool_calls = 0;
    for o in json::objects_field(r, "output")?.unwrap_or_default() {
        tool_calls += usize::from(json::str_field(o, "type")? == Some("function_call"));
    }
    Ok(Snapshot { ending, tool_calls, model: json::str_field(r, "model")? })
}

/// Which reasoning part a reasoning delta belongs to: its output item, and its summary part or
/// (for reasoning text) content part.
type ReasoningPart = (u32, Option<u32>, Option<u32>);

/// A `function_call` item of the stream; its tool-call ordinal is its place in the list.
#[derive(Debug)]
struct ToolItem {
    output_index: u32,
    /// The arguments streamed so far: what a `.done` event's final arguments must begin with.
    arguments: String,
}

#[derive(Debug, Default)]
pub struct StreamDecoder {
    /// Each `function_call` item seen, in the order first seen.
    tool_items: Vec<ToolItem>,
    /// The output_index of each `function_call` item whose arguments may still stream.
    open_items: Vec<u32>,
    /// A malformed frame was skipped.
    skipped: bool,
    /// The part the last reasoning text came from: a new part starts after a blank line.
    reasoning_part: Option<ReasoningPart>,
    said: Said,
    /// The usage the last response snapshot before the end reported.
    usage: Usage,
    model: Option<String>,
    done: bool,
}

impl StreamDecoder {
    /// A frame that is not valid JSON or not an event's shape. An `error` event is never skipped.
    fn malformed(&mut self, ev: &SseEvent, reason: String, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if ev.event == "error" {
            return Err(DecodeError::Protocol(reason));
        }
        let at_risk = if !self.open_items.is_empty() {
            Some("a function_call item was open")
        } else if ev.data.contains("function_call") {
            Some("the frame names a function_call")
        } else {
            None
        };
        self.skipped = true;
        malformed_frame(reason, at_risk, out)
    }

    /// The tool-call ordinal of the function_call item at `output_index`, if it was seen.
    fn seen_tool(&self, output_index: u32) -> Option<u32> {
        self.tool_items.iter().position(|item| item.output_index == output_index).map(|ordinal| ordinal as u32)
    }

    /// The tool-call ordinal of the function_call item at `output_index`, assigned on first sight.
    fn tool_index(&mut self, output_index: u32) -> u32 {
        self.seen_tool(output_index).unwrap_or_else(|| {
            self.tool_items.push(ToolItem { output_index, arguments: String::new() });
            self.tool_items.len() as u32 - 1
        })
    }

    /// A fragment of the call at `index`'s arguments, kept to check its `.done` events against.
    fn push_arguments(
        &mut self,
        index: u32,
        id: Option<&str>,
        name: Option<&str>,
        fragment: &str,
        out: &mut Vec<Delta>,
    ) {
        self.tool_items[index as usize].arguments.push_str(fragment);
        let (id, name) = (id.map(str::to_string), name.map(str::to_string));
        out.push(Delta::ToolCall { index, id, name, arguments: fragment.to_string() });
    }

    /// The final arguments a `.done` event (`event`) gives the call at `index`. The fragments
    /// streamed must begin them, and whatever they left out streams now: all of them when no
    /// `.delta` came (some models send arguments only here), nothing when the deltas said it all
    /// (the second `.done`, or the first after deltas). Any other text disowns fragments the
    /// reader already has, which cannot be taken back: that fails the stream rather than hand
    /// the caller a tool call with arguments the provider did not make.
    fn finish_arguments(
        &mut self,
        index: u32,
        event: &str,
        done: &str,
        out: &mut Vec<Delta>,
    ) -> Result<(), DecodeError> {
        let item = &self.tool_items[index as usize];
        let Some(rest) = done.strip_prefix(item.arguments.as_str()) else {
            return Err(DecodeError::Protocol(format!(
                "openai_responses stream: {event} for output item {} gives arguments ({} bytes) that do not begin with the {} bytes its deltas streamed",
                item.output_index,
                done.len(),
                item.arguments.len()
            )));
        };
        if !rest.is_empty() {
            self.push_arguments(index, None, None, rest, out);
        }
        Ok(())
    }

    /// One event's deltas; the end's finish reason, usage and model come from its snapshot.
    fn on_response_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done || ev.data.trim().is_empty() {
            return Ok(());
        }
        let invalid = |e: &dyn std::fmt::Display| {
            let name = if ev.event.is_empty() { "data" } else { ev.event.as_str() };
            format!("openai_responses stream {name} event is not valid JSON: {e}")
        };
        let data = match parse_event(&ev.data) {
            Ok(data) => data,
            Err(e) => return self.malformed(ev, invalid(&e), out),
        };
        let (item, response) = (data.item.as_ref().map(from_tree), data.response.as_ref().map(from_tree));
        let parts = item
            .as_ref()
            .map(StreamItem::read)
            .transpose()
            .and_then(|item| Ok((item, response.as_ref().map(read_snapshot).transpose()?)));
        let (item, snapshot) = match parts {
            Ok(parts) => parts,
            Err(e) => return self.malformed(ev, invalid(&e), out),
        };
        let kind = data.kind.as_deref().unwrap_or(ev.event.as_str());
        if let Some(model) = snapshot.as_ref().and_then(|s| s.model).filter(|m| !m.is_empty()) {
            self.model = Some(model.to_string());
        }
        if let Some(s) = snapshot.as_ref().filter(|_| !matches!(kind, "response.completed" | "response.incomplete")) {
            self.usage = s.ending.usage;
        }
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                // Every delta has a list, empty unless the client asked (`include`).
                match data.logprobs.map(parse_value) {
                    Some(Ok(Value::Array(list))) if list.is_empty() => {}
                    Some(Ok(raw)) => out.push(Delta::Logprobs { logprobs: Logprobs { format: FORMAT, raw } }),
                    _ => {}
                }
                if let Some(text) = data.delta.filter(|t| !t.is_empty()) {
                    match kind {
                        "response.refusal.delta" => self.said.refusal = true,
                        _ => self.said.text = true,
                    }
                    Delta::push_text(out, text);
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(text) = data.delta.filter(|t| !t.is_empty()) {
                    let (part, reasoning) = match kind {
                        "response.reasoning_text.delta" => {
                            ((data.output_index.unwrap_or(0), None, data.content_index), ReasoningKind::Raw)
                        }
                        _ => ((data.output_index.unwrap_or(0), data.summary_index, None), ReasoningKind::Summary),
                    };
                    let text = match self.reasoning_part.replace(part) {
                        Some(last) if last != part => Cow::Owned(format!("\n\n{text}")),
                        _ => text,
                    };
                    Delta::push_reasoning(out, reasoning, text);
                }
            }
            "response.output_item.added" => match (item, data.output_index) {
                (Some(item), Some(output_index)) if item.kind == Some("function_call") => {
                    let index = self.tool_index(output_index);
                    self.open_items.push(output_index);
                    self.push_arguments(index, item.call_id, item.name, item.arguments.unwrap_or(""), out);
                }
                _ => {}
            },
            "response.function_call_arguments.delta" => {
                if let (Some(arguments), Some(output_index)) = (data.delta.filter(|t| !t.is_empty()), data.output_index)
                {
                    if self.skipped && self.seen_tool(output_index).is_none() {
                        return Err(DecodeError::Protocol(format!(
                            "openai_responses stream: function_call arguments for output item {output_index}, whose response.output_item.added was in a skipped malformed frame"
                        )));
                    }
                    let index = self.tool_index(output_index);
                    self.push_arguments(index, None, None, &arguments, out);
                }
            }
            "response.output_item.done" if item.as_ref().is_some_and(|i| i.kind == Some("reasoning")) => {
                if let Some(state) = item.and_then(|i| item_state(i.id, i.encrypted_content)) {
                    out.push(Delta::ReasoningState { state });
                }
            }
            "response.function_call_arguments.done" | "response.output_item.done" => {
                self.open_items.retain(|item| Some(*item) != data.output_index);
                let Some(output_index) = data.output_index else { return Ok(()) };
                let item = item.filter(|item| item.kind == Some("function_call"));
                let done = match kind {
                    "response.output_item.done" => item.as_ref().and_then(|item| item.arguments),
                    _ => data.arguments.as_deref(),
                };
                match (self.seen_tool(output_index), item) {
                    (Some(index), _) => {
                        if let Some(done) = done {
                            self.finish_arguments(index, kind, done, out)?;
                        }
                    }
                    // A call never announced by response.output_item.added comes whole from its
                    // item (a function_call_arguments.done before it has no id: it waits for it).
                    (None, Some(item)) => {
                        let index = self.tool_index(output_index);
                        self.push_arguments(index, item.call_id, item.name, item.arguments.unwrap_or(""), out);
                    }
                    (None, None) => {}
                }
            }
            "response.completed" | "response.incomplete" => {
                self.done = true;
                let (ending, snapshot_tool_calls) = match snapshot {
                    Some(s) => (Some(s.ending), s.tool_calls),
                    None => (None, 0),
                };
                if self.skipped && snapshot_tool_calls > self.tool_items.len() {
                    return Err(DecodeError::Protocol(format!(
                        "openai_responses stream: the response holds {snapshot_tool_calls} function_call items but {} were read: a skipped malformed frame held one",
                        self.tool_items.len()
                    )));
                }
                let called_tools = !self.tool_items.is_empty() || snapshot_tool_calls > 0;
                let (status, incomplete) = match &ending {
                    Some(e) => (e.status, e.incomplete),
                    None => (None, None),
                };
                // An incomplete event whose snapshot lost its status is still incomplete.
                let status = status.or((kind == "response.incomplete").then_some("incomplete"));
                out.push(Delta::Done {
                    finish_reason: self.said.finish(finish_reason(status, incomplete, called_tools)),
                    usage: ending.map(|e| e.usage).unwrap_or_default(),
                    model: self.model.take(),
                });
            }
            "response.failed" => {
                return Err(match snapshot.and_then(|s| s.ending.error) {
                    Some(error) => provider_error(error),
                    None => DecodeError::Provider {
                        status: 500,
                        message: "the response failed".into(),
                        code: None,
                        class: None,
                    },
                });
            }
            "error" => {
                if let Some(error) = data.error {
                    return Err(provider_error(&from_tree(&error)));
                }
                // The `error` event carries `code` and `message` at its top level.
                let mut said = Map::new();
                said.insert("code".into(), data.code.as_ref().map_or(Value::Null, from_tree));
                said.insert("message".into(), data.message.map_or(Value::Null, |m| Value::from(m.into_owned())));
                return Err(provider_error(&Value::Object(said)));
            }
            // created, in_progress, content_part.*, *.done and events added later carry nothing.
            _ => {}
        }
        Ok(())
    }
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, ev: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        self.on_response_event(ev, out)
    }

    /// From the response snapshot of an event before the end (`response.failed` may report what
    /// the failed response cost); `response.completed` and `response.incomplete` carry theirs in
    /// the `Done`.
    fn usage(&self) -> Usage {
        self.usage
    }

    fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        if self.done {
            Ok(())
        } else {
            Err(DecodeError::Protocol("openai_responses stream ended without response.completed".into()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{Message, Tool};
    use crate::format::test_endpoint;
    use crate::format::{provider, FailureClass};
    use llm_baton_wire::write::ToJson;
    use serde_json::json;

    fn endpoint(key: Option<&str>) -> Endpoint<'static> {
        test_endpoint("https://api.openai.com/v1", "gpt-5-mini", key, &[("openai-organization", "org-1")])
    }

    fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
        req.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn event(name: &str, data: &str) -> SseEvent {
        SseEvent { event: name.into(), data: data.into(), id: None }
    }

    /// The output texts' logprobs, kept as the provider wrote them for a Responses client: whole
    /// (one list across the parts), and streamed before the text of their delta; none when the
    /// lists are empty (as every answer has them).
    #[test]
    fn logprobs_are_kept_whole_and_before_their_deltas_text() {
        let entry = |token: &str| json!({"token": token, "logprob": -0.5, "bytes": [], "top_logprobs": []});
        let part = |text: &str, logprobs: Value| json!({"type": "output_text", "text": text, "annotations": [], "logprobs": logprobs});
        let body = |parts: Value| {
            json!({"status": "completed", "output": [{"type": "message", "role": "assistant", "content": parts}]})
                .to_string()
        };
        let answer = OpenaiResponses::decode_answer(
            body(json!([part("Hi", json!([entry("Hi")])), part(" you", json!([entry(" you")]))])).as_bytes(),
        )
        .unwrap();
        assert_eq!(answer.logprobs, Some(Logprobs { format: FORMAT, raw: json!([entry("Hi"), entry(" you")]) }));
        let plain = OpenaiResponses::decode_answer(body(json!([part("Hi", json!([]))])).as_bytes()).unwrap();
        assert_eq!(plain.logprobs, None);

        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        let delta = |text: &str, logprobs: Value| {
            json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": text, "logprobs": logprobs})
                .to_string()
        };
        d.on_event(&event("response.output_text.delta", &delta("Hi", json!([entry("Hi")]))), &mut out).unwrap();
        d.on_event(&event("response.output_text.delta", &delta("!", json!([]))), &mut out).unwrap();
        assert_eq!(
            out,
            [
                Delta::Logprobs { logprobs: Logprobs { format: FORMAT, raw: json!([entry("Hi")]) } },
                Delta::Text { text: "Hi!".into() },
            ]
        );
    }

    #[test]
    fn builds_url_headers_and_body() {
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
                Message::new(Role::Assistant, "18C in Paris."),
            ],
            max_tokens: Some(64),
            temperature: Some(1.0),
            stop: vec!["never sent".into()],
            tools: vec![Tool {
                name: "get_weather".into(),
                description: Some("Weather".into()),
                parameters: json!({"type": "object"}),
            }],
            ..Default::default()
        };
        let http = OpenaiResponses::build_request(&endpoint(Some("sk-secret")), &req, true);
        assert_eq!(http.url, "https://api.openai.com/v1/responses");
        assert_eq!(header(&http, "authorization"), Some("Bearer sk-secret"));
        assert_eq!(header(&http, "openai-organization"), Some("org-1"));
        assert_eq!(
            serde_json::from_str::<Value>(&http.body).expect("json"),
            json!({
                "model": "gpt-5-mini",
                "instructions": "be brief",
                "input": [
                    {"role": "user", "content": "weather?"},
                    {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "18C"},
                    {"role": "assistant", "content": "18C in Paris."}
                ],
                "max_output_tokens": 64,
                "temperature": 1.0,
                "tools": [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": {"type": "object"}, "strict": false}],
                "stream": true
            })
        );
        assert!(!format!("{http:?}").contains("sk-secret"));
        let http = OpenaiResponses::build_request(&endpoint(None), &ChatRequest::default(), false);
        assert_eq!(header(&http, "authorization"), None);
        assert_eq!(
            serde_json::from_str::<Value>(&http.body).expect("json"),
            json!({"model": "gpt-5-mini", "input": [], "stream": false})
        );
    }

    #[test]
    fn decodes_a_whole_answer() {
        let body = br#"{"id":"resp_1","object":"response","created_at":1,"status":"completed","error":null,
            "incomplete_details":null,"model":"gpt-5-mini-2025-08-07","output":[
              {"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking."}]},
              {"id":"msg_1","type":"message","status":"completed","role":"assistant",
               "content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hello."}]},
              {"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f","arguments":"{}"}],
            "usage":{"input_tokens":11,"input_tokens_details":{"cached_tokens":0},"output_tokens":22,
              "output_tokens_details":{"reasoning_tokens":8},"total_tokens":33}}"#;
        let answer = OpenaiResponses::decode_answer(body).expect("decodes");
        assert_eq!(answer.text, "Hello.");
        assert_eq!(answer.reasoning, "Thinking.");
        assert_eq!(
            answer.tool_calls,
            [ToolCall { id: "call_1".into(), name: "f".into(), arguments: "{}".into(), state: None }]
        );
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        assert_eq!(answer.usage, Usage { input_tokens: Some(11), output_tokens: Some(22) });
        assert_eq!(answer.model.as_deref(), Some("gpt-5-mini-2025-08-07"));

        let cut = br#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
        assert_eq!(OpenaiResponses::decode_answer(cut).map(|a| a.finish_reason), Ok(FinishReason::Length));
        let filtered = br#"{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}"#;
        assert_eq!(OpenaiResponses::decode_answer(filtered).map(|a| a.finish_reason), Ok(FinishReason::ContentFilter));
    }

    #[test]
    fn rejects_bodies_that_are_not_responses() {
        assert_eq!(
            OpenaiResponses::decode_answer(br#"{"object":"response","status":"completed"}"#),
            Err(DecodeError::Protocol("openai_responses answer has no output".into()))
        );
        assert!(
            matches!(OpenaiResponses::decode_answer(b""), Err(DecodeError::Protocol(m)) if m.contains("openai_responses"))
        );
        assert_eq!(
            OpenaiResponses::decode_answer(
                br#"{"status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}"#
            ),
            Err(provider(500, "boom", Some("server_error"), None))
        );
        assert_eq!(
            OpenaiResponses::decode_answer(
                br#"{"error":{"message":"Rate limit","type":"requests","code":"rate_limit_exceeded"}}"#
            ),
            Err(provider(429, "Rate limit", Some("rate_limit_exceeded"), Some(FailureClass::RateLimit)))
        );
    }

    #[test]
    fn streams_reasoning_text_tool_calls_and_done() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for (name, data) in [
            (
                "response.created",
                r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[],"usage":null}}"#,
            ),
            (
                "response.in_progress",
                r#"{"type":"response.in_progress","sequence_number":1,"response":{"status":"in_progress","output":[]}}"#,
            ),
            (
                "response.reasoning_summary_text.delta",
                r#"{"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Hmm"}"#,
            ),
            (
                "response.output_item.added",
                r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
            ),
            (
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi","logprobs":[]}"#,
            ),
            (
                "response.output_item.added",
                r#"{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"f"}}"#,
            ),
            (
                "response.function_call_arguments.delta",
                r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{}"}"#,
            ),
            (
                "response.completed",
                r#"{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]},{"type":"function_call"}],"usage":{"input_tokens":4,"output_tokens":9}}}"#,
            ),
            ("error", r#"{"type":"error","code":"server_error","message":"ignored after done"}"#),
        ] {
            d.on_event(&event(name, data), &mut out).expect("decodes");
        }
        d.finish(&mut out).expect("finished");
        assert_eq!(
            out,
            [
                Delta::Reasoning { text: "Hmm".into(), kind: ReasoningKind::Summary },
                Delta::Text { text: "Hi".into() },
                Delta::ToolCall {
                    index: 0,
                    id: Some("call_1".into()),
                    name: Some("f".into()),
                    arguments: String::new()
                },
                Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() },
                Delta::Done {
                    finish_reason: FinishReason::ToolCalls,
                    usage: Usage { input_tokens: Some(4), output_tokens: Some(9) },
                    model: None,
                },
            ]
        );
    }

    /// Raw reasoning (`content` of `reasoning_text`, as open-weight servers give it) reads as raw,
    /// whole or streamed, and goes back as content; a summary goes back as summary.
    #[test]
    fn raw_reasoning_reads_as_raw_and_goes_back_as_content() {
        let body = br#"{"status":"completed","output":[
              {"id":"rs_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Units."}]},
              {"id":"rs_2","type":"reasoning","summary":[{"type":"summary_text","text":"Short."}]},
              {"type":"message","content":[{"type":"output_text","text":"9.8"}]}]}"#;
        let answer = OpenaiResponses::decode_answer(body).expect("decodes");
        let kinds: Vec<_> = answer.reasoning_parts.iter().map(|p| (p.text.as_str(), p.kind)).collect();
        assert_eq!(kinds, [("Units.", ReasoningKind::Raw), ("\n\nShort.", ReasoningKind::Summary)]);

        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        let delta = r#"{"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":"Units."}"#;
        d.on_event(&event("response.reasoning_text.delta", delta), &mut out).expect("decodes");
        assert_eq!(out, [Delta::Reasoning { text: "Units.".into(), kind: ReasoningKind::Raw }]);

        let mut parts = answer.reasoning_parts.clone();
        for part in &mut parts {
            part.state.as_mut().expect("a state").issued_by(FORMAT, "gpt-5-mini");
        }
        let message = Message { reasoning: parts, ..Message::new(Role::Assistant, "9.8") };
        let request = ChatRequest { messages: vec![message], ..Default::default() };
        let http = OpenaiResponses::build_request(&endpoint(None), &request, false);
        let input = serde_json::from_str::<Value>(&http.body).expect("json")["input"].clone();
        assert_eq!(
            input[0],
            json!({"type": "reasoning", "id": "rs_1", "content": [{"type": "reasoning_text", "text": "Units."}], "summary": []})
        );
        assert_eq!(
            input[1],
            json!({"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "Short."}]})
        );
    }

    /// The function call events of one call at output_index 0, as the API names them.
    fn call_events(events: &[(&str, &str)]) -> (Vec<Delta>, Result<(), DecodeError>) {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        for (name, data) in events {
            let data = format!(r#"{{"type":"{name}","output_index":0,{data}}}"#);
            if let Err(e) = d.on_event(&event(name, &data), &mut out) {
                return (out, Err(e));
            }
        }
        (out, Ok(()))
    }

    const ADDED: (&str, &str) = (
        "response.output_item.added",
        r#""item":{"type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"f"}"#,
    );
    const ARGS_DONE: (&str, &str) =
        ("response.function_call_arguments.done", r#""item_id":"fc_1","arguments":"{\"a\":1}""#);
    const ITEM_DONE: (&str, &str) = (
        "response.output_item.done",
        r#""item":{"type":"function_call","status":"completed","arguments":"{\"a\":1}","call_id":"call_1","name":"f"}"#,
    );

    fn args(fragment: &str) -> (&'static str, String) {
        ("response.function_call_arguments.delta", format!(r#""item_id":"fc_1","delta":{}"#, fragment.to_json()))
    }

    fn opening() -> Delta {
        Delta::ToolCall { index: 0, id: Some("call_1".into()), name: Some("f".into()), arguments: String::new() }
    }

    fn fragment(arguments: &str) -> Delta {
        Delta::ToolCall { index: 0, id: None, name: None, arguments: arguments.into() }
    }

    #[test]
    fn arguments_sent_only_in_the_done_events_stream_once() {
        // gpt-5.3-codex-spark: no `.delta`, the arguments in both `.done` events.
        assert_eq!(call_events(&[ADDED, ARGS_DONE, ITEM_DONE]), (vec![opening(), fragment(r#"{"a":1}"#)], Ok(())));
        // Only in the item of `response.output_item.done`.
        assert_eq!(call_events(&[ADDED, ITEM_DONE]), (vec![opening(), fragment(r#"{"a":1}"#)], Ok(())));
        // A call never announced by `response.output_item.added` comes whole from its item; its
        // `function_call_arguments.done`, which has no id, waits for it.
        let whole = Delta::ToolCall {
            index: 0,
            id: Some("call_1".into()),
            name: Some("f".into()),
            arguments: r#"{"a":1}"#.into(),
        };
        assert_eq!(call_events(&[ARGS_DONE, ITEM_DONE]), (vec![whole.clone()], Ok(())));
        assert_eq!(call_events(&[ITEM_DONE]), (vec![whole], Ok(())));
    }

    #[test]
    fn arguments_streamed_in_deltas_are_never_sent_twice() {
        let (a, b) = (args(r#"{"a":"#), args("1}"));
        let events = [ADDED, (a.0, a.1.as_str()), (b.0, b.1.as_str()), ARGS_DONE, ITEM_DONE];
        assert_eq!(call_events(&events), (vec![opening(), fragment(r#"{"a":"#), fragment("1}")], Ok(())));
        // Arguments in the opening item count as streamed too.
        let added_whole = ADDED.1.replace(r#""arguments":"""#, r#""arguments":"{\"a\":1}""#);
        let opened = Delta::ToolCall {
            index: 0,
            id: Some("call_1".into()),
            name: Some("f".into()),
            arguments: r#"{"a":1}"#.into(),
        };
        assert_eq!(call_events(&[(ADDED.0, &added_whole), ARGS_DONE, ITEM_DONE]), (vec![opened], Ok(())));
    }

    #[test]
    fn final_arguments_stream_what_the_deltas_left_out() {
        let a = args(r#"{"a":"#);
        let events = [ADDED, (a.0, a.1.as_str()), ARGS_DONE, ITEM_DONE];
        assert_eq!(call_events(&events), (vec![opening(), fragment(r#"{"a":"#), fragment("1}")], Ok(())));
    }

    #[test]
    fn final_arguments_that_disown_the_streamed_ones_fail_the_stream() {
        let a = args(r#"{"b":2}"#);
        let (out, end) = call_events(&[ADDED, (a.0, a.1.as_str()), ARGS_DONE, ITEM_DONE]);
        assert_eq!(out, [opening(), fragment(r#"{"b":2}"#)]);
        assert_eq!(
            end,
            Err(DecodeError::Protocol(
                "openai_responses stream: response.function_call_arguments.done for output item 0 gives arguments (7 bytes) that do not begin with the 7 bytes its deltas streamed".into()
            ))
        );
        // The item's final arguments are checked as well, after a `.done` that agreed.
        let other_item = ITEM_DONE.1.replace(r#"{\"a\":1}"#, r#"{\"a\":2}"#);
        let (out, end) = call_events(&[ADDED, ARGS_DONE, (ITEM_DONE.0, &other_item)]);
        assert_eq!(out, [opening(), fragment(r#"{"a":1}"#)]);
        assert!(
            matches!(&end, Err(DecodeError::Protocol(m)) if m.contains("response.output_item.done for output item 0")),
            "{end:?}"
        );
    }

    #[test]
    fn incomplete_is_a_done_with_its_reason() {
        let mut d = StreamDecoder::default();
        let mut out = Vec::new();
        let data = r#"{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":1,"output_tokens":2}}}"#;
        d.on_event(&event("response.incomplete", data), &mut out).expect("decodes");
        assert_eq!(
            out,
            [Delta::Done {
                finish_reason: FinishReason::Length,
                usage: Usage { input_tokens: Some(1), output_tokens: Some(2) },
                model: None,
            }]
        );
    }

    #[test]
    fn stream_errors_carry_the_code_and_class() {
        use FailureClass::*;
        let cases = [
            (
                "error",
                r#"{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model. Please adjust your input and try again.","param":"input","sequence_number":1}"#,
                provider(
                    400,
                    "Your input exceeds the context window of this model. Please adjust your input and try again.",
                    Some("context_length_exceeded"),
                    Some(ContextLength),
                ),
            ),
            (
                "response.failed",
                r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"insufficient_quota","message":"You exceeded your current quota."}}}"#,
                provider(429, "You exceeded your current quota.", Some("insufficient_quota"), Some(Quota)),
            ),
            (
                "error",
                r#"{"type":"error","error":{"type":"invalid_request_error","code":"invalid_prompt","message":"Invalid prompt: your prompt was flagged as potentially violating our usage policy."}}"#,
                provider(
                    400,
                    "Invalid prompt: your prompt was flagged as potentially violating our usage policy.",
                    Some("invalid_prompt"),
                    Some(ContentFilter),
                ),
            ),
        ];
        for (name, data, expected) in cases {
            let mut out = Vec::new();
            assert_eq!(StreamDecoder::default().on_event(&event(name, data), &mut out), Err(expected), "{data}");
        }
    }

    #[test]
    fn stream_errors_and_truncation() {
        let mut out = Vec::new();
        let failed = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"}}}"#;
        assert_eq!(
            StreamDecoder::default().on_event(&event("response.failed", failed), &mut out),
            Err(provider(429, "slow down", Some("rate_limit_exceeded"), Some(FailureClass::RateLimit)))
        );
        let error = r#"{"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null}"#;
        assert_eq!(
            StreamDecoder::default().on_event(&event("error", error), &mut out),
            Err(provider(500, "Something went wrong", Some("ERR_SOMETHING"), None))
        );
        let mut d = StreamDecoder::default();
        assert_eq!(d.on_event(&event("response.output_text.delta", "{\"delta\":"), &mut out), Ok(()));
        assert!(matches!(
            out.pop(),
            Some(Delta::Skipped { reason }) if reason.contains("openai_responses") && reason.contains("response.output_text.delta")
        ));
        assert_eq!(
            d.finish(&mut out),
            Err(DecodeError::Protocol("openai_responses stream ended without response.completed".into()))
        );
        assert!(out.is_empty());
    }
}
