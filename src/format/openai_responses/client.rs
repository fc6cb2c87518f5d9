//! OpenAI Responses as a gateway client speaks it: `POST /v1/responses`.
//!
//! Newer OpenAI clients and agent frameworks speak only this API, so the gateway serves it from
//! any route. Requests: `input` as a string or a list of items (messages whose content is a
//! string or parts: `input_text`, `input_image` by URL or `data:` URL, `input_file` by
//! `file_data` or `file_url`, an assistant's `output_text`; `function_call` and
//! `function_call_output` items; `reasoning` items the gateway wrote), `instructions` as the system prompt, function tools, `tool_choice`,
//! `text.format`, `max_output_tokens`, `temperature`, `top_p`, `parallel_tool_calls`. The API's
//! state lives at OpenAI (`store`, `previous_response_id`, `conversation`, stored prompts,
//! `item_reference`, uploaded `file_id`s) and its built-in tools run there; the gateway keeps no
//! state and runs no tools, so each of those is a 400 naming the field rather than a silent
//! change of meaning.
//!
//! Answers are the whole Response object of OpenAI's reference and the Open Responses spec (every
//! field either requires, the request's settings or their documented defaults: `write_response`),
//! whose `output` holds a `reasoning` item per piece of reasoning (raw reasoning as its one
//! `reasoning_text` content part, a summary as its one summary part), a `message` item and one
//! `function_call` item per call; a
//! reasoning item's state rides in its `id` and a call's in its `call_id`
//! (src/format/client/state_id.rs), the encrypted content of a Responses target's item in its
//! own `encrypted_content`; a replayed reasoning item whose id carries no state (one another
//! server wrote) is dropped, as state from elsewhere is. An item's id is in its
//! `output_item.added` and never changes (the SDK checks), so a stream holds a reasoning item
//! until the state that ends it (its text then comes in one delta) and a call's item until
//! the delta after it, which may be its state. A length cut is
//! `status: "incomplete"` with `incomplete_details.reason`. A stream is the API's semantic
//! events, each with its `sequence_number`, in the order the `openai` SDK's `responses.stream()`
//! accumulates them: `response.created`, `response.in_progress`, then per item
//! `output_item.added`, its part's `added`, the deltas, the `done`s and `output_item.done`, and
//! last `response.completed` (or `response.incomplete`) with the whole output and the usage. A
//! failure after the stream began is `response.failed` and then an `error` event, which the SDK
//! throws, and never a `response.completed`. A stream continued on another member (afterStart)
//! goes on in the same items: the client reads one response.

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use super::provider::FORMAT;
use super::{ending, OpenaiResponses};
use crate::chat::{
    Answer, ChatRequest, Delta, FinishReason, Logprobs, Message, Opaque, Part, ReasoningKind, ReasoningPart,
    ReasoningRequest, ReasoningState, ResponseFormat, Role, Tool, ToolCall, ToolChoice, Usage,
};
use crate::format::client::field::{self, child};
use crate::format::client::state_id;
use crate::format::client::{
    media, sse, string_or_null, ClientCall, ClientDialect, Conversation, GatewayError, Meta, StreamEncoding,
};
use crate::format::openai_chat::client::{schema, write_error_object};
use crate::format::openai_chat::OpenaiChat;
use crate::value::{index_path, FieldError};

/// The request fields that name state stored at OpenAI, each refused by name with what to send
/// instead.
const STATEFUL: &[(&str, &str)] = &[
    ("previous_response_id", "send the earlier turns in input instead"),
    ("conversation", "send the conversation's turns in input instead"),
    ("prompt", "send the prompt's text as instructions and input instead"),
];

/// The request fields this dialect reads (maps into the request, or refuses: `store` and
/// `background` when true, the [`STATEFUL`] ones); the others go on unchanged to an
/// openai_responses member ([`field::passthrough`]).
pub(crate) const READ: &[&str] = &[
    "model",
    "stream",
    "store",
    "background",
    "previous_response_id",
    "conversation",
    "prompt",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "text",
    "max_output_tokens",
    "temperature",
    "top_p",
    "parallel_tool_calls",
    "reasoning",
];

fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
    let o = field::object(body, "body")?;
    let model = field::string(o, "model", "", "the name of a route, e.g. \"chat\"")?.to_string();
    let stream = field::opt_bool(o, "stream", "")?;
    if field::opt_bool(o, "store", "")? {
        return Err(FieldError::new(
            "store",
            "must be false or omitted (got true): the gateway keeps no responses; keep the conversation \
             yourself and send it as input",
        ));
    }
    if field::opt_bool(o, "background", "")? {
        return Err(FieldError::new(
            "background",
            "must be false or omitted (got true): the gateway keeps no responses to poll; stream \
             instead",
        ));
    }
    for (key, instead) in STATEFUL {
        if field::opt(o, key).is_some() {
            return Err(FieldError::new(
                *key,
                format!("is not supported: it names state stored at OpenAI, and the gateway keeps none; {instead}"),
            ));
        }
    }
    let mut conversation = Conversation::default();
    let instructions = field::opt_string(o, "instructions", "")?;
    if let Some(text) = instructions {
        conversation.push(Message::new(Role::System, text), "instructions", None);
    }
    match field::opt(o, "input") {
        None => return Err(field::missing("input", "a string or a list of input items")),
        Some(Value::String(s)) => conversation.push(Message::new(Role::User, s.clone()), "input", None),
        Some(v) => {
            let items = field::array(v, "input", "a string or a list of input items")?;
            if items.is_empty() {
                return Err(FieldError::new("input", "must hold at least one item (got [])"));
            }
            for (i, item) in items.iter().enumerate() {
                input_item(item, &index_path("input", i), &mut conversation)?;
            }
        }
    }
    let tools: Vec<Tool> = field::opt_list(o, "tools", "a list of tools", tool)?;
    let tool_choice = match field::opt(o, "tool_choice") {
        None => None,
        Some(v) => Some(crate::format::client::check_tool_choice(tool_choice(v)?, &tools, "tool_choice")?),
    };
    let response_format = text_format(field::opt(o, "text"))?;
    let max_tokens = field::opt_tokens(o, "max_output_tokens", "")?;
    let temperature = field::opt_temperature(o, "temperature", "")?;
    let top_p = field::opt_top_p(o, "top_p", "")?;
    let parallel_tool_calls = field::opt_flag(o, "parallel_tool_calls", "")?;
    for key in ["frequency_penalty", "presence_penalty", "top_logprobs"] {
        if let Some(v) = field::opt(o, key).filter(|v| !v.is_null() && !v.is_number()) {
            return Err(field::wrong(key, "a number", v));
        }
    }
    // The settings the response repeats, as sent (each read above, where the gateway reads it);
    // write_response gives those not sent their defaults. Inserted one by one: collecting into a
    // Map sorts the pairs first, which links a stable sort.
    let mut echo = Map::new();
    for key in REPEATED {
        if let Some(v) = field::opt(o, key).filter(|v| !v.is_null()) {
            echo.insert(key.to_string(), v.clone());
        }
    }
    let echo = Value::Object(echo);
    let Conversation { messages, origins } = conversation;
    let request = ChatRequest {
        messages,
        max_tokens,
        temperature,
        top_p,
        tools,
        tool_choice,
        parallel_tool_calls,
        response_format,
        reasoning: reasoning(o)?,
        passthrough: field::passthrough(o, READ, FORMAT),
        ..Default::default()
    };
    Ok(ClientCall { model, stream, include_usage: false, request, echo, origins })
}

/// The request's settings a response repeats as they were sent.
const REPEATED: [&str; 18] = [
    "frequency_penalty",
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "metadata",
    "parallel_tool_calls",
    "presence_penalty",
    "prompt_cache_key",
    "reasoning",
    "safety_identifier",
    "service_tier",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_logprobs",
    "top_p",
    "user",
];

/// `reasoning: {effort?, summary?}`, as the request's `reasoning`; a summary other than `"none"`
/// asks for one.
fn reasoning(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, FieldError> {
    let Some(v) = field::opt(o, "reasoning") else { return Ok(None) };
    let r = field::object(v, "reasoning")?;
    let summary = field::opt_string(r, "summary", "reasoning")?.map(|s| s != "none");
    Ok(field::effort(r, "effort", "reasoning")?.map(|effort| ReasoningRequest { effort, summary, budget_tokens: None }))
}

/// One input item, appended as normalized messages.
fn input_item(v: &Value, path: &str, out: &mut Conversation) -> Result<(), FieldError> {
    let o = field::object(v, path)?;
    const KINDS: &[&str] = &["message", "function_call", "function_call_output", "reasoning"];
    let kind = match field::opt_string(o, "type", path)? {
        None => "message",
        Some("item_reference") => {
            return Err(FieldError::new(
                path,
                "is an item_reference, which names an item stored at OpenAI; the gateway keeps none: send \
                 the item itself",
            ))
        }
        Some(kind) if KINDS.contains(&kind) => kind,
        Some(other) => {
            let listed: Vec<String> = KINDS.iter().map(|k| format!("\"{k}\"")).collect();
            return Err(FieldError::new(
                format!("{path}.type"),
                format!(
                    "must be one of {} (got {}); built-in tool items run at OpenAI only",
                    listed.join(", "),
                    other.to_json()
                ),
            ));
        }
    };
    match kind {
        "message" => {
            let role = match field::one_of(o, "role", path, &["user", "assistant", "system", "developer"])? {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                _ => Role::System,
            };
            let content = message_content(o, role, path)?;
            // One part per element of a content list.
            let indices = o.get("content").and_then(Value::as_array).map(|parts| (0..parts.len()).collect());
            // The turn's reasoning items came before its message.
            let mut reasoning = Vec::new();
            if role == Role::Assistant && out.messages.last().is_some_and(reasoning_only) {
                reasoning = out.messages.pop().map(|m| m.reasoning).unwrap_or_default();
                out.origins.pop();
            }
            out.push(Message { content, reasoning, ..Message::new(role, "") }, child(path, "content"), indices);
        }
        "function_call" => {
            let carried =
                state_id::decode(field::string(o, "call_id", path, "the id of the call, as the model gave it")?);
            let call = ToolCall {
                id: carried.id,
                name: field::string(o, "name", path, "the function's name")?.to_string(),
                arguments: field::opt_string(o, "arguments", path)?.unwrap_or("").to_string(),
                state: carried.state,
            };
            // A turn's calls follow its text: they belong to the assistant message before them.
            match out.messages.last_mut() {
                Some(last) if last.role == Role::Assistant => last.tool_calls.push(call),
                _ => out.push(Message { tool_calls: vec![call], ..Message::new(Role::Assistant, "") }, path, None),
            }
        }
        "function_call_output" => {
            let id = field::string(o, "call_id", path, "the id of the function_call this answers")?;
            let op = child(path, "output");
            let text = match field::opt(o, "output") {
                None => return Err(field::missing(&op, "the call's result as a string")),
                Some(Value::String(s)) => s.clone(),
                Some(v) => text_parts(field::array(v, &op, "a string or a list of input_text parts")?, &op)?,
            };
            out.push(
                Message { tool_call_id: Some(state_id::original_id(id)), ..Message::new(Role::Tool, text) },
                op,
                None,
            );
        }
        _ => reasoning_item(o, path, out)?,
    }
    Ok(())
}

/// A replayed `reasoning` item, the start of an assistant turn: its summary's text with the state
/// its id carries (a Responses item's encrypted content from its own field). An item whose id
/// carries none is dropped: its issuer is not known.
fn reasoning_item(o: &Map<String, Value>, path: &str, out: &mut Conversation) -> Result<(), FieldError> {
    let Some(mut state) = field::opt_string(o, "id", path)?.and_then(|id| state_id::decode(id).state) else {
        return Ok(());
    };
    if let Opaque::Item { encrypted_content, .. } = &mut state.opaque {
        *encrypted_content = field::opt_string(o, "encrypted_content", path)?.map(str::to_string);
    }
    // Its raw reasoning (`content`), else its summary.
    let mut text = String::new();
    let mut kind = ReasoningKind::Summary;
    for (key, expected, of_kind) in [
        ("summary", "a list of summary_text parts", ReasoningKind::Summary),
        ("content", "a list of reasoning_text parts", ReasoningKind::Raw),
    ] {
        let Some(v) = field::opt(o, key) else { continue };
        let lp = child(path, key);
        let mut list_text = String::new();
        for (i, part) in field::array(v, &lp, expected)?.iter().enumerate() {
            let pp = index_path(&lp, i);
            list_text.push_str(field::string(field::object(part, &pp)?, "text", &pp, "the part's text")?);
        }
        if !list_text.is_empty() {
            (text, kind) = (list_text, of_kind);
        }
    }
    let part = ReasoningPart { text, kind, state: Some(state) };
    match out.messages.last_mut() {
        Some(last) if reasoning_only(last) => last.reasoning.push(part),
        _ => out.push(Message { reasoning: vec![part], ..Message::new(Role::Assistant, "") }, path, None),
    }
    Ok(())
}

/// An assistant turn begun by reasoning items, its message and calls still to come.
fn reasoning_only(m: &Message) -> bool {
    m.role == Role::Assistant && !m.reasoning.is_empty() && m.content.is_empty() && m.tool_calls.is_empty()
}

/// A message item's `content`: a string or a list of parts: `input_text`, `input_image` and
/// `input_file` from the client's side (images and files in user messages only), `output_text`
/// or `refusal` from an assistant's.
fn message_content(o: &Map<String, Value>, role: Role, path: &str) -> Result<Vec<Part>, FieldError> {
    let cp = child(path, "content");
    match field::opt(o, "content") {
        None => Err(field::missing(&cp, "a string or a list of content parts")),
        Some(Value::String(s)) => Ok(Message::new(role, s.clone()).content),
        Some(v) => {
            let parts = field::array(v, &cp, "a string or a list of content parts")?;
            let allowed: &[&str] = if role == Role::Assistant {
                &["output_text", "refusal", "input_text"]
            } else {
                &["input_text", "input_image", "input_file"]
            };
            parts
                .iter()
                .enumerate()
                .map(|(i, part)| {
                    let pp = index_path(&cp, i);
                    media::check_part(content_part(part, &pp, allowed)?, role, &pp)
                })
                .collect()
        }
    }
}

/// The text of a list of `input_text` parts (a function call's output).
fn text_parts(parts: &[Value], path: &str) -> Result<String, FieldError> {
    let mut text = String::new();
    for (i, part) in parts.iter().enumerate() {
        let pp = index_path(path, i);
        if let Part::Text { text: t } = content_part(part, &pp, &["input_text"])? {
            text.push_str(&t);
        }
    }
    Ok(text)
}

/// One content part of a type in `allowed`.
fn content_part(v: &Value, path: &str, allowed: &[&str]) -> Result<Part, FieldError> {
    let o = field::object(v, path)?;
    let listed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
    let expected = format!("one of {}", listed.join(", "));
    let kind = field::string(o, "type", path, &expected)?;
    if !allowed.contains(&kind) {
        return Err(FieldError::new(format!("{path}.type"), format!("must be {expected} (got {})", kind.to_json())));
    }
    Ok(match kind {
        "refusal" => Part::Text { text: field::string(o, "refusal", path, "the refusal's text")?.to_string() },
        "input_image" => {
            if field::opt(o, "file_id").is_some() && field::opt(o, "image_url").is_none() {
                let instead = "send the image as image_url (a URL or a data: URL) instead";
                return Err(media::stored_file(&child(path, "file_id"), instead));
            }
            let url = field::string(o, "image_url", path, "the image's URL or a data: URL")?;
            Part::Image { source: media::from_url(url, None, &child(path, "image_url"))? }
        }
        "input_file" => input_file(o, path)?,
        _ => Part::Text { text: field::string(o, "text", path, "the part's text")?.to_string() },
    })
}

/// `input_file`: `file_data` (a data: URL) with its `filename`, or a `file_url`.
fn input_file(o: &Map<String, Value>, path: &str) -> Result<Part, FieldError> {
    let filename = field::opt_string(o, "filename", path)?;
    let source = match (field::opt_string(o, "file_data", path)?, field::opt_string(o, "file_url", path)?) {
        (Some(data), None) if data.starts_with("data:") => media::from_url(data, None, &child(path, "file_data"))?,
        (Some(data), None) => match filename.and_then(media::media_type_of_name) {
            Some(media_type) if !data.is_empty() => media::from_data(data, media_type, path)?,
            _ => {
                return Err(FieldError::new(
                    format!("{path}.file_data"),
                    "must be a data: URL (data:application/pdf;base64,<data>), or base64 with a \
                     filename ending in .pdf or .txt",
                ))
            }
        },
        (None, Some(url)) => {
            let named = filename.and_then(media::media_type_of_name).or_else(|| media::media_type_of_name(url));
            media::from_url(url, Some(named.unwrap_or("application/pdf")), &child(path, "file_url"))?
        }
        (Some(_), Some(_)) => {
            return Err(FieldError::new(path, "has both file_data and file_url; give one"));
        }
        (None, None) if field::opt(o, "file_id").is_some() => {
            let instead = "send the file's bytes as file_data, or its file_url, instead";
            return Err(media::stored_file(&child(path, "file_id"), instead));
        }
        (None, None) => return Err(field::missing(&child(path, "file_data"), "the file as a data: URL")),
    };
    Ok(Part::File { source, filename: filename.map(str::to_string) })
}

/// A function tool, `{type: "function", name, description?, parameters?, strict?}`.
fn tool(v: &Value, path: &str) -> Result<Tool, FieldError> {
    let o = field::object(v, path)?;
    let kind = field::string(o, "type", path, "\"function\"")?;
    if kind != "function" {
        return Err(FieldError::new(
            format!("{path}.type"),
            format!(
                "must be \"function\" (got {}); built-in tools run at OpenAI only, the gateway forwards \
             function tools",
                kind.to_json()
            ),
        ));
    }
    field::opt_bool(o, "strict", path)?;
    Ok(Tool {
        name: field::string(o, "name", path, "the function's name")?.to_string(),
        description: field::opt_string(o, "description", path)?.map(str::to_string),
        parameters: schema(field::opt(o, "parameters"), &child(path, "parameters"))?,
    })
}

/// `tool_choice`: `"auto"`, `"none"`, `"required"` or `{type: "function", name}`.
fn tool_choice(v: &Value) -> Result<ToolChoice, FieldError> {
    const EXPECTED: &str = "\"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...}";
    match v {
        Value::String(s) => {
            crate::format::client::tool_choice_word(s).ok_or_else(|| field::wrong("tool_choice", EXPECTED, v))
        }
        Value::Object(o) => {
            let kind = field::string(o, "type", "tool_choice", "\"function\"")?;
            if kind != "function" {
                return Err(FieldError::new(
                    "tool_choice.type",
                    format!("must be \"function\" (got {}); built-in tools run at OpenAI only", kind.to_json()),
                ));
            }
            Ok(ToolChoice::Tool {
                name: field::string(o, "name", "tool_choice", "the name of one of the tools")?.to_string(),
            })
        }
        other => Err(field::wrong("tool_choice", EXPECTED, other)),
    }
}

/// `text.format`: `{type: "text"}` (none), `{type: "json_object"}`, or `{type: "json_schema",
/// name, schema, description?, strict?}`.
fn text_format(v: Option<&Value>) -> Result<Option<ResponseFormat>, FieldError> {
    let Some(v) = v else { return Ok(None) };
    let Some(format) = field::opt(field::object(v, "text")?, "format") else { return Ok(None) };
    let f = field::object(format, "text.format")?;
    match field::one_of(f, "type", "text.format", &["text", "json_object", "json_schema"])? {
        "text" => Ok(None),
        "json_object" => Ok(Some(ResponseFormat::Json { schema: None, name: None, description: None, strict: None })),
        _ => {
            field::string(f, "name", "text.format", "the schema's name, e.g. \"answer\"")?;
            crate::format::client::json_schema_format(f, "text.format").map(Some)
        }
    }
}

// ---- answers ----

/// The part of the response id after `resp_`, which the item ids repeat.
fn id_suffix(meta: &Meta) -> &str {
    meta.id.strip_prefix("resp_").unwrap_or(&meta.id)
}

/// An output item's id: `msg_…`, `rs_…` or `fc_…`, unique within the response.
fn item_id(meta: &Meta, prefix: &str, output_index: usize) -> String {
    format!("{prefix}_{}_{output_index}", id_suffix(meta))
}

/// A tool call's id as given, or one made up when the provider gave none (Gemini).
fn call_id(meta: &Meta, index: u32, id: &str) -> String {
    if id.is_empty() {
        format!("call_{}_{index}", id_suffix(meta))
    } else {
        id.to_string()
    }
}

/// `"usage":{…}`: the counts, and the details the SDK's types require.
fn write_usage(w: &mut JsonWriter, u: Usage) {
    let (input, output) = crate::format::client::token_counts(u);
    w.key("usage");
    w.begin_object();
    w.field("input_tokens", &input);
    w.key("input_tokens_details");
    w.begin_object();
    w.field("cached_tokens", &0u32);
    w.end_object();
    w.field("output_tokens", &output);
    w.key("output_tokens_details");
    w.begin_object();
    w.field("reasoning_tokens", &0u32);
    w.end_object();
    w.field("total_tokens", &input.saturating_add(output));
    w.end_object();
}

/// What a response object says besides its id, model, echo and output.
struct Outcome<'a> {
    status: &'a str,
    /// The `incomplete_details.reason`.
    incomplete: Option<&'a str>,
    /// The failure `response.failed` reports as `error: {code, message}`.
    error: Option<&'a GatewayError>,
    usage: Option<Usage>,
}

/// What a response says of a setting the request did not send: OpenAI's documented default.
#[derive(Clone, Copy)]
enum Unsent {
    Null,
    False,
    True,
    Zero,
    One,
    Text(&'static str),
}

impl Unsent {
    fn write(self, w: &mut JsonWriter) {
        match self {
            Unsent::Null => w.null(),
            Unsent::False => w.bool(false),
            Unsent::True => w.bool(true),
            Unsent::Zero => w.u64(0),
            Unsent::One => w.u64(1),
            Unsent::Text(text) => w.string(text),
        }
    }
}

/// `object`'s fields, then each of `defaults` it lacks.
fn write_with_defaults(w: &mut JsonWriter, object: &Map<String, Value>, defaults: &[(&str, Unsent)]) {
    w.begin_object();
    for (key, value) in object {
        w.field(key, value);
    }
    for (key, default) in defaults.iter().filter(|(key, _)| !object.contains_key(*key)) {
        w.key(key);
        default.write(w);
    }
    w.end_object();
}

/// The response object, keys in the order OpenAI writes them (`id`, `object`, `created_at`,
/// `status`, then alphabetically, `metadata` last). Each setting the request sent is repeated
/// ([`ClientCall::echo`]), else its default; a function tool's `strict` defaults to true, a
/// json_schema format's to false, and `background`, `previous_response_id`, `store` and
/// `truncation` say what the gateway does (it runs nothing in the background, stores nothing and
/// truncates nothing). `output` holds `items`, each `incomplete` if still open; `completed_at` is
/// the time the answer ended once it is `completed`, else null.
fn write_response(w: &mut JsonWriter, meta: &Meta, items: &[Item], outcome: &Outcome) {
    let echo = |key: &str| meta.echo.get(key);
    let setting = |w: &mut JsonWriter, key: &str, default: Unsent| {
        w.key(key);
        match echo(key) {
            Some(v) => w.value(v),
            None => default.write(w),
        }
    };
    w.begin_object();
    w.field("id", &meta.id);
    w.field("object", "response");
    w.field("created_at", &meta.created);
    w.field("status", outcome.status);
    w.field("background", &false);
    w.key("completed_at");
    match meta.completed.filter(|_| outcome.status == "completed") {
        Some(seconds) => w.value(&seconds),
        None => w.null(),
    }
    w.key("error");
    match outcome.error {
        Some(error) => {
            w.begin_object();
            w.field("code", error.code.unwrap_or(error.kind));
            w.field("message", &error.message);
            w.end_object();
        }
        None => w.null(),
    }
    setting(w, "frequency_penalty", Unsent::Zero);
    w.key("incomplete_details");
    match outcome.incomplete {
        Some(reason) => {
            w.begin_object();
            w.field("reason", reason);
            w.end_object();
        }
        None => w.null(),
    }
    setting(w, "instructions", Unsent::Null);
    setting(w, "max_output_tokens", Unsent::Null);
    setting(w, "max_tool_calls", Unsent::Null);
    w.field("model", &meta.model);
    w.key("output");
    w.begin_array();
    for item in items {
        item.write(w, if item.open { "incomplete" } else { "completed" });
    }
    w.end_array();
    setting(w, "parallel_tool_calls", Unsent::True);
    setting(w, "presence_penalty", Unsent::Zero);
    w.key("previous_response_id");
    w.null();
    setting(w, "prompt_cache_key", Unsent::Null);
    w.key("reasoning");
    let asked = echo("reasoning").and_then(Value::as_object).cloned().unwrap_or_default();
    write_with_defaults(w, &asked, &[("effort", Unsent::Null), ("summary", Unsent::Null)]);
    setting(w, "safety_identifier", Unsent::Null);
    setting(w, "service_tier", Unsent::Text("default"));
    w.field("store", &false);
    setting(w, "temperature", Unsent::One);
    w.key("text");
    w.begin_object();
    let text = echo("text").and_then(Value::as_object);
    for (key, value) in text.into_iter().flatten().filter(|(key, _)| *key != "format") {
        w.field(key, value);
    }
    w.key("format");
    match text.and_then(|t| t.get("format")).and_then(Value::as_object) {
        Some(format) if format.get("type").and_then(Value::as_str) == Some("json_schema") => {
            write_with_defaults(w, format, &[("description", Unsent::Null), ("strict", Unsent::False)])
        }
        Some(format) => w.value(format),
        None => write_with_defaults(w, &Map::new(), &[("type", Unsent::Text("text"))]),
    }
    w.end_object();
    setting(w, "tool_choice", Unsent::Text("auto"));
    w.key("tools");
    w.begin_array();
    for tool in echo("tools").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object) {
        let defaults = [("description", Unsent::Null), ("parameters", Unsent::Null), ("strict", Unsent::True)];
        write_with_defaults(w, tool, &defaults);
    }
    w.end_array();
    setting(w, "top_logprobs", Unsent::Zero);
    setting(w, "top_p", Unsent::One);
    w.field("truncation", "disabled");
    match outcome.usage {
        Some(usage) => write_usage(w, usage),
        None => {
            w.key("usage");
            w.null();
        }
    }
    setting(w, "user", Unsent::Null);
    w.key("metadata");
    match echo("metadata") {
        Some(v) => w.value(v),
        None => {
            w.begin_object();
            w.end_object();
        }
    }
    w.end_object();
}

/// A reasoning item's id and encrypted content for a piece of reasoning with `state`: a
/// Responses item keeps its own id, and the state rides in the id (its encrypted content in the
/// item's own field).
fn reasoning_id(made_up: String, state: Option<&ReasoningState>) -> (String, Option<String>) {
    let Some(state) = state else { return (made_up, None) };
    let mut carried = state.clone();
    let (id, encrypted) = match &mut carried.opaque {
        Opaque::Item { id, encrypted_content } if state.format == FORMAT => (id.clone(), encrypted_content.take()),
        _ => (made_up, None),
    };
    (state_id::encode(&id, Some(&carried), &[]), encrypted)
}

/// What an output item holds.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Message,
    /// Reasoning: raw, as the item's one `reasoning_text` content part, or a summary, as its one
    /// `summary_text` part.
    Reasoning(ReasoningKind),
    /// A function call; `call` is the normalized tool-call index.
    Call {
        call: u32,
        call_id: String,
        name: String,
    },
}

/// One output item and its text so far (the message's text, the reasoning, or the arguments).
#[derive(Debug)]
struct Item {
    kind: Kind,
    id: String,
    text: String,
    open: bool,
    /// A reasoning item's `encrypted_content`.
    encrypted_content: Option<String>,
    /// A message's logprobs so far, from a Responses member (docs/parameters.md): the entries'
    /// JSON text, comma-separated (text, not values, so the wasm links no list code for them).
    logprobs: String,
}

/// `{"type":"output_text","text",…}`, a message's one content part.
fn write_output_text(w: &mut JsonWriter, text: &str, logprobs: &str) {
    w.begin_object();
    w.field("type", "output_text");
    w.field("text", text);
    w.key("annotations");
    w.begin_array();
    w.end_array();
    write_logprobs(w, logprobs);
    w.end_object();
}

/// `"logprobs":[…]` of `entries` (JSON text), as a Responses member sent them.
fn write_logprobs(w: &mut JsonWriter, entries: &str) {
    w.key("logprobs");
    w.begin_array();
    if !entries.is_empty() {
        w.raw(entries);
    }
    w.end_array();
}

/// Appends the entries of `logprobs`, if a Responses member wrote them (a list), to `text`.
fn push_logprobs(text: &mut String, logprobs: Option<&Logprobs>) {
    if let Some(Value::Array(entries)) = logprobs.filter(|l| l.format == FORMAT).map(|l| &l.raw) {
        for entry in entries {
            if !text.is_empty() {
                text.push(',');
            }
            text.push_str(&entry.to_json());
        }
    }
}

/// `{"type":"summary_text","text"}` or `{"type":"reasoning_text","text"}`: a reasoning item's
/// one summary or content part.
fn write_reasoning_text(w: &mut JsonWriter, kind: ReasoningKind, text: &str) {
    w.begin_object();
    w.field("type", ReasoningWords::of(kind).part);
    w.field("text", text);
    w.end_object();
}

/// The words a reasoning item's one part of a kind is written and streamed with.
struct ReasoningWords {
    /// The part's `type`.
    part: &'static str,
    /// The item's field that lists the part.
    list: &'static str,
    /// The events' field that indexes the part.
    index: &'static str,
    added: &'static str,
    delta: &'static str,
    text_done: &'static str,
    part_done: &'static str,
}

impl ReasoningWords {
    fn of(kind: ReasoningKind) -> &'static ReasoningWords {
        const RAW: ReasoningWords = ReasoningWords {
            part: "reasoning_text",
            list: "content",
            index: "content_index",
            added: "response.content_part.added",
            delta: "response.reasoning_text.delta",
            text_done: "response.reasoning_text.done",
            part_done: "response.content_part.done",
        };
        const SUMMARY: ReasoningWords = ReasoningWords {
            part: "summary_text",
            list: "summary",
            index: "summary_index",
            added: "response.reasoning_summary_part.added",
            delta: "response.reasoning_summary_text.delta",
            text_done: "response.reasoning_summary_text.done",
            part_done: "response.reasoning_summary_part.done",
        };
        match kind {
            ReasoningKind::Raw => &RAW,
            ReasoningKind::Summary => &SUMMARY,
        }
    }
}

impl Item {
    /// Opens the item's object with its `id`, `type` and `status`.
    fn begin(&self, w: &mut JsonWriter, kind: &str, status: &str) {
        w.begin_object();
        w.field("id", &self.id);
        w.field("type", kind);
        w.field("status", status);
    }

    /// Opens a reasoning item of `kind` up to the key of the list its one part goes in (`summary`
    /// or `content`). A raw item's `summary` is there, empty: the API requires it.
    fn begin_reasoning(&self, w: &mut JsonWriter, kind: ReasoningKind, status: &str) {
        self.begin(w, "reasoning", status);
        if kind == ReasoningKind::Raw {
            w.key("summary");
            w.begin_array();
            w.end_array();
        }
        w.key(ReasoningWords::of(kind).list);
    }

    /// The item as `output` lists it; `status` is `in_progress`, `completed` or `incomplete`.
    fn write(&self, w: &mut JsonWriter, status: &str) {
        match &self.kind {
            Kind::Message => {
                self.begin(w, "message", status);
                w.field("role", "assistant");
                w.key("content");
                w.begin_array();
                write_output_text(w, &self.text, &self.logprobs);
                w.end_array();
            }
            Kind::Reasoning(kind) => {
                self.begin_reasoning(w, *kind, status);
                w.begin_array();
                write_reasoning_text(w, *kind, &self.text);
                w.end_array();
                w.opt_field("encrypted_content", self.encrypted_content.as_ref());
            }
            Kind::Call { call_id, name, .. } => {
                self.begin(w, "function_call", status);
                w.field("call_id", call_id);
                w.field("name", name);
                w.field("arguments", &self.text);
            }
        }
        w.end_object();
    }

    /// The item as `output_item.added` opens it, before any text: a message's content part and
    /// a reasoning item's summary or content part are added by events of their own.
    fn write_opening(&self, w: &mut JsonWriter) {
        match &self.kind {
            Kind::Message => {
                self.begin(w, "message", "in_progress");
                w.field("role", "assistant");
                w.key("content");
            }
            Kind::Reasoning(kind) => self.begin_reasoning(w, *kind, "in_progress"),
            Kind::Call { .. } => return self.write(w, "in_progress"),
        }
        w.begin_array();
        w.end_array();
        w.end_object();
    }
}

/// The items of a whole answer, in the order a stream of it would open them.
fn answer_items(meta: &Meta, answer: &Answer) -> Vec<Item> {
    let mut items = Vec::new();
    let mut push = |kind: Kind, prefix: &str, text: &str, state: Option<&ReasoningState>| {
        let (id, encrypted_content) = reasoning_id(item_id(meta, prefix, items.len()), state);
        items.push(Item { kind, id, text: text.to_string(), open: false, encrypted_content, logprobs: String::new() });
    };
    if answer.reasoning_parts.is_empty() && !answer.reasoning.is_empty() {
        push(Kind::Reasoning(ReasoningKind::default()), "rs", &answer.reasoning, None);
    }
    for part in &answer.reasoning_parts {
        push(Kind::Reasoning(part.kind), "rs", &part.text, part.state.as_ref());
    }
    if !answer.text.is_empty() || answer.tool_calls.is_empty() {
        push(Kind::Message, "msg", &answer.text, None);
    }
    for (i, c) in answer.tool_calls.iter().enumerate() {
        let call_id = state_id::encode(&call_id(meta, i as u32, &c.id), c.state.as_ref(), &[]);
        push(Kind::Call { call: i as u32, call_id, name: c.name.clone() }, "fc", &c.arguments, None);
    }
    if let Some(message) = items.iter_mut().find(|item| matches!(item.kind, Kind::Message)) {
        push_logprobs(&mut message.logprobs, answer.logprobs.as_ref());
    }
    items
}

fn answer_body(meta: &Meta, answer: &Answer) -> String {
    let (status, incomplete) = ending(&answer.finish_reason);
    let outcome = Outcome { status, incomplete, error: None, usage: Some(answer.usage) };
    let mut w = JsonWriter::new();
    write_response(&mut w, meta, &answer_items(meta, answer), &outcome);
    w.finish()
}

// ---- streams ----

impl ClientDialect for OpenaiResponses {
    type StreamEncoder = StreamEncoder;

    /// OpenAI's error body: Responses shares Chat Completions' error dialect.
    fn write_error(error: &GatewayError, w: &mut JsonWriter) {
        OpenaiChat::write_error(error, w)
    }

    fn parse_request(body: &Value) -> Result<ClientCall, FieldError> {
        parse_request(body)
    }

    fn answer_body(meta: &Meta, answer: &Answer) -> String {
        answer_body(meta, answer)
    }

    fn stream_encoder(meta: Meta, _include_usage: bool) -> StreamEncoder {
        StreamEncoder {
            meta,
            started: false,
            sequence: 0,
            items: Vec::new(),
            held_reasoning: String::new(),
            held_kind: ReasoningKind::default(),
            held_call: None,
            logprobs: String::new(),
        }
    }
}

#[derive(Debug)]
pub struct StreamEncoder {
    meta: Meta,
    started: bool,
    /// The next event's `sequence_number`.
    sequence: u64,
    /// Every output item so far, in output order.
    items: Vec<Item>,
    /// Reasoning text not yet sent: an item's id is in its `output_item.added` and must not
    /// change (the SDK checks), and a reasoning item's id carries the state that ends it.
    held_reasoning: String,
    /// What the held reasoning is.
    held_kind: ReasoningKind,
    /// A call's item and first arguments, held until the delta after it: a call's state
    /// follows the call (Gemini's), and its `call_id` carries it.
    held_call: Option<(Kind, String)>,
    /// The logprobs of the text delta that comes next, which its event carries (as
    /// [`Item`]'s).
    logprobs: String,
}

/// One event: named in its SSE `event:` line and its `type`, then the fields `fields` writes,
/// then its `sequence_number` (the next of `sequence`).
fn event(out: &mut String, sequence: &mut u64, kind: &str, fields: &dyn Fn(&mut JsonWriter)) {
    let number = *sequence;
    *sequence += 1;
    sse(out, Some(kind), &|w| {
        w.begin_object();
        w.field("type", kind);
        fields(w);
        w.field("sequence_number", &number);
        w.end_object();
    });
}

/// `"item_id","output_index"`, and `"content_index":0` or `"summary_index":0` when `part` names
/// one: where an item event applies.
fn write_at(w: &mut JsonWriter, item: &Item, index: usize, part: Option<&str>) {
    w.field("item_id", &item.id);
    w.field("output_index", &index);
    if let Some(part) = part {
        w.field(part, &0u32);
    }
}

impl StreamEncoder {
    /// `response.<kind>` with the response object as it stands.
    fn response_event(&mut self, out: &mut String, kind: &str, outcome: &Outcome) {
        let (meta, items) = (&self.meta, &self.items);
        event(out, &mut self.sequence, kind, &|w| {
            w.key("response");
            write_response(w, meta, items, outcome);
        });
    }

    fn start(&mut self, out: &mut String) {
        if self.started {
            return;
        }
        self.started = true;
        let outcome = Outcome { status: "in_progress", incomplete: None, error: None, usage: None };
        self.response_event(out, "response.created", &outcome);
        self.response_event(out, "response.in_progress", &outcome);
    }

    /// Appends an item and opens it (and its one content or summary part); a reasoning item's
    /// id carries its `state`.
    fn open(&mut self, kind: Kind, state: Option<&ReasoningState>, out: &mut String) -> usize {
        let index = self.items.len();
        let prefix = match kind {
            Kind::Message => "msg",
            Kind::Reasoning(_) => "rs",
            Kind::Call { .. } => "fc",
        };
        let (id, encrypted_content) = reasoning_id(item_id(&self.meta, prefix, index), state);
        self.items.push(Item { kind, id, text: String::new(), open: true, encrypted_content, logprobs: String::new() });
        let item = &self.items[index];
        let sequence = &mut self.sequence;
        event(out, sequence, "response.output_item.added", &|w| {
            w.field("output_index", &index);
            w.key("item");
            item.write_opening(w);
        });
        match item.kind {
            Kind::Message => event(out, sequence, "response.content_part.added", &|w| {
                write_at(w, item, index, Some("content_index"));
                w.key("part");
                write_output_text(w, "", "");
            }),
            Kind::Reasoning(kind) => {
                let words = ReasoningWords::of(kind);
                event(out, sequence, words.added, &|w| {
                    write_at(w, item, index, Some(words.index));
                    w.key("part");
                    write_reasoning_text(w, kind, "");
                })
            }
            Kind::Call { .. } => {}
        }
        index
    }

    /// Ends an open item: its part's `done` events, then `output_item.done`.
    fn close(&mut self, index: usize, out: &mut String) {
        self.items[index].open = false;
        let item = &self.items[index];
        let sequence = &mut self.sequence;
        match &item.kind {
            Kind::Message => {
                event(out, sequence, "response.output_text.done", &|w| {
                    write_at(w, item, index, Some("content_index"));
                    w.field("text", &item.text);
                    write_logprobs(w, &item.logprobs);
                });
                event(out, sequence, "response.content_part.done", &|w| {
                    write_at(w, item, index, Some("content_index"));
                    w.key("part");
                    write_output_text(w, &item.text, &item.logprobs);
                });
            }
            Kind::Reasoning(kind) => {
                let words = ReasoningWords::of(*kind);
                event(out, sequence, words.text_done, &|w| {
                    write_at(w, item, index, Some(words.index));
                    w.field("text", &item.text);
                });
                event(out, sequence, words.part_done, &|w| {
                    write_at(w, item, index, Some(words.index));
                    w.key("part");
                    write_reasoning_text(w, *kind, &item.text);
                });
            }
            Kind::Call { name, .. } => event(out, sequence, "response.function_call_arguments.done", &|w| {
                write_at(w, item, index, None);
                w.field("name", name);
                w.field("arguments", &item.text);
            }),
        }
        event(out, sequence, "response.output_item.done", &|w| {
            w.field("output_index", &index);
            w.key("item");
            item.write(w, "completed");
        });
    }

    fn close_all(&mut self, out: &mut String) {
        for index in 0..self.items.len() {
            if self.items[index].open {
                self.close(index, out);
            }
        }
    }

    /// The item a text or reasoning run goes to: the last item if it is open and of that kind,
    /// else a new one (every open item is closed first).
    fn run(&mut self, kind: Kind, out: &mut String) -> usize {
        match self.items.last() {
            Some(last) if last.open && last.kind == kind => self.items.len() - 1,
            _ => {
                self.close_all(out);
                self.open(kind, None, out)
            }
        }
    }

    /// The held reasoning as one item, its id carrying `state`.
    fn reasoning_item(&mut self, state: Option<&ReasoningState>, out: &mut String) {
        let text = std::mem::take(&mut self.held_reasoning);
        self.close_all(out);
        let kind = self.held_kind;
        let index = self.open(Kind::Reasoning(kind), state, out);
        if !text.is_empty() {
            let words = ReasoningWords::of(kind);
            self.item_delta(out, index, words.delta, Some(words.index), &text);
        }
        self.close(index, out);
    }

    /// Opens the held call's item with its first arguments.
    fn send_held_call(&mut self, out: &mut String) {
        let Some((kind, arguments)) = self.held_call.take() else { return };
        if self.items.iter().any(|item| item.open && !matches!(item.kind, Kind::Call { .. })) {
            self.close_all(out);
        }
        let index = self.open(kind, None, out);
        if !arguments.is_empty() {
            self.item_delta(out, index, "response.function_call_arguments.delta", None, &arguments);
        }
    }

    /// Sends what is held: the reasoning (as an item of no state), then the call.
    fn send_held(&mut self, out: &mut String) {
        if !self.held_reasoning.is_empty() {
            self.reasoning_item(None, out);
        }
        self.send_held_call(out);
    }

    /// Appends `text` to the item at `index` and sends it as a `kind` delta event; `part` names
    /// the item's part index field, as in [`write_at`].
    fn item_delta(&mut self, out: &mut String, index: usize, kind: &str, part: Option<&str>, text: &str) {
        let item = &mut self.items[index];
        item.text.push_str(text);
        let logprobs = std::mem::take(&mut self.logprobs);
        let item = &*item;
        event(out, &mut self.sequence, kind, &|w| {
            write_at(w, item, index, part);
            w.field("delta", text);
            if kind == "response.output_text.delta" {
                write_logprobs(w, &logprobs);
            }
        });
        let held = &mut self.items[index].logprobs;
        if !held.is_empty() && !logprobs.is_empty() {
            held.push(',');
        }
        held.push_str(&logprobs);
    }
}

impl StreamEncoding for StreamEncoder {
    /// Closes every item and ends with `response.completed` (or `response.incomplete`). An
    /// answer that said nothing still has its (empty) message, as a whole answer does.
    fn finish(&mut self, finish: &FinishReason, u: Usage, out: &mut String) {
        self.start(out);
        self.send_held(out);
        if self.items.is_empty() {
            self.open(Kind::Message, None, out);
        }
        self.close_all(out);
        let (status, incomplete) = ending(finish);
        let outcome = Outcome { status, incomplete, error: None, usage: Some(u) };
        self.response_event(out, &format!("response.{status}"), &outcome);
    }

    /// `response.failed` with the output so far (open items `incomplete`) and the error, then an
    /// `error` event, which the SDK throws; no `response.completed`.
    fn fail(&mut self, error: &GatewayError, out: &mut String) {
        self.start(out);
        self.send_held(out);
        let outcome = Outcome { status: "failed", incomplete: None, error: Some(error), usage: None };
        self.response_event(out, "response.failed", &outcome);
        // The flat fields are the event's documented shape; `error` nests the full error body as
        // first-party streams do, which the SDK prefers when present.
        event(out, &mut self.sequence, "error", &|w| {
            string_or_null(w, "code", error.code);
            w.field("message", &error.message);
            w.key("param");
            w.null();
            w.key("error");
            write_error_object(error, w);
        });
    }

    fn delta(&mut self, delta: &Delta, out: &mut String) {
        self.start(out);
        match delta {
            Delta::ToolCallState { index: call, state } => {
                if let Some((Kind::Call { call: held, call_id, .. }, _)) = &mut self.held_call {
                    if held == call {
                        *call_id = state_id::encode(call_id, Some(state), &[]);
                    }
                }
                return;
            }
            // Reasoning of another kind is another item.
            Delta::Reasoning { text, kind } => {
                self.send_held_call(out);
                if *kind != self.held_kind && !self.held_reasoning.is_empty() {
                    self.reasoning_item(None, out);
                }
                self.held_kind = *kind;
                self.held_reasoning.push_str(text);
                return;
            }
            // A state ends its reasoning item (one of no text, if none came), and is its id.
            Delta::ReasoningState { state } => {
                self.send_held_call(out);
                return self.reasoning_item(Some(state), out);
            }
            _ => self.send_held(out),
        }
        match delta {
            Delta::Text { text } if !text.is_empty() => {
                let index = self.run(Kind::Message, out);
                self.item_delta(out, index, "response.output_text.delta", Some("content_index"), text);
            }
            // Providers may interleave parallel calls' arguments (OpenAI Chat numbers each
            // fragment by call), so a call's item stays open beside the other calls' until a text
            // or reasoning run or the end, and a later fragment goes to the item its call opened.
            Delta::ToolCall { index: call, id, name, arguments } => {
                let found =
                    self.items.iter().position(|item| matches!(item.kind, Kind::Call { call: c, .. } if c == *call));
                match found {
                    Some(index) if !arguments.is_empty() => {
                        self.item_delta(out, index, "response.function_call_arguments.delta", None, arguments)
                    }
                    Some(_) => {}
                    None => {
                        let call_id = call_id(&self.meta, *call, id.as_deref().unwrap_or(""));
                        let kind = Kind::Call { call: *call, call_id, name: name.clone().unwrap_or_default() };
                        self.held_call = Some((kind, arguments.clone()));
                    }
                }
            }
            Delta::Done { finish_reason, usage, .. } => self.finish(finish_reason, *usage, out),
            Delta::Logprobs { logprobs } => push_logprobs(&mut self.logprobs, Some(logprobs)),
            // Empty text says nothing; the engine never delivers a skipped frame (it becomes a
            // warning event) nor a usage report (it stays on the attempt's leg); reasoning and
            // states are taken above.
            Delta::Text { .. }
            | Delta::Reasoning { .. }
            | Delta::ReasoningState { .. }
            | Delta::ToolCallState { .. }
            | Delta::Skipped { .. }
            | Delta::Usage { .. }
            | Delta::ContentFilter { .. } => {}
        }
    }

    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::chat::Source;
    use crate::format::client::{parse_request as parse, ClientFormat};

    fn meta() -> Meta {
        Meta {
            id: "resp_1".into(),
            created: 9,
            completed: Some(12),
            model: "m".into(),
            echo: json!({ "instructions": "sys" }),
        }
    }

    /// The response object a whole answer with `echo` is: what it repeats of the request.
    fn repeated(echo: Value) -> Value {
        serde_json::from_str(&answer_body(&Meta { echo, ..meta() }, &answer("", "", &[], FinishReason::Stop))).unwrap()
    }

    fn call(body: Value) -> Result<ClientCall, GatewayError> {
        parse(ClientFormat::OpenaiResponses, &body.to_string())
    }

    fn err(body: Value) -> String {
        call(body).unwrap_err().message
    }

    fn text_part(t: &str) -> Part {
        Part::Text { text: t.into() }
    }

    fn user(content: Vec<Part>) -> Message {
        Message { content, ..Message::new(Role::User, "") }
    }

    fn data(data: &str, media_type: &str) -> Source {
        Source::Data { data: data.into(), media_type: media_type.into() }
    }

    fn tool_message(id: &str, text: &str) -> Message {
        Message { tool_call_id: Some(id.into()), ..Message::new(Role::Tool, text) }
    }

    fn calling(text: &str, calls: &[(&str, &str, &str)]) -> Message {
        let tool_calls = calls
            .iter()
            .map(|(id, name, arguments)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: (*arguments).into(),
                state: None,
            })
            .collect();
        Message { tool_calls, ..Message::new(Role::Assistant, text) }
    }

    #[test]
    fn reasoning_is_the_requests_reasoning() {
        let read = |reasoning: Value| {
            call(json!({"model": "m", "input": "hi", "reasoning": reasoning})).unwrap().request.reasoning
        };
        let on = |effort, summary| Some(ReasoningRequest { effort, summary, budget_tokens: None });
        assert_eq!(read(json!({"effort": "high", "summary": "auto"})), on(Some(crate::chat::Effort::High), Some(true)));
        assert_eq!(read(json!({"summary": "none"})), on(None, Some(false)));
        assert_eq!(read(json!({"effort": "none"})), None);
    }

    #[test]
    fn reads_input_as_a_string_or_items() {
        let cases = [
            ("a string", json!("Hi"), vec![Message::new(Role::User, "Hi")]),
            (
                "messages with parts, easy and typed",
                json!([
                    {"role": "developer", "content": "be brief"},
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
                ]),
                vec![Message::new(Role::System, "be brief"), user(vec![text_part("a"), text_part("b")])],
            ),
            (
                "an image by URL and as a data: URL, a file as a data: URL and by URL",
                json!([{"role": "user", "content": [
                    {"type": "input_text", "text": "compare"},
                    {"type": "input_image", "image_url": "https://x.example/a.png", "detail": "auto"},
                    {"type": "input_image", "image_url": "data:image/webp;base64,UklG"},
                    {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
                    {"type": "input_file", "file_url": "https://x.example/b.txt"},
                    {"type": "input_file", "filename": "c.pdf", "file_data": "JVBERi0y"},
                ]}]),
                vec![user(vec![
                    text_part("compare"),
                    Part::Image { source: Source::Url { url: "https://x.example/a.png".into(), media_type: None } },
                    Part::Image { source: data("UklG", "image/webp") },
                    Part::File { source: data("JVBERi0x", "application/pdf"), filename: Some("a.pdf".into()) },
                    Part::File {
                        source: Source::Url {
                            url: "https://x.example/b.txt".into(),
                            media_type: Some("text/plain".into()),
                        },
                        filename: None,
                    },
                    Part::File { source: data("JVBERi0y", "application/pdf"), filename: Some("c.pdf".into()) },
                ])],
            ),
            (
                "an output replayed: reasoning dropped, the calls joined to the message before them",
                json!([
                    {"role": "user", "content": "weather?"},
                    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
                    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                     "content": [{"type": "output_text", "text": "Looking.", "annotations": []}]},
                    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f", "arguments": "{}", "status": "completed"},
                    {"type": "function_call", "call_id": "call_2", "name": "g", "arguments": "{\"a\":1}"},
                    {"type": "function_call_output", "call_id": "call_1", "output": "42"},
                    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "4"}, {"type": "input_text", "text": "3"}]},
                ]),
                vec![
                    Message::new(Role::User, "weather?"),
                    calling("Looking.", &[("call_1", "f", "{}"), ("call_2", "g", "{\"a\":1}")]),
                    tool_message("call_1", "42"),
                    tool_message("call_2", "43"),
                ],
            ),
            (
                "a call with no text before it is a turn of its own",
                json!([{"role": "user", "content": "go"}, {"type": "function_call", "call_id": "c", "name": "f"}]),
                vec![Message::new(Role::User, "go"), calling("", &[("c", "f", "")])],
            ),
            (
                "a refusal replayed",
                json!([{"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}]),
                vec![Message::new(Role::Assistant, "No.")],
            ),
        ];
        for (case, input, expected) in cases {
            let parsed = call(json!({"model": "chat", "input": input})).unwrap();
            assert_eq!(parsed.request.messages, expected, "{case}");
        }
    }

    #[test]
    fn parses_what_the_sdk_sends_and_echoes_the_settings() {
        let body = json!({
            "model": "chat", "stream": true, "instructions": "be brief", "input": "Hi",
            "max_output_tokens": 64, "temperature": 0.5, "top_p": 0.9, "parallel_tool_calls": false,
            "tools": [{"type": "function", "name": "f", "description": "d", "parameters": {"type": "object"}, "strict": true}],
            "tool_choice": {"type": "function", "name": "f"}, "store": false, "metadata": {"k": "v"},
            "text": {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}, "strict": true}},
            "include": ["reasoning.encrypted_content"], "user": "u", "reasoning": {"effort": "low"}, "truncation": "auto",
        });
        let c = call(body).unwrap();
        assert_eq!((c.model.as_str(), c.stream, c.include_usage), ("chat", true, false));
        let r = &c.request;
        assert_eq!(r.messages, vec![Message::new(Role::System, "be brief"), Message::new(Role::User, "Hi")]);
        assert_eq!(
            (r.max_tokens, r.temperature, r.top_p, r.parallel_tool_calls),
            (Some(64), Some(0.5), Some(0.9), Some(false))
        );
        assert_eq!(r.tool_choice, Some(ToolChoice::Tool { name: "f".into() }));
        assert_eq!(
            r.response_format,
            Some(ResponseFormat::Json {
                schema: Some(json!({"type": "object"})),
                name: Some("a".into()),
                description: None,
                strict: Some(true)
            })
        );
        assert_eq!(
            r.tools,
            vec![Tool { name: "f".into(), description: Some("d".into()), parameters: json!({"type": "object"}) }]
        );
        let echo = &repeated(c.echo);
        assert_eq!(echo["instructions"], "be brief");
        assert_eq!((echo["top_p"].clone(), echo["parallel_tool_calls"].clone()), (json!(0.9), json!(false)));
        assert_eq!(echo["tool_choice"], json!({"type": "function", "name": "f"}));
        assert_eq!(echo["text"]["format"]["name"], "a");
        assert_eq!((echo["store"].clone(), echo["metadata"].clone()), (json!(false), json!({"k": "v"})));
        let plain = repeated(call(json!({"model": "chat", "input": "Hi"})).unwrap().echo);
        assert_eq!(
            (plain["tool_choice"].clone(), plain["parallel_tool_calls"].clone(), plain["text"].clone()),
            (json!("auto"), json!(true), json!({"format": {"type": "text"}}))
        );
        assert_eq!((plain["instructions"].clone(), plain["tools"].clone()), (Value::Null, json!([])));
        let formats = [
            (json!({"type": "text"}), None),
            (
                json!({"type": "json_object"}),
                Some(ResponseFormat::Json { schema: None, name: None, description: None, strict: None }),
            ),
        ];
        for (format, expected) in formats {
            let r = call(json!({"model": "chat", "input": "Hi", "text": {"format": format}})).unwrap().request;
            assert_eq!(r.response_format, expected, "{format}");
        }
        for (choice, expected) in
            [("auto", ToolChoice::Auto), ("none", ToolChoice::None), ("required", ToolChoice::Required)]
        {
            let tools = json!([{"type": "function", "name": "f"}]);
            let r =
                call(json!({"model": "chat", "input": "Hi", "tools": tools, "tool_choice": choice})).unwrap().request;
            assert_eq!(r.tool_choice, Some(expected), "{choice}");
        }
    }

    /// Every setting the reference requires of a response object is there with its type: the
    /// request's value, else the API's default; tools and a json_schema format have each field.
    #[test]
    fn the_response_repeats_every_setting_or_its_default() {
        let plain = repeated(call(json!({"model": "chat", "input": "Hi"})).unwrap().echo);
        let defaults = json!({
            "background": false, "frequency_penalty": 0, "max_tool_calls": null, "presence_penalty": 0,
            "prompt_cache_key": null, "reasoning": {"effort": null, "summary": null}, "safety_identifier": null,
            "service_tier": "default", "temperature": 1, "top_logprobs": 0, "top_p": 1, "user": null,
        });
        for (key, value) in defaults.as_object().unwrap() {
            assert_eq!(&plain[key], value, "{key}");
        }
        let given = repeated(call(json!({
            "model": "chat", "input": "Hi", "temperature": 0.2, "top_p": 0.5, "presence_penalty": 0.5,
            "frequency_penalty": -1, "top_logprobs": 3, "max_tool_calls": 4, "service_tier": "flex",
            "safety_identifier": "s", "prompt_cache_key": "k", "user": "u",
            "reasoning": {"effort": "low", "summary": "auto"},
            "tools": [
                {"type": "function", "name": "f"},
                {"type": "function", "name": "g", "description": "d", "parameters": {"type": "object"}, "strict": false},
            ],
            "text": {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}}, "verbosity": "low"},
        }))
        .unwrap()
        .echo);
        let expected = json!({
            "temperature": 0.2, "top_p": 0.5, "presence_penalty": 0.5, "frequency_penalty": -1, "top_logprobs": 3,
            "max_tool_calls": 4, "service_tier": "flex", "safety_identifier": "s", "prompt_cache_key": "k",
            "user": "u", "reasoning": {"effort": "low", "summary": "auto"},
            "tools": [
                {"type": "function", "name": "f", "description": null, "parameters": null, "strict": true},
                {"type": "function", "name": "g", "description": "d", "parameters": {"type": "object"}, "strict": false},
            ],
            "text": {
                "format": {"type": "json_schema", "name": "a", "schema": {"type": "object"}, "description": null, "strict": false},
                "verbosity": "low",
            },
        });
        for (key, value) in expected.as_object().unwrap() {
            assert_eq!(&given[key], value, "{key}");
        }
        assert_eq!(
            err(json!({"model": "m", "input": "Hi", "presence_penalty": "high"})),
            "presence_penalty must be a number (got \"high\")"
        );
    }

    #[test]
    fn completed_at_is_the_end_of_a_completed_response_only() {
        let at = |finish, completed| {
            let meta = Meta { completed, ..meta() };
            let body: Value = serde_json::from_str(&answer_body(&meta, &answer("Hi", "", &[], finish))).unwrap();
            body["completed_at"].clone()
        };
        assert_eq!(at(FinishReason::Stop, Some(12)), json!(12));
        assert_eq!(at(FinishReason::Length, Some(12)), Value::Null, "incomplete");
        assert_eq!(at(FinishReason::Stop, None), Value::Null, "not ended yet");
        let mut e = OpenaiResponses::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&text("Hi"), &mut out);
        e.finish(&FinishReason::Stop, Usage::default(), &mut out);
        let events = events(&out);
        assert_eq!(events[0].1["response"]["completed_at"], Value::Null, "in progress");
        assert_eq!(events.last().unwrap().1["response"]["completed_at"], json!(12));
    }

    #[test]
    fn names_the_field_in_400s() {
        let cases = [
            (json!({"input": "Hi"}), "model is missing; give the name of a route, e.g. \"chat\""),
            (json!({"model": "m"}), "input is missing; give a string or a list of input items"),
            (json!({"model": "m", "input": []}), "input must hold at least one item (got [])"),
            (json!({"model": "m", "input": 3}), "input must be a string or a list of input items (got 3)"),
            (
                json!({"model": "m", "input": "Hi", "store": true}),
                "store must be false or omitted (got true): the gateway keeps no responses; keep the conversation \
                 yourself and send it as input",
            ),
            (
                json!({"model": "m", "input": "Hi", "previous_response_id": "resp_1"}),
                "previous_response_id is not supported: it names state stored at OpenAI, and the gateway keeps \
                 none; send the earlier turns in input instead",
            ),
            (
                json!({"model": "m", "input": "Hi", "conversation": "conv_1"}),
                "conversation is not supported: it names state stored at OpenAI, and the gateway keeps none; send \
                 the conversation's turns in input instead",
            ),
            (
                json!({"model": "m", "input": "Hi", "background": true}),
                "background must be false or omitted (got true): the gateway keeps no responses to poll; stream \
                 instead",
            ),
            (
                json!({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}),
                "input[0] is an item_reference, which names an item stored at OpenAI; the gateway keeps none: send \
                 the item itself",
            ),
            (
                json!({"model": "m", "input": [{"type": "web_search_call", "id": "ws_1"}]}),
                "input[0].type must be one of \"message\", \"function_call\", \"function_call_output\", \
                 \"reasoning\" (got \"web_search_call\"); built-in tool items run at OpenAI only",
            ),
            (
                json!({"model": "m", "input": [{"role": "robot", "content": "x"}]}),
                "input[0].role must be one of \"user\", \"assistant\", \"system\", \"developer\" (got \"robot\")",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "output_text", "text": "x"}]}]}),
                "input[0].content[0].type must be one of \"input_text\", \"input_image\", \"input_file\" (got \
                 \"output_text\")",
            ),
            (
                json!({"model": "m", "input": [{"type": "function_call_output", "output": "x"}]}),
                "input[0].call_id is missing; give the id of the function_call this answers",
            ),
            (
                json!({"model": "m", "input": [{"type": "function_call", "call_id": "c"}]}),
                "input[0].name is missing; give the function's name",
            ),
            (
                json!({"model": "m", "input": "Hi", "tools": [{"type": "web_search"}]}),
                "tools[0].type must be \"function\" (got \"web_search\"); built-in tools run at OpenAI only, the \
                 gateway forwards function tools",
            ),
            (
                json!({"model": "m", "input": "Hi", "tools": [{"type": "function", "name": "f"}], "tool_choice": {"type": "function", "name": "g"}}),
                "tool_choice names the tool \"g\", which is not one of the tools (tools: [\"f\"])",
            ),
            (
                json!({"model": "m", "input": "Hi", "tool_choice": "any"}),
                "tool_choice must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...} \
                 (got \"any\")",
            ),
            (
                json!({"model": "m", "input": "Hi", "tool_choice": {"type": "web_search_preview"}}),
                "tool_choice.type must be \"function\" (got \"web_search_preview\"); built-in tools run at OpenAI only",
            ),
            (
                json!({"model": "m", "input": "Hi", "text": {"format": {"type": "json_schema", "name": "a"}}}),
                "text.format.schema is missing; give a JSON Schema object",
            ),
            (
                json!({"model": "m", "input": "Hi", "text": {"format": {"type": "yaml"}}}),
                "text.format.type must be one of \"text\", \"json_object\", \"json_schema\" (got \"yaml\")",
            ),
            (json!({"model": "m", "input": "Hi", "top_p": 2}), "top_p must be a number from 0 to 1 (got 2)"),
            (
                json!({"model": "m", "input": "Hi", "tool_choice": "required"}),
                "tool_choice requires a tool call but tools is empty; give the tools the model must choose from",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "file_id": "file-1"}]}]}),
                "input[0].content[0].file_id names a file stored at a provider, which the gateway cannot forward to \
                 another; send the image as image_url (a URL or a data: URL) instead",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_image", "image_url": "data:text/plain;base64,aGk="}]}]}),
                "input[0].content[0] is an image of media type \"text/plain\"; send an image (image/png, image/jpeg, \
                 image/gif, image/webp) or send the file as a file or document",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_file", "file_data": "JVBE"}]}]}),
                "input[0].content[0].file_data must be a data: URL (data:application/pdf;base64,<data>), or base64 \
                 with a filename ending in .pdf or .txt",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]}),
                "input[0].content[0].file_id names a file stored at a provider, which the gateway cannot forward to \
                 another; send the file's bytes as file_data, or its file_url, instead",
            ),
            (
                json!({"model": "m", "input": [{"role": "user", "content": [{"type": "input_file", "file_data": "data:application/pdf;base64,JVBE", "file_url": "https://x.example/a.pdf"}]}]}),
                "input[0].content[0] has both file_data and file_url; give one",
            ),
            (
                json!({"model": "m", "input": [{"role": "developer", "content": [{"type": "input_image", "image_url": "https://x.example/a.png"}]}]}),
                "input[0].content[0] is an image, but only user messages carry images and files (this is a system \
                 message)",
            ),
            (
                json!({"model": "m", "input": "Hi", "max_output_tokens": 0}),
                "max_output_tokens must be a positive whole number of tokens (got 0)",
            ),
            (
                json!({"model": "m", "input": "Hi", "parallel_tool_calls": "no"}),
                "parallel_tool_calls must be true or false (got \"no\")",
            ),
        ];
        for (body, message) in cases {
            assert_eq!(err(body.clone()), message, "for {body}");
        }
    }

    fn answer(text: &str, reasoning: &str, calls: &[(&str, &str, &str)], finish: FinishReason) -> Answer {
        Answer {
            logprobs: None,
            content_filter: None,
            text: text.into(),
            reasoning: reasoning.into(),
            tool_calls: calling("", calls).tool_calls,
            finish_reason: finish,
            usage: Usage { input_tokens: Some(3), output_tokens: Some(4) },
            model: None,
            reasoning_parts: Vec::new(),
        }
    }

    #[test]
    fn whole_answers() {
        let text_item = |id: &str, text: &str| {
            json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
                   "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]})
        };
        let cases = [
            (
                "text",
                answer("Hi", "", &[], FinishReason::Stop),
                vec![text_item("msg_1_0", "Hi")],
                "completed",
                Value::Null,
            ),
            (
                "reasoning, then text",
                answer("9.8", "compare", &[], FinishReason::Stop),
                vec![
                    json!({"id": "rs_1_0", "type": "reasoning", "status": "completed", "summary": [{"type": "summary_text", "text": "compare"}]}),
                    text_item("msg_1_1", "9.8"),
                ],
                "completed",
                Value::Null,
            ),
            (
                "raw reasoning, as content",
                Answer {
                    reasoning_parts: ReasoningPart::unsigned(ReasoningKind::Raw, "units first"),
                    ..answer("9.8", "units first", &[], FinishReason::Stop)
                },
                vec![
                    json!({"id": "rs_1_0", "type": "reasoning", "status": "completed", "summary": [],
                           "content": [{"type": "reasoning_text", "text": "units first"}]}),
                    text_item("msg_1_1", "9.8"),
                ],
                "completed",
                Value::Null,
            ),
            (
                "tool calls only, one without an id",
                answer("", "", &[("call_a", "f", "{}"), ("", "g", "{\"x\":1}")], FinishReason::ToolCalls),
                vec![
                    json!({"id": "fc_1_0", "type": "function_call", "status": "completed", "call_id": "call_a", "name": "f", "arguments": "{}"}),
                    json!({"id": "fc_1_1", "type": "function_call", "status": "completed", "call_id": "call_1_1", "name": "g", "arguments": "{\"x\":1}"}),
                ],
                "completed",
                Value::Null,
            ),
            (
                "cut by the token limit",
                answer("Once upon", "", &[], FinishReason::Length),
                vec![text_item("msg_1_0", "Once upon")],
                "incomplete",
                json!({"reason": "max_output_tokens"}),
            ),
            (
                "nothing said",
                answer("", "", &[], FinishReason::Stop),
                vec![text_item("msg_1_0", "")],
                "completed",
                Value::Null,
            ),
        ];
        for (case, answer, output, status, incomplete) in cases {
            let body: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
            assert_eq!(body["output"], json!(output), "{case}");
            assert_eq!((body["status"].as_str(), &body["incomplete_details"]), (Some(status), &incomplete), "{case}");
            assert_eq!((body["id"].as_str(), body["object"].as_str()), (Some("resp_1"), Some("response")), "{case}");
            assert_eq!((body["created_at"].clone(), body["model"].clone()), (json!(9), json!("m")), "{case}");
            assert_eq!(body["instructions"], "sys", "{case}: the echo");
            assert_eq!(
                body["usage"],
                json!({"input_tokens": 3, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 4,
                       "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 7}),
                "{case}"
            );
        }
    }

    /// The response object's keys come in the API reference's order, each echoed setting in its
    /// place, and an event's `type` first and `sequence_number` last.
    #[test]
    fn keys_keep_the_api_references_order() {
        let echo =
            call(json!({"model": "chat", "input": "Hi", "instructions": "sys", "metadata": {"k": "v"}})).unwrap().echo;
        let meta = Meta { echo, ..meta() };
        let body = answer_body(&meta, &answer("Hello", "", &[], FinishReason::Stop));
        assert_eq!(
            body,
            concat!(
                r#"{"id":"resp_1","object":"response","created_at":9,"status":"completed","background":false,"#,
                r#""completed_at":12,"error":null,"frequency_penalty":0,"incomplete_details":null,"instructions":"sys","#,
                r#""max_output_tokens":null,"max_tool_calls":null,"model":"m","output":[{"id":"msg_1_0","type":"message","#,
                r#""status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[],"#,
                r#""logprobs":[]}]}],"parallel_tool_calls":true,"presence_penalty":0,"previous_response_id":null,"#,
                r#""prompt_cache_key":null,"reasoning":{"effort":null,"summary":null},"safety_identifier":null,"#,
                r#""service_tier":"default","store":false,"temperature":1,"text":{"format":{"type":"text"}},"#,
                r#""tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1,"truncation":"disabled","#,
                r#""usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"#,
                r#""output_tokens_details":{"reasoning_tokens":0},"total_tokens":7},"user":null,"metadata":{"k":"v"}}"#
            )
        );
        let written: Value = serde_json::from_str(&body).unwrap();
        for key in REPEATED {
            assert!(written.get(key).is_some(), "{key} is repeated in the response");
        }
        let mut e = OpenaiResponses::stream_encoder(meta, false);
        let mut out = String::new();
        e.delta(&text("Hi"), &mut out);
        let delta = out.split("\n\n").find(|f| f.starts_with("event: response.output_text.delta")).unwrap();
        assert_eq!(
            delta,
            "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1_0\",\
             \"output_index\":0,\"content_index\":0,\"delta\":\"Hi\",\"logprobs\":[],\"sequence_number\":4}"
        );
    }

    /// A Responses member's output-text logprobs reach a Responses client as they came: in the
    /// whole answer's part, and streamed in the delta of the text they describe, then in the
    /// part's `done` events and the completed response; another format's are not shown.
    #[test]
    fn logprobs_of_a_responses_member_are_written_whole_and_streamed() {
        let entry = |token: &str| json!({"token": token, "logprob": -0.5, "bytes": [], "top_logprobs": []});
        let ours =
            |tokens: &[&str]| Logprobs { format: FORMAT, raw: Value::Array(tokens.iter().map(|t| entry(t)).collect()) };
        let answer = |logprobs| Answer {
            text: "Hi you".into(),
            reasoning: String::new(),
            reasoning_parts: Vec::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage::default(),
            model: None,
            logprobs: Some(logprobs),
            content_filter: None,
        };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer(ours(&["Hi", " you"])))).unwrap();
        assert_eq!(whole["output"][0]["content"][0]["logprobs"], json!([entry("Hi"), entry(" you")]));
        let chat = Logprobs { format: "openai_chat", raw: json!({"content": []}) };
        let whole: Value = serde_json::from_str(&answer_body(&meta(), &answer(chat.clone()))).unwrap();
        assert_eq!(whole["output"][0]["content"][0]["logprobs"], json!([]));

        let mut e = OpenaiResponses::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Logprobs { logprobs: ours(&["Hi"]) }, &mut out);
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.delta(&Delta::Logprobs { logprobs: chat }, &mut out);
        e.delta(&Delta::Text { text: " you".into() }, &mut out);
        e.finish(&FinishReason::Stop, Usage::default(), &mut out);
        let events = events(&out);
        let of = |kind: &str| events.iter().filter(|(k, _)| k == kind).map(|(_, d)| d.clone()).collect::<Vec<_>>();
        let deltas: Vec<Value> = of("response.output_text.delta").iter().map(|d| d["logprobs"].clone()).collect();
        assert_eq!(deltas, [json!([entry("Hi")]), json!([])]);
        assert_eq!(of("response.output_text.done")[0]["logprobs"], json!([entry("Hi")]));
        assert_eq!(of("response.content_part.done")[0]["part"]["logprobs"], json!([entry("Hi")]));
        assert_eq!(
            of("response.completed")[0]["response"]["output"][0]["content"][0]["logprobs"],
            json!([entry("Hi")])
        );
    }

    /// The SSE frames as (event name, data).
    fn events(out: &str) -> Vec<(String, Value)> {
        out.split("\n\n")
            .filter(|f| !f.is_empty())
            .map(|frame| {
                let (name, data) = frame.split_once('\n').unwrap();
                let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                assert_eq!(Some(name.strip_prefix("event: ").unwrap()), data["type"].as_str(), "{frame}");
                (name["event: ".len()..].to_string(), data)
            })
            .collect()
    }

    /// Reads the events as the openai SDK's `responses.stream()` accumulates them, checking what
    /// it checks: `response.created` first, numbered events, items appended at the next output
    /// index, every item event naming the item's id and a part that exists. Returns the final
    /// response and the text its `response.output_text.delta` events showed.
    fn accumulate(events: &[(String, Value)]) -> (Value, String) {
        let mut snapshot = Value::Null;
        let mut shown = String::new();
        for (n, (kind, e)) in events.iter().enumerate() {
            assert_eq!(e["sequence_number"], json!(n), "{kind}: numbered in order");
            if n == 0 {
                assert_eq!(kind, "response.created");
            }
            if kind.starts_with("response.") && e.get("response").is_some() {
                snapshot = e["response"].clone();
                continue;
            }
            if kind == "error" {
                break;
            }
            let index = e["output_index"].as_u64().unwrap() as usize;
            let output = snapshot["output"].as_array_mut().unwrap();
            if kind == "response.output_item.added" {
                assert_eq!(index, output.len(), "{kind}: appended");
                output.push(e["item"].clone());
                continue;
            }
            let item = &mut output[index];
            if kind == "response.output_item.done" {
                assert_eq!((&e["item"]["id"], &e["item"]["type"]), (&item["id"], &item["type"]), "{kind}: same item");
                *item = e["item"].clone();
                continue;
            }
            assert_eq!(e["item_id"], item["id"], "{kind}: names its item");
            match kind.as_str() {
                "response.content_part.added" => {
                    assert_eq!(e["content_index"], json!(item["content"].as_array().unwrap().len()));
                    item["content"].as_array_mut().unwrap().push(e["part"].clone());
                }
                "response.reasoning_summary_part.added" => {
                    assert_eq!(e["summary_index"], json!(item["summary"].as_array().unwrap().len()));
                    item["summary"].as_array_mut().unwrap().push(e["part"].clone());
                }
                "response.output_text.delta" => {
                    assert_eq!(item["type"], "message");
                    let part = &mut item["content"][e["content_index"].as_u64().unwrap() as usize];
                    part["text"] = json!(format!("{}{}", part["text"].as_str().unwrap(), e["delta"].as_str().unwrap()));
                    shown.push_str(e["delta"].as_str().unwrap());
                }
                "response.reasoning_summary_text.delta" => {
                    let part = &mut item["summary"][e["summary_index"].as_u64().unwrap() as usize];
                    part["text"] = json!(format!("{}{}", part["text"].as_str().unwrap(), e["delta"].as_str().unwrap()));
                }
                "response.reasoning_text.delta" => {
                    assert_eq!(item["type"], "reasoning");
                    let part = &mut item["content"][e["content_index"].as_u64().unwrap() as usize];
                    assert_eq!(part["type"], "reasoning_text");
                    part["text"] = json!(format!("{}{}", part["text"].as_str().unwrap(), e["delta"].as_str().unwrap()));
                }
                "response.function_call_arguments.delta" => {
                    assert_eq!(item["type"], "function_call");
                    item["arguments"] =
                        json!(format!("{}{}", item["arguments"].as_str().unwrap(), e["delta"].as_str().unwrap()));
                }
                "response.output_text.done" | "response.content_part.done" | "response.reasoning_text.done" => {
                    assert_eq!(item["content"][0]["text"], e.get("text").unwrap_or(&e["part"]["text"]).clone());
                }
                "response.reasoning_summary_text.done" | "response.reasoning_summary_part.done" => {
                    assert_eq!(item["summary"][0]["text"], e.get("text").unwrap_or(&e["part"]["text"]).clone());
                }
                "response.function_call_arguments.done" => assert_eq!(item["arguments"], e["arguments"]),
                other => panic!("an event the SDK does not know: {other}"),
            }
        }
        (snapshot, shown)
    }

    fn text(t: &str) -> Delta {
        Delta::Text { text: t.into() }
    }

    fn fragment(index: u32, opening: Option<(&str, &str)>, arguments: &str) -> Delta {
        Delta::ToolCall {
            index,
            id: opening.map(|(id, _)| id.to_string()),
            name: opening.map(|(_, name)| name.to_string()),
            arguments: arguments.into(),
        }
    }

    /// Reasoning items and function calls carry their state in their ids (a Responses item's
    /// encrypted content in its own field), streamed as whole, and a replayed output gives it
    /// back; an item whose id carries nothing is dropped.
    #[test]
    fn reasoning_items_and_call_ids_carry_the_state_to_the_client_and_back() {
        let state = |format: &str, opaque| Some(ReasoningState { format: format.into(), model: "m1".into(), opaque });
        let item = Opaque::Item { id: "rs_up".into(), encrypted_content: Some("enc.1".into()) };
        let parts = vec![
            ReasoningPart { text: "plan".into(), kind: ReasoningKind::Raw, state: state(FORMAT, item) },
            ReasoningPart {
                text: "hmm".into(),
                kind: ReasoningKind::Summary,
                state: state("anthropic_messages", Opaque::Signature("sig.a".into())),
            },
        ];
        let gemini = state("gemini", Opaque::Signature("sig.g".into()));
        let mut whole = answer("", "planhmm", &[("", "f", "{}")], FinishReason::ToolCalls);
        whole.reasoning_parts = parts.clone();
        whole.tool_calls[0].state = gemini.clone();
        let body: Value = serde_json::from_str(&answer_body(&meta(), &whole)).unwrap();
        let output = body["output"].as_array().unwrap().clone();
        assert_eq!(output[0]["encrypted_content"], "enc.1");
        assert_eq!((&output[0]["content"][0]["text"], &output[0]["summary"]), (&json!("plan"), &json!([])));
        assert_eq!(output[1]["summary"][0]["text"], "hmm");
        assert!(output[0]["id"].as_str().unwrap().starts_with("bt1_"), "{}", output[0]);

        let mut e = OpenaiResponses::stream_encoder(meta(), false);
        let mut out = String::new();
        for part in &parts {
            e.delta(&Delta::Reasoning { text: part.text.clone(), kind: part.kind }, &mut out);
            e.delta(&Delta::ReasoningState { state: part.state.clone().unwrap() }, &mut out);
        }
        e.delta(&fragment(0, Some(("", "f")), "{}"), &mut out);
        e.delta(&Delta::ToolCallState { index: 0, state: gemini.clone().unwrap() }, &mut out);
        e.finish(&FinishReason::ToolCalls, whole.usage, &mut out);
        let (_, end) = events(&out).pop().unwrap();
        assert_eq!(end["response"]["output"], body["output"], "the stream's items are the whole answer's");

        let mut input = vec![json!({"role": "user", "content": "q"})];
        input.extend(output.iter().cloned());
        input.push(json!({"type": "function_call_output", "call_id": output[2]["call_id"], "output": "sunny"}));
        let r = call(json!({"model": "m", "input": input})).unwrap().request;
        assert_eq!(r.messages[1].reasoning, parts);
        assert_eq!(r.messages[1].tool_calls[0].state, gemini);
        assert_eq!(r.messages[2].tool_call_id.as_deref(), Some(r.messages[1].tool_calls[0].id.as_str()));
        assert!(!r.messages[2].tool_call_id.as_deref().unwrap().starts_with("bt1_"));
    }

    #[test]
    fn streams_read_back_as_their_whole_answers() {
        let think = |t: &str| Delta::Reasoning { text: t.into(), kind: ReasoningKind::Summary };
        let raw = |t: &str| Delta::Reasoning { text: t.into(), kind: ReasoningKind::Raw };
        let cases = [
            ("text", vec![text("Hel"), text(""), text("lo")], answer("Hello", "", &[], FinishReason::Stop)),
            (
                "reasoning then text",
                vec![think("a"), think("b"), text("9.8")],
                answer("9.8", "ab", &[], FinishReason::Stop),
            ),
            (
                "parallel calls, their fragments interleaved",
                vec![
                    fragment(0, Some(("call_a", "f")), ""),
                    fragment(1, Some(("call_b", "g")), "{\"y\""),
                    fragment(0, None, "{\"x\":1}"),
                    fragment(1, None, ":2}"),
                ],
                answer("", "", &[("call_a", "f", "{\"x\":1}"), ("call_b", "g", "{\"y\":2}")], FinishReason::ToolCalls),
            ),
            (
                "text, then a call",
                vec![text("Looking."), fragment(0, Some(("call_a", "f")), "{}")],
                answer("Looking.", "", &[("call_a", "f", "{}")], FinishReason::ToolCalls),
            ),
            ("cut by the token limit", vec![text("Once")], answer("Once", "", &[], FinishReason::Length)),
            ("nothing said", vec![], answer("", "", &[], FinishReason::Stop)),
            (
                "raw reasoning, then a summary of it, then text",
                vec![raw("a"), raw("b"), think("in short"), text("9.8")],
                Answer {
                    reasoning_parts: vec![
                        ReasoningPart { text: "ab".into(), kind: ReasoningKind::Raw, state: None },
                        ReasoningPart { text: "in short".into(), kind: ReasoningKind::Summary, state: None },
                    ],
                    ..answer("9.8", "abin short", &[], FinishReason::Stop)
                },
            ),
        ];
        for (case, deltas, whole) in cases {
            let mut e = OpenaiResponses::stream_encoder(meta(), false);
            let mut out = String::new();
            for d in &deltas {
                e.delta(d, &mut out);
            }
            e.finish(&whole.finish_reason, whole.usage, &mut out);
            let events = events(&out);
            let (last, end) = events.last().unwrap();
            let (status, _) = ending(&whole.finish_reason);
            assert_eq!(last, &format!("response.{status}"), "{case}");
            let (accumulated, shown) = accumulate(&events);
            let expected: Value = serde_json::from_str(&answer_body(&meta(), &whole)).unwrap();
            assert_eq!(end["response"], expected, "{case}: the end carries the whole answer");
            assert_eq!(accumulated["output"], expected["output"], "{case}: the events add up to the whole answer");
            assert_eq!(shown, whole.text, "{case}");
            assert_eq!(events.iter().filter(|(k, _)| k == "response.created").count(), 1, "{case}");
            assert!(!out.contains("event: error"), "{case}");
        }
    }

    #[test]
    fn an_event_sequence_the_sdk_accepts() {
        let mut e = OpenaiResponses::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&text("Hi"), &mut out);
        e.delta(&fragment(0, Some(("call_a", "f")), "{}"), &mut out);
        e.delta(
            &Delta::Done { finish_reason: FinishReason::ToolCalls, usage: Usage::default(), model: None },
            &mut out,
        );
        let kinds: Vec<String> = events(&out).into_iter().map(|(k, _)| k).collect();
        assert_eq!(
            kinds,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
    }

    #[test]
    fn a_failed_stream_ends_in_response_failed_and_an_error_event() {
        let mut e = OpenaiResponses::stream_encoder(meta(), false);
        let mut out = String::new();
        e.delta(&text("partial"), &mut out);
        let mut error = GatewayError::new(502, "transport error: reset");
        error.kind = "upstream_error";
        error.code = Some("upstream_unreachable");
        e.fail(&error, &mut out);
        let events = events(&out);
        let (accumulated, shown) = accumulate(&events);
        assert_eq!(shown, "partial");
        let [.., (failed, f), (kind, last)] = &events[..] else { panic!("{out}") };
        assert_eq!((failed.as_str(), kind.as_str()), ("response.failed", "error"));
        assert_eq!(f["response"]["status"], "failed");
        assert_eq!(
            f["response"]["error"],
            json!({"code": "upstream_unreachable", "message": "transport error: reset"})
        );
        assert_eq!(accumulated["output"][0]["status"], "incomplete", "the message was cut");
        assert_eq!(accumulated["output"][0]["content"][0]["text"], "partial");
        assert_eq!(
            last.clone(),
            json!({"type": "error", "sequence_number": events.len() - 1, "code": "upstream_unreachable",
                   "message": "transport error: reset", "param": null,
                   "error": {"type": "upstream_error", "code": "upstream_unreachable", "message": "transport error: reset", "param": null}})
        );
        assert!(!out.contains("response.completed"));
    }
}
