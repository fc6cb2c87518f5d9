//! `WasmBaton`, the object behind the JS `Baton` class: a call's request and options read from JS
//! values, and its events, stream items and outcome written back as task outputs. Only the
//! Baton's wasm has it. The gateway's wasm leaves it out (9.4 KB of it gzipped: the reader of the
//! Baton's own request document and these outputs), so an app of `createGateway` alone does not
//! download it; `baton.fetch` runs its gateway on that wasm, following this Baton's breakers and
//! retry budget through `view` and `report`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use llm_baton_wire::write::{JsonWriter, ToJson};
use wasm_bindgen::prelude::*;

use super::{
    absorb_view, config_error, health, host, js_value, now, read_config, run_call, to_js, CallOutput, Completion,
    ErrorView, MathRandom, Settled,
};
use crate::chat::{ChatRequest, Delta};
use crate::config::{parse_deadline_option, Config};
use crate::engine::{Baton, Call, CallOptions};
use crate::outcome::FailureInfo;
use crate::policy::ResumeMode;
use crate::propagation::DeadlinePropagation;
use crate::record::Event;

/// The object behind the JS `Baton` class (pkg/core.js wraps it).
#[wasm_bindgen]
pub struct WasmBaton {
    baton: RefCell<Baton>,
    /// Which targets get the call's remaining budget.
    propagation: Rc<DeadlinePropagation>,
}

#[wasm_bindgen]
impl WasmBaton {
    /// Validates the config document. Throws `{kind: "config", path, message}`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<WasmBaton, JsValue> {
        let baton = read_config(&config, "new Baton")?;
        let propagation = Rc::new(DeadlinePropagation::new(baton.config()));
        Ok(WasmBaton { baton: RefCell::new(baton), propagation })
    }

    /// Every target's breaker and the retry budget (`baton.health()`).
    pub fn health(&self) -> JsValue {
        to_js(&self.baton.borrow().health(now()))
    }

    /// From now on a health store decides probes; this Baton's breakers are its replica.
    #[wasm_bindgen(js_name = followStore)]
    pub fn follow_store(&self) {
        self.baton.borrow_mut().follow_store();
    }

    /// The targets a call on `route` may reach, when a health store must be asked about them
    /// before the call; undefined while this Baton's word on them is fresh.
    #[wasm_bindgen(js_name = staleTargets)]
    pub fn stale_targets(&self, route: &str, max_age_ms: f64) -> Option<Vec<String>> {
        self.baton.borrow().stale_targets(route, now(), max_age_ms.max(0.0) as u64)
    }

    /// Takes a store's view (`{targets: [...]}`) as this Baton's breakers. Throws
    /// `{kind: "config", path: "healthView", message}` for a view it cannot read.
    pub fn absorb(&self, view: JsValue) -> Result<(), JsValue> {
        absorb_view(&self.baton, &view)
    }

    /// What this Baton answers the gateway of its `baton.fetch`, which follows its breakers and
    /// retry budget as a replica follows a store: each target's admission, probes granted to it
    /// (see `WasmHealth.admit`).
    pub fn view(&self, targets: Vec<String>) -> JsValue {
        to_js(&self.baton.borrow().health_view(&targets, now()))
    }

    /// Learns from the `leg` events of its `baton.fetch`'s gateway, as from its own calls' (see
    /// `WasmHealth.report`).
    pub fn report(&self, reports: JsValue) -> Result<(), JsValue> {
        self.baton.borrow().with_health(|health| health::learn(health, &reports))
    }

    /// Every name a call may use: the routes, then targets that are not routes.
    pub fn routes(&self) -> Vec<String> {
        self.baton.borrow().config().route_names()
    }

    /// Starts a call and returns its task (pkg/host.js polls it). Its outputs, in order:
    /// `{type: "event", event}`, for a stream `{type: "deltas", deltas}` (one per network read,
    /// its texts joined; a restarted stream's `{type: "reset", …}` item comes first in its
    /// batch), then `{type: "done", summary}` or `{type: "failed", error}`. Events only when `events`
    /// (the caller passed `onEvent`, or a health store reads the legs): nobody pays for
    /// writing what nobody reads. `waitedMs`: how long the caller already waited (for a
    /// health store), taken from the call's budget. `stream`: undefined for a whole answer; for
    /// a stream, whether its reader can discard what it was given (handles `reset` items), so a
    /// broken stream may restart, not only continue. Throws
    /// `{kind: "config"}` for a bad route, request or deadline, before anything is sent.
    pub fn start(
        &self,
        route: String,
        request: JsValue,
        deadline_ms: JsValue,
        stream: Option<bool>,
        events: bool,
        waited_ms: f64,
    ) -> Result<host::Id, JsValue> {
        let deadline_ms = read_deadline(&deadline_ms)?;
        let request = read_request(&request)?;
        self.baton.borrow().config().check_request(&route, &request).map_err(config_error)?;
        let waited_ms = waited_ms.max(0.0) as u64;
        let (stream, resettable) = (stream.is_some(), stream.unwrap_or(true));
        let call_options = CallOptions { deadline_ms, stream, resettable, waited_ms };
        let call =
            self.baton.borrow_mut().start(&route, call_options, now(), Box::new(MathRandom)).map_err(config_error)?;
        let config = self.baton.borrow().shared_config();
        Ok(host::spawn(drive(call, config, Rc::clone(&self.propagation), request, stream, events)))
    }
}

/// A call's `deadlineMs` option. NaN and the infinities are refused, never read as "omitted".
fn read_deadline(value: &JsValue) -> Result<Option<u64>, JsValue> {
    if value.is_undefined() {
        return Ok(None);
    }
    let value = js_value::read_js(value, "options.deadlineMs").map_err(config_error)?;
    parse_deadline_option(Some(&value)).map_err(config_error)
}

fn read_request(request: &JsValue) -> Result<ChatRequest, JsValue> {
    let value = js_value::read_js(request, "request").map_err(config_error)?;
    ChatRequest::from_value(&value).map_err(config_error)
}

/// A restarted stream's first item: the reader discards what it showed, then the new answer
/// follows. `{type: "reset", from, to, cause, discardedChars}`.
struct ResetView<'a> {
    from: &'a str,
    to: &'a str,
    cause: FailureInfo,
    discarded_chars: usize,
}

impl ToJson for ResetView<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("type", "reset");
        w.field("from", self.from);
        w.field("to", self.to);
        w.field("cause", &self.cause);
        w.field("discardedChars", &self.discarded_chars);
        w.end_object();
    }
}

/// What a Baton's call hands its caller while it runs: `{type: "event", event}`, and a stream's
/// items, `{type: "deltas", deltas}`: one batch as the engine delivered it (texts already joined:
/// see `Delivery::deliver`), or a restart's reset item, which goes out as an item of the stream in
/// order with the deltas around it.
enum Progress<'a> {
    Event(&'a Event),
    Deltas(&'a [Delta]),
    Reset(ResetView<'a>),
}

impl ToJson for Progress<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Progress::Event(event) => {
                w.field("type", "event");
                w.field("event", *event);
            }
            Progress::Deltas(deltas) => {
                w.field("type", "deltas");
                w.key("deltas");
                w.begin_array();
                // Logprobs are a gateway client's (docs/parameters.md): the JS API shows none.
                deltas.iter().filter(|d| !matches!(d, Delta::Logprobs { .. })).for_each(|d| w.value(d));
                w.end_array();
            }
            Progress::Reset(reset) => {
                w.field("type", "deltas");
                w.field("deltas", &[reset][..]);
            }
        }
        w.end_object();
    }
}

/// Runs one call for the JS API, emitting its events, deltas and outcome as task outputs.
async fn drive(
    call: Call,
    config: Arc<Config>,
    propagation: Rc<DeadlinePropagation>,
    request: ChatRequest,
    stream: bool,
    events: bool,
) {
    let outcome = run_call(call, &config, &propagation, &request, stream, &mut |output| match output {
        CallOutput::Event(event) if events => host::emit(to_js(&Progress::Event(event))),
        CallOutput::Event(_) => {}
        CallOutput::Deltas(deltas) => host::emit(to_js(&Progress::Deltas(deltas))),
        CallOutput::Splice(splice) if splice.mode == ResumeMode::Restart => {
            let reset = ResetView {
                from: &splice.from,
                to: &splice.to,
                cause: FailureInfo(splice.cause.clone()),
                discarded_chars: splice.discarded_chars,
            };
            host::emit(to_js(&Progress::Reset(reset)));
        }
        CallOutput::Splice(_) | CallOutput::Commit { .. } => {}
    })
    .await;
    let output = match &outcome {
        Ok(served) => Settled::Done { summary: Completion::of(served, &config, true) },
        Err(e) => Settled::Failed { error: ErrorView::of(e) },
    };
    host::emit(to_js(&output));
}
