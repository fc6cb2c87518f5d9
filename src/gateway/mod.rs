//! The edge gateway's translation layer: client wire formats in, client wire formats out.
//!
//! A gateway serves clients that already speak OpenAI Chat Completions, OpenAI Responses or
//! Anthropic Messages (the official SDKs, curl, chat UIs, agent frameworks) from any route,
//! whatever format its targets speak. So it
//! translates twice, always through the normalized types of [`crate::chat`]: a client's request
//! body becomes a [`ChatRequest`] ([`parse_request`]), and the normalized answer, deltas and
//! failures become the client's JSON body, SSE events and error shape ([`StreamEncoder`],
//! [`answer_body`], [`GatewayError::from_failure`]).
//!
//! Like the rest of the core this is pure: no clock (ids and timestamps come in as [`Meta`]), no
//! I/O. The HTTP plumbing (routing, body limits, holding the status until the route commits)
//! lives in the wasm driver and `pkg/gateway.js`.

pub mod anthropic;
pub mod openai;
pub mod responses;

use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

use crate::chat::{
    Answer, ChatRequest, Delta, FinishReason, Message, ResponseFormat, Tool, ToolChoice, UnmetChoice, Usage,
};
use crate::config::{parse_ms, ConfigError, Cors, GatewayConfig};
use crate::outcome::{Failure, FailureClass};

/// The request header that sets one call's deadline.
pub const DEADLINE_HEADER: &str = "x-baton-deadline-ms";

/// The wire format a client speaks to the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFormat {
    /// `POST /v1/chat/completions` (and `GET /v1/models`).
    OpenAi,
    /// `POST /v1/messages`.
    Anthropic,
    /// `POST /v1/responses`.
    Responses,
}

impl ClientFormat {
    pub fn parse(name: &str) -> Option<ClientFormat> {
        match name {
            "openai" => Some(ClientFormat::OpenAi),
            "anthropic" => Some(ClientFormat::Anthropic),
            "responses" => Some(ClientFormat::Responses),
            _ => None,
        }
    }
}

/// A client's request, normalized: the route it names, whether it streams, and the chat.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientCall {
    /// The client's `model`, which names a route (or a target) of the config.
    pub model: String,
    pub stream: bool,
    /// OpenAI `stream_options.include_usage`: end the stream with a usage-only chunk.
    pub include_usage: bool,
    pub request: ChatRequest,
    /// The request's settings a response object repeats back (Responses' `instructions`,
    /// `tools`, `temperature`…), for [`Meta::echo`]; null for the formats that repeat none.
    pub echo: Value,
    /// Where each of `request.messages` came from in the client's body.
    pub origins: Vec<PartOrigin>,
}

/// Where a normalized message's parts came from in the client's body, so a refusal of one
/// part names it as the client wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartOrigin {
    /// The client's field that held the content: `messages[2].content`, `input[0].content`,
    /// `system`.
    pub path: String,
    /// For content given as a list, the list index of each part; `None` for a string.
    pub indices: Option<Vec<usize>>,
}

impl ClientCall {
    /// A part some target of the route cannot carry ([`crate::config::Config::check_request`]
    /// names it `request.messages[i].content[j]`), as a 400 naming the part by the client's path.
    pub fn uncarried(&self, e: &ConfigError) -> GatewayError {
        let part = |path: &str| {
            let (i, j) = path.strip_prefix("request.messages[")?.strip_suffix(']')?.split_once("].content[")?;
            let origin = self.origins.get(i.parse::<usize>().ok()?)?;
            let j: usize = j.parse().ok()?;
            Some(match &origin.indices {
                Some(indices) => format!("{}[{}]", origin.path, indices.get(j)?),
                None => origin.path.clone(),
            })
        };
        // The message starts with the path it names.
        match (part(&e.path), e.message.strip_prefix(e.path.as_str())) {
            (Some(subject), Some(rest)) => GatewayError::invalid(format!("{subject}{rest}")),
            _ => GatewayError::invalid(e.message.clone()),
        }
    }
}

/// A client's conversation as normalized messages, each with its [`PartOrigin`].
#[derive(Debug, Default)]
pub(crate) struct Conversation {
    pub messages: Vec<Message>,
    pub origins: Vec<PartOrigin>,
}

impl Conversation {
    pub fn push(&mut self, message: Message, path: impl Into<String>, indices: Option<Vec<usize>>) {
        self.messages.push(message);
        self.origins.push(PartOrigin { path: path.into(), indices });
    }
}

/// Parses a client's request body in its format. A mistake is a 400 naming the field.
pub fn parse_request(format: ClientFormat, body: &str) -> Result<ClientCall, GatewayError> {
    let value: Value = serde_json::from_str(body)
        .map_err(|e| GatewayError::invalid(format!("the request body is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(GatewayError::invalid(format!("the request body must be a JSON object (got {})", kind_of(&value))));
    }
    match format {
        ClientFormat::OpenAi => openai::parse_request(&value),
        ClientFormat::Anthropic => anthropic::parse_request(&value),
        ClientFormat::Responses => responses::parse_request(&value),
    }
}

/// What a response is about, for ids and the `model` field. The driver supplies the clock and
/// the randomness the core does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Unique per response, e.g. `chatcmpl-…`, `msg_…` or `resp_…`.
    pub id: String,
    /// Seconds since the Unix epoch (OpenAI's `created`, Responses' `created_at`).
    pub created: u64,
    /// The model that answered (the provider's word, else the target's configured model).
    pub model: String,
    /// The client's [`ClientCall::echo`].
    pub echo: Value,
}

/// A whole, non-streamed answer as the client's JSON body.
pub fn answer_body(format: ClientFormat, meta: &Meta, answer: &Answer) -> String {
    match format {
        ClientFormat::OpenAi => openai::answer_body(meta, answer),
        ClientFormat::Anthropic => anthropic::answer_body(meta, answer),
        ClientFormat::Responses => responses::answer_body(meta, answer),
    }
}

/// Encodes a normalized stream as the client's SSE events. `delta` for each delivered delta,
/// then exactly one of `finish` (the success marker included) or `fail` (an error event, and no
/// success marker, so no client can mistake a broken stream for a short answer).
#[derive(Debug)]
pub enum StreamEncoder {
    OpenAi(openai::StreamEncoder),
    Anthropic(anthropic::StreamEncoder),
    Responses(responses::StreamEncoder),
}

impl StreamEncoder {
    pub fn new(format: ClientFormat, meta: Meta, include_usage: bool) -> StreamEncoder {
        match format {
            ClientFormat::OpenAi => StreamEncoder::OpenAi(openai::StreamEncoder::new(meta, include_usage)),
            ClientFormat::Anthropic => StreamEncoder::Anthropic(anthropic::StreamEncoder::new(meta)),
            ClientFormat::Responses => StreamEncoder::Responses(responses::StreamEncoder::new(meta)),
        }
    }

    /// The model named in the stream, settled once the serving target is known (before any output).
    pub fn set_model(&mut self, model: &str) {
        match self {
            StreamEncoder::OpenAi(e) => e.meta.model = model.to_string(),
            StreamEncoder::Anthropic(e) => e.meta.model = model.to_string(),
            StreamEncoder::Responses(e) => e.meta.model = model.to_string(),
        }
    }

    pub fn delta(&mut self, delta: &Delta, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.delta(delta, out),
            StreamEncoder::Anthropic(e) => e.delta(delta, out),
            StreamEncoder::Responses(e) => e.delta(delta, out),
        }
    }

    pub fn finish(&mut self, finish_reason: &FinishReason, usage: Usage, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.finish(finish_reason, usage, out),
            StreamEncoder::Anthropic(e) => e.finish(finish_reason, usage, out),
            StreamEncoder::Responses(e) => e.finish(finish_reason, usage, out),
        }
    }

    pub fn fail(&mut self, error: &GatewayError, out: &mut String) {
        match self {
            StreamEncoder::OpenAi(e) => e.fail(error, out),
            StreamEncoder::Anthropic(e) => e.fail(error, out),
            StreamEncoder::Responses(e) => e.fail(error, out),
        }
    }
}

/// (input, output) token counts for a client body. Every client format requires numbers, so a
/// count the provider did not report (or reported as no count) is sent as 0.
pub(crate) fn token_counts(usage: Usage) -> (u64, u64) {
    (usage.input_tokens.unwrap_or(0), usage.output_tokens.unwrap_or(0))
}

/// One SSE frame whose data is the JSON `write` writes; `event` is the event's name (Anthropic
/// and Responses name theirs, OpenAI Chat sends bare `data:` lines). The writer is a `dyn`, so
/// every event of every format shares this one function.
pub(crate) fn sse(out: &mut String, event: Option<&str>, write: &dyn Fn(&mut JsonWriter)) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    let mut w = JsonWriter::appending(std::mem::take(out));
    write(&mut w);
    *out = w.finish();
    out.push_str("\n\n");
}

/// `"key":"value"`, or `"key":null` for `None`: a field the client's API always lists.
pub(crate) fn string_or_null(w: &mut JsonWriter, key: &str, value: Option<&str>) {
    w.key(key);
    match value {
        Some(value) => w.string(value),
        None => w.null(),
    }
}

/// An answer the gateway gives instead of the route's: a refused request or a failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    pub status: u16,
    /// The error `type` in the body (`invalid_request_error`, `upstream_error`, …).
    pub kind: &'static str,
    /// OpenAI's `code` (`upstream_timeout`, `model_not_found`, …); Anthropic has no such field.
    pub code: Option<&'static str>,
    pub message: String,
    /// A provider's Retry-After, passed on to the client.
    pub retry_after_ms: Option<u64>,
    /// The upstream failure's class, which the body names in each client format's own words.
    pub class: Option<FailureClass>,
}

impl GatewayError {
    /// A client-side mistake: the status decides the type (400, 401, 404, 405, 413…).
    pub fn new(status: u16, message: impl Into<String>) -> GatewayError {
        let code = match status {
            401 => Some("invalid_api_key"),
            404 => Some("not_found"),
            413 => Some("request_too_large"),
            _ => None,
        };
        GatewayError {
            status,
            kind: type_for_status(status),
            code,
            message: message.into(),
            retry_after_ms: None,
            class: None,
        }
    }

    /// A 400 for a malformed body or a field; the message names the field.
    pub fn invalid(message: impl Into<String>) -> GatewayError {
        GatewayError::new(400, message)
    }

    /// A model the config does not know: 404, listing what it does know.
    pub fn unknown_model(model: &str, known: &[String]) -> GatewayError {
        let mut e = GatewayError::new(
            404,
            format!("model {} is not a route of this gateway (known: {})", model.to_json(), known.join(", ")),
        );
        e.code = Some("model_not_found");
        e
    }

    /// The call's failure once nothing is left to try, as the status and body a client expects:
    /// a timeout is a 504, a transport failure or an answer that could not be understood a 502,
    /// and an upstream HTTP error keeps its status and the provider's own message, except a 401
    /// or 403: those refused the gateway's provider key, not the client's gateway key, so they
    /// are a 502 `upstream_credentials_refused` (a client SDK would read a 401 as "your key"),
    /// as is any failure of class `auth` (Gemini's invalid key is a 400).
    ///
    /// A classed failure takes the status and codes each client SDK knows for it:
    ///
    /// | class | status | OpenAI `type` / `code` | Anthropic `type` |
    /// |---|---|---|---|
    /// | context_length | 400 | invalid_request_error / context_length_exceeded | invalid_request_error |
    /// | content_filter | 400 | invalid_request_error / content_filter | invalid_request_error |
    /// | quota | 429 | insufficient_quota / insufficient_quota | billing_error |
    /// | rate_limit | 429 | rate_limit_error / rate_limit_exceeded | rate_limit_error |
    /// | overloaded | 529 | overloaded_error / overloaded | overloaded_error |
    ///
    /// The first three also say `x-should-retry: false` ([`GatewayError::should_retry`]).
    /// `target`, when known, is named when its upstream credentials were refused.
    pub fn from_failure(failure: &Failure, target: Option<&str>) -> GatewayError {
        let upstream = |status, code, message: String| GatewayError {
            status,
            kind: "upstream_error",
            code: Some(code),
            message,
            retry_after_ms: None,
            class: None,
        };
        match failure {
            Failure::Timeout { .. } => upstream(504, "upstream_timeout", failure.to_string()),
            Failure::Transport { .. } => upstream(502, "upstream_unreachable", failure.to_string()),
            Failure::Protocol { .. } => upstream(502, "upstream_protocol_error", failure.to_string()),
            Failure::Http { status: 401 | 403, .. } | Failure::Http { class: Some(FailureClass::Auth), .. } => {
                let provider = match target {
                    Some(name) => format!("target {}", name.to_json()),
                    None => "its upstream provider".to_string(),
                };
                upstream(
                    502,
                    "upstream_credentials_refused",
                    format!(
                        "the gateway's credentials for {provider} were refused ({failure}); your gateway key was \
                         accepted: the gateway's operator must fix that target's apiKey or credential headers"
                    ),
                )
            }
            Failure::Http { status, message, retry_after_ms, class, .. } => {
                let message = crate::outcome::without_status_prefix(*status, message.clone());
                let message = if message.is_empty() { format!("upstream answered HTTP {status}") } else { message };
                let (status, code) = match class {
                    Some(FailureClass::ContextLength) => (400, Some("context_length_exceeded")),
                    Some(FailureClass::ContentFilter) => (400, Some("content_filter")),
                    Some(FailureClass::Quota) => (429, Some("insufficient_quota")),
                    Some(FailureClass::RateLimit) => (429, Some("rate_limit_exceeded")),
                    Some(FailureClass::Overloaded) => (529, Some("overloaded")),
                    Some(FailureClass::Auth) | None => (*status, None),
                };
                GatewayError {
                    status,
                    kind: type_for_status(status),
                    code,
                    message,
                    retry_after_ms: *retry_after_ms,
                    class: *class,
                }
            }
            // Nobody reads it: the client has gone. nginx's 499 says so in logs.
            Failure::Cancelled => GatewayError {
                status: 499,
                kind: "cancelled",
                code: Some("client_closed_request"),
                message: failure.to_string(),
                retry_after_ms: None,
                class: None,
            },
        }
    }

    /// `Some(false)` for a class a client's retry cannot help, sent as `x-should-retry: false`:
    /// the OpenAI and Anthropic SDKs obey that header before their status rule, and would
    /// otherwise retry a spent quota's 429.
    pub fn should_retry(&self) -> Option<bool> {
        match self.class? {
            FailureClass::ContextLength | FailureClass::ContentFilter | FailureClass::Quota => Some(false),
            FailureClass::Auth | FailureClass::Overloaded | FailureClass::RateLimit => None,
        }
    }

    /// The error body in the client's format: OpenAI's (Chat Completions and Responses alike)
    /// `{"error":{"message","type","param","code"}}`, Anthropic's
    /// `{"type":"error","error":{"type","message"}}`, keys in their API references' order.
    pub fn body(&self, format: ClientFormat) -> String {
        let mut w = JsonWriter::new();
        self.write_body(&mut w, format);
        w.finish()
    }

    /// [`GatewayError::body`], written as the next value of `w` (a stream's error event).
    pub(crate) fn write_body(&self, w: &mut JsonWriter, format: ClientFormat) {
        w.begin_object();
        match format {
            ClientFormat::OpenAi | ClientFormat::Responses => {
                w.key("error");
                self.write_openai_error(w);
            }
            ClientFormat::Anthropic => {
                // A spent quota is a 429 to both SDKs, but each names it its own way.
                let quota = self.class == Some(FailureClass::Quota);
                w.field("type", "error");
                w.key("error");
                w.begin_object();
                w.field("type", if quota { "billing_error" } else { self.kind });
                w.field("message", &self.message);
                w.end_object();
            }
        }
        w.end_object();
    }

    /// OpenAI's error object, `{"message","type","param","code"}`.
    pub(crate) fn write_openai_error(&self, w: &mut JsonWriter) {
        let quota = self.class == Some(FailureClass::Quota);
        w.begin_object();
        w.field("message", &self.message);
        w.field("type", if quota { "insufficient_quota" } else { self.kind });
        w.key("param");
        w.null();
        string_or_null(w, "code", self.code);
        w.end_object();
    }
}

/// The error type both SDKs know for a status.
fn type_for_status(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// Reads `x-baton-deadline-ms`: absent means the config's `deadlineMs`.
pub fn parse_deadline_header(value: Option<&str>) -> Result<Option<u64>, GatewayError> {
    let Some(raw) = value else { return Ok(None) };
    let parsed = raw.trim().parse::<f64>().ok().filter(|n| n.is_finite()).and_then(|n| parse_ms(&Value::from(n)));
    parsed.map(Some).ok_or_else(|| {
        GatewayError::invalid(format!(
            "{DEADLINE_HEADER} must be a positive number of milliseconds up to {} (got {}); omit it to use the gateway's deadlineMs",
            crate::config::MAX_MS,
            raw.chars().take(40).collect::<String>().to_json()
        ))
    })
}

/// Whether a request carries one of the gateway's keys, as `Authorization: Bearer <key>` (the
/// OpenAI SDK) or `x-api-key: <key>` (the Anthropic SDK). With no keys configured, all pass.
pub fn authorized(config: &GatewayConfig, authorization: Option<&str>, x_api_key: Option<&str>) -> bool {
    if config.api_keys.is_empty() {
        return true;
    }
    let bearer = authorization.and_then(|a| {
        let (scheme, rest) = a.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then_some(rest.trim())
    });
    let offered: Vec<&str> = bearer.into_iter().chain(x_api_key.map(str::trim)).collect();
    // Compare every key in full, so the time taken does not tell how much of a guess matched.
    let mut found = false;
    for key in &config.api_keys {
        for candidate in &offered {
            found |= constant_time_eq(key.expose().as_bytes(), candidate.as_bytes());
        }
    }
    found
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(!x));
    }
    diff == 0
}

/// The `access-control-allow-origin` value for a request's `Origin`, if CORS allows it.
pub fn cors_origin(config: &GatewayConfig, origin: Option<&str>) -> Option<String> {
    match (&config.cors, origin) {
        (Cors::Off, _) => None,
        (Cors::AnyOrigin, _) => Some("*".into()),
        (Cors::Origins(list), Some(origin)) => list.iter().find(|o| o.as_str() == origin).cloned(),
        (Cors::Origins(_), None) => None,
    }
}

/// `GET /v1/models`: the routes in OpenAI's list format.
pub fn models_body(names: &[String], created: u64) -> String {
    let mut w = JsonWriter::new();
    w.begin_object();
    w.field("object", "list");
    w.key("data");
    w.begin_array();
    for name in names {
        w.begin_object();
        w.field("id", name);
        w.field("object", "model");
        w.field("created", &created);
        w.field("owned_by", "llm-baton");
        w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish()
}

/// `"auto"`, `"none"` or `"required"`, the words every OpenAI format uses for a tool choice.
pub(crate) fn tool_choice_word(word: &str) -> Option<ToolChoice> {
    match word {
        "auto" => Some(ToolChoice::Auto),
        "none" => Some(ToolChoice::None),
        "required" => Some(ToolChoice::Required),
        _ => None,
    }
}

/// A tool choice the request's tools can satisfy: a named tool is one of them, and
/// `required` needs some. `path` is the client's field.
pub(crate) fn check_tool_choice(choice: ToolChoice, tools: &[Tool], path: &str) -> Result<ToolChoice, GatewayError> {
    match choice.unmet_by(tools) {
        Some(UnmetChoice::NoTools) => Err(GatewayError::invalid(format!(
            "{path} requires a tool call but tools is empty; give the tools the model must choose from"
        ))),
        Some(UnmetChoice::UnknownTool(name)) => {
            let names: Vec<String> = tools.iter().map(|t| t.name.to_json()).collect();
            Err(GatewayError::invalid(format!(
                "{path} names the tool {}, which is not one of the tools (tools: [{}])",
                name.to_json(),
                names.join(", ")
            )))
        }
        None => Ok(choice),
    }
}

/// A JSON Schema output format, `{name?, schema, description?, strict?}` at `path`: OpenAI
/// Chat's `json_schema` and Responses' `text.format`.
pub(crate) fn json_schema_format(o: &Map<String, Value>, path: &str) -> Result<ResponseFormat, GatewayError> {
    let schema = match field::opt(o, "schema") {
        None => return Err(field::missing(&field::child(path, "schema"), "a JSON Schema object")),
        Some(s @ Value::Object(_)) => s.clone(),
        Some(other) => return Err(field::wrong(&field::child(path, "schema"), "a JSON Schema object", other)),
    };
    Ok(ResponseFormat::Json {
        schema: Some(schema),
        name: field::opt_string(o, "name", path)?.map(str::to_string),
        description: field::opt_string(o, "description", path)?.map(str::to_string),
        strict: field::opt_flag(o, "strict", path)?,
    })
}

/// "a list", "a number"…: what a value was, for messages.
pub(crate) fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() > 40 => {
            format!("{}...", s.chars().take(37).collect::<String>().to_json())
        }
        Value::String(s) => s.to_json(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Field readers for request bodies: every mistake names the field by path.
pub(crate) mod field {
    use serde_json::{Map, Value};

    use super::{kind_of, GatewayError};

    pub fn child(path: &str, key: &str) -> String {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    }

    pub fn wrong(path: &str, expected: &str, got: &Value) -> GatewayError {
        GatewayError::invalid(format!("{path} must be {expected} (got {})", kind_of(got)))
    }

    pub fn missing(path: &str, expected: &str) -> GatewayError {
        GatewayError::invalid(format!("{path} is missing; give {expected}"))
    }

    pub fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, GatewayError> {
        v.as_object().ok_or_else(|| wrong(path, "an object", v))
    }

    /// An optional field; JSON `null` counts as absent, as the SDKs send it.
    pub fn opt<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
        o.get(key).filter(|v| !v.is_null())
    }

    pub fn string<'a>(
        o: &'a Map<String, Value>,
        key: &str,
        path: &str,
        expected: &str,
    ) -> Result<&'a str, GatewayError> {
        let p = child(path, key);
        match opt(o, key) {
            None => Err(missing(&p, expected)),
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(wrong(&p, expected, other)),
        }
    }

    pub fn opt_string<'a>(o: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>, GatewayError> {
        match opt(o, key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(wrong(&child(path, key), "a string", other)),
        }
    }

    pub fn opt_bool(o: &Map<String, Value>, key: &str, path: &str) -> Result<bool, GatewayError> {
        match opt(o, key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(wrong(&child(path, key), "true or false", other)),
        }
    }

    pub fn array<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a [Value], GatewayError> {
        v.as_array().map(Vec::as_slice).ok_or_else(|| wrong(path, expected, v))
    }

    /// The optional list at `key` (a top-level field), each item read by `read` with its path
    /// (`tools[2]`); absent is empty.
    pub fn opt_list<T>(
        o: &Map<String, Value>,
        key: &str,
        expected: &str,
        read: impl Fn(&Value, &str) -> Result<T, GatewayError>,
    ) -> Result<Vec<T>, GatewayError> {
        let Some(v) = opt(o, key) else { return Ok(Vec::new()) };
        array(v, key, expected)?.iter().enumerate().map(|(i, item)| read(item, &format!("{key}[{i}]"))).collect()
    }

    pub fn opt_tokens(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u32>, GatewayError> {
        match opt(o, key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.fract() == 0.0 && (1.0..=u32::MAX as f64).contains(&n) => Ok(Some(n as u32)),
                _ => Err(wrong(&child(path, key), "a positive whole number of tokens", v)),
            },
        }
    }

    pub fn opt_temperature(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, GatewayError> {
        match opt(o, key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if (0.0..=2.0).contains(&n) => Ok(Some(n)),
                _ => Err(wrong(&child(path, key), "a number from 0 to 2", v)),
            },
        }
    }

    /// `top_p`: a probability mass from 0 to 1.
    pub fn opt_top_p(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, GatewayError> {
        match opt(o, key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if (0.0..=1.0).contains(&n) => Ok(Some(n)),
                _ => Err(wrong(&child(path, key), "a number from 0 to 1", v)),
            },
        }
    }

    /// `seed`: a whole number a JavaScript number holds exactly.
    pub fn opt_seed(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, GatewayError> {
        const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
        match opt(o, key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER => Ok(Some(n as i64)),
                _ => Err(wrong(&child(path, key), "a whole number (a JavaScript safe integer)", v)),
            },
        }
    }

    /// `parallel_tool_calls`: absent is the provider's default.
    pub fn opt_flag(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>, GatewayError> {
        match opt(o, key) {
            None => Ok(None),
            Some(_) => opt_bool(o, key, path).map(Some),
        }
    }

    /// `stop` / `stop_sequences`: one string or a list of strings.
    pub fn opt_stop(o: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, GatewayError> {
        let p = child(path, key);
        match opt(o, key) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s.clone()]),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, s)| s.as_str().map(str::to_string).ok_or_else(|| wrong(&format!("{p}[{i}]"), "a string", s)))
                .collect(),
            Some(other) => Err(wrong(&p, "a string or a list of strings", other)),
        }
    }

    /// One of `allowed`, quoted in the message when it is not.
    pub fn one_of<'a>(
        o: &'a Map<String, Value>,
        key: &str,
        path: &str,
        allowed: &[&str],
    ) -> Result<&'a str, GatewayError> {
        let listed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
        let expected = format!("one of {}", listed.join(", "));
        let s = string(o, key, path, &expected)?;
        if allowed.contains(&s) {
            Ok(s)
        } else {
            Err(wrong(&child(path, key), &expected, &Value::String(s.to_string())))
        }
    }
}

/// Images and files as clients send them: a URL (a `data:` URL carries the bytes), or base64
/// data with its media type. Every mistake names the field.
pub(crate) mod media {
    use llm_baton_wire::write::ToJson;

    use super::GatewayError;
    use crate::chat::{is_media_type, Part, Role, Source};

    /// An image's or file's `url` as a client gave it: a base64 `data:` URL is read as its data
    /// and media type (what OpenAI clients send inline); any other URL is fetched by the provider.
    pub fn from_url(url: &str, media_type: Option<&str>, path: &str) -> Result<Source, GatewayError> {
        if url.is_empty() {
            return Err(GatewayError::invalid(format!("{path} must be a URL or a data: URL (got \"\")")));
        }
        Source::from_url(url, media_type.map(str::to_string)).ok_or_else(|| {
            GatewayError::invalid(format!(
                "{path} is a data: URL but not a base64 one with a media type; give it as \
                 data:<media type>;base64,<data>"
            ))
        })
    }

    /// Base64 `data` with its `media_type`, e.g. Anthropic's `{type: "base64", media_type, data}`.
    pub fn from_data(data: &str, media_type: &str, path: &str) -> Result<Source, GatewayError> {
        if data.is_empty() {
            return Err(GatewayError::invalid(format!("{path}.data must be the bytes as base64 (got \"\")")));
        }
        if !is_media_type(media_type) {
            return Err(GatewayError::invalid(format!(
                "{path}.media_type must be a media type such as \"image/png\" or \"application/pdf\" (got {})",
                media_type.to_json()
            )));
        }
        Ok(Source::Data { data: data.to_string(), media_type: media_type.to_ascii_lowercase() })
    }

    /// A file's media type from its name, for a file given by URL alone: the documents providers
    /// read (PDF, plain text).
    pub fn media_type_of_name(name: &str) -> Option<&'static str> {
        let name = name.split(['?', '#']).next().unwrap_or(name).to_ascii_lowercase();
        match name.rsplit_once('.')?.1 {
            "pdf" => Some("application/pdf"),
            "txt" => Some("text/plain"),
            _ => None,
        }
    }

    /// `part` at `path` in a message of `role`: only a user message may carry an image or a
    /// file, and an image's media type is an image's.
    pub fn check_part(part: Part, role: Role, path: &str) -> Result<Part, GatewayError> {
        if let Part::Image { source } = &part {
            if let Some(other) = source.media_type().filter(|mt| !mt.starts_with("image/")) {
                return Err(GatewayError::invalid(format!(
                    "{path} is an image of media type {}; send an image (image/png, image/jpeg, image/gif, \
                     image/webp) or send the file as a file or document",
                    other.to_json()
                )));
            }
        }
        match part.misplaced_in(role) {
            Some(why) => Err(GatewayError::invalid(format!("{path} {why}"))),
            None => Ok(part),
        }
    }

    /// A stored-file reference (`file_id`): the gateway forwards no provider's files.
    pub fn stored_file(path: &str, instead: &str) -> GatewayError {
        GatewayError::invalid(format!(
            "{path} names a file stored at a provider, which the gateway cannot forward to another; {instead}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::Secret;

    fn body(e: &GatewayError, format: ClientFormat) -> Value {
        serde_json::from_str(&e.body(format)).unwrap()
    }

    #[test]
    fn failures_map_to_statuses_and_types() {
        let timeout = GatewayError::from_failure(
            &Failure::Timeout { limit: crate::outcome::Limit::Deadline, limit_ms: 1500 },
            None,
        );
        assert_eq!((timeout.status, timeout.kind, timeout.code), (504, "upstream_error", Some("upstream_timeout")));
        assert_eq!(timeout.message, "response did not finish within 1500 ms, retries included");
        let transport = GatewayError::from_failure(&Failure::Transport { message: "connection refused".into() }, None);
        assert_eq!((transport.status, transport.kind), (502, "upstream_error"));
        let http = GatewayError::from_failure(
            &Failure::Http {
                status: 429,
                message: "slow down".into(),
                code: None,
                class: None,
                retry_after_ms: Some(2000),
                should_retry: None,
                in_stream: false,
            },
            None,
        );
        assert_eq!((http.status, http.kind, http.message.as_str()), (429, "rate_limit_error", "slow down"));
        assert_eq!(http.retry_after_ms, Some(2000));
        assert_eq!(
            body(&timeout, ClientFormat::OpenAi),
            json!({"error": {"message": timeout.message, "type": "upstream_error", "code": "upstream_timeout", "param": null}})
        );
        assert_eq!(
            body(&http, ClientFormat::Anthropic),
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
        );
    }

    #[test]
    fn refused_upstream_credentials_are_a_502_not_the_clients_401() {
        for (status, in_stream) in [(401, false), (403, false), (401, true)] {
            let failure = Failure::Http {
                status,
                message: "Incorrect API key provided.".into(),
                code: None,
                class: None,
                retry_after_ms: Some(1000),
                should_retry: None,
                in_stream,
            };
            let e = GatewayError::from_failure(&failure, Some("openai"));
            assert_eq!((e.status, e.kind, e.code), (502, "upstream_error", Some("upstream_credentials_refused")));
            assert_eq!(e.retry_after_ms, None);
            let place = if in_stream { " in stream" } else { "" };
            assert_eq!(
                e.message,
                format!(
                    "the gateway's credentials for target \"openai\" were refused (HTTP {status}{place}: Incorrect API \
                     key provided.); your gateway key was accepted: the gateway's operator must fix that target's \
                     apiKey or credential headers"
                )
            );
            let anonymous = GatewayError::from_failure(&failure, None);
            assert!(anonymous.message.starts_with("the gateway's credentials for its upstream provider were refused"));
            assert_eq!(body(&anonymous, ClientFormat::Anthropic)["error"]["type"], "upstream_error");
        }
    }

    #[test]
    fn failure_classes_take_each_client_formats_own_codes() {
        use FailureClass::*;
        let cases = [
            (ContextLength, 400, 400, "invalid_request_error", "context_length_exceeded", "invalid_request_error"),
            (ContentFilter, 400, 400, "invalid_request_error", "content_filter", "invalid_request_error"),
            (Quota, 429, 429, "insufficient_quota", "insufficient_quota", "billing_error"),
            (Quota, 402, 429, "insufficient_quota", "insufficient_quota", "billing_error"),
            (RateLimit, 429, 429, "rate_limit_error", "rate_limit_exceeded", "rate_limit_error"),
            (Overloaded, 503, 529, "overloaded_error", "overloaded", "overloaded_error"),
            (Overloaded, 529, 529, "overloaded_error", "overloaded", "overloaded_error"),
        ];
        for (class, upstream, status, openai_type, openai_code, anthropic_type) in cases {
            for in_stream in [false, true] {
                let failure = Failure::Http {
                    status: upstream,
                    message: "the provider's reason".into(),
                    code: Some("theirs".into()),
                    class: Some(class),
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream,
                };
                let e = GatewayError::from_failure(&failure, None);
                assert_eq!((e.status, e.message.as_str()), (status, "the provider's reason"), "{class:?}");
                let final_for_clients = matches!(class, ContextLength | ContentFilter | Quota);
                assert_eq!(e.should_retry(), final_for_clients.then_some(false), "{class:?}");
                assert_eq!(
                    body(&e, ClientFormat::OpenAi),
                    json!({"error": {"message": "the provider's reason", "type": openai_type, "code": openai_code, "param": null}}),
                    "{class:?}"
                );
                assert_eq!(
                    body(&e, ClientFormat::Anthropic),
                    json!({"type": "error", "error": {"type": anthropic_type, "message": "the provider's reason"}}),
                    "{class:?}"
                );
            }
        }
        // Gemini's invalid key is a 400 of class auth: the gateway's credentials, not the client's.
        let key = Failure::Http {
            status: 400,
            message: "API key not valid. Please pass a valid API key.".into(),
            code: Some("INVALID_ARGUMENT".into()),
            class: Some(Auth),
            retry_after_ms: None,
            should_retry: None,
            in_stream: false,
        };
        let e = GatewayError::from_failure(&key, Some("gemini"));
        assert_eq!((e.status, e.code), (502, Some("upstream_credentials_refused")));
    }

    #[test]
    fn no_message_repeats_its_prefix() {
        let cases = [
            (Failure::Transport { message: "transport error: reset".into() }, "transport error: reset"),
            (Failure::Protocol { message: "protocol error: bad JSON".into() }, "protocol error: bad JSON"),
            (
                Failure::Http {
                    status: 599,
                    message: "HTTP 599: HTTP 599: odd".into(),
                    code: None,
                    class: None,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: false,
                },
                "odd",
            ),
            (
                Failure::Http {
                    status: 500,
                    message: "HTTP 500".into(),
                    code: None,
                    class: None,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: false,
                },
                "upstream answered HTTP 500",
            ),
        ];
        for (failure, message) in cases {
            assert_eq!(GatewayError::from_failure(&failure, None).message, message, "{failure:?}");
        }
    }

    #[test]
    fn unknown_usage_is_sent_as_zero_where_clients_need_a_number() {
        let meta = Meta { id: "x".into(), created: 1, model: "m".into(), echo: Value::Null };
        let answer = Answer {
            text: "Hi".into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish_reason: FinishReason::Stop,
            usage: Usage { input_tokens: Some(7), output_tokens: None },
            model: None,
        };
        let openai: Value = serde_json::from_str(&answer_body(ClientFormat::OpenAi, &meta, &answer)).unwrap();
        assert_eq!(openai["usage"], json!({"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7}));
        let anthropic: Value = serde_json::from_str(&answer_body(ClientFormat::Anthropic, &meta, &answer)).unwrap();
        assert_eq!(anthropic["usage"], json!({"input_tokens": 7, "output_tokens": 0}));
    }

    #[test]
    fn deadline_header() {
        assert_eq!(parse_deadline_header(None), Ok(None));
        assert_eq!(parse_deadline_header(Some("1500")), Ok(Some(1500)));
        assert_eq!(parse_deadline_header(Some(" 2.5 ")), Ok(Some(3)));
        for bad in ["0", "-1", "soon", "", "NaN", "1e12"] {
            let e = parse_deadline_header(Some(bad)).unwrap_err();
            assert_eq!(e.status, 400, "{bad}");
            assert!(e.message.starts_with("x-baton-deadline-ms must be"), "{}", e.message);
        }
    }

    #[test]
    fn gateway_keys() {
        let mut config = GatewayConfig::default();
        assert!(authorized(&config, None, None));
        config.api_keys = vec![Secret::new("k-one"), Secret::new("k-two")];
        assert!(authorized(&config, Some("Bearer k-two"), None));
        assert!(authorized(&config, Some("bearer k-one"), None));
        assert!(authorized(&config, None, Some("k-one")));
        assert!(!authorized(&config, None, None));
        assert!(!authorized(&config, Some("Bearer k-on"), None));
        assert!(!authorized(&config, Some("Bearer k-one2"), None));
        assert!(!authorized(&config, Some("k-one"), None));
        assert!(!authorized(&config, None, Some("")));
    }

    #[test]
    fn cors() {
        let mut config = GatewayConfig::default();
        assert_eq!(cors_origin(&config, Some("https://a.example")), None);
        config.cors = Cors::AnyOrigin;
        assert_eq!(cors_origin(&config, None).as_deref(), Some("*"));
        config.cors = Cors::Origins(vec!["https://a.example".into()]);
        assert_eq!(cors_origin(&config, Some("https://a.example")).as_deref(), Some("https://a.example"));
        assert_eq!(cors_origin(&config, Some("https://b.example")), None);
    }

    #[test]
    fn models_list() {
        let body: Value = serde_json::from_str(&models_body(&["chat".into(), "fast".into()], 7)).unwrap();
        assert_eq!(body["object"], "list");
        assert_eq!(body["data"][1], json!({"id": "fast", "object": "model", "created": 7, "owned_by": "llm-baton"}));
    }

    #[test]
    fn a_part_no_target_can_carry_is_named_as_the_client_wrote_it() {
        let config = crate::config::Config::from_json(
            r#"{"targets": {
                "gemini": {"format": "gemini", "baseUrl": "https://g.example/v1beta", "model": "m", "apiKey": "k"},
                "chat": {"format": "openai_chat", "baseUrl": "https://o.example/v1", "model": "m", "apiKey": "k"}
            }}"#,
        )
        .unwrap();
        let image = json!({"type": "image_url", "image_url": {"url": "https://x.example/a.png"}});
        let cases = [
            (
                ClientFormat::OpenAi,
                "gemini",
                json!({"model": "gemini", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "a"}, image]}]}),
                "messages[1].content[1]",
            ),
            (
                ClientFormat::Anthropic,
                "gemini",
                json!({"model": "gemini", "max_tokens": 5, "system": "s", "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": "r"},
                        {"type": "text", "text": "and this?"},
                        {"type": "image", "source": {"type": "url", "url": "https://x.example/a.png"}},
                    ]},
                ]}),
                "messages[2].content[2]",
            ),
            (
                ClientFormat::Responses,
                "gemini",
                json!({"model": "gemini", "instructions": "s", "input": [{"role": "user", "content": [
                    {"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "https://x.example/a.png"},
                ]}]}),
                "input[0].content[1]",
            ),
            (
                ClientFormat::Responses,
                "chat",
                json!({"model": "chat", "input": [{"role": "user", "content": [{"type": "input_file", "file_url": "https://x.example/a.pdf"}]}]}),
                "input[0].content[0]",
            ),
        ];
        for (format, route, body, path) in cases {
            let call = parse_request(format, &body.to_string()).unwrap();
            let e = config.check_request(route, &call.request).unwrap_err();
            let refusal = call.uncarried(&e);
            assert_eq!(refusal.status, 400);
            let what = e.message.strip_prefix(&e.path).unwrap();
            assert!(what.starts_with(" is "), "{}", e.message);
            assert_eq!(refusal.message, format!("{path}{what}"), "{format:?}");
        }
    }

    #[test]
    fn bodies_that_are_not_objects() {
        for format in [ClientFormat::OpenAi, ClientFormat::Anthropic, ClientFormat::Responses] {
            let e = parse_request(format, "{").unwrap_err();
            assert_eq!(e.status, 400);
            assert!(e.message.starts_with("the request body is not valid JSON"), "{}", e.message);
            let e = parse_request(format, "[1]").unwrap_err();
            assert_eq!(e.message, "the request body must be a JSON object (got a list)");
        }
    }
}
