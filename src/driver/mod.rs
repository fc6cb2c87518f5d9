//! The wasm32 driver: binds the core's decisions to JavaScript's `fetch`, timers, clock and
//! AbortSignal, in Node, Deno, workerd and browsers alike.
//!
//! It is deliberately thin. The engine decides everything (what to send, when a limit expires,
//! whether to retry); the driver only performs it: one task per attempt ([`attempt`]), one
//! timer armed for the engine's next wake-up, and the caller's signal. Every wake-up hands the
//! engine the real `now`, so a timer that fires late (hidden tabs wake about once a second)
//! still ends the attempt at its limit and never turns a late answer into an on-time success.
//! Nothing runs at module load: workerd forbids timers and fetch at the top level.

mod attempt;
mod gateway;
mod js_value;

use std::cell::RefCell;
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;

use futures::channel::{mpsc, oneshot};
use futures::{FutureExt, StreamExt};
use gloo_timers::future::TimeoutFuture;
use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::AbortSignal;

use crate::backoff::RandomSource;
use crate::chat::{Answer, ChatRequest, Delta, FinishReason, ToolCall, Usage};
use crate::config::{parse_deadline_option, Config, ConfigError, MAX_MS};
use crate::engine::{Action, AttemptId, Baton, Call, CallError, CallOptions};
use crate::record::{Event, FailureInfo, Leg};
use attempt::{AbortGuard, AttemptSignal};

#[wasm_bindgen]
extern "C" {
    /// The global `performance.now()`: monotonic, unlike `Date.now()`.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

fn now() -> u64 {
    performance_now() as u64
}

/// `Math.random`, as the engine's jitter source.
struct MathRandom;

impl RandomSource for MathRandom {
    fn next_unit(&mut self) -> f64 {
        js_sys::Math::random()
    }
}

/// The object behind the JS `Baton` class (pkg/core.js wraps it).
#[wasm_bindgen]
pub struct WasmBaton {
    baton: Rc<RefCell<Baton>>,
}

#[wasm_bindgen]
impl WasmBaton {
    /// Validates the config document. Throws `{kind: "config", path, message}`.
    #[wasm_bindgen(constructor)]
    pub fn new(config: JsValue) -> Result<WasmBaton, JsValue> {
        Ok(WasmBaton { baton: Rc::new(RefCell::new(read_config(&config)?)) })
    }

    /// Every name a call may use: the routes, then targets that are not routes.
    pub fn routes(&self) -> Vec<String> {
        self.baton.borrow().config().route_names()
    }

    /// One whole answer. Resolves to the completion summary; rejects with an error object.
    pub fn complete(&self, route: String, request: JsValue, options: JsValue) -> Result<Promise, JsValue> {
        self.begin(&route, &request, &options, None)
    }

    /// A streamed answer: `on_deltas` gets an array of the deltas each network read delivered,
    /// as they arrive (one call per read, not per delta); the promise resolves with
    /// the same summary as `complete`.
    pub fn stream(
        &self,
        route: String,
        request: JsValue,
        options: JsValue,
        on_deltas: Function,
    ) -> Result<Promise, JsValue> {
        self.begin(&route, &request, &options, Some(on_deltas))
    }
}

impl WasmBaton {
    fn begin(
        &self,
        route: &str,
        request: &JsValue,
        options: &JsValue,
        on_delta: Option<Function>,
    ) -> Result<Promise, JsValue> {
        let options = CallSettings::read(options)?;
        let request = read_request(request)?;
        if options.signal.as_ref().is_some_and(AbortSignal::aborted) {
            return Err(error_object(&CallError {
                failure: crate::outcome::Failure::Cancelled,
                target: None,
                legs: vec![],
            }));
        }
        let call_options = CallOptions { deadline_ms: options.deadline_ms, stream: on_delta.is_some() };
        let call =
            self.baton.borrow_mut().start(route, call_options, now(), Box::new(MathRandom)).map_err(config_error)?;
        let config = self.baton.borrow().shared_config();
        Ok(wasm_bindgen_futures::future_to_promise(drive(call, config, request, options, on_delta)))
    }
}

/// A call's JS-side options: `{ deadlineMs?, signal?, onEvent? }`.
struct CallSettings {
    deadline_ms: Option<u64>,
    signal: Option<AbortSignal>,
    on_event: Option<Function>,
}

impl CallSettings {
    fn read(options: &JsValue) -> Result<CallSettings, JsValue> {
        if options.is_undefined() || options.is_null() {
            return Ok(CallSettings { deadline_ms: None, signal: None, on_event: None });
        }
        if !options.is_object() {
            return Err(config_error(ConfigError::new("options", "must be an object such as { deadlineMs: 10000 }")));
        }
        for key in js_sys::Object::keys(options.unchecked_ref::<js_sys::Object>()).iter() {
            let key = key.as_string().unwrap_or_default();
            if !["deadlineMs", "signal", "onEvent"].contains(&key.as_str()) {
                return Err(config_error(ConfigError::new(
                    format!("options.{key}"),
                    "is not a known option; known options: deadlineMs, signal, onEvent",
                )));
            }
        }
        let get = |k: &str| Reflect::get(options, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED);
        let deadline = get("deadlineMs");
        let deadline_ms = if deadline.is_undefined() || deadline.is_null() {
            None
        } else {
            let value: serde_json::Value =
                serde_json::from_str(&json_text(&deadline, "options.deadlineMs")?).unwrap_or_default();
            parse_deadline_option(Some(&value)).map_err(config_error)?
        };
        let signal = match get("signal") {
            v if v.is_undefined() || v.is_null() => None,
            v => Some(v.dyn_into::<AbortSignal>().map_err(|_| {
                config_error(ConfigError::new(
                    "options.signal",
                    "must be an AbortSignal (from new AbortController().signal)",
                ))
            })?),
        };
        let on_event = match get("onEvent") {
            v if v.is_undefined() || v.is_null() => None,
            v => Some(
                v.dyn_into::<Function>()
                    .map_err(|_| config_error(ConfigError::new("options.onEvent", "must be a function")))?,
            ),
        };
        Ok(CallSettings { deadline_ms, signal, on_event })
    }
}

/// Validates a JS config document into a Baton; throws `{kind: "config", path, message}`.
fn read_config(config: &JsValue) -> Result<Baton, JsValue> {
    Ok(Baton::new(Config::from_json(&json_text(config, "config")?).map_err(config_error)?))
}

fn read_request(request: &JsValue) -> Result<ChatRequest, JsValue> {
    ChatRequest::from_json(&json_text(request, "request")?).map_err(config_error)
}

/// `JSON.stringify(value)`, as text for the core's parsers.
fn json_text(value: &JsValue, path: &str) -> Result<String, JsValue> {
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| config_error(ConfigError::new(path, "must be a plain JSON-like object")))
}

fn to_js<T: Serialize>(value: &T) -> JsValue {
    serde_json::to_string(value).ok().and_then(|s| js_sys::JSON::parse(&s).ok()).unwrap_or(JsValue::NULL)
}

fn config_error(e: ConfigError) -> JsValue {
    #[derive(Serialize)]
    struct View<'a> {
        kind: &'static str,
        path: &'a str,
        message: &'a str,
    }
    to_js(&View { kind: "config", path: &e.path, message: &e.message })
}

fn error_object(e: &CallError) -> JsValue {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct View<'a> {
        #[serde(flatten)]
        cause: FailureInfo,
        #[serde(skip_serializing_if = "Option::is_none")]
        target: Option<&'a str>,
        legs: &'a [Leg],
    }
    to_js(&View { cause: FailureInfo(e.failure.clone()), target: e.target.as_deref(), legs: &e.legs })
}

/// The successful summary: `{ text, reasoning?, toolCalls?, target, model, finishReason, usage, legs }`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Completion<'a> {
    text: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    reasoning: &'a str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tool_calls: &'a [ToolCall],
    target: &'a str,
    model: &'a str,
    finish_reason: &'a FinishReason,
    usage: Usage,
    legs: &'a [Leg],
}

/// The attempt in flight: its id, its signals, and the guard whose drop aborts it.
struct InFlight {
    id: AttemptId,
    signals: mpsc::UnboundedReceiver<AttemptSignal>,
    _guard: AbortGuard,
}

/// What woke the call loop.
enum Wake {
    Signal(AttemptId, Option<AttemptSignal>),
    Timer,
    Cancelled,
}

/// Removes the abort listener from the caller's signal when the call ends.
struct SignalListener {
    signal: AbortSignal,
    closure: Closure<dyn FnMut()>,
}

impl Drop for SignalListener {
    fn drop(&mut self) {
        let _ = self.signal.remove_event_listener_with_callback("abort", self.closure.as_ref().unchecked_ref());
    }
}

/// Runs one call for the JS API: events and deltas go to the caller's functions, the outcome
/// becomes the completion summary or the error object.
async fn drive(
    call: Call,
    config: Arc<Config>,
    request: ChatRequest,
    settings: CallSettings,
    on_delta: Option<Function>,
) -> Result<JsValue, JsValue> {
    let on_event = settings.on_event;
    let mut events = |event: &Event| {
        if let Some(f) = &on_event {
            let _ = f.call1(&JsValue::NULL, &to_js(event));
        }
    };
    let mut deltas = |batch: &[Delta]| {
        if let Some(sink) = &on_delta {
            let _ = sink.call1(&JsValue::NULL, &to_js(&batch));
        }
    };
    let stream = on_delta.is_some();
    let finished = run_call(call, &config, &request, settings.signal.as_ref(), stream, &mut events, &mut deltas)
        .await
        .map_err(|e| error_object(&e))?;
    let target = &config.targets[finished.target];
    let answer = &finished.answer;
    let summary = Completion {
        text: &answer.text,
        reasoning: &answer.reasoning,
        tool_calls: &answer.tool_calls,
        target: &target.name,
        model: answer.model.as_deref().unwrap_or(&target.model),
        finish_reason: &answer.finish_reason,
        usage: answer.usage,
        legs: &finished.legs,
    };
    Ok(to_js(&summary))
}

/// A call that succeeded: the whole answer (assembled from the deltas for a stream), the target
/// that served it and every attempt.
pub(crate) struct Finished {
    pub answer: Answer,
    pub target: usize,
    pub legs: Vec<Leg>,
}

/// Runs one call to its end: performs the engine's actions and feeds it what happens. Streams
/// hand the deltas each read delivered to `on_deltas` (only deltas the engine let through: none before the
/// attempt's first visible content, none from an attempt it abandoned).
pub(crate) async fn run_call(
    mut call: Call,
    config: &Config,
    request: &ChatRequest,
    signal: Option<&AbortSignal>,
    stream: bool,
    on_event: &mut dyn FnMut(&Event),
    on_deltas: &mut dyn FnMut(&[Delta]),
) -> Result<Finished, CallError> {
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    // Without a signal nothing can cancel; a dropped sender must not read as a cancellation.
    let mut cancelled = signal.is_some().then_some(cancel_rx);
    let _listener = signal.map(|signal| {
        let mut cancel_tx = Some(cancel_tx);
        let closure = Closure::<dyn FnMut()>::new(move || {
            if let Some(tx) = cancel_tx.take() {
                let _ = tx.send(());
            }
        });
        let _ = signal.add_event_listener_with_callback("abort", closure.as_ref().unchecked_ref());
        SignalListener { signal: signal.clone(), closure }
    });
    let mut in_flight: Option<InFlight> = None;
    let mut timer: Option<(u64, TimeoutFuture)> = None;
    let mut shown = Shown::default();
    let mut answer: Option<Answer> = None;

    loop {
        while let Some(action) = call.poll() {
            match action {
                Action::Send { attempt, target } => {
                    let t = &config.targets[target];
                    let http = t.format.build_request(t, request, stream);
                    let guard = AbortGuard::new().map_err(transport_error)?;
                    shown.held.clear();
                    let (tx, rx) = mpsc::unbounded();
                    wasm_bindgen_futures::spawn_local(attempt::run(http, guard.signal(), t.format, stream, tx));
                    in_flight = Some(InFlight { id: attempt, signals: rx, _guard: guard });
                }
                Action::Abort { attempt, .. } => {
                    if in_flight.as_ref().is_some_and(|f| f.id == attempt) {
                        in_flight = None;
                    }
                }
                Action::Event(event) => on_event(&event),
                Action::Finish(Ok(served)) => {
                    let answer = answer.take().unwrap_or_else(|| shown.into_answer());
                    return Ok(Finished { answer, target: served.target, legs: served.legs });
                }
                Action::Finish(Err(e)) => return Err(e),
            }
        }

        // Arm the timer for the engine's next wake-up; keep an armed one that is not later.
        match call.poll_timeout() {
            Some(at) if timer.as_ref().is_none_or(|(armed, _)| *armed > at) => {
                let delay = at.saturating_sub(now()).min(MAX_MS) as u32;
                timer = Some((at, TimeoutFuture::new(delay)));
            }
            None => timer = None,
            _ => {}
        }

        let wake = poll_fn(|cx| {
            if cancelled.as_mut().is_some_and(|c| c.poll_unpin(cx).is_ready()) {
                return Poll::Ready(Wake::Cancelled);
            }
            if let Some(f) = in_flight.as_mut() {
                if let Poll::Ready(signal) = f.signals.poll_next_unpin(cx) {
                    return Poll::Ready(Wake::Signal(f.id, signal));
                }
            }
            if let Some((_, t)) = timer.as_mut() {
                if t.poll_unpin(cx).is_ready() {
                    return Poll::Ready(Wake::Timer);
                }
            }
            Poll::Pending
        })
        .await;

        let now = now();
        match wake {
            Wake::Cancelled => call.cancel(now),
            Wake::Timer => {
                timer = None;
                call.handle_timeout(now);
            }
            Wake::Signal(id, signal) => match signal {
                Some(AttemptSignal::Headers) => call.on_headers(id, now),
                Some(AttemptSignal::Answer(a)) => {
                    answer = Some(a);
                    call.on_success(id, now);
                }
                Some(AttemptSignal::Deltas(batch)) => {
                    let mut shown_now = Vec::new();
                    for delta in batch {
                        match delta {
                            Delta::Done { finish_reason, usage } => {
                                shown.finish = Some((finish_reason, usage));
                                call.on_success(id, now);
                                break;
                            }
                            d if d.is_visible() => {
                                if !call.on_content(id, now) {
                                    break;
                                }
                                shown.deliver(d, &mut shown_now);
                            }
                            d => shown.hold(d),
                        }
                    }
                    if !shown_now.is_empty() {
                        on_deltas(&shown_now);
                    }
                }
                Some(AttemptSignal::Failed(failure)) => call.on_failure(id, now, failure),
                None => {
                    in_flight = None;
                    let failure =
                        crate::outcome::Failure::Transport { message: "attempt ended without an answer".into() };
                    call.on_failure(id, now, failure);
                }
            },
        }
    }
}

fn transport_error(e: JsValue) -> CallError {
    let failure = crate::outcome::Failure::Transport { message: attempt::js_error_message(&e) };
    CallError { failure, target: None, legs: vec![] }
}

/// What a stream has shown the caller, to build the final summary; and deltas held back
/// until the attempt shows visible content (a tool call's opening name, for one).
#[derive(Default)]
struct Shown {
    text: String,
    reasoning: String,
    tool_calls: Vec<ToolCall>,
    held: Vec<Delta>,
    finish: Option<(FinishReason, Usage)>,
}

impl Shown {
    fn hold(&mut self, delta: Delta) {
        self.held.push(delta);
    }

    /// Records `delta` (after any held ones) as shown, appending them to `out` for the caller.
    fn deliver(&mut self, delta: Delta, out: &mut Vec<Delta>) {
        let held = std::mem::take(&mut self.held);
        for d in held.into_iter().chain(std::iter::once(delta)) {
            match &d {
                Delta::Text { text } => self.text.push_str(text),
                Delta::Reasoning { text } => self.reasoning.push_str(text),
                Delta::ToolCall { index, id, name, arguments } => {
                    let i = *index as usize;
                    if self.tool_calls.len() <= i {
                        self.tool_calls.resize(
                            i + 1,
                            ToolCall { id: String::new(), name: String::new(), arguments: String::new() },
                        );
                    }
                    let call = &mut self.tool_calls[i];
                    if let Some(id) = id {
                        call.id.clone_from(id);
                    }
                    if let Some(name) = name {
                        call.name.clone_from(name);
                    }
                    call.arguments.push_str(arguments);
                }
                Delta::Done { .. } => {}
            }
            out.push(d);
        }
    }

    fn into_answer(self) -> Answer {
        let (finish_reason, usage) = self.finish.unwrap_or((FinishReason::Stop, Usage::default()));
        Answer {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls: self.tool_calls,
            finish_reason,
            usage,
            model: None,
        }
    }
}
