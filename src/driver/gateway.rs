//! The gateway's wasm surface (`createGateway` in pkg/gateway.js wraps it).
//!
//! JavaScript keeps the HTTP plumbing (routing, reading a capped body, building the `Response`);
//! everything about a call is here: parsing the client's body, starting the same engine call as
//! `Baton.complete` / `Baton.stream`, and deciding the status. The status is held until the route
//! commits: for a stream, the first delivered delta, which is the engine's own commit point, so
//! the gateway never re-implements retry rules; for a whole answer, the answer. Before that, any
//! failure is a real HTTP status in the client's error shape; after it, an error event in the
//! client's stream format, and no success marker. A stream that breaks may continue on another
//! member (`afterStart`): the client's stream simply goes on, with an SSE comment at the seam.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use llm_baton_wire::write::{JsonWriter, ToJson};
use wasm_bindgen::prelude::*;

use super::{
    absorb_view, host, now, read_config, run_call, to_js, CallOutput, Completion, ErrorView, Gateways, MathRandom,
    Output as BatonOutput,
};
use crate::config::Config;
use crate::engine::{Baton, CallError, CallOptions, Served, Splice};
use crate::gateway::{
    answer_body, authorized, cors_origin, models_body, parse_deadline_header, parse_request, ClientFormat,
    GatewayError, Meta, StreamEncoder,
};

/// What JS turns into a `Response`: `{ status, headers, body }`.
struct Reply {
    status: u16,
    headers: BTreeMap<&'static str, String>,
    body: String,
}

impl Reply {
    /// `target` is the target that served (or was tried last), empty when none was tried.
    fn new(status: u16, content_type: &str, target: &str, attempts: usize, body: String) -> Reply {
        let mut headers = BTreeMap::new();
        headers.insert("content-type", content_type.to_string());
        headers.insert("x-baton-target", target.to_string());
        headers.insert("x-baton-attempts", attempts.to_string());
        if content_type.starts_with("text/event-stream") {
            headers.insert("cache-control", "no-cache".into());
        }
        Reply { status, headers, body }
    }

    fn json(status: u16, target: &str, attempts: usize, body: String) -> Reply {
        Reply::new(status, "application/json", target, attempts, body)
    }

    fn error(format: ClientFormat, e: &GatewayError, target: &str, attempts: usize) -> Reply {
        let mut reply = Reply::json(e.status, target, attempts, e.body(format));
        if let Some(ms) = e.retry_after_ms {
            reply.headers.insert("retry-after", ms.div_ceil(1000).to_string());
        }
        if let Some(said) = e.should_retry() {
            reply.headers.insert("x-should-retry", said.to_string());
        }
        reply
    }
}

impl ToJson for Reply {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("status", &self.status);
        w.key("headers");
        write_headers(w, &self.headers);
        w.field("body", &self.body);
        w.end_object();
    }
}

/// Headers as an object, in name order.
fn write_headers(w: &mut JsonWriter, headers: &BTreeMap<&'static str, String>) {
    w.begin_object();
    for (name, value) in headers {
        w.field(name, value);
    }
    w.end_object();
}

const SSE: &str = "text/event-stream; charset=utf-8";

#[wasm_bindgen]
pub struct WasmGateway {
    baton: Rc<RefCell<Baton>>,
    config: Arc<Config>,
    gateways: Rc<Gateways>,
}

#[wasm_bindgen]
impl WasmGateway {
    /// Validates the config (gateway section included). No I/O, no timer: a Worker builds it at
    /// its module's top level. Throws `{kind: "config", path, message}`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<WasmGateway, JsValue> {
        let baton = read_config(&config, "createGateway")?;
        let config = baton.shared_config();
        let gateways = Rc::new(Gateways::new(&config));
        Ok(WasmGateway { baton: Rc::new(RefCell::new(baton)), config, gateways })
    }

    /// The config's `deadlineMs`, which a client's own timeout may shorten (pkg/gateway.js).
    #[wasm_bindgen(js_name = deadlineMs)]
    pub fn deadline_ms(&self) -> Option<f64> {
        self.config.deadline_ms.map(|ms| ms as f64)
    }

    /// `GET /v1/health`: every target's breaker and the retry budget.
    pub fn health(&self) -> JsValue {
        let body = self.baton.borrow().health(now()).to_json();
        to_js(&Reply::json(200, "", 0, body))
    }

    /// Every target name (what a health store is asked about: any may serve a request).
    #[wasm_bindgen(js_name = targetNames)]
    pub fn target_names(&self) -> Vec<String> {
        self.baton.borrow().target_names().to_vec()
    }

    /// From now on a health store decides probes.
    #[wasm_bindgen(js_name = followStore)]
    pub fn follow_store(&self) {
        self.baton.borrow_mut().follow_store();
    }

    /// Whether the store must be asked before the next request.
    #[wasm_bindgen(js_name = healthStale)]
    pub fn health_stale(&self, max_age_ms: f64) -> bool {
        let baton = self.baton.borrow();
        baton.health_stale(baton.target_names(), now(), max_age_ms.max(0.0) as u64)
    }

    /// Takes a store's view as this gateway's breakers (see `WasmBaton.absorb`).
    pub fn absorb(&self, view: JsValue) -> Result<(), JsValue> {
        absorb_view(&self.baton, &view)
    }

    #[wasm_bindgen(js_name = maxBodyBytes)]
    pub fn max_body_bytes(&self) -> f64 {
        self.config.gateway.max_body_bytes as f64
    }

    /// Whether the request carries a gateway key (always, when none is configured).
    pub fn authorized(&self, authorization: Option<String>, x_api_key: Option<String>) -> bool {
        authorized(&self.config.gateway, authorization.as_deref(), x_api_key.as_deref())
    }

    /// The `access-control-allow-origin` for this `Origin`, or undefined.
    #[wasm_bindgen(js_name = corsOrigin)]
    pub fn cors_origin(&self, origin: Option<String>) -> Option<String> {
        cors_origin(&self.config.gateway, origin.as_deref())
    }

    /// `GET /v1/models`.
    pub fn models(&self) -> JsValue {
        let created = (js_sys::Date::now() / 1000.0) as u64;
        to_js(&Reply::json(200, "", 0, models_body(&self.config.route_names(), created)))
    }

    /// A request refused before any call (401, 404, 405, 413, an unreadable body), in `format`.
    pub fn refuse(&self, format: &str, status: u16, message: &str) -> JsValue {
        to_js(&Reply::error(client_format(format), &GatewayError::new(status, message), "", 0))
    }

    /// Serves one request body in `format` ("openai", "anthropic" or "responses") as a task (pkg/host.js
    /// polls it). Its outputs: for a stream that commits, `{type: "commit", headers}` once, then
    /// `{type: "chunk", text}` per piece of SSE; last, `{type: "reply", reply}`, whose body is the
    /// whole answer or error, or after a commit the rest of the stream (its end, or an error
    /// event).
    /// `waited_ms`: how long the request already waited (for a health store), taken from its
    /// budget; `reports`: emit each `{type: "event", event}` of kind `leg` for that store.
    /// `traced` (pkg/telemetry.js): emit every event, and before the reply `{type: "done",
    /// summary}` or `{type: "failed", error}` as a Baton call would (the answer's content only
    /// with `content`); with `content`, `{type: "request", request}` first.
    #[allow(clippy::too_many_arguments)]
    pub fn call(
        &self,
        format: &str,
        body: String,
        deadline: Option<String>,
        waited_ms: f64,
        reports: bool,
        traced: bool,
        content: bool,
    ) -> u32 {
        let format = client_format(format);
        let (call, client) = match self.start(format, &body, deadline.as_deref(), waited_ms.max(0.0) as u64) {
            Ok(started) => started,
            Err(e) => {
                let reply = Reply::error(format, &e, "", 0);
                return host::spawn(async move { host::emit(to_js(&Output::Reply { reply: &reply })) });
            }
        };
        let config = Arc::clone(&self.config);
        let gateways = Rc::clone(&self.gateways);
        host::spawn(async move {
            if traced && content {
                host::emit(to_js(&Output::Request { request: &client.request }));
            }
            let meta = Meta {
                id: response_id(format),
                created: (js_sys::Date::now() / 1000.0) as u64,
                model: client.model,
                echo: client.echo,
            };
            let trace = traced.then_some(Trace { content });
            let serving = Serving { config: &config, gateways: &gateways, format, reports, trace };
            let reply = if client.stream {
                serve_stream(call, &serving, client.request, client.include_usage, meta).await
            } else {
                serve_whole(call, &serving, client.request, meta).await
            };
            host::emit(to_js(&Output::Reply { reply: &reply }));
        })
    }

    /// Whether the gateway has no `apiKeys`, so anyone who can reach it spends the provider keys.
    pub fn open(&self) -> bool {
        self.config.gateway.api_keys.is_empty()
    }
}

/// What a gateway task hands pkg/gateway.js: `{type, ...}`.
enum Output<'a> {
    /// A `leg` event, for a health store (only when the gateway has one).
    Event {
        event: &'a crate::record::Event,
    },
    Commit {
        headers: &'a BTreeMap<&'static str, String>,
    },
    Chunk {
        text: &'a str,
    },
    Reply {
        reply: &'a Reply,
    },
    /// For a trace: the request as the engine reads it (only when content is recorded).
    Request {
        request: &'a crate::chat::ChatRequest,
    },
}

impl ToJson for Output<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Output::Event { event } => {
                w.field("type", "event");
                w.field("event", *event);
            }
            Output::Commit { headers } => {
                w.field("type", "commit");
                w.key("headers");
                write_headers(w, headers);
            }
            Output::Chunk { text } => {
                w.field("type", "chunk");
                w.field("text", *text);
            }
            Output::Reply { reply } => {
                w.field("type", "reply");
                w.field("reply", *reply);
            }
            Output::Request { request } => {
                w.field("type", "request");
                w.field("request", *request);
            }
        }
        w.end_object();
    }
}

impl WasmGateway {
    /// A gateway over a `WasmBaton`'s engine (`baton.fetch`): its calls share that Baton's
    /// breakers, retry budget and learned gateway targets.
    pub(super) fn sharing(baton: Rc<RefCell<Baton>>, gateways: Rc<Gateways>) -> WasmGateway {
        let config = baton.borrow().shared_config();
        WasmGateway { baton, config, gateways }
    }

    /// Parses the body, checks the model and the deadline header, and starts the engine call.
    fn start(
        &self,
        format: ClientFormat,
        body: &str,
        deadline: Option<&str>,
        waited_ms: u64,
    ) -> Result<(crate::engine::Call, crate::gateway::ClientCall), GatewayError> {
        let client = parse_request(format, body)?;
        let deadline_ms = parse_deadline_header(deadline)?;
        if self.config.strategy(&client.model).is_none() {
            return Err(GatewayError::unknown_model(&client.model, &self.config.route_names()));
        }
        self.config.check_request(&client.model, &client.request).map_err(|e| client.uncarried(&e))?;
        // What a client was sent cannot be taken back: a broken stream may continue, never restart.
        let options = CallOptions { deadline_ms, stream: client.stream, resettable: false, waited_ms };
        let call = self
            .baton
            .borrow_mut()
            .start(&client.model, options, now(), Box::new(MathRandom))
            .map_err(|e| GatewayError::unknown_model(&client.model, &[e.message]))?;
        Ok((call, client))
    }
}

/// What every request of a gateway task is served with.
struct Serving<'a> {
    config: &'a Config,
    gateways: &'a Gateways,
    format: ClientFormat,
    /// A health store reads the legs (see [`report_event`]).
    reports: bool,
    /// The call is traced (pkg/telemetry.js): every event, and how it settled.
    trace: Option<Trace>,
}

#[derive(Clone, Copy)]
struct Trace {
    /// The answer's content goes to the trace too.
    content: bool,
}

async fn serve_whole(
    call: crate::engine::Call,
    serving: &Serving<'_>,
    request: crate::chat::ChatRequest,
    mut meta: Meta,
) -> Reply {
    let Serving { config, gateways, format, reports, trace } = *serving;
    let outcome =
        run_call(call, config, gateways, &request, false, &mut |output| report_event(&output, reports, trace)).await;
    report_settled(&outcome, config, trace);
    match outcome {
        Ok(done) => {
            let target = &config.targets[done.target];
            meta.model = done.answer.model.clone().unwrap_or_else(|| target.model.clone());
            Reply::json(200, &target.name, done.legs.len(), answer_body(format, &meta, &done.answer))
        }
        Err(e) => {
            let error = GatewayError::from_failure(&e.failure, e.target.as_deref());
            Reply::error(format, &error, e.target.as_deref().unwrap_or(""), e.legs.len())
        }
    }
}

async fn serve_stream(
    call: crate::engine::Call,
    serving: &Serving<'_>,
    request: crate::chat::ChatRequest,
    include_usage: bool,
    meta: Meta,
) -> Reply {
    let Serving { config, gateways, format, reports, trace } = *serving;
    let mut encoder = StreamEncoder::new(format, meta, include_usage);
    // The engine's commit is the gateway's: the status is 200 from the first delivered delta on.
    let mut committed = false;
    let outcome = run_call(call, config, gateways, &request, true, &mut |output| match output {
        CallOutput::Event(_) => report_event(&output, reports, trace),
        CallOutput::Commit { attempt, target } => {
            committed = true;
            let target = &config.targets[target];
            encoder.set_model(&target.model);
            let head = Reply::new(200, SSE, &target.name, attempt.0 as usize, String::new());
            host::emit(to_js(&Output::Commit { headers: &head.headers }));
        }
        CallOutput::Splice(splice) => host::emit(to_js(&Output::Chunk { text: &splice_comment(splice) })),
        CallOutput::Deltas(deltas) => {
            let mut text = String::new();
            for delta in deltas {
                encoder.delta(delta, &mut text);
            }
            host::emit(to_js(&Output::Chunk { text: &text }));
        }
    })
    .await;
    report_settled(&outcome, config, trace);
    let mut out = String::new();
    match outcome {
        Ok(done) => {
            let target = &config.targets[done.target];
            if !committed {
                encoder.set_model(&target.model);
            }
            encoder.finish(&done.answer.finish_reason, done.answer.usage, &mut out);
            Reply::new(200, SSE, &target.name, done.legs.len(), out)
        }
        Err(e) => {
            let error = GatewayError::from_failure(&e.failure, e.target.as_deref());
            let target = e.target.as_deref().unwrap_or("");
            if committed {
                encoder.fail(&error, &mut out);
                Reply::new(200, SSE, target, e.legs.len(), out)
            } else {
                Reply::error(format, &error, target, e.legs.len())
            }
        }
    }
}

/// The SSE comment that marks where a continued stream's new member took over, for anyone
/// reading the raw stream (clients skip comments). One line, whatever the target names hold.
fn splice_comment(splice: &Splice) -> String {
    let line = format!(
        "llm-baton resumed: attempt {} continues on {} after {} failed ({}); {} characters kept",
        splice.attempt.0,
        splice.to,
        splice.from,
        splice.cause.kind().as_str(),
        splice.kept_chars
    );
    let line: String = line.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    format!(": {line}\n\n")
}

/// Hands an event to JS: every event for a trace, else a `leg` event for a health store.
fn report_event(output: &CallOutput<'_>, reports: bool, trace: Option<Trace>) {
    if let CallOutput::Event(event) = output {
        if trace.is_some() || (reports && matches!(event, crate::record::Event::Leg { .. })) {
            host::emit(to_js(&Output::Event { event }));
        }
    }
}

/// Tells a trace how the call ended, in the outputs of a Baton call (`{type: "done", summary}`,
/// `{type: "failed", error}`), whose writing the wasm already holds.
fn report_settled(outcome: &Result<Served, CallError>, config: &Config, trace: Option<Trace>) {
    let Some(Trace { content }) = trace else { return };
    let output = match outcome {
        Ok(served) => BatonOutput::Done { summary: Completion::of(served, config, content) },
        Err(e) => BatonOutput::Failed { error: ErrorView::of(e) },
    };
    host::emit(to_js(&output));
}

fn client_format(name: &str) -> ClientFormat {
    ClientFormat::parse(name).unwrap_or(ClientFormat::OpenAi)
}

/// `chatcmpl-…`, `msg_…` or `resp_…` with 24 random hex digits.
fn response_id(format: ClientFormat) -> String {
    let hex: String =
        (0..24).map(|_| char::from_digit((js_sys::Math::random() * 16.0) as u32 % 16, 16).unwrap_or('0')).collect();
    match format {
        ClientFormat::OpenAi => format!("chatcmpl-{hex}"),
        ClientFormat::Anthropic => format!("msg_{hex}"),
        ClientFormat::Responses => format!("resp_{hex}"),
    }
}
