//! The wasm32 driver: binds the core's decisions to JavaScript's `fetch`, timers, clock and
//! AbortController, in Node, Deno, workerd and browsers alike.
//!
//! It is deliberately thin. The engine decides everything (what to send, when a limit expires,
//! whether to retry, what the reader sees); the driver only performs it: one future per attempt
//! ([`attempt`]), one timer armed for the engine's next wake-up, and the caller's cancel. Every
//! wake-up hands the engine the real `now`, so a timer that fires late (hidden tabs wake about
//! once a second) still ends the attempt at its limit and never turns a late answer into an
//! on-time success. Each call is a task of the [`host`] loop, which pkg/host.js runs under one
//! try/catch. Nothing runs at module load: workerd forbids timers and fetch at the top level.
//!
//! Each wasm exports what its entries use: the Baton's the Baton's JS API (`baton`), the
//! gateway's the gateway (`gateway`); both have the health store's `WasmHealth` and run calls
//! through [`run_call`].

mod attempt;
#[cfg(not(feature = "gateway"))]
mod baton;
#[cfg(feature = "gateway")]
mod gateway;
mod health;
mod host;
mod js_value;
#[cfg(feature = "clouds")]
mod vertex;

use std::cell::RefCell;
use std::future::poll_fn;
use std::task::Poll;

use futures::channel::mpsc;
use futures::{FutureExt, StreamExt};
use llm_baton_wire::write::{JsonWriter, ToJson};
use wasm_bindgen::prelude::*;

use crate::backoff::RandomSource;
use crate::chat::{ChatRequest, ContentFilterResults, Delta, FinishReason, Message, ToolCall, Usage};
use crate::config::{Config, FieldError, MAX_MS};
use crate::engine::{Action, AttemptId, Baton, Call, CallError, Served, Splice};
use crate::outcome::{Failure, FailureInfo};
use crate::propagation::{DeadlinePropagation, DEADLINE_HEADER};
use crate::record::{Event, Leg};
use attempt::AttemptSignal;
use host::{AbortGuard, Sleep};

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

/// Takes a health store's view as `baton`'s breakers (a Baton's or a gateway's). Throws
/// `{kind: "config", path: "healthView", message}` for a view it cannot read.
fn absorb_view(baton: &RefCell<Baton>, view: &JsValue) -> Result<(), JsValue> {
    let value = js_value::read_js(view, "healthView").map_err(config_error)?;
    let view = crate::health::read_view(&value).map_err(|m| config_error(FieldError::new("healthView", m)))?;
    baton.borrow_mut().absorb(&view, now());
    Ok(())
}

/// Validates a JS config document into a Baton for `entry` (`new Baton`, `createGateway`, named
/// when the config is missing); throws `{kind: "config", path, message}`.
fn read_config(config: &JsValue, entry: &str) -> Result<Baton, JsValue> {
    if config.is_undefined() || config.is_null() {
        return Err(config_error(crate::config::missing(entry)));
    }
    // Paths name fields from the document's root (`targets.p.apiKey`); the root itself is "config".
    let value = js_value::read_js_config(config)
        .map_err(|e| if e.path.is_empty() { FieldError::new("config", e.message) } else { e })
        .map_err(config_error)?;
    Ok(Baton::new(Config::from_value(&value).map_err(config_error)?))
}

/// `value` as a JS value: written as JSON text, which `JSON.parse` reads faster than the values
/// could be built one by one across the wasm boundary.
fn to_js(value: &impl ToJson) -> JsValue {
    js_sys::JSON::parse(&value.to_json()).unwrap_or(JsValue::NULL)
}

fn config_error(e: FieldError) -> JsValue {
    struct View<'a>(&'a FieldError);
    impl ToJson for View<'_> {
        fn write_json(&self, w: &mut JsonWriter) {
            w.begin_object();
            w.field("kind", "config");
            w.field("path", &self.0.path);
            w.field("message", &self.0.message);
            w.end_object();
        }
    }
    to_js(&View(&e))
}

/// A failed call as pkg/core.js builds its BatonError:
/// `{kind, message, …, target?, legs, billedUsage}`.
struct ErrorView<'a> {
    cause: FailureInfo,
    target: Option<&'a str>,
    legs: &'a [Leg],
    billed_usage: Usage,
}

impl<'a> ErrorView<'a> {
    fn of(e: &'a CallError) -> ErrorView<'a> {
        ErrorView {
            cause: FailureInfo(e.failure.clone()),
            target: e.target.as_deref(),
            legs: &e.legs,
            billed_usage: e.billed_usage,
        }
    }
}

impl ToJson for ErrorView<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        self.cause.write_fields(w);
        w.opt_field("target", self.target);
        w.field("legs", self.legs);
        w.field("billedUsage", &self.billed_usage);
        w.end_object();
    }
}

/// The successful summary: `{ text, reasoning?, toolCalls?, message, target, model,
/// contributors, finishReason, usage, billedUsage, legs }`.
struct Completion<'a> {
    text: &'a str,
    reasoning: &'a str,
    /// The answer as the assistant message to push onto the history, its reasoning state kept.
    message: Option<Message>,
    tool_calls: &'a [ToolCall],
    target: &'a str,
    model: &'a str,
    /// The targets whose output makes up the answer, in order.
    contributors: Vec<&'a str>,
    finish_reason: &'a FinishReason,
    /// What the provider's content filter said (Azure OpenAI): severities, no content.
    content_filter: Option<&'a ContentFilterResults>,
    usage: Usage,
    billed_usage: Usage,
    legs: &'a [Leg],
}

impl<'a> Completion<'a> {
    /// The summary of a served call; without `content` (a trace that records none), the text,
    /// reasoning and tool calls are left out.
    fn of(served: &'a Served, config: &'a Config, content: bool) -> Completion<'a> {
        let target = &config.targets[served.target];
        let answer = &served.answer;
        Completion {
            text: if content { &answer.text } else { "" },
            reasoning: if content { &answer.reasoning } else { "" },
            message: content.then(|| answer.message()),
            tool_calls: if content { &answer.tool_calls } else { &[] },
            target: &target.name,
            model: answer.model.as_deref().unwrap_or(&target.model),
            contributors: served.contributors.iter().map(|t| config.targets[*t].name.as_str()).collect(),
            finish_reason: &answer.finish_reason,
            content_filter: answer.content_filter.as_deref(),
            usage: answer.usage,
            billed_usage: served.billed_usage,
            legs: &served.legs,
        }
    }
}

impl ToJson for Completion<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("text", self.text);
        w.text_field("reasoning", self.reasoning);
        w.list_field("toolCalls", self.tool_calls);
        w.opt_field("message", self.message.as_ref());
        w.field("target", self.target);
        w.field("model", self.model);
        w.field("contributors", &self.contributors);
        w.field("finishReason", self.finish_reason);
        w.opt_field("contentFilter", self.content_filter);
        w.field("usage", &self.usage);
        w.field("billedUsage", &self.billed_usage);
        w.field("legs", self.legs);
        w.end_object();
    }
}

/// How a call task ends for pkg/core.js: `{type: "done", summary}` or `{type: "failed", error}`
/// (a Baton's call, and a traced gateway request's trace).
enum Settled<'a> {
    Done { summary: Completion<'a> },
    Failed { error: ErrorView<'a> },
}

impl ToJson for Settled<'_> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        match self {
            Settled::Done { summary } => {
                w.field("type", "done");
                w.field("summary", summary);
            }
            Settled::Failed { error } => {
                w.field("type", "failed");
                w.field("error", error);
            }
        }
        w.end_object();
    }
}

/// What a call shows while it runs.
pub(crate) enum CallOutput<'a> {
    Event(&'a Event),
    /// A stream committed to an attempt of `target`, after `attempts` were sent: its first deltas
    /// follow (the gateway's).
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    Commit {
        target: usize,
        attempts: u32,
    },
    /// Deltas for the reader, as the engine let them through (tool calls at dense positions).
    Deltas(&'a [Delta]),
    /// A resumed stream's new content follows (after a restart, the reader starts over).
    Splice(&'a Splice),
}

/// An attempt in flight (a hedge runs two): its id, its future, its signals, and the guard
/// whose drop aborts it.
struct InFlight {
    id: AttemptId,
    target: usize,
    /// `None` once the attempt's future has finished (its last signals may still be queued).
    work: Option<host::TaskFuture>,
    signals: mpsc::UnboundedReceiver<AttemptSignal>,
    body_at: attempt::BodyClock,
    _guard: AbortGuard,
}

/// What woke the call loop.
enum Wake {
    Signal(AttemptId, Option<AttemptSignal>),
    Timer,
    Cancelled,
}

/// Runs one call to its end: performs the engine's actions and feeds it what happens.
pub(crate) async fn run_call(
    mut call: Call,
    config: &Config,
    propagation: &DeadlinePropagation,
    request: &ChatRequest,
    stream: bool,
    on_output: &mut dyn FnMut(CallOutput<'_>),
) -> Result<Served, CallError> {
    let mut in_flight: Vec<InFlight> = Vec::new();
    let mut timer: Option<(u64, Sleep)> = None;

    loop {
        while let Some(action) = call.poll() {
            match action {
                Action::Send { attempt, target, prefill, remaining_ms } => {
                    let t = &config.targets[target];
                    // Only a gateway client's request holds fields to drop.
                    #[cfg(feature = "gateway")]
                    let dropped = t.format.dropped_warning(request, &t.name);
                    #[cfg(not(feature = "gateway"))]
                    let dropped = None;
                    for message in [t.format.reasoning_warning(request, &t.model), dropped].into_iter().flatten() {
                        let warning = Event::Warning { target: t.name.clone(), attempt: attempt.0, message };
                        on_output(CallOutput::Event(&warning));
                    }
                    let mut http = match prefill {
                        Some(text) => t.format.build_request(t, &request.with_prefill(&text), stream),
                        None => t.format.build_request(t, request, stream),
                    };
                    if let Some(ms) = propagation.sent_ms(config, target, remaining_ms) {
                        http.headers.push((DEADLINE_HEADER.into(), ms.to_string()));
                    }
                    // A traced call's attempt carries its span's ids. Configured header names are
                    // lowercase, so these replace a configured `traceparent` as fetch's headers
                    // object is built, in order.
                    http.headers.extend(host::attempt_headers(&t.name, attempt.0));
                    #[cfg(feature = "clouds")]
                    t.sign(&mut http, js_sys::Date::now() as u64);
                    let guard = AbortGuard::new();
                    let (tx, rx) = mpsc::unbounded();
                    let body_at = attempt::BodyClock::default();
                    #[cfg(feature = "clouds")]
                    let vertex = t.reach.vertex.clone();
                    #[cfg(not(feature = "clouds"))]
                    let vertex = None;
                    let reached = (t.format, t.cloud);
                    let work =
                        Box::pin(attempt::run(http, guard.signal(), reached, stream, tx, body_at.clone(), vertex));
                    in_flight.push(InFlight {
                        id: attempt,
                        target,
                        work: Some(work),
                        signals: rx,
                        body_at,
                        _guard: guard,
                    });
                }
                Action::Abort { attempt, .. } => in_flight.retain(|f| f.id != attempt),
                Action::Event(event) => on_output(CallOutput::Event(&event)),
                Action::Commit { target, attempts, .. } => on_output(CallOutput::Commit { target, attempts }),
                Action::Deliver(deltas) => on_output(CallOutput::Deltas(&deltas)),
                Action::Splice(splice) => on_output(CallOutput::Splice(&splice)),
                Action::Finish(outcome) => return outcome,
            }
        }

        // Arm the timer for the engine's next wake-up; keep an armed one that is not later.
        match call.poll_timeout() {
            Some(at) if timer.as_ref().is_none_or(|(armed, _)| *armed > at) => {
                timer = Some((at, Sleep::new(at.saturating_sub(now()).min(MAX_MS))));
            }
            None => timer = None,
            _ => {}
        }

        let wake = poll_fn(|cx| {
            if host::cancelled() {
                return Poll::Ready(Wake::Cancelled);
            }
            for f in in_flight.iter_mut() {
                if f.work.as_mut().is_some_and(|w| w.poll_unpin(cx).is_ready()) {
                    f.work = None;
                }
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
                // A whole body that went on arriving since the timer was armed is not idle.
                for f in in_flight.iter().filter(|f| f.body_at.get() > 0) {
                    call.on_body(f.id, f.body_at.get());
                }
                call.handle_timeout(now);
            }
            Wake::Signal(id, signal) => match signal {
                Some(AttemptSignal::Headers { baton_gateway }) => {
                    if let Some(f) = in_flight.iter().find(|f| f.id == id) {
                        propagation.learn(f.target, baton_gateway);
                    }
                    call.on_headers(id, now)
                }
                Some(AttemptSignal::Deltas(batch)) => call.on_deltas(id, now, batch),
                Some(AttemptSignal::Answer(answer)) => call.on_answer(id, now, answer),
                Some(AttemptSignal::Failed(failure)) => call.on_failure(id, now, failure),
                None => {
                    in_flight.retain(|f| f.id != id);
                    let failure = Failure::Transport { message: "attempt ended without an answer".into() };
                    call.on_failure(id, now, failure);
                }
            },
        }
    }
}
