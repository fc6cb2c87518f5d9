//! The gateway's wasm surface (`createGateway` in pkg/gateway.js wraps it).
//!
//! A request enters twice: `decide` with its head, which answers a complete reply or a plan
//! ([`crate::gateway::decide`]: endpoint, CORS, gateway key, body cap, deadline), then `serve`
//! with the body the plan said to read. JavaScript only reads that body, runs the task and
//! builds the `Response`; everything about a call is here: parsing the client's body, starting
//! the same engine call as `Baton.complete` / `Baton.stream`, and deciding the status. The
//! status is held until the route commits: for a stream, the first delivered delta, which is
//! the engine's own commit point, so the gateway never re-implements retry rules; for a whole
//! answer, the answer. Before that, any failure is a real HTTP status in the client's error
//! shape; after it, an error event in the client's stream format, and no success marker. A
//! stream that breaks may continue on another member (`afterStart`): the client's stream simply
//! goes on, with an SSE comment at the seam.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use llm_baton_wire::write::{JsonWriter, ToJson};
use wasm_bindgen::prelude::*;

use super::{
    absorb_view, host, now, read_config, run_call, to_js, CallOutput, Completion, ErrorView, MathRandom, Settled,
};
use crate::config::Config;
use crate::engine::{Baton, CallError, CallOptions, Served, Splice};
use crate::gateway::{
    answer_body, decide, models_reply, parse_request, requested_model, BodyRead, Caller, ClientFormat, Decision,
    GatewayError, Head, Headers, Listing, Meta, Plan, Reply, Site, StreamEncoder, SSE,
};
use crate::propagation::DeadlinePropagation;

#[wasm_bindgen]
pub struct WasmGateway {
    baton: RefCell<Baton>,
    config: Arc<Config>,
    propagation: Rc<DeadlinePropagation>,
    site: Site,
}

#[wasm_bindgen]
impl WasmGateway {
    /// Validates the config (gateway section included). No I/O, no timer: a Worker builds it at
    /// its module's top level. Throws `{kind: "config", path, message}`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<WasmGateway, JsValue> {
        let baton = read_config(&config, "createGateway")?;
        let config = baton.shared_config();
        let propagation = Rc::new(DeadlinePropagation::new(&config));
        Ok(WasmGateway { baton: RefCell::new(baton), config, propagation, site: Site::Http })
    }

    /// The first step of every request: a reply `{status, headers, body}`, the whole response (a
    /// refusal, a CORS preflight, `GET /v1/models` or `/v1/health`), or a plan `{format,
    /// deadlineMs?, origin?, limit?}`: read at most `limit` bytes of body (plus one, to tell a
    /// body over it), then `serve`.
    /// `headers`: the request's `Headers`; only those the decision needs are read.
    pub fn decide(&self, method: &str, path: &str, headers: &web_sys::Headers) -> JsValue {
        let header = |name: &str| headers.get(name).ok().flatten();
        let decision = decide(&self.config, self.site, &Head { method, path, header: &header });
        let reply = match decision {
            Decision::Read(plan) => return to_js(&plan),
            Decision::Reply(reply) => reply,
            Decision::Get(Listing::Models { id, anthropic }, caller) => {
                // The SDKs encode the id as a path segment (a route may be "openai/gpt-4o").
                let id = id.map(|id| js_sys::decode_uri_component(&id).map_or(id, String::from));
                let now = js_sys::Date::new_0();
                let iso = String::from(now.to_iso_string());
                let created = ((now.get_time() / 1000.0) as u64, iso.as_str());
                caller.dressed(models_reply(&self.config.route_names(), created, id.as_deref(), anthropic))
            }
            Decision::Get(Listing::Health, caller) => {
                let body = self.baton.borrow().health(now()).to_json();
                caller.dressed(Reply::json(200, "", 0, body))
            }
        };
        to_js(&reply)
    }

    /// Every target's breaker and the retry budget, as `GET /v1/health` answers them (for the
    /// gateway's `/metrics`, pkg/gateway/metrics.js).
    pub fn health(&self) -> JsValue {
        to_js(&self.baton.borrow().health(now()))
    }

    /// From now on a health store decides probes.
    #[wasm_bindgen(js_name = followStore)]
    pub fn follow_store(&self) {
        self.baton.borrow_mut().follow_store();
    }

    /// Serves `baton.fetch` from now on, in process: no CORS, no key, no body cap, errors for
    /// the SDK that called (its Baton's config was validated already).
    #[wasm_bindgen(js_name = inProcess)]
    pub fn in_process(&mut self) {
        self.site = Site::InProcess;
    }

    /// The targets a health store must be asked about before `body` is served: those of the route
    /// its `model` names, when this gateway's word on any of them is stale; undefined while it is
    /// fresh, or for a body that names no model (which `serve` refuses). Only the route's, so a
    /// probe the store grants goes to a request that may take it.
    #[wasm_bindgen(js_name = staleTargets)]
    pub fn stale_targets(&self, max_age_ms: f64, body: Option<Vec<u8>>) -> Option<Vec<String>> {
        let model = requested_model(&body?)?;
        self.baton.borrow().stale_targets(&model, now(), max_age_ms.max(0.0) as u64)
    }

    /// Takes a store's view as this gateway's breakers (see `WasmBaton.absorb`).
    pub fn absorb(&self, view: JsValue) -> Result<(), JsValue> {
        absorb_view(&self.baton, &view)
    }

    /// A 500 for a request whose call the wasm could not run (it trapped), with the headers of
    /// its plan's caller: `format` and `origin` as `decide` gave them.
    pub fn refuse(&self, format: &str, origin: Option<String>, status: u16, message: &str) -> JsValue {
        let plan = self.plan(format, None, origin);
        to_js(&plan.refusal(&GatewayError::new(status, message), "", 0))
    }

    /// The second step: serves the body a plan said to read (`plan.format`,
    /// `plan.deadlineMs` and `plan.origin` as `decide` gave them) as a task (pkg/host.js polls
    /// it). `body`: the bytes read (at most one past the limit), or undefined when reading failed
    /// with `read_error`. Its outputs: for a stream that commits, `{type: "commit", headers}`
    /// once, then the SSE as `Uint8Array`s (one per poll: all the events that poll handled);
    /// last, `{type: "reply", reply}`, whose
    /// body is the whole answer or error, or after a commit the rest of the stream (its end, or an
    /// error event). `waited_ms`: how long the request already waited (for a health store),
    /// taken from its budget; `reports`: emit each `{type: "event", event}` of kind `leg` for
    /// that store. `traced` (pkg/telemetry.js): emit every event, and before the reply
    /// `{type: "done", summary}` or `{type: "failed", error}` as a Baton call would (the
    /// answer's content only with `content`); with `content`, `{type: "request", request}` first.
    #[allow(clippy::too_many_arguments)]
    pub fn serve(
        &self,
        format: &str,
        deadline_ms: Option<f64>,
        origin: Option<String>,
        body: Option<Vec<u8>>,
        read_error: Option<String>,
        waited_ms: f64,
        reports: bool,
        traced: bool,
        content: bool,
    ) -> host::Id {
        let plan = self.plan(format, deadline_ms, origin);
        let read = match &body {
            Some(bytes) => BodyRead::Bytes(bytes),
            None => BodyRead::Failed(read_error.as_deref().unwrap_or("no body")),
        };
        let started = plan.body(read).and_then(|text| self.start(&plan, &text, waited_ms.max(0.0) as u64));
        let (call, client) = match started {
            Ok(started) => started,
            Err(e) => {
                let reply = plan.refusal(&e, "", 0);
                return host::spawn(async move { host::emit(to_js(&Output::Reply { reply: &reply })) });
            }
        };
        let format = plan.format;
        let config = Arc::clone(&self.config);
        let propagation = Rc::clone(&self.propagation);
        host::spawn(async move {
            if traced && content {
                host::emit(to_js(&Output::Request { request: &client.request }));
            }
            let meta = Meta {
                id: response_id(format),
                created: unix_seconds(),
                completed: None,
                model: client.model,
                echo: client.echo,
            };
            let trace = traced.then_some(Trace { content });
            let serving = Serving { config: &config, propagation: &propagation, plan: &plan, reports, trace };
            let reply = if client.stream {
                serve_stream(call, &serving, client.request, client.include_usage, meta).await
            } else {
                serve_whole(call, &serving, client.request, meta).await
            };
            host::emit(to_js(&Output::Reply { reply: &plan.caller.dressed(reply) }));
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
        headers: &'a Headers,
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
                w.field("headers", *headers);
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
    /// The plan `decide` gave, as JavaScript carried it back: the caller follows from where
    /// this gateway serves, the limit from its config.
    fn plan(&self, format: &str, deadline_ms: Option<f64>, origin: Option<String>) -> Plan {
        let (caller, limit) = match self.site {
            Site::Http => (Caller::Http { origin }, Some(self.config.gateway.max_body_bytes)),
            Site::InProcess => (Caller::InProcess, None),
        };
        let format = ClientFormat::parse(format).unwrap_or(ClientFormat::OpenaiChat);
        Plan { format, caller, deadline_ms: deadline_ms.map(|ms| ms as u64), limit }
    }

    /// Parses the body, checks the model, and starts the engine call.
    fn start(
        &self,
        plan: &Plan,
        body: &str,
        waited_ms: u64,
    ) -> Result<(crate::engine::Call, crate::gateway::ClientCall), GatewayError> {
        let client = parse_request(plan.format, body)?;
        let deadline_ms = plan.deadline_ms;
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
    propagation: &'a DeadlinePropagation,
    /// The request's format and who its replies go to.
    plan: &'a Plan,
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

/// The clock as a response's `created` and `completed_at` give it.
fn unix_seconds() -> u64 {
    (js_sys::Date::now() / 1000.0) as u64
}

async fn serve_whole(
    call: crate::engine::Call,
    serving: &Serving<'_>,
    request: crate::chat::ChatRequest,
    mut meta: Meta,
) -> Reply {
    let Serving { config, propagation, plan, reports, trace } = *serving;
    let format = plan.format;
    let mut warnings = Vec::new();
    let outcome = run_call(call, config, propagation, &request, false, &mut |output| {
        keep_warning(&output, &mut warnings);
        report_event(&output, reports, trace)
    })
    .await;
    report_settled(&outcome, config, trace);
    let reply = match outcome {
        Ok(done) => {
            let target = &config.targets[done.target];
            meta.model = done.answer.model.clone().unwrap_or_else(|| target.model.clone());
            meta.completed = Some(unix_seconds());
            Reply::json(200, &target.name, done.legs.len(), answer_body(format, &meta, &done.answer))
        }
        Err(e) => {
            let error = GatewayError::from_failure(&e.failure, e.target.as_deref());
            Reply::error(format, &error, e.target.as_deref().unwrap_or(""), e.legs.len())
        }
    };
    reply.warned(&warnings)
}

async fn serve_stream(
    call: crate::engine::Call,
    serving: &Serving<'_>,
    request: crate::chat::ChatRequest,
    include_usage: bool,
    meta: Meta,
) -> Reply {
    let Serving { config, propagation, plan, reports, trace } = *serving;
    let format = plan.format;
    let mut encoder = StreamEncoder::new(format, meta, include_usage);
    // The engine's commit is the gateway's: the status is 200 from the first delivered delta on.
    let mut committed = false;
    // The SSE of one delivery, reused: the bytes are copied out as they are emitted.
    let mut text = String::new();
    // The warnings before the head: after it, only the call's events can tell them.
    let mut warnings = Vec::new();
    let outcome = run_call(call, config, propagation, &request, true, &mut |output| match output {
        CallOutput::Event(_) => {
            if !committed {
                keep_warning(&output, &mut warnings);
            }
            report_event(&output, reports, trace)
        }
        CallOutput::Commit { target, attempts } => {
            committed = true;
            let target = &config.targets[target];
            encoder.set_model(&target.model);
            let head = Reply::new(200, SSE, &target.name, attempts as usize, String::new()).warned(&warnings);
            let head = plan.caller.dressed(head);
            host::emit(to_js(&Output::Commit { headers: &head.headers }));
        }
        CallOutput::Splice(splice) => host::emit_bytes(splice_comment(splice).as_bytes()),
        CallOutput::Deltas(deltas) => {
            text.clear();
            for delta in deltas {
                encoder.delta(delta, &mut text);
            }
            host::emit_bytes(text.as_bytes());
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
            encoder.set_completed(unix_seconds());
            encoder.finish(&done.answer.finish_reason, done.answer.usage, &mut out);
            Reply::new(200, SSE, &target.name, done.legs.len(), out).warned(&warnings)
        }
        Err(e) => {
            let error = GatewayError::from_failure(&e.failure, e.target.as_deref());
            let target = e.target.as_deref().unwrap_or("");
            if committed {
                encoder.fail(&error, &mut out);
                Reply::new(200, SSE, target, e.legs.len(), out)
            } else {
                Reply::error(format, &error, target, e.legs.len()).warned(&warnings)
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

/// Keeps a `warning` event's message for the reply's `x-baton-warning`.
fn keep_warning(output: &CallOutput<'_>, warnings: &mut Vec<String>) {
    if let CallOutput::Event(crate::record::Event::Warning { message, .. }) = output {
        warnings.push(message.clone());
    }
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
        Ok(served) => Settled::Done { summary: Completion::of(served, config, content) },
        Err(e) => Settled::Failed { error: ErrorView::of(e) },
    };
    host::emit(to_js(&output));
}

/// `chatcmpl-…`, `msg_…` or `resp_…` with 24 random hex digits.
fn response_id(format: ClientFormat) -> String {
    let hex: String =
        (0..24).map(|_| char::from_digit((js_sys::Math::random() * 16.0) as u32 % 16, 16).unwrap_or('0')).collect();
    match format {
        ClientFormat::OpenaiChat => format!("chatcmpl-{hex}"),
        ClientFormat::AnthropicMessages => format!("msg_{hex}"),
        ClientFormat::OpenaiResponses => format!("resp_{hex}"),
    }
}
