//! Wire formats: how one normalized [`ChatRequest`] becomes a provider's HTTP request, and how a
//! provider's answer (whole or streamed) becomes normalized [`Answer`]s and [`Delta`]s; and the
//! other way round for the gateway's clients ([`client`]).
//!
//! Each dialect is one folder named as in the wire crate (`wire/src/frames/<dialect>.rs`), with
//! the same files, so a reader who knows one knows all:
//!
//! ```text
//!   <dialect>/mod.rs       the dialect's words (finish reasons, error types, statuses, codes),
//!                          each read and written side by side, with a round-trip test
//!   <dialect>/provider.rs  ProviderDialect: build_request, decode_answer, StreamDecoder, error_body
//!   <dialect>/client.rs    ClientDialect: parse_request, write_error, answer_body, StreamEncoder
//! ```
//!
//! Gemini and Bedrock Converse have a provider side only: no gateway client speaks them. The [`ProviderDialect`] and
//! [`client::ClientDialect`] traits state the parts, so the compiler checks every dialect has
//! them all; [`Format`] and [`client::ClientFormat`] dispatch to them through a plain `match`,
//! statically. Nothing here does I/O.
//!
//! Each format reads an error's class from what its provider documents (cited in its module):
//! the code or type first, the status name for Google, and the message only where a provider
//! documents nothing but words (Anthropic's "prompt is too long", Gemini's token-limit
//! INVALID_ARGUMENT). What names no class falls back to [`FailureClass::of_status`].

#[cfg(feature = "clouds")]
pub mod anthropic_bedrock;
pub mod anthropic_messages;
#[cfg(feature = "clouds")]
pub mod azure;
#[cfg(feature = "clouds")]
pub mod bedrock_converse;
pub mod client;
mod frame;
pub mod gemini;
mod json;
pub mod openai_chat;
pub mod openai_responses;

use llm_baton_wire::write::ToJson;
use serde_json::{Map, Value};

use crate::chat::{Answer, ChatRequest, Delta, FinishReason, Part, Usage};
use crate::outcome::Failure;
pub use crate::outcome::{FailureClass, ProviderSaid};
pub use crate::secret::is_secret_header;
use crate::secret::{Secret, REDACTED};
use crate::sse::SseEvent;
use crate::value::from_tree;
use anthropic_messages::AnthropicMessages;
#[cfg(feature = "clouds")]
use bedrock_converse::BedrockConverse;
use gemini::Gemini;
use openai_chat::OpenaiChat;
use openai_responses::OpenaiResponses;

/// The four parts every provider format has. Implemented by a unit type per format module
/// (`openai_chat::OpenaiChat`...); [`Format`] picks one.
pub trait ProviderDialect {
    /// Reads this format's streamed answer.
    type StreamDecoder: StreamDecoding + Default;

    /// Builds the provider request. Credentials go in headers, never in the URL.
    fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest;

    /// Decodes a whole 2xx answer body.
    fn decode_answer(body: &[u8]) -> Result<Answer, DecodeError>;

    /// The provider's own message, code and class from an error body in its documented error
    /// shape; `None` when the body is not that shape ([`Format::error_body`] then keeps an excerpt).
    fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid>;
}

/// A format's stream reader: fed every SSE event (and unframed line) in order, then `finish`.
/// See [`StreamDecoder`] for what a stream must say to end well.
pub trait StreamDecoding {
    /// One event's deltas, in order.
    fn decode_event(&mut self, event: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError>;

    /// The token counts the provider has reported so far (cumulative).
    fn usage(&self) -> Usage;

    /// An event's deltas, then a [`Delta::Usage`] when the event changed the reported counts
    /// (also before an error the same event raised): a stream cut later still says what it was
    /// billed, and a provider that repeats the same counts on every frame reports them once.
    fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        let before = self.usage();
        let decoded = self.decode_event(event, out);
        let now = self.usage();
        if now != before {
            out.push(Delta::Usage { usage: now });
        }
        decoded
    }

    /// A line outside SSE framing ([`crate::sse::SseItem::Unframed`]). Only Gemini writes
    /// anything there (its error object after the frames); the other formats ignore such lines.
    fn on_unframed(&mut self, _line: &str) -> Result<(), DecodeError> {
        Ok(())
    }

    /// End of stream. Emits the final `Delta::Done` if the format sends it only implicitly.
    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError>;
}

/// Where a target runs when it is not its format's own API: the cloud that reaches it (its URL,
/// auth and framing). A `bedrock_converse` target's cloud is Bedrock, given or not.
///
/// Without the `clouds` feature (the default wasm builds) it has no variant: no config can name
/// a cloud, and the compiler drops every path that handles one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cloud {
    /// Azure OpenAI, for `openai_chat` and `openai_responses` ([`azure`]).
    #[cfg(feature = "clouds")]
    Azure,
    /// Amazon Bedrock: Converse, and Anthropic Messages through InvokeModel ([`anthropic_bedrock`]).
    #[cfg(feature = "clouds")]
    Bedrock,
    /// Google Vertex AI: `gemini`, and `anthropic_messages` as Anthropic on Vertex.
    #[cfg(feature = "clouds")]
    Vertex,
}

#[cfg(feature = "clouds")]
impl Cloud {
    /// What a config's `cloud` may say.
    pub const EXPECTED: &'static str = "\"azure\", \"bedrock\" or \"vertex\", or omit it";

    pub fn parse(s: &str) -> Option<Cloud> {
        match s {
            "azure" => Some(Cloud::Azure),
            "bedrock" => Some(Cloud::Bedrock),
            "vertex" => Some(Cloud::Vertex),
            _ => None,
        }
    }
}

/// The provider protocol a target speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    OpenaiChat,
    AnthropicMessages,
    OpenaiResponses,
    Gemini,
    #[cfg(feature = "clouds")]
    BedrockConverse,
}

/// How many formats this build has: Bedrock's Converse is one of the clouds.
const FORMATS: usize = if cfg!(feature = "clouds") { 5 } else { 4 };

impl Format {
    pub const ALL: [Format; FORMATS] = [
        Format::OpenaiChat,
        Format::AnthropicMessages,
        Format::OpenaiResponses,
        Format::Gemini,
        #[cfg(feature = "clouds")]
        Format::BedrockConverse,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Format::OpenaiChat => "openai_chat",
            Format::AnthropicMessages => "anthropic_messages",
            Format::OpenaiResponses => "openai_responses",
            Format::Gemini => "gemini",
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => "bedrock_converse",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// Builds the provider request. Credentials go in headers, never in the URL.
    /// A configured `Target` converts: `format.build_request(&target, ...)`.
    pub fn build_request<'a>(
        self,
        endpoint: impl Into<Endpoint<'a>>,
        request: &ChatRequest,
        stream: bool,
    ) -> HttpRequest {
        let endpoint = endpoint.into();
        let mut http = match self {
            Format::OpenaiChat => OpenaiChat::build_request(&endpoint, request, stream),
            #[cfg(feature = "clouds")]
            Format::AnthropicMessages if endpoint.cloud == Some(Cloud::Bedrock) => {
                anthropic_bedrock::build_request(&endpoint, request, stream)
            }
            Format::AnthropicMessages => AnthropicMessages::build_request(&endpoint, request, stream),
            Format::OpenaiResponses => OpenaiResponses::build_request(&endpoint, request, stream),
            Format::Gemini => Gemini::build_request(&endpoint, request, stream),
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => BedrockConverse::build_request(&endpoint, request, stream),
        };
        let passed = request.passthrough.as_ref().filter(|p| p.format == self.as_str()).map(|p| &p.fields);
        let extra = endpoint.extra_body;
        if passed.is_some_and(|f| !f.is_empty()) || extra.is_some_and(|f| !f.is_empty()) {
            http.body = with_extra_body(&http.body, passed, extra);
        }
        http
    }

    /// The warning for an attempt on `target`, a member of this format, when the request holds
    /// a client's fields of another format: they are not sent, and the client should know.
    pub fn dropped_warning(self, request: &ChatRequest, target: &str) -> Option<String> {
        let passed = request.passthrough.as_ref().filter(|p| p.format != self.as_str() && !p.fields.is_empty())?;
        let mut warning = String::from("dropped ");
        for (i, name) in passed.fields.keys().enumerate() {
            warning.push_str(if i == 0 { "" } else { ", " });
            warning.push_str(name);
        }
        let plural = if passed.fields.len() == 1 { "" } else { "s" };
        let rest =
            [" for target \"", target, "\": it speaks ", self.as_str(), ", which has no such field", plural, " of "];
        rest.into_iter().chain([passed.format]).for_each(|part| warning.push_str(part));
        Some(warning)
    }

    /// Why this format cannot carry `part`, or `None` when it can. A request is checked with
    /// this before anything is sent (`Config::check_request`), so `build_request` never meets
    /// such a part in a checked request.
    pub fn uncarried(self, part: &Part) -> Option<Uncarried> {
        match self {
            Format::OpenaiChat => openai_chat::uncarried(part),
            Format::AnthropicMessages => anthropic_messages::uncarried(part),
            Format::OpenaiResponses => None,
            Format::Gemini => gemini::uncarried(part),
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => bedrock_converse::uncarried(part),
        }
    }

    /// Why this format cannot send the request's `reasoning`, if it cannot: the field's path and
    /// what is wrong with the remedy. Checked with the parts before anything is sent.
    pub fn unsendable_reasoning(self, request: &ChatRequest) -> Option<(&'static str, String)> {
        match self {
            Format::AnthropicMessages => anthropic_messages::unsendable_reasoning(request),
            _ => None,
        }
    }

    /// Why the request goes to `model` without the reasoning it asks for, if it does: a warning
    /// for the attempt (Anthropic refuses thinking inside a tool-use turn it did not sign).
    pub fn reasoning_warning(self, request: &ChatRequest, model: &str) -> Option<String> {
        match self {
            Format::AnthropicMessages => anthropic_messages::reasoning_warning(request, model),
            _ => None,
        }
    }

    /// Decodes a whole 2xx answer body.
    pub fn decode_answer(self, body: &[u8]) -> Result<Answer, DecodeError> {
        match self {
            Format::OpenaiChat => OpenaiChat::decode_answer(body),
            Format::AnthropicMessages => AnthropicMessages::decode_answer(body),
            Format::OpenaiResponses => OpenaiResponses::decode_answer(body),
            Format::Gemini => Gemini::decode_answer(body),
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => BedrockConverse::decode_answer(body),
        }
    }

    pub fn stream_decoder(self) -> StreamDecoder {
        self.stream_decoder_on(None)
    }

    /// The stream reader of this format on `cloud`.
    #[cfg_attr(not(feature = "clouds"), allow(unused_variables))]
    pub fn stream_decoder_on(self, cloud: Option<Cloud>) -> StreamDecoder {
        match self {
            #[cfg(feature = "clouds")]
            Format::AnthropicMessages if cloud == Some(Cloud::Bedrock) => {
                StreamDecoder::AnthropicBedrock(Default::default())
            }
            Format::OpenaiChat => StreamDecoder::OpenaiChat(Default::default()),
            Format::AnthropicMessages => StreamDecoder::AnthropicMessages(Default::default()),
            Format::OpenaiResponses => StreamDecoder::OpenaiResponses(Default::default()),
            Format::Gemini => StreamDecoder::Gemini(Default::default()),
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => StreamDecoder::BedrockConverse(Default::default()),
        }
    }

    /// The provider's own message, code and class from an error body; a short excerpt of the
    /// body (and the class its status implies) when it is not the provider's error shape. Never
    /// echoes request headers.
    pub fn error_body(self, status: u16, body: &[u8]) -> ProviderSaid {
        self.error_body_on(None, status, body)
    }

    /// [`Format::error_body`] of this format on `cloud`, which may answer errors its own way.
    #[cfg_attr(not(feature = "clouds"), allow(unused_variables))]
    pub fn error_body_on(self, cloud: Option<Cloud>, status: u16, body: &[u8]) -> ProviderSaid {
        let found = match self {
            #[cfg(feature = "clouds")]
            Format::AnthropicMessages if cloud == Some(Cloud::Bedrock) => anthropic_bedrock::error_body(status, body),
            Format::OpenaiChat => OpenaiChat::error_body(status, body),
            Format::AnthropicMessages => AnthropicMessages::error_body(status, body),
            Format::OpenaiResponses => OpenaiResponses::error_body(status, body),
            Format::Gemini => Gemini::error_body(status, body),
            #[cfg(feature = "clouds")]
            Format::BedrockConverse => BedrockConverse::error_body(status, body),
        };
        let mut said = found.unwrap_or_else(|| ProviderSaid {
            message: body_excerpt(body),
            code: None,
            class: FailureClass::of_status(status),
            content_filter: None,
        });
        said.message = crate::outcome::without_status_prefix(status, said.message);
        said
    }
}

/// How many characters of an error body that is not the provider's error shape are kept.
const EXCERPT_CHARS: usize = 200;

/// The start of an error body, trimmed, `…` when cut; empty for an empty body. No status: the
/// failure's `Display` writes it once (`HTTP 502: <excerpt>`).
fn body_excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let mut excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
    if excerpt.len() < text.len() {
        excerpt.push('…');
    }
    excerpt
}

/// A content part a format has no way to send: what the part is ("a file by URL"), and what the
/// caller could send instead, besides routing to a format that carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uncarried {
    pub what: String,
    pub remedy: Option<&'static str>,
}

/// Where a request goes and as whom: all a format needs of a configured target. Formats take
/// this rather than the config's `Target`, so the config depends on formats and not back.
#[derive(Clone, Copy)]
pub struct Endpoint<'a> {
    pub base_url: &'a str,
    pub model: &'a str,
    /// The cloud the target runs in, if any; `None` is the format's own provider.
    pub cloud: Option<Cloud>,
    pub api_key: Option<&'a Secret>,
    /// Extra headers, names in lower case; a configured credential header may be among them.
    pub headers: &'a [(String, String)],
    /// Fields set at the top level of the body, over the format's own (a target's `extraBody`).
    pub extra_body: Option<&'a Map<String, Value>>,
    /// An Azure OpenAI target's URL style and credential header ([`azure`]).
    #[cfg(feature = "clouds")]
    pub azure: Option<&'a azure::Azure>,
}

impl Endpoint<'_> {
    /// The POST of `body` to `path` under the base URL that every format sends, with
    /// `content-type`, the credential (only when the endpoint has a key), the format's own
    /// `defaults`, then the endpoint's configured headers. A configured header replaces a default
    /// of the same name, except the credential: a configured key always wins.
    pub(crate) fn post(
        &self,
        path: &str,
        credential: Option<(&str, String)>,
        defaults: &[(&str, &str)],
        body: String,
    ) -> HttpRequest {
        let credential_name = credential.as_ref().map(|(name, _)| *name);
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        headers.extend(credential.map(|(name, value)| (name.to_string(), value)));
        headers.extend(defaults.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        for (name, value) in self.headers {
            if Some(name.as_str()) == credential_name {
                continue;
            }
            match headers.iter_mut().find(|(k, _)| k == name) {
                Some(existing) => existing.1 = value.clone(),
                None => headers.push((name.clone(), value.clone())),
            }
        }
        let url = join_url(self.base_url, path);
        #[cfg(feature = "clouds")]
        let url = match self.azure {
            Some(azure) => azure.url(url),
            None => url,
        };
        HttpRequest { method: "POST", url, headers, body }
    }

    /// The credential both OpenAI APIs take: `authorization: Bearer <key>`, or Azure's
    /// `api-key: <key>` for an Azure resource key.
    pub(crate) fn bearer(&self) -> Option<(&'static str, String)> {
        let key = self.api_key?.expose();
        #[cfg(feature = "clouds")]
        if self.azure.is_some_and(|azure| azure.key_header) {
            return Some(("api-key", key.to_string()));
        }
        Some(("authorization", format!("Bearer {key}")))
    }
}

/// An HTTP request for the driver to send.
#[derive(Clone, PartialEq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub url: String,
    /// Header names in lower case. May hold credentials: see the `Debug` impl.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), if is_secret_header(k) { REDACTED } else { v.as_str() }))
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// Why a provider answer could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The answer is not the format's shape (bad JSON, a missing field, a stream cut short:
    /// closed before saying how it finished).
    Protocol(String),
    /// The provider reported an error inside a 2xx answer or stream. `status` is the HTTP status
    /// the provider documents for that error type (overloaded_error = 529, rate limits = 429...),
    /// 500 when it names none, so the gate treats it like the equivalent HTTP answer. `code` is
    /// the provider's own, `class` what the format reads from it (as for an HTTP error body).
    Provider { status: u16, message: String, code: Option<String>, class: Option<FailureClass> },
}

/// A decoder's error as the attempt's failure: an error the provider reported in a 2xx answer is
/// an HTTP failure `in_stream`, with the status its type documents.
impl From<DecodeError> for Failure {
    fn from(e: DecodeError) -> Failure {
        match e {
            DecodeError::Protocol(message) => Failure::Protocol { message },
            DecodeError::Provider { status, message, code, class } => {
                let message = crate::outcome::without_status_prefix(status, message);
                Failure::Http {
                    status,
                    message,
                    code,
                    class,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: true,
                    content_filter: None,
                }
            }
        }
    }
}

/// Turns a format's SSE events into normalized deltas. Feed every event (and unframed line) in
/// order, then call `finish` at end of stream: a stream that ended without its format's success
/// marker, or the finish reason that may stand in for it (docs/errors.md, "How a stream ends"),
/// is a protocol error, never a silent success. A malformed frame becomes a [`Delta::Skipped`]
/// unless it may hold part of a tool call (docs/errors.md, "Malformed frames").
#[derive(Debug)]
pub enum StreamDecoder {
    OpenaiChat(openai_chat::StreamDecoder),
    AnthropicMessages(anthropic_messages::StreamDecoder),
    OpenaiResponses(openai_responses::StreamDecoder),
    Gemini(gemini::StreamDecoder),
    #[cfg(feature = "clouds")]
    BedrockConverse(bedrock_converse::StreamDecoder),
    #[cfg(feature = "clouds")]
    AnthropicBedrock(anthropic_bedrock::StreamDecoder),
}

impl StreamDecoder {
    pub fn on_event(&mut self, event: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        match self {
            StreamDecoder::OpenaiChat(d) => d.on_event(event, out),
            StreamDecoder::AnthropicMessages(d) => d.on_event(event, out),
            StreamDecoder::OpenaiResponses(d) => d.on_event(event, out),
            StreamDecoder::Gemini(d) => d.on_event(event, out),
            #[cfg(feature = "clouds")]
            StreamDecoder::BedrockConverse(d) => d.on_event(event, out),
            #[cfg(feature = "clouds")]
            StreamDecoder::AnthropicBedrock(d) => d.on_event(event, out),
        }
    }

    /// A line outside SSE framing ([`crate::sse::SseItem::Unframed`]): see
    /// [`StreamDecoding::on_unframed`].
    pub fn on_unframed(&mut self, line: &str) -> Result<(), DecodeError> {
        match self {
            StreamDecoder::OpenaiChat(d) => d.on_unframed(line),
            StreamDecoder::AnthropicMessages(d) => d.on_unframed(line),
            StreamDecoder::OpenaiResponses(d) => d.on_unframed(line),
            StreamDecoder::Gemini(d) => d.on_unframed(line),
            #[cfg(feature = "clouds")]
            StreamDecoder::BedrockConverse(d) => d.on_unframed(line),
            #[cfg(feature = "clouds")]
            StreamDecoder::AnthropicBedrock(d) => d.on_unframed(line),
        }
    }

    /// End of stream. Emits the final `Delta::Done` if the format sends it only implicitly.
    pub fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        match self {
            StreamDecoder::OpenaiChat(d) => d.finish(out),
            StreamDecoder::AnthropicMessages(d) => d.finish(out),
            StreamDecoder::OpenaiResponses(d) => d.finish(out),
            StreamDecoder::Gemini(d) => d.finish(out),
            #[cfg(feature = "clouds")]
            StreamDecoder::BedrockConverse(d) => d.finish(out),
            #[cfg(feature = "clouds")]
            StreamDecoder::AnthropicBedrock(d) => d.finish(out),
        }
    }
}

/// A frame that is not valid JSON, or not the shape its event has, between good ones: a proxy
/// corrupted it. It is skipped (a [`Delta::Skipped`] naming `reason`) unless it may hold part of
/// a tool call: `tool_call` says why it may (a call was open, or the frame names one), and then
/// skipping could corrupt the call's arguments or lose the call, so it is a protocol error.
pub(crate) fn malformed_frame(
    reason: String,
    tool_call: Option<&str>,
    out: &mut Vec<Delta>,
) -> Result<(), DecodeError> {
    match tool_call {
        Some(why) => Err(DecodeError::Protocol(format!(
            "{reason}; it cannot be skipped, since {why}: skipping it could corrupt a tool call"
        ))),
        None => {
            out.push(Delta::Skipped { reason });
            Ok(())
        }
    }
}

/// A request body with a client's `passed` fields added at its top level, then `extra`'s (a
/// target's `extraBody`) set there (the keys then come out sorted). What the format wrote wins
/// over a passed field, except that a passed list joins a list the format wrote (Responses'
/// `include`), and a passed object's members join an object's (Anthropic's `output_config`);
/// the target's `extraBody` wins over both, as the operator's word on its member.
/// The body is one llm-baton just wrote, so it reads back; it is read without a depth limit,
/// which guards against hostile input, not against the depth of what llm-baton itself wrote a
/// moment ago (a tool schema 128 levels deep).
fn with_extra_body(body: &str, passed: Option<&Map<String, Value>>, extra: Option<&Map<String, Value>>) -> String {
    match llm_baton_wire::json::parse_with_depth(body, usize::MAX).map(|tree| from_tree(&tree)) {
        Ok(Value::Object(mut fields)) => {
            for (k, v) in passed.into_iter().flatten() {
                match (fields.get_mut(k), v) {
                    (None, _) => {
                        fields.insert(k.clone(), v.clone());
                    }
                    // A list of names (`include`): each name once.
                    (Some(Value::Array(own)), Value::Array(more)) => {
                        for item in more {
                            if !own.iter().any(|o| o.is_string() && o.as_str() == item.as_str()) {
                                own.push(item.clone());
                            }
                        }
                    }
                    // An object's other members (Anthropic's `output_config.effort`).
                    (Some(Value::Object(own)), Value::Object(more)) => {
                        for (k, v) in more {
                            if !own.contains_key(k) {
                                own.insert(k.clone(), v.clone());
                            }
                        }
                    }
                    (Some(_), _) => {}
                }
            }
            fields.extend(extra.into_iter().flatten().map(|(k, v)| (k.clone(), v.clone())));
            fields.to_json()
        }
        // Not reached: every format writes an object.
        _ => body.to_string(),
    }
}

/// A dialect's words for Stop, Length, ToolCalls and ContentFilter, in that order: what its
/// clients are told ([`finish_word`]), and what its reader reads back at least.
pub(crate) type FinishWords = [&'static str; 4];

/// The word a dialect with `words` writes for `finish`; another dialect's own reason passes as
/// it is.
pub(crate) fn finish_word<'a>(finish: &'a FinishReason, words: &FinishWords) -> &'a str {
    match finish {
        FinishReason::Stop => words[0],
        FinishReason::Length => words[1],
        FinishReason::ToolCalls => words[2],
        FinishReason::ContentFilter => words[3],
        FinishReason::Other(s) => s,
    }
}

/// Joins a base URL and a path with exactly one slash between them.
fn join_url(base: &str, path: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), path.trim_start_matches('/'))
}

/// A provider error as a unit test expects it.
#[cfg(test)]
pub(crate) fn provider(status: u16, message: &str, code: Option<&str>, class: Option<FailureClass>) -> DecodeError {
    DecodeError::Provider { status, message: message.into(), code: code.map(str::to_string), class }
}

/// Checks a dialect's finish-reason words both ways: Stop, Length, ToolCalls and ContentFilter
/// are written as `words` and read back as themselves, and another dialect's own reason passes
/// as it is.
#[cfg(test)]
pub(crate) fn check_finish_words(
    words: FinishWords,
    write: fn(&FinishReason) -> &str,
    read: fn(Option<&str>, bool) -> FinishReason,
) {
    let others = ["pause_turn", "insufficient_system_resource"];
    let finishes = [FinishReason::Stop, FinishReason::Length, FinishReason::ToolCalls, FinishReason::ContentFilter]
        .into_iter()
        .chain(others.map(|o| FinishReason::Other(o.into())));
    for (finish, word) in finishes.zip(words.into_iter().chain(others)) {
        assert_eq!(write(&finish), word);
        assert_eq!(read(Some(word), finish == FinishReason::ToolCalls), finish, "{word}");
    }
}

/// An endpoint for unit tests; the fixture is leaked so it lives for the whole test run.
#[cfg(test)]
pub(crate) fn test_endpoint(
    base_url: &'static str,
    model: &'static str,
    key: Option<&str>,
    headers: &[(&str, &str)],
) -> Endpoint<'static> {
    let headers: Vec<(String, String)> = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Endpoint {
        base_url,
        model,
        cloud: None,
        api_key: key.map(|k| &*Box::leak(Box::new(Secret::new(k)))),
        headers: Box::leak(headers.into_boxed_slice()),
        extra_body: None,
        #[cfg(feature = "clouds")]
        azure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_that_are_not_the_provider_shape() {
        let long = "x".repeat(300);
        let cases: [(&[u8], String); 5] = [
            (b"", String::new()),
            (b"  upstream connect error \n", "upstream connect error".into()),
            (b"HTTP 599: HTTP 599: broken", "broken".into()),
            (b"HTTP 599", String::new()),
            (long.as_bytes(), format!("{}\u{2026}", "x".repeat(EXCERPT_CHARS))),
        ];
        for format in Format::ALL {
            for (body, expected) in &cases {
                let said = format.error_body(599, body);
                assert_eq!(&said.message, expected, "{format:?}");
                assert_eq!((said.code.as_deref(), said.class), (None, None), "{format:?}");
                let shown = Failure::from_http(599, &[], said, 0).to_string();
                assert_eq!(shown.matches("599").count(), 1, "{format:?}: {shown}");
            }
        }
    }

    #[test]
    fn an_error_in_a_2xx_answer_is_an_http_failure_in_stream_with_the_status_once() {
        let decoded = Failure::from(DecodeError::Provider {
            status: 529,
            message: "HTTP 529: busy".into(),
            code: Some("overloaded_error".into()),
            class: Some(FailureClass::Overloaded),
        });
        assert_eq!(decoded.to_string(), "HTTP 529 in stream: busy");
    }
}
