//! Scenarios: scripted steps, and the log of what each request did.
//!
//! A test defines a scenario (a list of [`Step`]s), sends requests to it, then reads its log to
//! check what the client really did: which key it sent and where, what body, and above all how each
//! request ended. Each request consumes the next step; the last step repeats; a step with `untilMs`
//! plays to every request until that time, then gives way to the next (an outage that heals
//! at a set time, however many requests reached it). A request's fate is
//! tracked by a [`RequestTracker`] that travels with the response (first in the handler's future,
//! then in the response body): if hyper drops it before the response ended, the client closed the
//! connection, which is how an abort by the client is observed from the server side.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, StatusCode};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{json, Map, Value};

use crate::wire::reasoning::ChatStyle;
use crate::wire::Format;

/// The body of `PUT /_scenarios/{id}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub steps: Vec<Step>,
}

/// What one request gets, in JSON with camelCase names. Every field is optional: `{}` is a
/// healthy answer. Times are milliseconds. "Content events" are the stream events that carry
/// text or tool-argument fragments; a non-streamed answer's content events are its body pieces.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Step {
    /// Timed step: it answers every request that arrives less than this many ms after the
    /// scenario was defined, and is passed over from then on (unless it is the last step, which
    /// always repeats). Without it a step answers exactly one request.
    pub until_ms: Option<u64>,
    /// Answer this error status (400-599) with an error body in the endpoint's format.
    #[serde(default, deserialize_with = "error_status")]
    pub status: Option<StatusCode>,
    /// The error's message (default `scripted {status}`).
    pub message: Option<String>,
    /// Overrides the error type that the format derives from `status`.
    pub error_type: Option<String>,
    /// Extra response headers, on any answer (`retry-after`, `x-should-retry`…).
    #[serde(default, deserialize_with = "header_map")]
    pub headers: HeaderMap,
    /// Wait before the status line and headers (a huge value stalls before headers).
    #[serde(default)]
    pub headers_delay_ms: u64,
    /// The answer's text (default "Hello from the scripted provider.").
    pub text: Option<String>,
    /// The answer's text is the text of the request's last user turn: a client that puts a nonce
    /// there can tell that each answer is its own, whole and once (the soak, bench/soak.mjs). A
    /// request without a user turn holding text gets a 400 that says so. Replaces `text`.
    #[serde(default)]
    pub echo: bool,
    /// How many content events the text or tool arguments is split into, at most one per
    /// character (default: one per word, each keeping the space before it; tool arguments in
    /// fragments of 8 characters).
    pub chunks: Option<NonZeroUsize>,
    /// Wait between content events.
    #[serde(default)]
    pub chunk_delay_ms: u64,
    /// Wait after the headers (and a stream's preamble events) before the first content event.
    #[serde(default)]
    pub first_chunk_delay_ms: u64,
    /// After this many content events, send nothing for `stallMs`, then cut the response short.
    pub stall_after_events: Option<usize>,
    /// How long a stall lasts (default 600 000).
    pub stall_ms: Option<u64>,
    /// Non-streamed answers: send the body in ~10 pieces spread over this long.
    pub drip_ms: Option<u64>,
    /// Read the request, then close the connection with an RST and no answer.
    #[serde(default)]
    pub reset: bool,
    /// Leave the connection open after this answer, for the client to reuse (every other answer
    /// says `connection: close`).
    #[serde(default)]
    pub keep_alive: bool,
    /// As `reset`, for a request that came on a connection the client reused; any other request
    /// plays the rest of the step. With `keepAlive`, the step that breaks the next request on a
    /// kept connection, however the client's pool picks its connections.
    #[serde(default)]
    pub reset_reused: bool,
    /// Streams: after some content events, send the format's in-stream error event and end.
    pub stream_error: Option<StreamErrorSpec>,
    /// Streams: end cleanly but without the success marker (`[DONE]`, `message_stop`,
    /// `response.completed`, Gemini's `finishReason` chunk).
    #[serde(default)]
    pub omit_done: bool,
    /// Reported token counts (default: 3 in, one out per word of the answer).
    #[serde(default)]
    pub usage: UsageSpec,
    /// Streams, OpenAI Chat and Gemini: every chunk reports the usage so far, one output token
    /// per content event written (the role chunk 0; the finish chunk the final `usage`), as vLLM
    /// does with `stream_options.continuous_usage_stats`: `usage` on each chat chunk,
    /// `usageMetadata.candidatesTokenCount` on each Gemini chunk. Anthropic Messages and OpenAI
    /// Responses report output tokens only at the end, so their streams answer a 400 that says
    /// so (the endpoint, not the scenario, picks the format). Whole answers ignore it.
    #[serde(default)]
    pub usage_per_event: bool,
    /// The whole answer text of a continue: the request must end with an assistant turn (the
    /// prefill: OpenAI Chat and Anthropic `messages`, Responses `input`, Gemini `contents` with
    /// role `model`) whose text is a prefix of this; the answer is the rest (`chunks` and
    /// every other field apply to it). A request without a prefill, or with one that is not a
    /// prefix, gets a 400 that says which. Replaces `text`.
    pub continue_from: Option<String>,
    /// A request whose conversation ends with an assistant turn (as for `continueFrom`, of any
    /// content) gets Anthropic's 400 for a model without prefill, "This model does not support
    /// assistant message prefill. The conversation must end with a user message.", in the
    /// endpoint's error format; any other request plays the step. Like the other 400s of a
    /// request the step cannot answer, it comes after `headersDelayMs`, with the step's
    /// `headers`, and none of its faults.
    #[serde(default)]
    pub refuse_prefill: bool,
    /// Answer with this function call instead of text.
    pub tool_call: Option<ToolCall>,
    /// A reasoning model: the answer carries the format's reasoning state (Anthropic thinking
    /// with its signature and redacted thinking, Gemini thought signatures, a Responses reasoning
    /// item, Chat's reasoning text), and a history this model could not verify gets the
    /// provider's own 400 (wire/reasoning.rs).
    #[serde(default)]
    pub reasoning: bool,
    /// A Chat Completions reasoning model of a known server's style (`"deepseek"`, `"kimi"`,
    /// `"glm"`, `"reasoning"` for vLLM, OpenRouter and gpt-oss; wire/reasoning.rs): its reasoning
    /// in that server's field, and its refusal of a tool turn sent back without it. Implies
    /// `reasoning`.
    pub chat_reasoning: Option<ChatStyle>,
    /// Send this body verbatim instead of an answer in the endpoint's format (any hostile frame).
    pub raw: Option<RawBody>,
    /// Error answers (`status`, `streamError`): append the request's credentials to the message,
    /// as a proxy that echoes the request it forwarded does (see [`credentials_echo`]).
    #[serde(default)]
    pub echo_credentials: bool,
    /// Grow a text answer or an error body to this many bytes: the text or the error message is
    /// padded with `x`. Streams get this many bytes of text, in content events of 16 KiB.
    pub pad_to_bytes: Option<usize>,
}

impl Step {
    /// Whether the answer carries reasoning.
    pub fn reasons(&self) -> bool {
        self.reasoning || self.chat_reasoning.is_some()
    }

    /// Field combinations that cannot mean anything, refused when the scenario is defined.
    fn check(&self) -> Result<(), String> {
        if self.continue_from.is_some() {
            let excluded = [
                ("text", self.text.is_some()),
                ("toolCall", self.tool_call.is_some()),
                ("raw", self.raw.is_some()),
                ("status", self.status.is_some()),
                ("refusePrefill", self.refuse_prefill),
                ("echo", self.echo),
            ];
            if let Some((field, _)) = excluded.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "continueFrom is the whole answer text, continued after the request's prefill; \
                     it cannot be combined with {field}"
                ));
            }
        }
        if self.echo && self.text.is_some() {
            return Err("echo answers the text of the request's last user turn; it cannot be combined with text".into());
        }
        if self.usage_per_event && (self.raw.is_some() || self.status.is_some()) {
            let field = if self.raw.is_some() { "raw" } else { "status" };
            return Err(format!("usagePerEvent shapes a scripted stream, and a {field} step sends none"));
        }
        Ok(())
    }
}

/// `{"status": 200, "contentType": "text/event-stream", "chunks": ["data: {…}\n\n", …]}`: each
/// chunk is sent as given, one body piece each, on the step's `firstChunkDelayMs`/`chunkDelayMs`
/// schedule (`stallAfterEvents` counts chunks). `{{credentials}}` in a chunk becomes the
/// request's credentials echo, escaped for a JSON string.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RawBody {
    /// Any status from 200 to 599 (default 200).
    #[serde(default = "ok_status", deserialize_with = "any_status")]
    pub status: StatusCode,
    /// Default `text/event-stream; charset=utf-8`.
    #[serde(default, deserialize_with = "header_value")]
    pub content_type: Option<HeaderValue>,
    pub chunks: Vec<String>,
}

fn ok_status() -> StatusCode {
    StatusCode::OK
}

fn any_status<'de, D: Deserializer<'de>>(deserializer: D) -> Result<StatusCode, D::Error> {
    let code = u16::deserialize(deserializer)?;
    match StatusCode::from_u16(code) {
        Ok(status) if (200..=599).contains(&code) => Ok(status),
        _ => Err(D::Error::custom(format!("raw.status must be from 200 to 599, got {code}"))),
    }
}

fn header_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<HeaderValue>, D::Error> {
    let value = String::deserialize(deserializer)?;
    HeaderValue::try_from(value.as_str())
        .map(Some)
        .map_err(|_| D::Error::custom(format!("raw.contentType is not a valid header value: {value:?}")))
}

/// What a proxy that echoes its request would write about the credentials it received:
/// `name=value` for `authorization`, `x-api-key`, `x-goog-api-key`, any other `x-…key…` header and
/// any header naming a token, and `key=value` for a key in the query. Empty when there are none.
pub fn credentials_echo(headers: &HeaderMap, query_key: Option<&str>) -> String {
    let mut echo: Vec<String> = headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            matches!(name, "authorization" | "x-api-key" | "x-goog-api-key")
                || (name.starts_with("x-") && name.contains("key"))
                || name.contains("token")
        })
        .map(|(name, value)| format!("{name}={}", String::from_utf8_lossy(value.as_bytes())))
        .collect();
    echo.extend(query_key.map(|key| format!("key={key}")));
    echo.join(" ")
}

/// `{"afterEvents": 1, "type": "overloaded_error", "message": "Overloaded", "status": 529}`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamErrorSpec {
    /// Content events sent before the error (default 0).
    #[serde(default)]
    pub after_events: usize,
    /// The error type (as `errorType` for `status`).
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Default "scripted stream error".
    pub message: Option<String>,
    /// Chooses the default type; default 500.
    #[serde(default, deserialize_with = "error_status")]
    pub status: Option<StatusCode>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UsageSpec {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// A function call to answer with; `arguments` must be the text of a JSON object, because
/// Anthropic and Gemini send it parsed (`input`, `args`).
#[derive(Deserialize)]
#[serde(try_from = "ToolCallSpec")]
pub struct ToolCall {
    pub name: String,
    pub arguments: String,
    pub input: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallSpec {
    name: String,
    #[serde(default = "empty_object_text")]
    arguments: String,
}

fn empty_object_text() -> String {
    "{}".into()
}

impl TryFrom<ToolCallSpec> for ToolCall {
    type Error = String;

    fn try_from(spec: ToolCallSpec) -> Result<Self, String> {
        match serde_json::from_str::<Value>(&spec.arguments) {
            Ok(input @ Value::Object(_)) => Ok(ToolCall { name: spec.name, arguments: spec.arguments, input }),
            _ => Err(format!("toolCall.arguments must be the text of a JSON object, got {:?}", spec.arguments)),
        }
    }
}

fn error_status<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<StatusCode>, D::Error> {
    let code = u16::deserialize(deserializer)?;
    match StatusCode::from_u16(code) {
        Ok(status) if status.is_client_error() || status.is_server_error() => Ok(Some(status)),
        _ => Err(D::Error::custom(format!("status must be an HTTP error status (400-599), got {code}"))),
    }
}

fn header_map<'de, D: Deserializer<'de>>(deserializer: D) -> Result<HeaderMap, D::Error> {
    let mut headers = HeaderMap::new();
    for (name, value) in BTreeMap::<String, String>::deserialize(deserializer)? {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| D::Error::custom(format!("invalid header name {name:?}")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|_| D::Error::custom(format!("invalid value for header {name}: {value:?}")))?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// Scenario ids are path segments: `[A-Za-z0-9_.-]+`.
pub fn is_valid_scenario_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// What the log remembers of a request. Key values are never stored, only where a key was sent.
pub struct RequestInfo {
    pub path: String,
    pub format: Format,
    pub stream: bool,
    pub model: Option<String>,
    /// `"bearer"`, `"x-api-key"`, `"x-goog-api-key"` or `"authorization"` (another scheme).
    pub auth: Option<&'static str>,
    pub key_in_url: bool,
    /// Request headers; the values of key headers are replaced by `[redacted]`.
    pub headers: Map<String, Value>,
    pub body: Value,
    /// The request's place on its TCP connection: above 1, the client reused the connection.
    pub on_connection: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Open,
    Completed,
    ClientClosed,
    /// The server cut the connection: a `reset` step, or a stall that ended abruptly.
    Reset,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Open => "open",
            Outcome::Completed => "completed",
            Outcome::ClientClosed => "client_closed",
            Outcome::Reset => "reset",
        }
    }
}

/// What a successful answer cost: the input tokens it reports, and the output that really left
/// the server (content events written; a whole answer's output tokens once all of it was written).
#[derive(Clone, Copy, Default)]
pub struct Billed {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Billed {
    fn json(self) -> Value {
        json!({"inputTokens": self.input_tokens, "outputTokens": self.output_tokens})
    }
}

struct LogEntry {
    step: usize,
    request: RequestInfo,
    started_ms: u64,
    headers_ms: Option<u64>,
    ended_ms: Option<u64>,
    outcome: Outcome,
    /// Only 2xx scripted answers are billed (not error answers, not `raw` bodies).
    billed: Option<Billed>,
}

struct Scenario {
    /// Distinguishes this definition from earlier ones under the same id, so a request that
    /// outlives a redefinition or `/_reset` does not write into the new log.
    generation: u64,
    /// When it was defined (server ms): timed steps count from here.
    defined_ms: u64,
    steps: Vec<Arc<Step>>,
    /// The step the next request gets, before timed steps that have run out are passed over.
    next_step: usize,
    log: Vec<LogEntry>,
}

impl Scenario {
    fn new(generation: u64, defined_ms: u64, steps: Vec<Arc<Step>>) -> Self {
        Scenario { generation, defined_ms, steps, next_step: 0, log: Vec::new() }
    }

    /// The step for a request arriving at `now`: a timed step holds until its time is up, an
    /// untimed one serves one request; the last step repeats either way.
    fn take_step(&mut self, now: u64) -> usize {
        let last = self.steps.len() - 1;
        loop {
            let index = self.next_step;
            match self.steps[index].until_ms {
                Some(until) if now.saturating_sub(self.defined_ms) < until => return index,
                Some(_) if index < last => self.next_step += 1,
                _ => {
                    self.next_step = (index + 1).min(last);
                    return index;
                }
            }
        }
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.log.iter().filter(|entry| entry.outcome == outcome).count()
    }

    fn billed(&self) -> Billed {
        self.log.iter().filter_map(|entry| entry.billed).fold(Billed::default(), |total, billed| Billed {
            input_tokens: total.input_tokens + billed.input_tokens,
            output_tokens: total.output_tokens + billed.output_tokens,
        })
    }
}

#[derive(Default)]
struct Scenarios {
    by_id: HashMap<String, Scenario>,
    generations: u64,
    serials: u64,
}

/// All scenarios and counters of one server run.
pub struct Registry {
    started: Instant,
    scenarios: Mutex<Scenarios>,
    /// Open TCP connections on which a request arrived.
    connections_open: AtomicU64,
    /// Open TCP connections still waiting for their first request.
    connections_idle: AtomicU64,
}

impl Registry {
    pub fn new() -> Self {
        Registry {
            started: Instant::now(),
            scenarios: Mutex::default(),
            connections_open: AtomicU64::new(0),
            connections_idle: AtomicU64::new(0),
        }
    }

    /// Milliseconds since the server started (monotonic).
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn scenarios(&self) -> MutexGuard<'_, Scenarios> {
        // A panic cannot leave the state half-updated in a way that matters to a test server.
        self.scenarios.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Defines or replaces a scenario, which starts again at its first step with an empty log.
    pub fn define(&self, id: &str, steps: Vec<Step>) -> Result<(), String> {
        if steps.is_empty() {
            return Err("a scenario needs at least one step (`{}` is a healthy answer)".into());
        }
        for (index, step) in steps.iter().enumerate() {
            step.check().map_err(|reason| format!("steps[{index}]: {reason}"))?;
        }
        let now = self.now_ms();
        let mut scenarios = self.scenarios();
        scenarios.generations += 1;
        let generation = scenarios.generations;
        let steps = steps.into_iter().map(Arc::new).collect();
        scenarios.by_id.insert(id.to_owned(), Scenario::new(generation, now, steps));
        Ok(())
    }

    /// Logs a new request and hands out its step, a serial number for response ids, and its tracker.
    pub fn begin(self: &Arc<Self>, id: &str, request: RequestInfo) -> (Arc<Step>, u64, RequestTracker) {
        let now = self.now_ms();
        let mut scenarios = self.scenarios();
        let Scenarios { by_id, generations, serials } = &mut *scenarios;
        *serials += 1;
        let scenario = by_id.entry(id.to_owned()).or_insert_with(|| {
            *generations += 1;
            Scenario::new(*generations, now, vec![Arc::new(Step::default())])
        });
        // `define` refuses empty step lists, so there is always a last step to repeat.
        let step_index = scenario.take_step(now);
        let step = Arc::clone(&scenario.steps[step_index]);
        scenario.log.push(LogEntry {
            step: step_index,
            request,
            started_ms: now,
            headers_ms: None,
            ended_ms: None,
            outcome: Outcome::Open,
            billed: None,
        });
        let tracker = RequestTracker {
            registry: Arc::clone(self),
            scenario: id.to_owned(),
            generation: scenario.generation,
            index: scenario.log.len() - 1,
            finished: false,
        };
        (step, *serials, tracker)
    }

    /// `GET /_scenarios/{id}`: counters and the log (an unknown id reads as an unused scenario).
    pub fn report(&self, id: &str) -> Value {
        let scenarios = self.scenarios();
        let Some(scenario) = scenarios.by_id.get(id) else {
            return json!({
                "requests": 0, "completed": 0, "clientClosed": 0, "reset": 0, "open": 0,
                "billed": Billed::default().json(), "log": [],
            });
        };
        let log: Vec<Value> = scenario
            .log
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                let request = &entry.request;
                json!({
                    "index": index,
                    "step": entry.step,
                    "path": request.path,
                    "format": request.format.name(),
                    "stream": request.stream,
                    "model": request.model,
                    "auth": request.auth,
                    "keyInUrl": request.key_in_url,
                    "headers": request.headers,
                    "body": request.body,
                    "onConnection": request.on_connection,
                    "startedMs": entry.started_ms,
                    "headersMs": entry.headers_ms,
                    "endedMs": entry.ended_ms,
                    "outcome": entry.outcome.name(),
                    "billed": entry.billed.map(Billed::json),
                })
            })
            .collect();
        json!({
            "requests": scenario.log.len(),
            "completed": scenario.count(Outcome::Completed),
            "clientClosed": scenario.count(Outcome::ClientClosed),
            "reset": scenario.count(Outcome::Reset),
            "open": scenario.count(Outcome::Open),
            "billed": scenario.billed().json(),
            "log": log,
        })
    }

    /// `GET /_stats`: totals across scenarios, and the TCP connections open right now.
    ///
    /// `connectionsOpen` counts connections that carried a request, other than the one asking, so
    /// it reads 0 once no client holds an answer. Connections a client opened ahead of use (undici
    /// after an abort, browser preconnects) are the runtime's pool, not something the caller
    /// leaked; they are `connectionsIdle` until a request arrives on them.
    pub fn stats(&self) -> Value {
        let scenarios = self.scenarios();
        let sum = |count: &dyn Fn(&Scenario) -> usize| scenarios.by_id.values().map(count).sum::<usize>();
        json!({
            "requests": sum(&|scenario| scenario.log.len()),
            "open": sum(&|scenario| scenario.count(Outcome::Open)),
            "clientClosed": sum(&|scenario| scenario.count(Outcome::ClientClosed)),
            "connectionsOpen": self.connections_open.load(Ordering::SeqCst).saturating_sub(1),
            "connectionsIdle": self.connections_idle.load(Ordering::SeqCst),
        })
    }

    /// `POST /_reset`: forgets every scenario and its counters.
    pub fn forget_all(&self) {
        self.scenarios().by_id.clear();
    }

    /// Counts a newly accepted TCP connection, idle until [`ConnectionCount::request_arrived`].
    pub fn connection_accepted(self: &Arc<Self>) -> ConnectionCount {
        self.connections_idle.fetch_add(1, Ordering::SeqCst);
        ConnectionCount {
            registry: Arc::clone(self),
            carried_request: AtomicBool::new(false),
            requests: AtomicU32::new(0),
        }
    }
}

/// One TCP connection in the counters, until dropped.
pub struct ConnectionCount {
    registry: Arc<Registry>,
    carried_request: AtomicBool,
    requests: AtomicU32,
}

impl ConnectionCount {
    /// Counts a request on this connection; returns its place there (1 for the first).
    pub fn request_arrived(&self) -> u32 {
        let on_connection = self.requests.fetch_add(1, Ordering::SeqCst) + 1;
        if !self.carried_request.swap(true, Ordering::SeqCst) {
            self.registry.connections_idle.fetch_sub(1, Ordering::SeqCst);
            self.registry.connections_open.fetch_add(1, Ordering::SeqCst);
        }
        on_connection
    }
}

impl Drop for ConnectionCount {
    fn drop(&mut self) {
        let counter = if self.carried_request.load(Ordering::SeqCst) {
            &self.registry.connections_open
        } else {
            &self.registry.connections_idle
        };
        counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Follows one request to its end. Dropped before [`finish`](Self::finish), it records that the
/// client closed the connection: hyper drops the handler future or the response body exactly then.
pub struct RequestTracker {
    registry: Arc<Registry>,
    scenario: String,
    generation: u64,
    index: usize,
    finished: bool,
}

impl RequestTracker {
    fn update(&self, change: impl FnOnce(&mut LogEntry, u64)) {
        let now = self.registry.now_ms();
        let mut scenarios = self.registry.scenarios();
        let entry = scenarios
            .by_id
            .get_mut(&self.scenario)
            .filter(|scenario| scenario.generation == self.generation)
            .and_then(|scenario| scenario.log.get_mut(self.index));
        if let Some(entry) = entry {
            change(entry, now);
        }
    }

    /// The status line and headers are being sent now.
    pub fn headers_sent(&self) {
        self.update(|entry, now| entry.headers_ms = Some(now));
    }

    /// A 2xx scripted answer starts: it bills these input tokens, and no output yet.
    pub fn bill_input(&self, input_tokens: u64) {
        self.update(|entry, _| entry.billed = Some(Billed { input_tokens, output_tokens: 0 }));
    }

    /// Output of a billed answer was written (content events, or a whole answer's tokens).
    pub fn bill_output(&self, output_tokens: u64) {
        self.update(|entry, _| {
            if let Some(billed) = &mut entry.billed {
                billed.output_tokens += output_tokens;
            }
        });
    }

    pub fn finish(&mut self, outcome: Outcome) {
        if !self.finished {
            self.finished = true;
            self.update(|entry, now| {
                entry.outcome = outcome;
                entry.ended_ms = Some(now);
            });
        }
    }
}

impl Drop for RequestTracker {
    fn drop(&mut self) {
        self.finish(Outcome::ClientClosed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(json: &str) -> Result<Step, serde_json::Error> {
        serde_json::from_str(json)
    }

    fn request() -> RequestInfo {
        RequestInfo {
            path: "/v1/chat/completions".into(),
            format: Format::OpenAiChat,
            stream: false,
            model: None,
            auth: None,
            key_in_url: false,
            headers: Map::new(),
            body: Value::Null,
            on_connection: 1,
        }
    }

    #[test]
    fn bad_steps_are_rejected_with_a_reason() {
        assert!(step("{}").is_ok());
        let cases = [
            (r#"{"status": 200}"#, "HTTP error status"),
            (r#"{"chunks": 0}"#, "nonzero"),
            (r#"{"headers": {"bad header": "x"}}"#, "invalid header name"),
            (r#"{"toolCall": {"name": "f", "arguments": "[1]"}}"#, "JSON object"),
            (r#"{"stallAfterEvent": 1}"#, "unknown field"),
        ];
        for (json, reason) in cases {
            let error = step(json).err().map(|error| error.to_string()).unwrap_or_default();
            assert!(error.contains(reason), "{json}: {error}");
        }
    }

    #[test]
    fn steps_that_cannot_mean_anything_are_refused_with_their_index() {
        let registry = Registry::new();
        let cases = [
            (r#"{"continueFrom": "a b", "text": "a"}"#, "steps[1]: continueFrom is the whole answer text"),
            (r#"{"continueFrom": "a b", "refusePrefill": true}"#, "cannot be combined with refusePrefill"),
            (r#"{"usagePerEvent": true, "status": 500}"#, "steps[1]: usagePerEvent shapes a scripted stream"),
        ];
        for (json, reason) in cases {
            let error = registry.define("s", vec![Step::default(), step(json).unwrap()]).err().unwrap_or_default();
            assert!(error.contains(reason), "{json}: {error}");
        }
        let fine = [r#"{"continueFrom": "a b", "chunks": 2}"#, r#"{"refusePrefill": true, "status": 503}"#];
        for json in fine {
            assert_eq!(registry.define("s", vec![step(json).unwrap()]), Ok(()), "{json}");
        }
    }

    #[test]
    fn billed_answers_add_up_and_others_report_null() {
        let registry = Arc::new(Registry::new());
        let (_, _, mut error) = registry.begin("b", request());
        error.finish(Outcome::Completed);
        for (input, outputs) in [(3, [1, 1]), (4, [0, 6])] {
            let (_, _, mut answer) = registry.begin("b", request());
            answer.bill_input(input);
            outputs.into_iter().for_each(|output| answer.bill_output(output));
            answer.finish(Outcome::Completed);
        }
        let report = registry.report("b");
        assert_eq!(report["log"][0]["billed"], Value::Null);
        assert_eq!(report["log"][1]["billed"], json!({"inputTokens": 3, "outputTokens": 2}));
        assert_eq!(report["billed"], json!({"inputTokens": 7, "outputTokens": 8}));
    }

    #[test]
    fn the_credentials_echo_names_key_and_token_headers_only() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("authorization", "Bearer sk-1"),
            ("x-goog-api-key", "g-2"),
            ("x-portkey-key", "p-3"),
            ("x-session-token", "t-4"),
            ("content-type", "application/json"),
            ("anthropic-version", "2023-06-01"),
        ] {
            headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
        }
        let echo = credentials_echo(&headers, Some("q-5"));
        for expected in
            ["authorization=Bearer sk-1", "x-goog-api-key=g-2", "x-portkey-key=p-3", "x-session-token=t-4", "key=q-5"]
        {
            assert!(echo.contains(expected), "{expected} in {echo}");
        }
        assert!(!echo.contains("application/json") && !echo.contains("2023-06-01"), "{echo}");
        assert_eq!(credentials_echo(&HeaderMap::new(), None), "");
    }

    #[test]
    fn the_last_step_repeats_and_redefining_resets_the_log() {
        let registry = Arc::new(Registry::new());
        registry.define("s", vec![step(r#"{"status": 503}"#).unwrap(), step("{}").unwrap()]).unwrap();
        assert!(registry.define("empty", Vec::new()).is_err());
        let statuses: Vec<_> = (0..3)
            .map(|_| {
                let (step, _, mut tracker) = registry.begin("s", request());
                tracker.finish(Outcome::Completed);
                step.status
            })
            .collect();
        assert_eq!(statuses, [Some(StatusCode::SERVICE_UNAVAILABLE), None, None]);
        assert_eq!(registry.report("s")["completed"], 3);

        let (_, _, tracker) = registry.begin("s", request());
        registry.define("s", vec![Step::default()]).unwrap();
        drop(tracker);
        assert_eq!(registry.report("s")["requests"], 0);
    }

    #[test]
    fn timed_steps_hold_until_their_time_then_give_way() {
        let scenario = |json: &[&str]| {
            let steps = json.iter().map(|j| Arc::new(step(j).unwrap())).collect();
            Scenario::new(1, 1_000, steps)
        };
        // (steps, arrival times in server ms (defined at 1000), the step each request gets)
        let cases: [(&[&str], &[u64], &[usize]); 5] = [
            // An outage until 6 s, then healthy: the count of requests does not matter.
            (&[r#"{"untilMs": 6000, "status": 503}"#, "{}"], &[1_000, 2_000, 6_999, 7_000, 9_000], &[0, 0, 0, 1, 1]),
            // Nothing arrived during the outage: the first request is already past it.
            (&[r#"{"untilMs": 100, "status": 503}"#, "{}"], &[5_000, 5_001], &[1, 1]),
            // An untimed step still answers one request, before or after a timed one.
            (
                &[r#"{"status": 500}"#, r#"{"untilMs": 50, "status": 503}"#, "{}"],
                &[1_000, 1_010, 1_020, 1_060],
                &[0, 1, 1, 2],
            ),
            // Several timed steps in a row, and one skipped entirely.
            (
                &[
                    r#"{"untilMs": 10, "status": 500}"#,
                    r#"{"untilMs": 20, "status": 502}"#,
                    r#"{"untilMs": 30}"#,
                    r#"{"status": 429}"#,
                ],
                &[1_005, 1_025, 1_040, 1_050],
                &[0, 2, 3, 3],
            ),
            // A timed last step repeats after its time, as any last step does.
            (&[r#"{"untilMs": 10, "status": 503}"#], &[1_000, 2_000], &[0, 0]),
        ];
        for (steps, arrivals, expected) in cases {
            let mut scenario = scenario(steps);
            let got: Vec<usize> = arrivals.iter().map(|&now| scenario.take_step(now)).collect();
            assert_eq!(got, expected, "{steps:?} at {arrivals:?}");
        }
    }

    #[test]
    fn a_dropped_tracker_means_the_client_closed() {
        let registry = Arc::new(Registry::new());
        let (_, _, tracker) = registry.begin("fresh", request());
        assert_eq!(registry.stats()["open"], 1);
        drop(tracker);
        let report = registry.report("fresh");
        assert_eq!(report["clientClosed"], 1);
        assert_eq!(report["log"][0]["outcome"], "client_closed");
    }
}
